// Host NumPy's type rules and element conversions as pure functions, against NumPy 1.24:
// promote_types over every pair of types, result_type's value-based casting, float16 rounding
// and the repr of float32/float16 scalars.
#include "pylib/numpy_types.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nkicc::trace::numpy;

TEST_CASE("promote_types matches NumPy for every pair") {
  const NpType types[] = {NpType::Bool,   NpType::Int8,   NpType::Int16,   NpType::Int32,
                          NpType::Int64,  NpType::UInt8,  NpType::UInt16,  NpType::UInt32,
                          NpType::UInt64, NpType::Float16, NpType::Float32, NpType::Float64};
  // np.promote_types(a, b).name for a, b in the order above (NumPy 1.24).
  const char *table[12][12] = {
      {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"},
      {"int8", "int8", "int16", "int32", "int64", "int16", "int32", "int64", "float64", "float16", "float32", "float64"},
      {"int16", "int16", "int16", "int32", "int64", "int16", "int32", "int64", "float64", "float32", "float32", "float64"},
      {"int32", "int32", "int32", "int32", "int64", "int32", "int32", "int64", "float64", "float64", "float64", "float64"},
      {"int64", "int64", "int64", "int64", "int64", "int64", "int64", "int64", "float64", "float64", "float64", "float64"},
      {"uint8", "int16", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"},
      {"uint16", "int32", "int32", "int32", "int64", "uint16", "uint16", "uint32", "uint64", "float32", "float32", "float64"},
      {"uint32", "int64", "int64", "int64", "int64", "uint32", "uint32", "uint32", "uint64", "float64", "float64", "float64"},
      {"uint64", "float64", "float64", "float64", "float64", "uint64", "uint64", "uint64", "uint64", "float64", "float64", "float64"},
      {"float16", "float16", "float32", "float64", "float64", "float16", "float32", "float64", "float64", "float16", "float32", "float64"},
      {"float32", "float32", "float32", "float64", "float64", "float32", "float32", "float64", "float64", "float32", "float32", "float64"},
      {"float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64"},
  };
  for (std::size_t a = 0; a < 12; ++a)
    for (std::size_t b = 0; b < 12; ++b) {
      INFO(type_name(types[a]) << " with " << type_name(types[b]));
      CHECK(std::string(type_name(promote_types(types[a], types[b]))) == table[a][b]);
    }
}

TEST_CASE("result_type casts Python scalars by value next to arrays, as NumPy 1.24") {
  auto array = [](NpType t) { return Operand{t, false, Scalar()}; };
  auto py_int = [](std::int64_t v) { return Operand{NpType::Int64, true, Scalar::of_int(NpType::Int64, v)}; };
  auto py_float = [](double v) { return Operand{NpType::Float64, true, Scalar::of_double(NpType::Float64, v)}; };
  // (np.array([1], t) + scalar).dtype in NumPy 1.24.
  CHECK(result_type({array(NpType::Int8), py_int(1000)}) == NpType::Int16);
  CHECK(result_type({array(NpType::Int8), py_int(200)}) == NpType::Int16);
  CHECK(result_type({array(NpType::Int8), py_int(100)}) == NpType::Int8);
  CHECK(result_type({array(NpType::UInt8), py_int(-5)}) == NpType::Int16);
  CHECK(result_type({array(NpType::UInt16), py_int(-1)}) == NpType::Int32);
  CHECK(result_type({array(NpType::Float16), py_int(70000)}) == NpType::Float64);
  CHECK(result_type({array(NpType::Float32), py_float(1.5)}) == NpType::Float32);
  CHECK(result_type({array(NpType::Float32), py_float(1e300)}) == NpType::Float64);
  CHECK(result_type({array(NpType::Int32), py_float(1.5)}) == NpType::Float64);
  CHECK(result_type({array(NpType::Bool), py_int(2)}) == NpType::Int64);
  CHECK(result_type({array(NpType::Int64), Operand{NpType::Float32, true, Scalar::of_double(NpType::Float32, 2)}}) ==
        NpType::Float64);
  CHECK(result_type({array(NpType::Float16), Operand{NpType::Float64, true, Scalar::of_double(NpType::Float64, 1e5)}}) ==
        NpType::Float32);
  // Scalars only: their full types (np.float32(3) + 3.0 is float64, np.int8(1) + 1 is int64).
  CHECK(result_type({Operand{NpType::Float32, true, Scalar::of_double(NpType::Float32, 3)}, py_float(3.0)}) ==
        NpType::Float64);
  CHECK(result_type({Operand{NpType::Int8, true, Scalar::of_int(NpType::Int8, 1)}, py_int(1)}) == NpType::Int64);
}

TEST_CASE("float16 rounds to nearest even, as NumPy's np.float16(x)") {
  // int(np.float16(x).view(np.uint16)) in NumPy 1.24.
  CHECK(float16_bits(0.1) == 11878);
  CHECK(float16_bits(1.5) == 15872);
  CHECK(float16_bits(65504.0) == 31743);
  CHECK(float16_bits(65520.0) == 31744); // rounds up to infinity
  CHECK(float16_bits(1e-8) == 0);
  CHECK(float16_bits(5.96e-8) == 1); // the smallest subnormal
  CHECK(float16_bits(2.98e-8) == 0); // a tie below it rounds to even (zero)
  CHECK(float16_bits(3e-8) == 1);
  CHECK(float16_bits(-2.5) == 49408);
  CHECK(float16_bits(1.0 / 3.0) == 13653);
  CHECK(float16_from_bits(31743) == 65504.0);
}

TEST_CASE("integers wrap at their width, floats round to their type") {
  CHECK(Scalar::of_int(NpType::Int8, 200).i == -56);
  CHECK(Scalar::of_int(NpType::UInt8, -1).u == 255);
  CHECK(Scalar::of_int(NpType::Int32, 2147483648LL).i == -2147483648LL);
  CHECK(Scalar::of_double(NpType::Float32, 0.1).f == static_cast<double>(0.1f));
  CHECK(Scalar::of_double(NpType::Int32, -7.9).i == -7);
  CHECK(Scalar::of_double(NpType::Bool, 0.5).i == 1);
}

TEST_CASE("float scalars print as NumPy 1.24 prints them") {
  CHECK(float_repr(NpType::Float32, Scalar::of_double(NpType::Float32, 1.1).f) == "1.1");
  CHECK(float_repr(NpType::Float32, 1e16) == "1e+16");
  CHECK(float_repr(NpType::Float32, Scalar::of_double(NpType::Float32, 123456789.0).f) == "123456790.0");
  CHECK(float_repr(NpType::Float16, Scalar::of_double(NpType::Float16, 0.1).f) == "0.1");
  CHECK(float_repr(NpType::Float16, 65504.0) == "65500.0");
  CHECK(float_repr(NpType::Float32, Scalar::of_double(NpType::Float32, 0.0001).f) == "1e-04");
  CHECK(float_repr(NpType::Float64, 1e-05) == "1e-05");
  CHECK(float_repr(NpType::Float32, -0.0) == "-0.0");
}
