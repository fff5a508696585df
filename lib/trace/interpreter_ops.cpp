// Python's operators and protocols on the interpreter's values: arithmetic with int64 overflow
// checks, comparisons, containment, indexing and slicing, attributes and methods of built-in
// values, iteration, and the format-spec mini-language, in CPython 3.11's words.
#include "nkicc/trace/interpreter.h"

#include "nkicc/cache/py_repr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace nkicc::trace {

using python::BinOpKind;
using python::CmpOpKind;
using python::UnaryOpKind;
using K = Value::Kind;

namespace {

[[noreturn]] void overflow() {
  raise_python("OverflowError", "integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
}

bool is_intlike(const Value &v) { return v.kind == K::Int || v.kind == K::Bool; }
std::int64_t int_of(const Value &v) { return v.kind == K::Bool ? std::int64_t(v.b) : v.i; }
double float_of(const Value &v) { return v.kind == K::Float ? v.f : static_cast<double>(int_of(v)); }
std::string tn(const Value &v) { return std::string(type_name(v)); }

std::string_view op_symbol(BinOpKind op) {
  switch (op) {
  case BinOpKind::Add:
    return "+";
  case BinOpKind::Sub:
    return "-";
  case BinOpKind::Mult:
    return "*";
  case BinOpKind::MatMult:
    return "@";
  case BinOpKind::Div:
    return "/";
  case BinOpKind::Mod:
    return "%";
  case BinOpKind::Pow:
    return "** or pow()";
  case BinOpKind::LShift:
    return "<<";
  case BinOpKind::RShift:
    return ">>";
  case BinOpKind::BitOr:
    return "|";
  case BinOpKind::BitXor:
    return "^";
  case BinOpKind::BitAnd:
    return "&";
  case BinOpKind::FloorDiv:
    return "//";
  }
  return "?";
}

[[noreturn]] void unsupported_operands(BinOpKind op, const Value &l, const Value &r) {
  raise_python("TypeError", "unsupported operand type(s) for " + std::string(op_symbol(op)) + ": '" + tn(l) +
                                "' and '" + tn(r) + "'");
}

std::int64_t int_pow(std::int64_t base, std::int64_t exp) {
  std::int64_t result = 1;
  while (exp > 0) {
    if (exp & 1)
      if (__builtin_mul_overflow(result, base, &result))
        overflow();
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base))
      overflow();
  }
  return result;
}

} // namespace

// 128-bit arithmetic is a GCC/Clang extension; __extension__ keeps -Wpedantic quiet about it.
__extension__ typedef unsigned __int128 U128;

double int_true_divide(std::int64_t a, std::int64_t b) {
  // Python's int / int is the exact quotient rounded once to the nearest double (ties to
  // even). Both operands within 2^53 convert exactly, and one IEEE division rounds once.
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  if (a > -kExact && a < kExact && b > -kExact && b < kExact)
    return static_cast<double>(a) / static_cast<double>(b);
  bool negative = (a < 0) != (b < 0);
  U128 n = a < 0 ? -static_cast<U128>(a) : static_cast<U128>(a);
  U128 d = b < 0 ? -static_cast<U128>(b) : static_cast<U128>(b);
  if (n == 0)
    return negative ? -0.0 : 0.0;
  auto bits = [](U128 v) {
    int k = 0;
    while (v) {
      v >>= 1;
      ++k;
    }
    return k;
  };
  // Scale so that the integer quotient has 55 or 56 bits: 53 to keep, and the rest (with the
  // remainder as a sticky bit) to round by. bits(n) + shift <= 55 + 64, within 128 bits.
  int shift = 55 + bits(d) - bits(n);
  U128 scaled = shift >= 0 ? n << shift : n >> -shift;
  bool sticky = shift < 0 && (n & ((static_cast<U128>(1) << -shift) - 1)) != 0;
  U128 q = scaled / d;
  sticky = sticky || scaled % d != 0;
  int excess = bits(q) - 53;
  U128 low = q & ((static_cast<U128>(1) << excess) - 1);
  U128 half = static_cast<U128>(1) << (excess - 1);
  q >>= excess;
  if (low > half || (low == half && (sticky || (q & 1))))
    ++q; // may carry to 2^53, which a double still holds exactly
  double result = std::ldexp(static_cast<double>(static_cast<std::uint64_t>(q)), excess - shift);
  return negative ? -result : result;
}

namespace {

Value int_binop(BinOpKind op, const Value &lv, const Value &rv) {
  std::int64_t a = int_of(lv), b = int_of(rv), r = 0;
  switch (op) {
  case BinOpKind::Add:
    if (__builtin_add_overflow(a, b, &r))
      overflow();
    return Value::integer(r);
  case BinOpKind::Sub:
    if (__builtin_sub_overflow(a, b, &r))
      overflow();
    return Value::integer(r);
  case BinOpKind::Mult:
    if (__builtin_mul_overflow(a, b, &r))
      overflow();
    return Value::integer(r);
  case BinOpKind::Div:
    if (b == 0)
      raise_python("ZeroDivisionError", "division by zero");
    return Value::floating(int_true_divide(a, b));
  case BinOpKind::FloorDiv: {
    if (b == 0)
      raise_python("ZeroDivisionError", "integer division or modulo by zero");
    if (a == std::numeric_limits<std::int64_t>::min() && b == -1)
      overflow();
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
      --q;
    return Value::integer(q);
  }
  case BinOpKind::Mod: {
    if (b == 0)
      raise_python("ZeroDivisionError", "integer modulo by zero");
    if (b == -1)
      return Value::integer(0);
    std::int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
      m += b;
    return Value::integer(m);
  }
  case BinOpKind::Pow:
    if (b < 0) {
      if (a == 0)
        raise_python("ZeroDivisionError", "0.0 cannot be raised to a negative power");
      return Value::floating(std::pow(static_cast<double>(a), static_cast<double>(b)));
    }
    return Value::integer(int_pow(a, b));
  case BinOpKind::LShift: {
    if (b < 0)
      raise_python("ValueError", "negative shift count");
    if (a == 0)
      return Value::integer(0);
    if (b >= 63)
      overflow();
    r = static_cast<std::int64_t>(static_cast<std::uint64_t>(a) << b);
    if ((r >> b) != a)
      overflow();
    return Value::integer(r);
  }
  case BinOpKind::RShift:
    if (b < 0)
      raise_python("ValueError", "negative shift count");
    return Value::integer(b >= 64 ? (a < 0 ? -1 : 0) : (a >> b));
  case BinOpKind::BitAnd:
    return lv.kind == K::Bool && rv.kind == K::Bool ? Value::boolean(a & b) : Value::integer(a & b);
  case BinOpKind::BitOr:
    return lv.kind == K::Bool && rv.kind == K::Bool ? Value::boolean(a | b) : Value::integer(a | b);
  case BinOpKind::BitXor:
    return lv.kind == K::Bool && rv.kind == K::Bool ? Value::boolean(a ^ b) : Value::integer(a ^ b);
  case BinOpKind::MatMult:
    break;
  }
  unsupported_operands(op, lv, rv);
}

// CPython's float_floor_div / float_rem.
void float_divmod(double vx, double wx, double &floordiv, double &mod) {
  mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5)
      floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, vx / wx);
  }
}

