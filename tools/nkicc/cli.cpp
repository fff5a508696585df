#include "cli.h"

#include "cache_cli.h"
#include "commands.h"
#include "diagnostic_output.h"
#include "output.h"

#include "nkicc/build_info.h"
#include "nkicc/support/file_io.h"
#include "nkicc/support/heap_pages.h"
#include "nkicc/support/memory_budget.h"
#include "nkicc/version.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <unistd.h>

namespace nkicc::tool {

namespace {

bool use_color(const std::string &mode) {
  if (mode == "always")
    return true;
  if (mode == "never")
    return false;
  return env("NO_COLOR") == nullptr && ::isatty(STDERR_FILENO);
}

/// Logs go to stderr only; stdout carries only the requested output (SPEC §1).
void setup_logging(const DiagnosticOptions &d) {
  auto logger = spdlog::stderr_color_mt("nkicc");
  logger->set_pattern("nkicc: %l: %v");
  spdlog::set_default_logger(logger);
  std::string level = "warn";
  if (const char *e = env("NKICC_LOG_LEVEL"))
    level = e;
  if (d.verbosity == 1)
    level = "info";
  else if (d.verbosity == 2)
    level = "debug";
  else if (d.verbosity >= 3)
    level = "trace";
  if (!d.log_level.empty())
    level = d.log_level;
  spdlog::set_level(spdlog::level::from_str(level));
}

/// `nkicc 0.1.0 (commit ...)` and the data folder this binary reads its registry from.
std::string version_text() {
  std::string data = data_dir();
  std::error_code ec;
  bool found = std::filesystem::is_directory(data, ec);
  return fmt::format("nkicc {} (commit {})\ndata folder: {}{}", NKICC_VERSION_STRING, NKICC_BUILD_COMMIT, data,
                     found ? "" : " (not found)");
}

/// CLI11's own words in nkicc's form: lowercase start ("A subcommand is required").
std::string cli11_message(const std::string &what) {
  std::string message = escape_for_message(what, 1024);
  if (message.size() > 1 && std::isupper(static_cast<unsigned char>(message[0])) &&
      !std::isupper(static_cast<unsigned char>(message[1])))
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  return message;
}

/// Every spelling of the options of `app`: `--emit`, `-o`, `--output`, ...
std::vector<std::string> option_spellings(const CLI::App &app) {
  std::vector<std::string> names;
  for (const CLI::Option *opt : app.get_options()) {
    for (const std::string &l : opt->get_lnames())
      names.push_back("--" + l);
    for (const std::string &s : opt->get_snames())
      names.push_back("-" + s);
  }
  return names;
}

std::string option_name(const std::string &argument) {
  std::size_t eq = argument.find('=');
  return eq == std::string::npos ? argument : argument.substr(0, eq);
}

/// An argument nothing took: an unknown option, a misspelt subcommand, one positional too many.
std::optional<std::string> leftover_error(CLI::App &app) {
  std::vector<CLI::App *> chosen = app.get_subcommands();
  CLI::App *sub = chosen.empty() ? nullptr : chosen.front();
  if (sub) {
    std::vector<std::string> rest = sub->remaining(false);
    for (const std::string &arg : rest) {
      if (arg.size() < 2 || arg[0] != '-')
        continue;
      std::string name = option_name(arg);
      std::string message =
          fmt::format("unknown option {} for 'nkicc {}'", quote_for_message(arg, 256), sub->get_name());
      std::string best = closest_match(name, option_spellings(*sub));
      if (!best.empty())
        message += fmt::format("; did you mean '{}'?", best);
      return message;
    }
    if (!rest.empty())
      return fmt::format("unexpected argument {}: 'nkicc {}' takes one input", quote_for_message(rest.front(), 256),
                         sub->get_name());
  }
  std::vector<std::string> rest = app.remaining(false);
  if (rest.empty())
    return std::nullopt;
  const std::string &arg = rest.front();
  if (arg.size() >= 2 && arg[0] == '-') {
    std::string name = option_name(arg);
    if (sub) {
      std::vector<std::string> theirs = option_spellings(*sub);
      if (std::find(theirs.begin(), theirs.end(), name) != theirs.end())
        return fmt::format("option {} goes after the subcommand: 'nkicc {} {} ...'", quote_for_message(name, 256),
                           sub->get_name(), escape_for_message(arg, 256));
    }
    std::string message = fmt::format("unknown option {}", quote_for_message(arg, 256));
    std::string best = closest_match(name, option_spellings(app));
    if (!best.empty())
      message += fmt::format("; did you mean '{}'?", best);
    return message;
  }
  std::vector<std::string> names;
  for (const CLI::App *s : app.get_subcommands({}))
    names.push_back(s->get_name());
  std::string message = fmt::format("unknown subcommand {}", quote_for_message(arg, 256));
  std::string best = closest_match(arg, names);
  if (!best.empty())
    message += fmt::format("; did you mean '{}'?", best);
  else
    message += fmt::format(" (the subcommands are {})", fmt::join(names, ", "));
  return message;
}

/// A subcommand's required input that is missing, in its own words rather than CLI11's
/// `file is required`.
std::optional<std::string> missing_input(CLI::App &app, const CLI::ParseError &e) {
  if (!dynamic_cast<const CLI::RequiredError *>(&e))
    return std::nullopt;
  for (CLI::App *sub : app.get_subcommands()) {
    try {
      const CLI::Option *file = sub->get_option("file");
      if (file->count() == 0) {
        return fmt::format("'nkicc {}' needs its input FILE: {}", sub->get_name(),
                           cli11_message(file->get_description()));
      }
    } catch (const CLI::OptionNotFound &) {
    }
  }
  return std::nullopt;
}

/// The input a subcommand was asked to process, for the depfile's phony rules.
std::string main_input(const CLI::App &sub) {
  for (const char *positional : {"file", "config"}) {
    try {
      const CLI::Option *opt = sub.get_option(positional);
      if (opt->count() > 0) {
        std::string value = opt->as<std::string>();
        return value.starts_with("@") ? value.substr(1) : value;
      }
    } catch (const CLI::OptionNotFound &) {
    }
  }
  try {
    const CLI::Option *hlo = sub.get_option("--hlo");
    if (hlo->count() > 0)
      return hlo->as<std::string>();
  } catch (const CLI::OptionNotFound &) {
  }
  return {};
}

int run_checked(int argc, char **argv) {
  // `nkicc --version` alone, as build systems run it to record the tool: printed before the
  // command line's parser is built (the same text CLI11's version flag prints below, which
  // ends the parse with an exception whose unwinding faulted in pages of unwind tables).
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::string text = version_text() + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  CLI::App app{"nkicc: a compiler driver for NKI kernels", "nkicc"};
  app.set_version_flag("--version", version_text(),
                       "Print the version, the commit it was built from and the data "
                       "folder in use");
  // Repeated options take the last value, as clang's do; list options say so themselves.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // Arguments nothing takes are reported by nkicc itself, with a suggestion (leftover_error).
  app.allow_extras();
  app.require_subcommand(1);
  SharedOptions shared;
  add_diagnostic_options(&app, shared.diagnostics);
  add_resource_options(&app, shared.resources);
  // Accepted before the subcommand too (`nkicc --target=trn2 key ...`).
  add_target_options(&app, shared.target);
  HelpFooter footer;
  footer.examples = {"nkicc trace kernel.json -o kernel.bir", "nkicc dis kernel.bir", "nkicc trace --help"};
  footer.reads_target_environment = true;
  app.footer(help_footer(footer));

  // Every subcommand is listed (help, "did you mean"), but only one the command line names has
  // its options declared: declaring all of them was most of what `nkicc --version` did.
  struct SubcommandEntry {
    const char *name;
    const char *description;
    std::unique_ptr<Command> (*make)(CLI::App &, SharedOptions &);
  };
  static constexpr SubcommandEntry kSubcommands[] = {
      {"trace",
       "Trace each call of a kernel description (or one call of a kernel file) and write the result of a stage",
       make_trace_command},
      {"dis", "Print a BIR module blob as canonical text (the same as --emit=bir-text)", make_dis_command},
      {"decode-config", "Decode a backend_config: its JSON, pretty, and its embedded BIR kernel as text",
       make_decode_config_command},
      {"key", "Print each call's cache key components and SHA-256 key", make_key_command},
      {"simulate", "Trace each call and run its BIR kernel on the CPU: .npy inputs in, .npy outputs out",
       make_simulate_command},
  };
  auto named = [&](const char *name) {
    return std::any_of(argv + 1, argv + argc, [&](const char *arg) { return std::strcmp(arg, name) == 0; });
  };
  std::vector<std::unique_ptr<Command>> commands;
  for (const SubcommandEntry &entry : kSubcommands) {
    CLI::App *sub = app.add_subcommand(entry.name, entry.description);
    if (named(entry.name))
      commands.push_back(entry.make(*sub, shared));
  }
  // `nkicc cache` maintains the persistent cache folder: it reads no description and prints its
  // own report, so it is run apart from the commands above (tools/nkicc/cache_cli.cpp).
  CacheCliOptions cache_cli;
  add_cache_subcommand(app, cache_cli, named("cache"));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version end the parse as "errors" that succeed.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);
    // An unknown option is more likely the cause than what CLI11 stopped at.
    if (auto leftover = leftover_error(app))
      return usage_error(*leftover);
    if (auto missing = missing_input(app, e))
      return usage_error(*missing);
    return usage_error(cli11_message(e.what()));
  }
  if (auto leftover = leftover_error(app))
    return usage_error(*leftover);
  memory::set_limit(memory_limit(shared.resources));
  // The run's small blocks come from huge pages (nkicc/support/heap_pages.h).
  memory::advise_heap_huge_pages(std::size_t{16} << 20);
  Command *command = nullptr;
  for (const auto &c : commands)
    if (c->app()->parsed())
      command = c.get();
  if (!command) {
    setup_logging(shared.diagnostics);
    if (auto rc = run_cache_subcommand(cache_cli))
      return *rc;
    return usage_error("a subcommand is required");
  }

