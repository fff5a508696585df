// Small helpers shared by the files of lib/pylib: reading built-in values and checking the
// arguments of built-in functions, with CPython 3.11's messages.
#pragma once

#include "nkicc/trace/interpreter.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace nkicc::trace::pylib {

using K = Value::Kind;

inline bool is_intlike(const Value &v) { return v.kind == K::Int || v.kind == K::Bool; }
inline std::int64_t int_of(const Value &v) { return v.kind == K::Bool ? std::int64_t(v.b) : v.i; }
inline double float_of(const Value &v) { return v.kind == K::Float ? v.f : static_cast<double>(int_of(v)); }
inline std::string tn(const Value &v) { return std::string(type_name(v)); }

/// A float converted to int as int() truncates it: ValueError for NaN, OverflowError for
/// infinity or beyond int64.
inline std::int64_t float_to_int(double x) {
  if (x != x)
    raise_python("ValueError", "cannot convert float NaN to integer");
  if (x == __builtin_inf() || x == -__builtin_inf())
    raise_python("OverflowError", "cannot convert float infinity to integer");
  if (x >= 9223372036854775808.0 || x < -9223372036854775808.0)
    raise_python("OverflowError", "integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
  return static_cast<std::int64_t>(x);
}
/// The Python number a NumPy scalar (or a one-element host array) stands for, for the
/// conversions int(), float(), math.* and indexing; nullopt for anything else.
std::optional<Value> as_python_number(const Value &v);
/// A real number as a double (math's argument conversion); TypeError otherwise.
double to_double(const Value &v);
/// TypeError when a built-in function that takes no keywords got some.
inline void no_keywords(std::string_view name, const CallArgs &args) {
  if (!args.keywords.empty())
    raise_python("TypeError", std::string(name) + "() takes no keyword arguments");
}
/// A built-in function's positional arity, in CPython's words (`len() takes exactly one
/// argument (2 given)`, `range expected at most 3 arguments, got 4`).
void arity(std::string_view name, const CallArgs &args, std::size_t min, std::size_t max);

/// Python's `a is b`: the same heap object, or the same inline value (a NaN is itself).
inline bool is_same(const Value &a, const Value &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case K::None:
  case K::Ellipsis:
    return true;
  case K::Bool:
    return a.b == b.b;
  case K::Int:
    return a.i == b.i;
  case K::Float:
    return a.f == b.f || (a.f != a.f && b.f != b.f);
  default:
    return a.same_heap(b);
  }
}

/// `fmt.format(*positional, **keywords)`: replacement fields with indices, names, `.attr`,
/// `[key]`, conversions and nested format specs, in CPython's words (`depth` counts nested
/// specs).
std::string str_format(Interpreter &interp, std::string_view fmt, const std::vector<Value> &positional,
                       const std::function<const Value *(std::string_view)> &keyword, int depth = 0);
/// ascii(): a repr with every non-ASCII code point escaped (`\xe9`, `\u20ac`).
std::string ascii_repr(const std::string &repr_text);

/// Whether two items of containers are equal: the same object, or `==` (CPython's
/// PyObject_RichCompareBool, which `in`, `index`, `count`, `remove` and container `==` use).
bool items_equal(Interpreter &interp, const Value &x, const Value &y);

/// Counts nested comparisons, isinstance() checks and other recursions over nested values, so
/// that a list nested 50,000 deep (or one that contains itself) raises RecursionError in
/// CPython's words instead of overflowing the C++ stack. `what` completes "maximum recursion
/// depth exceeded" (" in comparison").
class RecursionGuard {
public:
  /// CPython's default recursion limit.
  static constexpr int kLimit = 1000;
  explicit RecursionGuard(const char *what) {
    if (++depth_ > kLimit) {
      --depth_;
      raise_python("RecursionError", std::string("maximum recursion depth exceeded") + what);
    }
  }
  ~RecursionGuard() { --depth_; }
  RecursionGuard(const RecursionGuard &) = delete;
  RecursionGuard &operator=(const RecursionGuard &) = delete;

private:
  static thread_local int depth_;
};

/// The OverflowError for a result beyond int64 (nkicc has no big integers).
[[noreturn]] inline void int_overflow() {
  raise_python("OverflowError", "integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
}

} // namespace nkicc::trace::pylib
