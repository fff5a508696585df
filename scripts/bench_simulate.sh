#!/usr/bin/env bash
# Benchmarks `nkicc simulate` (issue 13): a 2048 x 2048 x 2048 bf16 tiled matmul (128 x 512
# tiles, K accumulated in PSUM: 1024 nc_matmuls) simulated on the CPU, against NumPy computing
# the same product (float32, from the same inputs) on the same machine, interleaved run by run.
# Reports the wall time of each, the simulate stage alone (nkicc's -vv stage timer), the CPU
# time of each (user + system: steadier than wall time on a shared machine), and the ratios.
# Usage: scripts/bench_simulate.sh [build-dir] [runs] [size]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
runs="${2:-3}"
size="${3:-2048}"
nkicc="$build_dir/bin/nkicc"
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/matmul.py" <<'PY'
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_tiled(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                b = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                acc += nl.matmul(a, b, transpose_x=True)
            nl.store(result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(acc, dtype=result.dtype))
    return result
PY
cat > "$work/matmul.json" <<JSON
{"nkicc": 1, "target": "trn2", "sources": [{"path": "matmul.py"}],
 "calls": [{"kernel": "matmul_tiled", "args": [{"shape": [$size, $size], "dtype": "bfloat16"},
                                                {"shape": [$size, $size], "dtype": "bfloat16"}]}]}
JSON
cat > "$work/numpy_matmul.py" <<'PY'
import sys, time
import numpy as np
def load_bf16(path):
    raw = np.load(path)
    return (raw.view("<u2").astype("<u4") << 16).view("<f4")
a, b = load_bf16(sys.argv[1]), load_bf16(sys.argv[2])
start, cpu = time.perf_counter(), time.process_time()
c = a.T @ b
print(f"{time.perf_counter() - start:.4f} {time.process_time() - cpu:.4f}")
PY

# One run writes the inputs the NumPy side reads.
"$nkicc" simulate "$work/matmul.json" --random-inputs=1 -o "$work/out" 2> /dev/null
sim_times=() sim_cpu=() stage_times=() np_times=() np_cpu=()
for i in $(seq "$runs"); do
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$nkicc" -vv simulate "$work/matmul.json" --random-inputs=1 \
    -o "$work/out" 2> "$work/log"
  read -r wall user sys < "$work/time"
  sim_times+=("$wall")
  sim_cpu+=("$(echo "$user + $sys" | bc)")
  stage_times+=("$(sed -n 's/.*stage simulate: \([0-9.]*\) ms/\1/p' "$work/log")")
  read -r np_wall np_c < <("$python" "$work/numpy_matmul.py" "$work/out/call0.lhsT.npy" "$work/out/call0.rhs.npy")
  np_times+=("$np_wall")
  np_cpu+=("$np_c")
done
"$python" - "$size" "${sim_times[*]}" "${stage_times[*]}" "${np_times[*]}" "${sim_cpu[*]}" "${np_cpu[*]}" <<'PY'
import statistics, sys
size = int(sys.argv[1])
sim = [float(x) for x in sys.argv[2].split()]
stage = [float(x) / 1000 for x in sys.argv[3].split()]
npy = [float(x) for x in sys.argv[4].split()]
sim_cpu = [float(x) for x in sys.argv[5].split()]
np_cpu = [float(x) for x in sys.argv[6].split()]
m_sim, m_stage, m_np = statistics.median(sim), statistics.median(stage), statistics.median(npy)
c_sim, c_np = statistics.median(sim_cpu), statistics.median(np_cpu)
gflop = 2 * size ** 3 / 1e9
print(f"{size}^3 bf16 tiled matmul, {len(sim)} interleaved runs (medians):")
print(f"  nkicc simulate, whole run (trace + simulate + .npy I/O): {m_sim:.3f} s")
print(f"  nkicc simulate, simulate stage alone:                    {m_stage:.3f} s ({gflop / m_stage:.1f} GFLOP/s)")
print(f"  NumPy a.T @ b (float32):                                  {m_np:.3f} s ({gflop / m_np:.1f} GFLOP/s)")
print(f"  CPU time: nkicc whole run {c_sim:.3f} s, NumPy product {c_np:.3f} s")
print(f"  ratio whole run / NumPy: {m_sim / m_np:.2f}x wall, {c_sim / c_np:.2f}x CPU; "
      f"simulate stage / NumPy: {m_stage / m_np:.2f}x wall (goal: within 3x)")
PY
