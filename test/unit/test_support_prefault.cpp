#include "nkicc/support/prefault.h"

#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

using namespace nkicc;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

/// An anonymous mapping none of whose pages is touched yet.
struct Mapping {
  std::size_t size;
  unsigned char *p;
  explicit Mapping(std::size_t bytes)
      : size(bytes), p(static_cast<unsigned char *>(
                         ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))) {
    REQUIRE(p != MAP_FAILED);
  }
  ~Mapping() { ::munmap(p, size); }
  /// Resident bytes among the last `bytes` of the mapping.
  std::size_t resident_at_end(std::size_t bytes) const {
    auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in(bytes / page);
    REQUIRE(::mincore(p + size - bytes, bytes, in.data()) == 0);
    std::size_t n = 0;
    for (unsigned char c : in)
      n += (c & 1) ? page : 0;
    return n;
  }
};

/// Waits (up to ten seconds: a hung thread fails the test instead of hanging it) until `done`.
template <class F> bool eventually(F done) {
  for (int i = 0; i < 10000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done();
}

} // namespace

TEST_CASE("BackwardPrefaulter faults pages in from the end, a lead ahead of the writer", "[support]") {
  Mapping m(24 * kMiB);
  REQUIRE(m.resident_at_end(m.size) == 0);
  BackwardPrefaulter prefault(m.p, m.p + m.size, 4 * kMiB);
  // Nothing written yet: it faults in the lead (whole 2 MiB steps), then waits.
  REQUIRE(eventually([&] { return prefault.populated() >= 4 * kMiB; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(prefault.populated() <= 6 * kMiB);
  CHECK(m.resident_at_end(4 * kMiB) == 4 * kMiB);
  CHECK(m.resident_at_end(12 * kMiB) < 12 * kMiB);
  // The writer moves on: so does the prefaulter, to the start of the buffer.
  std::memset(m.p + m.size - 3 * kMiB, 7, 3 * kMiB);
  prefault.advance(10 * kMiB);
  REQUIRE(eventually([&] { return prefault.populated() >= 14 * kMiB; }));
  prefault.advance(m.size);
  REQUIRE(eventually([&] { return prefault.populated() == m.size; }));
  CHECK(m.resident_at_end(m.size) == m.size);
  // Populating changed no byte the writer wrote.
  CHECK(m.p[m.size - 1] == 7);
  CHECK(m.p[m.size - 3 * kMiB] == 7);
  CHECK(m.p[0] == 0);
}

TEST_CASE("BackwardPrefaulter stops when told, and its destructor waits for it", "[support]") {
  Mapping m(64 * kMiB);
  {
    BackwardPrefaulter prefault(m.p, m.p + m.size, 2 * kMiB);
    REQUIRE(eventually([&] { return prefault.populated() >= 2 * kMiB; }));
    prefault.stop();
    std::size_t at_stop = prefault.populated();
    prefault.advance(m.size);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(prefault.populated() <= at_stop + 2 * kMiB);
  }
  CHECK(m.resident_at_end(m.size) < m.size);
}
