// `nkicc key`: each call's cache key components and key (SPEC §7), after the same checks of the
// description as `trace` makes.
#include "cache_cli.h"
#include "commands.h"

namespace nkicc::tool {

namespace {

class KeyCommand : public Command {
public:
  KeyCommand(CLI::App &sub, SharedOptions &shared) {
    app_ = &sub;
    add_description_input(app_, input_);
    add_call_filter_options(app_, text_, false);
    add_key_cache_options(*app_, cache_);
    add_target_options(app_, shared.target);
    add_output_options(app_, shared.output);
    add_diagnostic_options(app_, shared.diagnostics);
    add_resource_options(app_, shared.resources);
    HelpFooter footer;
    footer.examples = {
        "nkicc key kernel.json",
        "nkicc key kernel.json --target=trn1 --call=2",
        "nkicc key kernel.json --explain --format=json",
        "nkicc key add.py --kernel add --arg float32[256,2048] --arg float32[256,2048]",
    };
    footer.reads_target_environment = true;
    app_->footer(help_footer(footer));
  }

  bool takes_target() const override { return true; }

  std::optional<UsageError> check(Session &session) override {
    options_ = session.driver_options();
    if (auto error = resolve_description_input(input_, options_, "key"))
      return error;
    std::optional<std::string> kernel = options_.text.calls.kernel;
    options_.text = text_options(text_);
    options_.text.calls.kernel = kernel;
    return apply_cache_options(cache_, options_, false);
  }

  std::optional<DriverOutput> run(Session &session) override {
    options_.text_output = session.text_output;
    return run_key(options_, session.sources, session.diags);
  }

private:
  DescriptionInput input_;
  TextFlags text_;
  CacheCliOptions cache_;
  DriverOptions options_;
};

} // namespace

std::unique_ptr<Command> make_key_command(CLI::App &sub, SharedOptions &shared) {
  return std::make_unique<KeyCommand>(sub, shared);
}

} // namespace nkicc::tool
