#include "nkicc/support/memory_budget.h"

#include <catch2/catch.hpp>

using namespace nkicc;
using memory::format_size;
using memory::parse_size;

namespace {
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
} // namespace

TEST_CASE("parse_size reads bytes and binary suffixes", "[support]") {
  CHECK(parse_size("1048576") == kMiB);
  CHECK(parse_size("1M") == kMiB);
  CHECK(parse_size("1m") == kMiB);
  CHECK(parse_size("1024K") == kMiB);
  CHECK(parse_size("1024k") == kMiB);
  CHECK(parse_size("512M") == 512 * kMiB);
  CHECK(parse_size("8G") == 8 * kGiB);
  CHECK(parse_size("8g") == 8 * kGiB);
  CHECK(parse_size("2T") == 2048 * kGiB);
  CHECK(parse_size("1.5G") == 3 * kGiB / 2);
  CHECK(parse_size("0.5G") == 512 * kMiB);
  CHECK(parse_size("1.25M") == kMiB + kMiB / 4);
  CHECK(parse_size("1.001G") == kGiB + kGiB / 1000);
  // The largest size: 2^63 bytes.
  CHECK(parse_size("8388608T") == std::uint64_t{1} << 63);
  CHECK(parse_size("9223372036854775808") == std::uint64_t{1} << 63);
}

TEST_CASE("parse_size refuses what is not a size of at least 1 MiB", "[support]") {
  for (const char *text : {"", "M", "-1M", "+1M", " 1M", "1M ", "1 M", "1MB", "1MiB", "1Q", "1.", ".5G", "1.5",
                           "1.2345G", "0", "0M", "1048575", "1023K", "0.9M", "1e9", "0x100000", "8388609T",
                           "9223372036854775809", "99999999999999999999", "18446744073709551616"})
    CHECK_FALSE(parse_size(text).has_value());
}

TEST_CASE("format_size writes a byte count in binary units", "[support]") {
  CHECK(format_size(0) == "0 bytes");
  CHECK(format_size(900) == "900 bytes");
  CHECK(format_size(1024) == "1 KiB");
  CHECK(format_size(1536) == "1.5 KiB");
  CHECK(format_size(64 * kMiB) == "64 MiB");
  CHECK(format_size(3 * kGiB / 2) == "1.5 GiB");
  CHECK(format_size(memory::kDefaultLimit) == "8 GiB");
  CHECK(format_size(std::uint64_t{1} << 63) == "8 EiB");
}

TEST_CASE("BudgetExceeded's message says what ran out, the limit and the one large request", "[support]") {
  memory::BudgetExceeded small(memory::BudgetExceeded::Cause::Budget, 4096, 64 * kMiB);
  CHECK(std::string(small.id()) == "memory-budget");
  CHECK(small.message("the trace") ==
        "memory budget exceeded: the trace would hold more than 64 MiB (raise --max-memory if the kernel really "
        "needs it)");
  memory::BudgetExceeded large(memory::BudgetExceeded::Cause::Budget, 32 * kMiB, 64 * kMiB);
  CHECK(large.message("the run") == "memory budget exceeded: the run would hold more than 64 MiB (raise "
                                    "--max-memory if the kernel really needs it); it asked for 32 MiB at once");
  memory::BudgetExceeded system(memory::BudgetExceeded::Cause::System, 2 * kMiB, 8 * kGiB);
  CHECK(std::string(system.id()) == "out-of-memory");
  CHECK(system.message("the trace") ==
        "out of memory: the system refused 2 MiB more for the trace, below the 8 GiB that --max-memory allows; the "
        "address-space limit (ulimit -v) or the machine's memory is smaller: lower --max-memory");
}

TEST_CASE("The unit tests do not link the counting operator new", "[support]") {
  // The budget is the nkicc binary's (tools/nkicc/counting_new.cpp): a library user's
  // allocations are neither counted nor refused.
  CHECK_FALSE(memory::counting());
}
