// The Python parser: the AST of every syntax corner case (compared with CPython's own AST
// through test/unit/data/python/*.ast, written by data/python/ast_dump.py), syntax errors in
// CPython's words and columns, bounded nesting, and a seeded mutation fuzz over kernel sources.
#include "nkicc/python/parser.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace nkicc;
using namespace nkicc::python;

namespace {

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string data_path(const std::string &name) {
  return std::string(NKICC_SOURCE_DIR) + "/test/unit/data/python/" + name;
}

/// Parses `text`; returns the dump, or `line:col: message` of the one diagnostic.
struct ParseResult {
  bool ok = false;
  std::string dump;
  std::string error;
  std::size_t diagnostics = 0;
};

ParseResult parse(const std::string &text, const char *name = "test.py") {
  SourceManager sources;
  FileId file = sources.add_buffer(name, text);
  DiagnosticEngine diags(sources);
  auto module = parse_module(sources, file, diags);
  ParseResult r;
  r.ok = module.has_value();
  r.diagnostics = diags.diagnostics().size();
  if (module)
    r.dump = dump_ast(*module, sources);
  for (const Diagnostic &d : diags.diagnostics()) {
    LineCol lc = sources.line_col(d.loc);
    r.error = std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": " + d.message;
  }
  return r;
}

std::string error_of(const std::string &text) {
  ParseResult r = parse(text);
  return r.ok ? "" : r.error;
}

/// Compares a dump with CPython's (ast_dump.py): lines CPython marks `@?` carry no position
/// there (f-string parts, withitem, comprehension), so only their text before ` @` counts.
void check_same_as_cpython(const std::string &mine, const std::string &cpython) {
  std::istringstream a(mine), b(cpython);
  std::string la, lb;
  int line = 0;
  while (true) {
    bool more_a = static_cast<bool>(std::getline(a, la));
    bool more_b = static_cast<bool>(std::getline(b, lb));
    ++line;
    INFO("dump line " << line);
    REQUIRE(more_a == more_b);
    if (!more_a)
      break;
    if (lb.size() >= 3 && lb.compare(lb.size() - 3, 3, " @?") == 0) {
      lb.resize(lb.size() - 3);
      la = la.substr(0, la.rfind(" @"));
    }
    REQUIRE(la == lb);
  }
}

const char *const kKernelFiles[] = {"tensor_add.py", "matmul_tiled.py", "transpose2d.py",   "rmsnorm.py",
                                    "softmax.py",    "attention.py",    "syntax_corners.py"};

} // namespace

TEST_CASE("kernel sources and syntax corners give CPython's AST", "[python][parser]") {
  for (const char *name : kKernelFiles) {
    std::string base(name);
    base.resize(base.size() - 3);
    INFO(name);
    ParseResult r = parse(read_file(data_path(name)), name);
    REQUIRE(r.error == "");
    REQUIRE(r.ok);
    check_same_as_cpython(r.dump, read_file(data_path(base + ".ast")));
  }
}

TEST_CASE("dump of a small module", "[python][parser]") {
  CHECK(parse("import neuronxcc.nki.language as nl\nx = nl.arange(128)[:, None]\n").dump ==
        "Module\n"
        "  Import @1:1-1:36\n"
        "    alias neuronxcc.nki.language as nl @1:8-1:36\n"
        "  Assign @2:1-2:28\n"
        "    targets:\n"
        "      Name x Store @2:1-2:2\n"
        "    value: Subscript Load @2:5-2:28\n"
        "      value: Call @2:5-2:19\n"
        "        func: Attribute attr=arange Load @2:5-2:14\n"
        "          value: Name nl Load @2:5-2:7\n"
        "        args:\n"
        "          Constant int 128 @2:15-2:18\n"
        "      slice: Tuple Load @2:20-2:27\n"
        "        elts:\n"
        "          Slice @2:20-2:21\n"
        "          Constant None @2:23-2:27\n");
}

TEST_CASE("f-strings keep literal and expression parts", "[python][parser]") {
  CHECK(parse("f'a{x!r:>{w}}b{{c}}{y=}'\n").dump == "Module\n"
                                                    "  Expr @1:1-1:25\n"
                                                    "    value: JoinedStr @1:1-1:25\n"
                                                    "      values:\n"
                                                    "        Constant str 'a' @1:1-1:25\n"
                                                    "        FormattedValue conversion=r @1:4-1:14\n"
                                                    "          value: Name x Load @1:5-1:6\n"
                                                    "          format_spec: JoinedStr @1:1-1:25\n"
                                                    "            values:\n"
                                                    "              Constant str '>' @1:1-1:25\n"
                                                    "              FormattedValue @1:10-1:13\n"
                                                    "                value: Name w Load @1:11-1:12\n"
                                                    "        Constant str 'b{c}y=' @1:1-1:25\n"
                                                    "        FormattedValue conversion=r @1:20-1:24\n"
                                                    "          value: Name y Load @1:21-1:22\n");
  // Expression parts are parsed in place: their nodes carry real positions, even across lines.
  CHECK(parse("f'''{\n  a +\n  b}'''\n").dump.find("BinOp Add @2:3-3:4") != std::string::npos);
}

