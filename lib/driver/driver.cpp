// The nkicc pipeline, stage by stage (SPEC §1), over a description read whole; the streamed
// read is in streamed.cpp, `nkicc key` in key.cpp, the Pipeline they share in pipeline.h.
#include "driver/pipeline.h"

namespace nkicc {

namespace detail {

/// Whether a SourceManager name is a file on disk, not standard input or the command line.
bool names_a_file(std::string_view name) { return name != "<stdin>" && name != kCommandLineDescription; }

/// Reads the description file, or the one the command line built, and checks it (SPEC §2).
std::optional<Manifest> load(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags) {
  if (options.description_text) {
    // The kernel-file quick path: the description names the kernel file relative to the
    // current folder, and the module is named after the kernel file.
    FileId file = sources.add_buffer(std::string(kCommandLineDescription), *options.description_text);
    ManifestLoadOptions load_options;
    load_options.default_name = file_stem(options.input);
    return load_manifest(sources, file, load_options, diags);
  }
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

/// Whether a source binds `name` at module level with `from module import name` (a kernel
/// defined in another kernel file; the trace finds its definition once the module ran).
bool imports_name(const python::Module &m, std::string_view name) {
  for (const python::ImportBinding &b : m.imports)
    if (!b.name.empty() && b.name != "*" && b.bound == name)
      return true;
  return false;
}

/// Whether exactly one source defines `kernel` at top level, or none does and one imports it
/// from another kernel file (resolve_kernels() says which fault it is).
bool kernel_resolves(const std::string &kernel, const std::vector<python::Module> &modules) {
  std::size_t owners = 0;
  for (const python::Module &m : modules)
    if (m.function(kernel))
      ++owners;
  return owners == 1 || (owners == 0 && std::any_of(modules.begin(), modules.end(),
                                                    [&](const python::Module &m) { return imports_name(m, kernel); }));
}

/// Every external call must name a top-level function of exactly one source, or a function one
/// source imports from another kernel file.
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
    if (owners.empty() &&
        std::any_of(modules.begin(), modules.end(), [&](const python::Module &m) { return imports_name(m, e.kernel); }))
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
std::vector<std::string> files_read(const Manifest &manifest, const SourceManager &sources, const Registry *registry) {
  std::vector<std::string> files;
  if (names_a_file(sources.name(manifest.file)))
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

std::vector<std::string> files_traced(const Manifest &manifest, const SourceManager &sources,
                                      const Pipeline &pipeline) {
  std::vector<std::string> files = files_read(manifest, sources, &pipeline.registry());
  files.insert(files.end(), pipeline.imported_files().begin(), pipeline.imported_files().end());
  return files;
}

/// What `--emit` asks of the traced calls, once every call is traced.
std::optional<DriverOutput> emit_traced(const DriverOptions &options, DiagnosticEngine &diags, const Manifest &manifest,
                                        Pipeline &pipeline, PersistentCache *persistent,
                                        std::vector<std::string> deps) {
  if (persistent)
    persistent->flush();
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
  case EmitKind::Bir: {
    DriverOutput out{{}, true, std::move(deps)};
    out.blob = pipeline.bir_module();
    return out;
  }
  case EmitKind::BirText: {
    std::string blob = pipeline.bir_module().joined();
    std::string error;
    auto text = bir::module_to_text(blob, error, options.text);
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
      bool ok = options.emit == EmitKind::Hlo ? hlo::write_hlo_module(sink, manifest.name, calls, flavor, error)
                                              : hlo::write_stablehlo(sink, manifest.name, calls, flavor, error);
      // An alias that XLA's verifier would reject is the kernel's fault, not nkicc's.
      if (!ok)
        diags.error(pipeline.calls().empty() ? SourceLoc{} : pipeline.calls().front().loc, error, "hlo-alias");
      return ok;
    });
  }
  case EmitKind::Stats: {
    std::vector<SpecializationFigures> figures = pipeline.specialization_figures();
    // The seed's report stays the seed's; the persistent cache's figures follow in their own
    // section when a persistent cache was used.
    std::optional<PyConstant> section;
    if (persistent)
      section = persistent_cache_figures_value(persistent->figures());
    std::string text = options.stats_json
                           ? cache_statistics_json(pipeline.binary_cache(), figures, section ? &*section : nullptr)
                           : cache_statistics_text(pipeline.binary_cache(), figures);
    if (persistent && !options.stats_json)
      text += persistent_cache_figures_text(persistent->figures());
    return DriverOutput{std::move(text), false, std::move(deps)};
  }
  case EmitKind::Summary:
    return DriverOutput{pipeline.summary(), false, std::move(deps)};
  }
  diags.internal_error("unhandled --emit stage");
  return std::nullopt;
}

/// The persistent cache stands behind the per-run caches; --no-cache turns it off with them, and
/// the IR text is not in its entries. False (reported) when it cannot be opened.
bool open_persistent(const DriverOptions &options, std::unique_ptr<PersistentCache> &persistent,
                     DiagnosticEngine &diags) {
  if (!options.cache.enabled() || !options.use_cache || options.emit == EmitKind::Ir)
    return true;
  std::string why;
  persistent = PersistentCache::open(options.cache, why);
  if (!persistent) {
    diags.error({}, why, "remote-cache");
    return false;
  }
  return true;
}

} // namespace detail

