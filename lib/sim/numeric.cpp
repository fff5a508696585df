#include "nkicc/sim/numeric.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace nkicc::sim {
namespace {

/// A binary floating-point format narrower than double.
struct Format {
  int mantissa_bits;
  int exponent_bits;
  int bias;
  double max_finite;
  bool has_inf;
  bool saturate; ///< a finite overflow saturates (float8) instead of becoming inf
  bool has_nan = true; ///< float4_e2m1fn has no NaN either
};

constexpr Format kFloat32{23, 8, 127, FLT_MAX, true, false};
constexpr Format kTFloat32{10, 8, 127, 3.4011621342146535e38 /* (2 - 2^-10) * 2^127 */, true, false};
constexpr Format kBFloat16{7, 8, 127, 3.3895313892515355e38 /* (2 - 2^-7) * 2^127 */, true, false};
constexpr Format kFloat16{10, 5, 15, 65504.0, true, false};
constexpr Format kE4M3{3, 4, 7, 240.0, true, true};
constexpr Format kE4M3FN{3, 4, 7, 448.0, false, true};
constexpr Format kE5M2{2, 5, 15, 57344.0, true, true};
constexpr Format kE2M1FN{1, 2, 1, 6.0, false, true, false};

const Format *format_of(DType d) {
  switch (d) {
  case DType::Float32:
    return &kFloat32;
  case DType::TFloat32:
    return &kTFloat32;
  case DType::BFloat16:
    return &kBFloat16;
  case DType::Float16:
    return &kFloat16;
  case DType::Float8E4M3:
    return &kE4M3;
  case DType::Float8E4M3FN:
    return &kE4M3FN;
  case DType::Float8E5M2:
    return &kE5M2;
  default:
    return nullptr;
  }
}

double round_float(const Format &f, double v) {
  if (std::isnan(v))
    return v;
  if (std::isinf(v))
    return f.has_inf ? v : std::numeric_limits<double>::quiet_NaN();
  double a = std::fabs(v);
  if (a == 0)
    return v;
  int ex = 0;
  std::frexp(a, &ex); // a = m * 2^ex with m in [0.5, 1): its leading bit is 2^(ex - 1)
  int emin = 1 - f.bias;
  int quantum = std::max(ex - 1, emin) - f.mantissa_bits;
  // nearbyint rounds half to even in the default rounding mode; the scaling is exact.
  double r = std::ldexp(std::nearbyint(std::ldexp(a, -quantum)), quantum);
  if (r > f.max_finite)
    r = f.saturate ? f.max_finite : std::numeric_limits<double>::infinity();
  return std::copysign(r, v);
}

struct IntRange {
  double lo, hi;
};

IntRange range_of(DType d) {
  switch (d) {
  case DType::Int8:
    return {-128.0, 127.0};
  case DType::Int16:
    return {-32768.0, 32767.0};
  case DType::Int32:
    return {-2147483648.0, 2147483647.0};
  case DType::UInt8:
    return {0.0, 255.0};
  case DType::UInt16:
    return {0.0, 65535.0};
  case DType::UInt32:
  case DType::Float8E5M2X4:
  case DType::Float8E4M3FNX4:
    return {0.0, 4294967295.0};
  case DType::Float4E2M1FNX4:
    return {0.0, 65535.0};
  default:
    return {0.0, 1.0};
  }
}

std::uint64_t encode_minifloat(const Format &f, double v) {
  // v is already rounded to the format.
  std::uint64_t sign = std::signbit(v) ? 1 : 0;
  int total = 1 + f.exponent_bits + f.mantissa_bits;
  std::uint64_t sign_bit = sign << (total - 1);
  std::uint64_t exp_all = (std::uint64_t{1} << f.exponent_bits) - 1;
  if (std::isnan(v)) {
    // float8_e4m3fn's only NaN is all ones; elsewhere the quiet NaN of the format.
    std::uint64_t mant = f.has_inf ? (std::uint64_t{1} << (f.mantissa_bits - 1)) : ((std::uint64_t{1} << f.mantissa_bits) - 1);
    return sign_bit | (exp_all << f.mantissa_bits) | mant;
  }
  if (std::isinf(v))
    return sign_bit | (exp_all << f.mantissa_bits);
  double a = std::fabs(v);
  if (a == 0)
    return sign_bit;
  int ex = 0;
  std::frexp(a, &ex);
  int e = ex - 1;
  int emin = 1 - f.bias;
  if (e < emin) {
    auto mant = static_cast<std::uint64_t>(std::ldexp(a, f.mantissa_bits - emin));
    return sign_bit | mant;
  }
  auto mant = static_cast<std::uint64_t>(std::ldexp(a, f.mantissa_bits - e)) - (std::uint64_t{1} << f.mantissa_bits);
  return sign_bit | (static_cast<std::uint64_t>(e + f.bias) << f.mantissa_bits) | mant;
}

double decode_minifloat(const Format &f, std::uint64_t bits) {
  int total = 1 + f.exponent_bits + f.mantissa_bits;
  bool negative = (bits >> (total - 1)) & 1;
  std::uint64_t exp_all = (std::uint64_t{1} << f.exponent_bits) - 1;
  std::uint64_t e = (bits >> f.mantissa_bits) & exp_all;
  std::uint64_t mant = bits & ((std::uint64_t{1} << f.mantissa_bits) - 1);
  double r;
  if (e == exp_all && f.has_inf) {
    r = mant == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (e == exp_all && mant == ((std::uint64_t{1} << f.mantissa_bits) - 1) && !f.has_inf && f.has_nan) {
    r = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    r = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mantissa_bits);
  } else {
    r = std::ldexp(static_cast<double>(mant + (std::uint64_t{1} << f.mantissa_bits)),
                   static_cast<int>(e) - f.bias - f.mantissa_bits);
  }
  return negative ? -r : r;
}

template <class T> void store_le(T value, unsigned char *out) { std::memcpy(out, &value, sizeof value); }
template <class T> T load_le(const unsigned char *in) {
  T value;
  std::memcpy(&value, in, sizeof value);
  return value;
}

/// float8_e8m0fnu: the power of two nearest to v (ties to the even exponent), within
/// [2^-127, 2^127]; zero is the smallest, 2^-127 (the scale of an all-zero MX group); NaN or a
/// negative value, which the format cannot hold, is NaN.
double round_e8m0(double v) {
  if (std::isnan(v) || v < 0)
    return std::numeric_limits<double>::quiet_NaN();
  if (v == 0)
    return std::ldexp(1.0, -127);
  if (std::isinf(v))
    return std::ldexp(1.0, 127);
  int ex = 0;
  double m = std::frexp(v, &ex) * 2; // v = m * 2^(ex - 1), m in [1, 2)
  int e = ex - 1;
  if (m > 1.5 || (m == 1.5 && (e & 1)))
    ++e;
  return std::ldexp(1.0, std::clamp(e, -127, 127));
}

} // namespace

