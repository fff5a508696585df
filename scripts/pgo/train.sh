#!/usr/bin/env bash
# The training run of nkicc's profile-guided build (scripts/bootstrap.sh, NKICC_PGO): runs an
# instrumented nkicc over what its users run, so that the optimized build knows which paths are
# hot. The inputs are the bundled examples, the kernels of scripts/pgo/kernels.py (written for
# the training) and generated descriptions of other sizes and seeds than the benchmarks use:
# the benchmarks (scripts/bench_*.sh) must measure nkicc on code the profile has not seen.
# Takes about a minute on the instrumented binary. Usage: scripts/pgo/train.sh NKICC
set -euo pipefail
cd "$(dirname "$0")/../.."
nkicc=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=/usr/bin/python3
[ -x "$python" ] || python=python3

run() { "$nkicc" "$@" > /dev/null; }

# The bundled examples, through every output, the BIR reader and the simulator (-I: the
# examples' registry, which one of them calls).
reg=(-I share/nkicc/examples/registry)
for desc in share/nkicc/examples/*.json; do
  name=$(basename "$desc" .json)
  run trace "${reg[@]}" "$desc" -o "$work/$name.bir"
  run dis "$work/$name.bir"
  for emit in hlo stats summary ir; do
    run trace "${reg[@]}" "$desc" --emit=$emit -o "$work/$name.$emit"
  done
  run key "${reg[@]}" "$desc"
  run -v trace "${reg[@]}" --no-cache "$desc" -o "$work/$name.again.bir" 2> /dev/null
  run simulate "${reg[@]}" "$desc" --random-inputs=1 -o "$work/$name.sim"
done

# The training kernels at a few shapes: tiling helpers in plain Python, masks, matmuls, reductions.
cp scripts/pgo/kernels.py "$work/"
"$python" - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def t(shape, dtype="float32"):
    return {"shape": shape, "dtype": dtype}
calls = []
for rows, cols in [(1000, 768), (4096, 1024), (640, 2048)]:
    calls.append({"kernel": "layer_norm", "args": [t([rows, cols]), t([cols])]})
for k, m, n in [(1024, 512, 1024), (2048, 1024, 2048), (512, 256, 512)]:
    calls.append({"kernel": "matmul_bias", "args": [t([k, m], "bfloat16"), t([k, n], "bfloat16"), t([n])]})
for rows, cols in [(512, 2048), (2048, 1024)]:
    calls.append({"kernel": "softmax_two_pass", "args": [t([rows, cols])]})
calls += calls[:3]  # repeats: per-run cache hits
with open(f"{work}/kernels.json", "w") as f:
    json.dump({"nkicc": 1, "target": "trn2", "sources": [{"path": "kernels.py"}], "calls": calls}, f)
PY
run trace "$work/kernels.json" -o "$work/kernels.bir"
run trace "$work/kernels.json" --emit=hlo -o "$work/kernels.hlo"
run trace "$work/kernels.json" --emit=stats -o "$work/kernels.stats"
run key "$work/kernels.json"

# Internal calls: keys of a random corpus, and a build graph traced to BIR and HLO.
"$python" scripts/gen_key_corpus.py "$work/corpus.json" --calls 20000 --seed 7 --target trn2
run key "$work/corpus.json"
"$python" scripts/gen_internal_graph.py "$work/graph.json" 20000 40
run trace "$work/graph.json" -o "$work/graph.bir"
run trace "$work/graph.json" --emit=hlo -o "$work/graph.hlo"
run trace "$work/graph.json" --emit=stats -o "$work/graph.stats"

# The persistent cache, cold then warm.
"$python" scripts/gen_external_matmul.py "$work/ext" 60 6
for _ in 1 2; do
  run trace --cache-dir "$work/cache" "$work/ext/matmuls.json" -o "$work/ext.bir"
  run trace --cache-dir "$work/cache" "$work/graph.json" --emit=stats -o "$work/graph.stats"
done
run cache stats --cache-dir "$work/cache"
