#!/usr/bin/env bash
# Benchmarks start-up: `nkicc --version` and a tiny trace (the bundled tutorial example, one
# tensor add and two internal transposes, --emit=bir) against /bin/true, interleaved: each
# round runs every command `batch` times back to back, and the figure is the median over the
# rounds of each command's time divided by /bin/true's in the same round, so that load from
# other processes moves both sides alike. Usage: scripts/bench_startup.sh [build-dir] [rounds] [batch]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
rounds="${2:-30}"
batch="${3:-20}"
nkicc="$(cd "$build_dir" && pwd)/bin/nkicc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
example=share/nkicc/examples/tutorial.json
"$nkicc" trace "$example" -o "$work/out.bir" # fails here, not in the loop, if it cannot run

# Nanoseconds for `batch` runs of the command.
batch_ns() {
  local t0 t1 i
  t0=$(date +%s%N)
  for ((i = 0; i < batch; i++)); do "$@" > /dev/null; done
  t1=$(date +%s%N)
  echo $((t1 - t0))
}

: > "$work/rounds"
for ((r = 0; r < rounds; r++)); do
  t_true=$(batch_ns /bin/true)
  t_version=$(batch_ns "$nkicc" --version)
  t_trace=$(batch_ns "$nkicc" trace "$example" -o "$work/out.bir")
  echo "$t_true $t_version $t_trace" >> "$work/rounds"
done
/usr/bin/python3 - "$work/rounds" "$batch" <<'PY'
import statistics, sys
rows = [list(map(int, line.split())) for line in open(sys.argv[1])]
batch = int(sys.argv[2])
def ms(col):
    return statistics.median(r[col] for r in rows) / batch / 1e6
def ratio(col):
    return statistics.median(r[col] / r[0] for r in rows)
print(f"{len(rows)} interleaved rounds of {batch} runs each (medians)")
print(f"/bin/true          {ms(0):7.2f} ms")
print(f"nkicc --version    {ms(1):7.2f} ms  {ratio(1):5.2f}x /bin/true")
print(f"nkicc trace (tiny) {ms(2):7.2f} ms  {ratio(2):5.2f}x /bin/true")
PY
