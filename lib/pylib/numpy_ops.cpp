// NumPy's ufunc loops on one element, as NumPy 1.24's loops compute them (numpy/core/src/umath/
// loops*.c.src, npy_math): float16, bfloat16 and float32 in single precision, float64 in double,
// integers wrapping at their width, `//` and `%` by zero giving 0, NaN propagating through
// maximum and minimum.
#include "numpy_ops.h"

#include "nkicc/trace/value.h"

#include <cmath>
#include <string>

namespace nkicc::trace::numpy {

namespace {

struct OpName {
  Binary op;
  std::string_view name;
};
constexpr OpName kBinaryNames[] = {
    {Binary::Add, "add"},
    {Binary::Subtract, "subtract"},
    {Binary::Multiply, "multiply"},
    {Binary::Divide, "divide"},
    {Binary::FloorDivide, "floor_divide"},
    {Binary::Remainder, "remainder"},
    {Binary::Power, "power"},
    {Binary::Maximum, "maximum"},
    {Binary::Minimum, "minimum"},
    {Binary::Fmax, "fmax"},
    {Binary::Fmin, "fmin"},
    {Binary::BitAnd, "bitwise_and"},
    {Binary::BitOr, "bitwise_or"},
    {Binary::BitXor, "bitwise_xor"},
    {Binary::LeftShift, "left_shift"},
    {Binary::RightShift, "right_shift"},
    {Binary::Equal, "equal"},
    {Binary::NotEqual, "not_equal"},
    {Binary::Less, "less"},
    {Binary::LessEqual, "less_equal"},
    {Binary::Greater, "greater"},
    {Binary::GreaterEqual, "greater_equal"},
    {Binary::LogicalAnd, "logical_and"},
    {Binary::LogicalOr, "logical_or"},
    {Binary::LogicalXor, "logical_xor"},
    {Binary::Arctan2, "arctan2"},
    {Binary::Hypot, "hypot"},
    {Binary::Copysign, "copysign"},
    {Binary::Fmod, "fmod"},
};
constexpr std::string_view kUnaryNames[] = {
    "negative", "positive", "absolute", "invert",  "logical_not", "sign",    "square",   "reciprocal",
    "sqrt",     "cbrt",     "exp",      "exp2",    "expm1",       "log",     "log2",     "log10",
    "log1p",    "sin",      "cos",      "tan",     "arcsin",      "arccos",  "arctan",   "sinh",
    "cosh",     "tanh",     "arcsinh",  "arccosh", "arctanh",     "ceil",    "floor",    "trunc",
    "rint",     "isnan",    "isinf",    "isfinite", "signbit",    "degrees", "radians",
};

[[noreturn]] void no_loop(std::string_view ufunc) {
  raise_python("TypeError", "ufunc '" + std::string(ufunc) +
                                "' not supported for the input types, and the inputs could not be safely coerced to "
                                "any supported types according to the casting rule ''safe''");
}

/// The floating loop an integer or bool input goes to: the smallest of float16, float32,
/// float64 it casts to safely.
NpType float_loop(NpType in) {
  if (is_floating(in))
    return in;
  if (in == NpType::Bool || in == NpType::Int8 || in == NpType::UInt8)
    return NpType::Float16;
  if (in == NpType::Int16 || in == NpType::UInt16)
    return NpType::Float32;
  return NpType::Float64;
}

bool single(NpType t) { return t == NpType::Float16 || t == NpType::Float32 || t == NpType::BFloat16; }

unsigned bits_of(NpType t) { return static_cast<unsigned>(item_size(t) * 8); }

/// The two doubles NumPy's npy_divmod computes (floor quotient, modulus with the divisor's sign).
void float_divmod(double a, double b, double &floordiv, double &mod) {
  mod = std::fmod(a, b);
  if (b == 0.0) {
    floordiv = a / b;
    return;
  }
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5)
      floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, a / b);
  }
}

