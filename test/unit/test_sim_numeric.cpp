#include "nkicc/sim/numeric.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

using namespace nkicc;
using namespace nkicc::sim;

namespace {
double bits_to_float(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
} // namespace

TEST_CASE("round_to: bfloat16 rounds to nearest, ties to even", "[sim]") {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: the tie goes to the even mantissa, 1.
  CHECK(round_to(DType::BFloat16, 1.0 + 0x1p-8) == 1.0);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  CHECK(round_to(DType::BFloat16, 1.0 + 3 * 0x1p-8) == 1.0 + 0x1p-6);
  CHECK(round_to(DType::BFloat16, 1.0 + 0x1p-8 + 0x1p-20) == 1.0 + 0x1p-7);
  CHECK(round_to(DType::BFloat16, -2.5) == -2.5);
  CHECK(std::isinf(round_to(DType::BFloat16, 3.4e38)));
  CHECK(std::isnan(round_to(DType::BFloat16, std::nan(""))));
  // The smallest float32 subnormal is below bfloat16's half-quantum at that exponent: it rounds to 0.
  CHECK(round_to(DType::BFloat16, bits_to_float(1)) == 0.0);
}

TEST_CASE("round_to: float16, float32 and tfloat32", "[sim]") {
  CHECK(round_to(DType::Float16, 65504.0) == 65504.0);
  CHECK(round_to(DType::Float16, 65519.0) == 65504.0);
  CHECK(std::isinf(round_to(DType::Float16, 65520.0)));
  CHECK(round_to(DType::Float16, 0x1p-24) == 0x1p-24); // the smallest subnormal is kept
  CHECK(round_to(DType::Float16, 0x1p-26) == 0.0);
  CHECK(round_to(DType::Float32, 0.1) == static_cast<double>(0.1f));
  CHECK(std::isinf(round_to(DType::Float32, 1e39)));
  CHECK(round_to(DType::TFloat32, 1.0 + 0x1p-11) == 1.0);
  CHECK(round_to(DType::TFloat32, 1.0 + 0x1p-10) == 1.0 + 0x1p-10);
}

TEST_CASE("round_to: float8 formats saturate finite overflow", "[sim]") {
  CHECK(round_to(DType::Float8E4M3, 1000.0) == 240.0);
  CHECK(round_to(DType::Float8E4M3FN, 1000.0) == 448.0);
  CHECK(round_to(DType::Float8E5M2, -1e6) == -57344.0);
  CHECK(round_to(DType::Float8E4M3, 0.3) == 0.3125);
  CHECK(std::isinf(round_to(DType::Float8E5M2, std::numeric_limits<double>::infinity())));
  CHECK(std::isnan(round_to(DType::Float8E4M3FN, std::numeric_limits<double>::infinity())));
}

TEST_CASE("round_to: integers round to even and saturate", "[sim]") {
  CHECK(round_to(DType::Int8, 2.5) == 2.0);
  CHECK(round_to(DType::Int8, 3.5) == 4.0);
  CHECK(round_to(DType::Int8, 300.0) == 127.0);
  CHECK(round_to(DType::Int8, -300.0) == -128.0);
  CHECK(round_to(DType::UInt8, -1.0) == 0.0);
  CHECK(round_to(DType::UInt32, 5e9) == 4294967295.0);
  CHECK(round_to(DType::Int32, std::nan("")) == 0.0);
  CHECK(round_to(DType::Bool, -0.5) == 1.0);
}

TEST_CASE("encode and decode: every dtype round-trips its values", "[sim]") {
  const DType all[] = {DType::Float32,     DType::Float16,      DType::BFloat16,   DType::TFloat32, DType::Float8E4M3,
                       DType::Float8E4M3FN, DType::Float8E5M2,  DType::Int8,       DType::Int16,    DType::Int32,
                       DType::UInt8,       DType::UInt16,       DType::UInt32,     DType::Bool};
  const double values[] = {0.0, 1.0, -1.5, 0.3, 100.0, 1e-3, -7.0, 2.0};
  for (DType d : all)
    for (double v : values) {
      unsigned char buf[8] = {};
      encode(d, v, buf);
      CAPTURE(dtype_name(d), v);
      CHECK(decode(d, buf) == round_to(d, v));
    }
  unsigned char b[2];
  encode(DType::BFloat16, 1.0, b);
  CHECK((b[0] == 0x80 && b[1] == 0x3f)); // 0x3f80, little-endian
  unsigned char f8;
  encode(DType::Float8E4M3FN, 448.0, &f8);
  CHECK(f8 == 0x7e);
  encode(DType::Float8E4M3FN, std::nan(""), &f8);
  CHECK(f8 == 0x7f);
  encode(DType::Float8E4M3, 240.0, &f8);
  CHECK(f8 == 0x77);
  encode(DType::Float8E5M2, std::numeric_limits<double>::infinity(), &f8);
  CHECK(f8 == 0x7c);
}

TEST_CASE("MX: an x4 element is its bits; mx_lane reads each lane, mx_lane_bits writes one", "[sim]") {
  // An x4 element copies exactly: its value is the unsigned integer of its bits.
  CHECK(round_to(DType::Float8E4M3FNX4, 4294967295.0) == 4294967295.0);
  CHECK(round_to(DType::Float4E2M1FNX4, 70000.0) == 65535.0);
  unsigned char b[4];
  encode(DType::Float8E5M2X4, 0x3c38b0c0u, b);
  CHECK(decode(DType::Float8E5M2X4, b) == static_cast<double>(0x3c38b0c0u));
  // float8_e5m2 lanes, lane 0 the low byte: 0xc0 = -2, 0xb0 = -0.125, 0x38 = 0.5, 0x3c = 1.
  CHECK(mx_lane(DType::Float8E5M2X4, 0x3c38b0c0u, 0) == -2.0);
  CHECK(mx_lane(DType::Float8E5M2X4, 0x3c38b0c0u, 1) == -0.125);
  CHECK(mx_lane(DType::Float8E5M2X4, 0x3c38b0c0u, 2) == 0.5);
  CHECK(mx_lane(DType::Float8E5M2X4, 0x3c38b0c0u, 3) == 1.0);
  // float8_e4m3fn: 0x7e = 448, 0x7f is NaN.
  CHECK(mx_lane(DType::Float8E4M3FNX4, 0x7e, 0) == 448.0);
  CHECK(std::isnan(mx_lane(DType::Float8E4M3FNX4, 0x7f00, 1)));
  // float4_e2m1fn nibbles, lane 0 the low nibble: 0x7 = 6, 0xf = -6, 0x1 = 0.5 (subnormal), 0x3 = 1.5.
  CHECK(mx_lane(DType::Float4E2M1FNX4, 0x31f7u, 0) == 6.0);
  CHECK(mx_lane(DType::Float4E2M1FNX4, 0x31f7u, 1) == -6.0);
  CHECK(mx_lane(DType::Float4E2M1FNX4, 0x31f7u, 2) == 0.5);
  CHECK(mx_lane(DType::Float4E2M1FNX4, 0x31f7u, 3) == 1.5);
  // Rounding to a lane: ties to even, saturating (no infinity in e4m3fn or e2m1fn).
  CHECK(mx_lane_bits(DType::Float8E4M3FNX4, 1000.0) == 0x7eu);
  CHECK(mx_lane_bits(DType::Float8E4M3FNX4, -1.0625) == 0xb8u); // halfway 1 and 1.125: to 1
  CHECK(mx_lane_bits(DType::Float8E5M2X4, 3.5) == 0x43u);       // 3.5 = 1.75 * 2
  CHECK(mx_lane_bits(DType::Float4E2M1FNX4, 5.0) == 0x6u);      // halfway 4 and 6: to 4 (even)
  CHECK(mx_lane_bits(DType::Float4E2M1FNX4, -100.0) == 0xfu);
}

TEST_CASE("float8_e8m0fnu: powers of two from 2^-127 to 2^127, stored as the biased exponent", "[sim]") {
  CHECK(round_to(DType::Float8E8M0FNU, 1.0) == 1.0);
  CHECK(round_to(DType::Float8E8M0FNU, 1.4) == 1.0);
  CHECK(round_to(DType::Float8E8M0FNU, 1.6) == 2.0);
  CHECK(round_to(DType::Float8E8M0FNU, 3.0) == 4.0); // 1.5 * 2: the even exponent
  CHECK(round_to(DType::Float8E8M0FNU, 1.5) == 1.0); // 1.5 * 1: exponent 0 is even
  CHECK(round_to(DType::Float8E8M0FNU, 0.0) == std::ldexp(1.0, -127));
  CHECK(round_to(DType::Float8E8M0FNU, 1e300) == std::ldexp(1.0, 127));
  CHECK(std::isnan(round_to(DType::Float8E8M0FNU, -1.0)));
  unsigned char s;
  encode(DType::Float8E8M0FNU, 0.25, &s);
  CHECK(s == 125);
  encode(DType::Float8E8M0FNU, 0.0, &s);
  CHECK(s == 0);
  encode(DType::Float8E8M0FNU, std::nan(""), &s);
  CHECK(s == 0xff);
  s = 130;
  CHECK(decode(DType::Float8E8M0FNU, &s) == 8.0);
  s = 0xff;
  CHECK(std::isnan(decode(DType::Float8E8M0FNU, &s)));
  CHECK_FALSE(is_integer(DType::Float8E8M0FNU));
  CHECK(is_integer(DType::Float8E5M2X4));
}
