#!/usr/bin/env python3
"""Checks `nkicc key --explain --format=json` against a depfile: every file whose digest is in
a key is named by the depfile, and each digest is the SHA-256 of that file's bytes. Prints the
files checked, one a line. Usage: check_depfile.py EXPLAIN.json DEPFILE"""
import hashlib
import json
import sys

explain = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().replace("\\\n", " ")
deps = set()
for token in text.split(":", 1)[1].split():
    deps.add(token.replace("\\ ", " "))
checked = set()
for call in explain["calls"]:
    for c in call["components"]:
        if not c["name"].startswith("file "):
            continue
        path = c["value"]
        if path not in deps:
            sys.exit(f"check_depfile: {path} is in the key of call {call['call']} but not in the depfile")
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        if digest != c["digest"]:
            sys.exit(f"check_depfile: the key's digest of {path} is not its SHA-256")
        checked.add(path)
# The folder and name of each, which do not depend on where the test runs.
for name in sorted("/".join(p.split("/")[-2:]) for p in checked):
    print(name)
