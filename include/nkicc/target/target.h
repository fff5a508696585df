// The platform target (SPEC §5, seed 001 §2.5): which chip a kernel is compiled for, how nkicc
// found out, and the per-chip figures the tracer and the cache key need.
#pragma once

#include "nkicc/support/diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

struct TargetInfo {
  std::string_view name;       ///< `trn1`, as backend_config's platform_target
  std::string_view class_name; ///< `Trn1`: the target's Python class name, in the cache key
  std::int64_t num_neuroncores_per_sengine;
  std::int64_t sbuf_bytes_per_partition;
  std::int64_t psum_bytes_per_partition;
  bool multi_core_spmd; ///< a grid may span several physical cores
  int nc_generation;    ///< the NeuronCore generation: nisa.get_nc_version() is nc_version.gen<N>
};

/// trn1, trn2, trn3, inf2 and the aliases gen2, gen3, gen4; nullptr for anything else.
const TargetInfo *find_target(std::string_view name);
/// The accepted names, for messages and suggestions.
const std::vector<std::string> &target_names();

/// Where each candidate source of the target comes from; the tool fills it from the command
/// line and the environment so that the library never reads process state itself.
struct TargetInputs {
  std::optional<std::string> flag;       ///< --target
  std::optional<std::string> file_value; ///< the description file's `target` (already validated)
  SourceLoc file_loc;
  std::optional<std::string> env_override;                           ///< NEURON_PLATFORM_TARGET_OVERRIDE
  std::string dmi_path = "/sys/devices/virtual/dmi/id/product_name"; ///< NKICC_DMI_PRODUCT_NAME overrides
};

enum class TargetSource { Flag, File, Env, Dmi, Fallback };

struct ResolvedTarget {
  const TargetInfo *info = nullptr;
  TargetSource source = TargetSource::Fallback;
  /// Seed 001 §2.5: a guessed target is keyed and serialized apart from a real one.
  bool is_fallback = false;
};

/// Resolves the target in SPEC §5's order; the fallback to trn1 warns with NKI's own text.
/// An invalid --target or env value is an error.
std::optional<ResolvedTarget> resolve_target(const TargetInputs &inputs, DiagnosticEngine &diags);

/// The instance family a DMI product name names (`trn2.48xlarge` -> trn2), or nullptr.
const TargetInfo *target_from_product_name(std::string_view product_name);

std::string_view target_source_name(TargetSource source);

} // namespace nkicc
