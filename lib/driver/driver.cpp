#include "nkicc/driver/driver.h"

#include "nkicc/bir/bir.h"
#include "nkicc/cache/binary_cache.h"
#include "nkicc/cache/cache_key.h"
#include "nkicc/cache/py_repr.h"
#include "nkicc/manifest/manifest.h"
#include "nkicc/hlo/hlo.h"
#include "nkicc/ir/kernel_ir.h"
#include "nkicc/python/parser.h"
#include "nkicc/trace/tracer.h"
#include "nkicc/registry/registry.h"
#include "nkicc/support/file_io.h"
#include "nkicc/version.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

namespace nkicc {

namespace {

/// Reports a stage's wall time when it goes out of scope.
class StageTimer {
public:
  StageTimer(const DriverOptions &options, std::string_view stage)
      : options_(options), stage_(stage), start_(std::chrono::steady_clock::now()) {}
  ~StageTimer() {
    if (options_.stage_timer)
      options_.stage_timer(
          stage_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
  }
  StageTimer(const StageTimer &) = delete;
  StageTimer &operator=(const StageTimer &) = delete;

private:
  const DriverOptions &options_;
  std::string_view stage_;
  std::chrono::steady_clock::time_point start_;
};

/// Reads the description file and checks it (SPEC §2).
std::optional<Manifest> load(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags) {
  std::string why;
  auto text = read_file(options.input, why);
  if (!text) {
    diags.io_error(options.input == "-" ? "<stdin>" : options.input, "cannot read kernel description: " + why);
    return std::nullopt;
  }
  bool from_stdin = options.input == "-";
  FileId file = sources.add_buffer(from_stdin ? "<stdin>" : options.input, std::move(*text));
  ManifestLoadOptions load_options;
  load_options.base_dir = from_stdin ? "" : parent_dir(options.input);
  load_options.default_name = from_stdin ? "stdin" : file_stem(options.input);
  return load_manifest(sources, file, load_options, diags);
}

/// Resolves the target from the flag, the file, the environment and DMI (SPEC §5).
std::optional<ResolvedTarget> target_for(const DriverOptions &options, const Manifest &manifest,
                                         DiagnosticEngine &diags) {
  TargetInputs inputs = options.target;
  inputs.file_value = manifest.target;
  inputs.file_loc = manifest.target_loc;
  return resolve_target(inputs, diags);
}

/// Parses every kernel source as Python 3 (SPEC §3): the whole file, host code included.
std::optional<std::vector<python::Module>> parse_sources(const Manifest &manifest, const SourceManager &sources,
                                                         DiagnosticEngine &diags) {
  std::vector<python::Module> modules;
  bool ok = true;
  for (const KernelSource &src : manifest.sources) {
    auto module = python::parse_module(sources, src.file, diags);
    ok = ok && module.has_value();
    if (module)
      modules.push_back(std::move(*module));
  }
  if (!ok)
    return std::nullopt;
  return modules;
}

/// Every external call must name a top-level function of exactly one source.
bool resolve_kernels(const Manifest &manifest, const std::vector<python::Module> &modules, const SourceManager &sources,
                     DiagnosticEngine &diags) {
  std::vector<std::string> defined;
  for (const python::Module &m : modules)
    for (const python::FunctionDefStmt *f : m.functions)
      defined.emplace_back(f->name);
  bool ok = true;
  for (const Call &call : manifest.calls) {
    if (!call.is_external())
      continue;
    const ExternalCall &e = call.external();
    std::vector<const python::Module *> owners;
    for (const python::Module &m : modules)
      if (m.function(e.kernel))
        owners.push_back(&m);
    if (owners.size() == 1)
      continue;
    ok = false;
    if (owners.empty()) {
      std::string message =
          fmt::format("unknown kernel '{}': no source defines a top-level function of that name", e.kernel);
      std::string best = closest_match(e.kernel, defined);
      if (!best.empty())
        message += fmt::format("; did you mean '{}'?", best);
      diags.error(e.kernel_loc, std::move(message), "manifest");
    } else {
      diags.error(e.kernel_loc,
                  fmt::format("kernel '{}' is defined in more than one source: '{}' and '{}'", e.kernel,
                              sources.name(owners[0]->file), sources.name(owners[1]->file)),
                  "manifest");
    }
  }
  return ok;
}

std::string dump_sources(const std::vector<python::Module> &modules, const SourceManager &sources) {
  std::string out;
  for (const python::Module &m : modules) {
    out += fmt::format("# source: {}\n", sources.name(m.file));
    out += python::dump_ast(m, sources);
    if (!out.empty() && out.back() != '\n')
      out += '\n';
  }
  return out;
}

/// The files a run read, for depfiles: the description, its sources, registry files.
std::vector<std::string> files_read(const Manifest &manifest, const SourceManager &sources,
                                    const Registry *registry = nullptr) {
  std::vector<std::string> files;
  if (sources.name(manifest.file) != "<stdin>")
    files.emplace_back(sources.name(manifest.file));
  for (const KernelSource &s : manifest.sources)
    if (!s.path.empty())
      files.push_back(s.resolved_path);
  if (registry) {
    for (const std::string &f : registry->files())
      files.push_back(f);
    for (const std::string &f : registry->sources_read())
      files.push_back(f);
  }
  return files;
}

/// One call's compiled kernel: the BIR blob and where it came from.
struct CompiledCall {
  std::string cache_key;
  std::string func_name;
  std::string kernel_name;
  std::shared_ptr<const trace::KernelTrace> trace;
  const CachedKernel *kernel = nullptr;
};

/// The pipeline state of one `nkicc trace` run after the sources are parsed.
class Pipeline {
public:
  Pipeline(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags, const Manifest &manifest,
           const std::vector<python::Module> &modules, const ResolvedTarget &target)
      : options_(options), sources_(sources), diags_(diags), manifest_(manifest), target_(target),
        tracer_(sources, manifest, modules, target, trace_options(options), diags) {}

