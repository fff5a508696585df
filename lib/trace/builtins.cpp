// Python's builtins for the Python subset of SPEC §3 (len, range, min, max, int, float, ...),
// the built-in types and exceptions, `math`, and the placeholders for modules nkicc does not
// model. Messages are CPython 3.11's.
#include "nkicc/trace/interpreter.h"

#include "eval/classes.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>

namespace nkicc::trace {

using python::BinOpKind;
using python::CmpOpKind;
using K = Value::Kind;

namespace {

std::string tn(const Value &v) { return std::string(type_name(v)); }
bool is_intlike(const Value &v) { return v.kind == K::Int || v.kind == K::Bool; }
std::int64_t int_of(const Value &v) { return v.kind == K::Bool ? std::int64_t(v.b) : v.i; }

void no_keywords(std::string_view name, const CallArgs &args) {
  if (!args.keywords.empty())
    raise_python("TypeError", std::string(name) + "() takes no keyword arguments");
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

std::int64_t as_index(const Value &v) {
  if (is_intlike(v))
    return int_of(v);
  raise_python("TypeError", "'" + tn(v) + "' object cannot be interpreted as an integer");
}

std::int64_t float_to_int(double x) {
  if (std::isnan(x))
    raise_python("ValueError", "cannot convert float NaN to integer");
  if (std::isinf(x))
    raise_python("OverflowError", "cannot convert float infinity to integer");
  if (x >= 9223372036854775808.0 || x < -9223372036854775808.0)
    raise_python("OverflowError", "integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
  return static_cast<std::int64_t>(x);
}

double to_double(const Value &v) {
  if (v.kind == K::Float)
    return v.f;
  if (is_intlike(v))
    return static_cast<double>(int_of(v));
  raise_python("TypeError", "must be real number, not " + tn(v));
}

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
      raise_python("OverflowError", "integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
    m = m * static_cast<std::uint64_t>(b) + static_cast<std::uint64_t>(d);
    prev_digit = true;
  }
  if (!prev_digit)
    return fail();
  if (m > (neg ? 9223372036854775808ULL : 9223372036854775807ULL))
    raise_python("OverflowError", "integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
  return Value::integer(neg ? static_cast<std::int64_t>(0 - m) : static_cast<std::int64_t>(m));
}

Value builtin_int(Interpreter &, CallArgs &args) {
  arity("int", args, 0, 2);
  const Value *base_kw = args.keyword("base");
  if (args.positional.empty())
    return Value::integer(0);
  const Value &v = args.positional[0];
  if (args.positional.size() == 2 || base_kw) {
    std::int64_t base = as_index(args.positional.size() == 2 ? args.positional[1] : *base_kw);
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
    raise_python("TypeError",
                 "int() argument must be a string, a bytes-like object or a real number, not '" + tn(v) + "'");
  }
}

Value builtin_float(Interpreter &, CallArgs &args) {
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
  raise_python("TypeError", "float() argument must be a string or a real number, not '" + tn(v) + "'");
}

Value builtin_bool(Interpreter &interp, CallArgs &args) {
  no_keywords("bool", args);
  arity("bool", args, 0, 1);
  return Value::boolean(!args.positional.empty() && interp.truthy(args.positional[0]));
}
Value builtin_str(Interpreter &, CallArgs &args) {
  arity("str", args, 0, 1);
  return Value::str(args.positional.empty() ? std::string() : str(args.positional[0]));
}
Value builtin_repr(Interpreter &, CallArgs &args) {
  no_keywords("repr", args);
  arity("repr", args, 1, 1);
  return Value::str(repr(args.positional[0]));
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
  CallArgs update;
  update.positional = args.positional;
  update.keywords = args.keywords;
  interp.call_method(out, "update", update);
  return out;
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
    stop = as_index(args.positional[0]);
  } else {
    start = as_index(args.positional[0]);
    stop = as_index(args.positional[1]);
    if (n == 3)
      step = as_index(args.positional[2]);
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

Value builtin_len(Interpreter &, CallArgs &args) {
  no_keywords("len", args);
  arity("len", args, 1, 1);
  const Value &v = args.positional[0];
  switch (v.kind) {
  case K::Str: {
    std::int64_t n = 0;
    for (unsigned char c : v.str_text())
      n += (c & 0xC0) != 0x80;
    return Value::integer(n);
  }
  case K::Tuple:
  case K::List:
    return Value::integer(static_cast<std::int64_t>(v.seq().items.size()));
  case K::Dict:
    return Value::integer(static_cast<std::int64_t>(v.dict_data().entries.size()));
  default:
    if (auto *r = v.as<RangeObject>())
      return Value::integer(r->length());
    raise_python("TypeError", "object of type '" + tn(v) + "' has no len()");
  }
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

Value builtin_enumerate(Interpreter &interp, CallArgs &args) {
  arity("enumerate", args, 1, 2);
  std::int64_t start = args.positional.size() > 1 ? as_index(args.positional[1]) : 0;
  if (const Value *s = args.keyword("start"))
    start = as_index(*s);
  std::vector<Value> out;
  for (Value &v : interp.to_list(args.positional[0]))
    out.push_back(Value::tuple({Value::integer(start++), std::move(v)}));
  return Value::list(std::move(out));
}

Value builtin_zip(Interpreter &interp, CallArgs &args) {
  std::vector<std::vector<Value>> lists;
  std::size_t n = args.positional.empty() ? 0 : std::numeric_limits<std::size_t>::max();
  for (const Value &v : args.positional) {
    lists.push_back(interp.to_list(v));
    n = std::min(n, lists.back().size());
  }
  const Value *strict = args.keyword("strict");
  if (strict && interp.truthy(*strict))
    for (std::size_t k = 1; k < lists.size(); ++k)
      if (lists[k].size() != lists[0].size())
        raise_python("ValueError", "zip() argument " + std::to_string(k + 1) + " is " +
                                       (lists[k].size() < lists[0].size() ? "shorter" : "longer") + " than argument 1");
  std::vector<Value> out;
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<Value> row;
    for (auto &l : lists)
      row.push_back(l[k]);
    out.push_back(Value::tuple(std::move(row)));
  }
  return Value::list(std::move(out));
}

Value builtin_sorted(Interpreter &interp, CallArgs &args) {
  arity("sorted", args, 1, 1);
  std::vector<Value> items = interp.to_list(args.positional[0]);
  const Value *key = args.keyword("key");
  const Value *rev = args.keyword("reverse");
  interp.sort(items, key && !key->is_none() ? key : nullptr, rev && interp.truthy(*rev));
  return Value::list(std::move(items));
}

Value builtin_reversed(Interpreter &interp, CallArgs &args) {
  no_keywords("reversed", args);
  arity("reversed", args, 1, 1);
  if (args.positional[0].kind == K::Dict || args.positional[0].kind == K::Str) {
    if (args.positional[0].kind == K::Dict)
      raise_python("TypeError", "'dict' object is not reversible");
  }
  std::vector<Value> items = interp.to_list(args.positional[0]);
  std::reverse(items.begin(), items.end());
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

Value builtin_round(Interpreter &, CallArgs &args) {
  arity("round", args, 1, 2);
  const Value &v = args.positional[0];
  const Value *nd = args.positional.size() > 1 ? &args.positional[1] : args.keyword("ndigits");
  if (nd && nd->is_none())
    nd = nullptr;
  if (is_intlike(v)) {
    std::int64_t x = int_of(v);
    if (!nd || as_index(*nd) >= 0)
      return Value::integer(x);
    std::int64_t digits = -as_index(*nd);
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
  std::int64_t digits = as_index(*nd);
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

struct Builtins {
  std::shared_ptr<TypeObject> types[10];
};

std::shared_ptr<TypeObject> make_type(std::string name, K kind) {
  auto t = std::make_shared<TypeObject>();
  t->name = std::move(name);
  t->instance_kind = kind;
  return t;
}

bool isinstance_of(Interpreter &interp, const Value &v, const Value &cls) {
  if (std::optional<bool> r = eval::isinstance_hook(interp, v, cls)) // eval: classes
    return *r;
  if (auto *t = cls.as<TypeObject>())
    return t->is_instance(v);
  if (auto *e = cls.as<ExceptionTypeObject>())
    return v.as<ExceptionObject>() && (e->name == "Exception" || v.as<ExceptionObject>()->type == e->name);
  if (cls.kind == K::Tuple) {
    for (const Value &c : cls.seq().items)
      if (isinstance_of(interp, v, c))
        return true;
    return false;
  }
  raise_python("TypeError", "isinstance() arg 2 must be a type, a tuple of types, or a union");
}

} // namespace

bool TypeObject::is_instance(const Value &v) const {
  if (instance_kind == K::Object)
    return v.kind == K::Object && trace::type_name(v) == name;
  if (instance_kind == K::Int)
    return v.kind == K::Int || v.kind == K::Bool;
  return v.kind == instance_kind;
}

Value TypeObject::call(Interpreter &interp, CallArgs &args) {
  if (name == "int")
    return builtin_int(interp, args);
  if (name == "float")
    return builtin_float(interp, args);
  if (name == "bool")
    return builtin_bool(interp, args);
  if (name == "str")
    return builtin_str(interp, args);
  if (name == "tuple")
    return builtin_tuple(interp, args);
  if (name == "list")
    return builtin_list(interp, args);
  if (name == "dict")
    return builtin_dict(interp, args);
  if (name == "range")
    return builtin_range(interp, args);
  if (name == "slice")
    return builtin_slice(interp, args);
  if (name == "NoneType")
    return Value();
  raise_python("TypeError", "cannot create '" + name + "' instances");
}

std::optional<Value> TypeObject::compare(Interpreter &, CmpOpKind op, const Value &other, bool) {
  if (op != CmpOpKind::Eq && op != CmpOpKind::NotEq)
    return std::nullopt;
  auto *t = other.as<TypeObject>();
  bool eq = t && t->name == name && t->instance_kind == instance_kind;
  return Value::boolean(op == CmpOpKind::Eq ? eq : !eq);
}

// ---- range --------------------------------------------------------------------------------------

std::int64_t RangeObject::length() const {
  if (step > 0 && start < stop)
    return static_cast<std::int64_t>((static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start) - 1) /
                                         static_cast<std::uint64_t>(step) +
                                     1);
  if (step < 0 && start > stop)
    return static_cast<std::int64_t>((static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(stop) - 1) /
                                         (0 - static_cast<std::uint64_t>(step)) +
                                     1);
  return 0;
}

bool RangeObject::contains(std::int64_t v) const {
  if (step > 0 ? (v < start || v >= stop) : (v > start || v <= stop))
    return false;
  std::uint64_t diff = step > 0 ? static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(start)
                                : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(v);
  std::uint64_t s = step > 0 ? static_cast<std::uint64_t>(step) : 0 - static_cast<std::uint64_t>(step);
  return diff % s == 0;
}

Value RangeObject::get_item(Interpreter &interp, const Value &key) {
  std::int64_t n = length();
  if (is_intlike(key)) {
    std::int64_t k = int_of(key);
    if (k < 0)
      k += n;
    if (k < 0 || k >= n)
      raise_python("IndexError", "range object index out of range");
    return Value::integer(start + k * step);
  }
  if (key.kind == K::Slice) {
    // Slice the index sequence, then map back: range(10)[::2] is range(0, 10, 2).
    const SliceData &s = key.slice_data();
    std::int64_t sstep = s.step.is_none() ? 1 : int_of(s.step);
    if (sstep == 0)
      raise_python("ValueError", "slice step cannot be zero");
    // Resolve through a list of the positions (ranges in kernels are small when sliced).
    interp.check_length(static_cast<std::uint64_t>(n));
    std::vector<Value> pos;
    pos.reserve(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k)
      pos.push_back(Value::integer(k));
    Value picked = interp.get_item(Value::tuple(std::move(pos)), key);
    const auto &items = picked.seq().items;
    std::int64_t count = static_cast<std::int64_t>(items.size());
    std::int64_t first = count ? start + items[0].i * step : start;
    std::int64_t new_step = step * sstep;
    return Value::object(std::make_shared<RangeObject>(first, first + count * new_step, new_step));
  }
  raise_python("TypeError", "range indices must be integers or slices, not " + tn(key));
}

std::optional<Value> RangeObject::compare(Interpreter &, CmpOpKind op, const Value &other, bool) {
  if (op != CmpOpKind::Eq && op != CmpOpKind::NotEq)
    return std::nullopt;
  auto *r = other.as<RangeObject>();
  bool eq = false;
  if (r) {
    std::int64_t n = length();
    eq = n == r->length() && (n == 0 || (start == r->start && (n == 1 || step == r->step)));
  }
  return Value::boolean(op == CmpOpKind::Eq ? eq : !eq);
}

namespace {
class RangeIterator : public Iterator {
public:
  RangeIterator(std::int64_t start, std::int64_t step, std::int64_t n) : next_(start), step_(step), left_(n) {}
  bool next(Value &out) override {
    if (left_ <= 0)
      return false;
    out = Value::integer(next_);
    if (--left_ > 0)
      next_ += step_;
    return true;
  }

private:
  std::int64_t next_, step_, left_;
};
} // namespace

std::unique_ptr<Iterator> RangeObject::iterate(Interpreter &) {
  return std::make_unique<RangeIterator>(start, step, length());
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

// ---- placeholders for modules nkicc does not model ------------------------------------------

std::string_view OpaqueObject::module_name() const {
  std::string_view p = path_;
  return p.substr(0, p.find_first_of(".(["));
}

void OpaqueObject::raise_use(std::string_view what) const {
  raise_python("TypeError", "cannot use '" + path_ + "' (" + std::string(what) + ") in a kernel: module '" +
                                std::string(module_name()) + "' is not modelled by nkicc");
}

std::optional<Value> OpaqueObject::get_attr(Interpreter &, std::string_view name) {
  return Value::object(std::make_shared<OpaqueObject>(path_ + "." + std::string(name)));
}
Value OpaqueObject::call(Interpreter &interp, CallArgs &) {
  // Host code at module level may call anything; a traced kernel calling an unmodelled module
  // would compute nothing nkicc can see (SPEC §3).
  if (interp.in_function())
    raise_use("a call");
  return Value::object(std::make_shared<OpaqueObject>(path_ + "()"));
}
void OpaqueObject::set_attr(Interpreter &interp, std::string_view, const Value &) {
  if (interp.in_function())
    raise_use("attribute assignment");
}
Value OpaqueObject::get_item(Interpreter &interp, const Value &) {
  if (interp.in_function())
    raise_use("indexing");
  return Value::object(std::make_shared<OpaqueObject>(path_ + "[]"));
}
void OpaqueObject::set_item(Interpreter &interp, const Value &, const Value &) {
  if (interp.in_function())
    raise_use("item assignment");
}
std::optional<Value> OpaqueObject::binary_op(Interpreter &interp, BinOpKind, const Value &, bool) {
  if (interp.in_function())
    raise_use("an arithmetic operand");
  return Value::object(std::make_shared<OpaqueObject>(path_));
}
std::optional<Value> OpaqueObject::unary_op(Interpreter &interp, python::UnaryOpKind) {
  if (interp.in_function())
    raise_use("an arithmetic operand");
  return Value::object(std::make_shared<OpaqueObject>(path_));
}
std::optional<Value> OpaqueObject::compare(Interpreter &interp, CmpOpKind op, const Value &other, bool) {
  if (interp.in_function())
    raise_use("a comparison operand");
  if (op == CmpOpKind::Eq || op == CmpOpKind::NotEq)
    return std::nullopt;
  (void)other;
  return Value::boolean(false);
}
bool OpaqueObject::truthy(Interpreter &interp) {
  if (interp.in_function())
    raise_use("a condition");
  return true;
}
std::unique_ptr<Iterator> OpaqueObject::iterate(Interpreter &interp) {
  if (interp.in_function())
    raise_use("an iterable");
  struct Empty : Iterator {
    bool next(Value &) override { return false; }
  };
  return std::make_unique<Empty>();
}

// ---- the builtins scope and math -----------------------------------------------------------------

namespace detail {

void install_builtins(Interpreter &, Scope &scope) {
  auto fn = [&](std::string name, BuiltinFunction::Impl impl) {
    scope.set(name, Value::object(std::make_shared<BuiltinFunction>(name, std::move(impl))));
  };
  struct TypeDef {
    const char *name;
    K kind;
  };
  for (TypeDef t : {TypeDef{"int", K::Int},
                    {"float", K::Float},
                    {"bool", K::Bool},
                    {"str", K::Str},
                    {"tuple", K::Tuple},
                    {"list", K::List},
                    {"dict", K::Dict},
                    {"slice", K::Slice},
                    {"range", K::Object}})
    scope.set(t.name, Value::object(make_type(t.name, t.kind)));
  fn("len", builtin_len);
  fn("repr", builtin_repr);
  fn("abs", builtin_abs);
  fn("min", [](Interpreter &i, CallArgs &a) { return min_max(i, a, false); });
  fn("max", [](Interpreter &i, CallArgs &a) { return min_max(i, a, true); });
  fn("sum", builtin_sum);
  fn("any", [](Interpreter &i, CallArgs &a) { return builtin_any_all(i, a, false); });
  fn("all", [](Interpreter &i, CallArgs &a) { return builtin_any_all(i, a, true); });
  fn("enumerate", builtin_enumerate);
  fn("zip", builtin_zip);
  fn("sorted", builtin_sorted);
  fn("reversed", builtin_reversed);
  fn("divmod", builtin_divmod);
  fn("round", builtin_round);
  fn("pow", builtin_pow);
  fn("print", builtin_print);
  fn("hasattr", builtin_hasattr);
  fn("getattr", builtin_getattr);
  fn("isinstance", [](Interpreter &interp, CallArgs &a) {
    no_keywords("isinstance", a);
    if (a.positional.size() != 2)
      raise_python("TypeError", "isinstance expected 2 arguments, got " + std::to_string(a.positional.size()));
    return Value::boolean(isinstance_of(interp, a.positional[0], a.positional[1]));
  });
  fn("callable", [](Interpreter &, CallArgs &a) {
    arity("callable", a, 1, 1);
    const Value &v = a.positional[0];
    return Value::boolean(v.kind == K::Object && !v.as<ModuleObject>() && !v.as<RangeObject>());
  });
  fn("type", [](Interpreter &interp, CallArgs &a) {
    no_keywords("type", a);
    if (a.positional.size() != 1)
      raise_python("TypeError", "type() takes 1 or 3 arguments");
    const Value &v = a.positional[0];
    if (eval::ClassObject *c = eval::class_of(v)) // eval: classes
      return Value::object(Ref<eval::ClassObject>(c));
    std::string_view name = type_name(v);
    if (v.kind != K::Object || v.as<RangeObject>())
      if (Value *t = interp.builtins().find_local(name))
        return *t;
    return Value::object(make_type(std::string(name), v.kind == K::None ? K::None : K::Object));
  });
  for (const char *name :
       {"Exception", "ValueError", "TypeError", "AssertionError", "IndexError", "KeyError", "RuntimeError",
        "NotImplementedError", "ZeroDivisionError", "AttributeError", "NameError", "OverflowError", "ArithmeticError",
        "LookupError", "ImportError", "RecursionError", "MemoryError"})
    scope.set(name, Value::object(std::make_shared<ExceptionTypeObject>(name)));
}

std::shared_ptr<ModuleObject> make_math_module(Interpreter &) {
  auto m = std::make_shared<ModuleObject>("math");
  Scope &g = m->globals();
  auto fn = [&](std::string name, BuiltinFunction::Impl impl) {
    g.set(name, Value::object(std::make_shared<BuiltinFunction>(name, std::move(impl))));
  };
  auto unary = [&](std::string name, double (*f)(double), bool (*domain_ok)(double)) {
    fn(name, [name, f, domain_ok](Interpreter &, CallArgs &a) {
      no_keywords(name, a);
      arity(name, a, 1, 1);
      double x = to_double(a.positional[0]);
      if (!domain_ok(x))
        raise_python("ValueError", "math domain error");
      double r = f(x);
      if (std::isinf(r) && std::isfinite(x))
        raise_python("OverflowError", "math range error");
      return Value::floating(r);
    });
  };
  auto any = [](double) { return true; };
  auto positive = [](double x) { return x > 0 || std::isnan(x); };
  unary(
      "sqrt", [](double x) { return std::sqrt(x); }, [](double x) { return x >= 0 || std::isnan(x); });
  unary(
      "log2", [](double x) { return std::log2(x); }, positive);
  unary(
      "log10", [](double x) { return std::log10(x); }, positive);
  unary(
      "exp", [](double x) { return std::exp(x); }, any);
  unary(
      "fabs", [](double x) { return std::fabs(x); }, any);
  unary(
      "sin", [](double x) { return std::sin(x); }, [](double x) { return !std::isinf(x); });
  unary(
      "cos", [](double x) { return std::cos(x); }, [](double x) { return !std::isinf(x); });
  unary(
      "tanh", [](double x) { return std::tanh(x); }, any);
  auto rounding = [&](std::string name, double (*f)(double)) {
    fn(name, [name, f](Interpreter &, CallArgs &a) {
      no_keywords(name, a);
      arity(name, a, 1, 1);
      const Value &v = a.positional[0];
      if (is_intlike(v))
        return Value::integer(int_of(v));
      return Value::integer(float_to_int(f(to_double(v))));
    });
  };
  rounding("ceil", [](double x) { return std::ceil(x); });
  rounding("floor", [](double x) { return std::floor(x); });
  rounding("trunc", [](double x) { return std::trunc(x); });
  fn("log", [](Interpreter &, CallArgs &a) {
    no_keywords("log", a);
    arity("log", a, 1, 2);
    double x = to_double(a.positional[0]);
    if (!(x > 0) && !std::isnan(x))
      raise_python("ValueError", "math domain error");
    if (a.positional.size() == 1)
      return Value::floating(std::log(x));
    double b = to_double(a.positional[1]);
    if (!(b > 0) && !std::isnan(b))
      raise_python("ValueError", "math domain error");
    double lb = std::log(b);
    if (lb == 0.0)
      raise_python("ZeroDivisionError", "float division by zero");
    return Value::floating(std::log(x) / lb);
  });
  fn("pow", [](Interpreter &, CallArgs &a) {
    no_keywords("pow", a);
    arity("pow", a, 2, 2);
    double x = to_double(a.positional[0]), y = to_double(a.positional[1]);
    if ((x == 0.0 && y < 0.0) || (x < 0.0 && std::isfinite(x) && std::isfinite(y) && y != std::floor(y)))
      raise_python("ValueError", "math domain error");
    double r = std::pow(x, y);
    if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
      raise_python("OverflowError", "math range error");
    return Value::floating(r);
  });
  fn("isqrt", [](Interpreter &, CallArgs &a) {
    no_keywords("isqrt", a);
    arity("isqrt", a, 1, 1);
    std::int64_t n = as_index(a.positional[0]);
    if (n < 0)
      raise_python("ValueError", "isqrt() argument must be nonnegative");
    std::int64_t r = static_cast<std::int64_t>(std::sqrt(static_cast<double>(n)));
    while (r > 0 && r > n / r)
      --r;
    while ((r + 1) <= n / (r + 1))
      ++r;
    return Value::integer(r);
  });
  fn("prod", [](Interpreter &interp, CallArgs &a) {
    arity("prod", a, 1, 1);
    Value total = Value::integer(1);
    if (const Value *start = a.keyword("start"))
      total = *start;
    for (const Value &v : interp.to_list(a.positional[0]))
      total = interp.binary_op(BinOpKind::Mult, total, v);
    return total;
  });
  fn("gcd", [](Interpreter &, CallArgs &a) {
    no_keywords("gcd", a);
    std::uint64_t g0 = 0;
    for (const Value &v : a.positional) {
      std::int64_t x = as_index(v);
      g0 = std::gcd(g0, x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x));
    }
    if (g0 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      raise_python("OverflowError", "integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
    return Value::integer(static_cast<std::int64_t>(g0));
  });
  auto predicate = [&](std::string name, bool (*f)(double)) {
    fn(name, [name, f](Interpreter &, CallArgs &a) {
      arity(name, a, 1, 1);
      return Value::boolean(f(to_double(a.positional[0])));
    });
  };
  predicate("isnan", [](double x) { return std::isnan(x); });
  predicate("isinf", [](double x) { return std::isinf(x); });
  predicate("isfinite", [](double x) { return std::isfinite(x); });
  g.set("inf", Value::floating(INFINITY));
  g.set("nan", Value::floating(NAN));
  g.set("pi", Value::floating(3.141592653589793));
  g.set("e", Value::floating(2.718281828459045));
  g.set("tau", Value::floating(6.283185307179586));
  return m;
}

} // namespace detail
} // namespace nkicc::trace
