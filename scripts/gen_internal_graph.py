#!/usr/bin/env python3
"""Writes a description file of CALLS internal calls cycling over VARIANTS distinct variants of
tiled_dve_transpose_10 ([32a, 32b] -> [32b, 32a]), for scripts/bench_cache.sh and bench_hlo.sh.
Usage: gen_internal_graph.py OUT CALLS VARIANTS
"""
import json
import sys


def main():
    out, calls, variants = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    shapes, a = [], 1
    while len(shapes) < variants:
        for b in range(1, a + 1):
            shapes.append((32 * a, 32 * b))
            if len(shapes) == variants:
                break
        a += 1

    def call(i):
        r, c = shapes[i % variants]
        return {"internal": "tiled_dve_transpose_10", "kernel_name": "transpose",
                "operands": [{"shape": [r, c], "dtype": "bfloat16"}],
                "results": [{"shape": [c, r], "dtype": "bfloat16"}], "attrs": {"tile": 32}}

    with open(out, "w") as f:
        json.dump({"nkicc": 1, "target": "trn2", "calls": [call(i) for i in range(calls)]}, f)


if __name__ == "__main__":
    main()
