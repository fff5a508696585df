#!/usr/bin/env python3
"""Writes test/unit/data/py_repr_cases.txt: values and CPython's repr() of them, which
test/unit/test_cache_py_repr.cpp checks nkicc's renderer (lib/cache/py_repr.cpp) against.

nkicc's cache keys hash Python repr text, so the renderer must agree with CPython 3.11 byte for
byte; this file holds CPython's answers so that the unit tests need no Python.

Line formats (UTF-8, '\\n'-terminated):
  <json>\\t<repr>
      One value and its repr. JSON objects are dicts, arrays lists, {"tuple": [...]} a tuple
      and {"float_bits": "<16 hex digits>"} a float given by its IEEE-754 bits (so that no JSON
      number parser can round it); no other JSON number is a float. No generated dict has a
      single key "tuple" or "float_bits".
  #!chars <first> <end> <fnv>
      Exhaustive: FNV-1a 64 (hex) of repr(chr(c)) + "\\n" over c in [first, end), surrogates
      skipped.
  #!floats <mode> <seed> <count> <fnv>
      FNV-1a 64 (hex) of repr(x) + "\\n" for count floats drawn from splitmix64(seed) as
      float_from() below describes; the C++ test rebuilds the same floats.
  # ...
      A comment.

Usage: python3 scripts/gen_py_repr_cases.py [OUTPUT]   (deterministic: same output each run)
"""

import json
import pathlib
import random
import struct
import sys
import unicodedata

MASK64 = (1 << 64) - 1
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
RESERVED_KEYS = {"tuple", "float_bits"}


