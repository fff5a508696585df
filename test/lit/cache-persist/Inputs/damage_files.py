#!/usr/bin/env python3
"""Damages every file of a folder (a remote's cas/ blobs): `flip` changes the middle byte,
`truncate` cuts each to half. Usage: damage_files.py DIR MODE"""
import os
import sys

root, mode = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(root)):
    path = os.path.join(root, name)
    data = bytearray(open(path, "rb").read())
    if mode == "flip":
        data[len(data) // 2] = (data[len(data) // 2] + 1) % 256
    elif mode == "truncate":
        data = data[: len(data) // 2]
    else:
        sys.exit("damage_files.py: unknown mode " + mode)
    open(path, "wb").write(data)
