#include "nkicc/support/source_manager.h"

#include <catch2/catch.hpp>

using nkicc::SourceManager;

TEST_CASE("line_col maps byte offsets to 1-based lines and columns", "[support]") {
  SourceManager sm;
  auto f = sm.add_buffer("a.json", "ab\ncd\n\nxyz");
  auto at = [&](std::uint32_t off) {
    auto lc = sm.line_col({f, off});
    return std::pair{lc.line, lc.column};
  };
  CHECK(at(0) == std::pair{1u, 1u});
  CHECK(at(1) == std::pair{1u, 2u});
  CHECK(at(2) == std::pair{1u, 3u}); // the newline itself
  CHECK(at(3) == std::pair{2u, 1u});
  CHECK(at(6) == std::pair{3u, 1u});
  CHECK(at(7) == std::pair{4u, 1u});
  CHECK(at(9) == std::pair{4u, 3u});
  CHECK(at(10) == std::pair{4u, 4u});  // end of buffer
  CHECK(at(999) == std::pair{4u, 4u}); // past the end clamps
}

TEST_CASE("CRLF and lone CR end lines", "[support]") {
  SourceManager sm;
  auto f = sm.add_buffer("a", "a\r\nb\rc");
  CHECK(sm.line_col({f, 3}).line == 2);
  CHECK(sm.line_col({f, 5}).line == 3);
  CHECK(sm.line_text(f, 1) == "a");
  CHECK(sm.line_text(f, 2) == "b");
  CHECK(sm.line_text(f, 3) == "c");
}

TEST_CASE("line_text returns the line without its terminator", "[support]") {
  SourceManager sm;
  auto f = sm.add_buffer("a", "first\nsecond\n");
  CHECK(sm.line_text(f, 1) == "first");
  CHECK(sm.line_text(f, 2) == "second");
  CHECK(sm.line_text(f, 3).empty());
  CHECK(sm.line_text(f, 4).empty());
  CHECK(sm.line_text(f, 0).empty());
}

TEST_CASE("an empty buffer has one empty line", "[support]") {
  SourceManager sm;
  auto f = sm.add_buffer("empty", "");
  CHECK(sm.line_col({f, 0}).line == 1);
  CHECK(sm.line_col({f, 0}).column == 1);
  CHECK(sm.name(f) == "empty");
}