TEST_CASE("literals are converted", "[python][parser]") {
  auto dump =
      parse("x = (1_000, 0xff, 0o17, 0b101, 9223372036854775807, 9223372036854775808, 0x1_0000_0000_0000_0000,\n"
            "     1.5e3, .25, 1e400, 2j, 'caf\\xe9 \\u20ac', b'\\x00\\xff', r'\\n', 'a' \"b\")\n")
          .dump;
  CHECK(dump.find("Constant int 1000 ") != std::string::npos);
  CHECK(dump.find("Constant int 255 ") != std::string::npos);
  CHECK(dump.find("Constant int 15 ") != std::string::npos);
  CHECK(dump.find("Constant int 5 ") != std::string::npos);
  CHECK(dump.find("Constant int 9223372036854775807 ") != std::string::npos);
  CHECK(dump.find("Constant int big:9223372036854775808 ") != std::string::npos);
  CHECK(dump.find("Constant int big:18446744073709551616 ") != std::string::npos);
  CHECK(dump.find("Constant float 1500.0 ") != std::string::npos);
  CHECK(dump.find("Constant float 0.25 ") != std::string::npos);
  CHECK(dump.find("Constant float inf ") != std::string::npos);
  CHECK(dump.find("Constant complex 2.0j ") != std::string::npos);
  CHECK(dump.find("Constant str 'caf\xC3\xA9 \xE2\x82\xAC' ") != std::string::npos);
  CHECK(dump.find("Constant bytes b'\\x00\\xff' ") != std::string::npos);
  CHECK(dump.find("Constant str '\\\\n' ") != std::string::npos);
  CHECK(dump.find("Constant str 'ab' ") != std::string::npos);
}

TEST_CASE("the values of converted literals", "[python][parser]") {
  SourceManager sources;
  FileId file =
      sources.add_buffer("v.py", "a = 0x7fff_ffff_ffff_ffff\nb = 0xffff_ffff_ffff_ffff\nc = 'caf\\xe9'\nd = 1e-3\n");
  DiagnosticEngine diags(sources);
  auto module = parse_module(sources, file, diags);
  REQUIRE(module);
  REQUIRE(module->constants.size() == 4);
  const auto &a = module->constants[0].value->as<ConstantExpr>();
  CHECK(a.value_kind == ConstantKind::Int);
  CHECK(a.int_value == INT64_MAX);
  CHECK_FALSE(a.int_overflow);
  const auto &b = module->constants[1].value->as<ConstantExpr>();
  CHECK(b.int_overflow);
  CHECK(b.text == "0xffffffffffffffff");
  CHECK(module->constants[2].value->as<ConstantExpr>().text == "caf\xC3\xA9");
  CHECK(module->constants[3].value->as<ConstantExpr>().float_value == 1e-3);
}

TEST_CASE("source forms: CRLF, no final newline, BOM, form feed, tabs", "[python][parser]") {
  std::string expected = parse("if x:\n    y = 1\nz = 2\n").dump;
  CHECK(parse("if x:\r\n    y = 1\r\nz = 2\r\n").dump == expected);
  CHECK(parse("if x:\n    y = 1\nz = 2").dump == expected);
  CHECK(parse("\xEF\xBB\xBFif x:\n    y = 1\nz = 2\n").dump.find("If @1:4-2:10") != std::string::npos);
  CHECK(parse("if x:\n\ty = 1\nz = 2\n").ok);
  CHECK(parse("\fif x:\n    y = 1\n\f\nz = 2\n").ok);
  CHECK(parse("x = 1 # trailing comment").ok);
  CHECK(parse("def f():\n    pass\n    # comment at a different indent\n  # another\nx = 1\n").ok);
}

