#!/usr/bin/env bash
# Two builds of nkicc against each other on bench_interp's workloads (scripts/bench_interp/: the
# pure-Python loops, calls, attributes, containers and instances, the matmul and softmax kernels,
# and the 402,432-instruction matmul trace), run interleaved (A, B, A, B, ...) REPS times: the
# median CPU seconds (user + system) of each, and B's time as a fraction of A's. For judging a
# change on a machine whose timings drift between runs: both sides see the same drift.
#
#   scripts/bench_ab.sh BUILD_A BUILD_B [REPS]     (REPS default 7)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 2 ]] || { echo "usage: scripts/bench_ab.sh BUILD_A BUILD_B [REPS]" >&2; exit 2; }
a="$(cd "$1" && pwd)/bin/nkicc"
b="$(cd "$2" && pwd)/bin/nkicc"
reps=${3:-7}
for n in "$a" "$b"; do
  [[ -x "$n" ]] || { echo "bench_ab: $n not found (build first)" >&2; exit 1; }
done
python=/usr/bin/python3
[[ -x "$python" ]] || python=python3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root"/scripts/bench_interp/*.py "$work/"

"$python" - "$a" "$b" "$work" "$reps" <<'PY'
import json, os, resource, statistics, subprocess, sys
a, b, work, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def description(name, source, kernel, args):
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump({"nkicc": 1, "target": "trn2", "sources": [{"path": source}],
                   "calls": [{"kernel": kernel, "args": [{"shape": s, "dtype": d} for s, d in args]}]}, f)
    return path

small = [([128, 64], "float32")]
workloads = [(w, description(w, "workloads.py", w, small))
             for w in ["loops", "calls", "attributes", "containers", "instances"]]
workloads.append(("matmul", description("matmul", "matmul.py", "mm",
                                        [([32768, 2048], "bfloat16"), ([32768, 8192], "bfloat16")])))
workloads.append(("softmax", description("softmax", "softmax.py", "softmax", [([4194304, 512], "float32")])))
workloads.append(("trace-402k", description("big", "matmul.py", "mm",
                                            [([16640, 4096], "bfloat16"), ([16640, 16384], "bfloat16")])))

def cpu_seconds(nkicc, desc):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([nkicc, "trace", "--emit=stats", "-o", os.devnull, desc], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"bench_ab: {nkicc} trace {desc} failed:\n{p.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

# Both builds must trace the same thing before their times mean anything.
for name, desc in workloads:
    outs = [subprocess.run([n, "trace", "--emit=stats", desc], capture_output=True, text=True).stdout for n in (a, b)]
    if outs[0] != outs[1]:
        sys.exit(f"bench_ab: {name}: the two builds print different statistics")

times = {name: ([], []) for name, _ in workloads}
for _ in range(reps):
    for name, desc in workloads:
        times[name][0].append(cpu_seconds(a, desc))
        times[name][1].append(cpu_seconds(b, desc))
print(f"A = {a}\nB = {b}\nmedian CPU seconds of {reps} interleaved runs each")
print(f"{'workload':12} {'A s':>7} {'B s':>7} {'B/A':>6}")
for name, _ in workloads:
    ta, tb = statistics.median(times[name][0]), statistics.median(times[name][1])
    print(f"{name:12} {ta:7.3f} {tb:7.3f} {tb / ta if ta else float('nan'):6.2f}")
PY
