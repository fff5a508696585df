// NumPy's element types: names, sizes, the promotion rules of NumPy 1.24 (numpy/core/src/
// multiarray/convert_datatype.c: promote_types, min_scalar_type, result_type with value-based
// casting), and element conversion with NumPy's rounding and wrap-around.
#include "numpy_types.h"

#include "nkicc/cache/py_repr.h"
#include "unmodelled.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace nkicc::trace::numpy {

namespace {
struct TypeInfo {
  NpType type;
  std::string_view name;
  std::size_t size;
  char kind;
  char chr;
};
constexpr TypeInfo kTypes[] = {
    {NpType::Bool, "bool", 1, 'b', '?'},
    {NpType::Int8, "int8", 1, 'i', 'b'},
    {NpType::Int16, "int16", 2, 'i', 'h'},
    {NpType::Int32, "int32", 4, 'i', 'i'},
    {NpType::Int64, "int64", 8, 'i', 'l'},
    {NpType::UInt8, "uint8", 1, 'u', 'B'},
    {NpType::UInt16, "uint16", 2, 'u', 'H'},
    {NpType::UInt32, "uint32", 4, 'u', 'I'},
    {NpType::UInt64, "uint64", 8, 'u', 'L'},
    {NpType::Float16, "float16", 2, 'f', 'e'},
    {NpType::Float32, "float32", 4, 'f', 'f'},
    {NpType::Float64, "float64", 8, 'f', 'd'},
    {NpType::BFloat16, "bfloat16", 2, 'V', 'E'},
    {NpType::TFloat32, "tfloat32", 4, 'V', 'T'},
    {NpType::Float8E4M3, "float8_e4m3", 1, 'V', '4'},
    {NpType::Float8E4M3FN, "float8_e4m3fn", 1, 'V', '4'},
    {NpType::Float8E5M2, "float8_e5m2", 1, 'V', '5'},
    {NpType::Float8E5M2X4, "float8_e5m2_x4", 4, 'V', 'V'},
    {NpType::Float8E4M3FNX4, "float8_e4m3fn_x4", 4, 'V', 'V'},
    {NpType::Float4E2M1FNX4, "float4_e2m1fn_x4", 2, 'V', 'V'},
    {NpType::Float8E8M0FNU, "float8_e8m0fnu", 1, 'V', 'V'},
};
const TypeInfo &info(NpType t) { return kTypes[static_cast<std::size_t>(t)]; }
} // namespace

std::string_view type_name(NpType t) { return info(t).name; }
std::size_t item_size(NpType t) { return info(t).size; }
char kind_char(NpType t) { return is_floating(t) && info(t).kind == 'V' ? 'V' : info(t).kind; }
char type_char(NpType t) { return info(t).chr; }
bool is_bool(NpType t) { return t == NpType::Bool; }
bool is_signed_int(NpType t) { return t >= NpType::Int8 && t <= NpType::Int64; }
bool is_unsigned_int(NpType t) { return t >= NpType::UInt8 && t <= NpType::UInt64; }
bool is_integer(NpType t) { return is_signed_int(t) || is_unsigned_int(t); }
bool is_floating(NpType t) { return t >= NpType::Float16; }
bool computes(NpType t) { return t <= NpType::BFloat16; }