using namespace detail;

std::optional<DriverOutput> run_trace(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags) {
  if (streamable(options))
    if (std::optional<std::optional<DriverOutput>> out = trace_streamed(options, sources, diags))
      return std::move(*out);
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

  // The persistent cache stands behind the per-run caches; --no-cache turns it off with them,
  // and the IR text is not in its entries.
  std::unique_ptr<PersistentCache> persistent;
  if (!open_persistent(options, persistent, diags))
    return std::nullopt;
  Pipeline pipeline(options, sources, diags, *manifest, *modules, *target, persistent.get());
  {
    // Stage: every call traced; specializations and internal kernel variants traced once.
    StageTimer timer(options, "trace");
    if (!pipeline.load_registry(Pipeline::internal_names(manifest->calls)) || !pipeline.trace_calls())
      return std::nullopt;
  }
  return emit_traced(options, diags, *manifest, pipeline, persistent.get(), files_traced(*manifest, sources, pipeline));
}

std::optional<DriverOutput> run_dis(const std::string &input, const TextOptions &text_options, SourceManager &sources,
                                    DiagnosticEngine &diags) {
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
  auto text = bir::module_to_text(sources.contents(file), error, text_options);
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

std::optional<DriverOutput> run_decode_config(const std::string &input, const TextOptions &text_options,
                                              SourceManager &sources, DiagnosticEngine &diags) {
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
  auto decoded = hlo::decode_config(text, error, text_options);
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

std::optional<DriverOutput> run_decode_hlo(const std::string &path, const TextOptions &text_options,
                                           SourceManager &sources, DiagnosticEngine &diags) {
  std::string shown = path == "-" ? "<stdin>" : path;
  std::string why;
  auto content = read_file(path, why);
  if (!content) {
    diags.io_error(shown, "cannot read HLO module: " + why);
    return std::nullopt;
  }
  FileId file = sources.add_buffer(shown, std::move(*content));
  std::string_view text = sources.contents(file);
  std::vector<hlo::CustomCallSite> sites = hlo::find_custom_calls(text);
  if (sites.empty()) {
    Diagnostic d;
    d.path = shown;
    d.message = "no custom-call found: expected an HLO module (custom-call instructions) or a StableHLO module "
                "(stablehlo.custom_call ops)";
    d.id = "backend-config";
    diags.report(std::move(d));
    return std::nullopt;
  }
  std::string out;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const hlo::CustomCallSite &site = sites[i];
    if (text_options.calls.index && *text_options.calls.index != i)
      continue;
    std::string header = fmt::format("# custom-call {}:", i);
    if (!site.name.empty())
      header += " " + escape_for_message(site.name, 256);
    header += " target=" + escape_for_message(site.target, 256);
    if (!hlo::is_nki_custom_call_target(site.target) || !site.has_config) {
      // Another backend's custom-call: named, so that the indices stay the module's, and skipped.
      if (text_options.calls.kernel)
        continue;
      out += out.empty() ? "" : "\n";
      out += header + (site.has_config ? " (not an NKI kernel call: skipped)\n" : " (no backend_config: skipped)\n");
      continue;
    }
    std::string error, func_name;
    auto decoded = hlo::decode_config(site.config, error, text_options, &func_name);
    if (!decoded) {
      diags.error({file, static_cast<std::uint32_t>(site.config_offset)},
                  fmt::format("the backend_config of custom-call {} does not decode: {}", i, error), "backend-config");
      continue;
    }
    if (!text_options.calls.accepts(i, func_name))
      continue;
    out += out.empty() ? "" : "\n";
    out += header + " func_name=" + escape_for_message(func_name, 256) + "\n" + *decoded;
  }
  if (diags.has_errors())
    return std::nullopt;
  std::vector<std::string> deps;
  if (path != "-")
    deps.push_back(path);
  return DriverOutput{std::move(out), false, std::move(deps)};
}

} // namespace nkicc
