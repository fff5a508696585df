#!/usr/bin/env bash
# Benchmarks HLO and StableHLO emission (issues 6 and 16): a module of many internal calls over
# 100 variants (as scripts/bench_cache.sh generates; every custom-call carries its kernel's BIR
# as base64, as seed 001 requires) emitted with --emit=hlo and --emit=stablehlo. Per kind, in
# interleaved rounds: the emit stage's time (nkicc's own -vv stage timer: the module built and
# written to /dev/null) against the trace stage's, the output rate in GB/s, and the same bytes
# produced by nkicc's base64 encoder alone (build/bin/nkicc_bench_base64, the floor: 1 MiB
# pieces into one reused buffer) measured right after it; the ratio is the median over the
# rounds. Usage: scripts/bench_hlo.sh [build-dir] [calls] [variants] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
calls="${2:-20000}"
variants="${3:-100}"
rounds="${4:-3}"
nkicc="$build_dir/bin/nkicc"
floor="$build_dir/bin/nkicc_bench_base64"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 scripts/gen_internal_graph.py "$work/graph.json" "$calls" "$variants"

for kind in hlo stablehlo; do
  # The rounds write to /dev/null: into a file, gigabytes are paced by the disk's writeback, not
  # by nkicc. One run into a file gives the size and the floor's input bytes.
  "$nkicc" trace "$work/graph.json" --emit=$kind -o "$work/out.$kind"
  size=$(stat -c %s "$work/out.$kind")
  : > "$work/$kind.rounds"
  for ((r = 0; r < rounds; r++)); do
    "$nkicc" -vv trace "$work/graph.json" --emit=$kind -o /dev/null 2> "$work/$kind.log"
    read -r floor_s _ < <("$floor" "$work/out.$kind" "$size" 1)
    stages=$(sed -n 's/.*stage \(trace\|emit\)[^:]*: \([0-9.]*\) ms.*/\2/p' "$work/$kind.log" | tr '\n' ' ')
    echo "$size $floor_s $stages" >> "$work/$kind.rounds"
  done
  rm -f "$work/out.$kind"
  /usr/bin/python3 - "$kind" "$work/$kind.rounds" "$calls" <<'PY'
import statistics, sys
kind, rounds, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [list(map(float, line.split())) for line in open(rounds)]
size = rows[0][0]
med = lambda f: statistics.median(f(r) for r in rows)
trace, emit, floor = med(lambda r: r[2] / 1e3), med(lambda r: r[3] / 1e3), med(lambda r: r[1])
print(f"--emit={kind}: {calls:,} calls, {size / 2**20:,.0f} MiB written; trace {trace:.2f} s, emit {emit:.2f} s "
      f"= {100 * emit / (trace + emit):.0f}% of trace+emit ({len(rows)} rounds, medians)")
print(f"  output {size / emit / 1e9:.2f} GB/s; base64 encoder alone on as many bytes {size / floor / 1e9:.2f} GB/s; "
      f"emit takes {med(lambda r: (r[3] / 1e3) / r[1]):.2f}x the encoder")
PY
done
