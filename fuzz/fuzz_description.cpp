// Fuzz target: the description loader (SPEC §2): JSON parsing with locations, every field's
// checks, inline sources, and the canonical `--emit=manifest` text of what loads.
#include "fuzz_common.h"

#include "nkicc/manifest/manifest.h"
#include "nkicc/support/file_io.h"

using namespace nkicc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  FileId file = sources.add_buffer("fuzz.json", fuzz::text_of(data, size));
  ManifestLoadOptions options;
  // Relative source paths resolve in an empty folder: a missing file is an error like any other.
  options.base_dir = fuzz::scratch_dir();
  options.default_name = "fuzz";
  if (auto manifest = load_manifest(sources, file, options, diags)) {
    std::string json = manifest_to_json(*manifest, sources);
    if (json.empty() || json.back() != '\n')
      std::abort();
  }
  fuzz::render_all(diags);
  return 0;
}
