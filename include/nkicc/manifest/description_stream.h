// A description file read as a stream (issue 16): memory holds one call at a time, not the file
// and not its calls, so a run over 1,000,000 calls of 100 variants needs what one over 10,000
// does. Two passes over the bytes:
//
//   1. scan_description(): every call checked and let go; what the pipeline must know before the
//      first trace is kept (the description without its calls, the kernels the calls name);
//   2. stream_calls(): each call again, checked, handed to the pipeline, let go.
//
// The diagnostics of a streamed read are not the ones to show: when the first pass finds
// anything wrong, the caller rolls them back (DiagnosticEngine::rollback) and reads the file
// whole (load_manifest), which reports every error in document order, each at its value.
#pragma once

#include "nkicc/manifest/manifest.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nkicc {

/// What the first pass learned.
struct DescriptionScan {
  Manifest header; ///< the description with `calls` empty; its sources are read
  std::size_t call_count = 0;
  std::vector<std::string> kernels;   ///< the distinct external kernels called, in first-call order
  std::vector<std::string> internals; ///< the distinct internal func_names, in first-call order
  std::uint64_t digest = 0;           ///< XXH3-64 of the bytes, and their number: the second pass
  std::uint64_t size = 0;             ///< must read the same file
};

/// Pass 1 over the regular file `path`, registered (lazily) as `file`. Nullopt when the file
/// cannot be streamed as it is: unreadable, malformed, or any check failed (diagnostics may have
/// been recorded: roll them back and load the file whole).
std::optional<DescriptionScan> scan_description(SourceManager &sources, FileId file, const std::string &path,
                                                const ManifestLoadOptions &options, DiagnosticEngine &diags);

/// What a streamed read saw, for -vv.
struct ReadFigures {
  std::size_t calls = 0;
  /// Calls whose bytes repeat an earlier call's: not parsed or checked again (SplitRepeats).
  std::size_t repeats = 0;
};

/// Pass 2: each call, checked again (or, when its bytes repeat an earlier call's, that call
/// again), handed to `on_call` in order, then let go. False, with one located error, when the
/// file is no longer what pass 1 read.
bool stream_calls(SourceManager &sources, FileId file, const std::string &path, const ManifestLoadOptions &options,
                  const DescriptionScan &scan, DiagnosticEngine &diags,
                  const std::function<void(const Call &)> &on_call, ReadFigures *figures = nullptr);

/// The whole read in one pass, for a run that can start over (nothing it did is visible before it
/// ends): `on_header` gets the description without its calls when its calls start (the members
/// before them), then `on_call` each call, checked, in order. When only a valid `name` follows
/// the calls and `on_trailing_name` is given, it gets the name at the end (the calls did not
/// depend on it). False when the description cannot be read so: a check failed, a
/// callback returned false, there were no calls, or another member followed them (the header
/// the calls were read with was not whole). The caller then rolls back and reads it in two passes.
/// `figures`, when given, is set once the calls are read (repeats are calls, not parsed again).
bool read_description_once(SourceManager &sources, FileId file, const std::string &path,
                           const ManifestLoadOptions &options, DiagnosticEngine &diags,
                           const std::function<bool(Manifest &&)> &on_header,
                           const std::function<bool(const Call &)> &on_call,
                           const std::function<bool(std::string)> &on_trailing_name = {},
                           ReadFigures *figures = nullptr);

} // namespace nkicc
