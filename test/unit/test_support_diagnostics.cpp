#include "nkicc/support/diagnostics.h"

#include <catch2/catch.hpp>

using namespace nkicc;

TEST_CASE("an error renders as path:line:col, the line and a caret", "[support]") {
  SourceManager sm;
  auto f = sm.add_buffer("k.json", "{\n  \"x\": 1\n}\n");
  DiagnosticEngine diags(sm);
  diags.error({f, 9}, "bad value", "manifest");
  REQUIRE(diags.has_errors());
  CHECK(diags.exit_code() == 1);
  CHECK(render_diagnostic(diags.diagnostics()[0], sm, {}) == "k.json:2:8: error: bad value [manifest]\n"
                                                             "  \"x\": 1\n"
                                                             "       ^\n");
}

TEST_CASE("the caret keeps tabs so it lines up", "[support]") {
  SourceManager sm;
  auto f = sm.add_buffer("t", "\t\tx");
  DiagnosticEngine diags(sm);
  diags.error({f, 2}, "here");
  CHECK(render_diagnostic(diags.diagnostics()[0], sm, {}) == "t:1:3: error: here\n\t\tx\n\t\t^\n");
}

TEST_CASE("a long line is shown as a window around the caret", "[support]") {
  SourceManager sm;
  std::string line(1000, 'a');
  line[500] = 'X';
  auto f = sm.add_buffer("long", line);
  DiagnosticEngine diags(sm);
  diags.error({f, 500}, "x");
  RenderOptions opt;
  opt.max_line_width = 20;
  std::string text = render_diagnostic(diags.diagnostics()[0], sm, opt);
  CHECK(text == "long:1:501: error: x\n...aaaaaaaaaaXaaaaaaaaa...\n             ^\n");
}

TEST_CASE("control bytes in the source line are shown as '?'", "[support]") {
  SourceManager sm;
  auto f = sm.add_buffer("bin", std::string("a\x01\x7f", 3));
  DiagnosticEngine diags(sm);
  diags.error({f, 1}, "x");
  CHECK(render_diagnostic(diags.diagnostics()[0], sm, {}) == "bin:1:2: error: x\na??\n ^\n");
}

TEST_CASE("bytes that are not UTF-8 are shown as '?' and the caret still lines up", "[support]") {
  SourceManager sm;
  // é (2 bytes), a stray continuation byte, a cut 3-byte sequence, an overlong '/', then x.
  auto f = sm.add_buffer("u", "\xC3\xA9\x80\xE2\x82 \xC0\xAFx");
  DiagnosticEngine diags(sm);
  diags.error({f, 8}, "x");
  CHECK(render_diagnostic(diags.diagnostics()[0], sm, {}) == "u:1:9: error: x\n\xC3\xA9??? ??x\n       ^\n");
}

TEST_CASE("C1 controls and bidi overrides in the source line are shown as '?'", "[support]") {
  SourceManager sm;
  auto f = sm.add_buffer("c", "a\xC2\x9B"
                              "b\xE2\x80\xAE"
                              "c");
  DiagnosticEngine diags(sm);
  diags.error({f, 7}, "x");
  CHECK(render_diagnostic(diags.diagnostics()[0], sm, {}) == "c:1:8: error: x\na?b?c\n    ^\n");
}

TEST_CASE("user text in a message is escaped and cut at a character boundary", "[support]") {
  CHECK(escape_for_message("plain") == "plain");
  CHECK(escape_for_message("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(escape_for_message("\x1b[31m\x7f") == "\\x1b[31m\\x7f");
  CHECK(escape_for_message("back\\slash") == "back\\\\slash");
  CHECK(escape_for_message("caf\xC3\xA9 \xE4\xB8\x96") == "caf\xC3\xA9 \xE4\xB8\x96");
  CHECK(escape_for_message("bad\xFF\xC3(") == "bad\\xff\\xc3(");
  CHECK(escape_for_message("\xC2\x85\xE2\x80\xAE") == "\\u0085\\u202e");
  CHECK(escape_for_message(std::string(100, 'k')) == std::string(64, 'k') + "...");
  CHECK(escape_for_message("abcdef", 6) == "abcdef");
  // A cut never splits a character: the 3-byte 世 that would cross the limit is left out.
  CHECK(escape_for_message("ab\xE4\xB8\x96", 4) == "ab...");
  CHECK(escape_for_message("ab\xE4\xB8\x96", 5) == "ab\xE4\xB8\x96");
  CHECK(quote_for_message("a\nb") == "'a\\nb'");
}

TEST_CASE("UTF-8 sequences are validated", "[support]") {
  CHECK(utf8_sequence_length("a", 0) == 1);
  CHECK(utf8_sequence_length("\xC3\xA9", 0) == 2);
  CHECK(utf8_sequence_length("\xE4\xB8\x96", 0) == 3);
  CHECK(utf8_sequence_length("\xF0\x9F\x98\x80", 0) == 4);
  CHECK(utf8_sequence_length("\x80", 0) == 0);             // a continuation byte alone
  CHECK(utf8_sequence_length("\xC0\xAF", 0) == 0);         // overlong '/'
  CHECK(utf8_sequence_length("\xED\xA0\x80", 0) == 0);     // a surrogate
  CHECK(utf8_sequence_length("\xF4\x90\x80\x80", 0) == 0); // above U+10FFFF
  CHECK(utf8_sequence_length("\xE4\xB8", 0) == 0);         // cut short
}

TEST_CASE("colour wraps severity and location in ANSI escapes", "[support]") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  diags.warning({}, "careful");
  RenderOptions opt;
  opt.color = true;
  std::string text = render_diagnostic(diags.diagnostics()[0], sm, opt);
  CHECK(text.find("\033[1;35mwarning:") != std::string::npos);
  CHECK_FALSE(diags.has_errors());
  CHECK(diags.exit_code() == 0);
}

TEST_CASE("notes follow their diagnostic", "[support]") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  Diagnostic &d = diags.error({}, "outer");
  Diagnostic note;
  note.severity = Severity::Note;
  note.message = "in call 3";
  d.notes.push_back(note);
  CHECK(render_diagnostic(diags.diagnostics()[0], sm, {}) == "nkicc: error: outer\nnkicc: note: in call 3\n");
}

TEST_CASE("the worst error class decides the exit code", "[support]") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  diags.error({}, "input");
  CHECK(diags.exit_code() == 1);
  diags.io_error("out.bir", "cannot write");
  CHECK(diags.exit_code() == 3);
  diags.error({}, "input again");
  CHECK(diags.exit_code() == 3);
  diags.internal_error("broken invariant");
  CHECK(diags.exit_code() == 70);
  CHECK(diags.error_count() == 4);
  CHECK(diags.take().size() == 4);
  CHECK(diags.diagnostics().empty());
}

TEST_CASE("closest_match suggests plausible typos only", "[support]") {
  std::vector<std::string> dtypes = {"float32", "bfloat16", "int8"};
  CHECK(closest_match("bfloat61", dtypes) == "bfloat16");
  CHECK(closest_match("flaot32", dtypes) == "float32");
  CHECK(closest_match("int9", dtypes) == "int8");
  CHECK(closest_match("complex128", dtypes).empty());
  CHECK(closest_match("", dtypes).empty());
  CHECK(closest_match(std::string(100, 'a'), dtypes).empty());
}
