// The keys nkicc caches by: the per-run binary cache's SHA-256 over the internal call's key
// components (seed 000 `_compute_cache_key_from_components`), and the specialization key of an
// external call (seed 001 `_generate_hash_key`).
#pragma once

#include "nkicc/manifest/manifest.h"
#include "nkicc/support/py_constant.h"
#include "nkicc/target/target.h"

#include <optional>
#include <string>
#include <vector>

namespace nkicc {

/// key_components of an internal call, in the orchestrator's insertion order: kernel_name,
/// operands, results, attrs, out_shape (ResizeNearest only), target, num_neuroncores.
PyConstant internal_key_components(const InternalCall &call, const TargetInfo &target);

/// `str(sorted(key_components.items()))`: the exact text the reference hashes.
std::string key_components_string(const PyConstant &components);

/// key_components_string(internal_key_components(call, target)), written straight from the call:
/// the components' sorted order is fixed, so no PyConstant tree is built and copied (it was a
/// third of `nkicc key`'s work on internal calls).
std::string internal_key_string(const InternalCall &call, const TargetInfo &target);
/// internal_key_string() appended to `out`.
void append_internal_key_string(std::string &out, const InternalCall &call, const TargetInfo &target);

/// `hashlib.sha256(key_str.encode()).hexdigest()`.
std::string cache_key_of(const std::string &key_components_string);

/// The specialization key `(per-arg key, grid, opts, platform_target_is_fallback)` of an external
/// call (seed 001 `_generate_hash_key`): a tensor contributes (shape, dtype), a constant its
/// value; an unhashable constant is err_nki_param_not_hashable, named by `param_names` (the
/// kernel's positional parameter names, when known) or `args[i]`. Positional arguments come
/// first, then keyword arguments in document order as (name, key) pairs.
std::optional<PyConstant> specialization_key(const ExternalCall &call, const std::vector<std::string> &param_names,
                                             bool is_fallback, DiagnosticEngine &diags);

} // namespace nkicc
