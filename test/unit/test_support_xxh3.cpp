#include "nkicc/support/xxh3.h"

#include <catch2/catch.hpp>

#include <xxhash.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

using namespace nkicc;

TEST_CASE("xxh3_128 is libxxhash's XXH3-128 at every length and alignment", "[support]") {
  // Lengths through each of XXH3's branches (0-16, 17-128, 129-240, then the long loop, whose
  // stripes and blocks end at 64 and 1,024 bytes), at offsets that leave the input unaligned;
  // on this machine the long loop runs on AVX2 when the CPU has it, the library's on SSE2.
  std::mt19937_64 random(20261206);
  std::vector<unsigned char> bytes((std::size_t{1} << 20) + 64);
  for (unsigned char &b : bytes)
    b = static_cast<unsigned char>(random());
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 1100; ++n)
    lengths.push_back(n);
  for (std::size_t n : {4095, 4096, 4097, 65536 + 13, 140000, 1 << 20})
    lengths.push_back(n);
  for (std::size_t offset : {0, 1, 7, 31}) {
    for (std::size_t n : lengths) {
      XXH128_hash_t want = XXH3_128bits(bytes.data() + offset, n);
      Xxh3Hash128 got = xxh3_128(bytes.data() + offset, n);
      INFO("length " << n << ", offset " << offset << (xxh3_uses_avx2() ? " (AVX2)" : " (baseline)"));
      REQUIRE(got.low64 == want.low64);
      REQUIRE(got.high64 == want.high64);
    }
  }
}

TEST_CASE("xxh3_128 of the empty input is XXH3-128's published value", "[support]") {
  // xxhash's own sanity table: XXH3_128bits of no bytes, seed 0.
  Xxh3Hash128 h = xxh3_128(nullptr, 0);
  CHECK(h.low64 == 0x6001C324468D497FULL);
  CHECK(h.high64 == 0x99AA06D3014798D8ULL);
  // Canonical order: high half then low half, each big-endian.
  std::array<unsigned char, 16> c = xxh3_128_canonical(nullptr, 0);
  CHECK(c == std::array<unsigned char, 16>{0x99, 0xAA, 0x06, 0xD3, 0x01, 0x47, 0x98, 0xD8, 0x60, 0x01, 0xC3, 0x24, 0x46,
                                           0x8D, 0x49, 0x7F});
}
