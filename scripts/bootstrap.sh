#!/usr/bin/env bash
# Sets nkicc up from nothing on Debian 12: installs the packages the build and the tests need
# (idempotently), configures and builds into build/, then runs the main job on the bundled
# example. Usage: scripts/bootstrap.sh [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ libcli11-dev libssl-dev rapidjson-dev libspdlog-dev libfmt-dev catch2
          flatbuffers-compiler libflatbuffers-dev llvm-14-tools mlir-19-tools python3 python3-numpy
          libeigen3-dev libxxhash-dev libhiredis-dev libcurl4-openssl-dev redis-server nginx-core
          python3-jsonschema make
          # The sanitizer and fuzzing build (.ci/run, scripts/fuzz.sh): clang with libFuzzer.
          clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build_dir="${NKICC_BUILD_DIR:-build}"
# The release build is profile-guided (CMakeLists.txt, NKICC_PGO): an instrumented nkicc is
# built in $build_dir-pgo, trained on scripts/pgo/train.sh's inputs, and its profile guides the
# build in $build_dir. It costs one more build of the binary (no tests) and under a minute of
# training. NKICC_PGO=0 builds without it (quicker, for a change's first compile); so does a
# clang named among the options (-DCMAKE_CXX_COMPILER=clang++-14), whose profiles differ.
pgo=()
if [ "${NKICC_PGO:-1}" != 0 ] && ! printf '%s\n' "$@" | grep -q 'CMAKE_CXX_COMPILER=.*clang'; then
  profile="$(realpath -m "$build_dir")/pgo-profile"
  echo "bootstrap: profile-guided build: instrumented nkicc in $build_dir-pgo"
  cmake -S . -B "$build_dir-pgo" -G Ninja -DNKICC_BUILD_TESTS=OFF -DNKICC_PGO=generate "-DNKICC_PGO_DIR=$profile" "$@"
  cmake --build "$build_dir-pgo" --target nkicc_tool
  rm -rf "$profile"
  echo "bootstrap: training it (scripts/pgo/train.sh)"
  scripts/pgo/train.sh "$build_dir-pgo/bin/nkicc"
  pgo=(-DNKICC_PGO=use "-DNKICC_PGO_DIR=$profile")
else
  pgo=(-DNKICC_PGO=)
fi
cmake -S . -B "$build_dir" -G Ninja "${pgo[@]}" "$@"
cmake --build "$build_dir"

example=share/nkicc/examples/tutorial.json
nkicc="$build_dir/bin/nkicc"
echo "bootstrap: nkicc trace $example -o $build_dir/tutorial.bir"
"$nkicc" trace "$example" -o "$build_dir/tutorial.bir"
echo "bootstrap: nkicc dis $build_dir/tutorial.bir (first 40 lines)"
"$nkicc" dis "$build_dir/tutorial.bir" | head -n 40
echo "bootstrap: nkicc trace $example --emit=stats"
"$nkicc" trace "$example" --emit=stats
echo "bootstrap: nkicc key $example"
"$nkicc" key "$example"
