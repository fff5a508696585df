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
