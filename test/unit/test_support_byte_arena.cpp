#include "nkicc/support/byte_arena.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

using namespace nkicc;

TEST_CASE("ByteArena: buffers share chunks, aligned, and live as long as their bytes", "[support]") {
  ByteArena arena;
  std::shared_ptr<const void> a_owner, b_owner, c_owner, big_owner;
  char *a = arena.allocate(1000, a_owner);
  char *b = arena.allocate(100, b_owner);
  std::memset(a, 'a', 1000);
  std::memset(b, 'b', 100);
  // One chunk, one after the other, 16-byte aligned starts.
  CHECK(a_owner == b_owner);
  CHECK(b == a + 1008);
  CHECK(reinterpret_cast<std::uintptr_t>(b) % 16 == 0);

  // A request larger than a chunk has a buffer of its own.
  char *big = arena.allocate(ByteArena::kChunkBytes + 1, big_owner);
  CHECK(big_owner != a_owner);
  std::memset(big, 'x', ByteArena::kChunkBytes + 1);

  // A request that does not fit what is left of the chunk starts a new one.
  std::shared_ptr<const void> fill_owner;
  char *fill = arena.allocate(ByteArena::kChunkBytes - 500, fill_owner);
  CHECK(fill_owner != a_owner);
  CHECK(fill_owner != big_owner);
  std::memset(fill, 'f', ByteArena::kChunkBytes - 500);
  char *c = arena.allocate(100, c_owner);
  CHECK(c_owner == fill_owner); // fits after it
  CHECK(c == fill + ByteArena::kChunkBytes - 496);
  std::memset(c, 'c', 100);

  // The bytes outlive the arena and the other buffers of their chunk.
  OwnedBytes kept(b_owner, std::string_view(b, 100));
  std::weak_ptr<const void> first_chunk = a_owner;
  a_owner.reset();
  b_owner.reset();
  CHECK_FALSE(first_chunk.expired());
  CHECK(kept.bytes() == std::string(100, 'b'));
  OwnedBytes part = kept.slice(10, 5);
  kept = OwnedBytes();
  CHECK(part.bytes() == "bbbbb");
  part = OwnedBytes();
  CHECK(first_chunk.expired());
}