Value float_binop(BinOpKind op, const Value &lv, const Value &rv) {
  double a = float_of(lv), b = float_of(rv);
  switch (op) {
  case BinOpKind::Add:
    return Value::floating(a + b);
  case BinOpKind::Sub:
    return Value::floating(a - b);
  case BinOpKind::Mult:
    return Value::floating(a * b);
  case BinOpKind::Div:
    if (b == 0.0)
      raise_python("ZeroDivisionError", "float division by zero");
    return Value::floating(a / b);
  case BinOpKind::FloorDiv: {
    if (b == 0.0)
      raise_python("ZeroDivisionError", "float floor division by zero");
    double q, m;
    float_divmod(a, b, q, m);
    return Value::floating(q);
  }
  case BinOpKind::Mod: {
    if (b == 0.0)
      raise_python("ZeroDivisionError", "float modulo");
    double q, m;
    float_divmod(a, b, q, m);
    return Value::floating(m);
  }
  case BinOpKind::Pow: {
    if (a == 0.0 && b < 0.0)
      raise_python("ZeroDivisionError", "0.0 cannot be raised to a negative power");
    if (a < 0.0 && std::isfinite(b) && b != std::floor(b))
      raise_error("unsupported", "unsupported Python construct 'complex number' (a negative number raised to a "
                                 "fractional power)");
    double r = std::pow(a, b);
    if (std::isinf(r) && std::isfinite(a) && std::isfinite(b))
      raise_python("OverflowError", "(34, 'Numerical result out of range')");
    return Value::floating(r);
  }
  default:
    unsupported_operands(op, lv, rv);
  }
}

Value repeat(const Interpreter &interp, const Value &seq, std::int64_t n) {
  if (n < 0)
    n = 0;
  if (seq.kind == K::Str) {
    const std::string &text = seq.str_text();
    interp.check_length(text.empty() ? 0 : static_cast<std::uint64_t>(n) * text.size());
    std::string out;
    out.reserve(text.size() * static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k)
      out += text;
    return Value::str(std::move(out));
  }
  const auto &items = seq.seq().items;
  if (!items.empty() && static_cast<std::uint64_t>(n) > interp.limits().max_sequence_length / items.size())
    interp.check_length(std::numeric_limits<std::uint64_t>::max());
  std::vector<Value> out;
  out.reserve(items.size() * static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k)
    out.insert(out.end(), items.begin(), items.end());
  return seq.kind == K::List ? Value::list(std::move(out)) : Value::tuple(std::move(out));
}

// `'%d items' % n`: the printf-style formatting of str, for the common conversions.
std::string percent_format(Interpreter &interp, const std::string &fmt, const Value &args) {
  std::vector<Value> values;
  if (args.kind == K::Tuple)
    values = args.seq().items;
  else
    values.push_back(args);
  std::size_t next = 0;
  std::string out;
  for (std::size_t k = 0; k < fmt.size(); ++k) {
    if (fmt[k] != '%') {
      out += fmt[k];
      continue;
    }
    std::size_t j = k + 1;
    while (j < fmt.size() && std::string_view("-+ #0123456789.").find(fmt[j]) != std::string_view::npos)
      ++j;
    if (j >= fmt.size())
      raise_python("ValueError", "incomplete format");
    char conv = fmt[j];
    std::string flags = fmt.substr(k + 1, j - k - 1);
    k = j;
    if (conv == '%') {
      out += '%';
      continue;
    }
    if (next >= values.size())
      raise_python("TypeError", "not enough arguments for format string");
    const Value &v = values[next++];
    std::string spec;
    std::string_view f = flags;
    std::string align = ">";
    if (!f.empty() && f[0] == '-') {
      align = "<";
      f.remove_prefix(1);
    }
    switch (conv) {
    case 's':
      spec = align + std::string(f);
      out += interp.format(Value::str(str(v)), spec);
      break;
    case 'r':
      spec = align + std::string(f);
      out += interp.format(Value::str(repr(v)), spec);
      break;
    case 'd':
    case 'i':
    case 'u':
      if (!v.is_number())
        raise_python("TypeError", "%" + std::string(1, conv) + " format: a real number is required, not " + tn(v));
      out += interp.format(v.kind == K::Float ? Value::integer(static_cast<std::int64_t>(v.f)) : v,
                           align + std::string(f) + "d");
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
      if (!v.is_number())
        raise_python("TypeError", "must be real number, not " + tn(v));
      out += interp.format(Value::floating(float_of(v)), align + std::string(f) + conv);
      break;
    case 'x':
    case 'X':
    case 'o':
      if (!is_intlike(v))
        raise_python("TypeError", "%" + std::string(1, conv) + " format: an integer is required, not " + tn(v));
      out += interp.format(v, align + std::string(f) + conv);
      break;
    default:
      raise_python("ValueError", "unsupported format character '" + std::string(1, conv) + "'");
    }
  }
  if (next < values.size())
    raise_python("TypeError", "not all arguments converted during string formatting");
  return out;
}

bool is_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80)
      return false;
  return true;
}

/// Byte offsets of each code point of a UTF-8 string, plus the end.
std::vector<std::size_t> code_point_offsets(std::string_view s) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < s.size(); ++k)
    if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80)
      out.push_back(k);
  out.push_back(s.size());
  return out;
}

std::size_t code_point_count(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

std::int64_t slice_index(const Value &v) {
  if (is_intlike(v))
    return int_of(v);
  raise_python("TypeError", "slice indices must be integers or None or have an __index__ method");
}

} // namespace

void Interpreter::check_length(std::uint64_t n) const {
  if (n > limits_.max_sequence_length)
    raise_python("MemoryError", "the result would hold more than " + std::to_string(limits_.max_sequence_length) +
                                    " items, nkicc's limit for one sequence");
}

ResolvedSlice resolve_slice(const SliceData &s, std::int64_t length) {
  std::int64_t step = s.step.is_none() ? 1 : slice_index(s.step);
  if (step == 0)
    raise_python("ValueError", "slice step cannot be zero");
  if (step < -std::numeric_limits<std::int64_t>::max())
    step = -std::numeric_limits<std::int64_t>::max();
  std::int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? length : length - 1;
  auto adjust = [&](const Value &v, std::int64_t dflt) {
    if (v.is_none())
      return dflt;
    std::int64_t x = slice_index(v);
    if (x < 0) {
      x = x < -length ? lower : x + length;
      if (x < lower)
        x = lower;
    } else if (x > upper) {
      x = upper;
    }
    return x;
  };
  std::int64_t start = adjust(s.lower, step < 0 ? upper : lower);
  std::int64_t stop = adjust(s.upper, step < 0 ? lower : upper);
  std::int64_t count = 0;
  if (step > 0 && stop > start)
    count = (stop - start - 1) / step + 1;
  else if (step < 0 && start > stop)
    count = (start - stop - 1) / (-step) + 1;
  return {start, step, count};
}

