#!/usr/bin/env bash
# Benchmarks tracing: a tiled matmul (test/lit/trace/Inputs/matmul.py, matmul_tiled) whose trace
# holds 65,536 matmul instructions at scale 1, then 2x, 4x, 8x and 16x that (K grows). Prints
# per scale: the wall time of `--emit=ir` (trace plus the IR text, which is about 200 bytes an
# instruction and is built in memory before it is written), the trace stage's time (from -vv)
# and peak memory of `--emit=stats` (the trace alone), IR instructions per second of each, and
# the growth against scale 1 measured in the same run. Then the limit
# case: a kernel that would emit 11,000,000 instructions, ended by the default
# --max-instructions (10,000,000). Then the BIR-writing share of a ~400,000-instruction trace.
# Usage: scripts/bench_trace.sh [build-dir] [max-scale]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
max_scale="${2:-16}"
nkicc="$(cd "$build_dir" && pwd)/bin/nkicc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp test/lit/trace/Inputs/matmul.py "$work/"

# M = 4096 (32 tiles of 128), N = 16384 (32 tiles of 512), K = 8192 * scale (64 * scale tiles
# of 128): 32 * 32 * 64 * scale matmuls.
printf "%-6s %10s %12s %9s %9s %14s %14s %11s %11s\n" scale matmuls instructions wall-s trace-s "instr/s wall" \
  "instr/s trace" "trace MiB" "--emit=ir MiB"
base=""
scale=1
while [ "$scale" -le "$max_scale" ]; do
  K=$((8192 * scale))
  cat > "$work/mm.json" <<JSON
{"nkicc": 1, "target": "trn2", "sources": [{"path": "matmul.py"}],
 "calls": [{"kernel": "matmul_tiled",
            "args": [{"shape": [$K, 4096], "dtype": "bfloat16"}, {"shape": [$K, 16384], "dtype": "bfloat16"}]}]}
JSON
  /usr/bin/time -f "%e %M" -o "$work/time" "$nkicc" trace "$work/mm.json" --emit=ir \
    --max-instructions=100000000 -o "$work/out.ir" -vv 2> "$work/log"
  read -r secs ir_kb < "$work/time"
  /usr/bin/time -f "%e %M" -o "$work/time" "$nkicc" trace "$work/mm.json" --emit=stats \
    --max-instructions=100000000 -o "$work/out.stats" -vv 2> "$work/log"
  read -r _ kb < "$work/time"
  trace_ms=$(sed -n 's/.*stage trace[^:]*: \([0-9.]*\) ms.*/\1/p' "$work/log")
  instrs=$(sed -n 's/^  instructions: //p' "$work/out.ir")
  macs=$(grep -c ' matmul tensor ' "$work/out.ir" || true)
  python3 - "$scale" "$macs" "$instrs" "$secs" "$trace_ms" "$kb" "$ir_kb" "$base" <<'PY'
import sys
scale, macs, instrs, secs, trace_ms, kb, ir_kb, base = sys.argv[1:]
secs = float(secs)
trace = float(trace_ms) / 1000
n = int(instrs)
growth = "" if not base else f"  trace time x{trace / float(base):.1f} for x{int(scale)} size"
print(f"{scale:<6} {int(macs):>10,} {n:>12,} {secs:>9.2f} {trace:>9.2f} {n / secs:>14,.0f} {n / trace:>14,.0f} "
      f"{int(kb) / 1024:>11.0f} {int(ir_kb) / 1024:>11.0f}{growth}")
PY
  [ -n "$base" ] || base=$(python3 -c "print(float('$trace_ms') / 1000)")
  scale=$((scale * 2))
done

# BIR writing (issue 16): the share of a ~400,000-instruction trace (matmul_tiled at M = 4096,
# N = 16384, K = 8192 * 2: 65,536 matmuls with their loads and stores, 396,288 instructions) that writing BIR costs: --emit=bir
# (each kernel blob written during the trace, then the module) against --emit=stats (the same
# trace, no BIR), both timed by nkicc's -vv stage timers, in seven interleaved rounds (medians: the
# time to fault in fresh memory moves by 30% from run to run here, and the BIR run touches 45 MB more).
K=$((8192 * 2))
cat > "$work/mm.json" <<JSON
{"nkicc": 1, "target": "trn2", "sources": [{"path": "matmul.py"}],
 "calls": [{"kernel": "matmul_tiled",
            "args": [{"shape": [$K, 4096], "dtype": "bfloat16"}, {"shape": [$K, 16384], "dtype": "bfloat16"}]}]}
