#!/usr/bin/env python3
"""Tampers with the blobs nkicc stored in a Redis server (a tiny RESP client, loopback only):
`flip` one byte of each nkicc/cas/ blob, `truncate` each to half, or `swap` the action records
of two keys (each then names a whole, valid entry of the other key). Prints how many it
changed. Usage: redis_tamper.py PORT MODE"""
import socket
import sys


class Redis:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.f = self.s.makefile("rb")

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.reply()

    def reply(self):
        line = self.f.readline()[:-2]
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return rest
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise RuntimeError("unexpected reply " + repr(line))


port, mode = int(sys.argv[1]), sys.argv[2]
r = Redis(port)
changed = 0
if mode == "swap":
    keys = sorted(r.call("KEYS", "nkicc/ac/*"))
    a, b = keys[0], keys[1]
    va, vb = r.call("GET", a), r.call("GET", b)
    r.call("SET", a, vb)
    r.call("SET", b, va)
    changed = 2
else:
    for key in sorted(r.call("KEYS", "nkicc/cas/*")):
        v = bytearray(r.call("GET", key))
        if mode == "flip":
            v[len(v) // 2] ^= 0x01
        elif mode == "truncate":
            v = v[: len(v) // 2]
        r.call("SET", key, bytes(v))
        changed += 1
print(f"changed {changed}")
