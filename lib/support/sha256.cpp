#include "nkicc/support/sha256.h"

// OpenSSL 3 deprecates the SHA256_* functions in favour of EVP, but EVP's first digest costs
// about 2.7 ms (loading openssl.cnf, building the provider and name tables), a third of a
// small trace's run, and every EVP digest then looks SHA-256 up by name again. The low-level
// functions run the same assembly implementation with no initialization at all.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace nkicc {

void append_sha256_hex(std::string &out, std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(digest, &ctx);
  static constexpr char kHex[] = "0123456789abcdef";
  char hex[2 * SHA256_DIGEST_LENGTH];
  for (std::size_t i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  out.append(hex, sizeof hex);
}

std::string sha256_hex(std::string_view data) {
  std::string out;
  append_sha256_hex(out, data);
  return out;
}

} // namespace nkicc
