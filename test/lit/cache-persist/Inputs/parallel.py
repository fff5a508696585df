#!/usr/bin/env python3
"""Runs N copies of a command at once and waits for all of them; `{i}` in an argument becomes
the copy's number. Prints each copy's exit code, one a line, in order, and exits 0 (the test
checks the codes). Usage: parallel.py N -- COMMAND [ARGS...]"""
import subprocess
import sys

n = int(sys.argv[1])
assert sys.argv[2] == "--"
procs = [subprocess.Popen([a.replace("{i}", str(i)) for a in sys.argv[3:]]) for i in range(n)]
for i, p in enumerate(procs):
    print(f"copy {i}: exit {p.wait()}")