def fnv1a64(chunks):
    h = FNV_OFFSET
    for chunk in chunks:
        for b in chunk:
            h = ((h ^ b) * FNV_PRIME) & MASK64
    return h


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def bits_to_float(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def float_to_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


POW10 = [float(10**k) for k in range(23)]  # all exact in binary64


def float_from(mode, r):
    """The float that mode makes of one 64-bit draw r (mirrored in the C++ test)."""
    if mode == "bits":  # any bit pattern: subnormals, huge exponents, inf, nan
        return bits_to_float(r)
    if mode == "fixed":  # random mantissa, binary exponent 2^-17..2^57: around decpt -4..17
        exponent = 1023 - 17 + (r >> 52) % 75
        return bits_to_float((r & ((1 << 63) | ((1 << 52) - 1))) | (exponent << 52))
    if mode == "short":  # few decimal digits divided by a power of ten: 0.001, 123.45, ...
        return (r % 1000000) / POW10[(r >> 32) % 23]
    if mode == "scaled":  # few decimal digits times a power of ten: 1e16, 1.5e+20, ...
        return (r % 1000000) * POW10[(r >> 32) % 23]
    raise ValueError(mode)


FLOAT_RUNS = [("bits", 1, 200000), ("fixed", 2, 200000), ("short", 3, 100000), ("scaled", 4, 100000)]

SPECIAL_CHARS = "'\"\\\t\n\r\x00\x1f\x7f\x80\x9f\xa0\xad\u00e9\u0301\u200b\u2028\u2029\u3000" \
    "\ufeff\ufffe\uffff\U0001F600\U000E0001\U0010FFFF\u4e2d\u0378\U00030000\U0002FFFF"


def random_char(rng):
    roll = rng.random()
    if roll < 0.30:
        return chr(rng.randrange(0x80))
    if roll < 0.42:
        return rng.choice(SPECIAL_CHARS)
    if roll < 0.57:
        return chr(rng.randrange(0x80, 0x400))
    if roll < 0.80:
        while True:
            cp = rng.randrange(0x400, 0x10000)
            if not 0xD800 <= cp < 0xE000:
                return chr(cp)
    return chr(rng.randrange(0x10000, 0x110000))


def random_str(rng, max_len=10):
    text = "".join(random_char(rng) for _ in range(rng.randrange(max_len + 1)))
    roll = rng.random()
    if roll < 0.1:
        text += "'"
    elif roll < 0.2:
        text += "'\""
    elif roll < 0.25:
        text = '"' + text
    return text


def random_float(rng):
    roll = rng.random()
    if roll < 0.4:
        return bits_to_float(rng.getrandbits(64))
    if roll < 0.7:
        return float_from("fixed", rng.getrandbits(64))
    if roll < 0.85:
        return float_from("short", rng.getrandbits(64))
    return float_from("scaled", rng.getrandbits(64))


def random_int(rng):
    bits = rng.choice([1, 4, 8, 16, 32, 53, 63])
    value = rng.getrandbits(bits)
    value = -value if rng.random() < 0.5 else value
    return rng.choice([value, value, value, -(1 << 63), (1 << 63) - 1, 0, -1])


def random_scalar(rng):
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.1:
        return rng.random() < 0.5
    if roll < 0.4:
        return random_int(rng)
    if roll < 0.7:
        return random_float(rng)
    return random_str(rng, 6)


def random_value(rng, depth):
    if depth == 0 or rng.random() < 0.35:
        return random_scalar(rng)
    size = rng.choice([0, 1, 1, 2, 3, 4])
    kind = rng.choice(["tuple", "list", "dict"])
    if kind == "tuple":
        return tuple(random_value(rng, depth - 1) for _ in range(size))
    if kind == "list":
        return [random_value(rng, depth - 1) for _ in range(size)]
    d = {}
    while len(d) < size:
        key = random_str(rng, 5)
        if key not in RESERVED_KEYS:
            d[key] = random_value(rng, depth - 1)
    return d


def to_json(value):
    if isinstance(value, float):
        return {"float_bits": f"{float_to_bits(value):016x}"}
    if isinstance(value, tuple):
        return {"tuple": [to_json(v) for v in value]}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        assert not (len(value) == 1 and next(iter(value)) in RESERVED_KEYS)
        return {k: to_json(v) for k, v in value.items()}
    return value


def case_line(value):
    text = repr(value)
    assert "\t" not in text and "\n" not in text
    return json.dumps(to_json(value), ensure_ascii=True) + "\t" + text


def main():
    assert sys.version_info[:2] == (3, 11), "CPython 3.11 is the reference"
    assert unicodedata.unidata_version == "14.0.0"
    root = pathlib.Path(__file__).resolve().parent.parent
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "test/unit/data/py_repr_cases.txt"
    rng = random.Random(20240611)
    lines = [
        "# Generated by scripts/gen_py_repr_cases.py with CPython "
        + ".".join(map(str, sys.version_info[:3])) + ": do not edit. Formats: see the script.",
    ]

    block = 0x1000
    for first in range(0, 0x110000, block):
        reprs = (repr(chr(c)).encode("utf-8") + b"\n"
                 for c in range(first, first + block) if not 0xD800 <= c < 0xE000)
        lines.append(f"#!chars {first:#x} {first + block:#x} {fnv1a64(reprs):016x}")

    for mode, seed, count in FLOAT_RUNS:
        gen = SplitMix64(seed)
        reprs = (repr(float_from(mode, gen.next())).encode("ascii") + b"\n" for _ in range(count))
        lines.append(f"#!floats {mode} {seed} {count} {fnv1a64(reprs):016x}")

    values = []
    values += [random_str(rng) for _ in range(900)]
    values += [random_float(rng) for _ in range(1000)]
    values += [random_int(rng) for _ in range(200)]
    values += [random_value(rng, 3) for _ in range(800)]
    # The shape the cache hashes: a sorted list of (name, component) pairs.
    for _ in range(100):
        items = {random_str(rng, 8): random_value(rng, 2) for _ in range(rng.randrange(1, 5))}
        values.append(sorted(items.items()))
    lines += [case_line(v) for v in values]

    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
