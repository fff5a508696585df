#include "options.h"

#include "nkicc/manifest/kernel_file_call.h"
#include "nkicc/support/diagnostics.h"
#include "nkicc/support/memory_budget.h"
#include "nkicc/target/target.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace nkicc::tool {

namespace {

/// A non-negative decimal integer, nothing else (no sign, no spaces, no exponent).
std::optional<std::uint64_t> read_count(const std::string &text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

/// A validator for values `parses` accepts; anything else is `expected WHAT, found 'VALUE'`.
CLI::Validator parsed_by(bool (*parses)(const std::string &), std::string_view what) {
  return CLI::Validator(
      [parses, expected = std::string(what)](std::string &value) -> std::string {
        if (parses(value))
          return {};
        return fmt::format("expected {}, found {}", expected, quote_for_message(value, 128));
      },
      "");
}

} // namespace

CLI::Validator one_of(std::vector<std::string> names) {
  std::string description = fmt::format("{{{}}}", fmt::join(names, ","));
  return CLI::Validator(
      [names](std::string &value) -> std::string {
        for (const std::string &n : names)
          if (n == value)
            return {};
        std::string message = fmt::format("{} is not one of {}", quote_for_message(value, 128), fmt::join(names, ", "));
        std::string best = closest_match(value, names);
        if (!best.empty())
          message += fmt::format("; did you mean '{}'?", best);
        return message;
      },
      description);
}

CLI::Validator positive_count() {
  return parsed_by(
      [](const std::string &v) {
        auto n = read_count(v);
        return n && *n > 0;
      },
      fmt::format("a positive integer (at most {})", std::numeric_limits<std::uint64_t>::max()));
}

void add_diagnostic_options(CLI::App *app, DiagnosticOptions &options) {
  app->add_option("--log-level", options.log_level,
                  "Log level on stderr: trace, debug, info, warn (default, or NKICC_LOG_LEVEL), error, off")
      ->check(one_of({"trace", "debug", "info", "warn", "error", "off"}))
      ->type_name("LEVEL")
      ->group("Diagnostics");
  app->add_flag_function(
         "-v", [&options](std::int64_t n) { options.verbosity += static_cast<int>(n); },
         "More logging on stderr: -v info (cache hits and misses), -vv debug (stage timings), -vvv trace")
      ->group("Diagnostics");
  app->add_option("--color", options.color,
                  "Colour diagnostics: auto (on a terminal, unless NO_COLOR is set; the default), always, never")
      ->check(one_of({"auto", "always", "never"}))
      ->type_name("WHEN")
      ->group("Diagnostics");
  app->add_option("--diagnostics-format", options.format,
                  "How errors and warnings are written on stderr: text (default), json (one JSON object per line), "
                  "sarif (one SARIF 2.1.0 log)")
      ->check(one_of({"text", "json", "sarif"}))
      ->type_name("FORMAT")
      ->group("Diagnostics");
}

void add_resource_options(CLI::App *app, ResourceOptions &options) {
  app->add_option("--max-memory", options.max_memory,
                  fmt::format("Stop the run with an error when it would hold more memory than SIZE: bytes, or a "
                              "number with K, M, G or T (default: {})",
                              memory::format_size(memory::kDefaultLimit)))
      ->check(parsed_by([](const std::string &v) { return memory::parse_size(v).has_value(); },
                        "a size (bytes, or a number with K, M, G or T: 512M, 1.5G), at least 1M"))
      ->type_name("SIZE")
      ->group("Resources");
}

std::optional<std::chrono::milliseconds> parse_seconds(std::string_view text) {
  // Digits, then optionally a point and up to three more digits: no sign, exponent or spaces.
  std::size_t point = text.find('.');
  std::string_view whole = text.substr(0, point);
  std::string_view frac = point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || whole.size() > 8 || !digits(whole) || (point != std::string_view::npos && frac.empty()) ||
      frac.size() > 3 || !digits(frac))
    return std::nullopt;
  std::int64_t ms = 0;
  for (char c : whole)
    ms = ms * 10 + (c - '0');
  ms *= 1000;
  std::int64_t scale = 100;
  for (char c : frac) {
    ms += (c - '0') * scale;
    scale /= 10;
  }
  if (ms > std::int64_t{10'000'000} * 1000)
    return std::nullopt;
  return std::chrono::milliseconds(ms);
}

