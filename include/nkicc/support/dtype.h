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
/// All accepted names, for "did you mean" suggestions and messages.
const std::vector<std::string> &dtype_names();

} // namespace nkicc
