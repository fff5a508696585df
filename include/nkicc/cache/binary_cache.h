// The per-run binary cache of internal kernels (seed 000: BirCodeGenLoop's
// `_new_nki_frontend_kernel_cache`): compiled BIR kernels keyed by the SHA-256 of their key
// components, so that identical internal kernel variants are traced once per run. It lives in
// memory for one run and is never written anywhere.
#pragma once

#include "nkicc/support/owned_bytes.h"

#include "nkicc/support/py_constant.h"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace nkicc {

namespace trace {
struct KernelTrace;
}

/// What a miss stores and a hit reuses: seed 000's trace-result dict {'binary', 'input_names',
/// 'output_names', 'format'} plus the traced kernel (for `--emit=ir` and HLO).
struct CachedKernel {
  OwnedBytes binary; ///< the BIR kernel blob
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::string format = "bir";
  std::shared_ptr<const trace::KernelTrace> trace;
};

class BinaryCache {
public:
  /// `_get_cached_new_nki_frontend_binary`: the entry, or null on a miss.
  const CachedKernel *get(const std::string &cache_key) const;
  /// `_record_cache_usage`: one more use of a cached variant.
  void record_usage(const std::string &cache_key);
  /// `_cache_new_nki_frontend_binary`: the three maps under one key; the usage count starts at
  /// 1 because the compile that fills the entry is its first use (seed 000 QUIRK).
  void store(const std::string &cache_key, CachedKernel entry, PyConstant key_components);

  std::uint64_t cache_hits = 0;
  std::uint64_t cache_misses = 0;

  /// Cache keys in the order they were stored (Python dict order of the reference's maps).
  const std::vector<std::string> &keys() const { return order_; }
  const PyConstant &key_components(const std::string &cache_key) const;
  std::uint64_t usage_count(const std::string &cache_key) const;
  std::size_t size() const { return order_.size(); }

private:
  /// The reference's three maps under one key: a hit is one hash lookup of its key, not three
  /// walks of ordered maps comparing 64-character keys (the order is order_'s).
  struct Entry {
    CachedKernel kernel;       ///< _new_nki_frontend_kernel_cache
    PyConstant key_components; ///< _cache_key_components
    std::uint64_t usage = 0;   ///< _cache_usage_counts
  };
  /// A key is the hex SHA-256 of its components: its last sixteen digits are as good a hash as
  /// any, and cost a load instead of a pass over 64 bytes.
  struct KeyHash {
    std::size_t operator()(const std::string &key) const;
  };
  using Entries = std::unordered_map<std::string, Entry, KeyHash>;
  Entries entries_; ///< nodes: an entry's address never changes
  std::vector<std::string> order_;
};

/// Specialization-cache figures of one external kernel (seed 001 §5).
struct SpecializationFigures {
  std::string kernel;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t entries = 0;
};

/// The text report of SPEC §8 (seed 000 `_print_new_nki_frontend_cache_statistics`), then the
/// specialization cache per external kernel. Counts only: made for golden diffs.
std::string cache_statistics_text(const BinaryCache &cache, const std::vector<SpecializationFigures> &specializations);

/// The same figures as one JSON object, with `metrics` records as seed 000
/// `_export_new_nki_fe_metrics` produces them. `persistent`, when given, is the persistent
/// cache's section, added as `persistent_cache` after the seed's figures.
std::string cache_statistics_json(const BinaryCache &cache, const std::vector<SpecializationFigures> &specializations,
                                  const PyConstant *persistent = nullptr);

} // namespace nkicc
