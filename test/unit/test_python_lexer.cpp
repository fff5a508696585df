// The Python tokenizer: token kinds, INDENT/DEDENT, line joining, and its errors in CPython's
// words at CPython's columns.
#include "nkicc/python/lexer.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nkicc::python;

namespace {

/// Token kinds as a space-separated string (operators and keywords by spelling).
std::string kinds(std::string_view text) {
  TokenStream stream;
  auto err = tokenize(text, stream);
  if (err)
    return "error@" + std::to_string(err->offset) + ": " + err->message;
  std::string out;
  for (const Token &t : stream.tokens) {
    if (!out.empty())
      out += ' ';
    out += token_spelling(t.kind);
    if (t.in_brackets)
      out += "(in-brackets)";
  }
  return out;
}

/// The tokenizer error as `offset: message`, or "" when the text tokenizes.
std::string lex_error(std::string_view text) {
  TokenStream stream;
  auto err = tokenize(text, stream);
  return err ? std::to_string(err->offset) + ": " + err->message : "";
}

} // namespace

TEST_CASE("tokens of simple statements", "[python][lexer]") {
  CHECK(kinds("x = 1\n") == "NAME = NUMBER NEWLINE ENDMARKER");
  CHECK(kinds("x = 1") == "NAME = NUMBER NEWLINE ENDMARKER");
  CHECK(kinds("") == "ENDMARKER");
  CHECK(kinds("\n\n# comment only\n   \n") == "ENDMARKER");
  CHECK(kinds("a += b ** c // d\n") == "NAME += NAME ** NAME // NAME NEWLINE ENDMARKER");
  CHECK(kinds("a->b:=c...d.e\n") == "NAME -> NAME := NAME ... NAME . NAME NEWLINE ENDMARKER");
  CHECK(kinds("a <<= b >>= c **= d //= e @= f != g\n") ==
        "NAME <<= NAME >>= NAME **= NAME //= NAME @= NAME != NAME NEWLINE ENDMARKER");
  CHECK(kinds("if not x is None and y in z or w: pass\n") ==
        "if not NAME is None and NAME in NAME or NAME : pass NEWLINE ENDMARKER");
  CHECK(kinds("$ ? `\n") == "ERRORTOKEN ERRORTOKEN ERRORTOKEN NEWLINE ENDMARKER");
}

TEST_CASE("indentation produces INDENT and DEDENT", "[python][lexer]") {
  CHECK(kinds("if x:\n    y\nz\n") == "if NAME : NEWLINE INDENT NAME NEWLINE DEDENT NAME NEWLINE ENDMARKER");
  CHECK(kinds("if x:\n  if y:\n    z\n") ==
        "if NAME : NEWLINE INDENT if NAME : NEWLINE INDENT NAME NEWLINE DEDENT DEDENT ENDMARKER");
  // Blank lines, comment lines and whitespace-only lines do not take part.
  CHECK(kinds("if x:\n\n    # c\n  \n    y\n") == "if NAME : NEWLINE INDENT NAME NEWLINE DEDENT ENDMARKER");
  // A tab advances to the next multiple of 8, consistently with 8 spaces.
  CHECK(kinds("if x:\n\ty\n\tz\n") == "if NAME : NEWLINE INDENT NAME NEWLINE NAME NEWLINE DEDENT ENDMARKER");
  // A form feed resets the column.
  CHECK(kinds("\fx = 1\n") == "NAME = NUMBER NEWLINE ENDMARKER");
  CHECK(kinds("if x:\n  \f  y\n") == "if NAME : NEWLINE INDENT NAME NEWLINE DEDENT ENDMARKER");
}

TEST_CASE("line joining inside brackets and after a backslash", "[python][lexer]") {
  CHECK(kinds("x = (1,\n     2)\n") == "NAME = ( NUMBER , NUMBER ) NEWLINE ENDMARKER");
  CHECK(kinds("x = [\n# c\n  1\n]\n") == "NAME = [ NUMBER ] NEWLINE ENDMARKER");
  CHECK(kinds("x = 1 + \\\n    2\n") == "NAME = NUMBER + NUMBER NEWLINE ENDMARKER");
  CHECK(kinds("x = (1,\r\n 2)\r\ny\r\n") == "NAME = ( NUMBER , NUMBER ) NEWLINE NAME NEWLINE ENDMARKER");
  CHECK(kinds("x\ry\r") == "NAME NEWLINE NAME NEWLINE ENDMARKER");
  CHECK(kinds("f(x\n") == "NAME ( NAME ENDMARKER(in-brackets)");
}

TEST_CASE("strings of every prefix are one token", "[python][lexer]") {
  CHECK(kinds("'a' \"b\" '''c\nd''' \"\"\"e\"\"\"\n") == "STRING STRING STRING STRING NEWLINE ENDMARKER");
  CHECK(kinds("r'\\\\' b'x' rb'y' BR'z' f'{x}' Rf'{y}' u'w' F\"{a['b']}\"\n") ==
        "STRING STRING STRING STRING STRING STRING STRING STRING NEWLINE ENDMARKER");
  // `ur` is not a prefix: a name, then a string.
  CHECK(kinds("ur'a'\n") == "NAME STRING NEWLINE ENDMARKER");
  CHECK(kinds("'a\\\nb'\n") == "STRING NEWLINE ENDMARKER");
}

