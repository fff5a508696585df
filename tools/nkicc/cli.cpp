#include "cli.h"

#include "nkicc/driver/driver.h"
#include "nkicc/support/file_io.h"
#include "nkicc/version.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <unistd.h>

namespace nkicc::tool {

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitInternal = 70;

struct GlobalOptions {
  std::string log_level;
  int verbosity = 0;
  std::string color = "auto";
  std::string output = "-";
  std::string emit = "bir";
  std::string target;
  std::string depfile;
  std::string stats_format = "text";
  std::string hlo_flavor = "jax";
  std::vector<std::string> kernel_path;
};

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool use_color(const std::string &mode) {
  if (mode == "always")
    return true;
  if (mode == "never")
    return false;
  return env("NO_COLOR") == nullptr && ::isatty(STDERR_FILENO);
}

/// Logs go to stderr only; stdout carries only the requested output (SPEC §1).
void setup_logging(const GlobalOptions &g) {
  auto logger = spdlog::stderr_color_mt("nkicc");
  logger->set_pattern("nkicc: %l: %v");
  spdlog::set_default_logger(logger);
  std::string level = "warn";
  if (const char *e = env("NKICC_LOG_LEVEL"))
    level = e;
  if (g.verbosity == 1)
    level = "info";
  else if (g.verbosity == 2)
    level = "debug";
  else if (g.verbosity >= 3)
    level = "trace";
  if (!g.log_level.empty())
    level = g.log_level;
  spdlog::set_level(spdlog::level::from_str(level));
}

void print_diagnostics(DiagnosticEngine &diags, bool color) {
  RenderOptions render;
  render.color = color;
  for (const Diagnostic &d : diags.take()) {
    std::string text = render_diagnostic(d, diags.sources(), render);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
}

TargetInputs target_inputs(const GlobalOptions &g) {
  TargetInputs t;
  if (!g.target.empty())
    t.flag = g.target;
  if (const char *e = env("NEURON_PLATFORM_TARGET_OVERRIDE"))
    t.env_override = e;
  if (const char *e = env("NKICC_DMI_PRODUCT_NAME"))
    t.dmi_path = e;
  return t;
}

/// The installed registry: share/nkicc/kernels beside the binary's bin/ folder (the build tree
/// mirrors the install tree).
std::string installed_kernel_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string exe = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("nkicc");
  return join_path(parent_dir(parent_dir(exe)), "share/nkicc/kernels");
}

/// Make's syntax for one path in a rule: spaces, `#`, `$` and `:` escaped.
std::string make_escape(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#' || c == ':' || c == '\\')
      out += '\\';
    if (c == '$')
      out += '$';
    out += c;
  }
  return out;
}

/// `OUT: manifest sources... registry files...` (SPEC §1), one dependency per line.
std::string make_depfile(const std::string &output, const std::vector<std::string> &dependencies) {
  std::string text = make_escape(output) + ":";
  for (const std::string &d : dependencies)
    text += " \\\n  " + make_escape(d);
  return text + "\n";
}

/// Makes the result visible at -o (atomically), or finishes it on stdout. A streamed result is
/// already in `file`'s temporary file; any other is written now.
void deliver(const DriverOutput &out, const std::string &path, AtomicOutput &file, TextSink &sink,
             std::string &write_error, DiagnosticEngine &diags) {
  // Inputs are never modified (SPEC §10): -o may not name the description file or any file the
  // run has read (every file read is registered with the source manager under its path).
  const SourceManager &sources = diags.sources();
  for (FileId f = 1; f <= sources.file_count(); ++f) {
    std::string input(sources.name(f));
    if (input != "<stdin>" && same_file(path, input)) {
      file.discard();
      diags.error({}, fmt::format("-o {} would overwrite the input file{}", escape_for_message(path, 256),
                                  input == path ? "" : " " + quote_for_message(input, 256)));
      return;
    }
  }
  if (path == "-" && out.binary && ::isatty(STDOUT_FILENO)) {
    diags.io_error("<stdout>", "refusing to write a binary blob to a terminal; use -o FILE or --emit=bir-text");
    return;
  }
  bool ok = out.streamed ? sink.flush() : file.write(out.bytes, write_error);
  if (!ok || !file.commit(write_error)) {
    file.discard();
    diags.io_error(path == "-" ? "<stdout>" : path, "cannot write output: " + write_error);
  }
}

