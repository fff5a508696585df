#!/usr/bin/env bash
# Traces the real internal kernels (issue 12) through nkicc's registry: blockwise_mm, conv2d_pbp,
# tiled_dve_transpose_10 and resize_nearest_fixed_dma_kernel of aws-neuron/nki-samples, at the
# commit before "Remove legacy kernels" (7af4e4d). Their files (and the sibling files they import)
# are copied unchanged from DIR into a temporary -I folder beside a registry.json written here with
# the bundled registry's marshalling; nothing of them enters the project. For each kernel, three
# internal calls (two shapes, the first repeated) are traced with --emit=stats, the repeated call
# must be a per-run cache hit, and the MACs of each call (--emit=summary) are compared with the
# bundled kernel's for the same call. Then one description with all twelve calls is traced.
# Prints per kernel "traced" or "failed: <first error line>"; exits 1 when any kernel fails, a
# repeated call is no cache hit, or a call's MACs differ between the real and the bundled kernel.
# Usage: scripts/internal_real.sh DIR [NKICC]   (NKICC: default build/bin/nkicc; KEEP=1 keeps the folder)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 DIR [NKICC]  (DIR: a checkout of aws-neuron/nki-samples at 7af4e4d)" >&2
  exit 2
fi
dir="$1"
nkicc="${2:-$repo/build/bin/nkicc}"
py=/usr/bin/python3
[ -x "$nkicc" ] || { echo "$0: no nkicc binary at $nkicc" >&2; exit 2; }

# The real files, as the registry names them (flat: the kernels import each other by bare name).
declare -A real=(
  [blockwise_mm.py]=contributed/neuron-team-kernels/blockwise_mm.py
  [conv.py]=contributed/neuron-team-kernels/conv.py
  [transpose.py]=contributed/neuron-team-kernels/transpose.py
  [common.py]=contributed/neuron-team-kernels/common.py
  [vision.py]=src/nki_samples/reference/vision.py
)
for name in "${!real[@]}"; do
  if [ ! -f "$dir/${real[$name]}" ]; then
    echo "$0: $dir has no ${real[$name]}: check out aws-neuron/nki-samples at 7af4e4d, the commit before" \
      "\"Remove legacy kernels\"" >&2
    exit 2
  fi
done

work=$(mktemp -d /tmp/nkicc-internal-real.XXXXXX)
if [ "${KEEP:-0}" = 1 ]; then echo "work folder: $work"; else trap 'rm -rf "$work"' EXIT; fi
mkdir "$work/real"
for name in $(printf '%s\n' "${!real[@]}" | sort); do
  cp "$dir/${real[$name]}" "$work/real/$name"
  cmp -s "$dir/${real[$name]}" "$work/real/$name"
done

# The bundled registry's marshalling (share/nkicc/kernels/registry.json), so that the same
# description means the same arguments for the real and the bundled sources.
cat > "$work/real/registry.json" <<'EOF'
{
  "nkicc_registry": 1,
  "kernels": {
    "blockwise_mm": {
      "source": "blockwise_mm.py",
      "modules": ["common.py"],
      "entry": "blockwise_mm",
      "args": [{"operand": 0}, {"operand": 1}, {"operand": 2}, {"operand": 3}, {"attr": "block_size"},
               {"operand": 4}, {"operand": 5}, {"result": 0}]
    },
    "conv2d_pbp_0f1b_0i1o_01fb_experimental_1": {
      "source": "conv.py",
      "modules": ["common.py", "transpose.py"],
      "entry": "conv2d_pbp_0f1b_0i1o_01fb_experimental_1",
      "args": [{"operand": 0}, {"operand": 1}, {"result": 0},
               {"attr": "padding", "default": {"tuple": [0, 0]}}, {"attr": "stride", "default": {"tuple": [1, 1]}}]
    },
    "resize_nearest_fixed_dma_kernel": {
      "source": "vision.py",
      "entry": "resize_nearest_fixed_dma_kernel",
      "args": [{"operand": 0}, {"result_shape": 0}]
    },
    "tiled_dve_transpose_10": {
      "source": "transpose.py",
      "modules": ["common.py"],
      "entry": "tiled_dve_transpose_10",
      "args": [{"operand": 0}],
      "kwargs": {"permutation": {"attr": "permutation", "default": {"tuple": [1, 0]}}}
    }
  }
}
EOF

# Per kernel: shape A, shape B, shape A again. Shapes follow each real kernel's documented layout
# and limits (blockwise_mm: hidden 4096..8192, block 128..1024, (T+1) rows; conv: 0f1b/0i1o/01fb).
kernels="blockwise_mm conv2d_pbp_0f1b_0i1o_01fb_experimental_1 tiled_dve_transpose_10 resize_nearest_fixed_dma_kernel"
"$py" - "$work" <<'EOF'
import json, sys
work = sys.argv[1]

def t(shape, dtype):
    return {"shape": shape, "dtype": dtype}

def moe(rows, hidden, experts, inter, block, blocks):
    return {"internal": "blockwise_mm",
            "operands": [t([rows, hidden], "bfloat16"), t([rows * experts, 1], "bfloat16"),
                         t([experts, hidden, 2, inter], "bfloat16"), t([experts, inter, hidden], "bfloat16"),
                         t([blocks * block], "int32"), t([blocks, 1], "int32")],
            "results": [t([rows, hidden], "bfloat16")], "attrs": {"block_size": block}}

def conv(img, flt, out, dtype, padding):
    return {"internal": "conv2d_pbp_0f1b_0i1o_01fb_experimental_1", "operands": [t(img, dtype), t(flt, dtype)],
            "results": [t(out, dtype)], "attrs": {"padding": padding, "stride": {"tuple": [1, 1]}}}

