// Diagnostics are values: every stage reports into a DiagnosticEngine and only tools/nkicc
// turns them into text on stderr (SPEC §10).
#pragma once

#include "nkicc/support/source_manager.h"

#include <string>
#include <string_view>
#include <vector>

namespace nkicc {

enum class Severity { Note, Warning, Error };

/// What kind of failure an error is; it decides the exit code (SPEC §1).
enum class ErrorClass {
  Input,    ///< the input is wrong: exit 1
  IO,       ///< an input cannot be read or the output cannot be written: exit 3
  Internal, ///< a bug in nkicc: exit 70
};

struct Diagnostic {
  Severity severity = Severity::Error;
  ErrorClass error_class = ErrorClass::Input;
  SourceLoc loc;       ///< may be invalid: the message then names no position
  std::string path;    ///< used when loc is invalid but a file is concerned
  std::string message; ///< lowercase start, no trailing period
  std::string id;      ///< printed as ` [id]` when not empty
  std::vector<Diagnostic> notes;
};

/// Collects the diagnostics of a run. A stage reports all of its errors, then the driver checks
/// has_errors() between stages and stops (the checkpoint of mold's pipeline).
class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sources) : sources_(sources) {}

  /// Records a diagnostic and returns it so that notes can be attached.
  Diagnostic &report(Diagnostic diag);
  Diagnostic &error(SourceLoc loc, std::string message, std::string id = {});
  Diagnostic &warning(SourceLoc loc, std::string message, std::string id = {});
  Diagnostic &io_error(std::string path, std::string message);
  Diagnostic &internal_error(std::string message);

  bool has_errors() const { return error_count_ > 0; }
  std::size_t error_count() const { return error_count_; }
  /// The exit code for the worst error so far: 0, 1, 3 or 70.
  int exit_code() const;

  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  const SourceManager &sources() const { return sources_; }

  /// A point to roll back to: what a stage that may be retried another way has not reported yet.
  struct Mark {
    std::size_t size = 0, errors = 0;
    int worst_exit = 0;
  };
  Mark mark() const { return {diags_.size(), error_count_, worst_exit_}; }
  /// Forgets every diagnostic recorded since `m` (a streamed read that falls back to reading the
  /// description whole, which reports the same problems itself).
  void rollback(const Mark &m) {
    diags_.resize(m.size);
    error_count_ = m.errors;
    worst_exit_ = m.worst_exit;
  }

  /// Hands the recorded diagnostics to the caller and forgets them (the tool prints them as
  /// each stage ends, so warnings appear before a later stage's errors).
  std::vector<Diagnostic> take();

private:
  const SourceManager &sources_;
  std::vector<Diagnostic> diags_;
  std::size_t error_count_ = 0;
  int worst_exit_ = 0;
};

struct RenderOptions {
  bool color = false;
  /// Source lines longer than this are shown as a window around the caret.
  std::size_t max_line_width = 160;
};

/// Renders one diagnostic (and its notes) as `path:line:col: error: message [id]`, the source
/// line and a caret, each line ending in '\n'.
std::string render_diagnostic(const Diagnostic &diag, const SourceManager &sources, const RenderOptions &options);

/// User text (a JSON key, a file name, a string value) as it may appear inside a message: control
/// characters, backslashes and bytes that are not UTF-8 are escaped (`\n`, `\x1b`, `\\`), so a
/// message stays one line and sends nothing to the terminal, and text longer than `max_bytes`
/// is cut at a character boundary and ends in `...`. Every user string in a message goes
/// through this.
std::string escape_for_message(std::string_view text, std::size_t max_bytes = 64);

/// escape_for_message() in single quotes: `'text'`.
std::string quote_for_message(std::string_view text, std::size_t max_bytes = 64);

/// The length of the valid UTF-8 sequence that starts at `text[i]` (1-4), or 0 when the bytes
/// there are not one (a stray continuation byte, an overlong form, a surrogate, a cut sequence).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

/// "did you mean" support: the candidate closest to `word` by edit distance, or "" when none
/// is close enough to be a plausible typo.
std::string closest_match(std::string_view word, const std::vector<std::string> &candidates);

} // namespace nkicc
