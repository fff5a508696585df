// The tokens of Python 3 source, as CPython's tokenizer produces them (Grammar/Tokens), with
// keywords given their own kinds so the parser compares one byte instead of a string.
#pragma once

#include <cstdint>
#include <string_view>

namespace nkicc::python {

enum class TokenKind : std::uint8_t {
  EndOfFile,
  Newline,
  Indent,
  Dedent,
  Name,
  Number,
  String,
  /// A character that starts no token (`$`, `?`, a backtick): the parser rejects it with
  /// `invalid syntax` at its position, as CPython does.
  ErrorChar,

  // Operators and delimiters.
  LParen,
  RParen,
  LSquare,
  RSquare,
  LBrace,
  RBrace,
  Colon,
  Comma,
  Semi,
  Dot,
  Ellipsis,
  Arrow,
  ColonEqual,
  At,
  Equal,
  Plus,
  Minus,
  Star,
  Slash,
  DoubleSlash,
  Percent,
  DoubleStar,
  VBar,
  Amper,
  Circumflex,
  Tilde,
  LeftShift,
  RightShift,
  Less,
  Greater,
  EqEqual,
  NotEqual,
  LessEqual,
  GreaterEqual,
  PlusEqual,
  MinusEqual,
  StarEqual,
  SlashEqual,
  DoubleSlashEqual,
  PercentEqual,
  DoubleStarEqual,
  VBarEqual,
  AmperEqual,
  CircumflexEqual,
  LeftShiftEqual,
  RightShiftEqual,
  AtEqual,

  // Keywords (Python 3.11 `keyword.kwlist`).
  KwFalse,
  KwNone,
  KwTrue,
  KwAnd,
  KwAs,
  KwAssert,
  KwAsync,
  KwAwait,
  KwBreak,
  KwClass,
  KwContinue,
  KwDef,
  KwDel,
  KwElif,
  KwElse,
  KwExcept,
  KwFinally,
  KwFor,
  KwFrom,
  KwGlobal,
  KwIf,
  KwImport,
  KwIn,
  KwIs,
  KwLambda,
  KwNonlocal,
  KwNot,
  KwOr,
  KwPass,
  KwRaise,
  KwReturn,
  KwTry,
  KwWhile,
  KwWith,
  KwYield,
};

/// One token: its kind and the byte range [begin, end) of its text in the buffer. Indent,
/// Dedent and Newline tokens have the range of the whitespace or line end they stand for.
struct Token {
  TokenKind kind = TokenKind::EndOfFile;
  /// For EndOfFile: set when the file ended inside brackets (the `'(' was never closed` case).
  bool in_brackets = false;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

/// The spelling of a token kind for messages: `'('`, `'if'`, `NAME`, ...
std::string_view token_spelling(TokenKind kind);

/// The keyword kind spelled by `text`, or TokenKind::Name when it is not a keyword.
TokenKind keyword_kind(std::string_view text);

} // namespace nkicc::python