TEST_CASE("the module-level view", "[python][parser]") {
  SourceManager sources;
  FileId file = sources.add_buffer("tensor_add.py", read_file(data_path("tensor_add.py")));
  DiagnosticEngine diags(sources);
  auto module = parse_module(sources, file, diags);
  REQUIRE(module);
  REQUIRE(module->imports.size() == 4);
  CHECK(module->imports[0].module == "numpy");
  CHECK(module->imports[0].bound == "np");
  CHECK(module->imports[1].module == "neuronxcc.nki");
  CHECK(module->imports[1].bound == "nki");
  CHECK(module->imports[2].module == "neuronxcc.nki.language");
  CHECK(module->imports[2].bound == "nl");
  CHECK(module->imports[3].module == "neuronxcc.nki.typing");
  CHECK(module->imports[3].name == "tensor");
  CHECK(module->imports[3].bound == "tensor");
  REQUIRE(module->functions.size() == 2);
  const FunctionDefStmt *kernel = module->function("tensor_add_kernel");
  REQUIRE(kernel);
  REQUIRE(kernel->decorators.size() == 1);
  CHECK(kernel->decorators[0]->as<AttributeExpr>().attr == "jit");
  CHECK(kernel->args->args.size() == 2);
  CHECK(module->function("missing") == nullptr);
  REQUIRE(module->constants.size() == 2);
  CHECK(module->constants[0].name == "TILE_P");
  CHECK(module->constants[0].value->as<ConstantExpr>().int_value == 128);

  SourceManager s2;
  FileId f2 =
      s2.add_buffer("m.py", "import a.b.c\nfrom neuronxcc import nki\nfrom ..x import y as z\nfrom .. import *\n"
                            "import neuronxcc.nki.language as nl\n");
  DiagnosticEngine d2(s2);
  auto m2 = parse_module(s2, f2, d2);
  REQUIRE(m2);
  REQUIRE(m2->imports.size() == 5);
  CHECK(m2->imports[0].bound == "a");
  CHECK(m2->imports[0].module == "a.b.c");
  CHECK(m2->imports[1].module == "neuronxcc");
  CHECK(m2->imports[1].name == "nki");
  CHECK(m2->imports[2].level == 2);
  CHECK(m2->imports[2].bound == "z");
  CHECK(m2->imports[3].name == "*");
  CHECK(m2->imports[4].bound == "nl");
}

