// The process-wide table of tensor-name stems behind ir::TensorName.
#include "nkicc/ir/tensor_name.h"

#include "nkicc/support/intern_table.h"

#include <array>

namespace nkicc::ir {

namespace {

InternTable &table() {
  static InternTable *t = new InternTable("tensor names"); // never destroyed: names may outlive static destructors
  return *t;
}

/// The stems this thread interned last: a trace names tile after tile from the same few
/// variables, so most lookups end here, without the table's lock.
struct RecentStems {
  std::array<std::string_view, 4> text{};
  std::array<std::uint32_t, 4> id{};
  std::uint32_t next = 0;
};
thread_local RecentStems recent;

} // namespace

std::uint32_t TensorName::intern(std::string_view text) {
  if (text.empty())
    return 0;
  for (std::size_t k = 0; k < recent.text.size(); ++k)
    if (recent.id[k] && recent.text[k] == text)
      return recent.id[k];
  std::uint32_t id = table().intern(text);
  std::uint32_t slot = recent.next++ % recent.text.size();
  recent.text[slot] = table().text(id);
  recent.id[slot] = id;
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
