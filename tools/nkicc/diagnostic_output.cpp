#include "diagnostic_output.h"

#include "nkicc/support/json_writer.h"
#include "nkicc/version.h"

#include <fmt/format.h>

#include <cstdio>

namespace nkicc::tool {

namespace {

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

void put(const std::string &text) { std::fwrite(text.data(), 1, text.size(), stderr); }

/// `"file": ..., "line": ..., "column": ...` for whatever of them the diagnostic has.
void json_position(std::string &out, const Diagnostic &d, const SourceManager &sources) {
  if (d.loc.valid()) {
    LineCol lc = sources.line_col(d.loc);
    out += ", \"file\": ";
    append_json_string(out, sources.name(d.loc.file), false);
    out += fmt::format(", \"line\": {}, \"column\": {}", lc.line, lc.column);
  } else if (!d.path.empty()) {
    out += ", \"file\": ";
    append_json_string(out, d.path, false);
  }
}

void json_object(std::string &out, const Diagnostic &d, const SourceManager &sources, bool with_notes) {
  out += fmt::format("{{\"severity\": \"{}\"", severity_word(d.severity));
  json_position(out, d, sources);
  out += ", \"message\": ";
  append_json_string(out, d.message, false);
  if (!d.id.empty()) {
    out += ", \"id\": ";
    append_json_string(out, d.id, false);
  }
  if (with_notes) {
    out += ", \"notes\": [";
    for (std::size_t i = 0; i < d.notes.size(); ++i) {
      out += i ? ", " : "";
      json_object(out, d.notes[i], sources, false);
    }
    out += ']';
  }
  out += '}';
}

/// A SARIF physicalLocation, or nothing when the diagnostic names no file.
std::string sarif_location(const Diagnostic &d, const SourceManager &sources) {
  std::string uri;
  std::string region;
  if (d.loc.valid()) {
    LineCol lc = sources.line_col(d.loc);
    uri = std::string(sources.name(d.loc.file));
    region = fmt::format(", \"region\": {{\"startLine\": {}, \"startColumn\": {}}}", lc.line, lc.column);
  } else if (!d.path.empty()) {
    uri = d.path;
  } else {
    return {};
  }
  std::string out = "{\"physicalLocation\": {\"artifactLocation\": {\"uri\": ";
  append_json_string(out, uri, false);
  out += "}" + region + "}}";
  return out;
}

} // namespace

std::string diagnostic_json(const Diagnostic &diag, const SourceManager &sources) {
  std::string out;
  json_object(out, diag, sources, true);
  return out;
}

std::string diagnostic_sarif(const Diagnostic &d, const SourceManager &sources) {
  std::string out = "{";
  if (!d.id.empty()) {
    out += "\"ruleId\": ";
    append_json_string(out, d.id, false);
    out += ", ";
  }
  out += fmt::format("\"level\": \"{}\", \"message\": {{\"text\": ", severity_word(d.severity));
  append_json_string(out, d.message, false);
  out += "}";
  std::string location = sarif_location(d, sources);
  if (!location.empty())
    out += ", \"locations\": [" + location + "]";
  // Notes are related locations; one without a position keeps its text in the message.
  std::vector<std::string> related;
  for (const Diagnostic &n : d.notes) {
    std::string r = "{\"message\": {\"text\": ";
    append_json_string(r, n.message, false);
    r += "}";
    std::string where = sarif_location(n, sources);
    if (!where.empty())
      r += ", " + where.substr(1, where.size() - 2);
    related.push_back(r + "}");
  }
  if (!related.empty())
    out += fmt::format(", \"relatedLocations\": [{}]", fmt::join(related, ", "));
  return out + "}";
}

std::string sarif_log(const std::vector<std::string> &results) {
  std::string out = "{\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\", \"version\": \"2.1.0\", "
                    "\"runs\": [{\"tool\": {\"driver\": {\"name\": \"nkicc\", \"version\": \"" NKICC_VERSION_STRING
                    "\"}}, \"results\": [";
  for (std::size_t i = 0; i < results.size(); ++i)
    out += (i ? ",\n  " : "\n  ") + results[i];
  out += results.empty() ? "]}]}\n" : "\n]}]}\n";
  return out;
}

void DiagnosticPrinter::print(DiagnosticEngine &diags) {
  RenderOptions render;
  render.color = color_;
  for (const Diagnostic &d : diags.take()) {
    switch (format_) {
    case DiagnosticFormat::Text:
      put(render_diagnostic(d, diags.sources(), render));
      break;
    case DiagnosticFormat::Json:
      put(diagnostic_json(d, diags.sources()) + "\n");
      break;
    case DiagnosticFormat::Sarif:
      sarif_results_.push_back(diagnostic_sarif(d, diags.sources()));
      break;
    }
  }
}

void DiagnosticPrinter::finish() {
  if (format_ == DiagnosticFormat::Sarif)
    put(sarif_log(sarif_results_));
}

} // namespace nkicc::tool