TEST_CASE("syntax errors in CPython's words and columns", "[python][parser]") {
  // Source, then `line:col: message` as CPython 3.11 reports it ("" when it parses). The
  // f-string rows give nkicc's own, more precise columns (CPython's point past the string).
  struct Row {
    const char *source;
    const char *expected;
  };
  static const Row rows[] = {
      {"x = = 1\ny = 'abc\n", "2:5: unterminated string literal (detected at line 2)"},
      {"f() = 1\n", "1:1: cannot assign to function call here. Maybe you meant '==' instead of '='?"},
      {"if x = 1:\n  pass\n", "1:4: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
      {"def f(:\n  pass\n", "1:7: invalid syntax"},
      {"def f()\n  pass\n", "1:8: expected ':'"},
      {"def f():\npass\n", "2:1: expected an indented block after function definition on line 1"},
      {"if x:\npass\n", "2:1: expected an indented block after 'if' statement on line 1"},
      {"for x in y:\nz\n", "2:1: expected an indented block after 'for' statement on line 1"},
      {"  x = 1\n", "1:2: unexpected indent"},
      {"if x:\n    a\n  b\n", "3:4: unindent does not match any outer indentation level"},
      {"x = 'abc\n", "1:5: unterminated string literal (detected at line 1)"},
      {"x = '''abc\n\n", "1:5: unterminated triple-quoted string literal (detected at line 2)"},
      {"x = (1,\ny = 2\n", "1:5: '(' was never closed"},
      {"foo(a, b\n", "1:4: '(' was never closed"},
      {"x = )\n", "1:5: unmatched ')'"},
      {"x = (1]\n", "1:7: closing parenthesis ']' does not match opening parenthesis '('"},
      {"x = 1abc\n", "1:5: invalid decimal literal"},
      {"x = 0x\n", "1:6: invalid hexadecimal literal"},
      {"x = 012\n",
       "1:5: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers"},
      {"x = [a b]\n", "1:6: invalid syntax. Perhaps you forgot a comma?"},
      {"x = f'{a'\n", "1:9: f-string: expecting '}'"},
      {"x = f'}'\n", "1:7: f-string: single '}' is not allowed"},
      {"x = f'{}'\n", "1:8: f-string: empty expression not allowed"},
      {"x = f'{a!x}'\n", "1:10: f-string: invalid conversion character: expected 's', 'r', or 'a'"},
      {"if x:\n\ty\n        z\n", "3:1: inconsistent use of tabs and spaces in indentation"},
      {"x = 1 +\n", "1:8: invalid syntax"},
      {"del f()\n", "1:5: cannot delete function call"},
      {"f() += 1\n", "1:1: 'function call' is an illegal expression for augmented assignment"},
      {"1 = x\n", "1:1: cannot assign to literal here. Maybe you meant '==' instead of '='?"},
      {"a + b = c\n", "1:1: cannot assign to expression here. Maybe you meant '==' instead of '='?"},
      {"f(a=1, b)\n", "1:9: positional argument follows keyword argument"},
      {"f(**k, *a)\n", "1:8: iterable argument unpacking follows keyword argument unpacking"},
      {"f(x for x in y, 1)\n", "1:3: Generator expression must be parenthesized"},
      {"def f(a=1, b): pass\n", "1:12: non-default argument follows default argument"},
      {"def f(*): pass\n", "1:7: named arguments must follow bare *"},
      {"try:\n  pass\nx = 1\n", "3:1: expected 'except' or 'finally' block"},
      {"from x import a,\n", "1:17: trailing comma not allowed without surrounding parentheses"},
      {"x = 1 \\ y\n", "1:8: unexpected character after line continuation character"},
      {"x = $\n", "1:5: invalid syntax"},
      {"x = \xE2\x82\xAC"
       "\n",
       "1:5: invalid character '\xE2\x82\xAC"
       "' (U+20AC)"},
      {"print 'hi'\n", "1:1: Missing parentheses in call to 'print'. Did you mean print(...)?"},
      {"class A\n  pass\n", "1:8: expected ':'"},
      {"while x\n  pass\n", "1:8: expected ':'"},
      {"x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = (x = "
       "(x = (x = (x = (x = (x = (x = (x = (x = "
       "())))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
       ")))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
       ")))))))))))))))))))))))))))))\n",
       "1:1005: too many nested parentheses"},
      {"with open(x) as f\n  pass\n", "1:18: expected ':'"},
      {"lambda x: (yield)\n", ""},
      {"a, b += 1\n", "1:1: 'tuple' is an illegal expression for augmented assignment"},
      {"x = yield = 1\n", "1:5: assignment to yield expression not possible"},
      {"return\n", ""},
      {"import a.b as\n", "1:14: invalid syntax"},
      {"from . import (a, b\n", "1:15: '(' was never closed"},
      {"x = {1: 2, 3}\n", "1:12: ':' expected after dictionary key"},
      {"x = {**a: 1}\n", "1:9: invalid syntax"},
      {"else:\n  pass\n", "1:1: invalid syntax"},
      {"x = 1\n  y = 2\n", "2:2: unexpected indent"},
      {"@dec\nx = 1\n", "2:1: invalid syntax"},
      {"def f(a, a): pass\n", ""},
      {"f(a for a in b, c for c in d)\n", "1:3: Generator expression must be parenthesized"},
      {"x = 1 if y\n", "1:5: expected 'else' after 'if' expression"},
      {"x = a[1:2:3:4]\n", "1:12: invalid syntax"},
      {"nonlocal x\n", ""},
      {"x = 0b102\n", "1:9: invalid digit '2' in binary literal"},
      {"x = 1_\n", "1:6: invalid decimal literal"},
      {"x = 1__0\n", "1:6: invalid decimal literal"},
      {"x = 1e\n", "1:5: invalid decimal literal"},
      {"x = 0o8\n", "1:7: invalid digit '8' in octal literal"},
      {"x = 5j2\n", "1:6: invalid imaginary literal"},
      {"x = 1.2.3\n", "1:8: invalid syntax"},
      {"x = f'{a:{b:{c}}}'\n", "1:12: f-string: expressions nested too deeply"},
      {"x = f'{a b}'\n", "1:8: f-string: invalid syntax. Perhaps you forgot a comma?"},
      {"x = f'{#}'\n", "1:8: f-string expression part cannot include '#'"},
      {"x = f'{a\\n}'\n", "1:9: f-string expression part cannot include a backslash"},
      {"x = '\\N{foo}'\n", "1:14: (unicode error) 'unicodeescape' codec can't decode bytes in position 0-6: unknown "
                           "Unicode character name"},
      {"x = b'\xC3\xA9"
       "'\n",
       "1:5: bytes can only contain ASCII literal characters"},
      {"x = 'a' 'b' f'c' b'd'\n", "1:22: cannot mix bytes and nonbytes literals"},
      {"f(a, *b, c=1, **d, e=2)\n", ""},
      {"x: int = 1\n(y): int\na.b: int\n", ""},
      {"(a, b): int\n", "1:1: only single target (not tuple) can be annotated"},
      {"for x in 1, 2:\n  pass\n", ""},
      {"with (a as b, c as d):\n  pass\n", ""},
      {"try:\n  pass\nexcept* E:\n  pass\n", ""},
      {"x = not\n", "1:8: invalid syntax"},
      {"pass; pass;\n", ""},
      {"pass;;\n", "1:6: invalid syntax"},
      {"if x:\n  pass\n else:\n  pass\n", "3:7: unindent does not match any outer indentation level"},
      {"x = [\n", "1:5: '[' was never closed"},
      {"x = \"\"\"\n", "1:5: unterminated triple-quoted string literal (detected at line 1)"},
      {"x = 1\n\\", "2:2: unexpected EOF while parsing"},
      {"def f():\n    '''doc'''\n    return\n\n\n\n", ""},
      {"x = (1 +\n  2\n", "1:5: '(' was never closed"},
      {")\n", "1:1: unmatched ')'"},
      {"x = (1\n)\n)\n", "3:1: unmatched ')'"},
      {"def f(x, /, y, *, z): pass\n", ""},
      {"def f(x, /, y, /): pass\n", "1:16: / may appear only once"},
      {"def f(**k, a): pass\n", "1:12: arguments cannot follow var-keyword argument"},
      {"def f(*, **k): pass\n", "1:7: named arguments must follow bare *"},
      {"a := 1\n", "1:3: invalid syntax"},
      {"(a.b := 1)\n", "1:2: cannot use assignment expressions with attribute"},
      {"x = *a\n", ""},
      {"*a = 1\n", ""},
      {"print(*a if b else c)\n", ""},
      {"x = 1 if 2 else\n", "1:16: invalid syntax"},
      {"import\n", "1:7: invalid syntax"},
      {"from x import\n", "1:14: invalid syntax"},
      {"from x import *, a\n", "1:16: invalid syntax"},
      {"global\n", "1:7: invalid syntax"},
      {"assert\n", "1:7: invalid syntax"},
      {"raise from x\n", "1:7: invalid syntax"},
      {"x.y() = 1\n", "1:1: cannot assign to function call here. Maybe you meant '==' instead of '='?"},
      {"f'{x}' = 1\n", "1:1: cannot assign to f-string expression here. Maybe you meant '==' instead of '='?"},
      {"None = 1\n", "1:1: cannot assign to None"},
      {"True = 1\n", "1:1: cannot assign to True"},
      {"x = 1 = 2\n", "1:5: cannot assign to literal"},
      {"for 1 in x: pass\n", "1:5: cannot assign to literal"},
      {"for f() in x: pass\n", "1:5: cannot assign to function call"},
      {"with a as f(): pass\n", "1:11: cannot assign to function call"},
      {"[x for 1 in y]\n", "1:8: cannot assign to literal"},
      {"x = lambda: yield\n", "1:13: invalid syntax"},
      {"x = (a, b for c in d)\n", "1:11: invalid syntax"},
      {"\tif x:\n", "1:1: unexpected indent"},
      {"if x:\n\tpass\n        pass\n", "3:1: inconsistent use of tabs and spaces in indentation"},
      {"if x:\n        pass\n\tpass\n", "3:1: inconsistent use of tabs and spaces in indentation"},
      {"x = '\\'\n", "1:5: unterminated string literal (detected at line 1)"},
      {"def f():\n  x = 1\n    y = 2\n", "3:4: unexpected indent"},
      {"x = \"abc\n", "1:5: unterminated string literal (detected at line 1)"},
      {"x = 'a' \\\n 'b'\n", ""},
      {"\xEF\xBB\xBF"
       "x = 1\n",
       ""},
      {"x = u'a' U'b' R'c' rb'd' Br'e' F'f' rF'g'\n", "1:42: cannot mix bytes and nonbytes literals"},
      {"x = ur'a'\n", "1:7: invalid syntax"},
      {"in = 1\n", "1:1: invalid syntax"},
      {"x = a.1\n", "1:6: invalid syntax"},
      {"x = 1.e5 + .5 + 5. + 1_0.0_1e+1_0j\n", ""},
      {"def f():\n  pass\n   \n# c\nx\n", ""},
      {"\fx = 1\n", ""},
      {"if x:\n  \f  y\n", ""},
      {"x = (\n#c\n1)\n", ""},
      {"f(a.b=1)\n", "1:3: expression cannot contain assignment, perhaps you meant \"==\"?"},
      {"f(1=2)\n", "1:3: expression cannot contain assignment, perhaps you meant \"==\"?"},
      {"if x:\n  pass\nelif y:\npass\n", "4:1: expected an indented block after 'elif' statement on line 3"},
      {"if x:\n  pass\nelse:\npass\n", "4:1: expected an indented block after 'else' statement on line 3"},
      {"while x:\npass\n", "2:1: expected an indented block after 'while' statement on line 1"},
      {"with a:\npass\n", "2:1: expected an indented block after 'with' statement on line 1"},
      {"try:\npass\n", "2:1: expected an indented block after 'try' statement on line 1"},
      {"try:\n  pass\nexcept E:\npass\n", "4:1: expected an indented block after 'except' statement on line 3"},
      {"try:\n  pass\nfinally:\npass\n", "4:1: expected an indented block after 'finally' statement on line 3"},
      {"class A:\npass\n", "2:1: expected an indented block after class definition on line 1"},
      {"try:\n  pass\nexcept* E:\npass\n", "4:1: expected an indented block after 'except*' statement on line 3"},
      {"for x in y:\n  pass\nelse:\npass\n", "4:1: expected an indented block after 'else' statement on line 3"},
      {"x = f'{a' 'b'\n", "1:9: f-string: expecting '}'"},
      {"x = f\"{a['b']}\"\n", ""},
      {"x = f'{a:{b}}'\n", ""},
      {"x = f'{a=}'\n", ""},
      {"x = f'{a = !s:>10}'\n", ""},
      {"x = f'{ {1:2}[1] }'\n", ""},
      {"x = f'{a!r:}'\n", ""},
      {"x = f'{3!=4}'\n", ""},
      {"x = f'{a:=1}'\n", ""},
      {"x = f'{(a:=1)}'\n", ""},
      {"x = f'{}}'\n", "1:8: f-string: empty expression not allowed"},
      {"x = f'{{}}'\n", ""},
      {"x = f'{a}}'\n", "1:10: f-string: single '}' is not allowed"},
      {"x = f'{a:{{}}}'\n", ""},
      {"x = f'{lambda x:1}'\n", "1:16: f-string: invalid syntax"},
      {"x = f'{yield}'\n", ""},
      {"x = f'{*a}'\n", "1:8: f-string: cannot use starred expression here"},
      {"x = f'{*a,}'\n", ""},
      {"x = f'{a,b}'\n", ""},
      {"x = '\\x4'\n",
       "1:10: (unicode error) 'unicodeescape' codec can't decode bytes in position 0-2: truncated \\xXX escape"},
      {"x = b'\\u1234'\n", ""},
      {"x = '\\777'\n", ""},
      {"x = 'a\\\nb'\n", ""},
      {"def f(a, *, b=1, c, **d) -> int: pass\n", ""},
      {"lambda *a, b=1, **c: 0\n", ""},
      {"lambda: (yield)\n", ""},
      {"x = [i for i in range(3) if i if i]\n", ""},
      {"x = yield from\n", "1:15: invalid syntax"},
      {"a[1:2, ::3, ...]\n", ""},
      {"x = (yield)\n", ""},
      {"x = a if b else lambda: c\n", ""},
      {"x = 1 if 2 else 3 if 4 else 5\n", ""},
      {"x = -2 ** -3\n", ""},
      {"x = not a == b\n", ""},
      {"x = a < b < c\n", ""},
      {"x = a not in b is not c\n", ""},
      {"del a, b[1], c.d\n", ""},
      {"del (a, b), [c]\n", ""},
      {"global a, b\n", ""},
      {"print(f'{x!r}')\n", ""},
      {"raise\n", ""},
      {"raise X from Y\n", ""},
      {"assert x, 'm'\n", ""},
      {"from .. import a\n", ""},
      {"from ...a.b import (c as d, e,)\n", ""},
      {"from . a import b\n", ""},
      {"import a.b.c as d, e\n", ""},
      {"x = {**a, 'b': 1}\n", ""},
      {"x = {*a, 1}\n", ""},
      {"x = {}\n", ""},
      {"x = ()\n", ""},
      {"x = (1,)\n", ""},
      {"x = [*a, *b]\n", ""},
      {"f(*a, **b)\n", ""},
      {"f(x for x in y)\n", ""},
      {"f(a)(b)[c].d\n", ""},
      {"for x, in y: pass\n", ""},
      {"for (x, y) in z: pass\n", ""},
      {"x = a @ b\n", ""},
      {"x @= 1\n", ""},
      {"x //= 2\n", ""},
      {"x **= 2\n", ""},
      {"x >>= 1\n", ""},
      {"with a as (b, c): pass\n", ""},
      {"with (a, b): pass\n", ""},
      {"with (a): pass\n", ""},
      {"with (a) as b, c: pass\n", ""},
      {"with (yield): pass\n", ""},
      {"class A(B, metaclass=M, **k): pass\n", ""},
      {"@a.b(c)\n@d[e]\nclass A: pass\n", ""},
      {"def f(a, /): pass\n", ""},
      {"x = 1 if True else 2\n", ""},
      {"x = 0xFF_FF + 0o17 + 0b1_0 + 1_000\n", ""},
      {"x = 99999999999999999999999\n", ""},
      {"x = 1e400\n", ""},
      {"x = 0_0\n", ""},
      {"x = 00\n", ""},
      {"x = 0e0\n", ""},
      {"x = 09.5\n", ""},
      {"x = 09\n",
       "1:5: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers"},
      {"x = 09j\n", ""},
      {"f(**a, b=1)\n", ""},
      {"f(**a, b)\n", "1:9: positional argument follows keyword argument unpacking"},
      {"f(a=1, *b)\n", ""},
      {"f(a, b=1, c)\n", "1:12: positional argument follows keyword argument"},
      {"f(a=1,)\n", ""},
      {"f(,)\n", "1:3: invalid syntax"},
      {"f(a b)\n", "1:3: invalid syntax. Perhaps you forgot a comma?"},
      {"x = a[]\n", "1:7: invalid syntax"},
      {"x = a[1:2:]\n", ""},
      {"x = a[b:=1]\n", ""},
      {"x = a[*b]\n", ""},
      {"x = 1\n\n\n", ""},
      {"x", ""},
      {"if x:\n  y", ""},
      {"if x:\n  y\n", ""},
      {"\n\n\n", ""},
      {"", ""},
      {"#c", ""},
      {"x = (\n", "1:5: '(' was never closed"},
      {"x = 'a\\\n", "1:5: unterminated string literal (detected at line 1)"},
      {"def f(\n  a,\n  b,\n):\n  pass\n", ""},
      {"x = [x for x in y for z in w]\n", ""},
      {"{x: y for x, y in z}\n", ""},
      {"{x for x in y}\n", ""},
      {"(x for x in y)\n", ""},
      {"x := 1\n", "1:3: invalid syntax"},
      {"(x := 1)\n", ""},
      {"f(x := 1)\n", ""},
      {"x = (a := 1, b := 2)\n", ""},
      {"[y := 1, y**2]\n", ""},
      {"@dec\ndef f(): pass\n", ""},
      {"x = 1;y=2\n", ""},
      {"if x: a; b\n", ""},
      {"if x: pass\nelif y: pass\nelse: pass\n", ""},
      {"while 1: break\nelse: pass\n", ""},
      {"x: int\n", ""},
      {"x: int = yield\n", ""},
      {"x = *a, *b\n", ""},
      {"*a, b = c\n", ""},
      {"a, *b, c = d\n", ""},
      {"[a, b] = c\n", ""},
      {"(a) = b\n", ""},
      {"a.b = c[d] = e\n", ""},
      {"lambda x=1, /, y=2: x\n", ""},
      {"x = 1 +\\\n  2\n", ""},
      {"if True:\n    x = (1,\n  2)\n    y = 3\n", ""},
      {"x = 'a' f'{b}' 'c'\n", ""},
      {"x = rb'\\n' br'\\x'\n", ""},
      {"x = f'\\n{a}\\t'\n", ""},
      {"x = rf'\\n{a}'\n", ""},
      {"x = f'{a}' f'{b}'\n", ""},
      {"x = f'{\"a\"}'\n", ""},
      {"x = f'''{\n a\n}'''\n", ""},
  };
  for (const Row &row : rows) {
    INFO("source: " << row.source);
    ParseResult r = parse(row.source);
    CHECK(r.error == row.expected);
    CHECK(r.ok == (row.expected[0] == '\0'));
    CHECK(r.diagnostics == (r.ok ? 0u : 1u));
  }
}

TEST_CASE("diagnostics render with the caret line", "[python][parser]") {
  SourceManager sources;
  FileId file = sources.add_buffer("k.py", "def f()\n    return 1\n");
  DiagnosticEngine diags(sources);
  CHECK_FALSE(parse_module(sources, file, diags));
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(diags.diagnostics()[0].id == "syntax-error");
  CHECK(render_diagnostic(diags.diagnostics()[0], sources, {}) == "k.py:1:8: error: expected ':' [syntax-error]\n"
                                                                  "def f()\n"
                                                                  "       ^\n");
}

TEST_CASE("deep nesting ends in a diagnostic, never a stack overflow", "[python][parser]") {
  const std::string overflow = "parser stack overflowed - Python source too complex to parse";
  CHECK(error_of("x = " + std::string(1000000, '(')) == "1:205: too many nested parentheses");
  CHECK(error_of("x = " + std::string(1000000, '[') + "\n") == "1:205: too many nested parentheses");
  CHECK(error_of(std::string(1000000, '-') + "1\n").find(overflow) != std::string::npos);
  CHECK(error_of(std::string(1000000, '~')).find(overflow) != std::string::npos);
  std::string nots, lambdas, conds, powers;
  for (int i = 0; i < 100000; ++i) {
    nots += "not ";
    lambdas += "lambda: ";
    conds += "a if b else ";
    powers += "2**";
  }
  CHECK(error_of(nots + "x\n").find(overflow) != std::string::npos);
  CHECK(error_of(lambdas + "0\n").find(overflow) != std::string::npos);
  CHECK(error_of(conds + "c\n").find(overflow) != std::string::npos);
  CHECK(error_of(powers + "2\n").find(overflow) != std::string::npos);
  // Nesting CPython accepts is accepted.
  CHECK(parse("x = " + std::string(199, '(') + "-1" + std::string(199, ')') + "\n").ok);
  CHECK(parse("x = " + std::string(100, '[') + std::string(100, ']') + "\n").ok);
  CHECK(parse("x = " + std::string(500, '-') + "1\n").ok);
  // Long chains are loops, but the trees they build are as deep as they are long: bounded too.
  std::string attrs = "x", calls = "f", sums = "1", short_sums = "1";
  for (int i = 0; i < 200000; ++i) {
    attrs += ".y";
    calls += "()";
    sums += "+1";
  }
  for (int i = 0; i < 500; ++i)
    short_sums += "+1";
  CHECK(error_of(attrs + "\n").find(overflow) != std::string::npos);
  CHECK(error_of(calls + "\n").find(overflow) != std::string::npos);
  CHECK(error_of(sums + "\n").find(overflow) != std::string::npos);
  CHECK(parse(short_sums + "\n").ok);
  // f-strings nest through their expression parts.
  CHECK(parse("f'''{f\"{f'{1}'}\"}'''\n").ok);
}

namespace {

/// A small deterministic generator (xorshift64*), so the fuzz inputs are the same everywhere.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 2685821657736338717ull;
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
};

/// Parses a mutant: it must give a module and no diagnostic, or exactly one located error.
void check_mutant(const std::string &text) {
  SourceManager sources;
  FileId file = sources.add_buffer("mutant.py", text);
  DiagnosticEngine diags(sources);
  auto module = parse_module(sources, file, diags);
  if (module) {
    REQUIRE(diags.diagnostics().empty());
    std::string dump = dump_ast(*module, sources);
    REQUIRE(dump.rfind("Module\n", 0) == 0);
    return;
  }
  REQUIRE(diags.diagnostics().size() == 1);
  const Diagnostic &d = diags.diagnostics()[0];
  REQUIRE(d.id == "syntax-error");
  REQUIRE(d.loc.file == file);
  REQUIRE(d.loc.offset <= text.size());
  REQUIRE_FALSE(d.message.empty());
  REQUIRE(!render_diagnostic(d, sources, {}).empty());
}

std::string mutate(const std::string &source, Rng &rng) {
  static const char *const inserts[] = {"(",    ")",  "[",  "]",    "{",  "}",      "'",    "\"",
                                        "'''",  "\n", "\t", "    ", ":",  ",",      "\\",   "#",
                                        "f'{",  "}'", "=",  "*",    "**", "lambda", "\r\n", "\xC3\xA9",
                                        "\xFF", "0x", "1_", ".",    "@",  "not ",   "if ",  "else"};
  std::string text = source;
  int edits = 1 + static_cast<int>(rng.below(4));
  for (int e = 0; e < edits && !text.empty(); ++e) {
    std::size_t at = rng.below(text.size());
    switch (rng.below(6)) {
    case 0:
      text[at] = static_cast<char>(text[at] ^ (1 << rng.below(8)));
      break;
    case 1:
      text.erase(at, 1 + rng.below(8));
      break;
    case 2:
      text.insert(at, inserts[rng.below(sizeof inserts / sizeof *inserts)]);
      break;
    case 3:
      text.resize(at);
      break;
    case 4: {
      // Duplicate a line elsewhere: indentation and block structure go wrong.
      std::size_t begin = text.rfind('\n', at);
      begin = begin == std::string::npos ? 0 : begin + 1;
      std::size_t end = text.find('\n', at);
      end = end == std::string::npos ? text.size() : end + 1;
      text.insert(rng.below(text.size()), text.substr(begin, end - begin));
      break;
    }
    default:
      text[at] = static_cast<char>(rng.below(256));
      break;
    }
  }
  return text;
}

} // namespace

