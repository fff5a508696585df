#include "nkicc/ir/segmented_vector.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using nkicc::ir::SegmentedVector;

TEST_CASE("SegmentedVector: indexing, iteration and growth keep elements in place", "[ir]") {
  SegmentedVector<std::string> v;
  CHECK(v.empty());
  std::vector<const std::string *> addresses;
  for (int i = 0; i < 10000; ++i) {
    v.push_back("s" + std::to_string(i));
    addresses.push_back(&v.back());
  }
  REQUIRE(v.size() == 10000);
  for (int i = 0; i < 10000; ++i) {
    CHECK(v[static_cast<std::size_t>(i)] == "s" + std::to_string(i));
    CHECK(&v[static_cast<std::size_t>(i)] == addresses[static_cast<std::size_t>(i)]); // never moved
  }
  CHECK(std::distance(v.begin(), v.end()) == 10000);
  CHECK(*(v.begin() + 4242) == "s4242");
  CHECK(std::find(v.begin(), v.end(), "s9999") == v.end() - 1);

  SegmentedVector<std::string> copy = v;
  v.truncate(3);
  CHECK(v.size() == 3);
  CHECK(v.back() == "s2");
  CHECK(copy.size() == 10000);
  CHECK(copy[9999] == "s9999");
  SegmentedVector<std::string> moved = std::move(copy);
  CHECK(moved.size() == 10000);
  CHECK(copy.empty());
  v = {"a", "b"};
  CHECK(v.size() == 2);
  CHECK(v[1] == "b");
  v.resize(5);
  CHECK(v[4].empty());
  v.clear();
  CHECK(v.empty());
}

TEST_CASE("SegmentedVector: room_in_segment tells how many more stay contiguous", "[ir]") {
  SegmentedVector<int> v;
  CHECK(v.room_in_segment() == 0); // no segment yet
  v.push_back(0);
  CHECK(v.room_in_segment() == 63); // the first segment holds 64
  for (int i = 1; i < 64; ++i)
    v.push_back(i);
  CHECK(v.room_in_segment() == 0);
  v.push_back(64);
  CHECK(v.room_in_segment() == 127); // the second holds 128
  // Every run that fits in room_in_segment() is contiguous.
  std::size_t start = v.size();
  for (std::size_t k = 0; k < 127; ++k)
    v.push_back(static_cast<int>(start + k));
  for (std::size_t k = 0; k < 127; ++k)
    CHECK(&v[start + k] == &v[start] + k);
}
