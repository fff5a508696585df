#!/usr/bin/env bash
# Benchmarks the per-run binary cache (issues 5 and 16): generated graphs of 10,000, 100,000 and
# 1,000,000 internal calls over 100 distinct variants of tiled_dve_transpose_10, interleaved.
# Reports peak memory of each (it should grow with variants, not calls: the description is read
# as a stream), wall time per call with the cache and with --no-cache, and the cost of a cache
# hit (what each call past the smallest graph's adds) against the cost of its key alone (nkicc's
# -vv timer around the per-run key).
# Usage: scripts/bench_cache.sh [build-dir] [calls] [variants]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
calls="${2:-100000}"
variants="${3:-100}"
nkicc="$build_dir/bin/nkicc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gen() { python3 scripts/gen_internal_graph.py "$@"; } # gen OUT CALLS VARIANTS

run() { # run LABEL ARGS... -> seconds and peak KB into $work/LABEL.time (no log: 1M info lines would be timed)
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/$label.time" "$nkicc" trace "$@" --emit=stats -o "$work/$label.stats" \
    2> "$work/$label.log" || { cat "$work/$label.log" >&2; exit 1; }
}

small=$((calls / 10))
large=$((calls * 10))
gen "$work/graph_small.json" "$small" "$variants"
gen "$work/graph.json" "$calls" "$variants"
gen "$work/graph_large.json" "$large" "$variants"
# Interleaved: each round runs every size once (the machine's load moves all of them alike).
for round in 1 2 3; do
  run "small.$round" "$work/graph_small.json"
  run "cached.$round" "$work/graph.json"
  run "nocache.$round" "$work/graph.json" --no-cache
  run "large.$round" "$work/graph_large.json"
  # The cost of a key alone: nkicc's own timer around the per-run key of each call (-vv).
  "$nkicc" -vv trace "$work/graph_large.json" --emit=stats -o /dev/null 2> "$work/keys.$round.log" > /dev/null
done
cmp -s <("$nkicc" trace "$work/graph.json" --emit=bir-text) <("$nkicc" trace "$work/graph.json" --emit=bir-text --no-cache) \
  && same=identical || same=DIFFERENT

python3 - "$work" "$calls" "$variants" "$same" <<'PY'
import re, statistics, sys
work, calls, variants, same = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
small, large = calls // 10, calls * 10
def figures(label):
    runs = [open(f"{work}/{label}.{r}.time").read().split() for r in (1, 2, 3)]
    return statistics.median(float(s) for s, _ in runs), max(int(kb) for _, kb in runs)
ts, kbs = figures("small")
c, ckb = figures("cached")
n, nkb = figures("nocache")
tl, kbl = figures("large")
# The timer covers the keys nkicc computed: a copy of a call that was a hit takes that hit
# without computing its key again, so the figure is per key computed, not per call.
def key_ms_each(r):
    m = re.search(r"stage binary cache keys \(([0-9]+) computed\): ([0-9.]+) ms", open(f"{work}/keys.{r}.log").read())
    return float(m.group(2)) / int(m.group(1))
key_ms = statistics.median(key_ms_each(r) for r in (1, 2, 3))
print(f"graphs: {small:,}, {calls:,} and {large:,} internal calls over {variants} variants (tiled_dve_transpose_10), "
      "medians of 3 interleaved runs")
print(f"peak memory: {kbs / 1024:.1f} MiB at {small:,} calls, {ckb / 1024:.1f} MiB at {calls:,}, "
      f"{kbl / 1024:.1f} MiB at {large:,}: {kbl / kbs:.2f}x the smallest (goal: at most 1.5x)")
print(f"with the cache:  {c:.2f} s, {c / calls * 1e6:.1f} us per call")
print(f"with --no-cache: {n:.2f} s, {n / calls * 1e6:.1f} us per call, peak {nkb / 1024:.1f} MiB")
print(f"ratio: the cache makes a call {n / c:.1f}x cheaper; BIR output {same}")
hit_us = (tl - ts) / (large - small) * 1e6
key_us = key_ms * 1e3
print(f"a hit: {hit_us:.2f} us (the time each call past the first {small:,} adds), its key alone {key_us:.2f} us "
      f"(nkicc -vv's key timer, median of 3): {hit_us / key_us:.2f}x its key (goal: at most 2x)")
PY
