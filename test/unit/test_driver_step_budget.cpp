#include "nkicc/driver/driver.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace nkicc;

namespace {

/// The first diagnostic of tracing a kernel that never ends, with `max_steps` as the step budget.
std::string endless_trace_error(std::uint64_t max_steps) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("nkicc-step-budget-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "k.py") << "import neuronxcc.nki as nki\n\n@nki.jit\ndef k(a):\n  i = 0\n"
                                 "  while True:\n    i += 1\n  return a\n";
  std::ofstream(dir / "d.json") << R"({"nkicc": 1, "target": "trn2", "sources": [{"path": "k.py"}], )"
                                   R"("calls": [{"kernel": "k", "args": [{"shape": [128, 512], "dtype": "float32"}]}]})";
  DriverOptions options;
  options.input = (dir / "d.json").string();
  options.target.flag = "trn2";
  options.max_steps = max_steps;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto out = run_trace(options, sources, diags);
  std::filesystem::remove_all(dir);
  return out || diags.diagnostics().empty() ? std::string() : diags.diagnostics().front().message;
}

} // namespace

TEST_CASE("DriverOptions::max_steps sets a trace's step budget", "[driver]") {
  CHECK(endless_trace_error(5000) ==
        "the trace ran more than 5000 steps (an endless loop?); raise --max-instructions or fix the loop");
  CHECK(endless_trace_error(20000) ==
        "the trace ran more than 20000 steps (an endless loop?); raise --max-instructions or fix the loop");
  // (0, the default derived from --max-instructions, is what test/lit's step-budget tests see.)
}
