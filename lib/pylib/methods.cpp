// Attributes and methods of the built-in values (`lst.append`, `d.items()`, `s.join(...)`),
// the int and float methods, and sorting, in CPython 3.11's words. A method real Python has
// but nkicc does not model is a placeholder that says so when used.
#include "methods.h"

#include "collections.h"
#include "nkicc/trace/pylib.h"
#include "unmodelled.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace nkicc::trace {

using python::CmpOpKind;
using namespace pylib;

namespace pylib {

void expect_args(std::string_view name, const CallArgs &args, std::size_t min, std::size_t max) {
  std::size_t n = args.positional.size();
  if (!args.keywords.empty())
    raise_python("TypeError", std::string(name) + "() takes no keyword arguments");
  if (n < min || n > max) {
    if (min == max && min == 0)
      raise_python("TypeError", std::string(name) + "() takes no arguments (" + std::to_string(n) + " given)");
    if (min == max && min == 1)
      raise_python("TypeError", std::string(name) + "() takes exactly one argument (" + std::to_string(n) + " given)");
    if (n < min)
      raise_python("TypeError", std::string(name) + " expected at least " + std::to_string(min) + " argument" +
                                    (min == 1 ? "" : "s") + ", got " + std::to_string(n));
    raise_python("TypeError", std::string(name) + " expected at most " + std::to_string(max) + " argument" +
                                  (max == 1 ? "" : "s") + ", got " + std::to_string(n));
  }
}

BoundArgs::BoundArgs(std::string_view function, const CallArgs &args, std::initializer_list<std::string_view> params,
                     std::size_t min)
    : values_(params.size(), nullptr) {
  std::string fn(function);
  if (args.positional.size() > params.size())
    raise_python("TypeError", fn + "() takes at most " + std::to_string(params.size()) + " argument" +
                                  (params.size() == 1 ? "" : "s") + " (" + std::to_string(args.positional.size()) +
                                  " given)");
  for (std::size_t k = 0; k < args.positional.size(); ++k)
    values_[k] = &args.positional[k];
  for (const auto &[name, value] : args.keywords) {
    auto it = std::find(params.begin(), params.end(), name);
    if (it == params.end())
      raise_python("TypeError", fn + "() got an unexpected keyword argument '" + name + "'");
    auto k = static_cast<std::size_t>(it - params.begin());
    if (values_[k])
      raise_python("TypeError", "argument for " + fn + "() given by name ('" + name + "') and position (" +
                                    std::to_string(k + 1) + ")");
    values_[k] = &value;
  }
  for (std::size_t k = 0; k < min; ++k)
    if (!values_[k])
      raise_python("TypeError", fn + "() missing required argument '" + std::string(*(params.begin() + k)) + "' (pos " +
                                    std::to_string(k + 1) + ")");
}

std::int64_t index_arg(const Value &v) {
  if (is_intlike(v))
    return int_of(v);
  if (std::optional<Value> n = as_python_number(v); n && is_intlike(*n))
    return int_of(*n); // a NumPy integer has __index__
  raise_python("TypeError", "'" + tn(v) + "' object cannot be interpreted as an integer");
}

MethodImpl find_method(Value::Kind kind, std::string_view name) {
  using Table = std::unordered_map<std::string_view, MethodImpl>;
  auto build = [](std::span<const Method> methods) {
    Table t;
    for (const Method &m : methods)
      t.emplace(m.name, m.impl);
    return t;
  };
  static const Table str = build(str_methods()), list = build(list_methods()), tuple = build(tuple_methods()),
                     dict = build(dict_methods()), integer = build(int_methods()), floating = build(float_methods());
  const Table *t = nullptr;
  switch (kind) {
  case K::Str:
    t = &str;
    break;
  case K::List:
    t = &list;
    break;
  case K::Tuple:
    t = &tuple;
    break;
  case K::Dict:
    t = &dict;
    break;
  case K::Int:
  case K::Bool:
    t = &integer;
    break;
  case K::Float:
    t = &floating;
    break;
  default:
    return nullptr;
  }
  auto it = t->find(name);
  return it == t->end() ? nullptr : it->second;
}

void sort_values(Interpreter &interp, std::vector<Value> &items, const Value *key, bool reverse) {
  // CPython sorts reversed input stably and reverses the result, so that equal items keep
  // their order under reverse=True too.
  if (reverse)
    std::reverse(items.begin(), items.end());
  std::vector<Value> keys;
  if (key) {
    keys.reserve(items.size());
    for (const Value &item : items) {
      CallArgs args;
      args.positional.push_back(item);
      keys.push_back(interp.call(*key, args));
    }
  }
  const std::vector<Value> &by = key ? keys : items;
  // Bottom-up merge sort of positions: whatever `<` answers (even inconsistently), every
  // access stays in bounds and the result is a permutation.
  std::size_t n = items.size();
  std::vector<std::size_t> order(n), scratch(n);
  for (std::size_t k = 0; k < n; ++k)
    order[k] = k;
  auto less = [&](std::size_t a, std::size_t b) {
    const Value &x = by[a], &y = by[b];
    if (x.kind == K::Int && y.kind == K::Int)
      return x.i < y.i;
    return interp.truthy(interp.compare(CmpOpKind::Lt, x, y));
  };
  for (std::size_t width = 1; width < n; width *= 2) {
    for (std::size_t lo = 0; lo < n; lo += 2 * width) {
      std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      std::size_t i = lo, j = mid, out = lo;
      while (i < mid && j < hi)
        scratch[out++] = less(order[j], order[i]) ? order[j++] : order[i++];
      while (i < mid)
        scratch[out++] = order[i++];
      while (j < hi)
        scratch[out++] = order[j++];
    }
    order.swap(scratch);
  }
  std::vector<Value> out;
  out.reserve(n);
  for (std::size_t k : order)
    out.push_back(std::move(items[k]));
  if (reverse)
    std::reverse(out.begin(), out.end());
  items = std::move(out);
}

} // namespace pylib

