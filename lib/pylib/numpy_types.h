// NumPy's element types as host NumPy (lib/pylib/numpy_*.cpp) computes with them: sizes and
// names, the type promotion of NumPy 1.24 (promote_types, and result_type's value-based casting
// of Python and 0-d scalars), and one element's value converted, rounded and wrapped exactly as
// NumPy stores it (float32 and float16 rounding, integer wrap-around).
#pragma once

#include "nkicc/support/dtype.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace nkicc::trace::numpy {

/// The element types host NumPy models: NumPy's own, and the NKI types NumPy knows through
/// ml_dtypes (bfloat16; tfloat32 and the float8 types exist as dtypes but do not compute).
enum class NpType : std::uint8_t {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  Float32,
  Float64,
  BFloat16,
  TFloat32,
  Float8E4M3,
  Float8E4M3FN,
  Float8E5M2,
  // NKI's microscaling dtypes: names only, as the float8 types.
  Float8E5M2X4,
  Float8E4M3FNX4,
  Float4E2M1FNX4,
  Float8E8M0FNU,
};

std::string_view type_name(NpType t);     ///< `float32`, `bool`
std::size_t item_size(NpType t);          ///< bytes per element
char kind_char(NpType t);                 ///< NumPy's dtype.kind: 'b', 'i', 'u', 'f'
char type_char(NpType t);                 ///< NumPy's dtype.char: '?', 'b', 'h', 'f', ...
bool is_bool(NpType t);
bool is_signed_int(NpType t);
bool is_unsigned_int(NpType t);
bool is_integer(NpType t);
bool is_floating(NpType t);
/// Whether host NumPy computes with the type (tfloat32, the float8 and the MX types only name dtypes).
bool computes(NpType t);
std::optional<NpType> parse_type(std::string_view name); ///< `float32`, `f4`, `int`, `bool_`, ...
std::optional<DType> to_nki(NpType t);
NpType from_nki(DType d);

/// NumPy's promote_types(a, b): the smallest type both cast to safely.
NpType promote_types(NpType a, NpType b);
bool can_cast_safely(NpType from, NpType to);

/// An element as NumPy computes with it: integer types as int64 (or uint64), floating types as
/// double (already rounded to the type), bool as 0/1.
struct Scalar {
  NpType type = NpType::Float64;
  std::int64_t i = 0;  ///< signed integer types and bool
  std::uint64_t u = 0; ///< unsigned integer types
  double f = 0.0;      ///< floating types

  double as_double() const;
  bool truthy() const;
  static Scalar of_int(NpType t, std::int64_t v);   ///< wrapped to the type's width
  static Scalar of_uint(NpType t, std::uint64_t v); ///< wrapped to the type's width
  static Scalar of_double(NpType t, double v);      ///< converted (and rounded) to the type
  /// The value converted to another type as NumPy's astype does (floats to ints truncate;
  /// out-of-range results are C's, made defined here: wrapped from int64).
  Scalar cast(NpType to) const;
};

/// A Python or NumPy operand of an operation, for result_type: its type, whether it is a
/// scalar (a Python number or 0-d), and its value (for value-based casting).
struct Operand {
  NpType type;
  bool scalar;
  Scalar value;
};
/// NumPy 1.24's result_type over operands: when arrays and scalars mix and the scalars' kind
/// is no higher than the arrays', scalars count by the smallest type holding their value.
NpType result_type(const std::vector<Operand> &operands);

/// Rounding to the 16-bit float formats (round to nearest, ties to even).
double round_to_float16(double x);
double round_to_bfloat16(double x);
std::uint16_t float16_bits(double x);
double float16_from_bits(std::uint16_t bits);
std::uint16_t bfloat16_bits(double x);
double bfloat16_from_bits(std::uint16_t bits);

/// One element stored in and loaded from memory in the type's layout (little-endian, as on
/// every host nkicc runs on).
void store(NpType t, const Scalar &s, unsigned char *out);
Scalar load(NpType t, const unsigned char *in);

/// repr() of a NumPy float scalar of the type (`1.1`, `1e+16`, `1e-04`), as NumPy 1.24 prints it.
std::string float_repr(NpType t, double x);

} // namespace nkicc::trace::numpy
