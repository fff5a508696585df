#!/usr/bin/env bash
# Benchmarks HLO and StableHLO emission (issue 6): a 100,000-call module (internal calls over 100
# variants, as scripts/bench_cache.sh generates) emitted with --emit=hlo and --emit=stablehlo.
# Reports, from nkicc's own -vv stage timers in the same run, the emission time against the
# trace time. Usage: scripts/bench_hlo.sh [build-dir] [calls] [variants]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
calls="${2:-100000}"
variants="${3:-100}"
nkicc="$build_dir/bin/nkicc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 scripts/gen_internal_graph.py "$work/graph.json" "$calls" "$variants"

for kind in hlo stablehlo; do
  /usr/bin/time -f "%e %M" -o "$work/$kind.time" "$nkicc" -vv trace "$work/graph.json" --emit=$kind -o "$work/out.$kind" \
    2> "$work/$kind.log"
  python3 - "$kind" "$work/$kind.log" "$work/$kind.time" "$work/out.$kind" "$calls" <<'PY'
import os, re, sys
kind, log, timef, out, calls = sys.argv[1:]
stages = {m.group(1): float(m.group(2)) for m in re.finditer(r"stage (.+?): ([0-9.]+) ms", open(log).read())}
secs, kb = open(timef).read().split()
trace, emit = stages["trace"], stages["emit"]
print(f"--emit={kind}: {int(calls):,} calls, {os.path.getsize(out) / 2**20:.0f} MiB written; trace {trace:.0f} ms, "
      f"emit {emit:.0f} ms = {100 * emit / (trace + emit):.0f}% of trace+emit; wall {float(secs):.2f} s, "
      f"peak {int(kb) / 1024:.0f} MiB")
PY
done