namespace {

// ---- int and float ------------------------------------------------------------------------------

Value int_bit_length(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("int.bit_length", args, 0, 0);
  std::int64_t x = int_of(self);
  std::uint64_t m = x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x);
  return Value::integer(m == 0 ? 0 : 64 - __builtin_clzll(m));
}
Value int_bit_count(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("int.bit_count", args, 0, 0);
  std::int64_t x = int_of(self);
  std::uint64_t m = x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x);
  return Value::integer(__builtin_popcountll(m));
}
Value int_conjugate(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("int.conjugate", args, 0, 0);
  return Value::integer(int_of(self));
}
Value int_as_integer_ratio(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("int.as_integer_ratio", args, 0, 0);
  return Value::tuple({Value::integer(int_of(self)), Value::integer(1)});
}
Value int_is_integer(Interpreter &, const Value &, CallArgs &args) {
  expect_args("int.is_integer", args, 0, 0);
  return Value::boolean(true);
}

Value float_is_integer(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("float.is_integer", args, 0, 0);
  return Value::boolean(std::isfinite(self.f) && self.f == std::floor(self.f));
}
Value float_conjugate(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("float.conjugate", args, 0, 0);
  return self;
}
Value float_as_integer_ratio(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("float.as_integer_ratio", args, 0, 0);
  double x = self.f;
  if (std::isinf(x))
    raise_python("OverflowError", "cannot convert Infinity to integer ratio");
  if (std::isnan(x))
    raise_python("ValueError", "cannot convert NaN to integer ratio");
  int e = 0;
  double m = std::frexp(x, &e);
  for (int k = 0; k < 300 && m != std::floor(m); ++k) {
    m *= 2.0;
    --e;
  }
  if (std::fabs(m) >= 9223372036854775808.0 || e > 62 || e < -62)
    int_overflow();
  auto num = static_cast<std::int64_t>(m);
  std::int64_t den = 1;
  if (e > 0) {
    if (__builtin_mul_overflow(num, std::int64_t{1} << e, &num))
      int_overflow();
  } else {
    den = std::int64_t{1} << -e;
  }
  return Value::tuple({Value::integer(num), Value::integer(den)});
}
Value float_hex(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("float.hex", args, 0, 0);
  double x = self.f;
  if (std::isnan(x))
    return Value::str("nan");
  if (std::isinf(x))
    return Value::str(x > 0 ? "inf" : "-inf");
  if (x == 0.0)
    return Value::str(std::signbit(x) ? "-0x0.0p+0" : "0x0.0p+0");
  // CPython: 0x1.<13 hex digits>p<exp>, normalized; subnormals keep a leading 0.
  int e = 0;
  double m = std::frexp(std::fabs(x), &e); // [0.5, 1)
  m *= 2.0;
  e -= 1;
  if (e < -1022) { // subnormal
    m = std::ldexp(m, e + 1022);
    e = -1022;
  }
  auto lead = static_cast<int>(m);
  m -= lead;
  std::string digits;
  for (int k = 0; k < 13; ++k) {
    m *= 16.0;
    auto d = static_cast<int>(m);
    digits += "0123456789abcdef"[d];
    m -= d;
  }
  std::string out = std::signbit(x) ? "-0x" : "0x";
  out += std::to_string(lead) + "." + digits + "p" + (e >= 0 ? "+" : "") + std::to_string(e);
  return Value::str(out);
}

} // namespace

