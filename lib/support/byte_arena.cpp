#include "nkicc/support/byte_arena.h"

namespace nkicc {

char *ByteArena::allocate(std::size_t size, std::shared_ptr<const void> &owner) {
  if (size > kChunkBytes) { // a block of its own
    std::shared_ptr<char[]> own(new char[size]);
    owner = own;
    return own.get();
  }
  // 16-byte aligned starts: a BIR blob inside an entry keeps the alignment its reader checks.
  std::size_t at = (used_ + 15) & ~std::size_t{15};
  if (!chunk_ || at + size > kChunkBytes) {
    chunk_.reset(new char[kChunkBytes]);
    at = 0;
  }
  used_ = at + size;
  owner = chunk_;
  return chunk_.get() + at;
}

} // namespace nkicc
