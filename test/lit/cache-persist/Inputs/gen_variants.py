#!/usr/bin/env python3
"""Writes a description of COUNT distinct internal transposes ([32a, 32b] -> [32b, 32a], the
shapes of scripts/gen_internal_graph.py in its order), starting at the START-th shape, each
called twice. Usage: gen_variants.py OUT START COUNT"""
import json
import sys

out, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
shapes, a = [], 1
while len(shapes) < start + count:
    shapes += [(32 * a, 32 * b) for b in range(1, a + 1)]
    a += 1
calls = []
for r, c in shapes[start:start + count] * 2:
    calls.append({"internal": "tiled_dve_transpose_10", "operands": [{"shape": [r, c], "dtype": "bfloat16"}],
                  "results": [{"shape": [c, r], "dtype": "bfloat16"}], "attrs": {"tile": 32}})
json.dump({"nkicc": 1, "target": "trn2", "calls": calls}, open(out, "w"))