namespace pylib {

std::span<const Method> int_methods() {
  static const Method methods[] = {{"bit_length", int_bit_length},
                                   {"bit_count", int_bit_count},
                                   {"conjugate", int_conjugate},
                                   {"as_integer_ratio", int_as_integer_ratio},
                                   {"is_integer", int_is_integer}};
  return methods;
}
std::span<const Method> float_methods() {
  static const Method methods[] = {{"is_integer", float_is_integer},
                                   {"conjugate", float_conjugate},
                                   {"as_integer_ratio", float_as_integer_ratio},
                                   {"hex", float_hex}};
  return methods;
}

} // namespace pylib

// ---- attribute access on built-in values ------------------------------------------------------------

namespace {
/// The data attributes of numbers and slices (not methods).
std::optional<Value> data_attr(const Value &v, std::string_view name) {
  if (v.kind == K::Slice) {
    if (name == "start")
      return v.slice_data().lower;
    if (name == "stop")
      return v.slice_data().upper;
    if (name == "step")
      return v.slice_data().step;
  }
  if (is_intlike(v)) {
    if (name == "real" || name == "numerator")
      return Value::integer(int_of(v));
    if (name == "imag")
      return Value::integer(0);
    if (name == "denominator")
      return Value::integer(1);
  }
  if (v.kind == K::Float) {
    if (name == "real")
      return v;
    if (name == "imag")
      return Value::floating(0.0);
  }
  return std::nullopt;
}

/// The Python type whose attribute `name` is looked up, for the tables of real names.
std::string_view attr_owner(const Value &v) {
  if (v.kind == K::Dict)
    return flavor_table(v.dict_data().flavor);
  switch (v.kind) {
  case K::Str:
    return "str";
  case K::List:
    return "list";
  case K::Tuple:
    return "tuple";
  case K::Dict:
    return "dict";
  case K::Int:
    return "int";
  case K::Bool:
    return "bool";
  case K::Float:
    return "float";
  case K::Slice:
    return "slice";
  case K::None:
    return "NoneType";
  default:
    return "";
  }
}
} // namespace

MethodImpl pylib::value_method(const Value &self, std::string_view name) {
  if (self.kind == K::Dict && self.dict_data().flavor != DictData::Flavor::Dict)
    if (MethodImpl m = flavor_method(self.dict_data().flavor, name))
      return m;
  return find_method(self.kind, name);
}

