#!/usr/bin/env python3
"""Runs a command, reads its stderr until a line containing MARKER, then SIGKILLs the process
SERVER_PID names and waits until it is gone, then lets the command finish. The command is
certainly still running at the kill when what it logs after the marker exceeds a pipe's
buffer: it blocks writing its log until this script reads on. Writes the command's stderr to
LOG and exits with its exit code. Usage: kill_mid_run.py MARKER LOG -- COMMAND..."""
import os
import signal
import subprocess
import sys
import time

marker, log = sys.argv[1], sys.argv[2]
assert sys.argv[3] == "--"
pid = int(os.environ["SERVER_PID"])
proc = subprocess.Popen(sys.argv[4:], stderr=subprocess.PIPE)
lines = []
for line in proc.stderr:
    lines.append(line)
    if marker.encode() in line:
        break
else:
    sys.exit(f"kill_mid_run: the command ended without logging {marker!r}")
os.kill(pid, signal.SIGKILL)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split(")")[-1].split()[0] == "Z":
                break  # dead, not yet reaped by with_server.py
    except FileNotFoundError:
        break
    time.sleep(0.01)
lines.extend(proc.stderr)
rc = proc.wait()
open(log, "wb").write(b"".join(lines))
sys.exit(rc)
