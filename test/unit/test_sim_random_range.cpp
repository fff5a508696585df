#include "nkicc/sim/random_range.h"
#include "nkicc/sim/simulator.h"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace nkicc;
using namespace nkicc::sim;

TEST_CASE("parse_random_range: a parameter of every call or of one, and [LOW, HIGH)", "[sim]") {
  std::string error;
  auto all = parse_random_range("idx=0:128", error);
  REQUIRE(all);
  CHECK_FALSE(all->call);
  CHECK(all->param == "idx");
  CHECK(all->low == 0);
  CHECK(all->high == 128);
  CHECK(all->text == "idx=0:128");
  auto one = parse_random_range("call12.scale=-0.5:2.5e1", error);
  REQUIRE(one);
  CHECK(one->call == std::size_t{12});
  CHECK(one->param == "scale");
  CHECK(one->low == -0.5);
  CHECK(one->high == 25);
  // A parameter may itself be called `call1`: without a dot it is a name.
  auto named = parse_random_range("call1=1:2", error);
  REQUIRE(named);
  CHECK_FALSE(named->call);
  CHECK(named->param == "call1");
}

TEST_CASE("parse_random_range: what is wrong with a bad value", "[sim]") {
  auto why = [](std::string_view text) {
    std::string error;
    CHECK_FALSE(parse_random_range(text, error));
    return error;
  };
  CHECK(why("idx") == "expected [callN.]NAME=LOW:HIGH");
  CHECK(why("callx.idx=0:1") == "'callx.idx' is not callN.NAME (N a call's number)");
  CHECK(why("call.idx=0:1") == "'call.idx' is not callN.NAME (N a call's number)");
  CHECK(why("call-1.idx=0:1") == "'call-1.idx' is not callN.NAME (N a call's number)");
  CHECK(why("1x=0:1") == "'1x' is not a parameter name");
  CHECK(why("call0.=0:1") == "'' is not a parameter name");
  CHECK(why("idx=0") == "'0' is not LOW:HIGH (two finite numbers)");
  CHECK(why("idx=a:3") == "'a:3' is not LOW:HIGH (two finite numbers)");
  CHECK(why("idx=0:inf") == "'0:inf' is not LOW:HIGH (two finite numbers)");
  CHECK(why("idx=0:1:2") == "'0:1:2' is not LOW:HIGH (two finite numbers)");
  CHECK(why("idx=5:5") == "the range [5, 5) is empty: LOW must be less than HIGH");
}

TEST_CASE("random_range_mismatch: integer bounds within the dtype, no range of bool or MX", "[sim]") {
  std::string error;
  auto range = [&](std::string_view text) { return *parse_random_range(text, error); };
  CHECK_FALSE(random_range_mismatch(range("i=0:256"), DType::UInt8));
  CHECK(random_range_mismatch(range("i=0:257"), DType::UInt8) ==
        "uint8 holds [0, 255], so a range of it lies within [0, 256]");
  CHECK(random_range_mismatch(range("i=-129:0"), DType::Int8) ==
        "int8 holds [-128, 127], so a range of it lies within [-128, 128]");
  CHECK(random_range_mismatch(range("i=0:1.5"), DType::Int32) ==
        "the bounds of a range of int32 values must be integers");
  CHECK_FALSE(random_range_mismatch(range("x=0:1.5"), DType::BFloat16));
  CHECK(random_range_mismatch(range("m=0:2"), DType::Bool) ==
        "a range applies to integer and float parameters, not to bool");
  CHECK(random_range_mismatch(range("m=0:2"), DType::Float8E5M2X4) ==
        "a range applies to integer and float parameters, not to float8_e5m2_x4");
}

TEST_CASE("random_array: a range bounds the values and keeps the stream", "[sim]") {
  std::string error;
  std::vector<std::int64_t> shape = {64, 32};
  RandomRange idx = *parse_random_range("i=250:256", error);
  HostArray ints = random_array(shape, DType::Int32, 5, 0, 1, &idx);
  CHECK(*std::min_element(ints.values.begin(), ints.values.end()) == 250);
  CHECK(*std::max_element(ints.values.begin(), ints.values.end()) == 255);
  CHECK(std::all_of(ints.values.begin(), ints.values.end(), [](double v) { return v == static_cast<int>(v); }));
  RandomRange wide = *parse_random_range("x=10:12", error);
  HostArray floats = random_array(shape, DType::Float32, 5, 0, 1, &wide);
  CHECK(*std::min_element(floats.values.begin(), floats.values.end()) >= 10);
  CHECK(*std::max_element(floats.values.begin(), floats.values.end()) < 12);
  // The same draws as without a range: u in [0, 1) maps to [-1, 1) there and to [10, 12) here.
  HostArray plain = random_array(shape, DType::Float32, 5, 0, 1);
  for (std::size_t i = 0; i < plain.values.size(); i += 97)
    CHECK(floats.values[i] == Approx(plain.values[i] + 11).epsilon(1e-6));
  // Deterministic.
  CHECK(random_array(shape, DType::Int32, 5, 0, 1, &idx).values == ints.values);
}