void add_trace_limit_options(CLI::App *app, TraceLimitOptions &options) {
  app->add_option("--max-instructions", options.max_instructions,
                  "Stop a trace that would emit more IR instructions than N (default: 10000000)")
      ->check(positive_count())
      ->type_name("N")
      ->group("Resources");
  app->add_option("--max-trace-time", options.max_trace_time,
                  fmt::format("Stop a kernel trace that runs longer than SECONDS of wall time (default: {}; 0: no "
                              "limit)",
                              kDefaultMaxTraceTime.count() / 1000))
      ->check(parsed_by([](const std::string &v) { return parse_seconds(v).has_value(); },
                        "seconds (a number such as 300 or 2.5, at most 10000000, 0 for no limit)"))
      ->type_name("SECONDS")
      ->group("Resources");
}

void apply_trace_limits(const TraceLimitOptions &options, DriverOptions &driver) {
  if (!options.max_instructions.empty())
    driver.max_instructions = read_count(options.max_instructions).value();
  if (!options.max_trace_time.empty())
    driver.max_trace_time = parse_seconds(options.max_trace_time).value();
}

std::uint64_t memory_limit(const ResourceOptions &options) {
  return options.max_memory.empty() ? memory::kDefaultLimit : memory::parse_size(options.max_memory).value();
}