/// A floating binary op: in single precision for the 16- and 32-bit types.
double float_binary(Binary op, double a, double b, NpType t) {
  bool sp = single(t);
  auto f = [&](double x) { return sp ? static_cast<double>(static_cast<float>(x)) : x; };
  float fa = static_cast<float>(a), fb = static_cast<float>(b);
  switch (op) {
  case Binary::Add:
    return sp ? static_cast<double>(fa + fb) : a + b;
  case Binary::Subtract:
    return sp ? static_cast<double>(fa - fb) : a - b;
  case Binary::Multiply:
    return sp ? static_cast<double>(fa * fb) : a * b;
  case Binary::Divide:
    return sp ? static_cast<double>(fa / fb) : a / b;
  case Binary::FloorDivide: {
    double q, m;
    float_divmod(a, b, q, m);
    return f(q);
  }
  case Binary::Remainder: {
    if (b == 0.0)
      return f(std::fmod(a, b));
    double q, m;
    float_divmod(a, b, q, m);
    return f(m);
  }
  case Binary::Fmod:
    return sp ? static_cast<double>(std::fmod(fa, fb)) : std::fmod(a, b);
  case Binary::Power:
    return sp ? static_cast<double>(std::pow(fa, fb)) : std::pow(a, b);
  case Binary::Maximum:
    return std::isnan(a) || std::isnan(b) ? NAN : (a >= b ? a : b);
  case Binary::Minimum:
    return std::isnan(a) || std::isnan(b) ? NAN : (a <= b ? a : b);
  case Binary::Fmax:
    return std::fmax(a, b);
  case Binary::Fmin:
    return std::fmin(a, b);
  case Binary::Arctan2:
    return sp ? static_cast<double>(std::atan2(fa, fb)) : std::atan2(a, b);
  case Binary::Hypot:
    return sp ? static_cast<double>(std::hypot(fa, fb)) : std::hypot(a, b);
  case Binary::Copysign:
    return std::copysign(a, b);
  default:
    return NAN;
  }
}

double float_unary(Unary op, double x, NpType t) {
  bool sp = single(t);
  float fx = static_cast<float>(x);
  auto pick = [&](float (*ff)(float), double (*fd)(double)) { return sp ? static_cast<double>(ff(fx)) : fd(x); };
  switch (op) {
  case Unary::Sqrt:
    return pick([](float v) { return std::sqrt(v); }, [](double v) { return std::sqrt(v); });
  case Unary::Cbrt:
    return pick([](float v) { return std::cbrt(v); }, [](double v) { return std::cbrt(v); });
  case Unary::Exp:
    return pick([](float v) { return std::exp(v); }, [](double v) { return std::exp(v); });
  case Unary::Exp2:
    return pick([](float v) { return std::exp2(v); }, [](double v) { return std::exp2(v); });
  case Unary::Expm1:
    return pick([](float v) { return std::expm1(v); }, [](double v) { return std::expm1(v); });
  case Unary::Log:
    return pick([](float v) { return std::log(v); }, [](double v) { return std::log(v); });
  case Unary::Log2:
    return pick([](float v) { return std::log2(v); }, [](double v) { return std::log2(v); });
  case Unary::Log10:
    return pick([](float v) { return std::log10(v); }, [](double v) { return std::log10(v); });
  case Unary::Log1p:
    return pick([](float v) { return std::log1p(v); }, [](double v) { return std::log1p(v); });
  case Unary::Sin:
    return pick([](float v) { return std::sin(v); }, [](double v) { return std::sin(v); });
  case Unary::Cos:
    return pick([](float v) { return std::cos(v); }, [](double v) { return std::cos(v); });
  case Unary::Tan:
    return pick([](float v) { return std::tan(v); }, [](double v) { return std::tan(v); });
  case Unary::Arcsin:
    return pick([](float v) { return std::asin(v); }, [](double v) { return std::asin(v); });
  case Unary::Arccos:
    return pick([](float v) { return std::acos(v); }, [](double v) { return std::acos(v); });
  case Unary::Arctan:
    return pick([](float v) { return std::atan(v); }, [](double v) { return std::atan(v); });
  case Unary::Sinh:
    return pick([](float v) { return std::sinh(v); }, [](double v) { return std::sinh(v); });
  case Unary::Cosh:
    return pick([](float v) { return std::cosh(v); }, [](double v) { return std::cosh(v); });
  case Unary::Tanh:
    return pick([](float v) { return std::tanh(v); }, [](double v) { return std::tanh(v); });
  case Unary::Arcsinh:
    return pick([](float v) { return std::asinh(v); }, [](double v) { return std::asinh(v); });
  case Unary::Arccosh:
    return pick([](float v) { return std::acosh(v); }, [](double v) { return std::acosh(v); });
  case Unary::Arctanh:
    return pick([](float v) { return std::atanh(v); }, [](double v) { return std::atanh(v); });
  case Unary::Ceil:
    return std::ceil(x);
  case Unary::Floor:
    return std::floor(x);
  case Unary::Trunc:
    return std::trunc(x);
  case Unary::Rint:
    return std::nearbyint(x);
  case Unary::Degrees:
    return sp ? static_cast<double>(fx * static_cast<float>(180.0 / 3.141592653589793)) : x * (180.0 / 3.141592653589793);
  case Unary::Radians:
    return sp ? static_cast<double>(fx * static_cast<float>(3.141592653589793 / 180.0)) : x * (3.141592653589793 / 180.0);
  case Unary::Negative:
    return -x;
  case Unary::Positive:
    return x;
  case Unary::Absolute:
    return std::fabs(x);
  case Unary::Sign:
    return std::isnan(x) ? NAN : x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
  case Unary::Square:
    return sp ? static_cast<double>(fx * fx) : x * x;
  case Unary::Reciprocal:
    return sp ? static_cast<double>(1.0f / fx) : 1.0 / x;
  default:
    return NAN;
  }
}

