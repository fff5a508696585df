// Buffers for bytes that live as long as the run, carved one after another from shared 2 MiB
// chunks: persistent cache entries read on hits (a 175 KB entry read into a buffer of its own
// faulted 43 fresh 4 KiB pages, about 0.6 ms on the machines nkicc runs on; chunks are reused
// for the run's entries).
// A chunk is freed when the last OwnedBytes made from its buffers is.
#pragma once

#include "nkicc/support/owned_bytes.h"

#include <cstddef>
#include <memory>

namespace nkicc {

class ByteArena {
public:
  static constexpr std::size_t kChunkBytes = std::size_t{2} << 20;

  /// Room for `size` bytes, not initialized: after the last buffer when it fits there, else at
  /// the start of a new chunk (what the old one had left is not used); a request larger than a
  /// chunk gets a buffer of its own. `owner` keeps the room alive (pass it to OwnedBytes).
  char *allocate(std::size_t size, std::shared_ptr<const void> &owner);

private:
  std::shared_ptr<char[]> chunk_;
  std::size_t used_ = 0;
};

} // namespace nkicc
