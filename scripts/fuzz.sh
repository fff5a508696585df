#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, -fsanitize=fuzzer,address,undefined) into a build folder
# of their own, then runs one target for SECONDS seconds over its committed seed corpus
# (fuzz/corpus/TARGET, read only), the inputs that once crashed it (fuzz/regressions/TARGET) and
# its dictionary. New inputs go to a working corpus in the build folder; a crash, leak, timeout or
# out-of-memory input is left in its artifacts folder and makes the script fail (libFuzzer's exit
# status).
#
# Usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer options...]
#   TARGET: description registry python trace bir backend_config
# Environment: NKICC_FUZZ_BUILD_DIR (default build-fuzz), NKICC_FUZZ_ARTIFACTS (default
# <build>/artifacts/TARGET), NKICC_FUZZ_WORK (default <build>/work/TARGET), NKICC_FUZZ_NO_BUILD
# (set: run what is built).
set -euo pipefail
cd "$(dirname "$0")/.."

targets="description registry python trace bir backend_config"
if [ $# -lt 2 ] || ! [[ " $targets " == *" $1 "* ]] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer options...]" >&2
  echo "  TARGET: $targets" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2

build="${NKICC_FUZZ_BUILD_DIR:-build-fuzz}"
if [ -z "${NKICC_FUZZ_NO_BUILD:-}" ]; then
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
      -DNKICC_FUZZ=ON -DNKICC_WERROR=ON -DNKICC_BUILD_TESTS=OFF >/dev/null
  fi
  cmake --build "$build" -j2 --target "fuzz_$target"
fi

artifacts="${NKICC_FUZZ_ARTIFACTS:-$build/artifacts/$target}"
work="${NKICC_FUZZ_WORK:-$build/work/$target}"
mkdir -p "$artifacts" "$work"
options=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts/"
         -timeout=10 -rss_limit_mb=2560 -malloc_limit_mb=1024)
[ -f "fuzz/dict/$target.dict" ] && options+=(-dict="fuzz/dict/$target.dict")
# Leaks are findings; a UBSan report stops the run as a crash does.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
corpora=("$work" "fuzz/corpus/$target")
# Inputs that once crashed a target (each fixed, each with its test) run first on every start.
[ -d "fuzz/regressions/$target" ] && corpora+=("fuzz/regressions/$target")
exec "$build/fuzz/fuzz_$target" "${options[@]}" "$@" "${corpora[@]}"
