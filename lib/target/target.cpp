#include "nkicc/target/target.h"

#include "nkicc/support/file_io.h"

#include <fmt/format.h>

#include <array>

namespace nkicc {

namespace {

constexpr std::int64_t kPsumBytesPerPartition = 16 * 1024;

// SBUF bytes per partition are nl.tile_size.total_available_sbuf_size (reference/nki.md);
// inf2 carries trn1's NeuronCore-v2.
constexpr std::array<TargetInfo, 4> kTargets = {{
    {"trn1", "Trn1", 1, 180224, kPsumBytesPerPartition, false, 2},
    {"trn2", "Trn2", 2, 212984, kPsumBytesPerPartition, true, 3},
    {"trn3", "Trn3", 2, 245752, kPsumBytesPerPartition, true, 4},
    {"inf2", "Inf2", 1, 180224, kPsumBytesPerPartition, false, 2},
}};

struct Alias {
  std::string_view alias;
  std::string_view name;
};
constexpr std::array<Alias, 3> kAliases = {{{"gen2", "trn1"}, {"gen3", "trn2"}, {"gen4", "trn3"}}};

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return c != ' ' && c != '\t' && c != '\n' && c != '\r'; };
  std::size_t b = 0;
  while (b < s.size() && !not_space(static_cast<unsigned char>(s[b])))
    ++b;
  std::size_t e = s.size();
  while (e > b && !not_space(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

std::string unknown_target_message(std::string_view what, std::string_view value) {
  // Worded as the description file's `target` error: quoted names and a suggestion.
  std::string names;
  for (const std::string &n : target_names())
    names += (names.empty() ? "'" : ", '") + n + "'";
  std::string message = fmt::format("{}: unknown target {}", what, quote_for_message(value));
  std::string best = closest_match(value, target_names());
  if (!best.empty())
    message += fmt::format("; did you mean '{}'?", best);
  return message + fmt::format(" (expected one of {})", names);
}

} // namespace

const TargetInfo *find_target(std::string_view name) {
  for (const Alias &a : kAliases)
    if (a.alias == name)
      name = a.name;
  for (const TargetInfo &t : kTargets)
    if (t.name == name)
      return &t;
  return nullptr;
}

const std::vector<std::string> &target_names() {
  static const std::vector<std::string> names = {"trn1", "trn2", "trn3", "inf2", "gen2", "gen3", "gen4"};
  return names;
}

const TargetInfo *target_from_product_name(std::string_view product_name) {
  // Instance types: trn1.32xlarge, trn1n.32xlarge, trn2.48xlarge, trn2u..., inf2.xlarge.
  for (const TargetInfo &t : kTargets)
    if (product_name.substr(0, t.name.size()) == t.name)
      return &t;
  return nullptr;
}

std::string_view target_source_name(TargetSource source) {
  switch (source) {
  case TargetSource::Flag:
    return "--target";
  case TargetSource::File:
    return "the description file";
  case TargetSource::Env:
    return "NEURON_PLATFORM_TARGET_OVERRIDE";
  case TargetSource::Dmi:
    return "the DMI product name";
  case TargetSource::Fallback:
    return "the fallback";
  }
  return "";
}

std::optional<ResolvedTarget> resolve_target(const TargetInputs &inputs, DiagnosticEngine &diags) {
  if (inputs.flag) {
    const TargetInfo *t = find_target(*inputs.flag);
    if (!t) {
      diags.error({}, unknown_target_message("--target", *inputs.flag), "target");
      return std::nullopt;
    }
    return ResolvedTarget{t, TargetSource::Flag, false};
  }
  if (inputs.file_value) {
    // The manifest loader has validated the name already.
    if (const TargetInfo *t = find_target(*inputs.file_value))
      return ResolvedTarget{t, TargetSource::File, false};
    diags.error(inputs.file_loc, unknown_target_message("target", *inputs.file_value), "target");
    return std::nullopt;
  }
  if (inputs.env_override && !inputs.env_override->empty()) {
    const TargetInfo *t = find_target(*inputs.env_override);
    if (!t) {
      diags.error({}, unknown_target_message("NEURON_PLATFORM_TARGET_OVERRIDE", *inputs.env_override), "target");
      return std::nullopt;
    }
    return ResolvedTarget{t, TargetSource::Env, false};
  }
  // A product name is short; never read more, and never wait on whatever the path points at
  // (a FIFO or a device is no product name: the fallback applies).
  std::string why;
  if (auto text = read_file_prefix(inputs.dmi_path, 256, why))
    if (const TargetInfo *t = target_from_product_name(trim(*text)))
      return ResolvedTarget{t, TargetSource::Dmi, false};
  // NKI's own words (TraceKernel.so, seed 001 §2.5).
  diags.warning({}, "Unable to read MLA target. Assuming cross compile to trn1.", "target-fallback");
  return ResolvedTarget{find_target("trn1"), TargetSource::Fallback, true};
}

} // namespace nkicc
