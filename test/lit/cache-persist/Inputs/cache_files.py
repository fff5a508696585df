#!/usr/bin/env python3
"""Counts the files of a cache folder's shards: `entries N temp N other N`; with --bytes the
entries' total size too, with --longest the length of the longest file name anywhere under the
folder. Usage: cache_files.py DIR [--bytes] [--longest]"""
import os
import re
import sys

root = sys.argv[1]
entries = temp = other = size = 0
longest = 0
for folder, _, files in os.walk(root):
    for f in files:
        longest = max(longest, len(f.encode()))
        rel = os.path.relpath(os.path.join(folder, f), root).split(os.sep)
        if len(rel) != 3 or rel[0] == "names":
            continue
        if re.fullmatch(r"[0-9a-f]{64}", f):
            entries += 1
            size += os.path.getsize(os.path.join(folder, f))
        elif ".tmp." in f:
            temp += 1
        else:
            other += 1
print(f"entries {entries} temp {temp} other {other}" + (f" bytes {size}" if "--bytes" in sys.argv else "") +
      (f" longest {longest}" if "--longest" in sys.argv else ""))
