// XXH3-128 (xxhash's, the persistent cache's entry checksum) on the widest vector unit the CPU
// has. Debian's libxxhash is built for any x86-64, so its long-input loop runs on SSE2; this
// machine's AVX2 hashes a 140 KB cache entry in about a third of the time (9 us against 3 us),
// and a hit checks every byte of its entry. The hash is the same on every path: XXH3 is defined
// independently of the vector width.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace nkicc {

struct Xxh3Hash128 {
  std::uint64_t low64 = 0, high64 = 0;
};

/// XXH3_128bits(data, size), with AVX2 when the CPU has it.
Xxh3Hash128 xxh3_128(const void *data, std::size_t size);

/// The same hash in xxhash's canonical byte order (XXH128_canonicalFromHash: high then low
/// half, big-endian), as it is stored in a cache entry.
std::array<unsigned char, 16> xxh3_128_canonical(const void *data, std::size_t size);

/// Whether xxh3_128 runs its long-input loop on AVX2 here (for tests and -vv).
bool xxh3_uses_avx2();

} // namespace nkicc
