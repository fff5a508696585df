// The last few values a thread interned, by their keys: a trace interns the same few shapes and
// names tile after tile, so most lookups end here, without the process-wide table's lock
// (ir::TensorShape, ir::TensorName). Meant to be thread_local.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace nkicc {

template <class Key, class Value, std::size_t N = 4> class RecentInterned {
public:
  /// The value kept for a key equal to `key`, or null.
  const Value *find(const Key &key) const {
    for (std::size_t k = 0; k < used_; ++k)
      if (keys_[k] == key)
        return &values_[k];
    return nullptr;
  }
  /// Keeps `value` for `key` (whose storage must outlive this cache), in place of the oldest.
  void add(const Key &key, const Value &value) {
    std::size_t slot = next_++ % N;
    keys_[slot] = key;
    values_[slot] = value;
    if (used_ < N)
      ++used_;
  }

private:
  std::array<Key, N> keys_{};
  std::array<Value, N> values_{};
  std::size_t used_ = 0;
  std::uint32_t next_ = 0;
};

} // namespace nkicc
