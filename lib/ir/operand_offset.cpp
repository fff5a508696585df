// The process-wide table of the operand offsets that ir::OperandOffset does not hold inline:
// each kept as its 8 bytes in an InternTable, which hands out dense ids and reads them back
// without a lock.
#include "nkicc/ir/operand_offset.h"

#include "nkicc/support/intern_table.h"

#include <cstring>
#include <string_view>

namespace nkicc::ir {

namespace {

InternTable &table() {
  static InternTable *t = new InternTable("large operand offsets"); // never destroyed, as operands may outlive it
  return *t;
}

} // namespace

std::int32_t OperandOffset::keep(std::int64_t value) {
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  // The table's ids stay below 2^24, well inside the 2^30 places under kInlineMin.
  std::uint32_t id = table().intern(std::string_view(bytes, sizeof bytes));
  return static_cast<std::int32_t>(static_cast<std::int64_t>(INT32_MIN) + id);
}

std::int64_t OperandOffset::kept(std::int32_t bits) {
  std::string_view bytes = table().text(static_cast<std::uint32_t>(static_cast<std::int64_t>(bits) - INT32_MIN));
  std::int64_t value;
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

} // namespace nkicc::ir
