// The floor of scripts/bench_hlo.sh: nkicc's base64 encoder alone (the one the HLO writer
// uses), producing `total` bytes of base64 from the bytes of a file (its first 64 MiB, again
// and again), in 1 MiB pieces into one reused buffer, as the HLO writer's buffer is reused: the
// figure is the encoder's, not the allocator's or the page faults'. Prints the median seconds
// of `rounds` passes. Usage: nkicc_bench_base64 FILE TOTAL [rounds]
#include "hlo/config_cache.h"

#include "nkicc/support/file_io.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fputs("usage: nkicc_bench_base64 FILE TOTAL [rounds]\n", stderr);
    return 2;
  }
  std::string error;
  auto bytes = nkicc::read_file_prefix(argv[1], std::size_t{64} << 20, error);
  if (!bytes || bytes->empty()) {
    std::fprintf(stderr, "nkicc_bench_base64: %s: %s\n", argv[1], bytes ? "empty file" : error.c_str());
    return 1;
  }
  std::size_t total = std::strtoull(argv[2], nullptr, 10);
  int rounds = argc > 3 ? std::max(std::atoi(argv[3]), 1) : 5;
  constexpr std::size_t kPiece = std::size_t{3} << 18; // 768 KiB in, 1 MiB out: whole groups, no padding
  std::string out;
  out.reserve(kPiece / 3 * 4 + 4);
  std::vector<double> seconds;
  std::size_t check = 0;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::size_t produced = 0, at = 0;
    while (produced < total) {
      if (at >= bytes->size())
        at = 0;
      out.clear();
      nkicc::hlo::Base64Encoder encoder(out);
      encoder.add(std::string_view(*bytes).substr(at, kPiece));
      encoder.finish();
      at += kPiece;
      produced += out.size();
      check += static_cast<unsigned char>(out[out.size() / 2]);
    }
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  // The checksum keeps the encoding from being optimized away.
  std::printf("%.6f %zu\n", seconds[seconds.size() / 2], check % 10);
  return 0;
}
