#!/usr/bin/env bash
# nkicc's interpreter against CPython on the same source (issue 10, "What it must show"):
#  (a) pure-Python workloads (loops, calls, attribute access, list/dict/tuple work, class
#      instances) that a kernel runs at trace time, traced by `nkicc trace --emit=stats` and run
#      by CPython with scripts/nki_mock.py standing in for nl/nisa;
#  (b) tracing a tiled nisa.nc_matmul kernel (2048 x 8192 x 32768, 197,376 instructions) and a
#      softmax (4,194,304 x 512, 262,144 instructions), nkicc against CPython + mock, after
#      checking that both traced the same DMAs and MACs;
#  (c) a 402,432-instruction matmul trace with --emit=stats: IR instructions/s and peak RSS per
#      instruction.
# Runs are interleaved (nkicc, CPython, nkicc, ...); each figure is the median of REPS runs with
# the median of an empty kernel's run (process start-up, loading the file) subtracted, per side.
# The mock records one tuple per op and models nothing else, so it is a floor for a tracer in
# Python, not real NKI. The goals are the issue's; they are reported, not asserted.
#
#   scripts/bench_interp.sh [BUILD_DIR] [REPS]     (defaults: build, 5)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
reps=${2:-5}
nkicc="$(cd "$build" && pwd)/bin/nkicc"
[[ -x "$nkicc" ]] || { echo "bench_interp: $nkicc not found (build first)" >&2; exit 1; }
python=/usr/bin/python3
[[ -x "$python" ]] || python=python3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root"/scripts/bench_interp/*.py "$work/"

"$python" - "$nkicc" "$python" "$root/scripts/nki_mock.py" "$work" "$reps" <<'PY'
import json, os, re, statistics, subprocess, sys, time
nkicc, python, mock, work, reps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

def description(name, source, kernel, args):
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump({"nkicc": 1, "target": "trn2", "sources": [{"path": source}],
                   "calls": [{"kernel": kernel, "args": [{"shape": s, "dtype": d} for s, d in args]}]}, f)
    return path

def mock_args(args):
    return ["x".join(map(str, s)) + ":" + d for s, d in args]

# name, kind, source, kernel, args
small = [([128, 64], "float32")]
mm_args = [([32768, 2048], "bfloat16"), ([32768, 8192], "bfloat16")]
sm_args = [([4194304, 512], "float32")]
workloads = [(w, "python", "workloads.py", w, small)
             for w in ["loops", "calls", "attributes", "containers", "instances"]]
workloads += [("matmul", "kernel", "matmul.py", "mm", mm_args),
              ("softmax", "kernel", "softmax.py", "softmax", sm_args)]
empty = ("empty", "empty", "workloads.py", "empty", small)

def commands(w):
    name, _, source, kernel, args = w
    return ([nkicc, "trace", "--emit=stats", "-o", os.devnull, description(name, source, kernel, args)],
            [python, mock, os.path.join(work, source), kernel] + mock_args(args))

def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench_interp: {' '.join(cmd)} failed:\n{p.stderr}")
    return secs

# The pure-Python workloads print their result; both sides must print the same before the times
# mean anything.
for w in workloads + [empty]:
    if w[1] == "kernel":
        continue
    n_cmd, p_cmd = commands(w)
    a = subprocess.run([n_cmd[0], "-v"] + n_cmd[1:], capture_output=True, text=True)
    b = subprocess.run(p_cmd, capture_output=True, text=True)
    printed = [l[len("nkicc: info: print: "):] for l in a.stderr.splitlines() if l.startswith("nkicc: info: print: ")]
    if a.returncode != 0 or b.returncode != 0 or printed != b.stdout.splitlines()[:1]:
        sys.exit(f"bench_interp: {w[0]}: nkicc printed {printed} (exit {a.returncode}: {a.stderr.strip()}), "
                 f"CPython {b.stdout.splitlines()[:1]} (exit {b.returncode}: {b.stderr.strip()})")

