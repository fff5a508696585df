#include "nkicc/support/xxh3.h"

#include <cstring>

// xxhash itself supplies the AVX2 loop (XXH_DISPATCH_AVX2, as its own xxh_x86dispatch.c uses it,
// which Debian does not ship): its functions are compiled here, inline and private to this file,
// the AVX2 ones with a target attribute so that the rest of nkicc stays baseline x86-64.
#if defined(__x86_64__)
#include <immintrin.h>
#if defined(__clang__)
// glibc's header is C: clang's C++ has no _Bool (GCC's accepts it as an extension).
#define _Bool bool
#include <sys/platform/x86.h>
#undef _Bool
#else
#include <sys/platform/x86.h>
#endif
#define XXH_DISPATCH_AVX2 1
#define XXH_TARGET_AVX2 __attribute__((__target__("avx2")))
#endif
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace nkicc {

namespace {

#if defined(__x86_64__)
/// XXH3's loop over inputs longer than 240 bytes, accumulating 32 bytes a step in AVX2 registers.
XXH_TARGET_AVX2 XXH_NO_INLINE XXH128_hash_t hash_long_avx2(const void *XXH_RESTRICT input, std::size_t len,
                                                           XXH64_hash_t, const void *XXH_RESTRICT, std::size_t) {
  return XXH3_hashLong_128b_internal(input, len, XXH3_kSecret, sizeof(XXH3_kSecret), XXH3_accumulate_512_avx2,
                                     XXH3_scrambleAcc_avx2);
}
#endif

bool cpu_has_avx2() {
#if defined(__x86_64__)
  // glibc's record of what the CPU and kernel allow, made when the process started. Not
  // __builtin_cpu_supports: that links libgcc's CPU probe, which runs before main in every
  // process (a dozen CPUID instructions, each a trap to the hypervisor on a virtual machine:
  // about 40 us of every `nkicc --version`).
  static const bool has = CPU_FEATURE_ACTIVE(AVX2);
  return has;
#else
  return false;
#endif
}

} // namespace

bool xxh3_uses_avx2() { return cpu_has_avx2(); }

Xxh3Hash128 xxh3_128(const void *data, std::size_t size) {
  XXH128_hash_t h;
#if defined(__x86_64__)
  if (cpu_has_avx2())
    h = XXH3_128bits_internal(data, size, 0, XXH3_kSecret, sizeof(XXH3_kSecret), hash_long_avx2);
  else
#endif
    h = XXH3_128bits(data, size);
  return {h.low64, h.high64};
}

std::array<unsigned char, 16> xxh3_128_canonical(const void *data, std::size_t size) {
  Xxh3Hash128 h = xxh3_128(data, size);
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH128_hash_t{h.low64, h.high64});
  std::array<unsigned char, 16> out;
  std::memcpy(out.data(), canonical.digest, out.size());
  return out;
}

} // namespace nkicc
