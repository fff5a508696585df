// Fuzz target: the Python tokenizer and parser (CPython 3.11's grammar and error wording), and
// the AST dump of what parses.
#include "fuzz_common.h"

#include "nkicc/python/parser.h"

using namespace nkicc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  FileId file = sources.add_buffer("fuzz.py", fuzz::text_of(data, size));
  auto module = python::parse_module(sources, file, diags);
  // One error per file, as CPython: a failed parse reports exactly one, a good one none.
  if (module.has_value() != (diags.error_count() == 0) || diags.error_count() > 1)
    std::abort();
  if (module)
    (void)python::dump_ast(*module, sources);
  fuzz::render_all(diags);
  return 0;
}
