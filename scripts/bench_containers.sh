#!/usr/bin/env bash
# Container work in nkicc's interpreter against CPython on the same Python source: 300,000 dict
# inserts (issue 17 item 5: they took 57 s when dicts scanned linearly), lookups, set inserts and
# a sort. Runs are interleaved (nkicc, CPython, nkicc, ...) and the best of each is compared.
#
#   scripts/bench_containers.sh [BUILD_DIR] [N] [RUNS]
#
# N is the number of inserts (default 300000), RUNS the runs of each side (default 3).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
n=${2:-300000}
runs=${3:-3}
nkicc="$build/bin/nkicc"
[[ -x "$nkicc" ]] || { echo "bench_containers: $nkicc not found (build first)" >&2; exit 1; }
python=/usr/bin/python3
[[ -x "$python" ]] || python=python3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One workload per file; module-level code, which nkicc runs when it loads a source.
cat > "$work/dict_insert.py" <<PY
d = {}
for i in range($n):
    d[i * 7919 % $n] = i
print(len(d))
PY
cat > "$work/dict_str_lookup.py" <<PY
keys = ["k" + str(i) for i in range($n // 3)]
d = {}
for k in keys:
    d[k] = len(k)
total = 0
for k in keys:
    total += d[k]
print(total)
PY
cat > "$work/set_insert.py" <<PY
s = set()
for i in range($n):
    s.add((i * 31) % ($n // 2))
print(len(s))
PY
cat > "$work/sort.py" <<PY
xs = [(i * 2654435761) % 1000003 for i in range($n)]
xs.sort()
print(xs[0], xs[-1])
PY

for w in dict_insert dict_str_lookup set_insert sort; do
  echo "{\"nkicc\": 1, \"target\": \"trn2\", \"sources\": [{\"path\": \"$w.py\"}], \"calls\": []}" > "$work/$w.json"
done

# Interleaved runs, timed by CPython's clock; the outputs must agree before the times mean anything.
"$python" - "$nkicc" "$python" "$work" "$n" "$runs" <<'PY'
import subprocess, sys, time
nkicc, python, work, n, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t0, p
for w in ["dict_insert", "dict_str_lookup", "set_insert", "sort"]:
    _, a = run([nkicc, "-v", "trace", "--emit=ir", f"{work}/{w}.json"])
    _, b = run([python, f"{work}/{w}.py"])
    printed = "\n".join(l[len("nkicc: info: print: "):] for l in a.stderr.splitlines() if l.startswith("nkicc: info: print: "))
    if a.returncode != 0 or printed != b.stdout.strip():
        sys.exit(f"bench_containers: {w}: nkicc printed {printed!r} (exit {a.returncode}), CPython {b.stdout.strip()!r}")
    best_n = best_p = float("inf")
    for _ in range(runs):
        best_n = min(best_n, run([nkicc, "trace", "--emit=ir", f"{work}/{w}.json"])[0])
        best_p = min(best_p, run([python, f"{work}/{w}.py"])[0])
    print(f"{w:16} n={n:7}  nkicc {best_n:7.3f} s   CPython {best_p:7.3f} s   nkicc takes {best_n / best_p:.2f}x CPython's time")
PY
