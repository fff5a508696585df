// The element types a kernel description may name (SPEC §2), shared by every stage.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

enum class DType : unsigned char {
  Float32,
  Float16,
  BFloat16,
  TFloat32,
  Float8E4M3,
  Float8E4M3FN,
  Float8E5M2,
  Int8,
  Int16,
  Int32,
  UInt8,
  UInt16,
  UInt32,
  Bool,
  // Microscaling (OCP MX) types of NeuronCore-v4: four float8 (or float4) values packed in one
  // element along the contraction dimension, and the 8-bit power-of-two scale of a group.
  Float8E5M2X4,   ///< float8_e5m2_x4: 32 bits, four float8_e5m2, lane 0 in the low byte
  Float8E4M3FNX4, ///< float8_e4m3fn_x4: 32 bits, four float8_e4m3fn
  Float4E2M1FNX4, ///< float4_e2m1fn_x4: 16 bits, four float4_e2m1fn, lane 0 in the low nibble
  Float8E8M0FNU,  ///< float8_e8m0fnu: an exponent only, 2^(bits - 127); 0xff is NaN
};

/// The NKI/NumPy name: `float32`, ..., `bool`.
std::string_view dtype_name(DType dtype);
/// Accepts every name of dtype_name() and NumPy's `bool_`.
std::optional<DType> parse_dtype(std::string_view name);
/// Size of one element in bytes.
std::size_t dtype_size(DType dtype);
/// The signed and unsigned integer dtypes; with `with_bool`, `bool` too (NKI treats it as an
/// integer where an op takes integers, such as a predicate or an index).
bool dtype_is_integer(DType dtype, bool with_bool);
/// The packed MX data types (float8_e5m2_x4, float8_e4m3fn_x4, float4_e2m1fn_x4).
bool dtype_is_mx_x4(DType dtype);
/// All accepted names, for "did you mean" suggestions and messages.
const std::vector<std::string> &dtype_names();

} // namespace nkicc
