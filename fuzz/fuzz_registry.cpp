// Fuzz target: the internal-kernel registry loader (registry.json of a -I folder, SPEC §7). The
// input is written as the registry.json of a scratch folder, as the loader reads files.
#include "fuzz_common.h"

#include "nkicc/registry/registry.h"
#include "nkicc/support/file_io.h"

#include <cstdio>

using namespace nkicc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string &dir = fuzz::scratch_dir();
  {
    std::FILE *f = std::fopen((dir + "/registry.json").c_str(), "wb");
    if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
      std::abort();
  }
  SourceManager sources;
  DiagnosticEngine diags(sources);
  Registry registry;
  if (registry.load({dir}, sources, diags)) {
    for (const std::string &name : registry.names())
      if (!registry.find(name))
        std::abort(); // every listed name resolves
  }
  fuzz::render_all(diags);
  return 0;
}