std::optional<NpType> parse_type(std::string_view name) {
  static const std::pair<std::string_view, NpType> aliases[] = {
      {"bool", NpType::Bool},
      {"bool_", NpType::Bool},
      {"bool8", NpType::Bool},
      {"?", NpType::Bool},
      {"b1", NpType::Bool},
      {"int8", NpType::Int8},
      {"i1", NpType::Int8},
      {"byte", NpType::Int8},
      {"int16", NpType::Int16},
      {"i2", NpType::Int16},
      {"short", NpType::Int16},
      {"int32", NpType::Int32},
      {"i4", NpType::Int32},
      {"intc", NpType::Int32},
      {"int64", NpType::Int64},
      {"i8", NpType::Int64},
      {"int", NpType::Int64},
      {"int_", NpType::Int64},
      {"intp", NpType::Int64},
      {"long", NpType::Int64},
      {"longlong", NpType::Int64},
      {"uint8", NpType::UInt8},
      {"u1", NpType::UInt8},
      {"ubyte", NpType::UInt8},
      {"uint16", NpType::UInt16},
      {"u2", NpType::UInt16},
      {"ushort", NpType::UInt16},
      {"uint32", NpType::UInt32},
      {"u4", NpType::UInt32},
      {"uintc", NpType::UInt32},
      {"uint64", NpType::UInt64},
      {"u8", NpType::UInt64},
      {"uint", NpType::UInt64},
      {"uintp", NpType::UInt64},
      {"float16", NpType::Float16},
      {"f2", NpType::Float16},
      {"half", NpType::Float16},
      {"e", NpType::Float16},
      {"float32", NpType::Float32},
      {"f4", NpType::Float32},
      {"single", NpType::Float32},
      {"f", NpType::Float32},
      {"float64", NpType::Float64},
      {"f8", NpType::Float64},
      {"double", NpType::Float64},
      {"float", NpType::Float64},
      {"float_", NpType::Float64},
      {"d", NpType::Float64},
      {"bfloat16", NpType::BFloat16},
      {"tfloat32", NpType::TFloat32},
      {"float8_e4m3", NpType::Float8E4M3},
      {"float8_e4m3fn", NpType::Float8E4M3FN},
      {"float8_e5m2", NpType::Float8E5M2},
      {"float8_e5m2_x4", NpType::Float8E5M2X4},
      {"float8_e4m3fn_x4", NpType::Float8E4M3FNX4},
      {"float4_e2m1fn_x4", NpType::Float4E2M1FNX4},
      {"float8_e8m0fnu", NpType::Float8E8M0FNU},
  };
  // NumPy accepts a byte-order prefix on the short codes ('<f4').
  if (name.size() > 1 && (name[0] == '<' || name[0] == '=' || name[0] == '|'))
    name.remove_prefix(1);
  for (const auto &[alias, t] : aliases)
    if (alias == name)
      return t;
  return std::nullopt;
}

std::optional<DType> to_nki(NpType t) {
  switch (t) {
  case NpType::Bool:
    return DType::Bool;
  case NpType::Int8:
    return DType::Int8;
  case NpType::Int16:
    return DType::Int16;
  case NpType::Int32:
    return DType::Int32;
  case NpType::UInt8:
    return DType::UInt8;
  case NpType::UInt16:
    return DType::UInt16;
  case NpType::UInt32:
    return DType::UInt32;
  case NpType::Float16:
    return DType::Float16;
  case NpType::Float32:
    return DType::Float32;
  case NpType::BFloat16:
    return DType::BFloat16;
  case NpType::TFloat32:
    return DType::TFloat32;
  case NpType::Float8E4M3:
    return DType::Float8E4M3;
  case NpType::Float8E4M3FN:
    return DType::Float8E4M3FN;
  case NpType::Float8E5M2:
    return DType::Float8E5M2;
  case NpType::Float8E5M2X4:
    return DType::Float8E5M2X4;
  case NpType::Float8E4M3FNX4:
    return DType::Float8E4M3FNX4;
  case NpType::Float4E2M1FNX4:
    return DType::Float4E2M1FNX4;
  case NpType::Float8E8M0FNU:
    return DType::Float8E8M0FNU;
  default:
    return std::nullopt;
  }
}

NpType from_nki(DType d) {
  switch (d) {
  case DType::Float32:
    return NpType::Float32;
  case DType::Float16:
    return NpType::Float16;
  case DType::BFloat16:
    return NpType::BFloat16;
  case DType::TFloat32:
    return NpType::TFloat32;
  case DType::Float8E4M3:
    return NpType::Float8E4M3;
  case DType::Float8E4M3FN:
    return NpType::Float8E4M3FN;
  case DType::Float8E5M2:
    return NpType::Float8E5M2;
  case DType::Int8:
    return NpType::Int8;
  case DType::Int16:
    return NpType::Int16;
  case DType::Int32:
    return NpType::Int32;
  case DType::UInt8:
    return NpType::UInt8;
  case DType::UInt16:
    return NpType::UInt16;
  case DType::UInt32:
    return NpType::UInt32;
  case DType::Bool:
    return NpType::Bool;
  case DType::Float8E5M2X4:
    return NpType::Float8E5M2X4;
  case DType::Float8E4M3FNX4:
    return NpType::Float8E4M3FNX4;
  case DType::Float4E2M1FNX4:
    return NpType::Float4E2M1FNX4;
  case DType::Float8E8M0FNU:
    return NpType::Float8E8M0FNU;
  }
  return NpType::Float32;
}

// ---- promotion ----------------------------------------------------------------------------------

