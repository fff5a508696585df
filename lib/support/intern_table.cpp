#include "nkicc/support/intern_table.h"

#include <fmt/format.h>

#include <stdexcept>

namespace nkicc {

InternTable::InternTable(std::string_view what) : what_(what) { add(std::string_view()); } // id 0: ""

std::uint32_t InternTable::intern(std::string_view text) {
  std::lock_guard lock(mutex_);
  if (auto it = ids_.find(text); it != ids_.end())
    return it->second;
  return add(text);
}

std::optional<std::uint32_t> InternTable::find(std::string_view text) {
  std::lock_guard lock(mutex_);
  if (auto it = ids_.find(text); it != ids_.end())
    return it->second;
  return std::nullopt;
}

std::uint32_t InternTable::add(std::string_view text) {
  static_assert(kMaxChunks * kChunkSize == 16'777'216);
  std::uint32_t id = count_;
  if (id >> kChunkBits >= kMaxChunks)
    throw std::length_error(fmt::format("more than 16,777,216 distinct {}", what_));
  auto &chunk = chunks_[id >> kChunkBits];
  if (!chunk)
    chunk = std::make_unique<std::string_view[]>(kChunkSize);
  std::string_view stored = texts_.emplace_back(text);
  chunk[id & (kChunkSize - 1)] = stored;
  ids_.emplace(stored, id);
  ++count_;
  return id;
}

} // namespace nkicc