std::pair<double, double> integer_limits(DType dtype) {
  IntRange r = range_of(dtype);
  return {r.lo, r.hi};
}

bool is_integer(DType d) { return format_of(d) == nullptr && d != DType::Float8E8M0FNU; }

double mx_lane(DType x4, std::uint32_t bits, int lane) {
  if (x4 == DType::Float4E2M1FNX4)
    return decode_minifloat(kE2M1FN, (bits >> (4 * lane)) & 0xfu);
  return decode_minifloat(x4 == DType::Float8E5M2X4 ? kE5M2 : kE4M3FN, (bits >> (8 * lane)) & 0xffu);
}

std::uint32_t mx_lane_bits(DType x4, double v) {
  const Format &f = x4 == DType::Float4E2M1FNX4 ? kE2M1FN : x4 == DType::Float8E5M2X4 ? kE5M2 : kE4M3FN;
  return static_cast<std::uint32_t>(encode_minifloat(f, round_float(f, v)));
}

double round_to(DType dtype, double v) {
  switch (dtype) {
  case DType::Float32:
    // The common case converts directly; only a value past float's range takes the slow path
    // (the conversion would be undefined there).
    if (std::fabs(v) <= FLT_MAX)
      return static_cast<double>(static_cast<float>(v));
    return round_float(kFloat32, v);
  case DType::BFloat16: {
    float f = static_cast<float>(v);
    if (std::fabs(v) <= FLT_MAX && static_cast<double>(f) == v) {
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
      if ((bits & 0x7f800000u) != 0x7f800000u) {
        std::memcpy(&f, &bits, 4);
        return f;
      }
    }
    return round_float(kBFloat16, v);
  }
  case DType::TFloat32:
  case DType::Float16:
  case DType::Float8E4M3:
  case DType::Float8E4M3FN:
  case DType::Float8E5M2:
    return round_float(*format_of(dtype), v);
  case DType::Bool:
    return v != 0 || std::isnan(v) ? 1.0 : 0.0;
  case DType::Float8E8M0FNU:
    return round_e8m0(v);
  case DType::Int8:
  case DType::Int16:
  case DType::Int32:
  case DType::UInt8:
  case DType::UInt16:
  case DType::UInt32:
  case DType::Float8E5M2X4: // an x4 element is its bits (mx_lane reads them)
  case DType::Float8E4M3FNX4:
  case DType::Float4E2M1FNX4: {
    if (std::isnan(v))
      return 0.0;
    IntRange r = range_of(dtype);
    double n = std::nearbyint(v);
    return n < r.lo ? r.lo : n > r.hi ? r.hi : n;
  }
  }
  return v;
}

