// The reduce/scan family's visitors (visitors_reduce.cpp), and the fused free-axis reduction
// that activation and tensor_scalar instructions may carry into the engine's accumulator
// registers (lib/nki/isa_reduce.cpp says what the tracer records).
#pragma once

#include "executor.h"

#include <vector>

namespace nkicc::sim {

bool visit_tensor_tensor_scan(Executor &ex, const bir::KernelInstruction &inst);
bool visit_partition_reduce(Executor &ex, const bir::KernelInstruction &inst);
bool visit_select_reduce(Executor &ex, const bir::KernelInstruction &inst);
bool visit_scalar_tensor_tensor(Executor &ex, const bir::KernelInstruction &inst);
bool visit_range_select(Executor &ex, const bir::KernelInstruction &inst);

/// An instruction's fused reduction (attrs `reduce_op`, `reduce_cmd`, `reduce_init`,
/// `reduce_negate`; `reduce_res` is its second destination, one element per partition). The
/// visitor passes every element it computes to add() (the float32 value, before the rounding to
/// the destination's dtype; masked-off elements are not passed), then calls finish(), which
/// applies `reduce_cmd` to the engine's accumulator registers and reads them out into
/// reduce_res:
///   idle: unchanged; reset: the identity of reduce_op (0 for a sum); reduce: combined with this
///   instruction's reduction; reset_reduce: this instruction's reduction; load_reduce:
///   reduce_init combined with it. reduce_res = the registers (negated with reduce_negate).
class FusedReduction {
public:
  /// Reads the attributes; false (the error recorded) when they are malformed. An
  /// instruction without `reduce_cmd` has no fused reduction: add() and finish() do nothing.
  bool init(Executor &ex, const bir::KernelInstruction &inst);
  /// How many destinations the instruction must have: 2 with a reduce_res, else 1.
  std::size_t destinations() const { return has_res_ ? 2 : 1; }
  void add(std::size_t element, double value) {
    if (active_)
      combine(partial_[element / static_cast<std::size_t>(per_partition_)], static_cast<float>(value));
  }
  bool finish(Executor &ex, const bir::KernelInstruction &inst);

private:
  enum class Op : std::uint8_t { Add, Subtract, Multiply, Max, Min };
  void combine(float &acc, float v) const;
  bool active_ = false;
  bool has_res_ = false;
  bool negate_ = false;
  Op op_ = Op::Add;
  std::string cmd_;
  float init_ = 0;
  float identity_ = 0;
  std::int64_t per_partition_ = 1;
  std::vector<float> partial_;
};

} // namespace nkicc::sim