bool can_cast_safely(NpType from, NpType to) {
  if (from == to || from == NpType::Bool)
    return true;
  if (to == NpType::Bool || !computes(from) || !computes(to))
    return false;
  std::size_t fs = item_size(from), ts = item_size(to);
  if (is_signed_int(from)) {
    if (is_signed_int(to))
      return ts >= fs;
    if (to == NpType::Float16 || to == NpType::BFloat16)
      return fs == 1;
    if (to == NpType::Float32)
      return fs <= 2;
    return to == NpType::Float64;
  }
  if (is_unsigned_int(from)) {
    if (is_unsigned_int(to))
      return ts >= fs;
    if (is_signed_int(to))
      return ts > fs;
    if (to == NpType::Float16 || to == NpType::BFloat16)
      return fs == 1;
    if (to == NpType::Float32)
      return fs <= 2;
    return to == NpType::Float64;
  }
  // floating to floating: wider, and bfloat16 and float16 only through float32
  if (!is_floating(to))
    return false;
  if (from == NpType::Float16)
    return to == NpType::Float32 || to == NpType::Float64;
  if (from == NpType::BFloat16)
    return to == NpType::Float32 || to == NpType::Float64;
  if (from == NpType::Float32)
    return to == NpType::Float64;
  return false;
}

NpType promote_types(NpType a, NpType b) {
  if (a == b)
    return a;
  if (!computes(a) || !computes(b))
    pylib::raise_unmodelled("np.promote_types", "for " + std::string(type_name(computes(a) ? b : a)));
  static constexpr NpType order[] = {NpType::Bool,   NpType::Int8,    NpType::UInt8,    NpType::Int16,
                                     NpType::UInt16, NpType::Int32,   NpType::UInt32,   NpType::Int64,
                                     NpType::UInt64, NpType::Float16, NpType::BFloat16, NpType::Float32,
                                     NpType::Float64};
  for (NpType t : order)
    if (can_cast_safely(a, t) && can_cast_safely(b, t))
      return t;
  return NpType::Float64;
}

namespace {

/// NumPy's dtype_kind_to_simplified_ordering: bool 0, integers 1, floats 2.
int kind_order(NpType t) { return is_bool(t) ? 0 : is_integer(t) ? 1 : 2; }

NpType unsigned_to_signed(NpType t) {
  switch (t) {
  case NpType::UInt8:
    return NpType::Int8;
  case NpType::UInt16:
    return NpType::Int16;
  case NpType::UInt32:
    return NpType::Int32;
  case NpType::UInt64:
    return NpType::Int64;
  default:
    return t;
  }
}

/// min_scalar_type_num(): the smallest type holding a scalar's value; `small` when a positive
/// integer also fits the signed type of that size.
NpType min_scalar_type(const Scalar &s, bool &small) {
  small = false;
  if (is_bool(s.type))
    return NpType::Bool;
  if (is_integer(s.type)) {
    bool negative = is_signed_int(s.type) && s.i < 0;
    if (!negative) {
      std::uint64_t v = is_signed_int(s.type) ? static_cast<std::uint64_t>(s.i) : s.u;
      if (v <= 0xFF) {
        small = v <= 0x7F;
        return NpType::UInt8;
      }
      if (v <= 0xFFFF) {
        small = v <= 0x7FFF;
        return NpType::UInt16;
      }
      if (v <= 0xFFFFFFFFULL) {
        small = v <= 0x7FFFFFFFULL;
        return NpType::UInt32;
      }
      small = v <= 0x7FFFFFFFFFFFFFFFULL;
      return NpType::UInt64;
    }
    if (s.i >= -128)
      return NpType::Int8;
    if (s.i >= -32768)
      return NpType::Int16;
    if (s.i >= -2147483648LL)
      return NpType::Int32;
    return NpType::Int64;
  }
  if (s.type == NpType::Float16)
    return NpType::Float16;
  if (s.type == NpType::Float32 || s.type == NpType::Float64) {
    double v = s.f;
    if ((v > -65000 && v < 65000) || !std::isfinite(v))
      return NpType::Float16;
    if (s.type == NpType::Float64 && v > -3.4e38 && v < 3.4e38)
      return NpType::Float32;
  }
  return s.type;
}

NpType promote_small(NpType t1, NpType t2, bool small1, bool small2) {
  if (small1) {
    if (!is_bool(t2) && !is_unsigned_int(t2))
      return promote_types(unsigned_to_signed(t1), t2);
    return promote_types(t1, t2);
  }
  if (small2) {
    if (!is_bool(t1) && !is_unsigned_int(t1))
      return promote_types(t1, unsigned_to_signed(t2));
    return promote_types(t1, t2);
  }
  return promote_types(t1, t2);
}

} // namespace

