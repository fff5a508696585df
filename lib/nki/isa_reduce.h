// The fused free-axis reduction that several nisa ops carry (isa_reduce.cpp): nisa.activation
// and its activation_reduce form on the Scalar engine, tensor_scalar_reduce and select_reduce on
// the Vector engine.
#pragma once

#include "lowering.h"
#include "op_table.h"

namespace nkicc::nki {

/// Which engine's accumulator registers a fused reduction uses, and what it may do there.
enum class Accumulator : std::uint8_t {
  Scalar, ///< activation: sums only; reduce_cmd defaults to the op's
  Vector, ///< tensor_scalar_reduce, select_reduce: add, subtract, multiply, max, min
};

/// Reads the call's `reduce_op`, `reduce_res`, `reduce_cmd` (and, on the Vector engine,
/// `reduce_init` and `reduce_res_negate` where the op has them) and checks them against
/// `data`, the tile whose per-partition elements are reduced: `reduce_res` must hold one
/// element per partition of `data`. `default_cmd` is the op's reduce_cmd when the call gives
/// none. An op without any reduction returns nullopt.
std::optional<FusedReduce> fused_reduce(const OpCall &c, const TensorRef &data, Accumulator engine,
                                        std::string_view default_cmd);

} // namespace nkicc::nki
