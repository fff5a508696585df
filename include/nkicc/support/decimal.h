// An integer's decimal digits appended to a string, without a temporary (the IR printer, the BIR
// reader's text, Python reprs and cache keys all write many of them).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace nkicc {

inline void append_int(std::string &out, std::int64_t value) {
  char buf[24];
  auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

} // namespace nkicc
