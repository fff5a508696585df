// The built-in types as values (`int`, `str`, `dict`, `set`, ...): construction, isinstance(),
// their class attributes (`dict.fromkeys`, `str.join`), `range`, and the built-in exceptions,
// in CPython 3.11's words.
#include "types.h"
#include "eval/classes.h"

#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "set.h"
#include "stdlib.h"
#include "unmodelled.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace nkicc::trace {

using python::CmpOpKind;
using namespace pylib;

namespace pylib {

double to_double(const Value &v) {
  if (v.kind == K::Float)
    return v.f;
  if (is_intlike(v))
    return static_cast<double>(int_of(v));
  if (std::optional<Value> n = as_python_number(v))
    return to_double(*n);
  raise_python("TypeError", "must be real number, not " + tn(v));
}

void arity(std::string_view name, const CallArgs &args, std::size_t min, std::size_t max) {
  std::size_t n = args.positional.size();
  if (n >= min && n <= max)
    return;
  if (min == 1 && max == 1)
    raise_python("TypeError", std::string(name) + "() takes exactly one argument (" + std::to_string(n) + " given)");
  if (n < min)
    raise_python("TypeError", std::string(name) + " expected at least " + std::to_string(min) + " argument" +
                                  (min == 1 ? "" : "s") + ", got " + std::to_string(n));
  raise_python("TypeError", std::string(name) + " expected at most " + std::to_string(max) + " argument" +
                                (max == 1 ? "" : "s") + ", got " + std::to_string(n));
}

namespace {

std::string trim(const std::string &s) {
  std::size_t b = s.find_first_not_of(" \t\n\r\f\v"), e = s.find_last_not_of(" \t\n\r\f\v");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

Value int_from_str(const std::string &text, std::int64_t base) {
  auto fail = [&]() -> Value {
    std::string r = repr(Value::str(text));
    raise_python("ValueError", "invalid literal for int() with base " + std::to_string(base) + ": " + r);
  };
  std::string s = trim(text);
  std::size_t k = 0;
  bool neg = false;
  if (k < s.size() && (s[k] == '+' || s[k] == '-'))
    neg = s[k++] == '-';
  std::int64_t b = base;
  if (k + 1 < s.size() && s[k] == '0') {
    char p = static_cast<char>(s[k + 1] | 0x20);
    std::int64_t pb = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (pb && (base == 0 || base == pb)) {
      b = pb;
      k += 2;
      if (k < s.size() && s[k] == '_')
        ++k;
    }
  }
  if (b == 0)
    b = 10;
  if (k >= s.size())
    return fail();
  std::uint64_t m = 0;
  bool prev_digit = false;
  for (; k < s.size(); ++k) {
    char c = s[k];
    if (c == '_' && prev_digit && k + 1 < s.size()) {
      prev_digit = false;
      continue;
    }
    int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? (c | 0x20) - 'a' + 10 : 99;
    if (d >= b)
      return fail();
    if (m > (std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(b))
      int_overflow();
    m = m * static_cast<std::uint64_t>(b) + static_cast<std::uint64_t>(d);
    prev_digit = true;
  }
  if (!prev_digit)
    return fail();
  if (m > (neg ? 9223372036854775808ULL : 9223372036854775807ULL))
    int_overflow();
  return Value::integer(neg ? static_cast<std::int64_t>(0 - m) : static_cast<std::int64_t>(m));
}

/// A value's own conversion method (`__int__`, `__float__`, `__index__`), called; nullopt
/// when it has none.
std::optional<Value> convert_by_method(Interpreter &interp, const Value &v, std::string_view method) {
  if (v.kind != K::Object)
    return std::nullopt;
  std::optional<Value> m = interp.find_attr(v, method);
  if (!m || m->as<OpaqueObject>())
    return std::nullopt;
  CallArgs none;
  return interp.call(*m, none);
}

Value builtin_int(Interpreter &interp, CallArgs &args) {
  BoundArgs a("int", args, {"x", "base"}, 0);
  if (!a.has(0)) {
    if (a.has(1))
      raise_python("TypeError", "int() missing string argument");
    return Value::integer(0);
  }
  const Value &v = *a.get(0);
  if (a.has(1)) {
    std::int64_t base = index_arg(*a.get(1));
    if (v.kind != K::Str)
      raise_python("TypeError", "int() can't convert non-string with explicit base");
    if (base != 0 && (base < 2 || base > 36))
      raise_python("ValueError", "int() base must be >= 2 and <= 36, or 0");
    return int_from_str(v.str_text(), base);
  }
  switch (v.kind) {
  case K::Int:
  case K::Bool:
    return Value::integer(int_of(v));
  case K::Float:
    return Value::integer(float_to_int(std::trunc(v.f)));
  case K::Str:
    return int_from_str(v.str_text(), 10);
  default:
    break;
  }
  if (std::optional<Value> n = as_python_number(v))
    return n->kind == K::Float ? Value::integer(float_to_int(std::trunc(n->f))) : Value::integer(int_of(*n));
  for (std::string_view method : {"__int__", "__index__"})
    if (std::optional<Value> out = convert_by_method(interp, v, method)) {
      if (!is_intlike(*out))
        raise_python("TypeError", std::string(method) + " returned non-int (type " + tn(*out) + ")");
      return Value::integer(int_of(*out));
    }
  raise_python("TypeError",
               "int() argument must be a string, a bytes-like object or a real number, not '" + tn(v) + "'");
}

Value builtin_float(Interpreter &interp, CallArgs &args) {
  no_keywords("float", args);
  arity("float", args, 0, 1);
  if (args.positional.empty())
    return Value::floating(0.0);
  const Value &v = args.positional[0];
  if (v.kind == K::Float)
    return v;
  if (is_intlike(v))
    return Value::floating(static_cast<double>(int_of(v)));
  if (v.kind == K::Str) {
    std::string s = trim(v.str_text());
    std::string lower;
    for (char c : s)
      lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    std::string_view body = lower;
    bool neg = false;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
      neg = body[0] == '-';
      body.remove_prefix(1);
    }
    if (body == "inf" || body == "infinity")
      return Value::floating(neg ? -INFINITY : INFINITY);
    if (body == "nan")
      return Value::floating(NAN);
    std::string digits;
    for (std::size_t k = 0; k < s.size(); ++k)
      if (s[k] != '_' || (k > 0 && k + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[k - 1])) &&
                          std::isdigit(static_cast<unsigned char>(s[k + 1]))))
        digits += s[k];
    bool ok = !digits.empty() && digits.find_first_not_of("0123456789+-.eE") == std::string::npos;
    char *end = nullptr;
    double out = ok ? std::strtod(digits.c_str(), &end) : 0.0;
    if (!ok || end != digits.c_str() + digits.size())
      raise_python("ValueError", "could not convert string to float: " + repr(v));
    return Value::floating(out);
  }
  if (std::optional<Value> n = as_python_number(v))
    return Value::floating(to_double(*n));
  for (std::string_view method : {"__float__", "__index__"})
    if (std::optional<Value> out = convert_by_method(interp, v, method))
      return Value::floating(to_double(*out));
  raise_python("TypeError", "float() argument must be a string or a real number, not '" + tn(v) + "'");
}

Value builtin_bool(Interpreter &interp, CallArgs &args) {
  no_keywords("bool", args);
  arity("bool", args, 0, 1);
  return Value::boolean(!args.positional.empty() && interp.truthy(args.positional[0]));
}
Value builtin_str(Interpreter &interp, CallArgs &args) {
  arity("str", args, 0, 1);
  if (args.positional.empty())
    return Value::str("");
  const Value &v = args.positional[0];
  if (v.kind == K::Str)
    return v;
  if (std::optional<Value> out = convert_by_method(interp, v, "__str__"); out && out->kind == K::Str)
    return *out;
  return Value::str(str(v));
}
Value builtin_tuple(Interpreter &interp, CallArgs &args) {
  no_keywords("tuple", args);
  arity("tuple", args, 0, 1);
  if (args.positional.empty())
    return Value::tuple({});
  if (args.positional[0].kind == K::Tuple)
    return args.positional[0];
  return Value::tuple(interp.to_list(args.positional[0]));
}
Value builtin_list(Interpreter &interp, CallArgs &args) {
  no_keywords("list", args);
  arity("list", args, 0, 1);
  return Value::list(args.positional.empty() ? std::vector<Value>{} : interp.to_list(args.positional[0]));
}
Value builtin_dict(Interpreter &interp, CallArgs &args) {
  arity("dict", args, 0, 1);
  Value out = Value::dict();
  if (!args.positional.empty())
    dict_update_from(interp, out, args.positional[0]);
  for (const auto &[k, v] : args.keywords)
    out.dict_data().set(&interp, Value::str(k), v);
  return out;
}
Value builtin_set(Interpreter &interp, CallArgs &args) {
  no_keywords("set", args);
  arity("set", args, 0, 1);
  if (args.positional.empty())
    return Value::object(std::make_shared<SetObject>(false));
  return Value::object(set_from(interp, args.positional[0], false));
}
Value builtin_frozenset(Interpreter &interp, CallArgs &args) {
  no_keywords("frozenset", args);
  arity("frozenset", args, 0, 1);
  if (args.positional.empty())
    return Value::object(std::make_shared<SetObject>(true));
  if (auto *s = args.positional[0].as<SetObject>(); s && s->frozen())
    return args.positional[0];
  return Value::object(set_from(interp, args.positional[0], true));
}

Value builtin_range(Interpreter &, CallArgs &args) {
  no_keywords("range", args);
  std::size_t n = args.positional.size();
  if (n == 0)
    raise_python("TypeError", "range expected at least 1 argument, got 0");
  if (n > 3)
    raise_python("TypeError", "range expected at most 3 arguments, got " + std::to_string(n));
  std::int64_t start = 0, stop, step = 1;
  if (n == 1) {
    stop = index_arg(args.positional[0]);
  } else {
    start = index_arg(args.positional[0]);
    stop = index_arg(args.positional[1]);
    if (n == 3)
      step = index_arg(args.positional[2]);
  }
  if (step == 0)
    raise_python("ValueError", "range() arg 3 must not be zero");
  return Value::object(std::make_shared<RangeObject>(start, stop, step));
}

Value builtin_slice(Interpreter &, CallArgs &args) {
  no_keywords("slice", args);
  arity("slice", args, 1, 3);
  const auto &p = args.positional;
  if (p.size() == 1)
    return Value::slice(Value(), p[0], Value());
  return Value::slice(p[0], p[1], p.size() == 3 ? p[2] : Value());
}

Value builtin_object(Interpreter &, CallArgs &args) {
  arity("object", args, 0, 0);
  struct PlainObject : Object {
    std::string_view type_name() const override { return "object"; }
  };
  return Value::object(std::make_shared<PlainObject>());
}

Value builtin_type(Interpreter &interp, CallArgs &a) {
  no_keywords("type", a);
  if (a.positional.size() != 1)
    raise_python("TypeError", "type() takes 1 or 3 arguments");
  const Value &v = a.positional[0];
  if (eval::ClassObject *c = eval::class_of(v)) // eval: classes
    return Value::object(Ref<eval::ClassObject>(c));
  std::string_view name = type_name(v);
  if (v.kind != K::Object || v.as<RangeObject>() || v.as<SetObject>())
    if (Value *t = interp.builtins().find_local(name))
      return *t;
  return Value::object(make_type(std::string(name), v.kind == K::None ? K::None : K::Object));
}

/// `dict.fromkeys(iterable, value=None)`.
Value dict_fromkeys(Interpreter &interp, CallArgs &args) {
  arity("fromkeys", args, 1, 2);
  Value out = Value::dict();
  Value value = args.positional.size() > 1 ? args.positional[1] : Value::none();
  std::unique_ptr<Iterator> it = interp.iterate(args.positional[0]);
  Value key;
  while (it->next(key))
    out.dict_data().set(&interp, key, value);
  return out;
}

} // namespace

