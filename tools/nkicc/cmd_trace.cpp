// `nkicc trace`: the pipeline up to the stage --emit names (SPEC §1).
#include "cache_cli.h"
#include "commands.h"

#include <fmt/format.h>

#include <map>

namespace nkicc::tool {

namespace {

const std::map<std::string, EmitKind> kEmitKinds = {
    {"manifest", EmitKind::Manifest},
    {"ast", EmitKind::Ast},
    {"ir", EmitKind::Ir},
    {"bir", EmitKind::Bir},
    {"bir-text", EmitKind::BirText},
    {"hlo", EmitKind::Hlo},
    {"stablehlo", EmitKind::StableHlo},
    {"stats", EmitKind::Stats},
    {"summary", EmitKind::Summary},
};

/// The --emit names in pipeline order, as the help and the messages list them.
std::vector<std::string> emit_names() {
  return {"manifest", "ast", "ir", "bir", "bir-text", "hlo", "stablehlo", "stats", "summary"};
}

class TraceCommand : public Command {
public:
  TraceCommand(CLI::App &sub, SharedOptions &shared) {
    app_ = &sub;
    add_description_input(app_, input_);
    app_->add_option("--emit", emit_,
                     "Stop after this stage and write its result: manifest (the checked description as JSON), "
                     "ast (the parsed kernel sources), ir (the traced kernel IR of every call), bir (the BIR "
                     "module blob, the default), bir-text (the same as text), hlo (an HLO module of "
                     "custom-calls), stablehlo (the same in MLIR's generic form), stats (cache statistics), "
                     "summary (per call: SBUF and PSUM use, instructions and DMA bytes per engine, MACs)")
        ->check(one_of(emit_names()))
        ->type_name("KIND")
        ->group("Pipeline");
    app_->add_option("--hlo-flavor", hlo_flavor_,
                     "Custom-call flavor of --emit=hlo and stablehlo: jax (AwsNeuronCustomNativeKernel, the "
                     "default) or torch-xla (AwsNeuronNkiKernel)")
        ->check(one_of({"jax", "torch-xla"}))
        ->type_name("FLAVOR")
        ->group("Pipeline");
    app_->add_option("--stats-format", stats_format_, "Format of --emit=stats and summary: text (default) or json")
        ->check(one_of({"text", "json"}))
        ->type_name("FORMAT")
        ->group("Pipeline");
    app_->add_flag("--no-cache", no_cache_,
                   "Trace every call, reusing no specialization (the output is byte-identical; only the "
                   "statistics differ)")
        ->group("Pipeline");
    add_trace_cache_options(*app_, cache_);
    add_source_locations_option(app_, text_);
    add_call_filter_options(app_, text_, false); // --kernel is the input group's
    add_target_options(app_, shared.target);
    add_output_options(app_, shared.output);
    add_diagnostic_options(app_, shared.diagnostics);
    add_resource_options(app_, shared.resources);
    add_trace_limit_options(app_, limits_);
    HelpFooter footer;
    footer.examples = {
        "nkicc trace kernel.json -o kernel.bir",
        "nkicc trace kernel.json --emit=hlo --target=trn2 -o kernel.hlo --depfile kernel.d --depfile-phony",
        "nkicc trace kernel.json --emit=ir --source-locations=none --call=1",
        "nkicc trace matmul.py --kernel nki_matmul --arg bfloat16[1024,512] --arg bfloat16[1024,2048] "
        "--emit=summary",
        "nkicc trace add.py --kernel add --arg float32[256,2048] --arg float32[256,2048] --grid 2 --emit=manifest",
    };
    footer.reads_target_environment = true;
    footer.records_nki_frontend = true;
    app_->footer(help_footer(footer));
  }

  bool takes_target() const override { return true; }

  std::optional<UsageError> check(Session &session) override {
    options_ = session.driver_options();
    if (auto error = resolve_description_input(input_, options_, "trace"))
      return error;
    options_.emit = kEmitKinds.at(emit_);
    options_.hlo_flavor_torch_xla = hlo_flavor_ == "torch-xla";
    options_.stats_json = stats_format_ == "json";
    options_.use_cache = !no_cache_;
    apply_trace_limits(limits_, options_);
    TextOptions text = text_options(text_);
    text.calls.kernel = options_.text.calls.kernel; // a description's --kernel filter
    options_.text = text;
    if (auto error = apply_cache_options(cache_, options_, true))
      return error;

    EmitKind e = options_.emit;
    bool hlo = e == EmitKind::Hlo || e == EmitKind::StableHlo;
    bool figures = e == EmitKind::Stats || e == EmitKind::Summary;
    bool call_text = e == EmitKind::Ir || e == EmitKind::BirText || e == EmitKind::Summary;
    bool traced = e != EmitKind::Manifest && e != EmitKind::Ast;
    if (!hlo)
      session.warn_unused("--hlo-flavor", "--emit=hlo and --emit=stablehlo");
    if (!figures)
      session.warn_unused("--stats-format", "--emit=stats and --emit=summary");
    if (!call_text) {
      session.warn_unused("--source-locations", "--emit=ir, --emit=bir-text and --emit=summary");
      session.warn_unused("--call", "--emit=ir, --emit=bir-text and --emit=summary");
      if (!is_kernel_file(input_))
        session.warn_unused("--kernel", "--emit=ir, --emit=bir-text and --emit=summary (with a description file)");
    }
    if (!traced) {
      session.warn_unused("--no-cache", "the stages that trace (every --emit but manifest and ast)");
      session.warn_unused("--max-instructions", "the stages that trace (every --emit but manifest and ast)");
      session.warn_unused("--max-trace-time", "the stages that trace (every --emit but manifest and ast)");
    }
    return std::nullopt;
  }

  std::optional<DriverOutput> run(Session &session) override {
    options_.text_output = session.text_output;
    return run_trace(options_, session.sources, session.diags);
  }

private:
  DescriptionInput input_;
  std::string emit_ = "bir";
  std::string hlo_flavor_ = "jax";
  std::string stats_format_ = "text";
  bool no_cache_ = false;
  TraceLimitOptions limits_;
  TextFlags text_;
  CacheCliOptions cache_;
  DriverOptions options_;
};

} // namespace

std::unique_ptr<Command> make_trace_command(CLI::App &sub, SharedOptions &shared) {
  return std::make_unique<TraceCommand>(sub, shared);
}

} // namespace nkicc::tool