  /// Reads the internal-kernel registry when any call needs it, and resolves every internal
  /// call's func_name in it (SPEC §7).
  bool load_registry() {
    bool any_internal =
        std::any_of(manifest_.calls.begin(), manifest_.calls.end(), [](const Call &c) { return !c.is_external(); });
    if (!any_internal)
      return true;
    if (!registry_.load(options_.kernel_path, sources_, diags_))
      return false;
    bool ok = true;
    for (const Call &call : manifest_.calls) {
      if (call.is_external())
        continue;
      const InternalCall &c = call.internal();
      const RegistryEntry *entry = registry_.find(c.internal);
      if (!entry) {
        std::string message = fmt::format("unknown internal kernel {}: the registry has no such func_name",
                                          quote_for_message(c.internal));
        std::string best = closest_match(c.internal, registry_.names());
        if (!best.empty())
          message += fmt::format("; did you mean '{}'?", best);
        diags_.error(c.internal_loc, std::move(message), "registry");
        ok = false;
        continue;
      }
      if (!registry_module(*entry))
        ok = false;
    }
    return ok;
  }

  /// Traces every call in order: external calls through their specialization caches,
  /// internal calls through the per-run binary cache (seed 000 codegenInternalNativeNkiKernel).
  bool trace_calls() {
    if (!tracer_.load_modules())
      return false;
    calls_.resize(manifest_.calls.size());
    for (const Call &call : manifest_.calls) {
      if (call.is_external())
        trace_external(call);
      else
        trace_internal(call);
    }
    if (options_.stage_timer && binary_cache_.cache_hits + binary_cache_.cache_misses)
      options_.stage_timer("binary cache keys", std::chrono::duration<double, std::milli>(key_time_).count());
    return !diags_.has_errors();
  }

