// Python's built-in functions (len, min, max, sorted, hash, chr, ...), the built-in exceptions,
// and the builtins scope, in CPython 3.11's words. Every real builtin nkicc does not model is a
// placeholder that says so when a kernel uses it.
#include "eval/classes.h"
#include "iterators.h"
#include "methods.h"
#include "nkicc/support/utf8.h"
#include "nkicc/trace/pylib.h"
#include "set.h"
#include "stdlib.h"
#include "types.h"
#include "unmodelled.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace nkicc::trace {

using python::BinOpKind;
using python::CmpOpKind;
using namespace pylib;

namespace {

Value builtin_repr(Interpreter &, CallArgs &args) {
  no_keywords("repr", args);
  arity("repr", args, 1, 1);
  return Value::str(repr(args.positional[0]));
}

Value builtin_len(Interpreter &interp, CallArgs &args) {
  no_keywords("len", args);
  arity("len", args, 1, 1);
  const Value &v = args.positional[0];
  switch (v.kind) {
  case K::Str:
    return Value::integer(static_cast<std::int64_t>(code_point_count(v.str_text())));
  case K::Tuple:
  case K::List:
    return Value::integer(static_cast<std::int64_t>(v.seq().items.size()));
  case K::Dict:
    return Value::integer(static_cast<std::int64_t>(v.dict_data().size()));
  case K::Object:
    if (std::optional<std::int64_t> n = v.object()->length(interp))
      return Value::integer(*n);
    break;
  default:
    break;
  }
  raise_python("TypeError", "object of type '" + tn(v) + "' has no len()");
}

Value builtin_abs(Interpreter &interp, CallArgs &args) {
  no_keywords("abs", args);
  arity("abs", args, 1, 1);
  const Value &v = args.positional[0];
  if (is_intlike(v)) {
    std::int64_t x = int_of(v);
    if (x == std::numeric_limits<std::int64_t>::min())
      raise_python("OverflowError", "integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
    return Value::integer(x < 0 ? -x : x);
  }
  if (v.kind == K::Float)
    return Value::floating(std::fabs(v.f));
  if (v.kind == K::Object) {
    Value neg = interp.compare(CmpOpKind::Lt, v, Value::integer(0));
    return interp.truthy(neg) ? interp.unary_op(python::UnaryOpKind::USub, v) : v;
  }
  raise_python("TypeError", "bad operand type for abs(): '" + tn(v) + "'");
}

Value min_max(Interpreter &interp, CallArgs &args, bool is_max) {
  std::string name = is_max ? "max" : "min";
  const Value *key = args.keyword("key");
  const Value *dflt = args.keyword("default");
  for (const auto &[k, v] : args.keywords)
    if (k != "key" && k != "default")
      raise_python("TypeError", "'" + k + "' is an invalid keyword argument for " + name + "()");
  if (args.positional.empty())
    raise_python("TypeError", name + " expected at least 1 argument, got 0");
  std::vector<Value> items;
  if (args.positional.size() == 1) {
    items = interp.to_list(args.positional[0]);
  } else {
    if (dflt)
      raise_python("TypeError", "Cannot specify a default for " + name + "() with multiple positional arguments");
    items = args.positional;
  }
  if (items.empty()) {
    if (dflt)
      return *dflt;
    raise_python("ValueError", name + "() arg is an empty sequence");
  }
  if (key && key->is_none())
    key = nullptr;
  auto key_of = [&](const Value &v) {
    if (!key)
      return v;
    CallArgs call_args;
    call_args.positional.push_back(v);
    return interp.call(*key, call_args);
  };
  Value best = items[0], best_key = key_of(best);
  for (std::size_t k = 1; k < items.size(); ++k) {
    Value kv = key_of(items[k]);
    if (interp.truthy(interp.compare(is_max ? CmpOpKind::Gt : CmpOpKind::Lt, kv, best_key))) {
      best = items[k];
      best_key = std::move(kv);
    }
  }
  return best;
}

Value builtin_sum(Interpreter &interp, CallArgs &args) {
  arity("sum", args, 1, 2);
  Value total = args.positional.size() > 1 ? args.positional[1] : Value::integer(0);
  if (const Value *start = args.keyword("start"))
    total = *start;
  if (total.kind == K::Str)
    raise_python("TypeError", "sum() can't sum strings [use ''.join(seq) instead]");
  for (const Value &v : interp.to_list(args.positional[0]))
    total = interp.binary_op(BinOpKind::Add, total, v);
  return total;
}

Value builtin_any_all(Interpreter &interp, CallArgs &args, bool all) {
  no_keywords(all ? "all" : "any", args);
  arity(all ? "all" : "any", args, 1, 1);
  std::unique_ptr<Iterator> it = interp.iterate(args.positional[0]);
  Value v;
  while (it->next(v))
    if (interp.truthy(v) != all)
      return Value::boolean(!all);
  return Value::boolean(all);
}

Value builtin_sorted(Interpreter &interp, CallArgs &args) {
  if (args.positional.size() != 1)
    raise_python("TypeError", "sorted expected 1 argument, got " + std::to_string(args.positional.size()));
  const Value *key = nullptr, *rev = nullptr;
  for (const auto &[name, value] : args.keywords) {
    if (name == "key")
      key = &value;
    else if (name == "reverse")
      rev = &value;
    else
      raise_python("TypeError", "'" + name + "' is an invalid keyword argument for sort()");
  }
  std::vector<Value> items = interp.to_list(args.positional[0]);
  sort_values(interp, items, key && !key->is_none() ? key : nullptr, rev && interp.truthy(*rev));
  return Value::list(std::move(items));
}

Value builtin_divmod(Interpreter &interp, CallArgs &args) {
  no_keywords("divmod", args);
  arity("divmod", args, 2, 2);
  const Value &a = args.positional[0], &b = args.positional[1];
  if (a.is_number() && b.is_number()) {
    if (a.kind == K::Float || b.kind == K::Float) {
      double y = b.kind == K::Float ? b.f : static_cast<double>(int_of(b));
      if (y == 0.0)
        raise_python("ZeroDivisionError", "float divmod()");
    } else if (int_of(b) == 0) {
      raise_python("ZeroDivisionError", "integer division or modulo by zero");
    }
  }
  return Value::tuple({interp.binary_op(BinOpKind::FloorDiv, a, b), interp.binary_op(BinOpKind::Mod, a, b)});
}

Value builtin_round(Interpreter &interp, CallArgs &args) {
  arity("round", args, 1, 2);
  const Value &v = args.positional[0];
  if (v.kind == K::Object) {
    // A value with its own __round__ (a NumPy scalar) rounds itself.
    if (std::optional<Value> method = interp.find_attr(v, "__round__"); method && !method->as<OpaqueObject>()) {
      CallArgs rest;
      rest.positional.assign(args.positional.begin() + 1, args.positional.end());
      rest.keywords = args.keywords;
      return interp.call(*method, rest);
    }
  }
  const Value *nd = args.positional.size() > 1 ? &args.positional[1] : args.keyword("ndigits");
  if (nd && nd->is_none())
    nd = nullptr;
  if (is_intlike(v)) {
    std::int64_t x = int_of(v);
    if (!nd || index_arg(*nd) >= 0)
      return Value::integer(x);
    std::int64_t digits = -index_arg(*nd);
    if (digits > 18)
      return Value::integer(0);
    std::int64_t p = 1;
    for (std::int64_t k = 0; k < digits; ++k)
      p *= 10;
    std::int64_t q = x / p, r = x % p;
    if (r < 0) {
      r += p;
      --q;
    }
    if (2 * r > p || (2 * r == p && (q & 1)))
      ++q;
    std::int64_t out;
    if (__builtin_mul_overflow(q, p, &out))
      raise_python("OverflowError", "integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
    return Value::integer(out);
  }
  if (v.kind != K::Float)
    raise_python("TypeError", "type " + tn(v) + " doesn't define __round__ method");
  if (!nd)
    return Value::integer(float_to_int(std::nearbyint(v.f)));
  std::int64_t digits = index_arg(*nd);
  if (!std::isfinite(v.f) || digits > 300)
    return v;
  if (digits < -308)
    return Value::floating(std::copysign(0.0, v.f));
  if (digits >= 0) {
    // The exact binary value rounded half-even in decimal, as CPython's dtoa-based round().
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(digits), v.f);
    return Value::floating(std::strtod(buf, nullptr));
  }
  double p = std::pow(10.0, static_cast<double>(-digits));
  double q = std::nearbyint(v.f / p) * p;
  return Value::floating(q);
}

Value builtin_pow(Interpreter &interp, CallArgs &args) {
  arity("pow", args, 2, 3);
  if (args.positional.size() == 3 && !args.positional[2].is_none()) {
    const Value &a = args.positional[0], &b = args.positional[1], &m = args.positional[2];
    if (!is_intlike(a) || !is_intlike(b) || !is_intlike(m))
      raise_python("TypeError", "pow() 3rd argument not allowed unless all arguments are integers");
    std::int64_t base = int_of(a), exp = int_of(b), mod = int_of(m);
    if (mod == 0)
      raise_python("ValueError", "pow() 3rd argument cannot be 0");
    if (exp < 0)
      raise_python("ValueError", "pow() negative exponent not supported by nkicc");
    std::uint64_t um = static_cast<std::uint64_t>(mod < 0 ? -mod : mod);
    std::int64_t r0 = base % static_cast<std::int64_t>(um);
    std::uint64_t b0 = static_cast<std::uint64_t>(r0 < 0 ? r0 + static_cast<std::int64_t>(um) : r0);
    std::uint64_t result = 1 % um;
    auto mulmod = [um](std::uint64_t x, std::uint64_t y) {
      std::uint64_t r = 0;
      x %= um;
      while (y) {
        if (y & 1)
          r = (r + x) % um >= r ? (r + x) % um : (r + x - um) % um;
        x = (x * 2) % um;
        y >>= 1;
      }
      return r;
    };
    for (; exp; exp >>= 1) {
      if (exp & 1)
        result = mulmod(result, b0);
      b0 = mulmod(b0, b0);
    }
    std::int64_t out = static_cast<std::int64_t>(result);
    if (mod < 0 && out != 0)
      out += mod;
    return Value::integer(out);
  }
  return interp.binary_op(BinOpKind::Pow, args.positional[0], args.positional[1]);
}

Value builtin_print(Interpreter &interp, CallArgs &args) {
  std::string sep = " ", end = "\n";
  for (const auto &[k, v] : args.keywords) {
    if (k == "sep" || k == "end") {
      if (!v.is_none() && v.kind != K::Str)
        raise_python("TypeError", k + " must be None or a string, not " + tn(v));
      if (!v.is_none())
        (k == "sep" ? sep : end) = v.str_text();
    } else if (k != "flush" && k != "file") {
      raise_python("TypeError", "'" + k + "' is an invalid keyword argument for print()");
    }
  }
  std::string out;
  for (std::size_t k = 0; k < args.positional.size(); ++k) {
    if (k)
      out += sep;
    out += str(args.positional[k]);
  }
  // The handler receives one line per call: a trailing newline is implied.
  if (end != "\n")
    out += end;
  interp.print(out);
  return Value();
}

Value builtin_hasattr(Interpreter &interp, CallArgs &args) {
  no_keywords("hasattr", args);
  arity("hasattr", args, 2, 2);
  if (args.positional[1].kind != K::Str)
    raise_python("TypeError", "attribute name must be string, not '" + tn(args.positional[1]) + "'");
  return Value::boolean(interp.find_attr(args.positional[0], args.positional[1].str_text()).has_value());
}

Value builtin_getattr(Interpreter &interp, CallArgs &args) {
  no_keywords("getattr", args);
  arity("getattr", args, 2, 3);
  if (args.positional[1].kind != K::Str)
    raise_python("TypeError", "attribute name must be string, not '" + tn(args.positional[1]) + "'");
  if (args.positional.size() == 3) {
    std::optional<Value> v = interp.find_attr(args.positional[0], args.positional[1].str_text());
    return v ? *v : args.positional[2];
  }
  return interp.get_attr(args.positional[0], args.positional[1].str_text());
}

Value builtin_setattr(Interpreter &interp, CallArgs &args) {
  no_keywords("setattr", args);
  arity("setattr", args, 3, 3);
  if (args.positional[1].kind != K::Str)
    raise_python("TypeError", "attribute name must be string, not '" + tn(args.positional[1]) + "'");
  interp.set_attr(args.positional[0], args.positional[1].str_text(), args.positional[2]);
  return Value::none();
}

/// isinstance(v, cls): cls a type, an exception class or a (nested) tuple of them.
bool isinstance_of(Interpreter &interp, const Value &v, const Value &cls) {
  if (std::optional<bool> r = eval::isinstance_hook(interp, v, cls)) // eval: classes
    return *r;
  if (auto *t = cls.as<TypeObject>())
    return t->is_instance(v);
  if (auto *e = cls.as<ExceptionTypeObject>())
    return v.as<ExceptionObject>() &&
           (e->name == "Exception" || e->name == "BaseException" || v.as<ExceptionObject>()->type == e->name);
  if (cls.kind == K::Tuple) {
    RecursionGuard guard(" in __instancecheck__");
    Value hold = cls;
    for (const Value &c : hold.seq().items)
      if (isinstance_of(interp, v, c))
        return true;
    return false;
  }
  if (cls.kind == K::Object) {
    // A class of its own (eval's class model) answers through __instancecheck__.
    if (std::optional<Value> check = interp.find_attr(cls, "__instancecheck__"); check && !check->as<OpaqueObject>()) {
      CallArgs a;
      a.positional.push_back(v);
      return interp.truthy(interp.call(*check, a));
    }
  }
  raise_python("TypeError", "isinstance() arg 2 must be a type, a tuple of types, or a union");
}

bool issubclass_of(Interpreter &interp, const Value &sub, const Value &cls) {
  if (cls.kind == K::Tuple) {
    RecursionGuard guard(" in __subclasscheck__");
    Value hold = cls;
    for (const Value &c : hold.seq().items)
      if (issubclass_of(interp, sub, c))
        return true;
    return false;
  }
  auto *a = sub.as<TypeObject>();
  auto *b = cls.as<TypeObject>();
  if (a && b) {
    if (b->name == "object" || (a->name == b->name && a->instance_kind == b->instance_kind))
      return true;
    if (b->name == "int" && a->name == "bool")
      return true;
    return b->name == "dict" && a->instance_kind == K::Dict;
  }
  auto *ea = sub.as<ExceptionTypeObject>();
  auto *eb = cls.as<ExceptionTypeObject>();
  if (ea && eb)
    return ea->name == eb->name || eb->name == "BaseException" ||
           (eb->name == "Exception" && ea->name != "BaseException" && ea->name != "KeyboardInterrupt" &&
            ea->name != "SystemExit" && ea->name != "GeneratorExit");
  if (ea && b)
    return b->name == "object";
  if (cls.kind == K::Object)
    if (std::optional<Value> check = interp.find_attr(cls, "__subclasscheck__"); check && !check->as<OpaqueObject>()) {
      CallArgs args;
      args.positional.push_back(sub);
      return interp.truthy(interp.call(*check, args));
    }
  if (!a && !ea && sub.kind == K::Object && !sub.as<OpaqueObject>())
    raise_python("TypeError", "issubclass() arg 1 must be a class");
  if (!b && !eb)
    raise_python("TypeError", "issubclass() arg 2 must be a class, a tuple of classes, or a union");
  return false;
}

Value builtin_callable(Interpreter &, CallArgs &a) {
  no_keywords("callable", a);
  arity("callable", a, 1, 1);
  const Value &v = a.positional[0];
  Object *obj = v.object();
  bool callable = obj && (v.as<FunctionObject>() || v.as<BuiltinFunction>() || v.as<TypeObject>() ||
                          v.as<ExceptionTypeObject>() || v.as<OpaqueObject>() || obj->is_callable());
  return Value::boolean(callable);
}

Value builtin_hash(Interpreter &interp, CallArgs &a) {
  no_keywords("hash", a);
  arity("hash", a, 1, 1);
  return Value::integer(hash_value(&interp, a.positional[0]));
}

Value builtin_id(Interpreter &, CallArgs &a) {
  no_keywords("id", a);
  arity("id", a, 1, 1);
  const Value &v = a.positional[0];
  // An Object's identity is its serial (deterministic); other heap values their address
  // (equal ids mean the same object, as in CPython); inline values a function of the value.
  if (Object *obj = v.object())
    return Value::integer(obj->identity_hash());
  if (HeapData *h = v.heap_data())
    return Value::integer(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(h) >> 1));
  return Value::integer(hash_value(nullptr, v) ^ (static_cast<std::int64_t>(v.kind) << 56));
}

Value builtin_chr(Interpreter &, CallArgs &a) {
  no_keywords("chr", a);
  arity("chr", a, 1, 1);
  std::int64_t c = index_arg(a.positional[0]);
  if (c < 0 || c > 0x10FFFF)
    raise_python("ValueError", "chr() arg not in range(0x110000)");
  if (c >= 0xD800 && c <= 0xDFFF)
    raise_unmodelled("chr", "of a surrogate code point (nkicc's str is UTF-8)");
  std::string out;
  append_utf8(out, static_cast<char32_t>(c));
  return Value::str(std::move(out));
}

Value builtin_ord(Interpreter &, CallArgs &a) {
  no_keywords("ord", a);
  arity("ord", a, 1, 1);
  const Value &v = a.positional[0];
  if (v.kind != K::Str)
    raise_python("TypeError", "ord() expected string of length 1, but " + tn(v) + " found");
  const std::string &s = v.str_text();
  std::size_t n = code_point_count(s);
  if (n != 1)
    raise_python("TypeError", "ord() expected a character, but string of length " + std::to_string(n) + " found");
  auto c0 = static_cast<unsigned char>(s[0]);
  std::uint32_t cp = s.size() == 1 ? c0 : s.size() == 2 ? c0 & 0x1F : s.size() == 3 ? c0 & 0x0F : c0 & 0x07;
  for (std::size_t k = 1; k < s.size(); ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[k]) & 0x3F);
  return Value::integer(cp);
}

