// The keys nkicc caches by: the per-run binary cache's SHA-256 over the internal call's key
// components (seed 000 `_compute_cache_key_from_components`), and the specialization key of an
// external call (seed 001 `_generate_hash_key`).
#pragma once

#include "nkicc/manifest/manifest.h"
#include "nkicc/support/py_constant.h"
#include "nkicc/target/target.h"

#include <string>

namespace nkicc {

/// key_components of an internal call, in the orchestrator's insertion order: kernel_name,
/// operands, results, attrs, out_shape (ResizeNearest only), target, num_neuroncores.
PyConstant internal_key_components(const InternalCall &call, const TargetInfo &target);

/// `str(sorted(key_components.items()))`: the exact text the reference hashes.
std::string key_components_string(const PyConstant &components);

/// `hashlib.sha256(key_str.encode()).hexdigest()`.
std::string cache_key_of(const std::string &key_components_string);

} // namespace nkicc
