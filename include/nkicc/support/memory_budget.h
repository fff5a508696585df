// The run's memory budget (issue 17, `--max-memory`): every byte allocated through operator new
// is counted, and an allocation that would take the bytes in use past the limit throws
// memory::BudgetExceeded (a std::bad_alloc) instead. The interpreter turns it into a located,
// uncatchable trace error at the statement that was running; the tool catches what other stages
// let through and reports it at the input file. Either way: exit 1, no output.
//
// The counting operator new and delete live in the binary, not in the library
// (tools/nkicc/counting_new.cpp): a program that links libnkicc without them (the unit tests)
// counts nothing and never sees the exception; counting() says which. The fast path is inline
// below: one compare before malloc, one relaxed atomic add and one compare after it.
//
// Rules that keep std::bad_alloc from escaping, and from leaving a destructor:
// - it throws only on the thread that set the limit, and never while an exception is unwinding
//   (std::uncaught_exceptions): a second exception there would call std::terminate;
// - after one throw the limit grows by a slack, so that unwinding and reporting can allocate;
//   code that swallows the exception and keeps growing meets the budget again past the slack;
// - when malloc itself fails (ulimit -v, a full machine) an emergency reserve is freed and the
//   same exception is thrown with Cause::System; where it may not throw, malloc is retried in the
//   room the reserve left.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>

namespace nkicc::memory {

/// `--max-memory`'s default: a third of a 24 GiB machine, leaving room for the system, a second
/// run and the page cache.
inline constexpr std::uint64_t kDefaultLimit = std::uint64_t{8} << 30;

/// Thrown by the counting operator new. It is a std::bad_alloc, as operator new must throw, so
/// the standard containers keep their guarantees; nkicc catches it by this type.
class BudgetExceeded : public std::bad_alloc {
public:
  enum class Cause : std::uint8_t {
    Budget, ///< more than --max-memory would be in use
    System, ///< malloc failed (the address-space limit, or the machine is out of memory)
  };
  BudgetExceeded(Cause cause, std::size_t requested, std::uint64_t limit) noexcept
      : cause_(cause), requested_(requested), limit_(limit) {}
  const char *what() const noexcept override;

  Cause cause() const { return cause_; }
  std::size_t requested() const { return requested_; }
  std::uint64_t limit() const { return limit_; }
  /// The diagnostic's id: `memory-budget` or `out-of-memory`.
  const char *id() const { return cause_ == Cause::Budget ? "memory-budget" : "out-of-memory"; }
  /// The diagnostic's message (lowercase start, no trailing period); `what` names what was running
  /// ("the trace", "the run").
  std::string message(std::string_view what) const;

private:
  Cause cause_;
  std::size_t requested_;
  std::uint64_t limit_;
};

/// Starts enforcing `bytes` (0: no limit) for allocations on the calling thread, from a clean
/// state (no slack), and takes the emergency reserve. A run calls it once, before its first stage.
void set_limit(std::uint64_t bytes);
std::uint64_t limit();
/// Bytes currently held through operator new, and the most ever held (to within 1 MiB).
std::uint64_t in_use();
std::uint64_t peak();
/// Whether the binary links the counting operator new (tools/nkicc/counting_new.cpp).
bool counting();

/// `--max-memory`'s syntax: a byte count with an optional binary suffix K, M, G or T (`512M`,
/// `8G`, `1.5G`; lowercase too); at least 1 MiB, at most 2^63. Nullopt when the text is not one.
std::optional<std::uint64_t> parse_size(std::string_view text);
/// A byte count as people read it: `8 GiB`, `1.5 GiB`, `512 MiB`, `900 bytes`.
std::string format_size(std::uint64_t bytes);

// ---- the counting operator new's fast path (used by tools/nkicc/counting_new.cpp) --------------
namespace detail {
extern std::atomic<std::uint64_t> g_in_use;
/// The bytes in use at which an allocation takes the slow path: the limit, or the next peak mark.
extern std::atomic<std::uint64_t> g_threshold;
extern bool g_counting;

/// A request for `requested` bytes would take the bytes in use past the threshold: records the
/// peak and throws BudgetExceeded when that is past the limit and throwing is allowed. Called
/// before malloc, so that a request of a terabyte never reaches it (under AddressSanitizer such a
/// malloc aborts the process instead of returning null).
void over_threshold(std::size_t requested);
/// malloc returned null for `requested` bytes: frees the emergency reserve and throws
/// BudgetExceeded(System) when allowed (never when `nothrow`); when it returns, the caller retries
/// malloc once, in the room the reserve left.
void system_refused(std::size_t requested, bool nothrow);

inline void check(std::size_t requested) {
  std::uint64_t now = g_in_use.load(std::memory_order_relaxed);
  std::uint64_t threshold = g_threshold.load(std::memory_order_relaxed);
  if (requested > threshold || now > threshold - requested) [[unlikely]]
    over_threshold(requested);
}
inline void charge(std::size_t usable) { g_in_use.fetch_add(usable, std::memory_order_relaxed); }
inline void credit(std::size_t usable) { g_in_use.fetch_sub(usable, std::memory_order_relaxed); }
} // namespace detail

} // namespace nkicc::memory