  void write_ir(TextSink &out) const {
    for (const Call &call : manifest_.calls) {
      const CompiledCall &c = calls_[call.index];
      // External calls show their specialization key, internal calls their binary-cache key.
      if (call.is_external())
        out.text += fmt::format("# call {}: {} {}\n", call.index, c.func_name, c.trace->specialization_key);
      else
        out.text += fmt::format("# call {}: internal {} key {}\n", call.index, c.func_name, c.cache_key);
      ir::print_function(out, c.trace->function, sources_);
      out.flush_if_large();
    }
  }

  /// The BIR module of the run (SPEC §6): unique kernels stored once, one NKIKLIRKernel
  /// instruction per call in call order.
  std::string bir_module() const {
    bir::ModuleInfo info;
    info.name = manifest_.name;
    info.nkicc_version = NKICC_VERSION_STRING;
    info.target = std::string(target_.info->name);
    info.nki_frontend = options_.nki_frontend;
    std::vector<std::pair<std::string_view, std::string_view>> kernels;
    std::map<std::string, std::uint32_t> index;
    std::vector<bir::ModuleCall> instructions;
    for (const Call &call : manifest_.calls) {
      const CompiledCall &c = calls_[call.index];
      auto [it, fresh] = index.emplace(c.cache_key, static_cast<std::uint32_t>(kernels.size()));
      if (fresh)
        kernels.emplace_back(c.cache_key, c.kernel->binary);
      bir::ModuleCall m;
      m.func_name = c.func_name;
      m.kernel_name = c.kernel_name;
      m.cache_key = c.cache_key;
      m.kernel_index = it->second;
      m.func_args = c.kernel->input_names;
      m.func_outs = c.kernel->output_names;
      instructions.push_back(std::move(m));
    }
    return bir::write_module(info, kernels, instructions);
  }

  /// The HLO view of every call (SPEC §9): what the custom-calls carry.
  std::vector<hlo::HloCall> hlo_calls() const {
    std::vector<hlo::HloCall> out;
    for (const Call &call : manifest_.calls) {
      const CompiledCall &c = calls_[call.index];
      hlo::HloCall h;
      h.func_name = c.func_name;
      h.trace = c.trace.get();
      h.bir_blob = c.kernel->binary;
      h.platform_target = target_.info->name;
      h.platform_target_is_fallback = target_.is_fallback;
      auto operand = [&h](const TensorSpec &t) { h.operands.push_back({t.shape, t.dtype, t.name}); };
      if (call.is_external()) {
        const ExternalCall &e = call.external();
        h.grid = e.grid;
        h.opts = e.opts;
        for (const Argument &a : e.args)
          if (a.is_tensor())
            operand(a.tensor());
        for (const auto &[name, a] : e.kwargs)
          if (a.is_tensor())
            operand(a.tensor());
      } else {
        for (const TensorSpec &t : call.internal().operands)
          operand(t);
      }
      out.push_back(std::move(h));
    }
    return out;
  }

  std::vector<SpecializationFigures> specialization_figures() const {
    std::vector<SpecializationFigures> out;
    for (const trace::SpecializationStats &s : tracer_.stats())
      out.push_back({s.kernel, s.hits, s.misses, s.entries});
    return out;
  }

  const BinaryCache &binary_cache() const { return binary_cache_; }
  const Registry &registry() const { return registry_; }

private:
  static trace::TraceOptions trace_options(const DriverOptions &options) {
    trace::TraceOptions t;
    t.max_instructions = options.max_instructions;
    t.max_steps = options.max_steps;
    t.use_cache = options.use_cache;
    t.print_handler = options.print_handler;
    return t;
  }

  void log(const std::string &text) const {
    if (options_.info_log)
      options_.info_log(text);
  }

