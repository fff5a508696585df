// A process-wide table of interned texts, behind python::Symbol (Python names) and
// ir::TensorName (tensor-name stems): each distinct text gets the next id, 0 being the empty
// text, and stays for the life of the process.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace nkicc {

class InternTable {
public:
  static constexpr std::uint32_t kMaxIds = 16'777'216;

  /// `what` names the texts in the error past the table's `capacity` ids ("Python names"):
  /// a multiple of 4,096, at most (and by default) kMaxIds.
  explicit InternTable(std::string_view what, std::uint32_t capacity = kMaxIds);
  InternTable(const InternTable &) = delete;
  InternTable &operator=(const InternTable &) = delete;

  /// The id of `text`, interned on first use.
  std::uint32_t intern(std::string_view text);
  /// The id of `text` if it was ever interned.
  std::optional<std::uint32_t> find(std::string_view text);
  /// The text of an id this table handed out; read without the lock (see chunks_).
  std::string_view text(std::uint32_t id) const { return chunks_[id >> kChunkBits][id & (kChunkSize - 1)]; }

private:
  static constexpr std::uint32_t kChunkBits = 12, kChunkSize = 1u << kChunkBits, kMaxChunks = 1u << 12;

  std::uint32_t add(std::string_view text);

  std::string what_;
  std::uint32_t max_chunks_;
  std::mutex mutex_;
  std::deque<std::string> texts_; ///< a deque never moves its elements
  /// Texts by id, in chunks that never move: an id is handed out only after its text is stored,
  /// under the lock, and whoever holds an id got it from such a hand-out.
  std::unique_ptr<std::string_view[]> chunks_[kMaxChunks];
  std::uint32_t count_ = 0;
  std::unordered_map<std::string_view, std::uint32_t> ids_;
};

} // namespace nkicc
