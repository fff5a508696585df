// Python's operators on the interpreter's values: arithmetic with int64 overflow checks,
// truth values, indexing and slicing, iteration, in CPython 3.11's words. Comparison,
// containment, hashing, the methods of built-in values and formatting are lib/pylib's.
#include "nkicc/trace/interpreter.h"
#include "nkicc/trace/pylib.h"

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
    interp.count_text_copy(static_cast<std::uint64_t>(n) * text.size());
    std::string out;
    out.reserve(text.size() * static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k)
      out += text;
    return Value::str(std::move(out));
  }
  const auto &items = seq.seq().items;
  if (!items.empty() && static_cast<std::uint64_t>(n) > interp.limits().max_sequence_length / items.size())
    interp.check_length(std::numeric_limits<std::uint64_t>::max());
  interp.count_copy(static_cast<std::uint64_t>(n) * items.size());
  std::vector<Value> out;
  out.reserve(items.size() * static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k)
    out.insert(out.end(), items.begin(), items.end());
  return seq.kind == K::List ? Value::list(std::move(out)) : Value::tuple(std::move(out));
}

std::int64_t slice_index(const Value &v) {
  if (is_intlike(v))
    return int_of(v);
  if (std::optional<Value> n = index_number(v)) // lib: a NumPy integer
    return int_of(*n);
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
        count_text_copy(l.str_text().size() + r.str_text().size());
        return Value::str(l.str_text() + r.str_text());
      }
      if (l.kind == K::List || l.kind == K::Tuple) {
        if (r.kind != l.kind)
          raise_python("TypeError", "can only concatenate " + tn(l) + " (not \"" + tn(r) + "\") to " + tn(l));
        const auto &a = l.seq().items, &b = r.seq().items;
        check_length(a.size() + b.size());
        count_copy(a.size() + b.size());
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
        Value out = Value::dict(make_ref<DictData>(l.dict_data()));
        dict_update_from(*this, out, r);
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
    return !v.dict_data().empty();
  case K::Slice:
  case K::Ellipsis:
    return true;
  case K::Object:
    return v.object()->truthy(*this);
  }
  return true;
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
    return dict_iterator(v, DictPart::Keys);
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
  if (iterable.kind == K::Tuple || iterable.kind == K::List) {
    count_copy(iterable.seq().items.size());
    return iterable.seq().items;
  }
  if (auto *range = iterable.as<RangeObject>()) {
    std::uint64_t n = range->count();
    check_length(n);
    count_copy(n);
    std::vector<Value> out;
    out.reserve(static_cast<std::size_t>(n));
    for (std::uint64_t k = 0; k < n; ++k)
      out.push_back(Value::integer(static_cast<std::int64_t>(static_cast<std::uint64_t>(range->start) +
                                                             k * static_cast<std::uint64_t>(range->step))));
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
    // lib: a NumPy integer indexes a sequence as the int it holds (its __index__).
    if (key.kind == K::Object && (c.kind == K::List || c.kind == K::Tuple || c.kind == K::Str))
      if (std::optional<Value> n = index_number(key))
        return get_item(c, *n, loc);
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
    case K::Dict:
      return dict_get_item(*this, c, key);
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
    // lib: a NumPy integer indexes a list as the int it holds (its __index__).
    if (key.kind == K::Object && c.kind == K::List)
      if (std::optional<Value> n = index_number(key))
        return set_item(c, *n, value, loc);
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
    case K::Dict:
      c.dict_data().set(this, key, value);
      check_length(c.dict_data().size());
      return;
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

} // namespace nkicc::trace
