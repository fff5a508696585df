// `nkicc decode-config`: a backend_config (SPEC §9) back into its JSON and the BIR kernel it
// embeds; with --hlo, every custom-call of an HLO or StableHLO module.
#include "commands.h"

namespace nkicc::tool {

namespace {

class DecodeConfigCommand : public Command {
public:
  DecodeConfigCommand(CLI::App &sub, SharedOptions &shared) {
    app_ = &sub;
    app_->add_option("config", config_, "The base64 backend_config, or @FILE to read it from a file (@- stdin)")
        ->type_name("B64|@FILE");
    app_->add_option("--hlo", hlo_,
                     "Decode every custom-call of this HLO or StableHLO module (- for standard input) instead")
        ->type_name("FILE");
    add_source_locations_option(app_, text_);
    add_call_filter_options(app_, text_, true);
    add_output_options(app_, shared.output);
    add_diagnostic_options(app_, shared.diagnostics);
    add_resource_options(app_, shared.resources);
    HelpFooter footer;
    footer.examples = {
        "nkicc decode-config @config.b64",
        "nkicc decode-config --hlo kernel.hlo --source-locations=none",
        "nkicc trace kernel.json --emit=stablehlo | nkicc decode-config --hlo - --call=0",
    };
    app_->footer(help_footer(footer));
  }

  std::optional<UsageError> check(Session &session) override {
    bool has_config = app_->count("config") > 0;
    if (has_config == !hlo_.empty())
      return UsageError{has_config ? "give either a backend_config or --hlo FILE, not both"
                                   : "a backend_config (B64 or @FILE) or --hlo FILE is required"};
    if (hlo_.empty()) {
      session.warn_unused("--call", "--hlo (a module's custom-calls)");
      session.warn_unused("--kernel", "--hlo (a module's custom-calls)");
    }
    return std::nullopt;
  }

  std::optional<DriverOutput> run(Session &session) override {
    if (!hlo_.empty())
      return run_decode_hlo(hlo_, text_options(text_), session.sources, session.diags);
    return run_decode_config(config_, text_options(text_), session.sources, session.diags);
  }

private:
  std::string config_;
  std::string hlo_;
  TextFlags text_;
};

} // namespace

std::unique_ptr<Command> make_decode_config_command(CLI::App &sub, SharedOptions &shared) {
  return std::make_unique<DecodeConfigCommand>(sub, shared);
}

} // namespace nkicc::tool
