#include "nkicc/support/huge_blocks.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace nkicc::memory;

namespace {
constexpr std::size_t kMiB = std::size_t{1} << 20;
} // namespace

TEST_CASE("huge blocks: aligned, sized, and told from malloc's blocks", "[support][huge]") {
  std::size_t size = 0;
  // Below the threshold: malloc's business.
  CHECK(huge_block_allocate(kHugeBlockFrom - 1, size) == nullptr);

  // 3 MiB: rounding up to 4 MiB would add a third, so the tail stays on ordinary pages.
  void *a = huge_block_allocate(3 * kMiB + 5, size);
  REQUIRE(a != nullptr);
  CHECK(maybe_huge_block(a));
  CHECK(size == 3 * kMiB + 4096);
  std::memset(a, 0xab, 3 * kMiB + 5); // all of it is writable
  CHECK(huge_block_size(a) == size);

  // 3.5 MiB: rounding up to 4 MiB adds less than a quarter.
  std::size_t size_b = 0;
  void *b = huge_block_allocate(7 * kMiB / 2, size_b);
  REQUIRE(b != nullptr);
  CHECK(size_b == 4 * kMiB);
  static_cast<char *>(b)[size_b - 1] = 1;

  // A 2 MiB-aligned block of malloc's is not in the table.
  void *m = std::aligned_alloc(kHugePageBytes, kHugePageBytes);
  REQUIRE(m != nullptr);
  CHECK(maybe_huge_block(m));
  CHECK(huge_block_size(m) == 0);
  CHECK(huge_block_release(m) == 0);
  std::free(m);

  CHECK(huge_block_release(a) == size);
  CHECK(huge_block_size(a) == 0);
  CHECK(huge_block_release(a) == 0); // released once only
  CHECK(huge_block_size(b) == size_b);
  CHECK(huge_block_release(b) == size_b);
}

TEST_CASE("huge blocks: a full table hands large requests back to malloc", "[support][huge]") {
  std::vector<void *> blocks;
  std::size_t size = 0;
  // Mapped, never touched: address space only.
  while (void *p = huge_block_allocate(kHugeBlockFrom, size)) {
    blocks.push_back(p);
    REQUIRE(blocks.size() <= kMaxHugeBlocks);
  }
  CHECK(blocks.size() == kMaxHugeBlocks);
  CHECK(huge_block_allocate(kHugeBlockFrom, size) == nullptr);
  CHECK(huge_block_release(blocks.back()) == kHugeBlockFrom);
  blocks.pop_back();
  void *again = huge_block_allocate(kHugeBlockFrom, size);
  CHECK(again != nullptr); // room again
  blocks.push_back(again);
  for (void *p : blocks)
    CHECK(huge_block_release(p) == kHugeBlockFrom);
}

TEST_CASE("advise_heap_huge_pages marks the top of malloc's heap for huge pages", "[support][huge]") {
  if (!huge_blocks_wanted())
    return; // the sanitizer builds leave the heap to their allocator
  // As nkicc's operator new sets it up: freed heap is kept, so the advised part stays mapped.
  configure_heap();
  advise_heap_huge_pages(std::size_t{8} << 20);
  void *small = std::malloc(64); // carved from the advised top
  REQUIRE(small != nullptr);
  // /proc/self/smaps lists the heap's parts; the advised one carries the `hg` flag.
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_heap = false, advised = false;
  while (std::getline(smaps, line)) {
    // A mapping's header starts with its range (`55d0c8a5e000-55d0c8a7f000 rw-p ...`), its fields
    // with a name and a colon.
    std::string first = line.substr(0, line.find(' '));
    if (first.find('-') != std::string::npos && first.find(':') == std::string::npos)
      in_heap = line.find("[heap]") != std::string::npos;
    if (in_heap && line.rfind("VmFlags:", 0) == 0 && line.find(" hg") != std::string::npos)
      advised = true;
  }
  std::free(small);
  CHECK(advised);
  // Nothing is done past the size it accepts.
  advise_heap_huge_pages(std::size_t{64} << 20);
}