NpType result_type(const std::vector<Operand> &operands) {
  if (operands.size() == 1)
    return operands[0].type;
  int max_scalar = -1, max_array = -1;
  bool any_array = false, legacy = true;
  for (const Operand &o : operands) {
    legacy = legacy && o.type <= NpType::Float64;
    if (o.scalar) {
      max_scalar = std::max(max_scalar, kind_order(o.type));
    } else {
      any_array = true;
      max_array = std::max(max_array, kind_order(o.type));
    }
  }
  bool use_min_scalar = legacy && any_array && max_array >= max_scalar;
  if (!use_min_scalar) {
    NpType t = operands[0].type;
    for (std::size_t k = 1; k < operands.size(); ++k)
      t = promote_types(t, operands[k].type);
    return t;
  }
  NpType ret = NpType::Bool;
  bool ret_small = false, first = true;
  for (const Operand &o : operands) {
    bool small = false;
    NpType t = o.scalar ? min_scalar_type(o.value, small) : o.type;
    if (first) {
      ret = t;
      ret_small = small;
      first = false;
      continue;
    }
    ret = promote_small(t, ret, small, ret_small);
    ret_small = small && ret_small;
  }
  return ret;
}

// ---- 16-bit floats ------------------------------------------------------------------------------

namespace {
/// Rounds m * 2^-shift to an integer, to nearest with ties to even.
std::uint64_t round_shift(std::uint64_t m, int shift) {
  if (shift <= 0)
    return m << -shift;
  if (shift >= 64)
    return (shift == 64 && m > (std::uint64_t{1} << 63)) ? 1 : 0;
  std::uint64_t q = m >> shift, rem = m & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  return q;
}
} // namespace

std::uint16_t float16_bits(double x) {
  std::uint64_t b = std::bit_cast<std::uint64_t>(x);
  auto sign = static_cast<std::uint16_t>((b >> 48) & 0x8000);
  int exp = static_cast<int>((b >> 52) & 0x7FF);
  std::uint64_t mant = b & ((std::uint64_t{1} << 52) - 1);
  if (exp == 0x7FF)
    return static_cast<std::uint16_t>(sign | (mant ? 0x7E00 : 0x7C00));
  if (exp == 0 && mant == 0)
    return sign;
  // value = m * 2^(e - 52) with m including the implicit bit
  std::uint64_t m = exp ? (mant | (std::uint64_t{1} << 52)) : mant;
  int e = exp ? exp - 1023 : -1022;
  // A half is h * 2^(E - 10), normal when 1024 <= h < 2048 and -14 <= E <= 15.
  int half_e = e;
  if (half_e < -14) {
    // subnormal: h * 2^-24
    std::uint64_t h = round_shift(m, 52 - (e + 24));
    return static_cast<std::uint16_t>(sign | h); // may round up into the smallest normal
  }
  std::uint64_t h = round_shift(m, 42);
  if (h >= 2048) {
    h >>= 1;
    ++half_e;
  }
  if (half_e > 15)
    return static_cast<std::uint16_t>(sign | 0x7C00);
  return static_cast<std::uint16_t>(sign | ((half_e + 15) << 10) | (h & 0x3FF));
}

double float16_from_bits(std::uint16_t bits) {
  int sign = bits & 0x8000 ? -1 : 1;
  int exp = (bits >> 10) & 0x1F;
  int mant = bits & 0x3FF;
  if (exp == 0x1F)
    return mant ? NAN : sign * INFINITY;
  if (exp == 0)
    return sign * std::ldexp(static_cast<double>(mant), -24);
  return sign * std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
}

double round_to_float16(double x) { return float16_from_bits(float16_bits(x)); }

std::uint16_t bfloat16_bits(double x) {
  // ml_dtypes converts a double through float32, then rounds to the top 16 bits.
  auto f = static_cast<float>(x);
  std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f))
    return static_cast<std::uint16_t>((b >> 16) | 0x40);
  std::uint32_t rounding = 0x7FFF + ((b >> 16) & 1);
  return static_cast<std::uint16_t>((b + rounding) >> 16);
}
double bfloat16_from_bits(std::uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}
double round_to_bfloat16(double x) { return bfloat16_from_bits(bfloat16_bits(x)); }

// ---- scalars ------------------------------------------------------------------------------------

