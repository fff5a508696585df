#include "nkicc/driver/driver.h"

#include "nkicc/cache/cache_key.h"
#include "nkicc/cache/py_repr.h"
#include "nkicc/manifest/manifest.h"
#include "nkicc/ir/kernel_ir.h"
#include "nkicc/python/parser.h"
#include "nkicc/trace/tracer.h"
#include "nkicc/support/file_io.h"

#include <fmt/format.h>

namespace nkicc {

namespace {

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
bool resolve_kernels(const Manifest &manifest, const std::vector<python::Module> &modules,
                     const SourceManager &sources, DiagnosticEngine &diags) {
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
      std::string message = fmt::format("unknown kernel '{}': no source defines a top-level function of that name",
                                        e.kernel);
      std::string best = closest_match(e.kernel, defined);
      if (!best.empty())
        message += fmt::format("; did you mean '{}'?", best);
      diags.error(e.kernel_loc, std::move(message), "manifest");
    } else {
      diags.error(e.kernel_loc, fmt::format("kernel '{}' is defined in more than one source: '{}' and '{}'", e.kernel,
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

} // namespace

/// The files a run read, for depfiles: every registered buffer that came from disk.
std::vector<std::string> files_read(const Manifest &manifest, const SourceManager &sources) {
  std::vector<std::string> files;
  if (sources.name(manifest.file) != "<stdin>")
    files.emplace_back(sources.name(manifest.file));
  for (const KernelSource &s : manifest.sources)
    if (!s.path.empty())
      files.push_back(s.resolved_path);
  return files;
}

std::optional<DriverOutput> run_trace(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags) {
  auto manifest = load(options, sources, diags);
  if (!manifest)
    return std::nullopt;
  auto target = target_for(options, *manifest, diags);
  if (!target)
    return std::nullopt;
  // Stage: the description as nkicc understood it.
  if (options.emit == EmitKind::Manifest)
    return DriverOutput{manifest_to_json(*manifest, sources), false, files_read(*manifest, sources)};

  // Stage: every source parsed, and every external call's kernel found in one of them.
  auto modules = parse_sources(*manifest, sources, diags);
  if (!modules || !resolve_kernels(*manifest, *modules, sources, diags))
    return std::nullopt;
  if (options.emit == EmitKind::Ast)
    return DriverOutput{dump_sources(*modules, sources), false, files_read(*manifest, sources)};

  // Stage: every call traced (re-executing its kernel), specializations memoized.
  trace::TraceOptions trace_options;
  trace_options.max_instructions = options.max_instructions;
  trace_options.use_cache = options.use_cache;
  trace_options.print_handler = options.print_handler;
  trace::Tracer tracer(sources, *manifest, *modules, *target, trace_options, diags);
  if (!tracer.load_modules())
    return std::nullopt;
  std::vector<const trace::KernelTrace *> traces(manifest->calls.size(), nullptr);
  for (const Call &call : manifest->calls) {
    if (!call.is_external()) {
      diags.error(call.internal().internal_loc,
                  "internal kernel calls cannot be traced by this nkicc yet: the internal-kernel registry is not "
                  "implemented (use `nkicc key` for their cache keys)",
                  "unsupported");
      continue;
    }
    traces[call.index] = tracer.trace_call(call);
  }
  if (diags.has_errors())
    return std::nullopt;
  if (options.emit == EmitKind::Ir) {
    std::string out;
    for (const Call &call : manifest->calls) {
      const trace::KernelTrace &t = *traces[call.index];
      out += fmt::format("# call {}: {} {}\n", call.index, call.external().kernel, t.specialization_key);
      out += ir::print_function(t.function, sources);
    }
    return DriverOutput{std::move(out), false, files_read(*manifest, sources)};
  }

  diags.internal_error("unhandled --emit stage");
  return std::nullopt;
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
