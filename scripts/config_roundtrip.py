#!/usr/bin/env python3
"""Checks every backend_config in an HLO or StableHLO file against CPython's json module.

For each `backend_config="..."` (HLO) or `backend_config = "..."` (StableHLO): the base64 must
decode, `json.dumps(json.loads(text))` must give the same bytes (nkicc encodes exactly as
`base64.b64encode(json.dumps(cfg).encode())`), the keys must be the fourteen of seed 001 in
order, and, with --nkicc BIN, `nkicc decode-config` must accept it. Prints the count checked.
Usage: config_roundtrip.py FILE [--nkicc BIN]
"""
import base64
import json
import re
import subprocess
import sys

KEYS = ["kernel_version", "func_name", "grid", "has_collectives", "matmul_mac_count", "platform_target",
        "platform_target_is_fallback", "opts", "serialize_dims", "serialize_ir_string", "tiled",
        "constant_values", "kernel_return", "result_is_sequence"]


def main():
    path = sys.argv[1]
    nkicc = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--nkicc" else None
    text = open(path, encoding="utf-8").read()
    configs = re.findall(r'backend_config ?= ?"([A-Za-z0-9+/=]*)"', text)
    if not configs:
        sys.exit(f"{path}: no backend_config found")
    for i, b64 in enumerate(configs):
        raw = base64.b64decode(b64, validate=True).decode("ascii")
        cfg = json.loads(raw)
        if json.dumps(cfg) != raw:
            sys.exit(f"{path}: backend_config {i} is not what json.dumps writes")
        if base64.b64encode(raw.encode()).decode() != b64:
            sys.exit(f"{path}: backend_config {i} is not what base64.b64encode writes")
        if list(cfg) != KEYS:
            sys.exit(f"{path}: backend_config {i} keys {list(cfg)} differ from seed 001's")
        base64.b64decode(cfg["serialize_ir_string"], validate=True)
        if nkicc:
            r = subprocess.run([nkicc, "decode-config", b64], capture_output=True, text=True)
            if r.returncode != 0 or not r.stdout.startswith("{"):
                sys.exit(f"{path}: nkicc decode-config failed on backend_config {i}: {r.stderr}")
    print(f"{len(configs)} backend_configs match CPython's json.dumps")


if __name__ == "__main__":
    main()
