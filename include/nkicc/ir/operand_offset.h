// An operand's element offset in 4 bytes where an int64 takes 8: a trace holds one ir::Operand
// per access of every instruction (about 940,000 in bench_interp's 402,432-instruction matmul),
// and nearly every offset fits 31 bits. One that does not (a tensor of more than 2^31
// elements, or an offset below -2^30) is kept once per process in a table, and the operand
// holds its place there.
#pragma once

#include <cstdint>

namespace nkicc::ir {

class OperandOffset {
public:
  OperandOffset() = default;
  // Implicit both ways, as the int64 it stands for.
  OperandOffset(std::int64_t value)
      : bits_(value >= kInlineMin && value <= INT32_MAX ? static_cast<std::int32_t>(value) : keep(value)) {}
  operator std::int64_t() const { return bits_ >= kInlineMin ? bits_ : kept(bits_); }

private:
  /// Offsets from here up are held as they are; below it, bits_ - INT32_MIN is a table index.
  static constexpr std::int32_t kInlineMin = -(1 << 30);
  /// The table's place for `value` (added on first use) as bits_.
  static std::int32_t keep(std::int64_t value);
  static std::int64_t kept(std::int32_t bits);
  std::int32_t bits_ = 0;
};

} // namespace nkicc::ir
