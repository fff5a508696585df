// The option groups that several subcommands share. Each group is a plain struct that CLI11
// fills, and an add_*() that declares its options on one subcommand's App, so that a
// subcommand's --help lists exactly the options it takes.
#pragma once

#include "nkicc/driver/driver.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc::tool {

inline constexpr int kExitInput = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitIO = 3;
inline constexpr int kExitInternal = 70;

/// A command-line mistake found after parsing: printed as `nkicc: error: <message>` and exit 2.
struct UsageError {
  std::string message;
};

/// Logging, colour and the form of diagnostics (every subcommand, and before it).
struct DiagnosticOptions {
  std::string log_level;
  int verbosity = 0;
  std::string color = "auto";
  std::string format = "text"; ///< --diagnostics-format: text, json (one object per line) or sarif
};
void add_diagnostic_options(CLI::App *app, DiagnosticOptions &options);

/// `-o`, `--depfile` and gcc's -MT/-MP for it.
struct OutputOptions {
  std::string output = "-";
  std::string depfile;
  bool depfile_phony = false;
  std::vector<std::string> depfile_targets;
};
void add_output_options(CLI::App *app, OutputOptions &options);

/// What a run may use (`--max-memory`; every subcommand, and before it).
struct ResourceOptions {
  std::string max_memory; ///< empty: memory::kDefaultLimit
};
void add_resource_options(CLI::App *app, ResourceOptions &options);
/// The bytes `--max-memory` allows (its value was checked by the option's validator).
std::uint64_t memory_limit(const ResourceOptions &options);

/// The limits of a trace (`trace` and `simulate`): `--max-instructions`, `--max-trace-time`.
struct TraceLimitOptions {
  std::string max_instructions; ///< empty: DriverOptions' default
  std::string max_trace_time;   ///< seconds; empty: kDefaultMaxTraceTime
};
void add_trace_limit_options(CLI::App *app, TraceLimitOptions &options);
/// Puts the limits given (checked by the options' validators) into `driver`.
void apply_trace_limits(const TraceLimitOptions &options, DriverOptions &driver);
/// `--max-trace-time`'s syntax: seconds as a decimal number (`300`, `2.5`), at most 10^7, to the
/// millisecond; `0` is no limit. Nullopt when the text is not one.
std::optional<std::chrono::milliseconds> parse_seconds(std::string_view text);

/// `--target` and `-I` (the description's subcommands, and before the subcommand).
struct TargetOptions {
  std::string target;
  std::vector<std::string> kernel_path;
};
void add_target_options(CLI::App *app, TargetOptions &options);

/// How text outputs print (`--source-locations`) and which calls they show (`--call`, and
/// `--kernel` where it is not the quick path's).
struct TextFlags {
  std::string source_locations = "line-col";
  std::optional<std::size_t> call;
  std::optional<std::string> kernel;
};
void add_source_locations_option(CLI::App *app, TextFlags &options);
void add_call_filter_options(CLI::App *app, TextFlags &options, bool with_kernel_filter);
TextOptions text_options(const TextFlags &flags);

/// The input of `trace`, `key` (and `simulate`): a description file, or a kernel file with the
/// call described on the command line (SPEC §1's quick path).
struct DescriptionInput {
  std::string file;
  std::optional<std::string> kernel; ///< --kernel: the kernel to call (quick path), else a filter
  std::vector<std::string> args;
  std::vector<std::string> kwargs;
  std::string grid;
  std::string nc;
  std::vector<std::string> opts;
};
void add_description_input(CLI::App *app, DescriptionInput &input);

/// Whether the input is a kernel file (`.py`) rather than a description.
bool is_kernel_file(const DescriptionInput &input);

/// Fills `options.input` and, for a kernel file, `options.description_text`; a `.py` given
/// without --kernel, or --arg with a description, is a usage error with a hint. `--kernel` with a
/// description filters the calls shown: it goes to `options.text.calls`.
std::optional<UsageError> resolve_description_input(const DescriptionInput &input, DriverOptions &options,
                                                    std::string_view subcommand);

/// A positive count option (`--max-instructions`): a decimal integer from 1 to 2^63-1, with a
/// message that says so (CLI11's own check names a 309-digit bound).
CLI::Validator positive_count();

/// A choice among `names`, with "did you mean" for a near miss.
CLI::Validator one_of(std::vector<std::string> names);

/// The long (or short) names of the options given on the command line, in every App that was
/// parsed: `--emit`, `-o`, ...
std::set<std::string> given_options(const CLI::App &app);

/// An environment variable's value, or nullptr when it is unset or empty.
const char *env(const char *name);

/// A usage error in nkicc's form: one `nkicc: error:` line, then the hint; returns kExitUsage.
int usage_error(const std::string &message);

} // namespace nkicc::tool