bool compare(Binary op, const Scalar &a, const Scalar &b, NpType t) {
  auto decide = [op](auto x, auto y) {
    switch (op) {
    case Binary::Equal:
      return x == y;
    case Binary::NotEqual:
      return x != y;
    case Binary::Less:
      return x < y;
    case Binary::LessEqual:
      return x <= y;
    case Binary::Greater:
      return x > y;
    default:
      return x >= y;
    }
  };
  if (is_floating(t))
    return decide(a.f, b.f);
  if (is_unsigned_int(t))
    return decide(a.u, b.u);
  return decide(a.i, b.i);
}

} // namespace

std::string_view binary_name(Binary op) {
  for (const OpName &n : kBinaryNames)
    if (n.op == op)
      return n.name;
  return "?";
}
std::string_view unary_name(Unary op) { return kUnaryNames[static_cast<std::size_t>(op)]; }

NpType binary_output(Binary op, NpType in) {
  switch (op) {
  case Binary::Add:
  case Binary::Multiply:
  case Binary::Maximum:
  case Binary::Minimum:
  case Binary::Fmax:
  case Binary::Fmin:
    return in;
  case Binary::Subtract:
    if (in == NpType::Bool)
      raise_python("TypeError", "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the "
                                "`^` operator, or the logical_xor function instead.");
    return in;
  case Binary::Divide:
    return is_floating(in) ? in : NpType::Float64;
  case Binary::FloorDivide:
  case Binary::Remainder:
  case Binary::Power:
  case Binary::Fmod:
    return in == NpType::Bool ? NpType::Int8 : in;
  case Binary::BitAnd:
  case Binary::BitOr:
  case Binary::BitXor:
    if (is_floating(in))
      no_loop(binary_name(op));
    return in;
  case Binary::LeftShift:
  case Binary::RightShift:
    if (is_floating(in))
      no_loop(binary_name(op));
    return in == NpType::Bool ? NpType::Int8 : in;
  case Binary::Arctan2:
  case Binary::Hypot:
  case Binary::Copysign:
    return float_loop(in);
  default: // comparisons and logical ops
    return NpType::Bool;
  }
}

NpType unary_output(Unary op, NpType in) {
  switch (op) {
  case Unary::Negative:
    if (in == NpType::Bool)
      raise_python("TypeError", "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator "
                                "or the logical_not function instead.");
    return in;
  case Unary::Positive:
  case Unary::Absolute:
    return in;
  case Unary::Invert:
    if (is_floating(in))
      no_loop("invert");
    return in;
  case Unary::Sign:
    if (in == NpType::Bool)
      no_loop("sign");
    return in;
  case Unary::Square:
  case Unary::Reciprocal:
    return in == NpType::Bool ? NpType::Int8 : in;
  case Unary::LogicalNot:
  case Unary::IsNan:
  case Unary::IsInf:
  case Unary::IsFinite:
  case Unary::Signbit:
    return NpType::Bool;
  default:
    return float_loop(in);
  }
}

