// Tracing and specialization (SPEC §3-§5, seed 001): each external call re-executes its kernel
// with the call's shapes, dtypes and constants, and a per-kernel specialization cache keyed by
// (per-arg key, grid, opts, platform_target_is_fallback) reuses the whole result on a hit.
#pragma once

#include "nkicc/ir/kernel_ir.h"
#include "nkicc/manifest/manifest.h"
#include "nkicc/registry/registry.h"
#include "nkicc/python/ast.h"
#include "nkicc/target/target.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nkicc::trace {

struct KernelTrace;

struct TraceOptions {
  std::uint64_t max_instructions = 10'000'000; ///< --max-instructions
  /// Statements and calls a trace may run; 0: ten per instruction allowed, at least 10,000,000
  /// (enough for any kernel that fits the instruction budget).
  std::uint64_t max_steps = 0;
  /// Wall time each kernel trace (and each file's module-level code) may take; zero: no limit.
  std::chrono::milliseconds max_trace_time{0};
  bool use_cache = true; ///< --no-cache turns the specialization cache off
  /// Where `print()` in a kernel goes (the tool logs it at info level).
  std::function<void(const std::string &)> print_handler;
  /// A cache behind the specialization cache (the persistent cache, issue 14): asked on each
  /// specialization miss, with the key's Python repr, before the kernel is traced; a result it
  /// returns stands for the trace (and fills the specialization cache as a trace would, so the
  /// per-run figures stay the seed's). Empty: every miss is traced.
  std::function<std::unique_ptr<KernelTrace>(const Call &call, const std::string &specialization_key)>
      find_specialization;
  /// insert_nki_kernel's guard (seed 001 §2.4): an external kernel's inputs and outputs must be
  /// in shared_hbm. `nkicc simulate` lifts it, as `nki.simulate_kernel` does: no graph node is
  /// inserted, so a kernel may return a private-HBM (`nl.hbm`) tensor.
  bool shared_hbm_guard = true;
};

/// One returned tensor: its name, shape and dtype (backend_config's kernel_return).
struct ReturnedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  DType dtype = DType::Float32;
};

/// The whole assembled result of one specialization (seed 001 `assemble_result`): what a
/// specialization-cache hit reuses without re-tracing.
struct KernelTrace {
  ir::Function function;
  std::vector<ReturnedTensor> returns;
  bool result_is_sequence = false;
  /// Operand-output aliases (seed 001 generate_operand_output_aliases): input tensor index
  /// (among the call's tensor arguments) -> output index, for outputs written in place.
  std::vector<std::pair<std::size_t, std::size_t>> aliases;
  /// Constant (non-tensor) arguments by parameter name, in parameter order.
  std::vector<std::pair<std::string, PyConstant>> constant_values;
  std::vector<std::int64_t> grid;
  bool platform_target_is_fallback = false;
  std::string specialization_key; ///< Python repr of the key, for logs and `nkicc key`
  /// An output in private HBM, accepted because the guard was lifted (`nkicc simulate`): the
  /// result is not one `nkicc trace` would give, so it is never stored in the persistent cache.
  bool private_hbm_output = false;
};

struct SpecializationStats {
  std::string kernel;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t entries = 0;
};

/// Traces the external calls of one run. Module-level code of every source runs once.
class Tracer {
public:
  /// `sources` takes the files that imports between kernel files read.
  Tracer(SourceManager &sources, const Manifest &manifest, const std::vector<python::Module> &modules,
         const ResolvedTarget &target, TraceOptions options, DiagnosticEngine &diags);
  ~Tracer();
  Tracer(const Tracer &) = delete;
  Tracer &operator=(const Tracer &) = delete;

  /// Runs every source's module-level statements; false (with diagnostics) on an error.
  bool load_modules();

  /// Traces one external call, or returns the cached specialization. Null (with diagnostics)
  /// when the trace fails. `hit`, when given, says whether the specialization cache had it.
  const KernelTrace *trace_call(const Call &call, bool *hit = nullptr);
  /// Counts a specialization-cache hit for `kernel` as trace_call() would: the caller found the
  /// call's specialization itself (a repeat of a call whose trace_call() was a hit).
  void count_hit(const std::string &kernel);

  /// Registers a registry entry's files (entry.files, whose texts the caller read into the
  /// SourceManager as `texts`, in the same order) with the kernel-file loader, so that imports
  /// between them resolve as between a description's sources, and runs the entry's source as
  /// module entry.module, once per file. Its parsed source, or null on an error (reported).
  const python::Module *load_registry_entry(const RegistryEntry &entry, const std::vector<FileId> &texts);

  /// Traces an internal call through its registry entry: the op's operands, results and attrs
  /// marshalled into the entry function's arguments (seed 000 `_resolve_kernel_config`). No
  /// specialization cache: the per-run binary cache sits in front. Null (with diagnostics) on
  /// failure, including returned tensors that do not match the op's results.
  std::shared_ptr<KernelTrace> trace_internal(const Call &call, const RegistryEntry &entry,
                                              const python::Module &source);

  /// The kernel files imports read beyond the listed sources, in reading order (dependencies).
  const std::vector<std::string> &imported_files() const;

  /// Specialization-cache figures per external kernel, sorted by kernel name.
  std::vector<SpecializationStats> stats() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace nkicc::trace
