// `nkicc dis`: a BIR module blob as canonical text, the same text as --emit=bir-text (SPEC §6).
#include "commands.h"

namespace nkicc::tool {

namespace {

class DisCommand : public Command {
public:
  DisCommand(CLI::App &sub, SharedOptions &shared) {
    app_ = &sub;
    app_->add_option("file", input_, "BIR module file, or - for standard input")->required()->type_name("FILE");
    add_source_locations_option(app_, text_);
    add_call_filter_options(app_, text_, true);
    add_output_options(app_, shared.output);
    add_diagnostic_options(app_, shared.diagnostics);
    add_resource_options(app_, shared.resources);
    HelpFooter footer;
    footer.examples = {
        "nkicc dis kernel.bir",
        "nkicc dis kernel.bir --source-locations=none --kernel=tiled_dve_transpose_10 -o kernel.bir.txt",
        "nkicc trace kernel.json | nkicc dis -",
    };
    app_->footer(help_footer(footer));
  }

  std::optional<DriverOutput> run(Session &session) override {
    return run_dis(input_, text_options(text_), session.sources, session.diags);
  }

private:
  std::string input_;
  TextFlags text_;
};

} // namespace

std::unique_ptr<Command> make_dis_command(CLI::App &sub, SharedOptions &shared) {
  return std::make_unique<DisCommand>(sub, shared);
}

} // namespace nkicc::tool
