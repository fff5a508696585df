#!/usr/bin/env python3
"""Checks a Bazel-layout cache folder as nkicc fills it: ac/<64 hex> records of the form
`nkicc-ac 1 <sha256> <size>` naming blobs cas/<sha256> of that size and digest.
Usage: check_bazel_layout.py DIR"""
import hashlib
import os
import re
import sys

root = sys.argv[1]
records = sorted(os.listdir(os.path.join(root, "ac")))
blobs = sorted(os.listdir(os.path.join(root, "cas")))
for r in records:
    assert re.fullmatch(r"[0-9a-f]{64}", r), r
    m = re.fullmatch(r"nkicc-ac 1 ([0-9a-f]{64}) ([0-9]+)\n", open(os.path.join(root, "ac", r)).read())
    assert m, f"malformed record {r}"
    blob = open(os.path.join(root, "cas", m.group(1)), "rb").read()
    assert len(blob) == int(m.group(2)), f"record {r}: size"
for b in blobs:
    assert hashlib.sha256(open(os.path.join(root, "cas", b), "rb").read()).hexdigest() == b, f"blob {b}"
print(f"{len(records)} action records, {len(blobs)} blobs, each blob named by its sha256")
