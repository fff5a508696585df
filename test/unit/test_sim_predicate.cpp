#include "sim/predicate.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace nkicc::sim;

namespace {
bool holds(const Predicate &p, std::vector<std::int64_t> c) { return p.eval(c); }
} // namespace

TEST_CASE("Predicate: the mask texts lib/nki writes", "[sim]") {
  std::string error;
  // `mask=(i * 128 + ix < rows)` with i = 2, rows = 300.
  auto p = Predicate::parse("i0 + 256 < 300", error);
  REQUIRE(p);
  CHECK(holds(*p, {43, 0}));
  CHECK_FALSE(holds(*p, {44, 0}));
  // affine_select's `i_q - i_k >= 0`.
  auto causal = Predicate::parse("(i0) - (i1) >= 0", error);
  REQUIRE(causal);
  CHECK(holds(*causal, {3, 3}));
  CHECK_FALSE(holds(*causal, {3, 4}));
  // Masks combined with & and |, negative constants, scaled axes.
  auto both = Predicate::parse("(2*i1 + -4 >= 0) & (i0 < 8)", error);
  REQUIRE(both);
  CHECK(holds(*both, {7, 2}));
  CHECK_FALSE(holds(*both, {8, 2}));
  CHECK_FALSE(holds(*both, {0, 1}));
  auto either = Predicate::parse("(i0 == 1) | (i1 != 0)", error);
  REQUIRE(either);
  CHECK(holds(*either, {1, 0}));
  CHECK_FALSE(holds(*either, {0, 0}));
  CHECK(both->axes() == 2);
}

TEST_CASE("Predicate: program ids bound per instance", "[sim]") {
  std::string error;
  auto p = Predicate::parse("i0 + 128*program_id(0) + 5 < 300", error);
  REQUIRE(p);
  std::vector<std::int64_t> pid = {2, 0, 0};
  p->bind(pid);
  CHECK(holds(*p, {38}));
  CHECK_FALSE(holds(*p, {39}));
  auto start = Predicate::parse("program_id(1) + 7", error);
  REQUIRE(start);
  std::vector<std::int64_t> pid2 = {0, 3, 0};
  start->bind(pid2);
  CHECK(start->value({}) == 10);
}

TEST_CASE("Predicate: text outside the grammar is an error naming the place", "[sim]") {
  std::string error;
  CHECK_FALSE(Predicate::parse("i0 * i1 < 3", error));
  CHECK(error == "a product that is not affine at offset 7 of 'i0 * i1 < 3'");
  CHECK_FALSE(Predicate::parse("i0 < ", error));
  CHECK(error == "expected a number, an index or program_id at offset 5 of 'i0 < '");
  CHECK_FALSE(Predicate::parse("i9 < 1", error));
  CHECK(error == "expected an index axis 0 to 5 at offset 1 of 'i9 < 1'");
  CHECK_FALSE(Predicate::parse("(i0 < 1", error));
  CHECK(error == "expected ')' at offset 7 of '(i0 < 1'");
}
