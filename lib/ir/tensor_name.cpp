// The process-wide table of tensor-name stems behind ir::TensorName.
#include "nkicc/ir/tensor_name.h"

#include <array>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace nkicc::ir {

namespace {

/// Stems by id live in chunks that never move, so that stem() reads one without the lock: an id
/// is handed out only after its text is stored, under the lock.
constexpr std::uint32_t kChunkBits = 12, kChunkSize = 1u << kChunkBits, kMaxChunks = 1u << 16;

struct StemTable {
  std::mutex mutex;
  std::deque<std::string> texts; ///< a deque never moves its elements
  std::unique_ptr<std::unique_ptr<std::string_view[]>[]> chunks {
    new std::unique_ptr<std::string_view[]>[ kMaxChunks ]
  };
  std::uint32_t count = 0;
  std::unordered_map<std::string_view, std::uint32_t> ids;

  StemTable() { add(std::string_view()); } // id 0 is the empty text

  std::uint32_t add(std::string_view text) {
    std::uint32_t id = count;
    if (id >> kChunkBits >= kMaxChunks)
      throw std::length_error("more than 268,435,456 distinct tensor names");
    auto &chunk = chunks[id >> kChunkBits];
    if (!chunk)
      chunk = std::make_unique<std::string_view[]>(kChunkSize);
    std::string_view stored = texts.emplace_back(text);
    chunk[id & (kChunkSize - 1)] = stored;
    ids.emplace(stored, id);
    ++count;
    return id;
  }
};

StemTable &table() {
  static StemTable *t = new StemTable; // never destroyed: names may outlive static destructors
  return *t;
}

/// The stems this thread interned last: a trace names tile after tile from the same few
/// variables, so most lookups end here, without the lock.
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
  StemTable &t = table();
  std::uint32_t id;
  {
    std::lock_guard lock(t.mutex);
    auto it = t.ids.find(text);
    id = it != t.ids.end() ? it->second : t.add(text);
  }
  std::uint32_t slot = recent.next++ % recent.text.size();
  recent.text[slot] = table().chunks[id >> kChunkBits][id & (kChunkSize - 1)];
  recent.id[slot] = id;
  return id;
}

std::string_view TensorName::stem() const {
  return stem_ == 0 ? std::string_view() : table().chunks[stem_ >> kChunkBits][stem_ & (kChunkSize - 1)];
}

std::string TensorName::str() const {
  std::string text(stem());
  if (number_) {
    text += '.';
    text += std::to_string(number_);
  }
  return text;
}

} // namespace nkicc::ir