namespace {
std::int64_t wrap_signed(NpType t, std::uint64_t v) {
  switch (t) {
  case NpType::Int8:
    return static_cast<std::int8_t>(static_cast<std::uint8_t>(v));
  case NpType::Int16:
    return static_cast<std::int16_t>(static_cast<std::uint16_t>(v));
  case NpType::Int32:
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
  default:
    return static_cast<std::int64_t>(v);
  }
}
std::uint64_t wrap_unsigned(NpType t, std::uint64_t v) {
  switch (t) {
  case NpType::UInt8:
    return static_cast<std::uint8_t>(v);
  case NpType::UInt16:
    return static_cast<std::uint16_t>(v);
  case NpType::UInt32:
    return static_cast<std::uint32_t>(v);
  default:
    return v;
  }
}
/// A double truncated to an integer as x86's conversion does, made defined: out of range
/// (or NaN) is the most negative value of the 32- or 64-bit conversion.
std::uint64_t truncate_to_bits(double x, NpType t) {
  bool wide = item_size(t) == 8;
  if (wide) {
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) {
      if (is_unsigned_int(t) && x >= 0 && x < 18446744073709551616.0)
        return static_cast<std::uint64_t>(x);
      return std::uint64_t{1} << 63;
    }
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
  }
  if (!(x >= -2147483648.0 && x < 2147483648.0)) {
    if (is_unsigned_int(t) && x >= 0 && x < 4294967296.0)
      return static_cast<std::uint64_t>(x);
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(-2147483648LL));
  }
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
}
} // namespace

double Scalar::as_double() const {
  if (is_floating(type))
    return f;
  if (is_unsigned_int(type))
    return static_cast<double>(u);
  return static_cast<double>(i);
}

bool Scalar::truthy() const {
  if (is_floating(type))
    return f != 0.0;
  if (is_unsigned_int(type))
    return u != 0;
  return i != 0;
}

Scalar Scalar::of_int(NpType t, std::int64_t v) {
  if (is_floating(t))
    return of_double(t, static_cast<double>(v));
  return of_uint(t, static_cast<std::uint64_t>(v));
}

Scalar Scalar::of_uint(NpType t, std::uint64_t v) {
  Scalar s;
  s.type = t;
  if (is_bool(t))
    s.i = v != 0;
  else if (is_signed_int(t))
    s.i = wrap_signed(t, v);
  else if (is_unsigned_int(t))
    s.u = wrap_unsigned(t, v);
  else
    return of_double(t, static_cast<double>(v));
  return s;
}

Scalar Scalar::of_double(NpType t, double v) {
  Scalar s;
  s.type = t;
  switch (t) {
  case NpType::Bool:
    s.i = v != 0.0;
    return s;
  case NpType::Float16:
    s.f = round_to_float16(v);
    return s;
  case NpType::Float32:
  case NpType::TFloat32:
    s.f = static_cast<double>(static_cast<float>(v));
    return s;
  case NpType::Float64:
    s.f = v;
    return s;
  case NpType::BFloat16:
    s.f = round_to_bfloat16(v);
    return s;
  case NpType::Float8E4M3:
  case NpType::Float8E4M3FN:
  case NpType::Float8E5M2:
  case NpType::Float8E5M2X4:
  case NpType::Float8E4M3FNX4:
  case NpType::Float4E2M1FNX4:
  case NpType::Float8E8M0FNU:
    if (v != 0.0)
      pylib::raise_unmodelled(std::string("np.") + std::string(type_name(t)), "values other than zero");
    s.f = 0.0;
    return s;
  default:
    return of_uint(t, truncate_to_bits(v, t));
  }
}

Scalar Scalar::cast(NpType to) const {
  if (is_floating(type))
    return of_double(to, f);
  if (is_unsigned_int(type))
    return of_uint(to, u);
  if (is_floating(to))
    return of_double(to, static_cast<double>(i));
  return of_uint(to, static_cast<std::uint64_t>(i));
}