  /// The parsed registry source of an entry, loaded into the tracer once.
  const python::Module *registry_module(const RegistryEntry &entry) {
    auto it = registry_modules_.find(entry.source);
    if (it != registry_modules_.end())
      return it->second.get();
    std::string why;
    auto text = read_file(entry.source, why);
    if (!text) {
      Diagnostic d;
      d.error_class = ErrorClass::IO;
      d.loc = entry.loc;
      d.message = fmt::format("cannot read registry kernel source {}: {}", quote_for_message(entry.source, 256), why);
      d.id = "registry";
      diags_.report(std::move(d));
      return nullptr;
    }
    FileId file = sources_.add_buffer(entry.source, std::move(*text));
    registry_.note_source_read(entry.source);
    auto module = python::parse_module(sources_, file, diags_);
    if (!module)
      return nullptr;
    auto owned = std::make_unique<python::Module>(std::move(*module));
    if (!tracer_.load_registry_source(*owned))
      return nullptr;
    return registry_modules_.emplace(entry.source, std::move(owned)).first->second.get();
  }

  /// The BIR kernel of a trace, when the output carries BIR (`--emit=bir|bir-text|hlo|
  /// stablehlo`); the IR text and the statistics never read it, so those runs skip writing it.
  std::string compile_bir(const ir::Function &fn, std::span<const std::int64_t> grid = {}) const {
    switch (options_.emit) {
    case EmitKind::Bir:
    case EmitKind::BirText:
    case EmitKind::Hlo:
    case EmitKind::StableHlo:
      return bir::write_kernel(fn, target_.info->name, sources_, grid);
    case EmitKind::Manifest:
    case EmitKind::Ast:
    case EmitKind::Ir:
    case EmitKind::Stats:
      break;
    }
    return {};
  }

  void trace_external(const Call &call) {
    const trace::KernelTrace *t = tracer_.trace_call(call);
    if (!t)
      return;
    CompiledCall &c = calls_[call.index];
    c.func_name = call.external().kernel;
    c.kernel_name = call.external().kernel;
    // The specialization's BIR kernel, compiled once per specialization key.
    c.cache_key = cache_key_of(c.func_name + ":" + t->specialization_key);
    auto it = external_kernels_.find(c.cache_key);
    if (it == external_kernels_.end()) {
      CachedKernel k;
      k.binary = compile_bir(t->function, t->grid);
      k.input_names = t->function.input_names;
      k.output_names = t->function.output_names;
      k.trace = std::shared_ptr<const trace::KernelTrace>(t, [](const trace::KernelTrace *) {});
      it = external_kernels_.emplace(c.cache_key, std::move(k)).first;
    }
    c.kernel = &it->second;
    c.trace = it->second.trace;
  }

  void trace_internal(const Call &call) {
    const InternalCall &ic = call.internal();
    const RegistryEntry *entry = registry_.find(ic.internal);
    CompiledCall &c = calls_[call.index];
    c.func_name = ic.internal;
    c.kernel_name = ic.kernel_name;
    // Seed 000: key components, then the CPython-identical key.
    auto key_start = std::chrono::steady_clock::now();
    PyConstant components = internal_key_components(ic, *target_.info);
    c.cache_key = cache_key_of(key_components_string(components));
    key_time_ += std::chrono::steady_clock::now() - key_start;
    const CachedKernel *cached = options_.use_cache ? binary_cache_.get(c.cache_key) : nullptr;
    if (cached) {
      ++binary_cache_.cache_hits;
      log(fmt::format("Cache hit for {} (cache key: {}...)", c.func_name, c.cache_key.substr(0, 16)));
      binary_cache_.record_usage(c.cache_key);
    } else {
      ++binary_cache_.cache_misses;
      log(fmt::format("Cache miss for {} (cache key: {}...)", c.func_name, c.cache_key.substr(0, 16)));
      auto it = registry_modules_.find(entry->source);
      std::shared_ptr<trace::KernelTrace> t = tracer_.trace_internal(call, *entry, *it->second);
      if (!t)
        return;
      CachedKernel k;
      k.binary = compile_bir(t->function);
      k.input_names = t->function.input_names;
      k.output_names = t->function.output_names;
      k.trace = t;
      // --no-cache traces every call but keeps one entry per variant, so that the output and
      // the variant figures are the same as a cached run's (SPEC §1).
      if (const CachedKernel *existing = binary_cache_.get(c.cache_key)) {
        binary_cache_.record_usage(c.cache_key);
        cached = existing;
      } else {
        binary_cache_.store(c.cache_key, std::move(k), std::move(components));
        cached = binary_cache_.get(c.cache_key);
      }
    }
    c.kernel = cached;
    c.trace = cached->trace;
  }

