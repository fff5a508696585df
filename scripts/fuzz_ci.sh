#!/usr/bin/env bash
# CI: builds the fuzz targets (scripts/fuzz.sh's build folder) and runs each for a bounded time
# under ASan+UBSan, two at a time on the machine's two cores: 6 targets x 55 s / 2 is about three
# minutes of fuzzing. Any crash, leak, timeout or out-of-memory input fails the run and is left
# as a reproducer in <build>/artifacts/TARGET/ (rerun it: build-fuzz/fuzz/fuzz_TARGET FILE).
#
# Usage: scripts/fuzz_ci.sh   Environment: NKICC_FUZZ_SECONDS (per target, default 55),
# NKICC_FUZZ_BUILD_DIR (default build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${NKICC_FUZZ_SECONDS:-55}"
build="${NKICC_FUZZ_BUILD_DIR:-build-fuzz}"
export NKICC_FUZZ_BUILD_DIR="$build"
targets=(description registry python trace bir backend_config)

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    -DNKICC_FUZZ=ON -DNKICC_WERROR=ON -DNKICC_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}"

# Each run starts from the committed seeds only (a fresh working corpus), so CI is repeatable.
logs="$build/ci-logs"
rm -rf "$logs" "$build/ci-work"
mkdir -p "$logs"
run() {
  NKICC_FUZZ_NO_BUILD=1 NKICC_FUZZ_WORK="$build/ci-work/$1" scripts/fuzz.sh "$1" "$seconds" >"$logs/$1.log" 2>&1
}
failed=()
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  pids=()
  for t in "${targets[@]:i:2}"; do
    run "$t" &
    pids+=("$!:$t")
  done
  for p in "${pids[@]}"; do
    if ! wait "${p%%:*}"; then
      failed+=("${p#*:}")
    fi
  done
done

for t in "${targets[@]}"; do
  # libFuzzer's final figures: runs, coverage (cov: edges, ft: features), corpus size.
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$logs/$t.log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$logs/$t.log" | tail -1 || true)
  echo "fuzz: $t: ${seconds}s, ${runs} runs, ${cov:-no coverage line}"
done
if [ ${#failed[@]} -gt 0 ]; then
  for t in "${failed[@]}"; do
    echo "fuzz: $t FAILED; the log's end and the reproducer:" >&2
    tail -n 40 "$logs/$t.log" >&2
    ls -l "$build/artifacts/$t" >&2 || true
  done
  exit 1
fi
