// lib/pylib's containers and hashing as pure functions: CPython's hash values for ints, floats,
// tuples and frozensets, DictData's insertion order through inserts, removals and rebuilds, and
// sets iterating in CPython's order.
#include "nkicc/trace/pylib.h"

#include "pylib/set.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace nkicc;
using namespace nkicc::trace;

namespace {
Value tuple(std::vector<Value> items) { return Value::tuple(std::move(items)); }
Value i(std::int64_t v) { return Value::integer(v); }
} // namespace

TEST_CASE("hash of numbers is CPython's") {
  // Values printed by CPython 3.11: hash(1), hash(-1), hash(2**61-1), hash(2**61), ...
  CHECK(int_hash(1) == 1);
  CHECK(int_hash(-1) == -2);
  CHECK(int_hash((std::int64_t{1} << 61) - 1) == 0);
  CHECK(int_hash(std::int64_t{1} << 61) == 1);
  CHECK(int_hash(INT64_MIN) == -4);
  CHECK(int_hash(INT64_MAX) == 3);
  CHECK(float_hash(1.5) == 1152921504606846977);
  CHECK(float_hash(-0.5) == -1152921504606846976);
  CHECK(float_hash(1e300) == 1224995262755759164);
  CHECK(float_hash(INFINITY) == 314159);
  CHECK(float_hash(3.0) == int_hash(3)); // equal numbers hash alike
}

TEST_CASE("hash of tuples is CPython's, at any depth") {
  CHECK(hash_value(nullptr, tuple({})) == 5740354900026072187);
  CHECK(hash_value(nullptr, tuple({i(1)})) == -6644214454873602895);
  CHECK(hash_value(nullptr, tuple({i(1), i(2)})) == -3550055125485641917);
  CHECK(hash_value(nullptr, tuple({i(1), tuple({i(2), i(3)})})) == 7267574591690527098);
  // 100,000 levels of nesting: no recursion on the C++ stack.
  Value deep = tuple({});
  for (int k = 0; k < 100000; ++k)
    deep = tuple({deep});
  Value deep2 = tuple({});
  for (int k = 0; k < 100000; ++k)
    deep2 = tuple({deep2});
  CHECK(hash_value(nullptr, deep) == hash_value(nullptr, deep2));
}

TEST_CASE("unhashable values raise TypeError in CPython's words") {
  try {
    hash_value(nullptr, tuple({i(1), Value::list({})}));
    FAIL("no error");
  } catch (const TraceError &e) {
    CHECK(e.id == "TypeError");
    CHECK(e.message == "unhashable type: 'list'");
  }
}

TEST_CASE("DictData keeps insertion order through removals and rebuilds") {
  DictData d;
  for (std::int64_t k = 0; k < 1000; ++k)
    d.set(nullptr, i(k * 7919 % 1000), i(k));
  CHECK(d.size() == 1000);
  for (std::int64_t k = 0; k < 1000; k += 2)
    CHECK(d.erase(nullptr, i(k * 7919 % 1000)));
  CHECK(d.size() == 500);
  CHECK_FALSE(d.erase(nullptr, i(0)));
  // Overwriting keeps the place; a new key goes last.
  d.set(nullptr, i(7919 % 1000), i(-1));
  d.set(nullptr, i(5000), i(5000));
  std::vector<std::int64_t> keys;
  for (const auto &[key, value] : d.items())
    keys.push_back(key.i);
  REQUIRE(keys.size() == 501);
  CHECK(keys.front() == 7919 % 1000);
  CHECK(keys.back() == 5000);
  for (std::size_t k = 0; k + 1 < keys.size(); ++k)
    CHECK(keys[k] == static_cast<std::int64_t>((2 * k + 1) * 7919 % 1000));
  CHECK(d.find(nullptr, i(7919 % 1000))->i == -1);
  std::optional<DictData::Item> last = d.pop_last();
  REQUIRE(last);
  CHECK(last->first.i == 5000);
  CHECK(d.size() == 500);
}

TEST_CASE("DictData: int, float and bool keys that are equal are one key") {
  DictData d;
  d.set(nullptr, i(1), Value::str("int"));
  d.set(nullptr, Value::floating(1.0), Value::str("float"));
  d.set(nullptr, Value::boolean(true), Value::str("bool"));
  CHECK(d.size() == 1);
  CHECK(d.items().begin()->first.kind == Value::Kind::Int); // the first key stays
  CHECK(d.find(nullptr, i(1))->str_text() == "bool");
}

TEST_CASE("DictData: a million inserts stay fast and exact") {
  DictData d;
  for (std::int64_t k = 0; k < 1000000; ++k)
    d.set(nullptr, i(k), i(k));
  CHECK(d.size() == 1000000);
  for (std::int64_t k = 0; k < 1000000; k += 99991)
    CHECK(d.find(nullptr, i(k))->i == k);
}

TEST_CASE("sets iterate in CPython's order") {
  // CPython 3.11: list(set([5, 13, 21, 1])) == [1, 13, 21, 5]; list(set([100, 1, 64, 8])) ==
  // [64, 1, 100, 8]; list(set([2**40, 7, -3])) == [1099511627776, -3, 7].
  auto order = [](std::vector<std::int64_t> items) {
    pylib::SetObject s(false);
    for (std::int64_t v : items)
      s.add(nullptr, i(v));
    std::vector<std::int64_t> out;
    for (const Value &v : s.keys())
      out.push_back(v.i);
    return out;
  };
  CHECK(order({5, 13, 21, 1}) == std::vector<std::int64_t>{1, 13, 21, 5});
  CHECK(order({100, 1, 64, 8}) == std::vector<std::int64_t>{64, 1, 100, 8});
  CHECK(order({std::int64_t{1} << 40, 7, -3}) == std::vector<std::int64_t>{std::int64_t{1} << 40, -3, 7});
  std::vector<std::int64_t> down;
  for (std::int64_t v = 10; v > 0; --v)
    down.push_back(v);
  CHECK(order(down) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

TEST_CASE("frozenset hashes are CPython's") {
  // hash(frozenset()), hash(frozenset([1])), hash(frozenset([1, 2, 3])) in CPython 3.11.
  auto fs = [](std::vector<Value> items) {
    auto s = std::make_shared<pylib::SetObject>(true);
    for (const Value &v : items)
      s->add(nullptr, v);
    return Value::object(s);
  };
  SourceManager sources;
  Interpreter interp(sources, {}, nullptr);
  CHECK(hash_value(&interp, fs({})) == 133146708735736);
  CHECK(hash_value(&interp, fs({i(1)})) == -558064481276695278);
  CHECK(hash_value(&interp, fs({i(1), i(2), i(3)})) == -272375401224217160);
  CHECK(hash_value(&interp, fs({i(3), i(2), i(1)})) == -272375401224217160);
}
