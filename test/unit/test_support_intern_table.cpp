#include "nkicc/support/intern_table.h"

#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

using nkicc::InternTable;

TEST_CASE("an intern table gives each distinct text one id, 0 to the empty text", "[support]") {
  InternTable table("test texts");
  CHECK(table.intern("") == 0);
  CHECK(table.text(0).empty());
  std::uint32_t a = table.intern("alpha");
  std::uint32_t b = table.intern("beta");
  CHECK(a == 1);
  CHECK(b == 2);
  CHECK(table.intern(std::string("alp") + "ha") == a);
  CHECK(table.text(a) == "alpha");
  CHECK(table.find("beta") == b);
  CHECK_FALSE(table.find("gamma").has_value());
  CHECK_FALSE(table.find("gamma").has_value()); // finding interns nothing
  CHECK(table.intern("gamma") == 3);
  // Texts stay where they are as the table grows past a chunk of ids, also those interned on
  // another thread.
  std::string_view first = table.text(a);
  std::vector<std::uint32_t> ids;
  std::thread([&] {
    for (int k = 0; k < 10000; ++k)
      ids.push_back(table.intern("text " + std::to_string(k)));
  }).join();
  CHECK(first.data() == table.text(a).data());
  for (int k = 0; k < 10000; ++k)
    CHECK(table.text(ids[static_cast<std::size_t>(k)]) == "text " + std::to_string(k));
}

TEST_CASE("an intern table past its capacity says how many texts of what it holds", "[support]") {
  InternTable table("test texts", 4096); // ids 0 (the empty text) to 4,095
  for (int k = 1; k < 4096; ++k)
    table.intern("t" + std::to_string(k));
  CHECK(table.intern("t4095") == 4095); // a text already there still has its id
  CHECK_THROWS_WITH(table.intern("one too many"), "more than 4,096 distinct test texts");
  CHECK_FALSE(table.find("one too many").has_value());
  CHECK(table.text(4095) == "t4095");
}
