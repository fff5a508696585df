// The nkicc binary's global operator new and delete: malloc and free, with every block's usable
// size counted against the run's memory budget (nkicc/support/memory_budget.h). A request is
// checked against the budget before malloc sees it; malloc_usable_size makes the count exact
// without sized deallocation. Under AddressSanitizer this replaces the sanitizer's own operator
// new (malloc and free are still its, so overflows, use after free and leaks are still found;
// only the new/delete mismatch check is lost), so that the budget's error path is checked under
// the sanitizers too.
//
// malloc keeps freed heap for reuse (memory::configure_heap, nkicc/support/heap_pages.h).
#include "nkicc/support/heap_pages.h"
#include "nkicc/support/memory_budget.h"

#include <cstdlib>
#include <malloc.h>
#include <new>
#include <unistd.h>

namespace {

namespace md = nkicc::memory::detail;

/// malloc failed twice, the second time after the emergency reserve was freed, where no exception
/// may be thrown (while another exception unwinds the stack): the run cannot go on. The message
/// is written without allocating.
[[noreturn]] void out_of_memory() {
  static constexpr char kMessage[] =
      "nkicc: error: out of memory while an error was being handled; the run cannot continue "
      "(lower --max-memory below what the machine provides) [out-of-memory]\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  std::_Exit(1);
}

void *plain_alloc(std::size_t n, std::size_t align) {
  if (align <= alignof(std::max_align_t))
    return std::malloc(n);
  void *p = nullptr;
  return ::posix_memalign(&p, align, n) == 0 ? p : nullptr;
}

/// A block of `n` bytes aligned to `align`, and the bytes it holds (charged to the budget).
void *raw_alloc(std::size_t n, std::size_t align, std::size_t &usable) {
  void *p = plain_alloc(n, align);
  usable = p ? ::malloc_usable_size(p) : 0;
  return p;
}

void *allocate(std::size_t n, std::size_t align, bool nothrow) {
  if (n == 0)
    n = 1;
  if (nothrow) {
    try {
      md::check(n);
    } catch (const std::bad_alloc &) {
      return nullptr;
    }
  } else {
    md::check(n); // throws past the budget
  }
  std::size_t usable = 0;
  void *p = raw_alloc(n, align, usable);
  if (!p) [[unlikely]] {
    md::system_refused(n, nothrow); // throws when it may
    p = raw_alloc(n, align, usable);
    if (!p) {
      if (nothrow)
        return nullptr;
      out_of_memory();
    }
  }
  md::charge(usable);
  return p;
}

void release(void *p) noexcept {
  if (!p)
    return;
  md::credit(::malloc_usable_size(p));
  std::free(p);
}

/// Tells the library that allocations are counted (memory::counting()), and sets malloc up
/// (memory::configure_heap).
struct MarkCounting {
  MarkCounting() {
    md::g_counting = true;
    nkicc::memory::configure_heap();
  }
} mark_counting;

constexpr std::size_t kDefault = alignof(std::max_align_t);

} // namespace

void *operator new(std::size_t n) { return allocate(n, kDefault, false); }
void *operator new[](std::size_t n) { return allocate(n, kDefault, false); }
void *operator new(std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a), false); }
void *operator new[](std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a), false); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return allocate(n, kDefault, true); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return allocate(n, kDefault, true); }
void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
  return allocate(n, static_cast<std::size_t>(a), true);
}
void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
  return allocate(n, static_cast<std::size_t>(a), true);
}

void operator delete(void *p) noexcept { release(p); }
void operator delete[](void *p) noexcept { release(p); }
void operator delete(void *p, std::size_t) noexcept { release(p); }
void operator delete[](void *p, std::size_t) noexcept { release(p); }
void operator delete(void *p, std::align_val_t) noexcept { release(p); }
void operator delete[](void *p, std::align_val_t) noexcept { release(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { release(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { release(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { release(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { release(p); }
