// The process-wide table of tensor-name stems behind ir::TensorName.
#include "nkicc/ir/tensor_name.h"

#include "nkicc/support/intern_table.h"
#include "nkicc/support/recent_interned.h"

namespace nkicc::ir {

namespace {

InternTable &table() {
  static InternTable *t = new InternTable("tensor names"); // never destroyed: names may outlive static destructors
  return *t;
}

/// The stems this thread interned last, by their text (which the table keeps).
thread_local RecentInterned<std::string_view, std::uint32_t> recent;

} // namespace

std::uint32_t TensorName::intern(std::string_view text) {
  if (text.empty())
    return 0;
  if (const std::uint32_t *id = recent.find(text))
    return *id;
  std::uint32_t id = table().intern(text);
  recent.add(table().text(id), id);
  return id;
}

std::string_view TensorName::stem() const { return table().text(stem_); }

std::string TensorName::str() const {
  std::string text(stem());
  if (number_) {
    text += '.';
    text += std::to_string(number_);
  }
  return text;
}

} // namespace nkicc::ir
