// The nkicc pipeline, stage by stage (SPEC §1). The tool layer turns the command line into a
// DriverOptions; everything after that lives here and reports through the DiagnosticEngine.
#pragma once

#include "nkicc/cache/persistent_cache.h"
#include "nkicc/sim/random_range.h"
#include "nkicc/support/diagnostics.h"
#include "nkicc/support/owned_bytes.h"
#include "nkicc/support/text_options.h"
#include "nkicc/target/target.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

class TextSink;

/// Where `trace` stops, in pipeline order (Toy's "emit X": stop after stage X). Only the stages
/// nkicc implements exist here.
enum class EmitKind {
  Manifest,  ///< the loaded description as canonical JSON
  Ast,       ///< the parsed kernel sources (the Python AST of every source)
  Ir,        ///< the traced kernel IR of every call, as text
  Bir,       ///< the BIR module blob (binary)
  BirText,   ///< the BIR module as canonical text (what `nkicc dis` prints)
  Hlo,       ///< an HLO module of custom-calls with their backend_config
  StableHlo, ///< the same calls as stablehlo.custom_call in MLIR's generic form
  Stats,     ///< the cache statistics
  Summary,   ///< per call: SBUF/PSUM use against the target, instructions and DMA bytes per engine, MACs
};

/// The name diagnostics give a description built in memory (DriverOptions::description_text).
inline constexpr std::string_view kCommandLineDescription = "<command line>";

/// `--max-trace-time`'s default: far beyond any real kernel's trace (the largest traces take
/// seconds), short enough that a trace stuck in slow statements ends on its own.
inline constexpr std::chrono::milliseconds kDefaultMaxTraceTime{300'000};

struct DriverOptions {
  std::string input = "-"; ///< a description file, or "-" for standard input
  /// A description built in memory from the command line (the kernel-file quick path, SPEC §1):
  /// read instead of `input`, which then names the kernel file it calls (and the module).
  std::optional<std::string> description_text;
  EmitKind emit = EmitKind::Bir;
  TargetInputs target;
  std::uint64_t max_instructions = 10'000'000;
  std::uint64_t max_steps = 0; ///< per trace; 0: derived from max_instructions (TraceOptions)
  /// `--max-trace-time`: wall time per kernel trace; zero: no limit.
  std::chrono::milliseconds max_trace_time{kDefaultMaxTraceTime};
  bool use_cache = true;
  bool stats_json = false;              ///< --stats-format=json (stats and summary)
  TextOptions text;                     ///< source locations and the calls text outputs show
  bool hlo_flavor_torch_xla = false;    ///< --hlo-flavor=torch-xla (default jax)
  std::vector<std::string> kernel_path; ///< registry folders: -I folders, then the installed one
  std::string nki_frontend;             ///< the `nki_frontend` env value, recorded in BIR as data
  /// Info-level log lines (the binary cache's hits and misses).
  std::function<void(const std::string &)> info_log;
  /// insert_nki_kernel's shared_hbm guard on external kernels' inputs and outputs; `nkicc
  /// simulate` lifts it (TraceOptions::shared_hbm_guard).
  bool shared_hbm_guard = true;
  /// Where `print()` in a kernel goes; the tool logs it.
  std::function<void(const std::string &)> print_handler;
  /// Debug-level log lines (-vv): what a run did that only someone tuning it asks about.
  std::function<void(const std::string &)> debug_log;
  /// Told each stage's wall time as it ends (mold's per-pass timers); the tool logs it at debug.
  std::function<void(std::string_view stage, double milliseconds)> stage_timer;
  /// The persistent cache (issue 14): off unless a folder or a remote is named. `--no-cache`
  /// turns it off too, and `--emit=ir` never uses it (an entry holds BIR, not the IR).
  PersistentCacheOptions cache;
  /// Explain each persistent-cache miss in the info log (it reads the entries of the kernel's
  /// names index, so it is done only when someone reads the log).
  bool explain_misses = false;
  /// `nkicc key --explain`: every persistent key component and its digest; `key_json` as JSON.
  bool explain_keys = false;
  bool key_json = false;
  /// Where large text outputs (`--emit=ir|hlo|stablehlo`) are written as they are produced,
  /// instead of being returned whole; null returns them in DriverOutput::bytes.
  TextSink *text_output = nullptr;
};

/// The result of a run: the bytes for stdout or `-o`, and whether they are binary.
struct DriverOutput {
  std::string bytes;
  bool binary = false;
  /// Every file the run read, in reading order: the description, sources, registry files.
  std::vector<std::string> dependencies;
  /// The text went to DriverOptions::text_output as it was produced; `bytes` is empty.
  bool streamed = false;
  /// A binary result left where it was built, in pieces (the BIR module's frame and its kernel
  /// blobs); `bytes` is then empty.
  ByteSequence blob{};
};

/// `nkicc trace`: runs the pipeline up to `options.emit`.
std::optional<DriverOutput> run_trace(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags);

/// `nkicc dis`: a BIR module blob (a file or "-") as canonical text.
std::optional<DriverOutput> run_dis(const std::string &input, const TextOptions &text, SourceManager &sources,
                                    DiagnosticEngine &diags);

/// `nkicc decode-config B64|@FILE`: the backend_config's JSON, pretty, and its embedded BIR as text.
std::optional<DriverOutput> run_decode_config(const std::string &input, const TextOptions &text, SourceManager &sources,
                                              DiagnosticEngine &diags);

/// `nkicc decode-config --hlo FILE`: every custom-call of an HLO or StableHLO module decoded, in
/// order, each under a `# custom-call <i>: ...` header; a call that is not an NKI kernel's is
/// named and skipped. `text.calls` picks custom-calls by index and func_name.
std::optional<DriverOutput> run_decode_hlo(const std::string &path, const TextOptions &text, SourceManager &sources,
                                           DiagnosticEngine &diags);

/// `nkicc simulate` (SPEC §12): what to run and where its arrays are.
struct SimulateRequest {
  std::optional<std::size_t> call;             ///< --call N: only that call
  std::string inputs_dir;                      ///< --inputs DIR: `DIR/callN.P.npy` per tensor parameter P
  std::optional<std::uint64_t> seed;           ///< --random-inputs=SEED instead, written to the output folder
  std::vector<sim::RandomRange> random_ranges; ///< --random-range, with --random-inputs only
  std::string output_dir;                      ///< -o OUTDIR: `OUTDIR/callN.NAME.npy` per output
  bool check_nan = false;                      ///< --check-nan
};

/// `nkicc simulate`: traces as `trace` does, then executes each call's BIR kernel (read back from
/// the module blob, never from the trace) and writes its outputs, each atomically. The returned
/// output carries no bytes: the files are written already.
std::optional<DriverOutput> run_simulate(const DriverOptions &options, const SimulateRequest &request,
                                         SourceManager &sources, DiagnosticEngine &diags);

/// `nkicc key`: per call, the cache key components and SHA-256 key (internal calls) or the
/// specialization key as far as it is known before tracing (external calls). With
/// `explain_keys`, each call's persistent key, component by component: the sources are parsed
/// and their module-level code run (imports are files the key depends on), nothing is traced.
std::optional<DriverOutput> run_key(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags);

} // namespace nkicc
