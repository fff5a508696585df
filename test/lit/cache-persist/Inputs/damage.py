#!/usr/bin/env python3
"""Damages every entry of a cache folder in one way: `flip` (one bit in the middle), `truncate`
(to half its size), `empty` (zero length), `foreign` (bytes of another file format) or
`old-format` (format version 0 in an otherwise intact header). Prints how many it damaged.
Usage: damage.py DIR MODE"""
import os
import re
import sys

root, mode = sys.argv[1], sys.argv[2]
count = 0
for folder, _, files in os.walk(root):
    if os.path.relpath(folder, root).split(os.sep)[0] == "names":
        continue
    for f in files:
        if not re.fullmatch(r"[0-9a-f]{64}", f):
            continue
        path = os.path.join(folder, f)
        data = bytearray(open(path, "rb").read())
        if mode == "flip":
            data[len(data) // 2] ^= 0x04
        elif mode == "truncate":
            data = data[: len(data) // 2]
        elif mode == "empty":
            data = b""
        elif mode == "foreign":
            data = b"\x7fELF\x02\x01\x01" + bytes(100)
        elif mode == "old-format":
            data[8] = 0
        else:
            sys.exit("damage.py: unknown mode " + mode)
        open(path, "wb").write(data)
        count += 1
print(f"damaged {count}")