JSON
: > "$work/bir.rounds"
: > "$work/bir.small-pages.rounds"
for _ in 1 2 3 4 5 6 7; do
  # The same rounds with NKICC_HUGE_PAGES=0 (the heap not advised for huge pages), interleaved:
  # what the advice of nkicc/support/heap_pages.h changes.
  for pages in huge small; do
    row=""
    for emit in bir stats; do
      if [ $pages = huge ]; then
        "$nkicc" -vv trace "$work/mm.json" --emit=$emit --max-instructions=100000000 -o "$work/out.$emit" 2> "$work/log"
      else
        NKICC_HUGE_PAGES=0 "$nkicc" -vv trace "$work/mm.json" --emit=$emit --max-instructions=100000000 \
          -o "$work/out.$emit" 2> "$work/log"
      fi
      row="$row $(sed -n 's/.*stage \(trace\|emit\)[^:]*: \([0-9.]*\) ms.*/\2/p' "$work/log" | tr '\n' ' ')"
      # Within the BIR run itself: nkicc's own timer around writing the kernels.
      [ $emit = bir ] && bir_kernels_ms="$(sed -n 's/.*stage BIR kernels: \([0-9.]*\) ms.*/\1/p' "$work/log")"
    done
    row="$row $bir_kernels_ms"
    if [ $pages = huge ]; then echo "$row" >> "$work/bir.rounds"; else echo "$row" >> "$work/bir.small-pages.rounds"; fi
  done
done
"$nkicc" trace "$work/mm.json" --emit=summary --max-instructions=100000000 -o "$work/out.summary"
bir_instrs=$(sed -n 's/^ *instructions: \([0-9]*\).*/\1/p' "$work/out.summary" | head -n 1)
/usr/bin/python3 - "$work/bir.rounds" "$work/bir.small-pages.rounds" "$(stat -c %s "$work/out.bir")" "$bir_instrs" <<'PY'
import statistics, sys
size, instrs = int(sys.argv[3]), sys.argv[4]
for path, label in ((sys.argv[1], ""), (sys.argv[2], " (NKICC_HUGE_PAGES=0)")):
    rows = [list(map(float, line.split())) for line in open(path)]
    bir = statistics.median(r[0] + r[1] for r in rows) / 1e3
    stats = statistics.median(r[2] + r[3] for r in rows) / 1e3
    share = statistics.median((r[0] + r[1] - r[2] - r[3]) / (r[0] + r[1]) for r in rows)
    # The same share from within each BIR run (its kernels' writing and the emit stage against
    # its trace and emit), free of the run-to-run drift of the difference above.
    within = statistics.median((r[4] + r[1]) / (r[0] + r[1]) for r in rows)
    print(f"BIR writing{label}: {instrs} instructions, a {size / 2**20:.0f} MiB module; trace+emit {bir:.2f} s with "
          f"--emit=bir, {stats:.2f} s with --emit=stats: writing BIR is {100 * share:.0f}% of the --emit=bir run "
          f"by the difference, {100 * within:.0f}% by nkicc's timers within the run ({len(rows)} rounds; goal 20%)")
PY

# The limit case: 1000 x 1000 x 11 nl.copy instructions, ended by the default limit.
cat > "$work/k.json" <<'JSON'
{"nkicc": 1, "target": "trn2", "sources": [{"path": "k.py"}],
 "calls": [{"kernel": "k", "args": [{"shape": [128, 4], "dtype": "float32"}]}]}
JSON
cat > "$work/k.py" <<'PY'
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    tile = nl.load(a)
    for i in nl.affine_range(1000):
        for j in nl.affine_range(1000):
            for m in nl.affine_range(11):
                tile = nl.copy(tile)
    nl.store(out, value=tile)
    return out
PY
/usr/bin/time -f "%e %M" -o "$work/time" "$nkicc" trace "$work/k.json" --emit=ir -o "$work/out.ir" \
  2> "$work/log" && { echo "the limit case did not stop" >&2; exit 1; }
grep -q 'more than 10000000 instructions' "$work/log" || { cat "$work/log" >&2; exit 1; }
read -r secs kb < <(tail -n 1 "$work/time") # time(1) first notes the exit status
python3 -c "import sys; s, kb = float(sys.argv[1]), int(sys.argv[2]); \
print(f'limit: 10,000,000 instructions then the max-instructions error in {s:.2f} s, peak {kb / 1024:,.0f} MiB, '
      f'{kb * 1024 / 1e7:.0f} bytes per instruction')" "$secs" "$kb"

# A helper with a nested def, called 300,000 times: each call's scope and closure form a cycle
# that nkicc releases when the call ends, so memory stays flat.
cat > "$work/h.py" <<'PY'
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


def helper(x):
    def scale(v):
        return v * 2
    big = [x] * 100
    return scale(x) + len(big)


@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    total = 0
    for i in range(300000):
        total = total + helper(i)
    nl.store(out, value=nl.load(a))
    return out
PY
sed 's/"k.py"/"h.py"/' "$work/k.json" > "$work/h.json"
/usr/bin/time -f "%e %M" -o "$work/time" "$nkicc" trace "$work/h.json" --emit=ir -o "$work/out.ir"
read -r secs kb < "$work/time"
python3 -c "import sys; print(f'nested-def helper, 300,000 calls: {float(sys.argv[1]):.2f} s, peak {int(sys.argv[2]) / 1024:,.0f} MiB')" \
  "$secs" "$kb"
