#!/usr/bin/env python3
"""Writes a description of CALLS external calls of a tiled matmul kernel over SHAPES distinct
shapes (each shape called CALLS / SHAPES times, interleaved), and the kernel file beside it,
for scripts/bench_cache_persist.sh. Usage: gen_external_matmul.py DIR [CALLS] [SHAPES]
"""
import json
import os
import sys

KERNEL = '''"""A tiled matmul, result[M, N] = lhsT.T @ rhs: M in 128-row tiles, N in 512-column tiles,
K accumulated in PSUM 128 rows at a time."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def tiled_matmul(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                b = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                acc += nl.matmul(a, b, transpose_x=True)
            nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=out.dtype))
    return out
'''


def main():
    folder = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    # 20 shapes from 64 to 1,024 matmuls each: K, M and N grow in turn.
    shapes = []
    for i in range(count):
        k, m, n = 1024 * (1 + i % 4), 256 * (1 + (i // 4) % 5), 1024 * (1 + i % 2)
        shapes.append((k, m, n))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tiled_matmul.py"), "w") as f:
        f.write(KERNEL)
    desc = {"nkicc": 1, "name": "matmuls", "target": "trn2", "sources": [{"path": "tiled_matmul.py"}],
            "calls": [{"kernel": "tiled_matmul",
                       "args": [{"shape": [k, m], "dtype": "bfloat16"}, {"shape": [k, n], "dtype": "bfloat16"}]}
                      for k, m, n in (shapes[i % count] for i in range(calls))]}
    with open(os.path.join(folder, "matmuls.json"), "w") as f:
        json.dump(desc, f)


if __name__ == "__main__":
    main()
