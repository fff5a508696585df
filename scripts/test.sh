#!/usr/bin/env bash
# Builds nkicc (if needed) and runs every test: the Catch2 unit tests and the lit golden suite.
# Usage: scripts/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-${NKICC_BUILD_DIR:-build}}"
[ -f "$build_dir/build.ninja" ] || cmake -S . -B "$build_dir" -G Ninja
cmake --build "$build_dir"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