/// bin(), oct(), hex(): `-0b101`.
Value radix_string(const CallArgs &a, const char *name, unsigned bits_per_digit, const char *prefix) {
  no_keywords(name, a);
  arity(name, a, 1, 1);
  std::int64_t x = index_arg(a.positional[0]);
  std::uint64_t m = x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x);
  std::string digits;
  do {
    digits += "0123456789abcdef"[m & ((1u << bits_per_digit) - 1)];
    m >>= bits_per_digit;
  } while (m);
  std::reverse(digits.begin(), digits.end());
  return Value::str(std::string(x < 0 ? "-" : "") + prefix + digits);
}

Value builtin_format(Interpreter &interp, CallArgs &a) {
  no_keywords("format", a);
  arity("format", a, 1, 2);
  std::string spec;
  if (a.positional.size() > 1) {
    if (a.positional[1].kind != K::Str)
      raise_python("TypeError", "format() argument 2 must be str, not " + tn(a.positional[1]));
    spec = a.positional[1].str_text();
  }
  return Value::str(interp.format(a.positional[0], spec));
}

/// NotImplemented: what a Python `__eq__` returns to let the other operand answer.
class NotImplementedObject : public Object {
public:
  std::string_view type_name() const override { return "NotImplementedType"; }
  std::string repr() const override { return "NotImplemented"; }
};

} // namespace

