#include "nkicc/support/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace nkicc {

namespace {

/// One request: 2 MiB of pages.
constexpr std::size_t kStep = std::size_t{2} << 20;

} // namespace

BackwardPrefaulter::BackwardPrefaulter(unsigned char *begin, unsigned char *end, std::size_t lead)
    : begin_(begin), end_(end), lead_(lead) {
  thread_ = std::thread([this] { run(); });
}

BackwardPrefaulter::~BackwardPrefaulter() {
  stop();
  thread_.join();
}

void BackwardPrefaulter::advance(std::size_t bytes) {
  written_.store(bytes, std::memory_order_release);
  written_.notify_one();
}

void BackwardPrefaulter::stop() {
  stop_.store(true, std::memory_order_release);
  written_.fetch_add(1, std::memory_order_acq_rel); // wakes the thread if it waits for the writer
  written_.notify_one();
}

void BackwardPrefaulter::run() {
  // Only whole pages inside the buffer: the pages at its ends may hold other data, which
  // populating would not change, but may lie outside any mapping.
  auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto lo = (reinterpret_cast<std::uintptr_t>(begin_) + page - 1) & ~(page - 1);
  auto hi = reinterpret_cast<std::uintptr_t>(end_) & ~(page - 1);
  std::uintptr_t at = hi; // faulted in: [at, hi)
  while (at > lo && !stop_.load(std::memory_order_acquire)) {
    std::size_t written = written_.load(std::memory_order_acquire);
    std::size_t ahead = reinterpret_cast<std::uintptr_t>(end_) - at;
    if (ahead >= written + lead_) {
      written_.wait(written, std::memory_order_acquire);
      continue;
    }
    // Down to the start of the huge page that holds the byte below: every request after the
    // first is one whole huge page.
    std::uintptr_t from = std::max(lo, (at - 1) & ~(kStep - 1));
    if (::madvise(reinterpret_cast<void *>(from), at - from, MADV_POPULATE_WRITE) != 0)
      return; // a kernel without it (before 5.14), or memory gone: the writer faults as before
    at = from;
    populated_.store(reinterpret_cast<std::uintptr_t>(end_) - at, std::memory_order_release);
  }
}

} // namespace nkicc