  const DriverOptions &options_;
  SourceManager &sources_;
  DiagnosticEngine &diags_;
  const Manifest &manifest_;
  const ResolvedTarget &target_;
  trace::Tracer tracer_;
  Registry registry_;
  std::map<std::string, std::unique_ptr<python::Module>> registry_modules_;
  BinaryCache binary_cache_;
  std::map<std::string, CachedKernel> external_kernels_;
  std::vector<CompiledCall> calls_;
  std::chrono::steady_clock::duration key_time_{}; ///< computing binary-cache keys, for -vv
};

/// A text output: written into options.text_output as it is produced when the caller streams,
/// else collected and returned in DriverOutput::bytes. `write` returns false (reported) on failure.
template <class Write>
std::optional<DriverOutput> emit_text(const DriverOptions &options, std::vector<std::string> deps, Write write) {
  TextSink collected;
  if (!write(options.text_output ? *options.text_output : collected))
    return std::nullopt;
  return DriverOutput{std::move(collected.text), false, std::move(deps), options.text_output != nullptr};
}

} // namespace

std::optional<DriverOutput> run_trace(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags) {
  std::optional<Manifest> manifest;
  {
    // Stage: the description file read and checked (SPEC §2).
    StageTimer timer(options, "load");
    manifest = load(options, sources, diags);
  }
  if (!manifest)
    return std::nullopt;
  auto target = target_for(options, *manifest, diags);
  if (!target)
    return std::nullopt;
  if (options.emit == EmitKind::Manifest)
    return emit_text(options, files_read(*manifest, sources), [&](TextSink &sink) {
      write_manifest_json(sink, *manifest, sources);
      return true;
    });

  std::optional<std::vector<python::Module>> modules;
  {
    // Stage: every source parsed as Python 3, every external call's kernel found (SPEC §3).
    StageTimer timer(options, "parse");
    modules = parse_sources(*manifest, sources, diags);
    if (!modules || !resolve_kernels(*manifest, *modules, sources, diags))
      return std::nullopt;
  }
  if (options.emit == EmitKind::Ast)
    return DriverOutput{dump_sources(*modules, sources), false, files_read(*manifest, sources)};

  Pipeline pipeline(options, sources, diags, *manifest, *modules, *target);
  {
    // Stage: every call traced; specializations and internal kernel variants traced once.
    StageTimer timer(options, "trace");
    if (!pipeline.load_registry() || !pipeline.trace_calls())
      return std::nullopt;
  }
  std::vector<std::string> deps = files_read(*manifest, sources, &pipeline.registry());
  StageTimer timer(options, "emit");
  switch (options.emit) {
  case EmitKind::Manifest:
  case EmitKind::Ast:
    break;
  case EmitKind::Ir:
    return emit_text(options, std::move(deps), [&](TextSink &sink) {
      pipeline.write_ir(sink);
      return true;
    });
  case EmitKind::Bir:
    return DriverOutput{pipeline.bir_module(), true, std::move(deps)};
  case EmitKind::BirText: {
    std::string blob = pipeline.bir_module();
    std::string error;
    auto text = bir::module_to_text(blob, error);
    if (!text) {
      diags.internal_error("the BIR module nkicc wrote does not read back: " + error);
      return std::nullopt;
    }
    return DriverOutput{std::move(*text), false, std::move(deps)};
  }
  case EmitKind::Hlo:
  case EmitKind::StableHlo: {
    std::vector<hlo::HloCall> calls = pipeline.hlo_calls();
    hlo::HloFlavor flavor = options.hlo_flavor_torch_xla ? hlo::HloFlavor::TorchXla : hlo::HloFlavor::Jax;
    return emit_text(options, std::move(deps), [&](TextSink &sink) {
      std::string error;
      bool ok = options.emit == EmitKind::Hlo ? hlo::write_hlo_module(sink, manifest->name, calls, flavor, error)
                                              : hlo::write_stablehlo(sink, manifest->name, calls, flavor, error);
      // An alias that XLA's verifier would reject is the kernel's fault, not nkicc's.
      if (!ok)
        diags.error(manifest->calls.empty() ? SourceLoc{} : manifest->calls.front().loc, error, "hlo-alias");
      return ok;
    });
  }
  case EmitKind::Stats: {
    std::vector<SpecializationFigures> figures = pipeline.specialization_figures();
    std::string text = options.stats_json ? cache_statistics_json(pipeline.binary_cache(), figures)
                                          : cache_statistics_text(pipeline.binary_cache(), figures);
    return DriverOutput{std::move(text), false, std::move(deps)};
  }
  }
  diags.internal_error("unhandled --emit stage");
  return std::nullopt;
}

std::optional<DriverOutput> run_dis(const std::string &input, SourceManager &sources, DiagnosticEngine &diags) {
  std::string why;
  std::string shown = input == "-" ? "<stdin>" : input;
  auto blob = read_file(input, why);
  if (!blob) {
    diags.io_error(shown, "cannot read BIR module: " + why);
    return std::nullopt;
  }
  // Registered so that `-o` can never overwrite the input it disassembles.
  FileId file = sources.add_buffer(shown, std::move(*blob));
  std::string error;
  auto text = bir::module_to_text(sources.contents(file), error);
  if (!text) {
    Diagnostic d;
    d.path = shown;
    d.message = error;
    d.id = "bir";
    diags.report(std::move(d));
    return std::nullopt;
  }
  std::vector<std::string> deps;
  if (input != "-")
    deps.push_back(input);
  return DriverOutput{std::move(*text), false, std::move(deps)};
}

std::optional<DriverOutput> run_decode_config(const std::string &input, SourceManager &sources,
                                              DiagnosticEngine &diags) {
  // `@FILE` reads the base64 text from a file ("@-": standard input).
  std::string text = input;
  std::vector<std::string> deps;
  std::string shown = "<argument>";
  if (!input.empty() && input[0] == '@') {
    std::string path = input.substr(1);
    shown = path == "-" ? "<stdin>" : path;
    std::string why;
    auto content = read_file(path, why);
    if (!content) {
      diags.io_error(shown, "cannot read backend_config: " + why);
      return std::nullopt;
    }
    text = std::move(*content);
    if (path != "-")
      deps.push_back(path);
  }
  sources.add_buffer(shown, text);
  std::string error;
  auto decoded = hlo::decode_config(text, error);
  if (!decoded) {
    Diagnostic d;
    d.path = shown;
    d.message = error;
    d.id = "backend-config";
    diags.report(std::move(d));
    return std::nullopt;
  }
  return DriverOutput{std::move(*decoded), false, std::move(deps)};
}

std::optional<DriverOutput> run_key(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags) {
  auto manifest = load(options, sources, diags);
  if (!manifest)
    return std::nullopt;
  auto target = target_for(options, *manifest, diags);
  if (!target)
    return std::nullopt;
  std::string out;
  for (const Call &call : manifest->calls) {
    if (!out.empty())
      out += '\n';
    if (call.is_external()) {
      const ExternalCall &e = call.external();
      auto key = specialization_key(e, {}, target->is_fallback, diags);
      if (!key)
        continue;
      out += fmt::format("call {}: kernel {}\n  specialization key: {}\n", call.index, e.kernel, py_repr(*key));
    } else {
      const InternalCall &c = call.internal();
      std::string text = key_components_string(internal_key_components(c, *target->info));
      out += fmt::format("call {}: internal {}\n  components: {}\n  key: {}\n", call.index, c.internal, text,
                         cache_key_of(text));
    }
  }
  if (diags.has_errors())
    return std::nullopt;
  return DriverOutput{std::move(out), false, files_read(*manifest, sources)};
}

} // namespace nkicc
