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
