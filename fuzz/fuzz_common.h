// What every fuzz target shares: rendering the diagnostics a run produced (the renderer's line and
// column arithmetic is part of what bad input reaches) and a scratch folder for the loaders that
// read files. Memory is bounded by libFuzzer (-malloc_limit_mb, -rss_limit_mb: scripts/fuzz.sh).
#pragma once

#include "nkicc/support/diagnostics.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>

namespace nkicc::fuzz {

/// Renders every diagnostic, with colour and without, as the tool would print it.
inline void render_all(DiagnosticEngine &diags) {
  RenderOptions plain, color;
  color.color = true;
  for (const Diagnostic &d : diags.diagnostics()) {
    std::string a = render_diagnostic(d, diags.sources(), plain);
    std::string b = render_diagnostic(d, diags.sources(), color);
    if (a.empty() || b.empty() || a.back() != '\n')
      std::abort(); // a diagnostic renders as at least one line
  }
}

/// A folder of this process's own under /dev/shm (else /tmp), made once and removed at exit.
inline const std::string &scratch_dir() {
  static const std::string dir = [] {
    std::string base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string templ = base + "/nkicc-fuzz-XXXXXX";
    if (!::mkdtemp(templ.data()))
      std::abort();
    return templ;
  }();
  static const bool cleanup = [] {
    return std::atexit([] {
             std::error_code ec;
             std::filesystem::remove_all(dir, ec);
           }) == 0;
  }();
  (void)cleanup;
  return dir;
}

/// The input as a std::string (the loaders take owned text).
inline std::string text_of(const std::uint8_t *data, std::size_t size) {
  return std::string(reinterpret_cast<const char *>(data), size);
}

} // namespace nkicc::fuzz
