// Names real Python, NumPy or NKI has that nkicc does not model: a placeholder that is harmless
// in host code at module level and, used in a kernel, says `nkicc does not model 'nl.softmax'
// yet` (id `unmodelled`), so that a user can tell "not NKI" (AttributeError, NameError) from
// "not nkicc yet".
#pragma once

#include "common.h"

#include <span>
#include <string_view>

namespace nkicc::trace::pylib {

/// The public names of a real module or type (`math`, `numpy`, `str`), sorted; empty when
/// nkicc has no table for it. `display` is how messages spell its names (`np.`).
struct RealNames {
  std::string_view owner;
  std::string_view display;
  std::span<const std::string_view> names;
  bool has(std::string_view name) const;
};
const RealNames &real_names(std::string_view owner);

/// The placeholder for real name `display_name` (`np.fft`, `str.encode`, `memoryview`).
Value unmodelled_value(std::string display_name);
/// For attribute `name` of a value of type `owner`: the placeholder when real Python has such
/// an attribute, else nullopt (Python's AttributeError).
std::optional<Value> unmodelled_attribute(Interpreter &interp, std::string_view owner, std::string_view name);
/// Raises `nkicc does not model 'what' yet` [unmodelled], or with `detail`
/// `nkicc does not model 'str.upper' on non-ASCII text yet`.
[[noreturn]] void raise_unmodelled(std::string_view what, std::string_view detail = {});

/// Binds a placeholder for every real builtin the scope does not define.
void add_unmodelled_builtins(Scope &builtins);

} // namespace nkicc::trace::pylib