Value Interpreter::binary_op(BinOpKind op, const Value &l, const Value &r, SourceLoc loc) {
  // Two ints without overflow or a zero divisor: int_binop's result, without its checks.
  if (l.kind == K::Int && r.kind == K::Int) {
    std::int64_t a = l.i, b = r.i, out;
    switch (op) {
    case BinOpKind::Add:
      if (!__builtin_add_overflow(a, b, &out))
        return Value::integer(out);
      break;
    case BinOpKind::Sub:
      if (!__builtin_sub_overflow(a, b, &out))
        return Value::integer(out);
      break;
    case BinOpKind::Mult:
      if (!__builtin_mul_overflow(a, b, &out))
        return Value::integer(out);
      break;
    case BinOpKind::FloorDiv:
      if (b > 0 || (b < 0 && b != -1)) {
        out = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0)))
          --out;
        return Value::integer(out);
      }
      break;
    case BinOpKind::Mod:
      if (b > 0 || (b < 0 && b != -1)) {
        out = a % b;
        if (out != 0 && ((out < 0) != (b < 0)))
          out += b;
        return Value::integer(out);
      }
      break;
    case BinOpKind::BitAnd:
      return Value::integer(a & b);
    case BinOpKind::BitOr:
      return Value::integer(a | b);
    case BinOpKind::BitXor:
      return Value::integer(a ^ b);
    default:
      break;
    }
  }
  try {
    if (l.kind == K::Object || r.kind == K::Object) {
      SourceLoc saved = current_loc_;
      if (loc.valid())
        current_loc_ = loc;
      std::optional<Value> result;
      if (Object *obj = l.object())
        result = obj->binary_op(*this, op, r, false);
      if (!result)
        if (Object *obj = r.object())
          result = obj->binary_op(*this, op, l, true);
      current_loc_ = saved;
      if (result)
        return std::move(*result);
      unsupported_operands(op, l, r);
    }
    bool lnum = l.is_number(), rnum = r.is_number();
    if (lnum && rnum) {
      if (l.kind != K::Float && r.kind != K::Float)
        return int_binop(op, l, r);
      return float_binop(op, l, r);
    }
    switch (op) {
    case BinOpKind::Add:
      if (l.kind == K::Str) {
        if (r.kind != K::Str)
          raise_python("TypeError", "can only concatenate str (not \"" + tn(r) + "\") to str");
        check_length(l.str_text().size() + r.str_text().size());
        return Value::str(l.str_text() + r.str_text());
      }
      if (l.kind == K::List || l.kind == K::Tuple) {
        if (r.kind != l.kind)
          raise_python("TypeError", "can only concatenate " + tn(l) + " (not \"" + tn(r) + "\") to " + tn(l));
        const auto &a = l.seq().items, &b = r.seq().items;
        check_length(a.size() + b.size());
        std::vector<Value> out;
        out.reserve(a.size() + b.size());
        out.insert(out.end(), a.begin(), a.end());
        out.insert(out.end(), b.begin(), b.end());
        return l.kind == K::List ? Value::list(std::move(out)) : Value::tuple(std::move(out));
      }
      break;
    case BinOpKind::Mult: {
      bool lseq = l.kind == K::Str || l.kind == K::List || l.kind == K::Tuple;
      bool rseq = r.kind == K::Str || r.kind == K::List || r.kind == K::Tuple;
      if (lseq && is_intlike(r))
        return repeat(*this, l, int_of(r));
      if (rseq && is_intlike(l))
        return repeat(*this, r, int_of(l));
      if (lseq && r.kind != K::Object)
        raise_python("TypeError", "can't multiply sequence by non-int of type '" + tn(r) + "'");
      if (rseq && l.kind != K::Object)
        raise_python("TypeError", "can't multiply sequence by non-int of type '" + tn(l) + "'");
      break;
    }
    case BinOpKind::Mod:
      if (l.kind == K::Str)
        return Value::str(percent_format(*this, l.str_text(), r));
      break;
    case BinOpKind::BitOr:
      if (l.kind == K::Dict && r.kind == K::Dict) {
        Value out = Value::dict(l.dict_data().entries);
        for (const auto &[k, v] : r.dict_data().entries)
          set_item(out, k, v);
        return out;
      }
      break;
    default:
      break;
    }
    unsupported_operands(op, l, r);
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

Value Interpreter::unary_op(UnaryOpKind op, const Value &v, SourceLoc loc) {
  try {
    if (op == UnaryOpKind::Not)
      return Value::boolean(!truthy(v));
    if (Object *obj = v.object()) {
      SourceLoc saved = current_loc_;
      if (loc.valid())
        current_loc_ = loc;
      std::optional<Value> result = obj->unary_op(*this, op);
      current_loc_ = saved;
      if (result)
        return std::move(*result);
    } else if (is_intlike(v)) {
      std::int64_t x = int_of(v);
      switch (op) {
      case UnaryOpKind::UAdd:
        return Value::integer(x);
      case UnaryOpKind::USub:
        if (x == std::numeric_limits<std::int64_t>::min())
          overflow();
        return Value::integer(-x);
      case UnaryOpKind::Invert:
        return Value::integer(~x);
      default:
        break;
      }
    } else if (v.kind == K::Float) {
      if (op == UnaryOpKind::UAdd)
        return v;
      if (op == UnaryOpKind::USub)
        return Value::floating(-v.f);
    }
    std::string_view sym = op == UnaryOpKind::UAdd ? "+" : op == UnaryOpKind::USub ? "-" : "~";
    raise_python("TypeError", "bad operand type for unary " + std::string(sym) + ": '" + tn(v) + "'");
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

bool Interpreter::truthy(const Value &v) {
  switch (v.kind) {
  case K::None:
    return false;
  case K::Bool:
    return v.b;
  case K::Int:
    return v.i != 0;
  case K::Float:
    return v.f != 0.0;
  case K::Str:
    return !v.str_text().empty();
  case K::Tuple:
  case K::List:
    return !v.seq().items.empty();
  case K::Dict:
    return !v.dict_data().entries.empty();
  case K::Slice:
  case K::Ellipsis:
    return true;
  case K::Object:
    return v.object()->truthy(*this);
  }
  return true;
}

static bool is_same(const Value &a, const Value &b) {
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
    return a.f == b.f || (std::isnan(a.f) && std::isnan(b.f));
  default:
    return a.same_heap(b);
  }
}

// Three-way ordering of two built-in values for <, <=, >, >=; nullopt when unordered (NaN).
static std::optional<int> order(Interpreter &interp, CmpOpKind op, const Value &a, const Value &b) {
  if (a.is_number() && b.is_number()) {
    long double x = a.kind == K::Float ? static_cast<long double>(a.f) : static_cast<long double>(int_of(a));
    long double y = b.kind == K::Float ? static_cast<long double>(b.f) : static_cast<long double>(int_of(b));
    if (x < y)
      return -1;
    if (x > y)
      return 1;
    if (x == y)
      return 0;
    return std::nullopt;
  }
  if (a.kind == K::Str && b.kind == K::Str) {
    int c = a.str_text().compare(b.str_text());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if ((a.kind == K::Tuple || a.kind == K::List) && a.kind == b.kind) {
    const auto &x = a.seq().items, &y = b.seq().items;
    std::size_t n = std::min(x.size(), y.size());
    for (std::size_t k = 0; k < n; ++k) {
      if (interp.truthy(interp.compare(CmpOpKind::Eq, x[k], y[k])))
        continue;
      // The first differing items decide, by the operator itself.
      bool lt = interp.truthy(interp.compare(op, x[k], y[k]));
      return lt == (op == CmpOpKind::Lt || op == CmpOpKind::LtE) ? -1 : 1;
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  raise_python("TypeError", "'" + std::string(python::cmp_op_symbol(op)) + "' not supported between instances of '" + tn(a) +
                                "' and '" + tn(b) + "'");
}

Value Interpreter::compare(CmpOpKind op, const Value &l, const Value &r, SourceLoc loc) {
  // Two ints compare exactly as order() and values_equal() would compare them.
  if (l.kind == K::Int && r.kind == K::Int) {
    switch (op) {
    case CmpOpKind::Eq:
      return Value::boolean(l.i == r.i);
    case CmpOpKind::NotEq:
      return Value::boolean(l.i != r.i);
    case CmpOpKind::Lt:
      return Value::boolean(l.i < r.i);
    case CmpOpKind::LtE:
      return Value::boolean(l.i <= r.i);
    case CmpOpKind::Gt:
      return Value::boolean(l.i > r.i);
    case CmpOpKind::GtE:
      return Value::boolean(l.i >= r.i);
    default:
      break;
    }
  }
  try {
    switch (op) {
    case CmpOpKind::Is:
      return Value::boolean(is_same(l, r));
    case CmpOpKind::IsNot:
      return Value::boolean(!is_same(l, r));
    case CmpOpKind::In:
      return Value::boolean(contains(r, l));
    case CmpOpKind::NotIn:
      return Value::boolean(!contains(r, l));
    default:
      break;
    }
    if (l.kind == K::Object || r.kind == K::Object) {
      SourceLoc saved = current_loc_;
      if (loc.valid())
        current_loc_ = loc;
      std::optional<Value> result;
      if (Object *obj = l.object())
        result = obj->compare(*this, op, r, false);
      if (!result)
        if (Object *obj = r.object())
          result = obj->compare(*this, op, l, true);
      current_loc_ = saved;
      if (result)
        return std::move(*result);
      if (op == CmpOpKind::Eq)
        return Value::boolean(l.same_heap(r));
      if (op == CmpOpKind::NotEq)
        return Value::boolean(!l.same_heap(r));
      order(*this, op, l, r); // raises the TypeError
    }
    if (op == CmpOpKind::Eq || op == CmpOpKind::NotEq) {
      bool eq;
      if ((l.kind == K::Tuple || l.kind == K::List) && l.kind == r.kind) {
        const auto &x = l.seq().items, &y = r.seq().items;
        eq = x.size() == y.size();
        for (std::size_t k = 0; eq && k < x.size(); ++k)
          eq = truthy(compare(CmpOpKind::Eq, x[k], y[k]));
      } else {
        eq = values_equal(l, r);
      }
      return Value::boolean(op == CmpOpKind::Eq ? eq : !eq);
    }
    std::optional<int> c = order(*this, op, l, r);
    if (!c)
      return Value::boolean(false);
    switch (op) {
    case CmpOpKind::Lt:
      return Value::boolean(*c < 0);
    case CmpOpKind::LtE:
      return Value::boolean(*c <= 0);
    case CmpOpKind::Gt:
      return Value::boolean(*c > 0);
    default:
      return Value::boolean(*c >= 0);
    }
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

bool Interpreter::contains(const Value &container, const Value &item, SourceLoc loc) {
  try {
    switch (container.kind) {
    case K::Str:
      if (item.kind != K::Str)
        raise_python("TypeError", "'in <string>' requires string as left operand, not " + tn(item));
      return container.str_text().find(item.str_text()) != std::string::npos;
    case K::Tuple:
    case K::List:
      for (std::size_t k = 0; k < container.seq().items.size(); ++k) {
        Value x = container.seq().items[k];
        if (is_same(x, item) || truthy(compare(CmpOpKind::Eq, x, item)))
          return true;
      }
      return false;
    case K::Dict:
      if (!is_hashable(item))
        raise_python("TypeError", "unhashable type: '" + tn(item) + "'");
      return dict_find(container.dict_data(), item) != nullptr;
    case K::Object: {
      if (auto *range = container.as<RangeObject>(); range && is_intlike(item))
        return range->contains(int_of(item));
      std::unique_ptr<Iterator> it = container.object()->iterate(*this);
      if (!it)
        raise_python("TypeError", "argument of type '" + tn(container) + "' is not iterable");
      Value x;
      std::uint64_t n = 0;
      while (it->next(x)) {
        if (is_same(x, item) || truthy(compare(CmpOpKind::Eq, x, item)))
          return true;
        check_length(++n);
      }
      return false;
    }
    default:
      raise_python("TypeError", "argument of type '" + tn(container) + "' is not iterable");
    }
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

// ---- iteration ----------------------------------------------------------------------------------

namespace {
/// Iterates a list by index, so that a loop body that appends to the list stays memory-safe.
class SeqIterator : public Iterator {
public:
  explicit SeqIterator(Value seq) : seq_(std::move(seq)) {}
  bool next(Value &out) override {
    const auto &items = seq_.seq().items;
    if (index_ >= items.size())
      return false;
    out = items[index_++];
    return true;
  }

private:
  Value seq_;
  std::size_t index_ = 0;
};
class DictIterator : public Iterator {
public:
  explicit DictIterator(Value dict) : dict_(std::move(dict)) {}
  bool next(Value &out) override {
    const auto &entries = dict_.dict_data().entries;
    if (index_ >= entries.size())
      return false;
    out = entries[index_++].first;
    return true;
  }

private:
  Value dict_;
  std::size_t index_ = 0;
};
class StrIterator : public Iterator {
public:
  explicit StrIterator(Value s) : s_(std::move(s)) {}
  bool next(Value &out) override {
    const std::string &text = s_.str_text();
    if (pos_ >= text.size())
      return false;
    std::size_t end = pos_ + 1;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
      ++end;
    out = Value::str(text.substr(pos_, end - pos_));
    pos_ = end;
    return true;
  }

private:
  Value s_;
  std::size_t pos_ = 0;
};
} // namespace

std::unique_ptr<Iterator> Interpreter::iterate(const Value &v, SourceLoc loc) {
  switch (v.kind) {
  case K::Tuple:
  case K::List:
    return std::make_unique<SeqIterator>(v);
  case K::Dict:
    return std::make_unique<DictIterator>(v);
  case K::Str:
    return std::make_unique<StrIterator>(v);
  case K::Object:
    try {
      if (auto it = v.object()->iterate(*this))
        return it;
    } catch (TraceError &e) {
      if (!e.loc.valid())
        e.loc = loc;
      throw;
    }
    break;
  default:
    break;
  }
  raise_python("TypeError", "'" + tn(v) + "' object is not iterable", loc);
}

std::vector<Value> Interpreter::to_list(const Value &iterable, SourceLoc loc) {
  if (iterable.kind == K::Tuple || iterable.kind == K::List)
    return iterable.seq().items;
  if (auto *range = iterable.as<RangeObject>()) {
    std::int64_t n = range->length();
    check_length(static_cast<std::uint64_t>(n));
    std::vector<Value> out;
    out.reserve(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k)
      out.push_back(Value::integer(range->start + k * range->step));
    return out;
  }
  std::unique_ptr<Iterator> it = iterate(iterable, loc);
  std::vector<Value> out;
  Value x;
  while (it->next(x)) {
    out.push_back(std::move(x));
    check_length(out.size());
  }
  return out;
}

// ---- items --------------------------------------------------------------------------------------

Value Interpreter::get_item(const Value &c, const Value &key, SourceLoc loc) {
  try {
    switch (c.kind) {
    case K::Tuple:
    case K::List: {
      const auto &items = c.seq().items;
      std::int64_t n = static_cast<std::int64_t>(items.size());
      if (is_intlike(key)) {
        std::int64_t k = int_of(key);
        if (k < 0)
          k += n;
        if (k < 0 || k >= n)
          raise_python("IndexError", tn(c) + " index out of range");
        return items[static_cast<std::size_t>(k)];
      }
      if (key.kind == K::Slice) {
        ResolvedSlice s = resolve_slice(key.slice_data(), n);
        std::vector<Value> out;
        out.reserve(static_cast<std::size_t>(s.count));
        for (std::int64_t k = 0; k < s.count; ++k)
          out.push_back(items[static_cast<std::size_t>(s.start + k * s.step)]);
        return c.kind == K::List ? Value::list(std::move(out)) : Value::tuple(std::move(out));
      }
      raise_python("TypeError", tn(c) + " indices must be integers or slices, not " + tn(key));
    }
    case K::Str: {
      const std::string &text = c.str_text();
      bool ascii = is_ascii(text);
      std::vector<std::size_t> offsets;
      if (!ascii)
        offsets = code_point_offsets(text);
      std::int64_t n = ascii ? static_cast<std::int64_t>(text.size()) : static_cast<std::int64_t>(offsets.size() - 1);
      auto cp = [&](std::int64_t k) {
        if (ascii)
          return text.substr(static_cast<std::size_t>(k), 1);
        return text.substr(offsets[static_cast<std::size_t>(k)],
                           offsets[static_cast<std::size_t>(k) + 1] - offsets[static_cast<std::size_t>(k)]);
      };
      if (is_intlike(key)) {
        std::int64_t k = int_of(key);
        if (k < 0)
          k += n;
        if (k < 0 || k >= n)
          raise_python("IndexError", "string index out of range");
        return Value::str(cp(k));
      }
      if (key.kind == K::Slice) {
        ResolvedSlice s = resolve_slice(key.slice_data(), n);
        std::string out;
        for (std::int64_t k = 0; k < s.count; ++k)
          out += cp(s.start + k * s.step);
        return Value::str(std::move(out));
      }
      raise_python("TypeError", "string indices must be integers, not '" + tn(key) + "'");
    }
    case K::Dict: {
      if (!is_hashable(key))
        raise_python("TypeError", "unhashable type: '" + tn(key) + "'");
      if (Value *v = dict_find(c.dict_data(), key))
        return *v;
      raise_python("KeyError", repr(key));
    }
    case K::Object: {
      SourceLoc saved = current_loc_;
      if (loc.valid())
        current_loc_ = loc;
      Value out = c.object()->get_item(*this, key);
      current_loc_ = saved;
      return out;
    }
    default:
      raise_python("TypeError", "'" + tn(c) + "' object is not subscriptable");
    }
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

void Interpreter::set_item(const Value &c, const Value &key, const Value &value, SourceLoc loc) {
  try {
    switch (c.kind) {
    case K::List: {
      auto &items = c.seq().items;
      std::int64_t n = static_cast<std::int64_t>(items.size());
      if (is_intlike(key)) {
        std::int64_t k = int_of(key);
        if (k < 0)
          k += n;
        if (k < 0 || k >= n)
          raise_python("IndexError", "list assignment index out of range");
        items[static_cast<std::size_t>(k)] = value;
        return;
      }
      if (key.kind == K::Slice) {
        std::vector<Value> source = to_list(value);
        ResolvedSlice s = resolve_slice(key.slice_data(), n);
        if (s.step == 1) {
          auto first = items.begin() + s.start;
          items.erase(first, first + s.count);
          items.insert(items.begin() + s.start, source.begin(), source.end());
          return;
        }
        if (static_cast<std::int64_t>(source.size()) != s.count)
          raise_python("ValueError", "attempt to assign sequence of size " + std::to_string(source.size()) +
                                         " to extended slice of size " + std::to_string(s.count));
        for (std::int64_t k = 0; k < s.count; ++k)
          items[static_cast<std::size_t>(s.start + k * s.step)] = source[static_cast<std::size_t>(k)];
        return;
      }
      raise_python("TypeError", "list indices must be integers or slices, not " + tn(key));
    }
    case K::Dict: {
      if (!is_hashable(key))
        raise_python("TypeError", "unhashable type: '" + tn(key) + "'");
      if (Value *v = dict_find(c.dict_data(), key))
        *v = value;
      else
        c.dict_data().entries.emplace_back(key, value);
      return;
    }
    case K::Object: {
      SourceLoc saved = current_loc_;
      if (loc.valid())
        current_loc_ = loc;
      c.object()->set_item(*this, key, value);
      current_loc_ = saved;
      return;
    }
    default:
      raise_python("TypeError", "'" + tn(c) + "' object does not support item assignment");
    }
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

// ---- attributes and methods of built-in values ------------------------------------------------

static bool has_method(const Value &v, std::string_view name) {
  static constexpr std::string_view list_methods[] = {"append", "extend",  "pop",   "insert", "index", "count",
                                                      "copy",   "reverse", "clear", "remove", "sort"};
  static constexpr std::string_view dict_methods[] = {"get", "keys",   "values",     "items",
                                                      "pop", "update", "setdefault", "copy"};
  static constexpr std::string_view str_methods[] = {"join",       "format",   "split", "upper",  "lower",
                                                     "startswith", "endswith", "strip", "lstrip", "rstrip",
                                                     "replace",    "find",     "count", "isdigit"};
  static constexpr std::string_view tuple_methods[] = {"index", "count"};
  auto in = [&](const auto &names) { return std::find(std::begin(names), std::end(names), name) != std::end(names); };
  switch (v.kind) {
  case K::List:
    return in(list_methods);
  case K::Dict:
    return in(dict_methods);
  case K::Str:
    return in(str_methods);
  case K::Tuple:
    return in(tuple_methods);
  case K::Float:
    return name == "is_integer";
  case K::Int:
    return name == "bit_length";
  default:
    return false;
  }
}

std::optional<Value> Interpreter::find_attr(const Value &v, std::string_view name) {
  if (Object *obj = v.object())
    return obj->get_attr(*this, name);
  if (v.kind == K::Slice) {
    if (name == "start")
      return v.slice_data().lower;
    if (name == "stop")
      return v.slice_data().upper;
    if (name == "step")
      return v.slice_data().step;
  }
  if ((v.kind == K::Int || v.kind == K::Bool || v.kind == K::Float) && (name == "real" || name == "imag"))
    return name == "real" ? v : (v.kind == K::Float ? Value::floating(0.0) : Value::integer(0));
  if (!has_method(v, name))
    return std::nullopt;
  std::string method(name);
  return Value::object(
      std::make_shared<BuiltinFunction>(method, [self = v, method](Interpreter &interp, CallArgs &args) {
        return *interp.call_method(self, method, args);
      }));
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
    if (Object *obj = v.object())
      return obj->set_attr(*this, name, value);
    if (has_method(v, name))
      raise_python("AttributeError", "'" + tn(v) + "' object attribute '" + std::string(name) + "' is read-only");
    raise_python("AttributeError", "'" + tn(v) + "' object has no attribute '" + std::string(name) + "'");
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

namespace {
void expect_args(std::string_view name, const CallArgs &args, std::size_t min, std::size_t max) {
  std::size_t n = args.positional.size();
  if (!args.keywords.empty() && name != "sort" && name != "update" && name != "format")
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

const std::string &str_arg(std::string_view method, const Value &v) {
  if (v.kind != K::Str)
    raise_python("TypeError", std::string(method) + " arg must be None or str");
  return v.str_text();
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string strip(const std::string &s, const Value *chars, bool left, bool right) {
  auto drop = [&](char c) {
    if (!chars || chars->is_none())
      return is_space(c);
    return chars->str_text().find(c) != std::string::npos;
  };
  std::size_t b = 0, e = s.size();
  if (left)
    while (b < e && drop(s[b]))
      ++b;
  if (right)
    while (e > b && drop(s[e - 1]))
      --e;
  return s.substr(b, e - b);
}

// `'{} and {name!r:>4}'.format(...)`.
std::string str_format(Interpreter &interp, const std::string &fmt, const CallArgs &args) {
  std::string out;
  std::size_t auto_index = 0;
  for (std::size_t k = 0; k < fmt.size(); ++k) {
    char c = fmt[k];
    if (c == '}') {
      if (k + 1 < fmt.size() && fmt[k + 1] == '}') {
        out += '}';
        ++k;
        continue;
      }
      raise_python("ValueError", "Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (k + 1 < fmt.size() && fmt[k + 1] == '{') {
      out += '{';
      ++k;
      continue;
    }
    std::size_t close = fmt.find('}', k);
    if (close == std::string::npos)
      raise_python("ValueError", "Single '{' encountered in format string");
    std::string field = fmt.substr(k + 1, close - k - 1);
    k = close;
    std::string spec;
    char conversion = 0;
    if (std::size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field.resize(colon);
    }
    if (std::size_t bang = field.find('!'); bang != std::string::npos) {
      conversion = bang + 1 < field.size() ? field[bang + 1] : 0;
      field.resize(bang);
    }
    Value v;
    if (field.empty()) {
      if (auto_index >= args.positional.size())
        raise_python("IndexError",
                     "Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
      v = args.positional[auto_index++];
    } else if (std::all_of(field.begin(), field.end(), [](char d) { return d >= '0' && d <= '9'; })) {
      std::size_t index = std::stoul(field);
      if (index >= args.positional.size())
        raise_python("IndexError", "Replacement index " + field + " out of range for positional args tuple");
      v = args.positional[index];
    } else if (const Value *kw = args.keyword(field)) {
      v = *kw;
    } else {
      raise_python("KeyError", "'" + field + "'");
    }
    if (conversion == 'r')
      v = Value::str(repr(v));
    else if (conversion == 's')
      v = Value::str(str(v));
    out += interp.format(v, spec);
  }
  return out;
}
} // namespace

std::optional<Value> Interpreter::call_method(const Value &self, std::string_view name, CallArgs &args) {
  if (!has_method(self, name))
    return std::nullopt;
  auto &pos = args.positional;
  auto arg = [&](std::size_t k) -> const Value & { return pos[k]; };
  switch (self.kind) {
  case K::List: {
    auto &items = self.seq().items;
    if (name == "append") {
      expect_args("list.append", args, 1, 1);
      check_length(items.size() + 1);
      items.push_back(arg(0));
      return Value::none();
    }
    if (name == "extend") {
      expect_args("list.extend", args, 1, 1);
      std::vector<Value> more = to_list(arg(0));
      check_length(items.size() + more.size());
      items.insert(items.end(), more.begin(), more.end());
      return Value::none();
    }
    if (name == "pop") {
      expect_args("pop", args, 0, 1);
      if (items.empty())
        raise_python("IndexError", "pop from empty list");
      std::int64_t n = static_cast<std::int64_t>(items.size());
      std::int64_t k = pos.empty() ? n - 1 : int_of(arg(0));
      if (k < 0)
        k += n;
      if (k < 0 || k >= n)
        raise_python("IndexError", "pop index out of range");
      Value out = items[static_cast<std::size_t>(k)];
      items.erase(items.begin() + k);
      return out;
    }
    if (name == "insert") {
      expect_args("insert", args, 2, 2);
      std::int64_t n = static_cast<std::int64_t>(items.size()), k = int_of(arg(0));
      if (k < 0)
        k = std::max<std::int64_t>(0, k + n);
      k = std::min(k, n);
      items.insert(items.begin() + k, arg(1));
      return Value::none();
    }
    if (name == "clear") {
      expect_args("list.clear", args, 0, 0);
      items.clear();
      return Value::none();
    }
    if (name == "copy") {
      expect_args("list.copy", args, 0, 0);
      return Value::list(items);
    }
    if (name == "reverse") {
      expect_args("list.reverse", args, 0, 0);
      std::reverse(items.begin(), items.end());
      return Value::none();
    }
    if (name == "remove") {
      expect_args("list.remove", args, 1, 1);
      for (std::size_t k = 0; k < items.size(); ++k)
        if (truthy(compare(CmpOpKind::Eq, items[k], arg(0)))) {
          items.erase(items.begin() + static_cast<std::ptrdiff_t>(k));
          return Value::none();
        }
      raise_python("ValueError", "list.remove(x): x not in list");
    }
    if (name == "sort") {
      if (!pos.empty())
        raise_python("TypeError", "sort() takes no positional arguments");
      const Value *key = args.keyword("key");
      const Value *rev = args.keyword("reverse");
      std::vector<Value> sorted = items;
      sort(sorted, key && !key->is_none() ? key : nullptr, rev && truthy(*rev));
      items = std::move(sorted);
      return Value::none();
    }
    break;
  }
  case K::Dict: {
    auto &entries = self.dict_data().entries;
    if (name == "get") {
      expect_args("get", args, 1, 2);
      if (!is_hashable(arg(0)))
        raise_python("TypeError", "unhashable type: '" + tn(arg(0)) + "'");
      if (Value *v = dict_find(self.dict_data(), arg(0)))
        return *v;
      return pos.size() > 1 ? arg(1) : Value::none();
    }
    if (name == "keys" || name == "values" || name == "items") {
      expect_args("dict." + std::string(name), args, 0, 0);
      std::vector<Value> out;
      for (const auto &[k, v] : entries)
        out.push_back(name == "keys" ? k : name == "values" ? v : Value::tuple({k, v}));
      return Value::list(std::move(out));
    }
    if (name == "pop") {
      expect_args("pop", args, 1, 2);
      for (std::size_t k = 0; k < entries.size(); ++k)
        if (values_equal(entries[k].first, arg(0))) {
          Value out = entries[k].second;
          entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(k));
          return out;
        }
      if (pos.size() > 1)
        return arg(1);
      raise_python("KeyError", repr(arg(0)));
    }
    if (name == "update") {
      if (pos.size() > 1)
        raise_python("TypeError", "update expected at most 1 argument, got " + std::to_string(pos.size()));
      if (!pos.empty()) {
        if (arg(0).kind == K::Dict) {
          for (const auto &[k, v] : std::vector(arg(0).dict_data().entries))
            set_item(self, k, v);
        } else {
          for (const Value &pair : to_list(arg(0))) {
            std::vector<Value> kv = to_list(pair);
            if (kv.size() != 2)
              raise_python("ValueError", "dictionary update sequence element has length " + std::to_string(kv.size()) +
                                             "; 2 is required");
            set_item(self, kv[0], kv[1]);
          }
        }
      }
      for (const auto &[k, v] : args.keywords)
        set_item(self, Value::str(k), v);
      return Value::none();
    }
    if (name == "setdefault") {
      expect_args("setdefault", args, 1, 2);
      if (Value *v = dict_find(self.dict_data(), arg(0)))
        return *v;
      Value dflt = pos.size() > 1 ? arg(1) : Value::none();
      set_item(self, arg(0), dflt);
      return dflt;
    }
    if (name == "copy") {
      expect_args("dict.copy", args, 0, 0);
      return Value::dict(entries);
    }
    break;
  }
  case K::Str: {
    const std::string &s = self.str_text();
    if (name == "format")
      return Value::str(str_format(*this, s, args));
    if (name == "join") {
      expect_args("str.join", args, 1, 1);
      std::string out;
      std::size_t k = 0;
      for (const Value &item : to_list(arg(0))) {
        if (item.kind != K::Str)
          raise_python("TypeError",
                       "sequence item " + std::to_string(k) + ": expected str instance, " + tn(item) + " found");
        if (k++)
          out += s;
        out += item.str_text();
        check_length(out.size());
      }
      return Value::str(std::move(out));
    }
    if (name == "upper" || name == "lower") {
      expect_args("str." + std::string(name), args, 0, 0);
      std::string out = s;
      for (char &c : out)
        if (name == "upper" ? (c >= 'a' && c <= 'z') : (c >= 'A' && c <= 'Z'))
          c = static_cast<char>(c ^ 0x20);
      return Value::str(std::move(out));
    }
    if (name == "startswith" || name == "endswith") {
      expect_args(name, args, 1, 1);
      std::vector<Value> options = arg(0).kind == K::Tuple ? arg(0).seq().items : std::vector<Value>{arg(0)};
      for (const Value &o : options) {
        if (o.kind != K::Str)
          raise_python("TypeError", std::string(name) + " first arg must be str or a tuple of str, not " + tn(o));
        if (name == "startswith" ? s.starts_with(o.str_text()) : s.ends_with(o.str_text()))
          return Value::boolean(true);
      }
      return Value::boolean(false);
    }
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      expect_args(name, args, 0, 1);
      if (!pos.empty() && !arg(0).is_none())
        str_arg(name, arg(0));
      return Value::str(strip(s, pos.empty() ? nullptr : &arg(0), name != "rstrip", name != "lstrip"));
    }
    if (name == "replace") {
      expect_args("replace", args, 2, 2);
      const std::string &from = str_arg("replace", arg(0)), &to = str_arg("replace", arg(1));
      std::string out;
      if (from.empty())
        return self;
      std::size_t at = 0;
      for (std::size_t hit; (hit = s.find(from, at)) != std::string::npos; at = hit + from.size()) {
        out.append(s, at, hit - at);
        out += to;
        check_length(out.size());
      }
      out.append(s, at);
      return Value::str(std::move(out));
    }
    if (name == "find" || name == "count") {
      expect_args(name, args, 1, 1);
      const std::string &needle = str_arg(name, arg(0));
      if (name == "find") {
        std::size_t hit = s.find(needle);
        return Value::integer(hit == std::string::npos ? -1
                                                       : static_cast<std::int64_t>(code_point_count(s.substr(0, hit))));
      }
      if (needle.empty())
        return Value::integer(static_cast<std::int64_t>(code_point_count(s)) + 1);
      std::int64_t n = 0;
      for (std::size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + needle.size()))
        ++n;
      return Value::integer(n);
    }
    if (name == "isdigit") {
      expect_args("str.isdigit", args, 0, 0);
      return Value::boolean(!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }));
    }
    if (name == "split") {
      expect_args("split", args, 0, 2);
      std::int64_t maxsplit = pos.size() > 1 ? int_of(arg(1)) : -1;
      std::vector<Value> out;
      if (pos.empty() || arg(0).is_none()) {
        std::size_t k = 0;
        while (true) {
          while (k < s.size() && is_space(s[k]))
            ++k;
          if (k >= s.size())
            break;
          if (maxsplit >= 0 && static_cast<std::int64_t>(out.size()) == maxsplit) {
            out.push_back(Value::str(strip(s.substr(k), nullptr, false, true)));
            break;
          }
          std::size_t e = k;
          while (e < s.size() && !is_space(s[e]))
            ++e;
          out.push_back(Value::str(s.substr(k, e - k)));
          k = e;
        }
        return Value::list(std::move(out));
      }
      const std::string &sep = str_arg("split", arg(0));
      if (sep.empty())
        raise_python("ValueError", "empty separator");
      std::size_t at = 0;
      for (std::size_t hit; (maxsplit < 0 || static_cast<std::int64_t>(out.size()) < maxsplit) &&
                            (hit = s.find(sep, at)) != std::string::npos;
           at = hit + sep.size())
        out.push_back(Value::str(s.substr(at, hit - at)));
      out.push_back(Value::str(s.substr(at)));
      return Value::list(std::move(out));
    }
    break;
  }
  case K::Tuple: {
    const auto &items = self.seq().items;
    if (name == "index" || name == "count") {
      expect_args(name, args, 1, 1);
      std::int64_t n = 0;
      for (std::size_t k = 0; k < items.size(); ++k)
        if (truthy(compare(CmpOpKind::Eq, items[k], arg(0)))) {
          if (name == "index")
            return Value::integer(static_cast<std::int64_t>(k));
          ++n;
        }
      if (name == "index")
        raise_python("ValueError", "tuple.index(x): x not in tuple");
      return Value::integer(n);
    }
    break;
  }
  case K::Float:
    expect_args("float.is_integer", args, 0, 0);
    return Value::boolean(std::isfinite(self.f) && self.f == std::floor(self.f));
  case K::Int: {
    expect_args("int.bit_length", args, 0, 0);
    std::uint64_t m = self.i < 0 ? 0 - static_cast<std::uint64_t>(self.i) : static_cast<std::uint64_t>(self.i);
    return Value::integer(m == 0 ? 0 : 64 - __builtin_clzll(m));
  }
  default:
    break;
  }
  // list.index / list.count share tuple's code.
  if (self.kind == K::List && (name == "index" || name == "count")) {
    Value as_tuple = Value::tuple(self.seq().items);
    std::optional<Value> out;
    try {
      out = call_method(as_tuple, name, args);
    } catch (TraceError &e) {
      if (e.message == "tuple.index(x): x not in tuple")
        e.message = repr(args.positional[0]) + " is not in list";
      throw;
    }
    return out;
  }
  return std::nullopt;
}

void Interpreter::sort(std::vector<Value> &items, const Value *key, bool reverse) {
  std::vector<Value> keys;
  keys.reserve(items.size());
  for (const Value &item : items) {
    if (key) {
      CallArgs args;
      args.positional.push_back(item);
      keys.push_back(call(*key, args));
    } else {
      keys.push_back(item);
    }
  }
  std::vector<std::size_t> order_index(items.size());
  for (std::size_t k = 0; k < order_index.size(); ++k)
    order_index[k] = k;
  // Errors thrown from the comparison leave the index permutation valid; they propagate.
  std::stable_sort(order_index.begin(), order_index.end(), [&](std::size_t a, std::size_t b) {
    return reverse ? truthy(compare(CmpOpKind::Lt, keys[b], keys[a]))
                   : truthy(compare(CmpOpKind::Lt, keys[a], keys[b]));
  });
  std::vector<Value> out;
  out.reserve(items.size());
  for (std::size_t k : order_index)
    out.push_back(items[k]);
  items = std::move(out);
}

// ---- format() -----------------------------------------------------------------------------------

namespace {
struct FormatSpec {
  std::string fill = " ";
  char align = 0;
  char sign = 0;
  bool alternate = false;
  bool zero = false;
  std::int64_t width = -1;
  char grouping = 0;
  std::int64_t precision = -1;
  char type = 0;
};

bool is_align(char c) { return c == '<' || c == '>' || c == '=' || c == '^'; }

FormatSpec parse_spec(std::string_view spec, const Value &v) {
  FormatSpec out;
  std::size_t k = 0;
  std::size_t first_len = 1;
  if (!spec.empty()) {
    unsigned char c0 = static_cast<unsigned char>(spec[0]);
    first_len = c0 < 0x80 ? 1 : c0 < 0xE0 ? 2 : c0 < 0xF0 ? 3 : 4;
  }
  if (spec.size() > first_len && is_align(spec[first_len])) {
    out.fill = std::string(spec.substr(0, first_len));
    out.align = spec[first_len];
    k = first_len + 1;
  } else if (!spec.empty() && is_align(spec[0])) {
    out.align = spec[0];
    k = 1;
  }
  if (k < spec.size() && (spec[k] == '+' || spec[k] == '-' || spec[k] == ' '))
    out.sign = spec[k++];
  if (k < spec.size() && spec[k] == 'z')
    ++k;
  if (k < spec.size() && spec[k] == '#') {
    out.alternate = true;
    ++k;
  }
  if (k < spec.size() && spec[k] == '0') {
    out.zero = true;
    ++k;
  }
  auto digits = [&](std::int64_t &target) {
    std::size_t start = k;
    std::int64_t n = 0;
    while (k < spec.size() && spec[k] >= '0' && spec[k] <= '9') {
      n = n * 10 + (spec[k] - '0');
      if (n > 100'000'000)
        raise_python("ValueError", "Too many decimal digits in format string");
      ++k;
    }
    if (k > start)
      target = n;
    return k > start;
  };
  digits(out.width);
  if (k < spec.size() && (spec[k] == ',' || spec[k] == '_'))
    out.grouping = spec[k++];
  if (k < spec.size() && spec[k] == '.') {
    ++k;
    if (!digits(out.precision))
      raise_python("ValueError", "Format specifier missing precision");
  }
  if (k < spec.size())
    out.type = spec[k++];
  if (k < spec.size())
    raise_python("ValueError",
                 "Invalid format specifier '" + std::string(spec) + "' for object of type '" + tn(v) + "'");
  if (out.zero && !out.align) {
    out.fill = "0";
    out.align = '=';
  }
  return out;
}

std::string group_digits(const std::string &digits, char sep, std::size_t every) {
  std::string out;
  std::size_t n = digits.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (k && (n - k) % every == 0)
      out += sep;
    out += digits[k];
  }
  return out;
}

std::string pad(const FormatSpec &spec, const std::string &sign_prefix, const std::string &body, char default_align) {
  std::size_t len = code_point_count(sign_prefix) + code_point_count(body);
  if (spec.width < 0 || static_cast<std::size_t>(spec.width) <= len)
    return sign_prefix + body;
  std::size_t fill_count = static_cast<std::size_t>(spec.width) - len;
  std::string fill;
  auto fills = [&](std::size_t n) {
    std::string f;
    for (std::size_t k = 0; k < n; ++k)
      f += spec.fill;
    return f;
  };
  switch (spec.align ? spec.align : default_align) {
  case '<':
    return sign_prefix + body + fills(fill_count);
  case '^':
    return fills(fill_count / 2) + sign_prefix + body + fills(fill_count - fill_count / 2);
  case '=':
    return sign_prefix + fills(fill_count) + body;
  default:
    return fills(fill_count) + sign_prefix + body;
  }
}

std::string sign_of(bool negative, char sign) {
  if (negative)
    return "-";
  if (sign == '+')
    return "+";
  if (sign == ' ')
    return " ";
  return "";
}

std::string format_float(double x, FormatSpec spec, const Value &original) {
  char type = spec.type;
  if (type && std::string_view("eEfFgG%n").find(type) == std::string_view::npos)
    raise_python("ValueError",
                 "Unknown format code '" + std::string(1, type) + "' for object of type '" + tn(original) + "'");
  if (spec.precision > 1000)
    raise_python("ValueError", "precision too big");
  bool negative = std::signbit(x) && !std::isnan(x);
  double a = std::fabs(x);
  std::string body;
  if (type == '%')
    a *= 100.0;
  if (std::isnan(a) || std::isinf(a)) {
    body = std::isnan(a) ? "nan" : "inf";
    if (type == 'E' || type == 'F' || type == 'G')
      for (char &c : body)
        c = static_cast<char>(c - 32);
    if (type == '%')
      body += '%';
  } else if (!type && spec.precision < 0) {
    append_py_float_repr(body, a);
  } else {
    char conv = type ? type : 'g';
    if (conv == '%')
      conv = 'f';
    if (conv == 'n')
      conv = 'g';
    int precision = static_cast<int>(spec.precision < 0 ? 6 : spec.precision);
    if ((conv == 'g' || conv == 'G') && precision == 0)
      precision = 1;
    char fmt[8] = "%";
    std::size_t f = 1;
    if (spec.alternate)
      fmt[f++] = '#';
    fmt[f++] = '.';
    fmt[f++] = '*';
    fmt[f++] = conv;
    fmt[f] = 0;
    int n = std::snprintf(nullptr, 0, fmt, precision, a);
    body.resize(static_cast<std::size_t>(n) + 1);
    std::snprintf(body.data(), body.size(), fmt, precision, a);
    body.resize(static_cast<std::size_t>(n));
    if (!type && body.find_first_of(".e") == std::string::npos)
      body += ".0";
    if (type == '%')
      body += '%';
  }
  if (spec.grouping) {
    std::size_t int_end = body.find_first_not_of("0123456789");
    if (int_end == std::string::npos)
      int_end = body.size();
    body = group_digits(body.substr(0, int_end), spec.grouping, 3) + body.substr(int_end);
  }
  return pad(spec, sign_of(negative, spec.sign), body, '>');
}

std::string format_int(std::int64_t x, const FormatSpec &spec, const Value &original) {
  char type = spec.type;
  if (type && std::string_view("eEfFgG%").find(type) != std::string_view::npos)
    return format_float(static_cast<double>(x), spec, original);
  if (type && std::string_view("dnxXobc").find(type) == std::string_view::npos)
    raise_python("ValueError",
                 "Unknown format code '" + std::string(1, type) + "' for object of type '" + tn(original) + "'");
  if (spec.precision >= 0)
    raise_python("ValueError", "Precision not allowed in integer format specifier");
  if (spec.grouping == ',' && type && type != 'd')
    raise_python("ValueError", "Cannot specify ',' with '" + std::string(1, type) + "'.");
  std::uint64_t m = x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x);
  if (type == 'c') {
    std::string body;
    if (m > 0x10FFFF || x < 0)
      raise_python("OverflowError", "%c arg not in range(0x110000)");
    char32_t cp = static_cast<char32_t>(m);
    if (cp < 0x80) {
      body += static_cast<char>(cp);
    } else if (cp < 0x800) {
      body += static_cast<char>(0xC0 | (cp >> 6));
      body += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      body += static_cast<char>(0xE0 | (cp >> 12));
      body += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      body += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      body += static_cast<char>(0xF0 | (cp >> 18));
      body += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      body += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      body += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return pad(spec, "", body, '<');
  }
  unsigned base = type == 'x' || type == 'X' ? 16 : type == 'o' ? 8 : type == 'b' ? 2 : 10;
  std::string digits;
  do {
    unsigned d = static_cast<unsigned>(m % base);
    digits += static_cast<char>(d < 10 ? '0' + d : (type == 'X' ? 'A' : 'a') + d - 10);
    m /= base;
  } while (m);
  std::reverse(digits.begin(), digits.end());
  if (spec.grouping)
    digits = group_digits(digits, spec.grouping, base == 10 ? 3 : 4);
  std::string prefix = sign_of(x < 0, spec.sign);
  if (spec.alternate && base != 10)
    prefix += type == 'X' ? "0X" : type == 'x' ? "0x" : type == 'o' ? "0o" : "0b";
  return pad(spec, prefix, digits, '>');
}

std::string format_str(const std::string &s, const FormatSpec &spec, const Value &original) {
  if (spec.type && spec.type != 's')
    raise_python("ValueError",
                 "Unknown format code '" + std::string(1, spec.type) + "' for object of type '" + tn(original) + "'");
  if (spec.sign)
    raise_python("ValueError", "Sign not allowed in string format specifier");
  if (spec.alternate)
    raise_python("ValueError", "Alternate form (#) not allowed in string format specifier");
  if (spec.align == '=')
    raise_python("ValueError", "'=' alignment not allowed in string format specifier");
  if (spec.grouping)
    raise_python("ValueError", std::string("Cannot specify '") + spec.grouping + "' with 's'.");
  std::string body = s;
  if (spec.precision >= 0 && code_point_count(s) > static_cast<std::size_t>(spec.precision)) {
    std::vector<std::size_t> offsets = code_point_offsets(s);
    body = s.substr(0, offsets[static_cast<std::size_t>(spec.precision)]);
  }
  return pad(spec, "", body, '<');
}
} // namespace

std::string Interpreter::format(const Value &v, std::string_view spec) {
  if (spec.empty())
    return str(v);
  switch (v.kind) {
  case K::Int:
  case K::Bool: {
    FormatSpec parsed = parse_spec(spec, v);
    check_length(static_cast<std::uint64_t>(std::max<std::int64_t>(parsed.width, 0)));
    return format_int(int_of(v), parsed, v);
  }
  case K::Float: {
    FormatSpec parsed = parse_spec(spec, v);
    check_length(static_cast<std::uint64_t>(std::max<std::int64_t>(parsed.width, 0)));
    return format_float(v.f, parsed, v);
  }
  case K::Str: {
    FormatSpec parsed = parse_spec(spec, v);
    check_length(static_cast<std::uint64_t>(std::max<std::int64_t>(parsed.width, 0)));
    return format_str(v.str_text(), parsed, v);
  }
  default:
    raise_python("TypeError", "unsupported format string passed to " + tn(v) + ".__format__");
  }
}

} // namespace nkicc::trace
