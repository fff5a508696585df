#!/usr/bin/env bash
# Benchmarks `nkicc key` against the Python reference (scripts/key_reference.py) and against a
# floor program (bench/key_floor.cpp) on the same 100,000 random internal calls, interleaved, and
# `nkicc --version` start-up against /bin/true. Figures are
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
floor="$build_dir/bin/nkicc_bench_key_floor"
[ -x "$floor" ] || { echo "bench_key: $floor is missing (built with the tests)" >&2; exit 1; }

# nkicc key, the CPython reference and the floor program (bench/key_floor.cpp: read, SAX parse,
# one reused SHA-256 context, buffered write; no checks, no key rendering), interleaved: round r
# runs each once, so that a change in the machine's load touches all three. Best of 5 rounds.
python3 - "$nkicc" "$floor" "$work" "$calls" <<'PY'
import subprocess, sys, time
nkicc, floor, work, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
corpus = f"{work}/corpus.json"
cmds = {
    "nkicc key": [nkicc, "key", corpus],
    "python reference": ["python3", "scripts/key_reference.py", corpus],
    "floor": [floor, corpus],
}
best = {}
for _ in range(5):
    for name, cmd in cmds.items():
        with open(f"{work}/{name.replace(' ', '_')}.out", "wb") as out:
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=out, stderr=subprocess.DEVNULL, check=True)
            t = time.perf_counter() - t0
        best[name] = min(best.get(name, t), t)
same = open(f"{work}/nkicc_key.out", "rb").read() == open(f"{work}/python_reference.out", "rb").read()
for name, t in best.items():
    print(f"{name + ':':18s}{t:.3f} s  ({calls / t:,.0f} keys/s)")
tn, tp, tf = best["nkicc key"], best["python reference"], best["floor"]
print(f"ratio: nkicc is {tp / tn:.1f}x the reference's throughput (goal: at least 10x); outputs "
      f"{'identical' if same else 'DIFFERENT'}")
print(f"ratio: nkicc takes {tn / tf:.2f}x the floor's time (goal: at most 2x)")
PY

# Start-up: 200 runs of each, whole-loop wall time.
loop() { local t0 t1; t0=$(now); for _ in $(seq 200); do "$@" >/dev/null; done; t1=$(now); python3 -c "print(($t1-$t0)/200)"; }
t_ver=$(loop "$nkicc" --version)
t_true=$(loop /bin/true)
python3 -c "v=$t_ver; t=$t_true; print(f'start-up: nkicc --version {v*1e3:.2f} ms, /bin/true {t*1e3:.2f} ms, ratio {v/t:.1f}x')"
