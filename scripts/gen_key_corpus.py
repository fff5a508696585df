#!/usr/bin/env python3
"""Writes a kernel description file of random internal calls, to compare `nkicc key` with
scripts/key_reference.py (and to benchmark both).

Usage: gen_key_corpus.py OUT.json [--calls N] [--seed S] [--target T] [--variants V]
With --variants V, the calls cycle over V distinct random calls (a realistic cache workload).
"""
import argparse
import json
import random
import struct

DTYPES = ["float32", "float16", "bfloat16", "tfloat32", "float8_e4m3", "float8_e4m3fn", "float8_e5m2",
          "int8", "int16", "int32", "uint8", "uint16", "uint32", "bool", "bool_"]
# Text that exercises Python's repr: quotes, escapes, controls, non-printables, all planes.
SPECIAL = ["'", '"', "\\", "\n", "\t", "\r", "\x00", "\x1f", "\x7f", "\x80", "\xa0", "\xad", "\u200b", "\u2028",
           "\ufeff", "\ue000", "\U000e0001", "\U0001f600", "é", "ß", "中", "\u0378", "\U0010ffff", "\u0301"]


def rand_text(rng):
    out = []
    for _ in range(rng.randint(0, 12)):
        r = rng.random()
        if r < 0.4:
            out.append(chr(rng.randint(0x20, 0x7e)))
        elif r < 0.7:
            out.append(rng.choice(SPECIAL))
        else:
            while True:
                cp = rng.choice([rng.randint(0, 0xff), rng.randint(0, 0xffff), rng.randint(0, 0x10ffff)])
                if not 0xd800 <= cp <= 0xdfff:
                    break
            out.append(chr(cp))
    return "".join(out)


def rand_float(rng):
    r = rng.random()
    if r < 0.5:
        while True:
            (f,) = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))
            if f == f and f not in (float("inf"), float("-inf")):
                return f
    return rng.choice([0.0, -0.0, 1.0, 0.1, 1e16, 1e15, 1e-5, 1e-4, 1e22, 5e-324, 2.5, 1.7976931348623157e308,
                       123456789.123, rng.uniform(-1e6, 1e6), rng.uniform(-1, 1)])


def rand_value(rng, depth=0):
    r = rng.random()
    if depth > 3 or r < 0.55:
        return rng.choice([
            lambda: None, lambda: rng.random() < 0.5, lambda: rng.randint(-2**63, 2**63 - 1),
            lambda: rng.randint(-1000, 1000), lambda: rand_float(rng), lambda: rand_text(rng)])()
    n = rng.randint(0, 4)
    if r < 0.7:
        return [rand_value(rng, depth + 1) for _ in range(n)]
    if r < 0.85:
        return {"tuple": [rand_value(rng, depth + 1) for _ in range(n)]}
    return {rand_text(rng) or "k": rand_value(rng, depth + 1) for _ in range(n)}


def rand_tensor(rng):
    t = {"shape": [rng.randint(1, 4096) for _ in range(rng.randint(1, 4))], "dtype": rng.choice(DTYPES)}
    if rng.random() < 0.4:
        t["access_shape"] = [rng.randint(1, 512) for _ in range(rng.randint(1, 4))]
    return t


def rand_call(rng):
    names = ["blockwise_mm", "tiled_dve_transpose_10", "resize_nearest_fixed_dma_kernel", "conv2d_pbp_0f1b_0i1o_01fb_experimental_1"]
    call = {"internal": rng.choice(names)}
    if rng.random() < 0.5:
        call["kernel_name"] = rand_text(rng) or "kernel"
    if rng.random() < 0.3:
        call["op"] = "ResizeNearest"
    call["operands"] = [rand_tensor(rng) for _ in range(rng.randint(0, 3))]
    call["results"] = [rand_tensor(rng) for _ in range(rng.randint(1, 2))]
    call["attrs"] = {rand_text(rng): rand_value(rng) for _ in range(rng.randint(0, 5))}
    if rng.random() < 0.05:
        call["attrs"]["underflow"] = "@UNDERFLOW@"
    return call


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", default="trn2")
    ap.add_argument("--variants", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    pool = [rand_call(rng) for _ in range(a.variants)] if a.variants else None
    calls = [pool[i % len(pool)] if pool else rand_call(rng) for i in range(a.calls)]
    doc = {"nkicc": 1, "target": a.target, "calls": calls}
    text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
    # A literal below the smallest subnormal reads as -0.0 in both Python and nkicc.
    text = text.replace('"@UNDERFLOW@"', "-1e-400")
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