TEST_CASE("mutated and truncated kernel sources never crash the parser", "[python][parser][fuzz]") {
  Rng rng{0x6e6b69636375ull};
  int parsed = 0;
  for (const char *name : kKernelFiles) {
    std::string source = read_file(data_path(name));
    REQUIRE(!source.empty());
    // Truncation at every offset (every third one for the long files, to bound the run time).
    std::size_t step = source.size() > 4000 ? 3 : 1;
    for (std::size_t cut = 0; cut <= source.size(); cut += step) {
      check_mutant(source.substr(0, cut));
      ++parsed;
    }
    for (int i = 0; i < 1500; ++i) {
      check_mutant(mutate(source, rng));
      ++parsed;
    }
  }
  CHECK(parsed > 10000);
}

TEST_CASE("parse throughput", "[.bench][python-bench]") {
  const char *path = std::getenv("NKICC_BENCH_FILE");
  if (!path) {
    WARN("set NKICC_BENCH_FILE to a large Python file");
    return;
  }
  std::string text = read_file(path);
  REQUIRE(!text.empty());
  std::size_t lines = 0;
  for (char c : text)
    lines += c == '\n';
  double best = 1e30;
  for (int run = 0; run < 3; ++run) {
    SourceManager sources;
    FileId file = sources.add_buffer(path, text);
    DiagnosticEngine diags(sources);
    auto start = std::chrono::steady_clock::now();
    auto module = parse_module(sources, file, diags);
    auto stop = std::chrono::steady_clock::now();
    REQUIRE(module);
    best = std::min(best, std::chrono::duration<double>(stop - start).count());
  }
  double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("nkicc parse: %.1f MB, %zu lines, %.3f s, %.1f MB/s, %.0f lines/s\n", mb, lines, best, mb / best,
              static_cast<double>(lines) / best);
}
