#!/usr/bin/env python3
"""The reference for `nkicc key`: the per-run binary cache key of seed 000, computed by CPython.

For each internal call of a kernel description file, builds key_components exactly as
codegenInternalNativeNkiKernel does and prints the same three lines as `nkicc key`:

    call N: internal FUNC_NAME
      components: <str(sorted(key_components.items()))>
      key: <sha256 hexdigest>

Usage: key_reference.py FILE [--target trn1|trn2|trn3|inf2]
External calls are skipped: their key needs nkicc's argument binding.
"""
import hashlib
import json
import sys

# (class name, num_neuroncores_per_sengine) per target, SPEC §5.
TARGETS = {"trn1": ("Trn1", 1), "trn2": ("Trn2", 2), "trn3": ("Trn3", 2), "inf2": ("Inf2", 1),
           "gen2": ("Trn1", 1), "gen3": ("Trn2", 2), "gen4": ("Trn3", 2)}
DTYPE_ALIASES = {"bool_": "bool"}


def object_hook(pairs):
    # {"tuple": [...]} spells a Python tuple (SPEC §2); any other object is a dict.
    if len(pairs) == 1 and pairs[0][0] == "tuple" and isinstance(pairs[0][1], list):
        return tuple(pairs[0][1])
    return dict(pairs)


def tensor_info(tensors):
    # Seed 000 _extract_tensor_info: access_shape first, then shape.
    result = {"shapes": [], "dtypes": []}
    for t in tensors:
        result["shapes"].append(tuple(t.get("access_shape", t["shape"])))
        result["dtypes"].append(DTYPE_ALIASES.get(t["dtype"], t["dtype"]))
    return result


# The seed's algorithm (seed 000 `_compute_cache_key_from_components`), verbatim in spirit:
def compute_cache_key(key_components, target_class, num_neuroncores):
    key_components["target"] = target_class
    key_components["num_neuroncores"] = num_neuroncores
    key_str = str(sorted(key_components.items()))
    return key_str, hashlib.sha256(key_str.encode()).hexdigest()


def main():
    path = sys.argv[1]
    target = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--target" else None
    with open(path, encoding="utf-8") as f:
        doc = json.load(f, object_pairs_hook=object_hook)
    target_class, ncores = TARGETS[target or doc.get("target", "trn1")]
    blocks = []
    for index, call in enumerate(doc["calls"]):
        if "internal" not in call:
            continue
        key_components = {}
        key_components["kernel_name"] = call.get("kernel_name", call["internal"])
        key_components["operands"] = tensor_info(call.get("operands", []))
        key_components["results"] = tensor_info(call.get("results", []))
        attrs = call.get("attrs", {})
        key_components["attrs"] = dict(attrs) if isinstance(attrs, dict) else attrs
        if call.get("op") == "ResizeNearest":
            r = call["results"][0]
            key_components["out_shape"] = tuple(r.get("access_shape", r["shape"]))
        key_str, key = compute_cache_key(key_components, target_class, ncores)
        blocks.append(f"call {index}: internal {call['internal']}\n  components: {key_str}\n  key: {key}\n")
    sys.stdout.write("\n".join(blocks))


if __name__ == "__main__":
    main()
