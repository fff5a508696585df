// The pieces of the nkicc pipeline that its readers share (internal to lib/driver): the
// Pipeline that traces calls one at a time and builds the outputs, and the steps before and after
// it. driver.cpp reads a description whole; streamed.cpp reads it as a stream (issue 16);
// key.cpp writes `nkicc key`'s output from either.
#pragma once

#include "nkicc/driver/driver.h"

#include "nkicc/bir/bir.h"
#include "nkicc/driver/summary.h"
#include "nkicc/cache/binary_cache.h"
#include "nkicc/cache/cache_key.h"
#include "nkicc/cache/persistent_cache.h"
#include "nkicc/cache/persistent_key.h"
#include "nkicc/cache/py_repr.h"
#include "nkicc/support/json_writer.h"
#include "nkicc/support/sha256.h"
#include "nkicc/manifest/description_stream.h"
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
#include <ctime>
#include <map>
#include <memory>

#include <sys/stat.h>

namespace nkicc::detail {

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
           const std::vector<python::Module> &modules, const ResolvedTarget &target,
           PersistentCache *persistent = nullptr)
      : options_(options), sources_(sources), diags_(diags), manifest_(manifest), target_(target),
        persistent_(persistent), tracer_(sources, manifest, modules, target, trace_options(options, this), diags),
        calls_view_(&manifest.calls), keep_calls_(output_needs_calls(options.emit)) {}

  /// Whether an output shows each call (the IR, BIR, HLO, the summary), so that a streamed
  /// description's calls must be kept; the statistics need only the caches.
  static bool output_needs_calls(EmitKind emit) { return emit != EmitKind::Stats; }

  /// The calls of a streamed description (stream_calls()) come one at a time: those the output
  /// shows are kept here, in place of the description's.
  void streaming() { calls_view_ = &kept_; }

  /// The internal kernels a description's calls name (each where a call names it, for the error).
  static std::vector<std::pair<std::string, SourceLoc>> internal_names(const std::vector<Call> &calls) {
    std::vector<std::pair<std::string, SourceLoc>> names;
    for (const Call &call : calls)
      if (!call.is_external())
        names.emplace_back(call.internal().internal, call.internal().internal_loc);
    return names;
  }

  /// Reads the internal-kernel registry when any call needs it, and resolves every internal
  /// call's func_name in it (SPEC §7).
  /// A one-pass read calls it again for each internal kernel it meets first: the registry is
  /// read once.
  bool load_registry(const std::vector<std::pair<std::string, SourceLoc>> &internals) {
    if (internals.empty())
      return true;
    if (!registry_loaded_)
      registry_files_begin_ = static_cast<FileId>(sources_.file_count() + 1);
    struct Mark {
      Pipeline &p;
      ~Mark() { p.registry_files_end_ = static_cast<FileId>(p.sources_.file_count() + 1); }
    } mark{*this};
    if (!registry_loaded_ && !registry_.load(options_.kernel_path, sources_, diags_))
      return false;
    registry_loaded_ = true;
    bool ok = true;
    for (const auto &[name, loc] : internals) {
      const RegistryEntry *entry = registry_.find(name);
      if (!entry) {
        std::string message =
            fmt::format("unknown internal kernel {}: the registry has no such func_name", quote_for_message(name));
        std::string best = closest_match(name, registry_.names());
        if (!best.empty())
          message += fmt::format("; did you mean '{}'?", best);
        Diagnostic &d = diags_.error(loc, std::move(message), "registry");
        // A kernel of the project's own registry is most often missing because its folder was
        // not given: say which registries were read.
        std::vector<std::string> read;
        for (const std::string &f : registry_.files())
          read.push_back(quote_for_message(f, 256));
        Diagnostic note;
        note.severity = Severity::Note;
        note.message =
            fmt::format("the registries read: {}; -I DIR adds the registry.json of a folder", fmt::join(read, ", "));
        d.notes.push_back(std::move(note));
        ok = false;
        continue;
      }
      if (!registry_module(*entry))
        ok = false;
    }
    return ok;
  }
  /// Whether the registry was read (load_registry() can fail after, on a kernel it lacks).
  bool registry_read() const { return registry_loaded_; }

  /// Traces every call in order: external calls through their specialization caches,
  /// internal calls through the per-run binary cache (seed 000 codegenInternalNativeNkiKernel).
  /// Runs every source's module-level code (imports read here are files external calls'
  /// keys depend on).
  bool load_modules() {
    module_files_begin_ = static_cast<FileId>(sources_.file_count() + 1);
    bool ok = tracer_.load_modules();
    module_files_end_ = static_cast<FileId>(sources_.file_count() + 1);
    return ok;
  }

  bool trace_calls() {
    if (!load_modules())
      return false;
    for (const Call &call : manifest_.calls)
      trace_call(call);
    return finish_tracing();
  }

  /// Traces one call (the next in order), through the caches.
  void trace_call(const Call &call) {
    if (keep_calls_ && calls_view_ == &kept_)
      kept_.push_back(call);
    if (call.is_external())
      trace_external(call);
    else
      trace_internal(call);
  }

  /// After the last call: the cache figures for -vv; false when any trace failed.
  bool finish_tracing() {
    if (options_.stage_timer && binary_cache_.cache_hits + binary_cache_.cache_misses)
      options_.stage_timer(fmt::format("binary cache keys ({} computed)", keys_timed_),
                           std::chrono::duration<double, std::milli>(key_time_).count());
    if (options_.stage_timer && bir_time_.count())
      options_.stage_timer("BIR kernels", std::chrono::duration<double, std::milli>(bir_time_).count());
    if (options_.debug_log && replayed_hits_)
      options_.debug_log(fmt::format("{} calls took the per-run cache hit of an earlier call with the same bytes (its "
                                     "key not computed again)",
                                     replayed_hits_));
    if (!key_seconds_.empty() && options_.cache.log) {
      // CPU time of this thread, not wall time: the figures a benchmark compares (one hit
      // against one key) must not depend on what else the machine runs.
      auto median_us = [](std::vector<double> v) {
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
        return v[v.size() / 2] * 1e6;
      };
      double keys = 0, lookups = 0;
      for (double k : key_seconds_)
        keys += k;
      for (double l : lookup_seconds_)
        lookups += l;
      options_.cache.log(CacheLogLevel::Debug,
                         fmt::format("persistent cache cpu time: {} keys {:.1f} ms (median {:.1f} us), {} lookups "
                                     "{:.1f} ms (median {:.1f} us)",
                                     key_seconds_.size(), keys * 1e3, median_us(key_seconds_), lookup_seconds_.size(),
                                     lookups * 1e3, median_us(lookup_seconds_)));
    }
    return !diags_.has_errors();
  }

  /// The persistent key of a call (issue 14), once the registry and modules are loaded;
  /// nullopt (reported) when the call's specialization key cannot be formed.
  std::optional<PersistentKey> persistent_key(const Call &call) {
    if (call.is_external()) {
      const ExternalCall &e = call.external();
      auto key = specialization_key(e, {}, target_.is_fallback, diags_);
      if (!key)
        return std::nullopt;
      return external_persistent_key(e.kernel, py_repr(*key), key_context(), external_files());
    }
    const InternalCall &ic = call.internal();
    const RegistryEntry *entry = registry_.find(ic.internal);
    if (!entry)
      return std::nullopt;
    std::string per_run = cache_key_of(internal_key_string(ic, *target_.info));
    return internal_persistent_key(ic, per_run, *entry, key_context(), internal_files(*entry));
  }

  /// The calls the output shows, in order.
  const std::vector<Call> &calls() const { return *calls_view_; }

  void write_ir(TextSink &out) const {
    for (const Call &call : calls()) {
      const CompiledCall &c = calls_[call.index];
      if (!options_.text.calls.accepts(call.index, c.func_name))
        continue;
      // External calls show their specialization key, internal calls their binary-cache key.
      if (call.is_external())
        out.text += fmt::format("# call {}: {} {}\n", call.index, c.func_name, c.trace->specialization_key);
      else
        out.text += fmt::format("# call {}: internal {} key {}\n", call.index, c.func_name, c.cache_key);
      ir::print_function(out, c.trace->function, sources_, options_.text);
      out.flush_if_large();
    }
  }

  /// The BIR module of the run (SPEC §6): unique kernels stored once, one NKIKLIRKernel
  /// instruction per call in call order.
  ByteSequence bir_module() const {
    bir::ModuleInfo info;
    info.name = manifest_.name;
    info.nkicc_version = NKICC_VERSION_STRING;
    info.target = std::string(target_.info->name);
    info.nki_frontend = options_.nki_frontend;
    std::vector<std::pair<std::string_view, OwnedBytes>> kernels;
    std::map<std::string, std::uint32_t> index;
    std::vector<bir::ModuleCall> instructions;
    for (const Call &call : calls()) {
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
    return bir::write_module_blob(info, kernels, instructions);
  }

  /// The HLO view of every call (SPEC §9): what the custom-calls carry.
  std::vector<hlo::HloCall> hlo_calls() const {
    std::vector<hlo::HloCall> out;
    for (const Call &call : calls()) {
      const CompiledCall &c = calls_[call.index];
      hlo::HloCall h;
      h.func_name = c.func_name;
      h.trace = c.trace.get();
      h.bir_blob = c.kernel->binary.bytes();
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

  /// `--emit=summary`: the figures of every call the filter lets through; a call whose kernel
  /// an earlier shown call already uses refers to it.
  std::string summary() const {
    std::vector<CallSummary> out;
    std::map<const ir::Function *, std::size_t> first_call;
    for (const Call &call : calls()) {
      const CompiledCall &c = calls_[call.index];
      if (!options_.text.calls.accepts(call.index, c.func_name))
        continue;
      CallSummary s;
      s.index = call.index;
      s.external = call.is_external();
      s.func_name = c.func_name;
      if (call.is_external()) {
        s.grid = call.external().grid;
        s.nc = call.external().nc;
      }
      s.function = &c.trace->function;
      auto [it, fresh] = first_call.emplace(s.function, call.index);
      if (fresh)
        s.figures = summarize_kernel(*s.function, *target_.info);
      else
        s.same_as = it->second;
      out.push_back(std::move(s));
    }
    return options_.stats_json ? summary_json(out, sources_, options_.text)
                               : summary_text(out, sources_, options_.text);
  }

  std::vector<SpecializationFigures> specialization_figures() const {
    std::vector<SpecializationFigures> out;
    for (const trace::SpecializationStats &s : tracer_.stats())
      out.push_back({s.kernel, s.hits, s.misses, s.entries});
    return out;
  }

  const BinaryCache &binary_cache() const { return binary_cache_; }
  const std::vector<std::string> &imported_files() const { return tracer_.imported_files(); }
  const Registry &registry() const { return registry_; }

private:
  static trace::TraceOptions trace_options(const DriverOptions &options, Pipeline *self) {
    trace::TraceOptions t;
    t.max_instructions = options.max_instructions;
    t.max_steps = options.max_steps;
    t.max_trace_time = options.max_trace_time;
    t.use_cache = options.use_cache;
    t.print_handler = options.print_handler;
    t.shared_hbm_guard = options.shared_hbm_guard;
    if (self->persistent_)
      t.find_specialization = [self](const Call &call, const std::string &key) {
        return self->find_external(call, key);
      };
    return t;
  }

  static double cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }

  void note_persistent_times(double key, double lookup) {
    key_seconds_.push_back(key);
    lookup_seconds_.push_back(lookup);
  }

  KeyContext key_context() const {
    return {std::string(target_.info->name), target_.is_fallback, options_.max_instructions};
  }

  /// The SHA-256 of a registered file's contents, computed once per run.
  const std::string &digest_of(FileId file) {
    auto it = digests_.find(file);
    if (it == digests_.end())
      it = digests_.emplace(file, sha256_hex(sources_.contents(file))).first;
    return it->second;
  }

  /// A file's name in a key: relative to the description's folder or to the registry folder it
  /// was found in, so that a checkout or an install elsewhere keys the same.
  std::string key_file_name(std::string_view path) const {
    auto under = [&](std::string_view dir) -> std::optional<std::string_view> {
      if (dir.empty() || path.size() <= dir.size() + 1 || !path.starts_with(dir) || path[dir.size()] != '/')
        return std::nullopt;
      return path.substr(dir.size() + 1);
    };
    if (auto rel = under(parent_dir(sources_.name(manifest_.file))))
      return std::string(*rel);
    for (const std::string &folder : options_.kernel_path)
      if (auto rel = under(folder))
        return "registry:" + std::string(*rel);
    return std::string(path);
  }

  KeyFile key_file(FileId file) {
    std::string path(sources_.name(file));
    return {key_file_name(path), path, digest_of(file)};
  }

  /// The files every external call's trace depends on: the description's sources (all of them:
  /// every source's module-level code runs before any call) and the files their module-level
  /// code read (imports). Files read by a trace itself are caught at store time.
  const std::vector<KeyFile> &external_files() {
    if (external_files_)
      return *external_files_;
    std::vector<KeyFile> files;
    for (const KernelSource &s : manifest_.sources) {
      if (s.path.empty())
        files.push_back({s.name, {}, digest_of(s.file)});
      else
        files.push_back({s.name, s.resolved_path, digest_of(s.file)});
    }
    for (FileId f = module_files_begin_; f < module_files_end_; ++f)
      files.push_back(key_file(f));
    return *(external_files_ = std::move(files));
  }

  /// The files an internal call's trace depends on: its registry entry's files (the source, the
  /// modules it lists, its package) and any other file read while the registry was loaded that
  /// is neither a registry.json nor another entry's file (the sources' imports).
  std::vector<KeyFile> internal_files(const RegistryEntry &entry) {
    std::vector<KeyFile> files;
    auto listed = [](const std::vector<std::string> &list, std::string_view name) {
      return std::find(list.begin(), list.end(), name) != list.end();
    };
    for (FileId f = registry_files_begin_; f < registry_files_end_; ++f) {
      std::string_view name = sources_.name(f);
      if (listed(entry.files, name) || (!listed(registry_.files(), name) && !listed(registry_.sources_read(), name)))
        files.push_back(key_file(f));
    }
    return files;
  }

  /// The tracer's hook on a specialization miss: the persistent cache's entry, if any.
  std::unique_ptr<trace::KernelTrace> find_external(const Call &call, const std::string &key_text) {
    const ExternalCall &e = call.external();
    double key_start = cpu_seconds();
    PersistentKey key = external_persistent_key(e.kernel, key_text, key_context(), external_files());
    double lookup_start = cpu_seconds();
    std::string run_key = cache_key_of(e.kernel + ":" + key_text);
    std::optional<CacheEntry> entry = persistent_->find(key);
    note_persistent_times(lookup_start - key_start, cpu_seconds() - lookup_start);
    if (!entry || entry->internal) {
      note_persistent_miss(key);
      pending_stores_[run_key] = {std::move(key), sources_.file_count()};
      return nullptr;
    }
    log("Persistent cache hit for {} (key: {}...){}", e.kernel, key.key.substr(0, 16),
        persistent_->last_hit_remote() ? " from the remote cache" : "");
    persistent_bir_[run_key] = std::move(entry->bir);
    return std::make_unique<trace::KernelTrace>(std::move(entry->trace));
  }

  void note_persistent_miss(const PersistentKey &key) {
    if (options_.explain_misses)
      log("Persistent cache miss for {} (key: {}...): {}", key.kernel, key.key.substr(0, 16),
          persistent_->explain_miss(key));
  }

  /// What a hit needs of a trace: everything but the IR instructions and tensors.
  static trace::KernelTrace summary_of(const trace::KernelTrace &t) {
    trace::KernelTrace s;
    s.function.name = t.function.name;
    s.function.input_names = t.function.input_names;
    s.function.output_names = t.function.output_names;
    s.function.matmul_mac_count = t.function.matmul_mac_count;
    s.function.has_collectives = t.function.has_collectives;
    s.returns = t.returns;
    s.result_is_sequence = t.result_is_sequence;
    s.aliases = t.aliases;
    s.constant_values = t.constant_values;
    s.grid = t.grid;
    s.platform_target_is_fallback = t.platform_target_is_fallback;
    s.specialization_key = t.specialization_key;
    return s;
  }

  /// Stores a fresh trace, unless it read a file that its key, formed before the trace, could
  /// not hold (an import inside a kernel body): such an entry could be reused wrongly.
  void store_persistent(const PersistentKey &key, std::size_t files_at_lookup, bool internal, const std::string &kernel,
                        const trace::KernelTrace &t, const OwnedBytes &bir) {
    if (sources_.file_count() != files_at_lookup) {
      log("Persistent cache: {} not stored: its trace read files its key does not name", kernel);
      return;
    }
    if (t.private_hbm_output) {
      log("Persistent cache: {} not stored: it returns a private-HBM tensor, which only `nkicc simulate` "
          "accepts",
          kernel);
      return;
    }
    CacheEntry entry;
    entry.internal = internal;
    entry.kernel = kernel;
    entry.bir = bir;
    entry.trace = summary_of(t);
    persistent_->store(key, std::move(entry));
  }

  /// An info line, formatted only when someone reads the info log (a cache hit logs one).
  template <class... Args> void log(fmt::format_string<Args...> format, Args &&...args) const {
    if (options_.info_log)
      options_.info_log(fmt::format(format, std::forward<Args>(args)...));
  }

  /// The parsed registry source of an entry, loaded into the tracer once. The entry's other
  /// files (the modules it imports, its package) are read too: each is a dependency of the run,
  /// and the tracer's loader resolves the source's imports among them.
  const python::Module *registry_module(const RegistryEntry &entry) {
    auto it = registry_modules_.find(entry.source);
    if (it != registry_modules_.end())
      return it->second;
    std::vector<FileId> texts;
    for (const std::string &path : entry.files) {
      // A file of several entries (conv.py's transpose.py is tiled_dve_transpose_10's source)
      // is read once, and is one module.
      if (auto known = registry_files_.find(path); known != registry_files_.end()) {
        texts.push_back(known->second);
        continue;
      }
      std::string why;
      auto text = read_file(path, why);
      if (!text) {
        Diagnostic d;
        d.error_class = ErrorClass::IO;
        d.loc = entry.loc;
        d.message = fmt::format("cannot read registry kernel {} {}: {}", path == entry.source ? "source" : "file",
                                quote_for_message(path, 256), why);
        d.id = "registry";
        diags_.report(std::move(d));
        return nullptr;
      }
      FileId file = sources_.add_buffer(path, std::move(*text));
      registry_files_.emplace(path, file);
      registry_.note_source_read(path);
      texts.push_back(file);
    }
    // A failed entry is remembered too: its errors are reported once, not per call.
    const python::Module *main = tracer_.load_registry_entry(entry, texts);
    registry_modules_.emplace(entry.source, main);
    return main;
  }

  /// The BIR kernel of a trace, when the output carries BIR (`--emit=bir|bir-text|hlo|
  /// stablehlo`); the IR text and the statistics never read it, so those runs skip writing it.
  OwnedBytes compile_bir(const ir::Function &fn, std::span<const std::int64_t> grid = {}) {
    // Timed for -vv (the share of a run that writing BIR takes, from one run).
    auto write = [&] {
      if (!options_.stage_timer)
        return bir::write_kernel_blob(fn, target_.info->name, sources_, grid);
      auto start = std::chrono::steady_clock::now();
      OwnedBytes blob = bir::write_kernel_blob(fn, target_.info->name, sources_, grid);
      bir_time_ += std::chrono::steady_clock::now() - start;
      return blob;
    };
    // A persistent entry holds the BIR kernel whatever this run emits.
    if (persistent_)
      return write();
    switch (options_.emit) {
    case EmitKind::Bir:
    case EmitKind::BirText:
    case EmitKind::Hlo:
    case EmitKind::StableHlo:
      return write();
    case EmitKind::Manifest:
    case EmitKind::Ast:
    case EmitKind::Ir:
    case EmitKind::Stats:
    case EmitKind::Summary:
      break;
    }
    return {};
  }

  /// Where the call being traced records what it compiled to.
  CompiledCall &slot() {
    if (!keep_calls_) {
      // Reused: its strings keep their capacity from call to call.
      current_.trace.reset();
      current_.kernel = nullptr;
      return current_;
    }
    return calls_.emplace_back();
  }

  /// A call whose bytes repeat those of a call that was a per-run cache hit is the same hit: it
  /// takes that call's key and kernel without computing the key again (a description of a
  /// hundred thousand calls over a hundred variants spent most of its time on keys). Recorded
  /// only after a hit, whose outcome depends on the call's bytes and on entries that stay.
  struct RepeatedHit {
    std::string cache_key;
    const CachedKernel *kernel = nullptr;
    std::shared_ptr<const trace::KernelTrace> trace;
  };
  const RepeatedHit *repeated_hit(const Call &call) const {
    if (!options_.use_cache || call.text >= repeated_hits_.size() || !repeated_hits_[call.text].kernel)
      return nullptr;
    return &repeated_hits_[call.text];
  }
  void remember_hit(const Call &call, const CompiledCall &c) {
    if (!options_.use_cache || call.text == Call::kNoText)
      return;
    if (call.text >= repeated_hits_.size())
      repeated_hits_.resize(call.text + 1);
    repeated_hits_[call.text] = RepeatedHit{c.cache_key, c.kernel, c.trace};
  }
  /// The compiled call of a repeated hit, counted as trace_external()'s or trace_internal()'s hit
  /// would be.
  void replay_hit(const Call &call, const RepeatedHit &r, std::string_view func_name, std::string_view kernel_name) {
    ++replayed_hits_;
    CompiledCall &c = slot();
    c.func_name = func_name;
    c.kernel_name = kernel_name;
    c.cache_key = r.cache_key;
    c.kernel = r.kernel;
    c.trace = r.trace;
    if (call.is_external())
      tracer_.count_hit(c.func_name);
    else
      count_internal_hit(c);
  }
  /// The seed's figures and -v line for an internal call that is a per-run cache hit.
  void count_internal_hit(const CompiledCall &c) {
    ++binary_cache_.cache_hits;
    log("Cache hit for {} (cache key: {}...)", c.func_name, c.cache_key.substr(0, 16));
    binary_cache_.record_usage(c.cache_key);
  }

  void trace_external(const Call &call) {
    if (const RepeatedHit *r = repeated_hit(call))
      return replay_hit(call, *r, call.external().kernel, call.external().kernel);
    CompiledCall &c = slot();
    bool run_hit = false;
    const trace::KernelTrace *t = tracer_.trace_call(call, &run_hit);
    if (!t)
      return;
    c.func_name = call.external().kernel;
    c.kernel_name = call.external().kernel;
    // The specialization's BIR kernel, compiled once per specialization key.
    c.cache_key = cache_key_of(c.func_name + ":" + t->specialization_key);
    auto it = external_kernels_.find(c.cache_key);
    run_hit = run_hit && it != external_kernels_.end();
    if (it == external_kernels_.end()) {
      CachedKernel k;
      auto hit = persistent_bir_.find(c.cache_key);
      if (hit != persistent_bir_.end()) {
        k.binary = std::move(hit->second);
        persistent_bir_.erase(hit);
      } else {
        k.binary = compile_bir(t->function, t->grid);
        auto pending = pending_stores_.find(c.cache_key);
        if (pending != pending_stores_.end()) {
          store_persistent(pending->second.first, pending->second.second, false, c.func_name, *t, k.binary);
          pending_stores_.erase(pending);
        }
      }
      k.input_names = t->function.input_names;
      k.output_names = t->function.output_names;
      k.trace = std::shared_ptr<const trace::KernelTrace>(t, [](const trace::KernelTrace *) {});
      it = external_kernels_.emplace(c.cache_key, std::move(k)).first;
    }
    c.kernel = &it->second;
    c.trace = it->second.trace;
    if (run_hit)
      remember_hit(call, c);
  }

  /// A per-run cache hit hands the call a kernel traced for an earlier call with the same key,
  /// which does not hold where the results live (SPEC §7): the kernel's result tensors must be in
  /// the memory this call asks for (`"memory"`, or shared_hbm for an output parameter), else the
  /// reuse would be wrong. False (reported at the result) when they are not.
  bool same_result_memory(const Call &call, const RegistryEntry &entry, const trace::KernelTrace &traced,
                          const std::string &key) {
    const InternalCall &ic = call.internal();
    for (std::size_t j = 0; j < ic.results.size() && j < traced.function.output_names.size(); ++j) {
      std::string want = ic.results[j].memory;
      if (want.empty())
        for (const auto &[name, a] : entry.all_args())
          if (a->kind == RegistryArg::Kind::Result && a->index == j)
            want = "shared_hbm";
      if (want.empty())
        continue;
      std::string_view have;
      for (const ir::Tensor &t : traced.function.tensors)
        if (t.role == ir::TensorRole::Output && t.name == traced.function.output_names[j])
          have = ir::memory_name(t.memory);
      if (have.empty() || have == want)
        continue;
      Diagnostic d;
      d.loc = ic.results[j].loc;
      auto first = first_call_of_key_.find(key);
      std::size_t first_index = first == first_call_of_key_.end() ? call.index : first->second.first;
      d.message =
          fmt::format("result {} of call {} is in {}, but call {} traced this kernel variant with it in {}; the "
                      "per-run cache key does not hold where results live, so these calls cannot share it",
                      j, call.index, want, first_index, have);
      d.id = "registry";
      if (first != first_call_of_key_.end()) {
        Diagnostic n;
        n.severity = Severity::Note;
        n.loc = first->second.second;
        n.message = fmt::format("call {} has the same cache key", first_index);
        d.notes.push_back(std::move(n));
      }
      diags_.report(std::move(d));
      return false;
    }
    return true;
  }

  void trace_internal(const Call &call) {
    const InternalCall &ic = call.internal();
    if (const RepeatedHit *r = repeated_hit(call))
      return replay_hit(call, *r, ic.internal, ic.kernel_name);
    const RegistryEntry *entry = registry_.find(ic.internal);
    CompiledCall &c = slot();
    c.func_name = ic.internal;
    c.kernel_name = ic.kernel_name;
    // Seed 000: key components, then the CPython-identical key (timed only for -vv: two clock
    // reads are a tenth of a cache hit).
    if (options_.stage_timer) {
      auto key_start = std::chrono::steady_clock::now();
      c.cache_key = cache_key_of(internal_key_string(ic, *target_.info));
      key_time_ += std::chrono::steady_clock::now() - key_start;
      ++keys_timed_;
    } else {
      c.cache_key = cache_key_of(internal_key_string(ic, *target_.info));
    }
    const CachedKernel *cached = options_.use_cache ? binary_cache_.get(c.cache_key) : nullptr;
    if (cached && !same_result_memory(call, *entry, *cached->trace, c.cache_key))
      return;
    bool run_hit = cached != nullptr;
    if (run_hit) {
      count_internal_hit(c);
    } else {
      ++binary_cache_.cache_misses;
      log("Cache miss for {} (cache key: {}...)", c.func_name, c.cache_key.substr(0, 16));
      std::optional<PersistentKey> pkey;
      std::optional<CacheEntry> hit;
      std::size_t files_at_lookup = sources_.file_count();
      if (persistent_) {
        double persistent_key_start = cpu_seconds();
        pkey = internal_persistent_key(ic, c.cache_key, *entry, key_context(), internal_files(*entry));
        double lookup_start = cpu_seconds();
        hit = persistent_->find(*pkey);
        note_persistent_times(lookup_start - persistent_key_start, cpu_seconds() - lookup_start);
        if (hit && !hit->internal)
          hit.reset();
        if (hit)
          log("Persistent cache hit for {} (key: {}...){}", c.func_name, pkey->key.substr(0, 16),
              persistent_->last_hit_remote() ? " from the remote cache" : "");
        else
          note_persistent_miss(*pkey);
      }
      CachedKernel k;
      if (hit) {
        k.binary = std::move(hit->bir);
        k.input_names = hit->trace.function.input_names;
        k.output_names = hit->trace.function.output_names;
        k.trace = std::make_shared<trace::KernelTrace>(std::move(hit->trace));
      } else {
        auto it = registry_modules_.find(entry->source);
        std::shared_ptr<trace::KernelTrace> t = tracer_.trace_internal(call, *entry, *it->second);
        if (!t)
          return;
        k.binary = compile_bir(t->function);
        k.input_names = t->function.input_names;
        k.output_names = t->function.output_names;
        k.trace = t;
        if (pkey)
          store_persistent(*pkey, files_at_lookup, true, c.func_name, *t, k.binary);
      }
      // --no-cache traces every call but keeps one entry per variant, so that the output and
      // the variant figures are the same as a cached run's (SPEC §1).
      if (const CachedKernel *existing = binary_cache_.get(c.cache_key)) {
        if (!same_result_memory(call, *entry, *existing->trace, c.cache_key))
          return;
        binary_cache_.record_usage(c.cache_key);
        cached = existing;
      } else {
        binary_cache_.store(c.cache_key, std::move(k), internal_key_components(ic, *target_.info));
        cached = binary_cache_.get(c.cache_key);
        first_call_of_key_.emplace(c.cache_key, std::make_pair(call.index, call.loc));
      }
    }
    c.kernel = cached;
    c.trace = cached->trace;
    if (run_hit)
      remember_hit(call, c);
  }

  const DriverOptions &options_;
  SourceManager &sources_;
  DiagnosticEngine &diags_;
  const Manifest &manifest_;
  const ResolvedTarget &target_;
  PersistentCache *persistent_;
  trace::Tracer tracer_;
  /// Files registered while the registry, then the modules, were loaded: [begin, end).
  FileId registry_files_begin_ = 0, registry_files_end_ = 0;
  FileId module_files_begin_ = 0, module_files_end_ = 0;
  std::map<FileId, std::string> digests_;
  std::optional<std::vector<KeyFile>> external_files_;
  /// External calls the persistent cache missed, by per-run key: their persistent key and the
  /// file count at the lookup, until their BIR is compiled and stored.
  std::map<std::string, std::pair<PersistentKey, std::size_t>> pending_stores_;
  /// The BIR kernels of persistent hits of external calls, by per-run key, until used.
  std::map<std::string, OwnedBytes> persistent_bir_;
  /// Thread CPU seconds of each persistent key and lookup, for the -vv figures.
  std::vector<double> key_seconds_, lookup_seconds_;
  Registry registry_;
  bool registry_loaded_ = false;
  std::map<std::string, const python::Module *> registry_modules_; ///< owned by the tracer's loader
  std::map<std::string, FileId> registry_files_;                   ///< every registry kernel file read, by path
  /// Per-run key -> the call that traced it, and where it is.
  std::map<std::string, std::pair<std::size_t, SourceLoc>> first_call_of_key_;
  BinaryCache binary_cache_;
  std::map<std::string, CachedKernel> external_kernels_;
  std::vector<RepeatedHit> repeated_hits_; ///< by Call::text; kernel null where none is known
  std::size_t replayed_hits_ = 0;          ///< calls that took one, for -vv
  /// What each call the output shows compiled to, by call index (keep_calls_); else the one
  /// call being traced.
  std::vector<CompiledCall> calls_;
  CompiledCall current_;
  const std::vector<Call> *calls_view_; ///< the description's calls, or kept_
  std::vector<Call> kept_;              ///< a streamed description's calls the output shows
  bool keep_calls_;
  std::chrono::steady_clock::duration key_time_{}; ///< computing binary-cache keys, for -vv
  std::size_t keys_timed_ = 0;                     ///< how many key_time_ covers
  std::chrono::steady_clock::duration bir_time_{}; ///< writing BIR kernels (within the trace stage), for -vv
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

// ---- driver.cpp: the steps of a run around the Pipeline --------------------------------------

/// Reads the description file, or the one the command line built, whole and checks it (SPEC §2).
std::optional<Manifest> load(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags);
/// Resolves the target from the flag, the file, the environment and DMI (SPEC §5).
std::optional<ResolvedTarget> target_for(const DriverOptions &options, const Manifest &manifest,
                                         DiagnosticEngine &diags);
/// Parses every kernel source as Python 3 (SPEC §3).
std::optional<std::vector<python::Module>> parse_sources(const Manifest &manifest, const SourceManager &sources,
                                                         DiagnosticEngine &diags);
/// Whether exactly one source defines `kernel` at top level, or none does and one imports it.
bool kernel_resolves(const std::string &kernel, const std::vector<python::Module> &modules);
/// Every external call must name a kernel that resolves; each one that does not is reported.
bool resolve_kernels(const Manifest &manifest, const std::vector<python::Module> &modules, const SourceManager &sources,
                     DiagnosticEngine &diags);
/// The files a run read, for depfiles: the description, its sources, registry files.
std::vector<std::string> files_read(const Manifest &manifest, const SourceManager &sources,
                                    const Registry *registry = nullptr);
/// The same for a run that traced: also the kernel files that imports between sources read.
std::vector<std::string> files_traced(const Manifest &manifest, const SourceManager &sources, const Pipeline &pipeline);
/// What `--emit` asks of the traced calls, once every call is traced.
std::optional<DriverOutput> emit_traced(const DriverOptions &options, DiagnosticEngine &diags, const Manifest &manifest,
                                        Pipeline &pipeline, PersistentCache *persistent, std::vector<std::string> deps);
/// Opens the persistent cache when the run uses one; false (reported) when it cannot be opened.
bool open_persistent(const DriverOptions &options, std::unique_ptr<PersistentCache> &persistent,
                     DiagnosticEngine &diags);

// ---- streamed.cpp: a description read as a stream (issue 16) ---------------------------------

/// Whether `trace` and `key` read the description as a stream: a regular file on disk, for an
/// output made of traced calls. Standard input and the command line's description are read whole,
/// and so are `--emit=manifest|ast`, which show the description itself.
bool streamable(const DriverOptions &options);

/// A streamed read gives up: what it reported since `mark` is forgotten, and the caller reads the
/// description another way.
std::optional<std::optional<DriverOutput>> read_whole(DiagnosticEngine &diags, const DiagnosticEngine::Mark &mark);

/// The -vv line of a streamed read: how many calls `pass` read, and how many were repeats.
void note_read(const DriverOptions &options, std::string_view pass, const ReadFigures &figures);

/// How a streamed read resolves the description's relative paths and names its module.
ManifestLoadOptions streamed_load_options(const std::string &input);

/// The log lines of a one-pass read (trace_once, key_once): info, print() and the persistent
/// cache's (-v's miss explanations, a remote dropped), held in their order until the pass ends,
/// so that a pass that starts over shows none of them: `held()` are the run's options with each
/// handler replaced by one that holds its lines until release() shows them and lets later lines
/// through.
class HeldLines {
public:
  explicit HeldLines(const DriverOptions &options) : held_options_(options) {
    held_options_.info_log = hold(options.info_log);
    held_options_.print_handler = hold(options.print_handler);
    held_options_.cache.log = hold(options.cache.log);
  }
  HeldLines(const HeldLines &) = delete;
  HeldLines &operator=(const HeldLines &) = delete;

  const DriverOptions &held() const { return held_options_; }
  void release() {
    holding_ = false;
    for (const std::function<void()> &show : lines_)
      show();
    lines_.clear();
  }

private:
  /// `direct`, or while lines are held, a handler that keeps a copy of its arguments and the
  /// call that shows them.
  template <class... Args> std::function<void(Args...)> hold(const std::function<void(Args...)> &direct) {
    if (!direct)
      return {};
    return [this, direct](Args... args) {
      if (holding_)
        lines_.push_back([direct, args...] { direct(args...); });
      else
        direct(args...);
    };
  }

  DriverOptions held_options_;
  std::vector<std::function<void()>> lines_;
  bool holding_ = true;
};

/// A one-pass read of the description (trace_once, key_once): the header makes the target, the
/// parsed sources and the Pipeline, and each call's kernel is resolved (or loaded from the
/// registry) the first time a call names it, as the file is read. Anything wrong ends the pass,
/// with nothing seen: the caller starts over from mark() (read_whole()). The info and print()
/// lines are held until release().
class OnePass {
public:
  OnePass(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags);
  OnePass(const OnePass &) = delete;
  OnePass &operator=(const OnePass &) = delete;

  /// The run's options, with its lines held.
  const DriverOptions &options() const { return lines_.held(); }
  const DiagnosticEngine::Mark &mark() const { return mark_; }
  /// Reads the description once, timed as `stage` for -vv: `ready` once the Pipeline is made,
  /// `each` for every call whose kernel is met. False when the pass must start over.
  bool read(const char *stage, const std::function<bool(Pipeline &)> &ready,
            const std::function<void(const Call &)> &each);
  /// Shows the held lines and lets later ones through.
  void release() { lines_.release(); }

  /// Opens the persistent cache the pipeline will use (none when the options ask for none);
  /// false when it cannot be opened (reported).
  bool open_cache();

  Manifest header;
  std::optional<ResolvedTarget> target;
  std::optional<std::vector<python::Module>> modules;
  /// Entries a pass that then starts over stored stay (they are right, and keyed by content);
  /// its lookups are counted with the next pass's.
  std::unique_ptr<PersistentCache> persistent;
  std::unique_ptr<Pipeline> pipeline; ///< after the members it refers to: destroyed first

private:
  bool meet(const Call &call);

  const DriverOptions &run_options_;
  SourceManager &sources_;
  DiagnosticEngine &diags_;
  DiagnosticEngine::Mark mark_;
  HeldLines lines_;
  std::vector<std::string> kernels_, internals_; ///< met already
};

/// What a two-pass read (trace and key) knows before its second pass: the first pass's scan, the
/// target, the sources parsed and every external kernel resolved.
struct StreamedDescription {
  FileId file = kNoFile;
  ManifestLoadOptions load_options;
  DescriptionScan scan;
  ResolvedTarget target;
  std::vector<python::Module> modules;

  /// The internal kernels the calls name, for Pipeline::load_registry().
  std::vector<std::pair<std::string, SourceLoc>> internals() const {
    std::vector<std::pair<std::string, SourceLoc>> names;
    for (const std::string &name : scan.internals)
      names.emplace_back(name, SourceLoc{});
    return names;
  }
};

/// The first pass and what follows it up to the registry. Null when the description must be read
/// whole (the caller rolls the diagnostics back): a check, the target, a source or a kernel name
/// failed.
std::unique_ptr<StreamedDescription> begin_streamed(const DriverOptions &options, SourceManager &sources,
                                                    DiagnosticEngine &diags);

/// `trace` over a streamed description: in one pass when it can start over unseen, else in two.
/// Nullopt, with nothing reported and nothing traced, when the description must be read whole.
std::optional<std::optional<DriverOutput>> trace_streamed(const DriverOptions &options, SourceManager &sources,
                                                          DiagnosticEngine &diags);

} // namespace nkicc::detail