// ---- LibraryType ------------------------------------------------------------------------------

Value LibraryType::call(Interpreter &interp, CallArgs &args) { return impl_(interp, args); }

std::optional<Value> LibraryType::get_attr(Interpreter &interp, std::string_view attr) {
  if (attr == "__name__" || attr == "__qualname__")
    return Value::str(name);
  if (name == "dict" && attr == "fromkeys")
    return Value::object(std::make_shared<BuiltinFunction>("fromkeys", dict_fromkeys));
  // An unbound method of a built-in type (`str.join(sep, items)`, `str.upper(s)`).
  if (instance_kind != K::Object && instance_kind != K::None) {
    Value::Kind kind = instance_kind;
    if (MethodImpl impl = find_method(kind, attr)) {
      std::string qualified = name + "." + std::string(attr);
      std::string type_label = name;
      return Value::object(std::make_shared<BuiltinFunction>(
          qualified, [impl, kind, qualified, type_label](Interpreter &i, CallArgs &args) {
            if (args.positional.empty())
              raise_python("TypeError", "unbound method " + qualified + "() needs an argument");
            Value self = args.positional[0];
            bool matches = self.kind == kind || (kind == K::Int && self.kind == K::Bool);
            if (!matches)
              raise_python("TypeError", "descriptor '" + qualified.substr(qualified.find('.') + 1) +
                                            "' for '" + type_label + "' objects doesn't apply to a '" + tn(self) +
                                            "' object");
            CallArgs rest;
            rest.positional.assign(args.positional.begin() + 1, args.positional.end());
            rest.keywords = args.keywords;
            rest.loc = args.loc;
            return impl(i, self, rest);
          }));
    }
  }
  return unmodelled_attribute(interp, name, attr);
}

