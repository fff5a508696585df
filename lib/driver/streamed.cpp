// A description read as a stream (issue 16): `trace` in one pass when it can start over unseen,
// else in two (a checking pass, then a tracing pass), and the first steps `key` shares; anything
// wrong rolls back to the whole read of driver.cpp, which reports it in document order.
#include "driver/pipeline.h"

namespace nkicc::detail {

/// Whether `trace` reads the description as a stream (issue 16): a regular file on disk, for an
/// output made of traced calls. Standard input and the command line's description are read whole,
/// and so are `--emit=manifest|ast`, which show the description itself.
bool streamable(const DriverOptions &options) {
  if (options.description_text || options.input == "-" || options.emit == EmitKind::Manifest ||
      options.emit == EmitKind::Ast)
    return false;
  struct stat st {};
  return ::stat(options.input.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         static_cast<std::uint64_t>(st.st_size) < kMaxInputBytes;
}

/// A streamed read gives up: what it reported since `mark` is forgotten, and the caller reads the
/// description another way.
std::optional<std::optional<DriverOutput>> read_whole(DiagnosticEngine &diags, const DiagnosticEngine::Mark &mark) {
  diags.rollback(mark);
  return std::nullopt;
}

void note_read(const DriverOptions &options, std::string_view pass, const ReadFigures &figures) {
  if (options.debug_log)
    options.debug_log(fmt::format("{} calls read in {}, {} of them repeats of an earlier call's bytes (not parsed or "
                                  "checked again)",
                                  figures.calls, pass, figures.repeats));
}

ManifestLoadOptions streamed_load_options(const std::string &input) {
  ManifestLoadOptions load_options;
  load_options.base_dir = parent_dir(input);
  load_options.default_name = file_stem(input);
  return load_options;
}

OnePass::OnePass(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags)
    : run_options_(options), sources_(sources), diags_(diags), mark_(diags.mark()), lines_(options) {}

bool OnePass::read(const char *stage, const std::function<bool(Pipeline &)> &ready,
                   const std::function<void(const Call &)> &each) {
  FileId file = sources_.add_lazy_file(run_options_.input);
  auto on_header = [&](Manifest &&h) {
    header = std::move(h);
    target = target_for(options(), header, diags_);
    if (!target)
      return false;
    modules = parse_sources(header, sources_, diags_);
    if (!modules)
      return false;
    pipeline = std::make_unique<Pipeline>(options(), sources_, diags_, header, *modules, *target, persistent.get());
    return ready(*pipeline);
  };
  auto on_call = [&](const Call &call) {
    if (!meet(call))
      return false;
    each(call);
    return true;
  };
  StageTimer timer(run_options_, stage);
  // A `name` after the calls only renames the outputs, which are made at the end.
  auto on_trailing_name = [&](std::string name) {
    header.name = std::move(name);
    return true;
  };
  ReadFigures figures;
  if (!read_description_once(sources_, file, run_options_.input, streamed_load_options(run_options_.input), diags_,
                             on_header, on_call, on_trailing_name, &figures))
    return false;
  note_read(run_options_, "one pass", figures);
  return true;
}

bool OnePass::open_cache() { return open_persistent(options(), persistent, diags_); }

bool OnePass::meet(const Call &call) {
  if (call.is_external()) {
    const std::string &kernel = call.external().kernel;
    if (std::find(kernels_.begin(), kernels_.end(), kernel) == kernels_.end()) {
      if (!kernel_resolves(kernel, *modules))
        return false;
      kernels_.push_back(kernel);
    }
    return true;
  }
  const InternalCall &ic = call.internal();
  if (std::find(internals_.begin(), internals_.end(), ic.internal) == internals_.end()) {
    if (!pipeline->load_registry({{ic.internal, ic.internal_loc}}))
      return false;
    internals_.push_back(ic.internal);
  }
  return true;
}

/// The first pass and what follows it up to the registry. Nullopt when the description must be
/// read whole (the caller rolls the diagnostics back): a check, the target, a source or a kernel
/// name failed.
std::unique_ptr<StreamedDescription> begin_streamed(const DriverOptions &options, SourceManager &sources,
                                                    DiagnosticEngine &diags) {
  auto d = std::make_unique<StreamedDescription>();
  d->file = sources.add_lazy_file(options.input);
  d->load_options = streamed_load_options(options.input);
  std::optional<DescriptionScan> scan;
  {
    // The first pass; -vv names it so, and a description read whole after it shows "load" too.
    StageTimer timer(options, "load (streamed)");
    scan = scan_description(sources, d->file, options.input, d->load_options, diags);
  }
  if (!scan)
    return nullptr;
  d->scan = std::move(*scan);
  auto target = target_for(options, d->scan.header, diags);
  if (!target)
    return nullptr;
  d->target = *target;
  StageTimer timer(options, "parse");
  auto modules = parse_sources(d->scan.header, sources, diags);
  if (!modules || !std::all_of(d->scan.kernels.begin(), d->scan.kernels.end(),
                               [&](const std::string &kernel) { return kernel_resolves(kernel, *modules); }))
    return nullptr;
  d->modules = std::move(*modules);
  return d;
}

namespace {

/// `trace` in one pass over its description (the common case: nothing but `name` follows `calls`
/// and everything is right): each call is checked, its kernel resolved the first time it is
/// named, and traced (looked up and stored in the persistent cache, when there is one), as the
/// file is read. Nullopt, with nothing reported and nothing seen, when it must start over in
/// two passes (stream_trace()): a check failed, a kernel did not resolve, another member
/// followed `calls`. The pass's log lines are held until it ends.
std::optional<std::optional<DriverOutput>> trace_once(const DriverOptions &options, SourceManager &sources,
                                                      DiagnosticEngine &diags) {
  OnePass pass(options, sources, diags);
  if (!pass.open_cache())
    return read_whole(diags, pass.mark());
  auto ready = [](Pipeline &pipeline) {
    pipeline.streaming();
    return pipeline.load_modules();
  };
  if (!pass.read("trace (one pass)", ready, [&](const Call &call) { pass.pipeline->trace_call(call); }))
    return read_whole(diags, pass.mark());
  pass.release();
  Pipeline &pipeline = *pass.pipeline;
  if (!pipeline.finish_tracing())
    return std::optional<DriverOutput>{};
  return emit_traced(pass.options(), diags, pass.header, pipeline, pass.persistent.get(),
                     files_traced(pass.header, sources, pipeline));
}

/// `trace` over a streamed description: the calls are checked in a first pass, then traced one
/// at a time as a second pass reads them, so that memory holds the variants, not the calls.
/// Nullopt, with nothing reported and nothing traced, when the description must be read whole
/// instead: it has a problem (a check, a source, a kernel name, the registry), which the whole
/// read reports as it always does, in document order.
std::optional<std::optional<DriverOutput>> stream_trace(const DriverOptions &options, SourceManager &sources,
                                                        DiagnosticEngine &diags) {
  DiagnosticEngine::Mark mark = diags.mark();
  std::unique_ptr<StreamedDescription> d = begin_streamed(options, sources, diags);
  if (!d)
    return read_whole(diags, mark);
  std::unique_ptr<PersistentCache> persistent;
  if (!open_persistent(options, persistent, diags))
    return read_whole(diags, mark);
  const Manifest &header = d->scan.header;
  Pipeline pipeline(options, sources, diags, header, d->modules, d->target, persistent.get());
  pipeline.streaming();
  {
    StageTimer timer(options, "trace");
    // A registry that cannot be read is reported as the whole read would report it (it checks
    // what the first pass checked, in the same order, then reads the same registry): the
    // description is not read again for that. A kernel the registry lacks is reported at each
    // call that names it, which the first pass did not keep.
    if (!pipeline.load_registry(d->internals()))
      return pipeline.registry_read() ? read_whole(diags, mark) : std::optional<DriverOutput>{};
    // From here on the run is this one: module-level code runs, calls are traced.
    ReadFigures figures;
    if (!pipeline.load_modules() ||
        !stream_calls(
            sources, d->file, options.input, d->load_options, d->scan, diags,
            [&](const Call &call) { pipeline.trace_call(call); }, &figures) ||
        !pipeline.finish_tracing())
      return std::optional<DriverOutput>{};
    note_read(options, "the second pass", figures);
  }
  return emit_traced(options, diags, header, pipeline, persistent.get(), files_traced(header, sources, pipeline));
}

} // namespace

std::optional<std::optional<DriverOutput>> trace_streamed(const DriverOptions &options, SourceManager &sources,
                                                          DiagnosticEngine &diags) {
  if (std::optional<std::optional<DriverOutput>> out = trace_once(options, sources, diags))
    return out;
  return stream_trace(options, sources, diags);
}

} // namespace nkicc::detail
