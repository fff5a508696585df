#include "nkicc/support/memory_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>

namespace nkicc::memory {

namespace detail {
constinit std::atomic<std::uint64_t> g_in_use{0};
constinit std::atomic<std::uint64_t> g_threshold{std::numeric_limits<std::uint64_t>::max()};
constinit bool g_counting = false;
} // namespace detail

namespace {

using detail::g_in_use;
using detail::g_threshold;

/// The peak is recorded each time the bytes in use pass the last peak by this much.
constexpr std::uint64_t kPeakStep = std::uint64_t{1} << 20;
/// Freed when malloc fails, so that unwinding and the report have room to allocate. glibc maps a
/// block this large on its own and its pages are never touched, so it is never resident.
constexpr std::size_t kReserveBytes = std::size_t{32} << 20;

// Everything below is touched only in the slow path, under the mutex.
std::mutex g_mutex;
std::uint64_t g_limit = 0; // 0: no limit
std::uint64_t g_peak = 0;
bool g_tripped = false;
void *g_reserve = nullptr;

thread_local bool t_budget_thread = false;

/// Room above the limit after one BudgetExceeded, for unwinding and reporting.
std::uint64_t slack(std::uint64_t limit) { return std::max<std::uint64_t>(std::uint64_t{64} << 20, limit / 16); }

std::uint64_t effective_limit() {
  if (g_limit == 0)
    return std::numeric_limits<std::uint64_t>::max();
  return g_tripped ? g_limit + slack(g_limit) : g_limit;
}

void update_threshold() {
  std::uint64_t mark = g_peak + kPeakStep;
  g_threshold.store(std::min(effective_limit(), mark), std::memory_order_relaxed);
}

/// A std::bad_alloc can propagate only on the thread that runs the budgeted work, and not while
/// another exception unwinds the stack (a second one would call std::terminate).
bool may_throw() { return t_budget_thread && std::uncaught_exceptions() == 0; }

} // namespace

namespace detail {

void over_threshold(std::size_t requested) {
  std::unique_lock lock(g_mutex);
  std::uint64_t now = g_in_use.load(std::memory_order_relaxed);
  std::uint64_t after = requested > std::numeric_limits<std::uint64_t>::max() - now
                            ? std::numeric_limits<std::uint64_t>::max()
                            : now + requested;
  bool exceeded = g_limit != 0 && after > effective_limit() && may_throw();
  if (exceeded)
    g_tripped = true;
  else
    g_peak = std::max(g_peak, after);
  update_threshold();
  std::uint64_t limit = g_limit;
  lock.unlock();
  if (exceeded)
    throw BudgetExceeded(BudgetExceeded::Cause::Budget, requested, limit);
}

void system_refused(std::size_t requested, bool nothrow) {
  std::unique_lock lock(g_mutex);
  std::free(g_reserve);
  g_reserve = nullptr;
  if (nothrow || !may_throw())
    return;
  g_tripped = true;
  update_threshold();
  std::uint64_t limit = g_limit;
  lock.unlock();
  throw BudgetExceeded(BudgetExceeded::Cause::System, requested, limit);
}

} // namespace detail

const char *BudgetExceeded::what() const noexcept {
  return cause_ == Cause::Budget ? "nkicc: memory budget exceeded" : "nkicc: out of memory";
}

std::string BudgetExceeded::message(std::string_view what) const {
  if (cause_ == Cause::Budget) {
    std::string text = fmt::format("memory budget exceeded: {} would hold more than {} (raise --max-memory if the "
                                   "kernel really needs it)",
                                   what, format_size(limit_));
    // One allocation that is a large part of the budget is the likely culprit: say its size.
    if (requested_ >= limit_ / 4)
      text += fmt::format("; it asked for {} at once", format_size(requested_));
    return text;
  }
  std::string text = fmt::format("out of memory: the system refused {} more for {}", format_size(requested_), what);
  if (limit_ != 0)
    text += fmt::format(", below the {} that --max-memory allows; the address-space limit (ulimit -v) or the "
                        "machine's memory is smaller: lower --max-memory",
                        format_size(limit_));
  return text;
}

void set_limit(std::uint64_t bytes) {
  std::lock_guard lock(g_mutex);
  t_budget_thread = true;
  g_limit = bytes;
  g_tripped = false;
  if (!g_reserve && detail::g_counting)
    g_reserve = std::malloc(kReserveBytes); // not counted: it is never handed out
  update_threshold();
}

std::uint64_t limit() {
  std::lock_guard lock(g_mutex);
  return g_limit;
}

std::uint64_t in_use() { return g_in_use.load(std::memory_order_relaxed); }

std::uint64_t peak() {
  std::lock_guard lock(g_mutex);
  return std::max(g_peak, in_use());
}

bool counting() { return detail::g_counting; }

std::optional<std::uint64_t> parse_size(std::string_view text) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 63;
  std::size_t i = 0;
  std::uint64_t whole = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (whole > kMax / 10)
      return std::nullopt;
    whole = whole * 10 + static_cast<std::uint64_t>(text[i] - '0');
    ++i;
  }
  if (i == 0)
    return std::nullopt;
  // A fraction of up to three digits ("1.5G"): sizes are not written more precisely.
  std::uint64_t fraction = 0, fraction_scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (i - start == 3)
        return std::nullopt;
      fraction = fraction * 10 + static_cast<std::uint64_t>(text[i] - '0');
      fraction_scale *= 10;
      ++i;
    }
    if (i == start)
      return std::nullopt;
  }
  int shift = 0;
  if (i < text.size()) {
    switch (text[i]) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: return std::nullopt;
    }
    ++i;
  }
  // A fraction of a byte means nothing.
  if (i != text.size() || (fraction_scale > 1 && shift == 0))
    return std::nullopt;
  if (whole > (kMax >> shift))
    return std::nullopt;
  std::uint64_t bytes = (whole << shift) + ((fraction << shift) / fraction_scale);
  if (bytes < (std::uint64_t{1} << 20) || bytes > kMax)
    return std::nullopt;
  return bytes;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char *kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return fmt::format("{} bytes", bytes);
  int unit = 0;
  double value = static_cast<double>(bytes) / 1024;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  std::string text = fmt::format("{:.1f}", value);
  if (text.ends_with(".0"))
    text.resize(text.size() - 2);
  return text + " " + kUnits[unit];
}

} // namespace nkicc::memory
