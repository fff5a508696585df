// The semantics of every op name an instruction's attributes can carry, in one table: the ALU
// ops of tensor_tensor / tensor_scalar (`op`, `op0`, `op1`), the activation functions of the
// Scalar engine (`func`) and the reductions of tensor_reduce (`op`). The names are the ones
// lib/nki records: NKI's and NumPy's function names (nl.add, np.add, np.maximum, np.max, ...).
//
// Arithmetic follows the engines: Vector, Scalar and GpSimd compute in float32 (operands are
// converted to float32, the result is rounded to the destination's dtype by the write), except
// that an op whose operands and destination are all integers computes exactly on integers (the
// integer ALU of GpSimd/Vector), saturating on the write.
#pragma once

#include <string_view>

namespace nkicc::sim {

/// A binary ALU op: `f32` on float32 operands, `exact` on integer-valued operands.
struct BinaryOp {
  float (*f32)(float, float);
  double (*exact)(double, double);
};

/// A unary activation function, computed in float32.
using UnaryFn = float (*)(float);

enum class ReduceKind { Sum, Max, Min, Mean, Prod, All, Any };

/// Null when the name is not an op nkicc knows (the caller reports it).
const BinaryOp *binary_op(std::string_view name);
UnaryFn activation_fn(std::string_view name);
const ReduceKind *reduce_kind(std::string_view name);

} // namespace nkicc::sim