void store(NpType t, const Scalar &s, unsigned char *out) {
  switch (t) {
  case NpType::Bool:
    out[0] = s.i != 0;
    return;
  case NpType::Int8:
  case NpType::Int16:
  case NpType::Int32:
  case NpType::Int64: {
    auto v = static_cast<std::uint64_t>(s.i);
    std::memcpy(out, &v, item_size(t));
    return;
  }
  case NpType::UInt8:
  case NpType::UInt16:
  case NpType::UInt32:
  case NpType::UInt64:
    std::memcpy(out, &s.u, item_size(t));
    return;
  case NpType::Float16: {
    std::uint16_t b = float16_bits(s.f);
    std::memcpy(out, &b, 2);
    return;
  }
  case NpType::BFloat16: {
    std::uint16_t b = bfloat16_bits(s.f);
    std::memcpy(out, &b, 2);
    return;
  }
  case NpType::Float32:
  case NpType::TFloat32: {
    auto f = static_cast<float>(s.f);
    std::memcpy(out, &f, 4);
    return;
  }
  case NpType::Float64:
    std::memcpy(out, &s.f, 8);
    return;
  case NpType::Float8E4M3:
  case NpType::Float8E4M3FN:
  case NpType::Float8E5M2:
  case NpType::Float8E5M2X4:
  case NpType::Float8E4M3FNX4:
  case NpType::Float4E2M1FNX4:
  case NpType::Float8E8M0FNU:
    std::memset(out, 0, item_size(t)); // of_double() admits only zero
    return;
  }
}

Scalar load(NpType t, const unsigned char *in) {
  Scalar s;
  s.type = t;
  switch (t) {
  case NpType::Bool:
    s.i = in[0] != 0;
    return s;
  case NpType::Int8:
  case NpType::Int16:
  case NpType::Int32:
  case NpType::Int64: {
    std::uint64_t v = 0;
    std::memcpy(&v, in, item_size(t));
    s.i = wrap_signed(t, v);
    return s;
  }
  case NpType::UInt8:
  case NpType::UInt16:
  case NpType::UInt32:
  case NpType::UInt64:
    std::memcpy(&s.u, in, item_size(t));
    return s;
  case NpType::Float16: {
    std::uint16_t b;
    std::memcpy(&b, in, 2);
    s.f = float16_from_bits(b);
    return s;
  }
  case NpType::BFloat16: {
    std::uint16_t b;
    std::memcpy(&b, in, 2);
    s.f = bfloat16_from_bits(b);
    return s;
  }
  case NpType::Float32:
  case NpType::TFloat32: {
    float f;
    std::memcpy(&f, in, 4);
    s.f = f;
    return s;
  }
  case NpType::Float64:
    std::memcpy(&s.f, in, 8);
    return s;
  case NpType::Float8E4M3:
  case NpType::Float8E4M3FN:
  case NpType::Float8E5M2:
  case NpType::Float8E5M2X4:
  case NpType::Float8E4M3FNX4:
  case NpType::Float4E2M1FNX4:
  case NpType::Float8E8M0FNU:
    s.f = 0.0;
    return s;
  }
  return s;
}

// ---- float repr ---------------------------------------------------------------------------------

std::string float_repr(NpType t, double x) {
  if (t == NpType::Float64) {
    std::string out;
    append_py_float_repr(out, x);
    return out;
  }
  x = Scalar::of_double(t, x).f; // the value of the type nearest to x
  if (std::isnan(x))
    return "nan";
  if (std::isinf(x))
    return x > 0 ? "inf" : "-inf";
  if (x == 0.0)
    return std::signbit(x) ? "-0.0" : "0.0";
  // The shortest digits that read back as the same value of the type (Dragon4's "unique").
  char buf[64];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, x);
    if (Scalar::of_double(t, std::strtod(buf, nullptr)).f == x)
      break;
  }
  std::string s = buf;
  bool negative = s[0] == '-';
  if (negative)
    s.erase(0, 1);
  std::size_t e = s.find('e');
  int exp10 = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (std::size_t k = 0; k < e; ++k)
    if (s[k] != '.')
      digits += s[k];
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  std::string out = negative ? "-" : "";
  double ax = std::fabs(x);
  if (ax > 1e-4 && ax < 1e16) {
    // Positional, with at least one digit after the point.
    if (exp10 >= 0) {
      std::string int_part = digits.substr(0, std::min<std::size_t>(digits.size(), static_cast<std::size_t>(exp10) + 1));
      while (int_part.size() < static_cast<std::size_t>(exp10) + 1)
        int_part += '0';
      std::string frac = digits.size() > int_part.size() ? digits.substr(int_part.size()) : "0";
      return out + int_part + "." + frac;
    }
    return out + "0." + std::string(static_cast<std::size_t>(-exp10 - 1), '0') + digits;
  }
  // Scientific: 1e+16, 1.5e-05.
  out += digits.substr(0, 1);
  if (digits.size() > 1)
    out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  return out + ebuf;
}

} // namespace nkicc::trace::numpy