TEST_CASE("numbers", "[python][lexer]") {
  CHECK(kinds("1 1_000 0x_FF 0o17 0b1_0 0 00 0_0 1.5 .5 5. 1e10 1E-3 1_0.0_1e+1_0 09.5 1j 2.5J 09j\n") ==
        "NUMBER NUMBER NUMBER NUMBER NUMBER NUMBER NUMBER NUMBER NUMBER NUMBER NUMBER NUMBER NUMBER NUMBER "
        "NUMBER NUMBER NUMBER NUMBER NEWLINE ENDMARKER");
  // A keyword right after a number ends it (CPython only warns).
  CHECK(kinds("1if x else 2\n") == "NUMBER if NAME else NUMBER NEWLINE ENDMARKER");
  CHECK(kinds("x = 1.e5\n") == "NAME = NUMBER NEWLINE ENDMARKER");
}

TEST_CASE("a UTF-8 BOM is skipped and identifiers may be non-ASCII", "[python][lexer]") {
  CHECK(kinds("\xEF\xBB\xBFx = 1\n") == "NAME = NUMBER NEWLINE ENDMARKER");
  CHECK(kinds("\xC3\xA9t\xC3\xA9 = 1\n") == "NAME = NUMBER NEWLINE ENDMARKER");
}

TEST_CASE("tokenizer errors", "[python][lexer]") {
  // Offsets are byte offsets; CPython's 1-based column is offset + 1.
  CHECK(lex_error("x = 'abc\n") == "4: unterminated string literal (detected at line 1)");
  CHECK(lex_error("x = 1\ny = \"abc") == "10: unterminated string literal (detected at line 2)");
  CHECK(lex_error("x = '''abc\n\n") == "4: unterminated triple-quoted string literal (detected at line 2)");
  CHECK(lex_error("x = )\n") == "4: unmatched ')'");
  CHECK(lex_error("x = (1]\n") == "6: closing parenthesis ']' does not match opening parenthesis '('");
  CHECK(lex_error("x = (1,\n2]\n") == "9: closing parenthesis ']' does not match opening parenthesis '(' on line 1");
  CHECK(lex_error("x = 1abc\n") == "4: invalid decimal literal");
  CHECK(lex_error("x = 1_\n") == "5: invalid decimal literal");
  CHECK(lex_error("x = 1__0\n") == "5: invalid decimal literal");
  CHECK(lex_error("x = 1e\n") == "4: invalid decimal literal");
  CHECK(lex_error("x = 1e+\n") == "6: invalid decimal literal");
  CHECK(lex_error("x = 0x\n") == "5: invalid hexadecimal literal");
  CHECK(lex_error("x = 0o8\n") == "6: invalid digit '8' in octal literal");
  CHECK(lex_error("x = 0b102\n") == "8: invalid digit '2' in binary literal");
  CHECK(lex_error("x = 5j2\n") == "5: invalid imaginary literal");
  CHECK(lex_error("x = 012\n") ==
        "4: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
  CHECK(lex_error("if x:\n    a\n  b\n") == "15: unindent does not match any outer indentation level");
  CHECK(lex_error("if x:\n\ty\n        z\n") == "9: inconsistent use of tabs and spaces in indentation");
  CHECK(lex_error("if x:\n        y\n\tz\n") == "16: inconsistent use of tabs and spaces in indentation");
  CHECK(lex_error("x = 1 \\ y\n") == "7: unexpected character after line continuation character");
  CHECK(lex_error("x = 1\n\\") == "7: unexpected EOF while parsing");
  CHECK(lex_error("x = \xE2\x82\xAC\n") == "4: invalid character '\xE2\x82\xAC' (U+20AC)");
  CHECK(lex_error("x = \xE2\x80\x9Chi\xE2\x80\x9D\n") == "4: invalid character '\xE2\x80\x9C' (U+201C)");
  CHECK(lex_error("x =\xC2\xA0"
                  "1\n") == "3: invalid non-printable character U+00A0");
  CHECK(lex_error("x = \x01\n") == "4: invalid non-printable character U+0001");
  CHECK(lex_error(std::string_view("x = \0\n", 6)) == "4: source code cannot contain null bytes");
  CHECK(lex_error("x = '\xFF'\n") ==
        "5: (unicode error) 'utf-8' codec can't decode byte 0xff in position 5: invalid start byte");
  CHECK(lex_error("x = 1\xC3") ==
        "5: (unicode error) 'utf-8' codec can't decode byte 0xc3 in position 5: unexpected end of data");
}

TEST_CASE("bracket and indentation depth are bounded", "[python][lexer]") {
  std::string deep(199, '(');
  CHECK(lex_error("x = " + deep + "1" + std::string(199, ')') + "\n").empty());
  CHECK(lex_error("x = " + std::string(1000000, '(')) == "204: too many nested parentheses");
  std::string nested;
  for (int i = 0; i < 101; ++i)
    nested += std::string(static_cast<std::size_t>(i), ' ') + "if x:\n";
  CHECK(lex_error(nested).find("too many levels of indentation") != std::string::npos);
}
