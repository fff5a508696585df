// How the canonical text outputs are printed (`--emit=ir|bir-text|summary`, `nkicc dis`,
// `nkicc decode-config`): what they leave out for golden files, and which calls they show.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nkicc {

/// `--call=N` and `--kernel=NAME`: which calls a text output shows. Both given: a call must
/// match both. Calls keep their own index in the text, so a filtered output is a subset of the
/// whole one, line for line.
struct CallFilter {
  std::optional<std::size_t> index; ///< --call=N: the call's position in the description (from 0)
  std::optional<std::string> kernel; ///< --kernel=NAME: an external call's kernel or an internal func_name

  bool active() const { return index.has_value() || kernel.has_value(); }
  bool accepts(std::size_t call_index, std::string_view func_name) const {
    return (!index || *index == call_index) && (!kernel || *kernel == func_name);
  }
};

struct TextOptions {
  /// `@line:col` after tensors and instructions. Off (`--source-locations=none`), a kernel's
  /// text does not change when lines are added above it, which is what a golden file wants.
  bool source_locations = true;
  CallFilter calls;
};

} // namespace nkicc