# The kernels: nkicc's DMA instruction count and MACs (--emit=summary) must be the mock's.
for w in workloads:
    if w[1] != "kernel":
        continue
    n_cmd, p_cmd = commands(w)
    a = subprocess.run([nkicc, "trace", "--emit=summary", n_cmd[-1]], capture_output=True, text=True)
    b = subprocess.run(p_cmd, capture_output=True, text=True)
    summary = [l.split() for l in a.stdout.splitlines()]
    n_dma = next((int(l[1].rstrip(",")) for l in summary if l[:1] == ["sync"]), None)
    n_macs = next((int(l[1]) for l in summary if l[:1] == ["MACs:"]), None)
    recorded = dict(kv.split("=") for kv in b.stdout.split()[-3:]) if b.returncode == 0 else {}
    if a.returncode != 0 or (n_dma, n_macs) != (int(recorded.get("dma", -1)), int(recorded.get("macs", -1))):
        sys.exit(f"bench_interp: {w[0]}: nkicc traced {n_dma} DMAs and {n_macs} MACs (exit {a.returncode}: "
                 f"{a.stderr.strip()}), the mock {recorded} ({b.stderr.strip()})")

times = {w[0]: ([], []) for w in workloads + [empty]}
for _ in range(reps):
    for w in [empty] + workloads:
        n_cmd, p_cmd = commands(w)
        times[w[0]][0].append(run(n_cmd))
        times[w[0]][1].append(run(p_cmd))
base_n, base_p = (statistics.median(t) for t in times["empty"])
print(f"start-up (empty kernel, subtracted below): nkicc {base_n:.3f} s, python {base_p:.3f} s; median of {reps}")
print(f"{'workload':12} {'nkicc s':>8} {'python s':>9} {'python/nkicc':>13}  goal")
for name, kind, *_ in workloads:
    n = max(statistics.median(times[name][0]) - base_n, 1e-4)
    p = max(statistics.median(times[name][1]) - base_p, 1e-4)
    goal = 3 if kind == "python" else 10
    ratio = p / n
    print(f"{name:12} {n:8.3f} {p:9.3f} {ratio:12.2f}x  >= {goal}x {'met' if ratio >= goal else 'not met'}")

# (c) 16640 x 4096 x 16384 bf16: 32 x 32 output tiles of 130 K steps, 402,432 IR instructions.
big_args = [([16640, 4096], "bfloat16"), ([16640, 16384], "bfloat16")]
big = description("big", "matmul.py", "mm", big_args)
ir = os.path.join(work, "big.ir")
subprocess.run([nkicc, "trace", "--emit=ir", "-o", ir, big], check=True)
instrs = next(int(l.split()[1]) for l in open(ir) if l.strip().startswith("instructions:"))
def timed(desc, small_pages=False):
    out = os.path.join(work, "time")
    env = dict(os.environ, NKICC_HUGE_PAGES="0") if small_pages else None
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out, nkicc, "-vv", "trace", "--emit=stats",
                        "-o", os.devnull, desc], capture_output=True, text=True, check=True, env=env)
    wall = time.perf_counter() - t0
    # `stage trace (one pass): 812.3 ms` (the pass is named since the description is streamed)
    trace_ms = next(float(m.group(1)) for l in p.stderr.splitlines()
                    if (m := re.search(r"stage trace[^:]*: ([0-9.]+) ms", l)))
    return wall, trace_ms / 1000, int(open(out).read().split()[-1]) * 1024
empty_desc = description("empty", "workloads.py", "empty", small)
# The same runs with NKICC_HUGE_PAGES=0 (the heap not advised for huge pages), interleaved: what
# nkicc/support/heap_pages.h changes.
runs_by_pages = {False: [], True: []}
for _ in range(reps):
    for small_pages in (False, True):
        runs_by_pages[small_pages].append((timed(empty_desc, small_pages), timed(big, small_pages)))
for small_pages, runs in runs_by_pages.items():
    wall = statistics.median(b[0] - e[0] for e, b in runs)
    trace = statistics.median(b[1] for _, b in runs)
    rss = statistics.median(b[2] for _, b in runs)
    rss_empty = statistics.median(e[2] for e, _ in runs)
    per_instr = (rss - rss_empty) / instrs
    label = " (NKICC_HUGE_PAGES=0)" if small_pages else ""
    print(f"{instrs:,}-instruction trace, --emit=stats{label}: {instrs / wall:,.0f} instr/s by wall time less "
          f"start-up ({wall:.3f} s), {instrs / trace:,.0f} instr/s by the trace stage ({trace:.3f} s)  goal >= "
          f"2,000,000 instr/s {'met' if instrs / wall >= 2e6 else 'not met'}")
    print(f"peak RSS{label} {rss / 2**20:.1f} MiB, {rss_empty / 2**20:.1f} MiB for the empty kernel: "
          f"{per_instr:.0f} B/instr above start-up ({rss / instrs:.0f} B/instr in all)  goal <= 120 B/instr "
          f"{'met' if per_instr <= 120 else 'not met'}")
PY
