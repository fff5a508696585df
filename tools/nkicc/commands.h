// The subcommands of nkicc (SPEC §1), one file each (cmd_<name>.cpp): a subcommand declares its
// App with the option groups it takes and runs on a Session once the command line is parsed.
// cli.cpp holds only what is common: parsing, "did you mean", the output and the exit code.
// A new subcommand is a new file and one line in cli.cpp's table of subcommands.
#pragma once

#include "options.h"

#include "nkicc/driver/driver.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc::tool {

/// The option groups every subcommand shares one instance of (only one subcommand runs);
/// `--target`, `-I` and the diagnostics group are also accepted before the subcommand.
struct SharedOptions {
  DiagnosticOptions diagnostics;
  OutputOptions output;
  TargetOptions target;
  ResourceOptions resources;
};

/// What a parsed run works with.
class Session {
public:
  Session(const SharedOptions &shared_options, std::set<std::string> given_options, SourceManager &source_manager,
          DiagnosticEngine &diagnostics)
      : shared(shared_options), sources(source_manager), diags(diagnostics), given_(std::move(given_options)) {}

  const SharedOptions &shared;
  SourceManager &sources;
  DiagnosticEngine &diags;
  /// Where large text outputs are streamed (into the output file, or stdout).
  TextSink *text_output = nullptr;

  /// Whether an option (by its long name, `--emit`, or its short one when it has no long one)
  /// was given on the command line, before or after the subcommand.
  bool given(std::string_view option) const { return given_.count(std::string(option)) > 0; }

  /// The options every pipeline run starts from: the target's inputs (the flag and the
  /// environment), the registry folders (-I, then the installed one), the log hooks.
  DriverOptions driver_options() const;

  /// Warns that a given option does not apply to what was asked (`applies_to`: "--emit=hlo and
  /// --emit=stablehlo") and is ignored; nothing when it was not given.
  void warn_unused(std::string_view option, std::string_view applies_to) const;

private:
  std::set<std::string> given_;
};

class Command {
public:
  virtual ~Command() = default;
  CLI::App *app() const { return app_; }
  /// Whether the subcommand reads --target and -I (the others warn that they do not apply).
  virtual bool takes_target() const { return false; }
  /// After parsing: mistakes that involve several options (usage errors, exit 2), and warnings
  /// for options that do not apply to the output asked for.
  virtual std::optional<UsageError> check(Session &) { return std::nullopt; }
  virtual std::optional<DriverOutput> run(Session &session) = 0;

protected:
  CLI::App *app_ = nullptr;
};

/// Each subcommand's options, declared on its App (made by cli.cpp from the table of
/// subcommands, with the name and description it lists).
std::unique_ptr<Command> make_trace_command(CLI::App &sub, SharedOptions &shared);
std::unique_ptr<Command> make_dis_command(CLI::App &sub, SharedOptions &shared);
std::unique_ptr<Command> make_decode_config_command(CLI::App &sub, SharedOptions &shared);
std::unique_ptr<Command> make_key_command(CLI::App &sub, SharedOptions &shared);
std::unique_ptr<Command> make_simulate_command(CLI::App &sub, SharedOptions &shared);

/// The help text after a subcommand's options: examples, then the exit codes and the
/// environment variables that subcommand reads.
struct HelpFooter {
  std::vector<std::string> examples;
  bool reads_target_environment = false; ///< NEURON_PLATFORM_TARGET_OVERRIDE, NKICC_DMI_PRODUCT_NAME
  bool records_nki_frontend = false;     ///< nki_frontend
};
std::string help_footer(const HelpFooter &footer);

/// share/nkicc beside the binary's bin/ folder (the build tree mirrors the install tree).
std::string data_dir();

} // namespace nkicc::tool