Scalar apply(Binary op, const Scalar &a, const Scalar &b, NpType in) {
  NpType out = binary_output(op, in);
  switch (op) {
  case Binary::Equal:
  case Binary::NotEqual:
  case Binary::Less:
  case Binary::LessEqual:
  case Binary::Greater:
  case Binary::GreaterEqual:
    return Scalar::of_int(NpType::Bool, compare(op, a, b, in));
  case Binary::LogicalAnd:
    return Scalar::of_int(NpType::Bool, a.truthy() && b.truthy());
  case Binary::LogicalOr:
    return Scalar::of_int(NpType::Bool, a.truthy() || b.truthy());
  case Binary::LogicalXor:
    return Scalar::of_int(NpType::Bool, a.truthy() != b.truthy());
  default:
    break;
  }
  if (is_floating(out) || is_floating(in)) {
    NpType t = is_floating(in) ? in : out;
    return Scalar::of_double(out, float_binary(op, a.as_double(), b.as_double(), t));
  }
  if (in == NpType::Bool && out == NpType::Bool) {
    bool x = a.truthy(), y = b.truthy();
    switch (op) {
    case Binary::Add:
    case Binary::BitOr:
    case Binary::Maximum:
    case Binary::Fmax:
      return Scalar::of_int(out, x || y);
    case Binary::Multiply:
    case Binary::BitAnd:
    case Binary::Minimum:
    case Binary::Fmin:
      return Scalar::of_int(out, x && y);
    case Binary::BitXor:
      return Scalar::of_int(out, x != y);
    default:
      break;
    }
  }
  // Integers (a bool input promoted to int8 for //, %, **, shifts).
  unsigned bits = bits_of(out);
  if (is_unsigned_int(out)) {
    std::uint64_t x = is_unsigned_int(a.type) ? a.u : static_cast<std::uint64_t>(a.i);
    std::uint64_t y = is_unsigned_int(b.type) ? b.u : static_cast<std::uint64_t>(b.i);
    switch (op) {
    case Binary::Add:
      return Scalar::of_uint(out, x + y);
    case Binary::Subtract:
      return Scalar::of_uint(out, x - y);
    case Binary::Multiply:
      return Scalar::of_uint(out, x * y);
    case Binary::FloorDivide:
      return Scalar::of_uint(out, y == 0 ? 0 : x / y);
    case Binary::Remainder:
    case Binary::Fmod:
      return Scalar::of_uint(out, y == 0 ? 0 : x % y);
    case Binary::Power: {
      std::uint64_t r = 1;
      for (std::uint64_t base = x, e = y; e; e >>= 1, base *= base)
        if (e & 1)
          r *= base;
      return Scalar::of_uint(out, r);
    }
    case Binary::Maximum:
    case Binary::Fmax:
      return Scalar::of_uint(out, std::max(x, y));
    case Binary::Minimum:
    case Binary::Fmin:
      return Scalar::of_uint(out, std::min(x, y));
    case Binary::BitAnd:
      return Scalar::of_uint(out, x & y);
    case Binary::BitOr:
      return Scalar::of_uint(out, x | y);
    case Binary::BitXor:
      return Scalar::of_uint(out, x ^ y);
    case Binary::LeftShift:
      return Scalar::of_uint(out, y < bits ? x << y : 0);
    case Binary::RightShift:
      return Scalar::of_uint(out, y < bits ? x >> y : 0);
    default:
      break;
    }
  } else {
    std::int64_t x = is_unsigned_int(a.type) ? static_cast<std::int64_t>(a.u) : a.i;
    std::int64_t y = is_unsigned_int(b.type) ? static_cast<std::int64_t>(b.u) : b.i;
    auto ux = static_cast<std::uint64_t>(x), uy = static_cast<std::uint64_t>(y);
    switch (op) {
    case Binary::Add:
      return Scalar::of_uint(out, ux + uy);
    case Binary::Subtract:
      return Scalar::of_uint(out, ux - uy);
    case Binary::Multiply:
      return Scalar::of_uint(out, ux * uy);
    case Binary::FloorDivide: {
      if (y == 0)
        return Scalar::of_int(out, 0);
      if (y == -1)
        return Scalar::of_uint(out, 0 - ux); // INT_MIN // -1 wraps, as in NumPy
      std::int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0)))
        --q;
      return Scalar::of_int(out, q);
    }
    case Binary::Remainder: {
      if (y == 0 || y == -1)
        return Scalar::of_int(out, 0);
      std::int64_t r = x % y;
      if (r != 0 && ((r < 0) != (y < 0)))
        r += y;
      return Scalar::of_int(out, r);
    }
    case Binary::Fmod:
      return Scalar::of_int(out, y == 0 || y == -1 ? 0 : x % y);
    case Binary::Power: {
      if (y < 0)
        raise_python("ValueError", "Integers to negative integer powers are not allowed.");
      std::uint64_t r = 1;
      for (std::uint64_t base = ux, e = uy; e; e >>= 1, base *= base)
        if (e & 1)
          r *= base;
      return Scalar::of_uint(out, r);
    }
    case Binary::Maximum:
    case Binary::Fmax:
      return Scalar::of_int(out, std::max(x, y));
    case Binary::Minimum:
    case Binary::Fmin:
      return Scalar::of_int(out, std::min(x, y));
    case Binary::BitAnd:
      return Scalar::of_uint(out, ux & uy);
    case Binary::BitOr:
      return Scalar::of_uint(out, ux | uy);
    case Binary::BitXor:
      return Scalar::of_uint(out, ux ^ uy);
    case Binary::LeftShift:
      return Scalar::of_uint(out, y >= 0 && static_cast<std::uint64_t>(y) < bits ? ux << y : 0);
    case Binary::RightShift:
      if (y >= 0 && static_cast<std::uint64_t>(y) < bits)
        return Scalar::of_int(out, x >> y);
      return Scalar::of_int(out, x < 0 ? -1 : 0);
    default:
      break;
    }
  }
  no_loop(binary_name(op));
}

