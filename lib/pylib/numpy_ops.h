// NumPy's universal functions on one element: the type each loop computes in and returns, and
// the arithmetic, in NumPy 1.24's semantics (integer wrap-around, `//` and `%` by zero give 0,
// float16 and float32 computed in single precision).
#pragma once

#include "numpy_types.h"

#include <string_view>

namespace nkicc::trace::numpy {

enum class Binary {
  Add,
  Subtract,
  Multiply,
  Divide, ///< true_divide
  FloorDivide,
  Remainder,
  Power,
  Maximum,
  Minimum,
  Fmax,
  Fmin,
  BitAnd,
  BitOr,
  BitXor,
  LeftShift,
  RightShift,
  Equal,
  NotEqual,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  Arctan2,
  Hypot,
  Copysign,
  Fmod,
};

enum class Unary {
  Negative,
  Positive,
  Absolute,
  Invert,
  LogicalNot,
  Sign,
  Square,
  Reciprocal,
  Sqrt,
  Cbrt,
  Exp,
  Exp2,
  Expm1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sin,
  Cos,
  Tan,
  Arcsin,
  Arccos,
  Arctan,
  Sinh,
  Cosh,
  Tanh,
  Arcsinh,
  Arccosh,
  Arctanh,
  Ceil,
  Floor,
  Trunc,
  Rint,
  IsNan,
  IsInf,
  IsFinite,
  Signbit,
  Degrees,
  Radians,
};

/// The NumPy name of a ufunc (`add`, `true_divide` is `divide`).
std::string_view binary_name(Binary op);
std::string_view unary_name(Unary op);

/// The type the loop for inputs of `in` (already promoted) returns: bool for comparisons,
/// float64 for dividing integers, ...; raises TypeError as NumPy does for loops that do not
/// exist (bitwise ops on floats, `-` of bools).
NpType binary_output(Binary op, NpType in);
NpType unary_output(Unary op, NpType in);

/// One element: `a` and `b` already cast to the computing type `in`; the result has type
/// binary_output(op, in).
Scalar apply(Binary op, const Scalar &a, const Scalar &b, NpType in);
Scalar apply(Unary op, const Scalar &a, NpType in);

} // namespace nkicc::trace::numpy
