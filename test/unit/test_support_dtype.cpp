#include "nkicc/support/dtype.h"

#include <catch2/catch.hpp>

using namespace nkicc;

TEST_CASE("dtype_is_integer: the ints, bool only when asked, never a float") {
  for (DType d : {DType::Int8, DType::Int16, DType::Int32, DType::UInt8, DType::UInt16, DType::UInt32}) {
    CHECK(dtype_is_integer(d, false));
    CHECK(dtype_is_integer(d, true));
  }
  CHECK_FALSE(dtype_is_integer(DType::Bool, false));
  CHECK(dtype_is_integer(DType::Bool, true));
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::TFloat32, DType::Float8E4M3,
                  DType::Float8E4M3FN, DType::Float8E5M2}) {
    CHECK_FALSE(dtype_is_integer(d, false));
    CHECK_FALSE(dtype_is_integer(d, true));
  }
}

TEST_CASE("parse_dtype reads every dtype_name and NumPy's bool_") {
  for (const std::string &name : dtype_names()) {
    auto d = parse_dtype(name);
    REQUIRE(d);
    CHECK(dtype_name(*d) == (name == "bool_" ? std::string_view("bool") : std::string_view(name)));
  }
  CHECK(parse_dtype("bool_") == DType::Bool);
  CHECK_FALSE(parse_dtype("float64"));
}

TEST_CASE("the microscaling dtypes: names, element sizes, the x4 predicate") {
  CHECK(parse_dtype("float8_e5m2_x4") == DType::Float8E5M2X4);
  CHECK(parse_dtype("float8_e4m3fn_x4") == DType::Float8E4M3FNX4);
  CHECK(parse_dtype("float4_e2m1fn_x4") == DType::Float4E2M1FNX4);
  CHECK(parse_dtype("float8_e8m0fnu") == DType::Float8E8M0FNU);
  CHECK(dtype_size(DType::Float8E5M2X4) == 4);
  CHECK(dtype_size(DType::Float8E4M3FNX4) == 4);
  CHECK(dtype_size(DType::Float4E2M1FNX4) == 2);
  CHECK(dtype_size(DType::Float8E8M0FNU) == 1);
  for (DType d : {DType::Float8E5M2X4, DType::Float8E4M3FNX4, DType::Float4E2M1FNX4})
    CHECK(dtype_is_mx_x4(d));
  for (DType d : {DType::Float8E8M0FNU, DType::Float8E5M2, DType::UInt32, DType::Bool})
    CHECK_FALSE(dtype_is_mx_x4(d));
  CHECK_FALSE(dtype_is_integer(DType::Float8E8M0FNU, true));
  CHECK_FALSE(dtype_is_integer(DType::Float8E5M2X4, true));
}