  setup_logging(shared.diagnostics);
  DiagnosticFormat format = shared.diagnostics.format == "json"    ? DiagnosticFormat::Json
                            : shared.diagnostics.format == "sarif" ? DiagnosticFormat::Sarif
                                                                   : DiagnosticFormat::Text;
  DiagnosticPrinter printer(format, format == DiagnosticFormat::Text && use_color(shared.diagnostics.color));
  SourceManager sources;
  DiagnosticEngine diags(sources);
  Session session(shared, given_options(app), sources, diags);
  if (!command->takes_target()) {
    std::string what = fmt::format("the subcommands that read a description (trace, key, simulate), not {}",
                                   command->app()->get_name());
    session.warn_unused("--target", what);
    session.warn_unused("--kernel-path", what);
  }
  std::optional<UsageError> usage = check_output_options(shared.output);
  if (!usage)
    usage = command->check(session);
  if (usage) {
    printer.print(diags);
    printer.finish();
    return usage_error(usage->message);
  }

  // Large text outputs are written while they are produced, into a temporary file that
  // deliver() renames into place (or straight to stdout).
  AtomicOutput file(shared.output.output);
  std::string write_error;
  TextSink sink(file);
  session.text_output = &sink;
  std::optional<DriverOutput> out;
  try {
    out = command->run(session);
    if (out && !diags.has_errors())
      deliver(*out, shared.output, main_input(*command->app()), file, sink, write_error, diags);
    else
      file.discard();
  } catch (const memory::BudgetExceeded &e) {
    // A stage outside the interpreter (which reports its own, at the statement) ran out: the
    // run's input is what it was working on.
    out.reset();
    file.discard();
    Diagnostic &d = diags.error({}, e.message("the run"), e.id());
    std::string input = main_input(*command->app());
    d.path = input.empty() || input == "-" ? "<stdin>" : input;
  }
  printer.print(diags);
  printer.finish();
  if (!out && !diags.has_errors()) {
    std::fputs("nkicc: error: internal error: a stage failed without a diagnostic (this is a bug in nkicc)\n", stderr);
    return kExitInternal;
  }
  return diags.exit_code();
}

} // namespace

