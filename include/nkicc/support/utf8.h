// Encoding a code point as UTF-8: the one encoder behind Python string escapes (the parser),
// chr() and `%c`/`{:c}` (pylib), and JSON `\u` escapes read from a file window (the manifest).
#pragma once

#include <cstddef>
#include <string>

namespace nkicc {

/// Writes the UTF-8 bytes of `cp` (at most 0x10FFFF; a surrogate is encoded as its three bytes)
/// to `out` and returns how many (1 to 4).
inline std::size_t encode_utf8(char32_t cp, char out[4]) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

/// Appends the UTF-8 bytes of `cp` to `out`.
inline void append_utf8(std::string &out, char32_t cp) {
  char bytes[4];
  out.append(bytes, encode_utf8(cp, bytes));
}

} // namespace nkicc