int run_checked(int argc, char **argv) {
  CLI::App app{"nkicc: a compiler driver for NKI kernels", "nkicc"};
  app.set_version_flag("--version", std::string("nkicc ") + NKICC_VERSION_STRING);
  app.require_subcommand(1);
  app.fallthrough();
  GlobalOptions g;
  app.add_option("--log-level", g.log_level, "Log level (default: warn, or NKICC_LOG_LEVEL)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_flag("-v", g.verbosity, "More logging on stderr: -v info, -vv debug, -vvv trace");
  app.add_option("--color", g.color, "Colour diagnostics: auto (a terminal, unless NO_COLOR is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--target", g.target,
                 "Platform target: trn1, trn2, trn3, inf2 (gen2, gen3, gen4); else the file's target, "
                 "NEURON_PLATFORM_TARGET_OVERRIDE, the DMI product name, or trn1 with a warning")
      ->check(CLI::IsMember({"trn1", "trn2", "trn3", "inf2", "gen2", "gen3", "gen4"}));
  app.add_option("-I,--kernel-path", g.kernel_path,
                 "Search this folder's registry.json for internal kernels before the installed registry "
                 "(repeatable)")
      ->allow_extra_args(false); // one folder per -I, as a compiler's -I: never the file after it

  DriverOptions options;
  CLI::App *trace = app.add_subcommand("trace", "Trace each call of a kernel description file and emit a stage");
  trace->add_option("file", options.input, "Kernel description file (JSON), or - for standard input")->required();
  trace
      ->add_option("--emit", g.emit,
                   "Stop after this stage and write its result: manifest (the checked description as JSON), "
                   "ast (the parsed kernel sources), ir (the traced kernel IR of every call), bir (the BIR module "
                   "blob, the default), bir-text (the same as text), hlo (an HLO module of custom-calls), "
                   "stablehlo (the same in MLIR's generic form), stats (cache statistics)")
      ->check(CLI::IsMember({"manifest", "ast", "ir", "bir", "bir-text", "hlo", "stablehlo", "stats"}));
  trace
      ->add_option("--hlo-flavor", g.hlo_flavor,
                   "Custom-call flavor of --emit=hlo/stablehlo: jax (AwsNeuronCustomNativeKernel, the default) or "
                   "torch-xla (AwsNeuronNkiKernel)")
      ->check(CLI::IsMember({"jax", "torch-xla"}));
  trace->add_option("--stats-format", g.stats_format, "Format of --emit=stats: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  trace->add_option("-o,--output", g.output, "Write the result to this file, atomically (default: stdout)");
  trace->add_flag(
      "--no-cache", [&options](std::int64_t) { options.use_cache = false; },
      "Trace every call, reusing no specialization (the output is byte-identical)");
  trace
      ->add_option("--max-instructions", options.max_instructions,
                   "Stop a trace that would emit more IR instructions than this (default: 10000000)")
      ->check(CLI::PositiveNumber);
  trace->add_option("--depfile", g.depfile, "Write a Makefile depfile naming every file the run read (needs -o)");

  std::string dis_input;
  CLI::App *dis = app.add_subcommand("dis", "Print a BIR module blob as canonical text (the same as --emit=bir-text)");
  dis->add_option("file", dis_input, "BIR module file, or - for standard input")->required();
  dis->add_option("-o,--output", g.output, "Write the result to this file, atomically (default: stdout)");

  std::string config_input;
  CLI::App *decode = app.add_subcommand(
      "decode-config", "Decode a backend_config: its JSON, pretty, and its embedded BIR kernel as text");
  decode->add_option("config", config_input, "The base64 backend_config, or @FILE to read it from a file (@- stdin)")
      ->required();
  decode->add_option("-o,--output", g.output, "Write the result to this file, atomically (default: stdout)");

  CLI::App *key = app.add_subcommand("key", "Print each call's cache key components and SHA-256 key");
  key->add_option("file", options.input, "Kernel description file (JSON), or - for standard input")->required();
  key->add_option("-o,--output", g.output, "Write the result to this file, atomically (default: stdout)");

  SimulateRequest sim_request;
  std::size_t sim_call = 0;
  std::uint64_t sim_seed = 0;
  CLI::App *simulate = app.add_subcommand(
      "simulate", "Trace each call and run its BIR kernel on the CPU: .npy inputs in, .npy outputs out");
  simulate->add_option("file", options.input, "Kernel description file (JSON), or - for standard input")->required();
  CLI::Option *sim_call_opt = simulate->add_option("--call", sim_call, "Simulate only call N (0-based)");
  CLI::Option *sim_inputs_opt =
      simulate->add_option("--inputs", sim_request.inputs_dir, "Read call N's tensor parameter P from DIR/callN.P.npy");
  CLI::Option *sim_seed_opt = simulate->add_option(
      "--random-inputs", sim_seed, "Make deterministic inputs from SEED instead, and write them to the output folder");
  sim_inputs_opt->excludes(sim_seed_opt);
  simulate->add_flag("--check-nan", sim_request.check_nan, "Warn when an instruction makes a NaN from finite inputs");
  simulate->add_option("-o,--output", sim_request.output_dir, "Folder for the outputs, OUTDIR/callN.NAME.npy")
      ->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version end the parse as "errors" that succeed.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);
    // CLI11's own words, in nkicc's form: lowercase start ("A subcommand is required").
    std::string message = escape_for_message(e.what(), 1024);
    if (message.size() > 1 && std::isupper(static_cast<unsigned char>(message[0])) &&
        !std::isupper(static_cast<unsigned char>(message[1])))
      message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
    std::string text = fmt::format("nkicc: error: {}\nRun with --help for more information.\n", message);
    std::fwrite(text.data(), 1, text.size(), stderr);
    return kExitUsage;
  }

  setup_logging(g);
  bool color = use_color(g.color);
  options.target = target_inputs(g);
  std::map<std::string, EmitKind> emit_kinds = {{"manifest", EmitKind::Manifest},
                                                {"ast", EmitKind::Ast},
                                                {"ir", EmitKind::Ir},
                                                {"bir", EmitKind::Bir},
                                                {"bir-text", EmitKind::BirText},
                                                {"hlo", EmitKind::Hlo},
                                                {"stablehlo", EmitKind::StableHlo},
                                                {"stats", EmitKind::Stats}};
  options.hlo_flavor_torch_xla = g.hlo_flavor == "torch-xla";
  options.emit = emit_kinds.at(g.emit);
  options.stats_json = g.stats_format == "json";
  options.kernel_path = g.kernel_path;
  options.kernel_path.push_back(installed_kernel_dir());
  if (const char *e = env("nki_frontend"))
    options.nki_frontend = e;
  options.info_log = [](const std::string &text) { spdlog::info("{}", text); };
  options.stage_timer = [](std::string_view stage, double ms) { spdlog::debug("stage {}: {:.1f} ms", stage, ms); };

  // `print()` in a kernel is the kernel author's debugging aid: it goes to the log.
  options.print_handler = [](const std::string &text) { spdlog::info("print: {}", text); };
  if (!g.depfile.empty() && g.output == "-") {
    std::fputs("nkicc: error: --depfile needs -o: a depfile names the output it describes\n"
               "Run with --help for more information.\n",
               stderr);
    return kExitUsage;
  }

  if (simulate->parsed()) {
    if (!sim_inputs_opt->count() && !sim_seed_opt->count()) {
      std::fputs("nkicc: error: simulate needs --inputs DIR or --random-inputs=SEED\n"
                 "Run with --help for more information.\n",
                 stderr);
      return kExitUsage;
    }
    if (sim_call_opt->count())
      sim_request.call = sim_call;
    if (sim_seed_opt->count())
      sim_request.seed = sim_seed;
  }

  SourceManager sources;
  DiagnosticEngine diags(sources);
  // Large text outputs are written while they are produced, into a temporary file that
  // deliver() renames into place (or straight to stdout).
  AtomicOutput file(g.output);
  std::string write_error;
  TextSink sink([&](std::string_view text) { return file.write(text, write_error); });
  options.text_output = &sink;
  std::optional<DriverOutput> out;
  if (trace->parsed())
    out = run_trace(options, sources, diags);
  else if (dis->parsed())
    out = run_dis(dis_input, sources, diags);
  else if (decode->parsed())
    out = run_decode_config(config_input, sources, diags);
  else if (key->parsed())
    out = run_key(options, sources, diags);
  else if (simulate->parsed())
    out = run_simulate(options, sim_request, sources, diags);
  // simulate wrote its files already: -o names its folder, not an output to deliver.
  if (out && !diags.has_errors() && !simulate->parsed())
    deliver(*out, g.output, file, sink, write_error, diags);
  if (out && !diags.has_errors() && !g.depfile.empty()) {
    std::string why;
    if (!write_file_atomically(g.depfile, make_depfile(g.output, out->dependencies), why))
      diags.io_error(g.depfile, "cannot write depfile: " + why);
  }
  print_diagnostics(diags, color);
  if (!out && !diags.has_errors()) {
    std::fputs("nkicc: error: internal error: a stage failed without a diagnostic (this is a bug in nkicc)\n", stderr);
    return kExitInternal;
  }
  return diags.exit_code();
}

} // namespace

int run(int argc, char **argv) {
  // No exception may escape: an unexpected one is a bug, reported as such (exit 70).
  try {
    return run_checked(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fputs("nkicc: error: out of memory\n", stderr);
    return kExitInternal;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nkicc: error: internal error: %s (this is a bug in nkicc; please report it)\n", e.what());
    return kExitInternal;
  }
}

} // namespace nkicc::tool
