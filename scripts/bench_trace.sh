#!/usr/bin/env bash
# Benchmarks tracing: a tiled matmul (test/lit/trace/Inputs/matmul.py, matmul_tiled) whose trace
# holds 65,536 matmul instructions at scale 1, then 2x, 4x, 8x and 16x that (K grows). Prints
# wall time, IR instructions per second and peak memory per scale, and the growth against
# scale 1 measured in the same run. Usage: scripts/bench_trace.sh [build-dir] [max-scale]
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
printf "%-6s %10s %12s %12s %14s %10s\n" scale matmuls instructions seconds "instr/s" "peak MiB"
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
    --max-instructions=100000000 -o "$work/out.ir"
  read -r secs kb < "$work/time"
  instrs=$(sed -n 's/^  instructions: //p' "$work/out.ir")
  macs=$(grep -c ' matmul tensor ' "$work/out.ir" || true)
  python3 - "$scale" "$macs" "$instrs" "$secs" "$kb" "$base" <<'PY'
import sys
scale, macs, instrs, secs, kb, base = sys.argv[1:]
secs = float(secs)
growth = "" if not base else f"  time x{secs / float(base):.1f} for x{int(scale)} size"
print(f"{scale:<6} {int(macs):>10,} {int(instrs):>12,} {secs:>12.2f} {int(instrs) / secs:>14,.0f} {int(kb) / 1024:>10.0f}{growth}")
PY
  [ -n "$base" ] || base=$secs
  scale=$((scale * 2))
done
