#!/usr/bin/env python3
"""Crafts BIR whose names all point at one shared string (issue 17, finding 3): 100,000 offsets
to one 1 MiB string, a 1.4 MB blob that would be 100 GiB of text if each name were copied.
  shared_names.py module REAL.bir OUT.bir    a module: REAL's kernel, one call whose func_args
                                             are the shared names
  shared_names.py config MODULE.hlo OUT.b64  MODULE's first backend_config with its
                                             serialize_ir_string replaced by a kernel whose
                                             input_names are the shared names
  shared_names.py ... --names=N --text=S     N names of S instead (a blob that decodes)
FlatBuffers are written by hand (no flatbuffers module needed): tables of 4-byte fields only,
each child after its parent, so that every offset points forward as FlatBuffers requires."""
import base64, json, re, struct, sys

class Buf:
    def __init__(self, ident):
        self.b = bytearray(8)
        self.b[4:8] = ident
    def align(self, n, extra=0):
        while (len(self.b) + extra) % n:
            self.b.append(0)
    def u32(self, v):
        self.b += struct.pack("<I", v)
    def patch(self, at, target):
        struct.pack_into("<I", self.b, at, target - at)
    def string(self, s):
        self.align(4)
        at = len(self.b)
        self.u32(len(s))
        self.b += s + b"\0"
        return at
    def table(self, fields):  # fields[i]: None, int (a uint field) or a function writing a child
        self.align(4)
        vt = len(self.b)
        present = [i for i, f in enumerate(fields) if f is not None]
        self.b += struct.pack("<HH", 4 + 2 * len(fields), 4 + 4 * len(present))
        slot = {i: 4 + 4 * k for k, i in enumerate(present)}
        for i in range(len(fields)):
            self.b += struct.pack("<H", slot.get(i, 0))
        self.align(4)
        at = len(self.b)
        self.b += struct.pack("<i", at - vt)
        refs = []
        for i in present:
            if callable(fields[i]):
                refs.append((len(self.b), fields[i]))
                self.u32(0)
            else:
                self.u32(fields[i])
        for where, child in refs:
            self.patch(where, child())
        return at
    def shared_strings(self, count, s):  # a vector of `count` offsets to one string
        self.align(4)
        at = len(self.b)
        self.u32(count)
        first = len(self.b)
        self.b += bytes(4 * count)
        target = self.string(s)
        for k in range(count):
            self.patch(first + 4 * k, target)
        return at
    def tables(self, children):
        self.align(4)
        at = len(self.b)
        self.u32(len(children))
        first = len(self.b)
        self.b += bytes(4 * len(children))
        for k, child in enumerate(children):
            self.patch(first + 4 * k, child())
        return at
    def ubytes(self, data):
        self.align(8, 4)
        at = len(self.b)
        self.u32(len(data))
        self.b += data
        return at
    def finish(self, root):
        self.align(8)
        struct.pack_into("<I", self.b, 0, root)
        return bytes(self.b)

NAMES, BIG = 100000, b"x" * (1 << 20)
for arg in sys.argv[4:]:
    if arg.startswith("--names="):
        NAMES = int(arg[len("--names="):])
    elif arg.startswith("--text="):
        BIG = arg[len("--text="):].encode()

def kernel_blob():  # Kernel: format_version, name, target, input_names shared
    f = Buf(b"NBIK")
    return f.finish(f.table([1, lambda: f.string(b"k"), lambda: f.string(b"trn2"),
                             lambda: f.shared_strings(NAMES, BIG)]))

def real_kernel(module):  # the nested Kernel buffer a module nkicc wrote embeds
    blob = open(module, "rb").read()
    at = blob.index(b"NBIK") - 4
    size = int.from_bytes(blob[at - 4:at], "little")
    return blob[at:at + size]

def module_blob(kernel):  # Module: one real kernel, one call whose func_args are shared
    m = Buf(b"NBIR")
    s = lambda text: (lambda: m.string(text))
    call = lambda: m.table([s(b"f"), s(b"k"), s(b"bir"), s(b"key"), 0, None,
                            lambda: m.shared_strings(NAMES, BIG)])
    kblob = lambda: m.table([s(b"key"), lambda: m.ubytes(kernel)])
    return m.finish(m.table([1, None, None, None, None, lambda: m.tables([kblob]),
                             lambda: m.tables([call])]))

if sys.argv[1] == "module":
    open(sys.argv[3], "wb").write(module_blob(real_kernel(sys.argv[2])))
else:  # config: the backend_config of an HLO module, its serialize_ir_string replaced
    hlo = open(sys.argv[2]).read()
    config = json.loads(base64.b64decode(re.search(r'backend_config="([^"]*)"', hlo).group(1)))
    config["serialize_ir_string"] = base64.b64encode(kernel_blob()).decode()
    open(sys.argv[3], "w").write(base64.b64encode(json.dumps(config).encode()).decode())