namespace detail {

void install_builtins(Interpreter &, Scope &scope) {
  auto fn = [&](std::string name, BuiltinFunction::Impl impl) {
    scope.set(name, Value::object(std::make_shared<BuiltinFunction>(name, std::move(impl))));
  };
  install_types(scope);
  install_iterator_builtins(scope);
  fn("len", builtin_len);
  fn("repr", builtin_repr);
  fn("ascii", [](Interpreter &, CallArgs &a) {
    no_keywords("ascii", a);
    arity("ascii", a, 1, 1);
    return Value::str(ascii_repr(repr(a.positional[0])));
  });
  fn("abs", builtin_abs);
  fn("min", [](Interpreter &i, CallArgs &a) { return min_max(i, a, false); });
  fn("max", [](Interpreter &i, CallArgs &a) { return min_max(i, a, true); });
  fn("sum", builtin_sum);
  fn("any", [](Interpreter &i, CallArgs &a) { return builtin_any_all(i, a, false); });
  fn("all", [](Interpreter &i, CallArgs &a) { return builtin_any_all(i, a, true); });
  fn("sorted", builtin_sorted);
  fn("divmod", builtin_divmod);
  fn("round", builtin_round);
  fn("pow", builtin_pow);
  fn("print", builtin_print);
  fn("hasattr", builtin_hasattr);
  fn("getattr", builtin_getattr);
  fn("setattr", builtin_setattr);
  fn("callable", builtin_callable);
  fn("hash", builtin_hash);
  fn("id", builtin_id);
  fn("chr", builtin_chr);
  fn("ord", builtin_ord);
  fn("bin", [](Interpreter &, CallArgs &a) { return radix_string(a, "bin", 1, "0b"); });
  fn("oct", [](Interpreter &, CallArgs &a) { return radix_string(a, "oct", 3, "0o"); });
  fn("hex", [](Interpreter &, CallArgs &a) { return radix_string(a, "hex", 4, "0x"); });
  fn("format", builtin_format);
  fn("isinstance", [](Interpreter &interp, CallArgs &a) {
    no_keywords("isinstance", a);
    if (a.positional.size() != 2)
      raise_python("TypeError", "isinstance expected 2 arguments, got " + std::to_string(a.positional.size()));
    return Value::boolean(isinstance_of(interp, a.positional[0], a.positional[1]));
  });
  fn("issubclass", [](Interpreter &interp, CallArgs &a) {
    no_keywords("issubclass", a);
    if (a.positional.size() != 2)
      raise_python("TypeError", "issubclass expected 2 arguments, got " + std::to_string(a.positional.size()));
    return Value::boolean(issubclass_of(interp, a.positional[0], a.positional[1]));
  });
  scope.set("Ellipsis", Value::ellipsis());
  scope.set("NotImplemented", Value::object(std::make_shared<NotImplementedObject>()));
  // Every built-in exception class of Python (the capitalized builtins, but for the constants).
  for (std::string_view name : real_names("builtins").names) {
    bool constant =
        name == "Ellipsis" || name == "False" || name == "None" || name == "NotImplemented" || name == "True";
    if (!constant && !name.empty() && name[0] >= 'A' && name[0] <= 'Z')
      scope.set(name, Value::object(std::make_shared<ExceptionTypeObject>(std::string(name))));
  }
  add_unmodelled_builtins(scope);
}

std::shared_ptr<ModuleObject> make_math_module(Interpreter &interp) { return pylib::make_math_module(interp); }

} // namespace detail

} // namespace nkicc::trace
