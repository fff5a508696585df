#!/usr/bin/env python3
"""Runs a command, waits until the redis-server at SERVER_PORT holds at least MARKER keys (nkicc
holds its log lines until a one-pass read ends, so its log cannot time the kill; what it has
uploaded can), then SIGKILLs the process SERVER_PID names and waits until it is gone, then
lets the command finish. The command must still be running then: the test's kernel after the
first upload runs long enough. Writes the command's stderr to LOG and exits with its exit
code. Usage: kill_mid_run.py MARKER LOG -- COMMAND..."""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time


def redis_keys(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"DBSIZE\r\n")
        reply = b""
        while not reply.endswith(b"\r\n"):
            reply += s.recv(64)
    return int(reply[1:-2])


marker, log = sys.argv[1], sys.argv[2]
assert sys.argv[3] == "--"
pid = int(os.environ["SERVER_PID"])
err = tempfile.TemporaryFile()
proc = subprocess.Popen(sys.argv[4:], stderr=err)
port = int(os.environ["SERVER_PORT"])
while redis_keys(port) < int(marker):
    if proc.poll() is not None:
        err.seek(0)
        sys.stderr.buffer.write(err.read())
        sys.exit(f"kill_mid_run: the command ended before the server held {marker} keys")
    time.sleep(0.001)
if proc.poll() is not None:
    sys.exit("kill_mid_run: the command ended before the kill")
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
rc = proc.wait()
err.seek(0)
open(log, "wb").write(err.read())
sys.exit(rc)
