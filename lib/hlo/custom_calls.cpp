// Finding the custom-calls of an HLO or StableHLO module text (`decode-config --hlo`). nkicc
// reads the module as lines, as both of its printers and XLA's and MLIR's write one instruction
// or op per line; it needs only each call's target and backend_config, not a parse of the module.
#include "nkicc/hlo/hlo.h"

#include <cctype>

namespace nkicc::hlo {

namespace {

/// The text of a quoted string that starts at `text[open]` (a `"`), with escapes left as they
/// are, or nullopt when the line ends first. Both HLO and MLIR escape a quote as `\"`.
std::optional<std::string_view> quoted(std::string_view text, std::size_t open) {
  if (open >= text.size() || text[open] != '"')
    return std::nullopt;
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
      continue;
    }
    if (text[i] == '"')
      return text.substr(open + 1, i - open - 1);
  }
  return std::nullopt;
}

/// The value of `key="..."` (HLO) or `key = "..."` (MLIR) in a line, and where it starts.
std::optional<std::string_view> attribute(std::string_view line, std::string_view key, std::size_t &value_offset) {
  for (std::size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    // A whole key: not the tail of a longer name.
    if (at > 0) {
      char before = line[at - 1];
      if (before == '_' || std::isalnum(static_cast<unsigned char>(before)))
        continue;
    }
    std::size_t i = at + key.size();
    while (i < line.size() && line[i] == ' ')
      ++i;
    if (i >= line.size() || line[i] != '=')
      continue;
    ++i;
    while (i < line.size() && line[i] == ' ')
      ++i;
    if (auto value = quoted(line, i)) {
      value_offset = i + 1;
      return value;
    }
  }
  return std::nullopt;
}

/// `%name` at the start of a line (after indentation and HLO's `ROOT`), up to ` =` or `:`.
std::string result_name(std::string_view line) {
  std::size_t i = line.find_first_not_of(' ');
  if (i == std::string_view::npos)
    return {};
  if (line.substr(i).starts_with("ROOT "))
    i += 5;
  if (i >= line.size() || line[i] != '%')
    return {};
  std::size_t end = line.find_first_of(" =:", i);
  return std::string(line.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
}

} // namespace

bool is_nki_custom_call_target(std::string_view target) {
  return target == custom_call_target(HloFlavor::Jax) || target == custom_call_target(HloFlavor::TorchXla);
}

std::vector<CustomCallSite> find_custom_calls(std::string_view text) {
  std::vector<CustomCallSite> sites;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(start, end - start);
    bool hlo = line.find(" custom-call(") != std::string_view::npos;
    std::size_t mlir_generic = line.find("\"stablehlo.custom_call\"");
    std::size_t mlir_pretty = line.find("stablehlo.custom_call @");
    if (hlo || mlir_generic != std::string_view::npos || mlir_pretty != std::string_view::npos) {
      CustomCallSite site;
      site.name = result_name(line);
      site.offset = start;
      std::size_t ignored = 0;
      if (hlo) {
        if (auto t = attribute(line, "custom_call_target", ignored))
          site.target = std::string(*t);
      } else if (mlir_generic != std::string_view::npos) {
        if (auto t = attribute(line, "call_target_name", ignored))
          site.target = std::string(*t);
      } else {
        std::size_t name_start = mlir_pretty + std::string_view("stablehlo.custom_call @").size();
        std::size_t name_end = line.find_first_of("( ", name_start);
        site.target = std::string(line.substr(name_start, name_end == std::string_view::npos ? std::string_view::npos
                                                                                             : name_end - name_start));
        if (site.target.size() > 1 && site.target.front() == '"' && site.target.back() == '"')
          site.target = site.target.substr(1, site.target.size() - 2);
      }
      std::size_t value_offset = 0;
      if (auto config = attribute(line, "backend_config", value_offset)) {
        site.config = *config;
        site.config_offset = start + value_offset;
        site.has_config = true;
      }
      sites.push_back(std::move(site));
    }
    start = end + 1;
  }
  return sites;
}

} // namespace nkicc::hlo
