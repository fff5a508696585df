// The methods of the built-in values, one table per type (str_methods.cpp, seq_methods.cpp,
// dict_methods.cpp, ...): adding a method is one function and one table row.
#pragma once

#include "common.h"

#include <span>
#include <string_view>

namespace nkicc::trace::pylib {

using MethodImpl = Value (*)(Interpreter &, const Value &self, CallArgs &);
struct Method {
  std::string_view name;
  MethodImpl impl;
};

std::span<const Method> str_methods();
std::span<const Method> list_methods();
std::span<const Method> tuple_methods();
std::span<const Method> dict_methods();
std::span<const Method> int_methods();
std::span<const Method> float_methods();

/// The method `name` of values of `kind`, or null.
MethodImpl find_method(Value::Kind kind, std::string_view name);
/// The method `name` of a built-in value (a dict subclass's own first), or null.
MethodImpl value_method(const Value &self, std::string_view name);

/// Checks the arguments of a method that takes positional arguments only (CPython's
/// METH_VARARGS messages: `center expected at least 1 argument, got 0`).
void expect_args(std::string_view name, const CallArgs &args, std::size_t min, std::size_t max);

/// A method's arguments bound to its parameter names, positionally or by keyword, as CPython's
/// argument clinic binds them (`split(sep=None, maxsplit=-1)`).
class BoundArgs {
public:
  /// `params`: the names in order; the first `min` are required.
  BoundArgs(std::string_view function, const CallArgs &args, std::initializer_list<std::string_view> params,
            std::size_t min);
  /// The argument bound to parameter k, or null when it was not given.
  const Value *get(std::size_t k) const { return values_[k]; }
  bool has(std::size_t k) const { return values_[k] != nullptr; }

private:
  std::vector<const Value *> values_;
};

/// An int argument (bool counts), or TypeError `'str' object cannot be interpreted as an integer`.
std::int64_t index_arg(const Value &v);

/// Sorts as list.sort does: stable, by `<` only, never reading out of bounds whatever a Python
/// `__lt__` answers (a merge sort over indices).
void sort_values(Interpreter &interp, std::vector<Value> &items, const Value *key, bool reverse);

} // namespace nkicc::trace::pylib
