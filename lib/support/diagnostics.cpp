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

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The code point of the valid sequence of `n` bytes at `s[i]`.
char32_t decode_utf8(std::string_view s, std::size_t i, std::size_t n) {
  auto b = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
  switch (n) {
  case 1:
    return b(0);
  case 2:
    return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  case 3:
    return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  default:
    return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

// Characters a terminal acts on rather than shows: C0 and C1 controls, DEL, and the bidi
// overrides and isolates that reorder the rest of a line.
bool is_control(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
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
    // Never cut a UTF-8 sequence in half (a sequence has at most 3 continuation bytes).
    for (int k = 0; k < 3 && begin > 0 && is_continuation(line[begin]); ++k)
      --begin;
    for (int k = 0; k < 3 && end < line.size() && is_continuation(line[end]); ++k)
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
  // One column per character: a valid UTF-8 sequence is copied, anything a terminal could act
  // on (control bytes, bytes that are not UTF-8) becomes one '?'.
  for (std::size_t i = begin; i < end;) {
    std::size_t n = utf8_sequence_length(line, i);
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (n == 0 || (n == 1 && c != '\t' && is_control(c)) || (n > 1 && is_control(decode_utf8(line, i, n)))) {
      shown += '?';
      n = n == 0 ? 1 : n;
    } else {
      shown.append(line.substr(i, n));
    }
    if (i < col)
      caret += c == '\t' ? '\t' : ' ';
    i += n;
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

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  if (c < 0x80)
    return 1;
  std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(k) & 0xC0) != 0x80)
      return 0;
  // No overlong forms, no surrogates, nothing above U+10FFFF.
  if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) >= 0xA0) || (c == 0xF0 && b(1) < 0x90) ||
      (c == 0xF4 && b(1) >= 0x90))
    return 0;
  return n;
}

std::string escape_for_message(std::string_view text, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = utf8_sequence_length(text, i);
    if (i + std::max<std::size_t>(n, 1) > max_bytes) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", c);
      i += 1;
      continue;
    }
    char32_t cp = decode_utf8(text, i, n);
    if (cp == '\n')
      out += "\\n";
    else if (cp == '\t')
      out += "\\t";
    else if (cp == '\r')
      out += "\\r";
    else if (cp == '\\')
      out += "\\\\";
    else if (is_control(cp))
      out += cp < 0x80 ? fmt::format("\\x{:02x}", c) : fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp));
    else
      out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

std::string quote_for_message(std::string_view text, std::size_t max_bytes) {
  return "'" + escape_for_message(text, max_bytes) + "'";
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