Value library_type(std::string name, Value::Kind kind, BuiltinFunction::Impl impl) {
  return Value::object(std::make_shared<LibraryType>(std::move(name), kind, std::move(impl)));
}

std::shared_ptr<TypeObject> make_type(std::string name, Value::Kind kind) {
  auto t = std::make_shared<TypeObject>();
  t->name = std::move(name);
  t->instance_kind = kind;
  return t;
}

void install_types(Scope &scope) {
  struct TypeDef {
    const char *name;
    K kind;
    BuiltinFunction::Impl impl;
  };
  const TypeDef types[] = {{"int", K::Int, builtin_int},       {"float", K::Float, builtin_float},
                           {"bool", K::Bool, builtin_bool},    {"str", K::Str, builtin_str},
                           {"tuple", K::Tuple, builtin_tuple}, {"list", K::List, builtin_list},
                           {"dict", K::Dict, builtin_dict},    {"slice", K::Slice, builtin_slice},
                           {"range", K::Object, builtin_range}, {"set", K::Object, builtin_set},
                           {"frozenset", K::Object, builtin_frozenset}, {"object", K::Object, builtin_object},
                           {"type", K::Object, builtin_type}};
  for (const TypeDef &t : types)
    scope.set(t.name, library_type(t.name, t.kind, t.impl));
}

} // namespace pylib