def transpose(shape, dtype):
    return {"internal": "tiled_dve_transpose_10", "operands": [t(shape, dtype)],
            "results": [t(shape[:-2] + [shape[-1], shape[-2]], dtype)],
            "attrs": {"permutation": {"tuple": list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]}}}

def resize(src, dst, dtype):
    return {"internal": "resize_nearest_fixed_dma_kernel", "op": "ResizeNearest", "operands": [t(src, dtype)],
            "results": [t(dst, dtype)]}

zero = {"tuple": [0, 0]}
one = {"tuple": [{"tuple": [1, 1]}, {"tuple": [1, 1]}]}
calls = {
    "blockwise_mm": [moe(256, 4096, 2, 256, 128, 2), moe(512, 4096, 4, 128, 256, 2)],
    "conv2d_pbp_0f1b_0i1o_01fb_experimental_1": [conv([8, 128, 8, 4], [3, 128, 3, 128], [6, 6, 128, 4], "bfloat16", zero),
                                                 conv([6, 64, 6, 2], [3, 64, 3, 64], [6, 6, 64, 2], "bfloat16", one)],
    "tiled_dve_transpose_10": [transpose([256, 128], "bfloat16"), transpose([2, 3, 40, 48], "float32")],
    "resize_nearest_fixed_dma_kernel": [resize([2, 4, 4, 16], [2, 8, 8, 16], "float32"),
                                        resize([1, 30, 20, 8], [1, 59, 38, 8], "bfloat16")],
}
everything = []
for kernel, (a, b) in calls.items():
    json.dump({"nkicc": 1, "target": "trn2", "calls": [a, b, a]}, open(f"{work}/{kernel}.json", "w"), indent=1)
    everything += [a, b, a]
json.dump({"nkicc": 1, "target": "trn2", "calls": everything}, open(f"{work}/all.json", "w"), indent=1)
EOF

export NKICC_DMI_PRODUCT_NAME=/nonexistent/nkicc-internal-real/product_name
unset NEURON_PLATFORM_TARGET_OVERRIDE

# trace LABEL DESC EMIT [ARGS...]: 0 when nkicc succeeds; output in $work/LABEL.out, stderr in .err
trace() {
  local label=$1 desc=$2 emit=$3
  shift 3
  "$nkicc" trace "$desc" --emit="$emit" -o "$work/$label.out" "$@" 2> "$work/$label.err"
}
first_error() { # the first error line of a run, else its first line
  grep -m1 ': error: ' "$1" || head -n1 "$1"
}
# macs SUMMARY.json -> one MAC count per call, a line each; a call that reuses an earlier call's
# kernel (a cache hit) reports no figures of its own, so it shows that call's.
macs() {
  "$py" -c 'import json, sys
calls = json.load(open(sys.argv[1]))["calls"]
for c in calls:
    print(calls[c["same_kernel_as"]]["macs"] if "same_kernel_as" in c else c["macs"])' "$1"
}
hits() { "$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["new_nki_frontend_cache"]["cache_hits"])' "$1"; }

declare -A files=(
  [blockwise_mm]="blockwise_mm.py common.py"
  [conv2d_pbp_0f1b_0i1o_01fb_experimental_1]="conv.py common.py transpose.py"
  [tiled_dve_transpose_10]="transpose.py common.py"
  [resize_nearest_fixed_dma_kernel]="vision.py"
)
failed=0
for k in $kernels; do
  echo "== $k (real ${files[$k]})"
  real_macs=
  if trace "$k.real" "$work/$k.json" stats -I "$work/real"; then
    echo "$k: traced"
    cat "$work/$k.real.out"
    h=none
    trace "$k.real.json" "$work/$k.json" stats -I "$work/real" --stats-format=json && h=$(hits "$work/$k.real.json.out")
    if [ "$h" = 1 ]; then
      echo "$k: the repeated call is a cache hit"
    else
      echo "$k: failed: the repeated call is not a cache hit ($h hits of 3 calls)"
      failed=1
    fi
    if trace "$k.real.summary" "$work/$k.json" summary -I "$work/real" --stats-format=json; then
      real_macs=$(macs "$work/$k.real.summary.out")
    else
      echo "$k: failed: --emit=summary: $(first_error "$work/$k.real.summary.err")"
      failed=1
    fi
  else
    echo "$k: failed: $(first_error "$work/$k.real.err")"
    failed=1
  fi
  # The bundled kernel, for the same calls: its MACs are what the real kernel's must equal.
  if trace "$k.bundled.summary" "$work/$k.json" summary --stats-format=json; then
    bundled_macs=$(macs "$work/$k.bundled.summary.out")
  else
    bundled_macs=
    echo "$k: the bundled kernel failed: $(first_error "$work/$k.bundled.summary.err")"
  fi
  for i in 0 1 2; do
    r=$(sed -n "$((i + 1))p" <<< "$real_macs")
    b=$(sed -n "$((i + 1))p" <<< "$bundled_macs")
    verdict=
    if [ -n "$r" ] && [ -n "$b" ]; then
      if [ "$r" = "$b" ]; then verdict=": same"; else verdict=": DIFFERENT"; failed=1; fi
    fi
    echo "$k: call $i: real ${r:--} MACs, bundled ${b:--} MACs$verdict"
  done
done

echo "== all four kernels, 12 calls"
if trace all.real "$work/all.json" stats -I "$work/real"; then
  echo "all: traced"
  cat "$work/all.real.out"
else
  echo "all: failed: $(first_error "$work/all.real.err")"
  failed=1
fi
exit "$failed"
