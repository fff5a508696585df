// `nkicc key`: each call's key as far as it is known before tracing, or with --explain its
// persistent key component by component, from a streamed description or one read whole.
#include "driver/pipeline.h"
#include "nkicc/support/sha256.h"

namespace nkicc {

using namespace detail;

namespace {

/// A component's value on one line of `--explain` text.
std::string one_line(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

/// `nkicc key`'s output, a call at a time: each call's key as far as it is known before tracing,
/// or with --explain its persistent key, component by component.
class KeyWriter {
public:
  KeyWriter(const DriverOptions &options, DiagnosticEngine &diags, const ResolvedTarget &target, Pipeline &pipeline,
            TextSink &sink)
      : options_(options), diags_(diags), target_(target), pipeline_(pipeline), sink_(sink) {}

  void write(const Call &call) {
    if (!options_.text.calls.accepts(call.index,
                                     call.is_external() ? call.external().kernel : call.internal().internal))
      return;
    if (options_.explain_keys)
      explain(call);
    else
      key(call);
    sink_.flush_if_large();
  }

  /// The JSON form of --explain is one document, written at the end.
  void finish() {
    if (options_.explain_keys && options_.key_json)
      sink_.text += to_pretty_json(PyConstant::make_dict({{"calls", PyConstant::list(std::move(explained_))}})) + "\n";
  }

private:
  void separate() {
    if (!first_)
      sink_.text += '\n';
    first_ = false;
  }

  void key(const Call &call) {
    separate();
    if (call.is_external()) {
      const ExternalCall &e = call.external();
      auto key = specialization_key(e, {}, target_.is_fallback, diags_);
      if (!key)
        return;
      fmt::format_to(std::back_inserter(sink_.text), "call {}: kernel {}\n  specialization key: {}\n", call.index,
                     e.kernel, py_repr(*key));
    } else {
      // Written straight into the output: the components, then the SHA-256 of what was just
      // written (a key a call, a hundred thousand calls a run).
      const InternalCall &c = call.internal();
      std::string &out = sink_.text;
      fmt::format_to(std::back_inserter(out), "call {}: internal {}\n  components: ", call.index, c.internal);
      std::size_t start = out.size();
      append_internal_key_string(out, c, *target_.info);
      std::size_t end = out.size();
      out += "\n  key: ";
      append_sha256_hex(out, std::string_view(out).substr(start, end - start));
      out += '\n';
    }
  }

  void explain(const Call &call) {
    auto key = pipeline_.persistent_key(call);
    if (!key)
      return;
    std::string_view kind = call.is_external() ? "kernel" : "internal";
    if (options_.key_json) {
      using E = std::vector<std::pair<std::string, PyConstant>>;
      std::vector<PyConstant> components;
      for (const KeyComponent &c : key->components)
        components.push_back(PyConstant::make_dict(E{{"name", PyConstant::str(c.name)},
                                                     {"value", PyConstant::str(c.value)},
                                                     {"digest", PyConstant::str(c.digest)}}));
      explained_.push_back(
          PyConstant::make_dict(E{{"call", PyConstant::integer(static_cast<std::int64_t>(call.index))},
                                  {"kind", PyConstant::str(call.is_external() ? "external" : "internal")},
                                  {"kernel", PyConstant::str(key->kernel)},
                                  {"key", PyConstant::str(key->key)},
                                  {"components", PyConstant::list(std::move(components))}}));
      return;
    }
    separate();
    fmt::format_to(std::back_inserter(sink_.text), "call {}: {} {}\n  persistent key: {}\n", call.index, kind,
                   key->kernel, key->key);
    for (const KeyComponent &c : key->components)
      fmt::format_to(std::back_inserter(sink_.text), "  {}: {}  {}\n", c.name, c.digest, one_line(c.value));
  }

  const DriverOptions &options_;
  DiagnosticEngine &diags_;
  const ResolvedTarget &target_;
  Pipeline &pipeline_;
  TextSink &sink_;
  bool first_ = true;
  std::vector<PyConstant> explained_;
};

/// `nkicc key` in one pass over its description, as trace_once() reads it: each call checked,
/// its kernel resolved the first time it is named, and its key written, as the file is read.
/// Its output goes out as it is made, so the one pass is tried only when that output can be
/// taken back (a file written through a temporary file, or one collected in memory): nullopt,
/// with nothing reported and nothing written, when it must start over in two passes.
std::optional<std::optional<DriverOutput>> key_once(const DriverOptions &options, SourceManager &sources,
                                                    DiagnosticEngine &diags) {
  TextSink collected;
  TextSink &sink = options.text_output ? *options.text_output : collected;
  if (!sink.rewindable())
    return std::nullopt;
  OnePass pass(options, sources, diags);
  std::unique_ptr<KeyWriter> writer;
  auto ready = [&](Pipeline &pipeline) {
    if (pass.options().explain_keys && !pipeline.load_modules())
      return false;
    writer = std::make_unique<KeyWriter>(pass.options(), diags, *pass.target, pipeline, sink);
    return true;
  };
  bool read = pass.read("key (one pass)", ready, [&](const Call &call) { writer->write(call); });
  if (!read) {
    // What was written is taken back; rewindable() said it can be, and an output that cannot be
    // emptied after all is a run that cannot go on.
    if (!sink.rewind()) {
      diags.rollback(pass.mark());
      diags.io_error(options.input,
                     "cannot take back the keys written before the description was read again: " + sink.error());
      return std::optional<DriverOutput>{};
    }
    return read_whole(diags, pass.mark());
  }
  pass.release();
  writer->finish();
  if (diags.has_errors())
    return std::optional<DriverOutput>{};
  return DriverOutput{std::move(collected.text), false, files_read(pass.header, sources, &pass.pipeline->registry()),
                      options.text_output != nullptr};
}

/// `nkicc key` over a streamed description, as stream_trace() reads it: nullopt, with nothing
/// reported, when the description must be read whole.
std::optional<std::optional<DriverOutput>> stream_key(const DriverOptions &options, SourceManager &sources,
                                                      DiagnosticEngine &diags) {
  DiagnosticEngine::Mark mark = diags.mark();
  std::unique_ptr<StreamedDescription> d = begin_streamed(options, sources, diags);
  if (!d)
    return read_whole(diags, mark);
  const Manifest &header = d->scan.header;
  Pipeline pipeline(options, sources, diags, header, d->modules, d->target);
  // A registry that cannot be read is reported without reading the description again, as
  // stream_trace() does.
  if (!pipeline.load_registry(d->internals()))
    return pipeline.registry_read() ? read_whole(diags, mark) : std::optional<DriverOutput>{};
  if (options.explain_keys && !pipeline.load_modules())
    return std::optional<DriverOutput>{};
  StageTimer timer(options, "key (second pass)");
  auto out = emit_text(options, {}, [&](TextSink &sink) {
    KeyWriter writer(options, diags, d->target, pipeline, sink);
    ReadFigures figures;
    if (!stream_calls(
            sources, d->file, options.input, d->load_options, d->scan, diags,
            [&](const Call &call) { writer.write(call); }, &figures))
      return false;
    note_read(options, "the second pass", figures);
    writer.finish();
    return true;
  });
  if (!out || diags.has_errors())
    return std::optional<DriverOutput>{};
  out->dependencies = files_read(header, sources, &pipeline.registry());
  return out;
}

} // namespace

std::optional<DriverOutput> run_key(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags) {
  if (streamable(options)) {
    if (std::optional<std::optional<DriverOutput>> out = key_once(options, sources, diags))
      return std::move(*out);
    if (std::optional<std::optional<DriverOutput>> out = stream_key(options, sources, diags))
      return std::move(*out);
  }
  auto manifest = load(options, sources, diags);
  if (!manifest)
    return std::nullopt;
  auto target = target_for(options, *manifest, diags);
  if (!target)
    return std::nullopt;
  // The description is checked exactly as `trace` checks it before tracing (every source
  // parses, every call names a kernel that exists), so that no key is printed for a call that
  // `trace` would reject.
  auto modules = parse_sources(*manifest, sources, diags);
  if (!modules || !resolve_kernels(*manifest, *modules, sources, diags))
    return std::nullopt;
  Pipeline pipeline(options, sources, diags, *manifest, *modules, *target);
  if (!pipeline.load_registry(Pipeline::internal_names(manifest->calls)))
    return std::nullopt;
  if (options.explain_keys && !pipeline.load_modules())
    return std::nullopt;
  // Written as it is produced (a key's text is about as large as its call in the description):
  // a run with errors leaves no output, as the tool discards the output when any is reported.
  auto out = emit_text(options, files_read(*manifest, sources, &pipeline.registry()), [&](TextSink &sink) {
    KeyWriter writer(options, diags, *target, pipeline, sink);
    for (const Call &call : manifest->calls)
      writer.write(call);
    writer.finish();
    return true;
  });
  if (diags.has_errors())
    return std::nullopt;
  return out;
}

} // namespace nkicc
