#pragma once

#include <string>
#include <string_view>

namespace nkicc {

/// The SHA-256 of `data` as 64 lowercase hex digits (OpenSSL EVP), as Python's hexdigest().
std::string sha256_hex(std::string_view data);
/// sha256_hex(data) appended to `out`; `data` may lie in `out` (it is read before anything is
/// appended).
void append_sha256_hex(std::string &out, std::string_view data);

} // namespace nkicc