/// The special methods of built-in values (`seq.__getitem__` as a sort key, `x.__class__`):
/// each is the interpreter's own protocol.
static std::optional<Value> special_attr(Interpreter &interp, const Value &v, std::string_view name) {
  using python::BinOpKind;
  using python::UnaryOpKind;
  if (name.size() < 5 || !name.starts_with("__") || !name.ends_with("__"))
    return std::nullopt;
  if (name == "__class__") {
    Value *type = interp.builtins().find_local(type_name(v) == "NoneType" ? "type" : type_name(v));
    if (type && v.kind != K::None)
      return *type;
    return std::nullopt;
  }
  using Impl = Value (*)(Interpreter &, const Value &, CallArgs &);
  struct Special {
    std::string_view name;
    Impl impl;
    std::size_t args;
  };
  static const Special specials[] = {
      {"__getitem__", [](Interpreter &i, const Value &s, CallArgs &a) { return i.get_item(s, a.positional[0]); }, 1},
      {"__setitem__",
       [](Interpreter &i, const Value &s, CallArgs &a) {
         i.set_item(s, a.positional[0], a.positional[1]);
         return Value::none();
       },
       2},
      {"__len__",
       [](Interpreter &i, const Value &s, CallArgs &) {
         CallArgs one;
         one.positional.push_back(s);
         return i.call(*i.builtins().find_local("len"), one);
       },
       0},
      {"__contains__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return Value::boolean(i.contains(s, a.positional[0])); }, 1},
      {"__iter__",
       [](Interpreter &i, const Value &s, CallArgs &) {
         CallArgs one;
         one.positional.push_back(s);
         return i.call(*i.builtins().find_local("iter"), one);
       },
       0},
      {"__repr__", [](Interpreter &, const Value &s, CallArgs &) { return Value::str(repr(s)); }, 0},
      {"__str__", [](Interpreter &, const Value &s, CallArgs &) { return Value::str(str(s)); }, 0},
      {"__hash__", [](Interpreter &i, const Value &s, CallArgs &) { return Value::integer(hash_value(&i, s)); }, 0},
      {"__bool__", [](Interpreter &i, const Value &s, CallArgs &) { return Value::boolean(i.truthy(s)); }, 0},
      {"__format__",
       [](Interpreter &i, const Value &s, CallArgs &a) {
         if (a.positional[0].kind != K::Str)
           raise_python("TypeError", "format spec must be a str");
         return Value::str(i.format(s, a.positional[0].str_text()));
       },
       1},
      {"__eq__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.compare(python::CmpOpKind::Eq, s, a.positional[0]); },
       1},
      {"__ne__",
       [](Interpreter &i, const Value &s, CallArgs &a) {
         return i.compare(python::CmpOpKind::NotEq, s, a.positional[0]);
       },
       1},
      {"__lt__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.compare(python::CmpOpKind::Lt, s, a.positional[0]); },
       1},
      {"__le__",
       [](Interpreter &i, const Value &s, CallArgs &a) {
         return i.compare(python::CmpOpKind::LtE, s, a.positional[0]);
       },
       1},
      {"__gt__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.compare(python::CmpOpKind::Gt, s, a.positional[0]); },
       1},
      {"__ge__",
       [](Interpreter &i, const Value &s, CallArgs &a) {
         return i.compare(python::CmpOpKind::GtE, s, a.positional[0]);
       },
       1},
      {"__add__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::Add, s, a.positional[0]); }, 1},
      {"__sub__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::Sub, s, a.positional[0]); }, 1},
      {"__mul__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::Mult, s, a.positional[0]); }, 1},
      {"__truediv__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::Div, s, a.positional[0]); }, 1},
      {"__floordiv__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::FloorDiv, s, a.positional[0]); },
       1},
      {"__mod__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::Mod, s, a.positional[0]); }, 1},
      {"__pow__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::Pow, s, a.positional[0]); }, 1},
      {"__and__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::BitAnd, s, a.positional[0]); },
       1},
      {"__or__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::BitOr, s, a.positional[0]); },
       1},
      {"__xor__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::BitXor, s, a.positional[0]); },
       1},
      {"__lshift__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::LShift, s, a.positional[0]); },
       1},
      {"__rshift__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::RShift, s, a.positional[0]); },
       1},
      {"__radd__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::Add, a.positional[0], s); }, 1},
      {"__rsub__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::Sub, a.positional[0], s); }, 1},
      {"__rmul__",
       [](Interpreter &i, const Value &s, CallArgs &a) { return i.binary_op(BinOpKind::Mult, a.positional[0], s); }, 1},
      {"__neg__", [](Interpreter &i, const Value &s, CallArgs &) { return i.unary_op(UnaryOpKind::USub, s); }, 0},
      {"__pos__", [](Interpreter &i, const Value &s, CallArgs &) { return i.unary_op(UnaryOpKind::UAdd, s); }, 0},
      {"__invert__", [](Interpreter &i, const Value &s, CallArgs &) { return i.unary_op(UnaryOpKind::Invert, s); }, 0},
      {"__abs__",
       [](Interpreter &i, const Value &s, CallArgs &) {
         CallArgs one;
         one.positional.push_back(s);
         return i.call(*i.builtins().find_local("abs"), one);
       },
       0},
  };
  bool number = v.is_number();
  for (const Special &sp : specials) {
    if (sp.name != name)
      continue;
    // Only the methods the value's type has: no __getitem__ on an int, no __neg__ on a str.
    bool container = v.kind == K::Str || v.kind == K::List || v.kind == K::Tuple || v.kind == K::Dict;
    if ((name == "__getitem__" || name == "__len__" || name == "__contains__" || name == "__iter__") && !container)
      return std::nullopt;
    if (name == "__setitem__" && v.kind != K::List && v.kind != K::Dict)
      return std::nullopt;
    if ((name == "__neg__" || name == "__pos__" || name == "__abs__" || name == "__invert__") && !number)
      return std::nullopt;
    if (name == "__hash__" && (v.kind == K::List || v.kind == K::Dict))
      return std::nullopt;
    Impl impl = sp.impl;
    std::size_t n = sp.args;
    std::string method(name);
    return Value::object(std::make_shared<BuiltinFunction>(method, [v, impl, n, method](Interpreter &i, CallArgs &a) {
      expect_args(method, a, n, n);
      return impl(i, v, a);
    }));
  }
  return std::nullopt;
}

std::optional<Value> Interpreter::find_attr(const Value &v, std::string_view name) {
  if (Object *obj = v.object())
    return obj->get_attr(*this, name);
  if (std::optional<Value> data = data_attr(v, name))
    return data;
  if (std::optional<Value> special = special_attr(*this, v, name))
    return special;
  if (v.kind == K::Dict)
    if (std::optional<Value> data = flavor_attr(v, name))
      return data;
  MethodImpl impl = value_method(v, name);
  if (!impl)
    return unmodelled_attribute(*this, attr_owner(v), name);
  std::string method(name);
  return Value::object(std::make_shared<BuiltinFunction>(
      method, [self = v, impl](Interpreter &interp, CallArgs &args) { return impl(interp, self, args); }));
}

Value Interpreter::get_attr(const Value &v, std::string_view name, SourceLoc loc) {
  try {
    if (std::optional<Value> out = find_attr(v, name))
      return std::move(*out);
    if (auto *module = v.as<ModuleObject>())
      raise_python("AttributeError", "module '" + module->name() + "' has no attribute '" + std::string(name) + "'");
    raise_python("AttributeError", "'" + tn(v) + "' object has no attribute '" + std::string(name) + "'");
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

void Interpreter::set_attr(const Value &v, std::string_view name, const Value &value, SourceLoc loc) {
  try {
    // Modules are read-only in nkicc (NKI's are shared by every trace): `nl.load = None` says
    // so, rather than that the module has no such attribute.
    if (auto *module = v.as<ModuleObject>())
      raise_error("unmodelled", "nkicc does not model assigning to a module's attribute ('" + module->name() + "." +
                                    std::string(name) +
                                    "'): modules are read-only; bind the value to a name of "
                                    "your own");
    if (Object *obj = v.object())
      return obj->set_attr(*this, name, value);
    if (value_method(v, name) || data_attr(v, name))
      raise_python("AttributeError", "'" + tn(v) + "' object attribute '" + std::string(name) + "' is read-only");
    raise_python("AttributeError", "'" + tn(v) + "' object has no attribute '" + std::string(name) + "'");
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

std::optional<Value> Interpreter::call_method(const Value &self, std::string_view name, CallArgs &args) {
  MethodImpl impl = value_method(self, name);
  if (!impl)
    return std::nullopt;
  return impl(*this, self, args);
}

void Interpreter::sort(std::vector<Value> &items, const Value *key, bool reverse) {
  sort_values(*this, items, key, reverse);
}

} // namespace nkicc::trace
