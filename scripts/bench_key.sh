#!/usr/bin/env bash
# Benchmarks `nkicc key` against the Python reference (scripts/key_reference.py) on the same
# 100,000 random internal calls, and `nkicc --version` start-up against /bin/true. Figures are
# ratios measured in this one run. Usage: scripts/bench_key.sh [build-dir] [calls]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
calls="${2:-100000}"
nkicc="$build_dir/bin/nkicc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 scripts/gen_key_corpus.py "$work/corpus.json" --calls "$calls" --seed 42 --target trn2
echo "corpus: $calls internal calls, $(du -h "$work/corpus.json" | cut -f1)"

now() { date +%s.%N; }
best_of() { # best wall time of 3 runs of "$@", output to /dev/null
  local best=""
  for _ in 1 2 3; do
    local t0 t1
    t0=$(now); "$@" > "$work/out" ; t1=$(now)
    best=$(python3 -c "t=$t1-$t0; b='$best'; print(t if not b else min(t, float(b)))")
  done
  echo "$best"
}

t_nkicc=$(best_of "$nkicc" key "$work/corpus.json")
cp "$work/out" "$work/nkicc.out"
t_py=$(best_of python3 scripts/key_reference.py "$work/corpus.json")
cmp -s "$work/out" "$work/nkicc.out" && same=identical || same=DIFFERENT
python3 - "$t_nkicc" "$t_py" "$calls" "$same" <<'PY'
import sys
tn, tp, n, same = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print(f"nkicc key:        {tn:.3f} s  ({n / tn:,.0f} keys/s)")
print(f"python reference: {tp:.3f} s  ({n / tp:,.0f} keys/s)")
print(f"ratio: nkicc is {tp / tn:.1f}x the reference's throughput; outputs {same}")
PY

# Start-up: 200 runs of each, whole-loop wall time.
loop() { local t0 t1; t0=$(now); for _ in $(seq 200); do "$@" >/dev/null; done; t1=$(now); python3 -c "print(($t1-$t0)/200)"; }
t_ver=$(loop "$nkicc" --version)
t_true=$(loop /bin/true)
python3 -c "v=$t_ver; t=$t_true; print(f'start-up: nkicc --version {v*1e3:.2f} ms, /bin/true {t*1e3:.2f} ms, ratio {v/t:.1f}x')"
