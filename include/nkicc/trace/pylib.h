// Python's library as the interpreter sees it (lib/pylib/): the pieces of the built-in types'
// protocols and of the standard library that other parts of nkicc call.
#pragma once

#include "nkicc/trace/interpreter.h"
#include "nkicc/trace/value.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc::trace {

/// `fmt % args`: printf-style formatting of str (CPython's `str.__mod__`).
std::string percent_format(Interpreter &interp, const std::string &fmt, const Value &args);

/// A set display `{a, b}` or comprehension: the items added in order, as CPython's BUILD_SET
/// (so that a set of ints iterates in CPython's order). Unhashable items raise TypeError.
/// `constant_display`: a display of constants only, which CPython compiles into a frozenset
/// constant rebuilt from its own iteration order (compile.c merge_consts_recursive); with three
/// or more items that order is the set's.
Value make_set(Interpreter &interp, std::vector<Value> items, bool constant_display = false);

/// What iterating a dict yields: its keys (`for k in d`), values or (key, value) items.
enum class DictPart : std::uint8_t { Keys, Values, Items };
/// Iterates a dict by position; a dict that changes size meanwhile raises RuntimeError, as in
/// CPython.
std::unique_ptr<Iterator> dict_iterator(const Value &dict, DictPart part);
/// `d[key]` on a dict: the value, a defaultdict's or Counter's answer for a missing key, or
/// KeyError.
Value dict_get_item(Interpreter &interp, const Value &dict, const Value &key);
/// `d.update(other)`: from a dict, a mapping (anything with keys()) or (key, value) pairs.
void dict_update_from(Interpreter &interp, const Value &dict, const Value &other);

/// The int an index that is not an int stands for (a NumPy integer: its `__index__`), or
/// nullopt. Sequences indexed by one read this.
std::optional<Value> index_number(const Value &v);

/// `hash(v)`: ints, floats, bools, tuples and frozensets exactly as CPython 3.11 hashes them,
/// str by a fixed function (CPython randomizes its own), Objects through Object::hash (by
/// identity when `interp` is null). Unhashable values raise TypeError (`unhashable type:
/// 'list'`). Never -1, as in CPython.
std::int64_t hash_value(Interpreter *interp, const Value &v);
/// CPython's hash of an int and of a float (equal numbers hash alike).
std::int64_t int_hash(std::int64_t x);
std::int64_t float_hash(double x);
/// Whether two dict or set keys are the same key: identity, then `==` (through the
/// interpreter when given, so that Python `__eq__` runs; else values_equal()).
bool keys_equal(Interpreter *interp, const Value &a, const Value &b);

/// A module of a library nkicc models in part (math, numpy, `nl`, `nisa`): an attribute the
/// real module has and nkicc does not define is a placeholder that says `nkicc does not model
/// 'nl.softmax' yet` when a kernel uses it; any other missing attribute is Python's
/// AttributeError.
class LibraryModule : public ModuleObject {
public:
  /// `display`: how messages spell the module's names (`nl.`); `real_names`: the real module's
  /// public names.
  LibraryModule(std::string name, std::string display, std::span<const std::string_view> real_names);
  std::optional<Value> get_attr(Interpreter &interp, std::string_view attr) override;

private:
  std::string display_;
  std::vector<std::string_view> real_names_;
};
/// A LibraryModule named `name` whose real names are lib/pylib's table `table` (`numpy`).
std::shared_ptr<LibraryModule> make_library_module(std::string name, std::string_view table);

/// Whether a UTF-8 string is plain ASCII (one byte per code point).
inline bool is_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80)
      return false;
  return true;
}
/// Byte offsets of each code point of a UTF-8 string, plus the end.
inline std::vector<std::size_t> code_point_offsets(std::string_view s) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < s.size(); ++k)
    if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80)
      out.push_back(k);
  out.push_back(s.size());
  return out;
}
/// The number of code points of a UTF-8 string (Python's len()).
inline std::size_t code_point_count(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

} // namespace nkicc::trace
