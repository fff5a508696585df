// Diagnostics on stderr in the form --diagnostics-format asks for: the text of SPEC §10, one
// JSON object per line, or one SARIF 2.1.0 log. Each form carries the same file, line, column,
// message and id.
#pragma once

#include "nkicc/support/diagnostics.h"

#include <string>
#include <vector>

namespace nkicc::tool {

enum class DiagnosticFormat { Text, Json, Sarif };

class DiagnosticPrinter {
public:
  DiagnosticPrinter(DiagnosticFormat format, bool color) : format_(format), color_(color) {}
  /// Prints (text, JSON) or keeps (SARIF) what the engine has recorded so far.
  void print(DiagnosticEngine &diags);
  /// Ends the output: the SARIF log is written once, with every result.
  void finish();

private:
  DiagnosticFormat format_;
  bool color_;
  std::vector<std::string> sarif_results_;
};

/// One diagnostic as a JSON object on one line (no newline).
std::string diagnostic_json(const Diagnostic &diag, const SourceManager &sources);
/// One diagnostic as a SARIF `result` object.
std::string diagnostic_sarif(const Diagnostic &diag, const SourceManager &sources);
/// A SARIF 2.1.0 log of one run of nkicc with these results.
std::string sarif_log(const std::vector<std::string> &results);

} // namespace nkicc::tool