// ---- TypeObject ----------------------------------------------------------------------------------

bool TypeObject::is_instance(const Value &v) const {
  if (name == "object")
    return true;
  if (instance_kind == K::Object)
    return v.kind == K::Object && trace::type_name(v) == name;
  if (instance_kind == K::Int)
    return v.kind == K::Int || v.kind == K::Bool;
  // OrderedDict, defaultdict and Counter are dicts; a dict is none of them.
  if (instance_kind == K::Dict)
    return v.kind == K::Dict && (name == "dict" || trace::type_name(v) == name);
  return v.kind == instance_kind;
}

Value TypeObject::call(Interpreter &interp, CallArgs &args) {
  if (name == "NoneType")
    return Value();
  if (Value *builtin = interp.builtins().find_local(name); builtin && builtin->as<LibraryType>())
    return builtin->object()->call(interp, args);
  raise_python("TypeError", "cannot create '" + name + "' instances");
}

std::optional<Value> TypeObject::compare(Interpreter &, CmpOpKind op, const Value &other, bool) {
  if (op != CmpOpKind::Eq && op != CmpOpKind::NotEq)
    return std::nullopt;
  auto *t = other.as<TypeObject>();
  bool eq = t && t->name == name && t->instance_kind == instance_kind;
  return Value::boolean(op == CmpOpKind::Eq ? eq : !eq);
}

// ---- range ---------------------------------------------------------------------------------------

std::uint64_t RangeObject::count() const {
  if (step > 0 && start < stop)
    return (static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start) - 1) /
               static_cast<std::uint64_t>(step) +
           1;
  if (step < 0 && start > stop)
    return (static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(stop) - 1) /
               (0 - static_cast<std::uint64_t>(step)) +
           1;
  return 0;
}

