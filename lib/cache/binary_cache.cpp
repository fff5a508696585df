#include "nkicc/cache/binary_cache.h"

#include "nkicc/cache/py_repr.h"
#include "nkicc/support/json_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <cmath>

namespace nkicc {

std::size_t BinaryCache::KeyHash::operator()(const std::string &key) const {
  if (key.size() < 16)
    return std::hash<std::string>{}(key);
  std::uint64_t tail = 0;
  std::memcpy(&tail, key.data() + key.size() - 16, 8);
  std::uint64_t last = 0;
  std::memcpy(&last, key.data() + key.size() - 8, 8);
  // Hex digits carry four bits a byte: mix both words so every bit reaches the low ones.
  std::uint64_t h = (tail ^ (last * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
  return static_cast<std::size_t>(h ^ (h >> 31));
}

const CachedKernel *BinaryCache::get(const std::string &cache_key) const {
  auto it = entries_.find(cache_key);
  return it == entries_.end() ? nullptr : &it->second.kernel;
}

void BinaryCache::record_usage(const std::string &cache_key) {
  auto it = entries_.find(cache_key);
  if (it != entries_.end())
    ++it->second.usage;
}

void BinaryCache::store(const std::string &cache_key, CachedKernel entry, PyConstant key_components) {
  auto [it, fresh] = entries_.try_emplace(cache_key);
  if (fresh)
    order_.push_back(cache_key);
  it->second.kernel = std::move(entry);
  it->second.key_components = std::move(key_components);
  it->second.usage = 1;
}

const PyConstant &BinaryCache::key_components(const std::string &cache_key) const {
  return entries_.at(cache_key).key_components;
}

std::uint64_t BinaryCache::usage_count(const std::string &cache_key) const { return entries_.at(cache_key).usage; }

namespace {

const PyConstant *component(const PyConstant &dict, std::string_view name) {
  for (const auto &[k, v] : dict.dict)
    if (k == name)
      return &v;
  return nullptr;
}

/// kc[part]['shapes'] as Python prints it: `[(128, 512)]`.
std::string shapes_text(const PyConstant &kc, std::string_view part) {
  const PyConstant *info = component(kc, part);
  const PyConstant *shapes = info ? component(*info, "shapes") : nullptr;
  return shapes ? py_repr(*shapes) : "[]";
}

/// The hit rate as the text report prints it, rounded to one decimal.
double hit_rate_percent(const BinaryCache &cache) {
  std::uint64_t total = cache.cache_hits + cache.cache_misses;
  if (!total)
    return 0.0;
  return std::round(1000.0 * static_cast<double>(cache.cache_hits) / static_cast<double>(total)) / 10.0;
}

struct KernelType {
  std::string name;
  std::vector<std::string> keys; ///< its variants, in cache order
  std::uint64_t usage = 0;
};

/// Variants grouped by kernel name: in first-appearance order (the metrics' dict order), and
/// sorted by total usage, descending, ties by name (the report's order).
std::vector<KernelType> kernel_types(const BinaryCache &cache) {
  std::vector<KernelType> types;
  for (const std::string &key : cache.keys()) {
    const PyConstant *name = component(cache.key_components(key), "kernel_name");
    std::string n = name && name->kind == PyConstant::Kind::Str ? name->s : "";
    auto it = std::find_if(types.begin(), types.end(), [&](const KernelType &t) { return t.name == n; });
    if (it == types.end()) {
      types.push_back({n, {}, 0});
      it = types.end() - 1;
    }
    it->keys.push_back(key);
    it->usage += cache.usage_count(key);
  }
  return types;
}

} // namespace

std::string cache_statistics_text(const BinaryCache &cache, const std::vector<SpecializationFigures> &specializations) {
  std::string out;
  std::uint64_t total = cache.cache_hits + cache.cache_misses;
  // Seed 000: nothing is printed when no internal kernel was processed.
  if (cache.size() != 0 || total != 0) {
    std::string banner(80, '=');
    double hit_rate = total ? 100.0 * static_cast<double>(cache.cache_hits) / static_cast<double>(total) : 0.0;
    out += banner + "\n";
    out += "New NKI Frontend Kernel Cache Statistics\n";
    out += fmt::format("Total kernels processed: {}\n", total);
    out += fmt::format("  Cache hits:   {} ({:.1f}%)\n", cache.cache_hits, hit_rate);
    out += fmt::format("  Cache misses: {}\n", cache.cache_misses);
    out += fmt::format("Unique cached variants: {}\n", cache.size());
    std::vector<KernelType> types = kernel_types(cache);
    out += fmt::format("Distinct kernel types: {}\n", types.size());
    std::stable_sort(types.begin(), types.end(), [](const KernelType &a, const KernelType &b) {
      return a.usage != b.usage ? a.usage > b.usage : a.name < b.name;
    });
    for (const KernelType &t : types) {
      out += fmt::format("Kernel: {}\n", t.name);
      out += fmt::format("  Variants: {}\n", t.keys.size());
      out += fmt::format("  Total usage: {}\n", t.usage);
      for (const std::string &key : t.keys) {
        const PyConstant &kc = cache.key_components(key);
        out += fmt::format("    Operand shapes: {}\n", shapes_text(kc, "operands"));
        out += fmt::format("    Result shapes:  {}\n", shapes_text(kc, "results"));
      }
    }
    out += banner + "\n";
  }
  if (!specializations.empty()) {
    out += "Specialization cache:\n";
    for (const SpecializationFigures &s : specializations)
      out += fmt::format("  Kernel: {}: hits {}, misses {}, entries {}\n", s.kernel, s.hits, s.misses, s.entries);
  }
  return out;
}

std::string cache_statistics_json(const BinaryCache &cache, const std::vector<SpecializationFigures> &specializations,
                                  const PyConstant *persistent) {
  using E = std::vector<std::pair<std::string, PyConstant>>;
  auto integer = [](std::uint64_t v) { return PyConstant::integer(static_cast<std::int64_t>(v)); };
  std::vector<KernelType> types = kernel_types(cache);
  std::vector<PyConstant> metrics;
  for (const KernelType &t : types)
    metrics.push_back(PyConstant::make_dict(E{{"kernel_name", PyConstant::str(t.name)},
                                              {"category", PyConstant::str("NEW_NKI_FE")},
                                              {"call_count", integer(t.usage)},
                                              {"number_of_variances", integer(t.keys.size())}}));
  std::stable_sort(types.begin(), types.end(), [](const KernelType &a, const KernelType &b) {
    return a.usage != b.usage ? a.usage > b.usage : a.name < b.name;
  });
  std::vector<PyConstant> kernels;
  for (const KernelType &t : types) {
    std::vector<PyConstant> variants;
    for (const std::string &key : t.keys) {
      const PyConstant &kc = cache.key_components(key);
      const PyConstant *ops = component(kc, "operands");
      const PyConstant *res = component(kc, "results");
      variants.push_back(PyConstant::make_dict(
          E{{"cache_key", PyConstant::str(key)},
            {"usage_count", integer(cache.usage_count(key))},
            {"operand_shapes", ops && component(*ops, "shapes") ? *component(*ops, "shapes") : PyConstant::list({})},
            {"result_shapes", res && component(*res, "shapes") ? *component(*res, "shapes") : PyConstant::list({})}}));
    }
    kernels.push_back(PyConstant::make_dict(E{{"kernel_name", PyConstant::str(t.name)},
                                              {"variants", integer(t.keys.size())},
                                              {"total_usage", integer(t.usage)},
                                              {"variant_details", PyConstant::list(std::move(variants))}}));
  }
  std::vector<PyConstant> specs;
  for (const SpecializationFigures &s : specializations)
    specs.push_back(PyConstant::make_dict(E{{"kernel", PyConstant::str(s.kernel)},
                                            {"hits", integer(s.hits)},
                                            {"misses", integer(s.misses)},
                                            {"entries", integer(s.entries)}}));
  std::uint64_t total = cache.cache_hits + cache.cache_misses;
  PyConstant root = PyConstant::make_dict(E{
      {"new_nki_frontend_cache",
       PyConstant::make_dict(E{{"total_kernels_processed", integer(total)},
                               {"cache_hits", integer(cache.cache_hits)},
                               {"hit_rate_percent", PyConstant::floating(hit_rate_percent(cache))},
                               {"cache_misses", integer(cache.cache_misses)},
                               {"unique_cached_variants", integer(cache.size())},
                               {"distinct_kernel_types", integer(types.size())},
                               {"kernels", PyConstant::list(std::move(kernels))}})},
      {"metrics", PyConstant::list(std::move(metrics))},
      {"specialization_cache", PyConstant::list(std::move(specs))},
  });
  if (persistent)
    root.dict.emplace_back("persistent_cache", *persistent);
  return to_pretty_json(root) + "\n";
}

} // namespace nkicc
