#include "nkicc/support/intern_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace nkicc {

InternTable::InternTable(std::string_view what, std::uint32_t capacity)
    : what_(what), max_chunks_(std::min(capacity, kMaxIds) >> kChunkBits) {
  add(std::string_view()); // id 0: ""
}

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
  static_assert(kMaxChunks * kChunkSize == kMaxIds);
  std::uint32_t id = count_;
  if (id >> kChunkBits >= max_chunks_) {
    // The capacity with its thousands grouped, as the other size messages write numbers.
    throw std::length_error(
        fmt::format("more than {} distinct {}", fmt::group_digits(max_chunks_ << kChunkBits), what_));
  }
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