std::int64_t RangeObject::length() const {
  std::uint64_t n = count();
  if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    raise_python("OverflowError", "Python int too large to convert to C ssize_t");
  return static_cast<std::int64_t>(n);
}

bool RangeObject::contains(std::int64_t v) const {
  if (step > 0 ? (v < start || v >= stop) : (v > start || v <= stop))
    return false;
  std::uint64_t diff = step > 0 ? static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(start)
                                : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(v);
  std::uint64_t s = step > 0 ? static_cast<std::uint64_t>(step) : 0 - static_cast<std::uint64_t>(step);
  return diff % s == 0;
}

std::optional<bool> RangeObject::contains(Interpreter &interp, const Value &item) {
  if (is_intlike(item))
    return contains(int_of(item));
  std::unique_ptr<Iterator> it = iterate(interp);
  Value x;
  std::uint64_t n = 0;
  while (it->next(x)) {
    if (items_equal(interp, x, item))
      return true;
    interp.check_length(++n);
  }
  return false;
}

namespace {
/// The k-th item of a range, k < count(): computed modulo 2^64, which is exact since the item
/// lies between start and stop.
std::int64_t range_item(const RangeObject &r, std::uint64_t k) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(r.start) + k * static_cast<std::uint64_t>(r.step));
}
} // namespace

Value RangeObject::get_item(Interpreter &, const Value &key) {
  if (is_intlike(key)) {
    // In uint64: the length may exceed int64 (range(-5, 2**63 - 1)[2**63 - 10] is fine).
    std::uint64_t n = count();
    std::int64_t k = int_of(key);
    std::uint64_t at = k >= 0 ? static_cast<std::uint64_t>(k) : n - (0 - static_cast<std::uint64_t>(k));
    if ((k < 0 && 0 - static_cast<std::uint64_t>(k) > n) || at >= n)
      raise_python("IndexError", "range object index out of range");
    return Value::integer(range_item(*this, at));
  }
  if (key.kind == K::Slice) {
    // The slice of the index sequence mapped back: range(10)[::2] is range(0, 10, 2)
    // (CPython's compute_slice, in int64 where it fits).
    std::int64_t n = length();
    const SliceData &s = key.slice_data();
    std::int64_t sstep = s.step.is_none() ? 1 : index_arg(s.step);
    if (sstep == 0)
      raise_python("ValueError", "slice step cannot be zero");
    std::int64_t lower = sstep > 0 ? 0 : -1, upper = sstep > 0 ? n : n - 1;
    auto adjust = [&](const Value &v, std::int64_t dflt) {
      if (v.is_none())
        return dflt;
      std::int64_t x = index_arg(v);
      if (x < 0) {
        x = x < -n ? lower : x + n;
        x = std::max(x, lower);
      } else {
        x = std::min(x, upper);
      }
      return x;
    };
    std::int64_t first = adjust(s.lower, sstep < 0 ? upper : lower);
    std::int64_t last = adjust(s.upper, sstep < 0 ? lower : upper);
    std::int64_t new_step, new_start, new_stop;
    if (__builtin_mul_overflow(step, sstep, &new_step))
      int_overflow();
    auto at = [&](std::int64_t k) {
      std::int64_t off, out;
      if (__builtin_mul_overflow(k, step, &off) || __builtin_add_overflow(start, off, &out))
        int_overflow();
      return out;
    };
    new_start = at(first);
    new_stop = at(last);
    return Value::object(std::make_shared<RangeObject>(new_start, new_stop, new_step));
  }
  raise_python("TypeError", "range indices must be integers or slices, not " + tn(key));
}

std::optional<Value> RangeObject::compare(Interpreter &, CmpOpKind op, const Value &other, bool) {
  if (op != CmpOpKind::Eq && op != CmpOpKind::NotEq)
    return std::nullopt;
  auto *r = other.as<RangeObject>();
  bool eq = false;
  if (r) {
    std::uint64_t n = count();
    eq = n == r->count() && (n == 0 || (start == r->start && (n == 1 || step == r->step)));
  }
  return Value::boolean(op == CmpOpKind::Eq ? eq : !eq);
}

