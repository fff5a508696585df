#!/usr/bin/env bash
# Parse throughput of nkicc's Python frontend against CPython's ast.parse on the same large,
# generated, kernel-like file (the closing measurement of issue 3).
#
#   scripts/bench_parse.sh [BUILD_DIR] [SIZE_MB]
#
# BUILD_DIR holds test/nkicc-unit (default: build); the file is SIZE_MB megabytes (default 20)
# of the test kernels under test/unit/data/python, repeated with renamed functions.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
size_mb=${2:-20}
unit="$build/test/nkicc-unit"
[[ -x "$unit" ]] || { echo "bench_parse: $unit not found (build nkicc-unit first)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
file="$work/bench_kernels.py"

python3 - "$root/test/unit/data/python" "$file" "$size_mb" <<'PY'
import pathlib, re, sys
src_dir, out, size_mb = pathlib.Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
names = ["tensor_add", "matmul_tiled", "transpose2d", "rmsnorm", "softmax", "attention"]
templates = [(src_dir / (n + ".py")).read_text() for n in names]
target = int(size_mb * 1e6)
parts, total, i = [], 0, 0
while total < target:
    for t in templates:
        # Rename top-level defs and classes so the file reads like many distinct kernels.
        text = re.sub(r"^(def|class) (\w+)", lambda m: "%s %s_%d" % (m.group(1), m.group(2), i), t, flags=re.M)
        parts.append(text)
        total += len(text)
    i += 1
pathlib.Path(out).write_text("\n".join(parts))
PY

echo "file: $file ($(wc -c < "$file") bytes, $(wc -l < "$file") lines)"
nkicc_line=$(NKICC_BENCH_FILE="$file" "$unit" "parse throughput" | grep '^nkicc parse:')
echo "$nkicc_line"
python_line=$(python3 - "$file" <<'PY'
import ast, sys, time
data = open(sys.argv[1], "rb").read()
best = min((lambda t0: (ast.parse(data), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(3))
mb, lines = len(data) / 1e6, data.count(b"\n")
print("cpython ast.parse: %.1f MB, %d lines, %.3f s, %.1f MB/s, %.0f lines/s" % (mb, lines, best, mb / best, lines / best))
PY
)
echo "$python_line"
nkicc_s=$(sed -E 's/.*, ([0-9.]+) s,.*/\1/' <<< "$nkicc_line")
python_s=$(sed -E 's/.*, ([0-9.]+) s,.*/\1/' <<< "$python_line")
python3 -c "print('ratio: nkicc is %.1fx the speed of CPython ast.parse' % ($python_s / $nkicc_s))"
