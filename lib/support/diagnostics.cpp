#include "nkicc/support/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace nkicc {

namespace {

int exit_code_for(ErrorClass cls) {
  switch (cls) {
  case ErrorClass::Input:
    return 1;
  case ErrorClass::IO:
    return 3;
  case ErrorClass::Internal:
    return 70;
  }
  return 70;
}

// A worse failure wins the exit code: internal > I/O > input.
int rank(int code) { return code == 70 ? 3 : code == 3 ? 2 : code == 1 ? 1 : 0; }

const char *severity_word(Severity s) {
  switch (s) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  }
  return "error";
}

const char *severity_color(Severity s) {
  switch (s) {
  case Severity::Note:
    return "\033[1;36m";
  case Severity::Warning:
    return "\033[1;35m";
  case Severity::Error:
    return "\033[1;31m";
  }
  return "";
}

void render_one(std::string &out, const Diagnostic &d, const SourceManager &sm, const RenderOptions &opt) {
  const char *bold = opt.color ? "\033[1m" : "";
  const char *reset = opt.color ? "\033[0m" : "";
  LineCol lc;
  if (d.loc.valid()) {
    lc = sm.line_col(d.loc);
    out += fmt::format("{}{}:{}:{}: {}", bold, sm.name(d.loc.file), lc.line, lc.column, reset);
  } else if (!d.path.empty()) {
    out += fmt::format("{}{}: {}", bold, d.path, reset);
  } else {
    out += fmt::format("{}nkicc: {}", bold, reset);
  }
  out += fmt::format("{}{}:{} {}{}{}", opt.color ? severity_color(d.severity) : "", severity_word(d.severity), reset,
                     bold, d.message, reset);
  if (!d.id.empty())
    out += fmt::format(" [{}]", d.id);
  out += '\n';
  if (!d.loc.valid())
    return;

  std::string_view line = sm.line_text(d.loc.file, lc.line);
  std::size_t col = lc.column - 1; // byte index of the caret in `line`
  if (col > line.size())
    col = line.size();
  // A very long line (a minified file, a 100 MB string) is shown as a window around the caret.
  std::size_t begin = 0;
  std::size_t end = line.size();
  bool cut_left = false, cut_right = false;
  if (line.size() > opt.max_line_width) {
    std::size_t half = opt.max_line_width / 2;
    begin = col > half ? col - half : 0;
    end = std::min(line.size(), begin + opt.max_line_width);
    // Never cut a UTF-8 sequence in half.
    while (begin > 0 && (static_cast<unsigned char>(line[begin]) & 0xC0) == 0x80)
      --begin;
    while (end < line.size() && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80)
      ++end;
    cut_left = begin > 0;
    cut_right = end < line.size();
  }
  std::string shown;
  std::string caret;
  if (cut_left) {
    shown += "...";
    caret += "   ";
  }
  for (std::size_t i = begin; i < end; ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    // Control bytes would garble the terminal; binary input is shown as '?'.
    bool control = c < 0x20 && c != '\t';
    shown += control || c == 0x7F ? '?' : static_cast<char>(c);
    if (i < col && (c & 0xC0) != 0x80)
      caret += c == '\t' ? '\t' : ' ';
  }
  if (cut_right)
    shown += "...";
  out += shown;
  out += '\n';
  out += fmt::format("{}{}^{}\n", caret, opt.color ? "\033[1;32m" : "", reset);
}

} // namespace

Diagnostic &DiagnosticEngine::report(Diagnostic diag) {
  if (diag.severity == Severity::Error) {
    ++error_count_;
    int code = exit_code_for(diag.error_class);
    if (rank(code) > rank(worst_exit_))
      worst_exit_ = code;
  }
  diags_.push_back(std::move(diag));
  return diags_.back();
}

Diagnostic &DiagnosticEngine::error(SourceLoc loc, std::string message, std::string id) {
  Diagnostic d;
  d.loc = loc;
  d.message = std::move(message);
  d.id = std::move(id);
  return report(std::move(d));
}

Diagnostic &DiagnosticEngine::warning(SourceLoc loc, std::string message, std::string id) {
  Diagnostic d;
  d.severity = Severity::Warning;
  d.loc = loc;
  d.message = std::move(message);
  d.id = std::move(id);
  return report(std::move(d));
}

Diagnostic &DiagnosticEngine::io_error(std::string path, std::string message) {
  Diagnostic d;
  d.error_class = ErrorClass::IO;
  d.path = std::move(path);
  d.message = std::move(message);
  return report(std::move(d));
}

Diagnostic &DiagnosticEngine::internal_error(std::string message) {
  Diagnostic d;
  d.error_class = ErrorClass::Internal;
  d.message = "internal error: " + std::move(message) + " (this is a bug in nkicc; please report it)";
  return report(std::move(d));
}

int DiagnosticEngine::exit_code() const { return worst_exit_; }

std::vector<Diagnostic> DiagnosticEngine::take() {
  std::vector<Diagnostic> out;
  out.swap(diags_);
  return out;
}

std::string render_diagnostic(const Diagnostic &diag, const SourceManager &sources, const RenderOptions &options) {
  std::string out;
  render_one(out, diag, sources, options);
  for (const Diagnostic &note : diag.notes)
    render_one(out, note, sources, options);
  return out;
}

std::string closest_match(std::string_view word, const std::vector<std::string> &candidates) {
  // Garbage (a 100 MB string) is no typo: do not spend quadratic time on it.
  if (word.empty() || word.size() > 64)
    return {};
  std::string best;
  std::size_t best_distance = std::string::npos;
  std::vector<std::size_t> row;
  for (const std::string &cand : candidates) {
    // Levenshtein distance, one row at a time.
    row.resize(cand.size() + 1);
    std::iota(row.begin(), row.end(), std::size_t{0});
    for (std::size_t i = 1; i <= word.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= cand.size(); ++j) {
        std::size_t up = row[j];
        std::size_t cost = word[i - 1] == cand[j - 1] ? 0 : 1;
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
        diag = up;
      }
    }
    std::size_t d = row[cand.size()];
    if (d < best_distance) {
      best_distance = d;
      best = cand;
    }
  }
  // A suggestion must be closer than a rewrite: at most a third of the word may change.
  std::size_t limit = std::max<std::size_t>(1, (word.size() + 2) / 3);
  if (best_distance == std::string::npos || best_distance > limit)
    return {};
  return best;
}

} // namespace nkicc