std::optional<std::int64_t> RangeObject::hash(Interpreter &interp) {
  // CPython's range_hash: hash((len, start, step)), with None for what does not matter.
  std::uint64_t n = count();
  Value len = n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                  ? Value::integer(std::numeric_limits<std::int64_t>::max())
                  : Value::integer(static_cast<std::int64_t>(n));
  if (n == 0)
    return hash_value(&interp, Value::tuple({len, Value(), Value()}));
  if (n == 1)
    return hash_value(&interp, Value::tuple({len, Value::integer(start), Value()}));
  return hash_value(&interp, Value::tuple({len, Value::integer(start), Value::integer(step)}));
}

std::optional<Value> RangeObject::get_attr(Interpreter &interp, std::string_view name) {
  if (name == "start")
    return Value::integer(start);
  if (name == "stop")
    return Value::integer(stop);
  if (name == "step")
    return Value::integer(step);
  auto self = std::make_shared<RangeObject>(start, stop, step);
  if (name == "index")
    return Value::object(std::make_shared<BuiltinFunction>("index", [self](Interpreter &i, CallArgs &a) {
      expect_args("range.index", a, 1, 1);
      const Value &x = a.positional[0];
      if (is_intlike(x) && self->contains(int_of(x))) {
        std::int64_t v = int_of(x);
        std::uint64_t diff = static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(self->start);
        std::uint64_t s = static_cast<std::uint64_t>(self->step);
        return Value::integer(static_cast<std::int64_t>(self->step > 0 ? diff / s : (0 - diff) / (0 - s)));
      }
      if (!is_intlike(x)) {
        std::unique_ptr<Iterator> it = self->iterate(i);
        Value item;
        for (std::int64_t k = 0; it->next(item); ++k)
          if (items_equal(i, item, x))
            return Value::integer(k);
      }
      raise_python("ValueError", trace::repr(x) + " is not in range");
    }));
  if (name == "count")
    return Value::object(std::make_shared<BuiltinFunction>("count", [self](Interpreter &i, CallArgs &a) {
      expect_args("range.count", a, 1, 1);
      const Value &x = a.positional[0];
      if (is_intlike(x))
        return Value::integer(self->contains(int_of(x)) ? 1 : 0);
      std::int64_t n = 0;
      std::unique_ptr<Iterator> it = self->iterate(i);
      Value item;
      while (it->next(item))
        n += items_equal(i, item, x);
      return Value::integer(n);
    }));
  return unmodelled_attribute(interp, "range", name);
}

namespace {
class RangeIterator : public Iterator {
public:
  RangeIterator(std::int64_t start, std::int64_t step, std::uint64_t n) : next_(start), step_(step), left_(n) {}
  bool next(Value &out) override {
    if (left_ == 0)
      return false;
    out = Value::integer(next_);
    if (--left_ > 0)
      next_ = static_cast<std::int64_t>(static_cast<std::uint64_t>(next_) + static_cast<std::uint64_t>(step_));
    return true;
  }

private:
  std::int64_t next_, step_;
  std::uint64_t left_;
};
} // namespace

std::unique_ptr<Iterator> RangeObject::iterate(Interpreter &) {
  return std::make_unique<RangeIterator>(start, step, count());
}

std::string RangeObject::repr() const {
  std::string out = "range(" + std::to_string(start) + ", " + std::to_string(stop);
  if (step != 1)
    out += ", " + std::to_string(step);
  return out + ")";
}

// ---- exceptions ---------------------------------------------------------------------------------

Value ExceptionTypeObject::call(Interpreter &, CallArgs &args) {
  auto e = std::make_shared<ExceptionObject>();
  e->type = name;
  e->args = args.positional;
  return Value::object(std::move(e));
}

std::optional<Value> ExceptionObject::get_attr(Interpreter &, std::string_view attr) {
  if (attr == "args")
    return Value::tuple(args);
  return std::nullopt;
}

std::string ExceptionObject::message() const {
  if (args.empty())
    return "";
  if (args.size() == 1)
    return str(args[0]);
  return nkicc::trace::repr(Value::tuple(args));
}

std::string ExceptionObject::repr() const {
  std::string out = type + "(";
  for (std::size_t k = 0; k < args.size(); ++k)
    out += (k ? ", " : "") + nkicc::trace::repr(args[k]);
  return out + ")";
}

} // namespace nkicc::trace
