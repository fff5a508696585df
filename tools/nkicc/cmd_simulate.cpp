// `nkicc simulate`: trace as `trace` does, then execute each call's BIR kernel on the CPU over
// .npy inputs (issue 13). `-o` names a folder of outputs, not one output: the subcommand declares
// its own -o and leaves nothing for cli.cpp to deliver.
#include "cache_cli.h"
#include "commands.h"

#include <fmt/format.h>

namespace nkicc::tool {

namespace {

class SimulateCommand : public Command {
public:
  SimulateCommand(CLI::App &sub, SharedOptions &shared) {
    app_ = &sub;
    add_description_input(app_, input_);
    call_opt_ = app_->add_option("--call", call_, "Simulate only call N (0-based)")->type_name("N");
    inputs_opt_ =
        app_->add_option("--inputs", request_.inputs_dir, "Read call N's tensor parameter P from DIR/callN.P.npy")
            ->type_name("DIR");
    seed_opt_ = app_->add_option("--random-inputs", seed_,
                                 "Make deterministic inputs from SEED instead, and write them to the output folder")
                    ->type_name("SEED");
    inputs_opt_->excludes(seed_opt_);
    app_->add_option("--random-range", ranges_,
                     "Draw made-up inputs of parameter NAME (of every call, or of call N only) from "
                     "[LOW, HIGH), such as indices that must lie within a tensor; repeatable")
        ->type_name("[callN.]NAME=LOW:HIGH")
        ->needs(seed_opt_);
    app_->add_flag("--check-nan", request_.check_nan, "Warn when an instruction makes a NaN from finite inputs");
    app_->add_option("-o,--output", request_.output_dir, "Folder for the outputs, OUTDIR/callN.NAME.npy")
        ->required()
        ->type_name("OUTDIR");
    // The trace part uses the persistent cache as `trace` does.
    add_trace_cache_options(*app_, cache_);
    add_target_options(app_, shared.target);
    add_diagnostic_options(app_, shared.diagnostics);
    add_resource_options(app_, shared.resources);
    add_trace_limit_options(app_, limits_);
    HelpFooter footer;
    footer.examples = {
        "nkicc simulate kernel.json --random-inputs=1 -o out",
        "nkicc simulate kernel.json --inputs in --call 0 --check-nan -o out",
        "nkicc simulate gather.json --random-inputs=1 --random-range=idx=0:128 -o out",
    };
    footer.reads_target_environment = true;
    app_->footer(help_footer(footer));
  }

  bool takes_target() const override { return true; }

  std::optional<UsageError> check(Session &session) override {
    options_ = session.driver_options();
    if (auto error = resolve_description_input(input_, options_, "simulate"))
      return error;
    apply_trace_limits(limits_, options_);
    if (!inputs_opt_->count() && !seed_opt_->count())
      return UsageError{"simulate needs --inputs DIR or --random-inputs=SEED"};
    if (call_opt_->count())
      request_.call = call_;
    if (seed_opt_->count())
      request_.seed = seed_;
    request_.random_ranges.clear();
    for (const std::string &text : ranges_) {
      std::string why;
      auto range = sim::parse_random_range(text, why);
      if (!range)
        return UsageError{fmt::format("--random-range '{}': {}", text, why)};
      for (const sim::RandomRange &earlier : request_.random_ranges)
        if (earlier.param == range->param && earlier.call == range->call)
          return UsageError{fmt::format("--random-range '{}' gives parameter '{}' a second range", text, range->param)};
      request_.random_ranges.push_back(std::move(*range));
    }
    return apply_cache_options(cache_, options_, true);
  }

  std::optional<DriverOutput> run(Session &session) override {
    options_.text_output = session.text_output;
    // The outputs are files in OUTDIR, written already: nothing reaches stdout.
    return run_simulate(options_, request_, session.sources, session.diags);
  }

private:
  DescriptionInput input_;
  SimulateRequest request_;
  std::size_t call_ = 0;
  std::uint64_t seed_ = 0;
  std::vector<std::string> ranges_;
  CLI::Option *call_opt_ = nullptr, *inputs_opt_ = nullptr, *seed_opt_ = nullptr;
  DriverOptions options_;
  CacheCliOptions cache_;
  TraceLimitOptions limits_;
};

} // namespace

std::unique_ptr<Command> make_simulate_command(CLI::App &sub, SharedOptions &shared) {
  return std::make_unique<SimulateCommand>(sub, shared);
}

} // namespace nkicc::tool
