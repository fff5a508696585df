#!/usr/bin/env python3
"""Checks that file B starts with the whole of file A and prints what follows it.
Usage: after_prefix.py A B"""
import sys

a, b = (open(p, "rb").read() for p in sys.argv[1:3])
if not b.startswith(a):
    sys.exit(f"after_prefix: {sys.argv[2]} does not start with {sys.argv[1]}")
sys.stdout.buffer.write(b[len(a):])
