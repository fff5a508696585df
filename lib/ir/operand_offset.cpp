// The process-wide table of the operand offsets that ir::OperandOffset does not hold inline.
#include "nkicc/ir/operand_offset.h"

#include <deque>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace nkicc::ir {

namespace {

/// Each distinct offset once; read and written under the lock (such offsets are rare: only
/// tensors of more than 2^31 elements have them).
struct OffsetTable {
  std::mutex mutex;
  std::deque<std::int64_t> values;
  std::unordered_map<std::int64_t, std::uint32_t> index;
};

OffsetTable &table() {
  static OffsetTable *t = new OffsetTable; // never destroyed: operands may outlive static destructors
  return *t;
}

} // namespace

std::int32_t OperandOffset::keep(std::int64_t value) {
  OffsetTable &t = table();
  std::lock_guard lock(t.mutex);
  auto [it, added] = t.index.try_emplace(value, static_cast<std::uint32_t>(t.values.size()));
  if (added) {
    // Below kInlineMin there is room for 2^30 of them.
    if (t.values.size() >= (std::uint32_t{1} << 30)) {
      t.index.erase(it);
      throw std::length_error("more than 2^30 distinct large operand offsets in one process");
    }
    t.values.push_back(value);
  }
  return static_cast<std::int32_t>(static_cast<std::int64_t>(INT32_MIN) + it->second);
}

std::int64_t OperandOffset::kept(std::int32_t bits) {
  OffsetTable &t = table();
  std::lock_guard lock(t.mutex);
  return t.values[static_cast<std::size_t>(static_cast<std::int64_t>(bits) - INT32_MIN)];
}

} // namespace nkicc::ir
