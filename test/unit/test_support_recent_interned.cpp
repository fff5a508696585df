#include "nkicc/support/recent_interned.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

using nkicc::RecentInterned;

TEST_CASE("RecentInterned keeps the last N values by key, the oldest going first", "[support]") {
  RecentInterned<std::string_view, int, 2> recent;
  std::string a = "a", b = "b", c = "c";
  CHECK(recent.find("a") == nullptr);
  CHECK(recent.find("") == nullptr); // an unused slot's empty key is no entry
  recent.add(a, 1);
  recent.add(b, 2);
  REQUIRE(recent.find("a") != nullptr);
  CHECK(*recent.find("a") == 1);
  CHECK(*recent.find(std::string("b")) == 2); // by equal key, not by the same storage
  recent.add(c, 3);                           // takes the oldest slot: a's
  CHECK(recent.find("a") == nullptr);
  CHECK(*recent.find("b") == 2);
  CHECK(*recent.find("c") == 3);
}

TEST_CASE("RecentInterned holds an empty key once it is added", "[support]") {
  RecentInterned<std::string_view, int> recent;
  recent.add(std::string_view(), 7);
  REQUIRE(recent.find("") != nullptr);
  CHECK(*recent.find("") == 7);
}