void encode(DType dtype, double v, unsigned char *out) {
  v = round_to(dtype, v);
  switch (dtype) {
  case DType::Float32:
  case DType::TFloat32:
    store_le(static_cast<float>(v), out);
    return;
  case DType::BFloat16: {
    float f = static_cast<float>(v);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (std::isnan(v))
      bits = std::signbit(v) ? 0xffc00000u : 0x7fc00000u;
    store_le(static_cast<std::uint16_t>(bits >> 16), out);
    return;
  }
  case DType::Float16:
    store_le(static_cast<std::uint16_t>(encode_minifloat(kFloat16, v)), out);
    return;
  case DType::Float8E4M3:
  case DType::Float8E4M3FN:
  case DType::Float8E5M2:
    out[0] = static_cast<unsigned char>(encode_minifloat(*format_of(dtype), v));
    return;
  case DType::Bool:
  case DType::UInt8:
    out[0] = static_cast<unsigned char>(v);
    return;
  case DType::Int8:
    store_le(static_cast<std::int8_t>(v), out);
    return;
  case DType::Int16:
    store_le(static_cast<std::int16_t>(v), out);
    return;
  case DType::UInt16:
    store_le(static_cast<std::uint16_t>(v), out);
    return;
  case DType::Int32:
    store_le(static_cast<std::int32_t>(v), out);
    return;
  case DType::UInt32:
  case DType::Float8E5M2X4:
  case DType::Float8E4M3FNX4:
    store_le(static_cast<std::uint32_t>(v), out);
    return;
  case DType::Float4E2M1FNX4:
    store_le(static_cast<std::uint16_t>(v), out);
    return;
  case DType::Float8E8M0FNU: {
    int ex = 0;
    std::frexp(v, &ex);
    out[0] = std::isnan(v) ? 0xff : static_cast<unsigned char>(ex - 1 + 127);
    return;
  }
  }
}

double decode(DType dtype, const unsigned char *in) {
  switch (dtype) {
  case DType::Float32:
  case DType::TFloat32:
    return load_le<float>(in);
  case DType::BFloat16: {
    std::uint32_t bits = std::uint32_t{load_le<std::uint16_t>(in)} << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case DType::Float16:
    return decode_minifloat(kFloat16, load_le<std::uint16_t>(in));
  case DType::Float8E4M3:
  case DType::Float8E4M3FN:
  case DType::Float8E5M2:
    return decode_minifloat(*format_of(dtype), in[0]);
  case DType::Bool:
    return in[0] ? 1.0 : 0.0;
  case DType::UInt8:
    return in[0];
  case DType::Int8:
    return load_le<std::int8_t>(in);
  case DType::Int16:
    return load_le<std::int16_t>(in);
  case DType::UInt16:
    return load_le<std::uint16_t>(in);
  case DType::Int32:
    return load_le<std::int32_t>(in);
  case DType::UInt32:
  case DType::Float8E5M2X4:
  case DType::Float8E4M3FNX4:
    return load_le<std::uint32_t>(in);
  case DType::Float4E2M1FNX4:
    return load_le<std::uint16_t>(in);
  case DType::Float8E8M0FNU:
    return in[0] == 0xff ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int{in[0]} - 127);
  }
  return 0.0;
}

} // namespace nkicc::sim
