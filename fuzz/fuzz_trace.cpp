// Fuzz target: the tracer on small generated kernels. The input is a kernel source (Python);
// every top-level function of it (the first four) is traced through the driver as an external
// call, each parameter without a default given by its annotation (`int`, `float`, `bool`, `str`:
// a constant) or else a [128, 512] float32 tensor, and the result written as BIR and read back
// as text (`--emit=bir-text`: the writer, the reader and their agreement). Budgets are tight so
// that an input runs in milliseconds: 2,000 instructions, 200,000 steps, 256 MiB.
#include "fuzz_common.h"

#include "nkicc/driver/driver.h"
#include "nkicc/python/parser.h"
#include "nkicc/support/json_writer.h"

#include <cstdio>

using namespace nkicc;

namespace {

/// The description of the calls to make of `source`'s functions, or "" when it does not parse.
std::string description_for(const std::string &source) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  FileId file = sources.add_buffer("k.py", source);
  auto module = python::parse_module(sources, file, diags);
  if (!module)
    return {};
  std::string calls;
  std::size_t count = 0;
  for (const python::FunctionDefStmt *f : module->functions) {
    if (count == 4)
      break;
    std::string args;
    const python::Arguments &a = *f->args;
    std::size_t positional = a.posonlyargs.size() + a.args.size();
    std::size_t without_default = positional - std::min(positional, a.defaults.size());
    for (std::size_t i = 0; i < without_default; ++i) {
      const python::Arg *arg = i < a.posonlyargs.size() ? a.posonlyargs[i] : a.args[i - a.posonlyargs.size()];
      std::string_view type;
      if (arg->annotation && arg->annotation->kind == python::ExprKind::Name)
        type = static_cast<const python::NameExpr *>(arg->annotation)->id;
      if (!args.empty())
        args += ", ";
      if (type == "int")
        args += "2";
      else if (type == "float")
        args += "1.5";
      else if (type == "bool")
        args += "true";
      else if (type == "str")
        args += "\"x\"";
      else
        args += R"({"shape": [128, 512], "dtype": "float32"})";
    }
    if (count++)
      calls += ", ";
    calls += R"({"kernel": )";
    append_json_string(calls, f->name, true);
    calls += R"(, "args": [)" + args + "]}";
  }
  return R"({"nkicc": 1, "target": "trn2", "sources": [{"path": "k.py"}], "calls": [)" + calls + "]}";
}

void write(const std::string &path, const std::string &text) {
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0)
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  std::string source = fuzz::text_of(data, size);
  std::string description = description_for(source);
  if (description.empty())
    return 0; // the parser has its own target
  const std::string &dir = fuzz::scratch_dir();
  write(dir + "/k.py", source);
  write(dir + "/d.json", description);

  DriverOptions options;
  options.input = dir + "/d.json";
  options.emit = EmitKind::BirText;
  options.target.flag = "trn2";
  options.target.dmi_path = "/nonexistent";
  options.max_instructions = 2000;
  options.max_steps = 200'000;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto out = run_trace(options, sources, diags);
  // Every failure is reported; internal errors (a bug in nkicc, exit 70) are findings.
  if (!out && !diags.has_errors())
    std::abort();
  if (diags.exit_code() == 70) {
    fuzz::render_all(diags);
    for (const Diagnostic &d : diags.diagnostics())
      std::fputs(render_diagnostic(d, sources, {}).c_str(), stderr);
    std::abort();
  }
  fuzz::render_all(diags);
  return 0;
}
