#include "nkicc/support/heap_pages.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <sys/mman.h>

namespace nkicc::memory {

namespace {
constexpr std::uintptr_t kHugePageBytes = std::uintptr_t{2} << 20;
} // namespace

void configure_heap() noexcept {
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapFrom));
  ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(kKeptHeapBytes));
}

void advise_heap_huge_pages(std::size_t bytes) noexcept {
  if (!huge_pages_wanted() || bytes > (std::size_t{16} << 20))
    return;
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest: the block comes from the heap
  void *block = std::malloc(bytes);
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapFrom));
  if (!block)
    return;
  auto begin = (reinterpret_cast<std::uintptr_t>(block) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  auto end = (reinterpret_cast<std::uintptr_t>(block) + bytes) & ~(kHugePageBytes - 1);
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

bool huge_pages_wanted() noexcept {
#ifdef NKICC_ADDRESS_SANITIZER
  return false;
#else
  const char *env = std::getenv("NKICC_HUGE_PAGES");
  return !(env && std::strcmp(env, "0") == 0);
#endif
}

} // namespace nkicc::memory
