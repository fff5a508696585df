// The inline small vector behind access patterns: inline up to N elements, heap beyond, with
// the std::vector behaviour the IR relies on.
#include "nkicc/ir/kernel_ir.h"

#include <catch2/catch.hpp>

using nkicc::ir::AccessPattern;
using nkicc::ir::PatternPairs;
using nkicc::ir::SmallVector;
using Pair = std::pair<std::int64_t, std::int64_t>;

TEST_CASE("a small vector keeps order across the inline-to-heap boundary", "[ir]") {
  SmallVector<int, 2> v;
  CHECK(v.empty());
  for (int i = 0; i < 9; ++i)
    v.push_back(i);
  REQUIRE(v.size() == 9);
  for (int i = 0; i < 9; ++i)
    CHECK(v[i] == i);
  v.insert(v.begin(), -1);
  CHECK(v.front() == -1);
  CHECK(v.back() == 8);
  CHECK(v.size() == 10);
  v.resize(3);
  CHECK(v == std::vector<int>{-1, 0, 1});
  v.clear();
  CHECK(v.empty());
}

TEST_CASE("small vectors copy and move inline and heap contents", "[ir]") {
  PatternPairs inline_pairs{{512, 128}, {1, 512}};
  PatternPairs heap_pairs{{6, 1}, {2, 3}, {1, 2}, {1, 1}, {1, 1}};
  for (const PatternPairs &src : {inline_pairs, heap_pairs}) {
    PatternPairs copy = src;
    CHECK(copy == src);
    PatternPairs moved = std::move(copy);
    CHECK(moved == src);
    CHECK(copy.empty());
    PatternPairs assigned{{1, 1}};
    assigned = moved;
    CHECK(assigned == src);
    assigned = std::move(moved);
    CHECK(assigned == src);
    const PatternPairs &same = assigned; // self-assignment, through a reference so that clang does not warn
    assigned = same;
    CHECK(assigned == src);
  }
  PatternPairs from_vector = std::vector<Pair>{{4, 2}, {1, 4}};
  CHECK(from_vector.size() == 2);
  CHECK(from_vector[0] == Pair{4, 2});
  from_vector.emplace_back(1, 1);
  from_vector.emplace_back(from_vector[0]); // an element of the vector itself, while it grows
  CHECK(from_vector == std::vector<Pair>{{4, 2}, {1, 4}, {1, 1}, {4, 2}});
}

TEST_CASE("an access pattern of more dimensions than inline room keeps its shape", "[ir]") {
  AccessPattern ap;
  for (std::int64_t d = 0; d < 6; ++d)
    ap.pattern.emplace_back(1, d + 1);
  CHECK(ap.shape() == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
  AccessPattern copy = ap;
  CHECK(copy.pattern == ap.pattern);
}

TEST_CASE("SmallVector: resizing within the inline capacity allocates nothing", "[ir]") {
  nkicc::ir::SmallVector<int, 4> v;
  v.resize(3, 7);
  CHECK(v.capacity() == 4); // still inline
  CHECK(v.size() == 3);
  CHECK(v[2] == 7);
  v.resize(4);
  CHECK(v.capacity() == 4);
  v.resize(5);
  CHECK(v.capacity() >= 5); // now on the heap
  CHECK(v[4] == 0);
  CHECK(v[0] == 7);
}