void add_output_options(CLI::App *app, OutputOptions &options) {
  app->add_option("-o,--output", options.output,
                  "Write the result to this file (default: stdout). A regular file is replaced atomically, only "
                  "when the run succeeds; an input is never overwritten")
      ->type_name("FILE")
      ->group("Output");
  app->add_option("--depfile", options.depfile,
                  "Also write a Makefile rule naming every file the run read, for make and ninja (needs -o or "
                  "--depfile-target)")
      ->type_name("FILE")
      ->group("Output");
  app->add_flag("--depfile-phony", options.depfile_phony,
                "Add an empty rule for every prerequisite but the input, so that make survives a renamed or "
                "deleted kernel file (gcc's -MP)")
      ->group("Output");
  app->add_option("--depfile-target", options.depfile_targets,
                  "The depfile rule's target instead of the -o path, written as given (gcc's -MT; repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("TARGET")
      ->group("Output");
}

void add_target_options(CLI::App *app, TargetOptions &options) {
  app->add_option("--target", options.target,
                  "Platform target: trn1, trn2, trn3, inf2 (or gen2, gen3, gen4); else the description's target, "
                  "NEURON_PLATFORM_TARGET_OVERRIDE, the DMI product name, or trn1 with a warning")
      ->check(one_of(target_names()))
      ->type_name("T")
      ->group("Target");
  // One folder per -I, as a compiler's -I: never the file after it. Appended, so that -I given
  // before the subcommand and after it keep their order.
  app->add_option_function<std::vector<std::string>>(
         "-I,--kernel-path",
         [&options](const std::vector<std::string> &folders) {
           options.kernel_path.insert(options.kernel_path.end(), folders.begin(), folders.end());
         },
         "Search this folder's registry.json for internal kernels before the installed registry (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("DIR")
      ->group("Target");
}

void add_source_locations_option(CLI::App *app, TextFlags &options) {
  app->add_option("--source-locations", options.source_locations,
                  "line-col (default) ends tensor and instruction lines with @line:col; none leaves them out, so "
                  "that a golden file does not change when a kernel's lines move")
      ->check(one_of({"line-col", "none"}))
      ->type_name("WHAT")
      ->group("Text output");
}

void add_call_filter_options(CLI::App *app, TextFlags &options, bool with_kernel_filter) {
  app->add_option_function<std::string>(
         "--call", [&options](const std::string &value) { options.call = read_count(value); },
         "Show only call N (counted from 0, in the order of the description)")
      ->check(CLI::Validator(
          [](std::string &value) -> std::string {
            if (read_count(value))
              return {};
            return fmt::format("expected a call index (0, 1, ...), found {}", quote_for_message(value, 128));
          },
          ""))
      ->type_name("N")
      ->group("Text output");
  if (with_kernel_filter)
    app->add_option_function<std::string>(
           "--kernel", [&options](const std::string &value) { options.kernel = value; },
           "Show only the calls of this kernel (an external kernel's name or an internal func_name)")
        ->type_name("NAME")
        ->group("Text output");
}

TextOptions text_options(const TextFlags &flags) {
  TextOptions t;
  t.source_locations = flags.source_locations != "none";
  t.calls.index = flags.call;
  t.calls.kernel = flags.kernel;
  return t;
}

void add_description_input(CLI::App *app, DescriptionInput &input) {
  app->add_option("file", input.file,
                  "Kernel description file (JSON), - for standard input, or a kernel file (.py) with --kernel")
      ->required()
      ->type_name("FILE");
  app->add_option_function<std::string>(
         "--kernel", [&input](const std::string &value) { input.kernel = value; },
         "With a kernel file: the kernel to call. With a description: show only the calls of this kernel")
      ->type_name("NAME")
      ->group("Kernel file");
  app->add_option("--arg", input.args,
                  "A positional argument of the kernel file's call (repeatable, in order): a tensor "
                  "DTYPE[D0,D1,...] such as bfloat16[4096,4096], or a constant: 1e-5, 3, True, None, 'tanh', (1, 2)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("VALUE")
      ->group("Kernel file");
  app->add_option("--kwarg", input.kwargs, "A keyword argument of the kernel file's call: NAME=VALUE (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("NAME=VALUE")
      ->group("Kernel file");
  app->add_option("--grid", input.grid, "The SPMD launch grid of the kernel file's call: D0[,D1[,D2]]")
      ->type_name("D0,D1")
      ->group("Kernel file");
  app->add_option("--nc", input.nc, "Spread the first grid dimension over K physical cores (trn2, trn3)")
      ->type_name("K")
      ->group("Kernel file");
  app->add_option("--opt", input.opts, "A compile option of the kernel file's call: NAME=VALUE, a scalar (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("NAME=VALUE")
      ->group("Kernel file");
}

bool is_kernel_file(const DescriptionInput &input) { return input.file.size() > 3 && input.file.ends_with(".py"); }

std::optional<UsageError> resolve_description_input(const DescriptionInput &input, DriverOptions &options,
                                                    std::string_view subcommand) {
  options.input = input.file;
  std::string shown = quote_for_message(input.file, 256);
  if (is_kernel_file(input)) {
    if (!input.kernel)
      return UsageError{fmt::format("{} is a kernel file, not a kernel description: name the kernel to {} and "
                                    "its arguments, as in 'nkicc {} {} --kernel NAME --arg float32[128,512] ...'",
                                    shown, subcommand, subcommand, escape_for_message(input.file, 256))};
    KernelFileCall call;
    call.source_path = input.file;
    call.kernel = *input.kernel;
    call.args = input.args;
    call.kwargs = input.kwargs;
    call.grid = input.grid;
    call.nc = input.nc;
    call.opts = input.opts;
    std::string error;
    auto text = kernel_file_description(call, error);
    if (!text)
      return UsageError{error};
    options.description_text = std::move(*text);
    return std::nullopt;
  }
  const char *quick = !input.args.empty()     ? "--arg"
                      : !input.kwargs.empty() ? "--kwarg"
                      : !input.grid.empty()   ? "--grid"
                      : !input.nc.empty()     ? "--nc"
                      : !input.opts.empty()   ? "--opt"
                                              : nullptr;
  if (quick)
    return UsageError{fmt::format("{} describes the call of a kernel file (FILE.py --kernel NAME); {} is a "
                                  "description, which lists its calls itself",
                                  quick, shown)};
  if (input.kernel)
    options.text.calls.kernel = *input.kernel;
  return std::nullopt;
}

std::set<std::string> given_options(const CLI::App &app) {
  std::set<std::string> given;
  for (const CLI::Option *opt : app.get_options()) {
    if (opt->count() == 0 || (opt->get_lnames().empty() && opt->get_snames().empty()))
      continue;
    given.insert(opt->get_lnames().empty() ? "-" + opt->get_snames().front() : "--" + opt->get_lnames().front());
  }
  for (const CLI::App *sub : app.get_subcommands()) {
    std::set<std::string> more = given_options(*sub);
    given.insert(more.begin(), more.end());
  }
  return given;
}

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int usage_error(const std::string &message) {
  std::string text = fmt::format("nkicc: error: {}\nRun with --help for more information.\n", message);
  std::fwrite(text.data(), 1, text.size(), stderr);
  return kExitUsage;
}

} // namespace nkicc::tool