Scalar apply(Unary op, const Scalar &a, NpType in) {
  NpType out = unary_output(op, in);
  switch (op) {
  case Unary::LogicalNot:
    return Scalar::of_int(NpType::Bool, !a.truthy());
  case Unary::IsNan:
    return Scalar::of_int(NpType::Bool, is_floating(in) && std::isnan(a.f));
  case Unary::IsInf:
    return Scalar::of_int(NpType::Bool, is_floating(in) && std::isinf(a.f));
  case Unary::IsFinite:
    return Scalar::of_int(NpType::Bool, !is_floating(in) || std::isfinite(a.f));
  case Unary::Signbit:
    return Scalar::of_int(NpType::Bool, is_floating(in) ? std::signbit(a.f) : is_signed_int(in) && a.i < 0);
  default:
    break;
  }
  if (is_floating(out))
    return Scalar::of_double(out, float_unary(op, a.as_double(), out));
  if (out == NpType::Bool) {
    switch (op) {
    case Unary::Invert:
      return Scalar::of_int(out, !a.truthy());
    default:
      return Scalar::of_int(out, a.truthy());
    }
  }
  std::int64_t x = is_unsigned_int(a.type) ? static_cast<std::int64_t>(a.u) : a.i;
  auto ux = static_cast<std::uint64_t>(x);
  switch (op) {
  case Unary::Negative:
    return Scalar::of_uint(out, 0 - ux);
  case Unary::Positive:
    return Scalar::of_uint(out, ux);
  case Unary::Absolute:
    return is_unsigned_int(out) ? Scalar::of_uint(out, ux) : Scalar::of_uint(out, x < 0 ? 0 - ux : ux);
  case Unary::Invert:
    return Scalar::of_uint(out, ~ux);
  case Unary::Sign:
    return Scalar::of_int(out, is_unsigned_int(out) ? (ux != 0) : (x > 0) - (x < 0));
  case Unary::Square:
    return Scalar::of_uint(out, ux * ux);
  case Unary::Reciprocal:
    // integer 1 / x, truncated (NumPy's integer reciprocal); 1 / 0 is 0 here (NumPy: undefined)
    return Scalar::of_int(out, x == 0 ? 0 : 1 / x);
  default:
    break;
  }
  no_loop(unary_name(op));
}

} // namespace nkicc::trace::numpy
