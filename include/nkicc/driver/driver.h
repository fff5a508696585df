// The nkicc pipeline, stage by stage (SPEC §1). The tool layer turns the command line into a
// DriverOptions; everything after that lives here and reports through the DiagnosticEngine.
#pragma once

#include "nkicc/support/diagnostics.h"
#include "nkicc/target/target.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nkicc {

/// Where `trace` stops, in pipeline order (Toy's "emit X": stop after stage X). Only the stages
/// nkicc implements exist here.
enum class EmitKind {
  Manifest, ///< the loaded description as canonical JSON
  Ast,      ///< the parsed kernel sources (the Python AST of every source)
  Ir,       ///< the traced kernel IR of every call, as text
};

struct DriverOptions {
  std::string input = "-"; ///< a description file, or "-" for standard input
  EmitKind emit = EmitKind::Ast;
  TargetInputs target;
  std::uint64_t max_instructions = 10'000'000;
  bool use_cache = true;
  /// Where `print()` in a kernel goes; the tool logs it.
  std::function<void(const std::string &)> print_handler;
};

/// The result of a run: the bytes for stdout or `-o`, and whether they are binary.
struct DriverOutput {
  std::string bytes;
  bool binary = false;
  /// Every file the run read, in reading order: the description, sources, registry files.
  std::vector<std::string> dependencies;
};

/// `nkicc trace`: runs the pipeline up to `options.emit`.
std::optional<DriverOutput> run_trace(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags);

/// `nkicc key`: per call, the cache key components and SHA-256 key (internal calls) or the
/// specialization key as far as it is known before tracing (external calls).
std::optional<DriverOutput> run_key(const DriverOptions &options, SourceManager &sources, DiagnosticEngine &diags);

} // namespace nkicc
