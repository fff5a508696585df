"""Reads what `nkicc simulate` writes with plain NumPy (no ml_dtypes) and compares it with a
NumPy reference. Usage from a test's check script:

    import simref
    out = simref.Run(sys.argv[1])          # the simulate output folder
    a = out.load("call0.a_input")          # float32 view of any dtype nkicc writes
    out.check("call0.c_output", a + b, rtol=0, atol=0)
"""
import os
import sys

import numpy as np


def bf16_to_f32(raw):
    """bfloat16 bits (ml_dtypes' '<V2' encoding) as float32 values."""
    return (raw.view("<u2").astype("<u4") << 16).view("<f4")


def round_bf16(x):
    """float32 values rounded to bfloat16, to nearest even, as float32 (the reference side)."""
    bits = np.asarray(x, dtype=np.float32).view("<u4").astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype("<u4").view("<f4")


def f8_to_f32(raw, exponent_bits, bias, has_inf):
    """float8 bits ('|V1') as float32 values."""
    b = raw.view("u1").astype(np.int64)
    mant_bits = 7 - exponent_bits
    sign = np.where(b & 0x80, -1.0, 1.0)
    e = (b >> mant_bits) & ((1 << exponent_bits) - 1)
    m = b & ((1 << mant_bits) - 1)
    normal = (1 + m / (1 << mant_bits)) * np.exp2(e - bias)
    sub = (m / (1 << mant_bits)) * np.exp2(1 - bias)
    v = np.where(e == 0, sub, normal)
    top = (1 << exponent_bits) - 1
    if has_inf:
        v = np.where((e == top) & (m == 0), np.inf, v)
        v = np.where((e == top) & (m != 0), np.nan, v)
    else:
        v = np.where((e == top) & (m == (1 << mant_bits) - 1), np.nan, v)
    return (sign * v).astype(np.float32)


class Run:
    def __init__(self, folder):
        self.folder = folder
        self.failed = False

    def raw(self, name):
        return np.load(os.path.join(self.folder, name + ".npy"))

    def load(self, name):
        a = self.raw(name)
        if a.dtype == np.dtype("V2"):
            return bf16_to_f32(a)
        return a

    def check(self, name, want, rtol=1e-5, atol=1e-6, loaded=None):
        got = self.load(name) if loaded is None else loaded
        want = np.asarray(want)
        if got.shape != want.shape:
            print(f"{name}: FAIL shape {got.shape} != {want.shape}")
            self.failed = True
            return
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        ok = np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        err = float(np.max(np.abs(g - w))) if g.size else 0.0
        if ok:
            print(f"{name}: ok")
        else:
            bad = np.argwhere(~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True))
            first = tuple(int(i) for i in bad[0])
            print(f"{name}: FAIL max abs error {err:.3g}; {len(bad)} elements differ, the first at {first}: "
                  f"{g[first]!r} != {w[first]!r}")
            self.failed = True

    def done(self):
        sys.exit(1 if self.failed else 0)
