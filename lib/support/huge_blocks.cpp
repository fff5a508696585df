#include "nkicc/support/huge_blocks.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

namespace nkicc::memory {

namespace {

struct Block {
  std::uintptr_t at;
  std::size_t size;
};

// The live blocks, unordered: few (each is a megabyte or more), and looked up only when a
// 2 MiB-aligned pointer is freed. Zero-initialized, so usable before any constructor runs.
constinit std::mutex g_mutex;
constinit Block g_blocks[kMaxHugeBlocks] = {};
constinit std::size_t g_count = 0;

std::size_t find(std::uintptr_t at) {
  for (std::size_t i = 0; i < g_count; ++i)
    if (g_blocks[i].at == at)
      return i;
  return kMaxHugeBlocks;
}

} // namespace

void *huge_block_allocate(std::size_t bytes, std::size_t &size) noexcept {
  if (bytes < kHugeBlockFrom || bytes > SIZE_MAX / 2)
    return nullptr;
  // Whole huge pages; a partial last one too when that adds at most a quarter of the block,
  // else the tail stays on ordinary pages (rounding every block up made a trace's peak 30%
  // larger for little time: the IR's segments of 1.5 and 3 MiB).
  std::size_t whole = bytes & ~(kHugePageBytes - 1);
  if (bytes > whole && whole + kHugePageBytes - bytes <= bytes / 4)
    whole += kHugePageBytes;
  std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  size = std::max(whole, (bytes + page - 1) & ~(page - 1));
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_count == kMaxHugeBlocks)
      return nullptr;
  }
  // Map a huge page more than needed, then unmap what lies outside the aligned block.
  std::size_t span = size + kHugePageBytes;
  void *raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return nullptr;
  auto base = reinterpret_cast<std::uintptr_t>(raw);
  std::uintptr_t at = (base + kHugePageBytes - 1) & ~(std::uintptr_t{kHugePageBytes} - 1);
  if (at > base)
    ::munmap(raw, at - base);
  if (at + size < base + span)
    ::munmap(reinterpret_cast<void *>(at + size), base + span - (at + size));
  ::madvise(reinterpret_cast<void *>(at), whole, MADV_HUGEPAGE); // advice: a refusal leaves small pages
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_count == kMaxHugeBlocks) { // filled meanwhile by another thread
    ::munmap(reinterpret_cast<void *>(at), size);
    return nullptr;
  }
  g_blocks[g_count++] = {at, size};
  return reinterpret_cast<void *>(at);
}

std::size_t huge_block_release(void *p) noexcept {
  std::size_t size;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    std::size_t i = find(reinterpret_cast<std::uintptr_t>(p));
    if (i == kMaxHugeBlocks)
      return 0;
    size = g_blocks[i].size;
    g_blocks[i] = g_blocks[--g_count];
  }
  ::munmap(p, size);
  return size;
}

std::size_t huge_block_size(const void *p) noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::size_t i = find(reinterpret_cast<std::uintptr_t>(p));
  return i == kMaxHugeBlocks ? 0 : g_blocks[i].size;
}

void configure_heap() noexcept {
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHugeBlockFrom));
  ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(kKeptHeapBytes));
}

void advise_heap_huge_pages(std::size_t bytes) noexcept {
  if (!huge_blocks_wanted() || bytes > (std::size_t{16} << 20))
    return;
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest: the block comes from the heap
  void *block = std::malloc(bytes);
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHugeBlockFrom));
  if (!block)
    return;
  auto begin = (reinterpret_cast<std::uintptr_t>(block) + kHugePageBytes - 1) & ~(std::uintptr_t{kHugePageBytes} - 1);
  auto end = (reinterpret_cast<std::uintptr_t>(block) + bytes) & ~(std::uintptr_t{kHugePageBytes} - 1);
  if (end > begin)
    ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
  std::free(block);
}

#if defined(__SANITIZE_ADDRESS__)
#define NKICC_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NKICC_ADDRESS_SANITIZER 1
#endif
#endif

bool huge_blocks_wanted() noexcept {
#ifdef NKICC_ADDRESS_SANITIZER
  return false;
#else
  const char *env = std::getenv("NKICC_HUGE_PAGES");
  return !(env && std::strcmp(env, "0") == 0);
#endif
}

} // namespace nkicc::memory
