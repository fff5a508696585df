#!/usr/bin/env python3
"""Copies an ELF executable and changes its GNU build-id note as a rebuild would (one byte
flipped). Usage: patch_binary.py build-id IN OUT"""
import os
import struct
import sys

mode, src, dst = sys.argv[1:4]
data = bytearray(open(src, "rb").read())
assert data[:4] == b"\x7fELF" and data[4] == 2, "a 64-bit ELF file"
if mode == "build-id":
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    found = False
    for i in range(shnum):
        base = shoff + i * shentsize
        sh_type, = struct.unpack_from("<I", data, base + 4)
        offset, size = struct.unpack_from("<QQ", data, base + 0x18)
        if sh_type != 7:  # SHT_NOTE
            continue
        pos = offset
        while pos + 12 <= offset + size:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name_at = pos + 12
            desc_at = name_at + ((namesz + 3) & ~3)
            if ntype == 3 and data[name_at:name_at + 4] == b"GNU\0":
                data[desc_at] ^= 0xFF
                found = True
            pos = desc_at + ((descsz + 3) & ~3)
    assert found, "no GNU build-id note"
else:
    sys.exit("patch_binary.py: unknown mode " + mode)
open(dst, "wb").write(data)
os.chmod(dst, 0o755)
