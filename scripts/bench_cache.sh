#!/usr/bin/env bash
# Benchmarks the per-run binary cache (issue 5): a generated graph of 100,000 internal calls
# over 100 distinct variants of tiled_dve_transpose_10. Reports wall time per call with the
# cache and with --no-cache (ratio from this one run), peak memory of both and of a graph with
# 10x the calls (memory should grow with variants, not calls), and the share of the cached
# run's time spent computing cache keys (from nkicc's -vv stage timers).
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

run() { # run LABEL ARGS... -> prints seconds and peak KB into $work/LABEL
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/$label.time" "$nkicc" -vv trace "$@" --emit=stats -o "$work/$label.stats" \
    2> "$work/$label.log" || { cat "$work/$label.log" >&2; exit 1; }
}

gen "$work/graph.json" "$calls" "$variants"
gen "$work/graph10.json" "$((calls * 10))" "$variants"
run cached "$work/graph.json"
run nocache "$work/graph.json" --no-cache
run cached10 "$work/graph10.json"
cmp -s <("$nkicc" trace "$work/graph.json" --emit=bir-text) <("$nkicc" trace "$work/graph.json" --emit=bir-text --no-cache) \
  && same=identical || same=DIFFERENT

python3 - "$work" "$calls" "$variants" "$same" <<'PY'
import re, sys
work, calls, variants, same = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def figures(label):
    secs, kb = open(f"{work}/{label}.time").read().split()
    log = open(f"{work}/{label}.log").read()
    stages = {m.group(1): float(m.group(2)) for m in re.finditer(r"stage (.+?): ([0-9.]+) ms", log)}
    return float(secs), int(kb), stages
c, ckb, cst = figures("cached")
n, nkb, _ = figures("nocache")
c10, c10kb, _ = figures("cached10")
print(f"graph: {calls:,} internal calls over {variants} variants (tiled_dve_transpose_10)")
print(f"with the cache:  {c:.2f} s, {c / calls * 1e6:.1f} us per call, peak {ckb / 1024:.0f} MiB")
print(f"with --no-cache: {n:.2f} s, {n / calls * 1e6:.1f} us per call, peak {nkb / 1024:.0f} MiB")
print(f"ratio: the cache makes a call {n / c:.1f}x cheaper; BIR output {same}")
print(f"10x the calls ({calls * 10:,}), same variants: peak {c10kb / 1024:.0f} MiB ({c10kb / ckb:.2f}x), {c10:.2f} s")
keys = cst.get("binary cache keys", 0.0)
print(f"computing cache keys: {keys:.0f} ms of {c * 1000:.0f} ms ({100 * keys / (c * 1000):.0f}% of the cached run)")
PY
