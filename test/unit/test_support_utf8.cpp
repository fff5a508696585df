#include "nkicc/support/utf8.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nkicc;

TEST_CASE("encode_utf8 writes each code point in as many bytes as its range needs", "[support][utf8]") {
  auto enc = [](char32_t cp) {
    std::string out;
    append_utf8(out, cp);
    return out;
  };
  CHECK(enc(0) == std::string(1, '\0'));
  CHECK(enc(U'A') == "A");
  CHECK(enc(0x7F) == "\x7F");
  CHECK(enc(0x80) == "\xC2\x80");
  CHECK(enc(0x7FF) == "\xDF\xBF");
  CHECK(enc(0x800) == "\xE0\xA0\x80");
  CHECK(enc(0xDC00) == "\xED\xB0\x80"); // a lone surrogate's three bytes, as RapidJSON writes it
  CHECK(enc(0xFFFF) == "\xEF\xBF\xBF");
  CHECK(enc(0x10000) == "\xF0\x90\x80\x80");
  CHECK(enc(0x1F600) == "\xF0\x9F\x98\x80");
  CHECK(enc(0x10FFFF) == "\xF4\x8F\xBF\xBF");
  char bytes[4];
  CHECK(encode_utf8(0xE9, bytes) == 2);
  CHECK(std::string(bytes, 2) == "\xC3\xA9");
}