DriverOptions Session::driver_options() const {
  DriverOptions options;
  if (!shared.target.target.empty())
    options.target.flag = shared.target.target;
  if (const char *e = env("NEURON_PLATFORM_TARGET_OVERRIDE"))
    options.target.env_override = e;
  if (const char *e = env("NKICC_DMI_PRODUCT_NAME"))
    options.target.dmi_path = e;
  options.kernel_path = shared.target.kernel_path;
  options.kernel_path.push_back(join_path(data_dir(), "kernels"));
  if (const char *e = env("nki_frontend"))
    options.nki_frontend = e;
  // Set only when info lines are shown: the pipeline then skips formatting a line per cache hit.
  if (spdlog::should_log(spdlog::level::info))
    options.info_log = [](const std::string &text) { spdlog::info("{}", text); };
  // Likewise for debug lines (-vv): without them nothing is timed.
  if (spdlog::should_log(spdlog::level::debug)) {
    options.stage_timer = [](std::string_view stage, double ms) { spdlog::debug("stage {}: {:.1f} ms", stage, ms); };
    options.debug_log = [](const std::string &text) { spdlog::debug("{}", text); };
  }
  // `print()` in a kernel is the kernel author's debugging aid: it goes to the log.
  options.print_handler = [](const std::string &text) { spdlog::info("print: {}", text); };
  return options;
}

void Session::warn_unused(std::string_view option, std::string_view applies_to) const {
  if (!given(option))
    return;
  diags.warning({}, fmt::format("{} is ignored: it applies to {}", option, applies_to), "unused-option");
}

int run(int argc, char **argv) {
  // No exception may escape: an unexpected one is a bug, reported as such (exit 70).
  try {
    return run_checked(argc, argv);
  } catch (const memory::BudgetExceeded &e) {
    std::fprintf(stderr, "nkicc: error: %s [%s]\n", e.message("the run").c_str(), e.id());
    return 1;
  } catch (const std::bad_alloc &) {
    // Only a binary without the counting operator new gets here (it throws BudgetExceeded).
    std::fputs("nkicc: error: out of memory: the machine refused an allocation; lower what the run "
               "holds or raise the address-space limit (ulimit -v) [out-of-memory]\n",
               stderr);
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nkicc: error: internal error: %s (this is a bug in nkicc; please report it)\n", e.what());
    return kExitInternal;
  }
}

} // namespace nkicc::tool
