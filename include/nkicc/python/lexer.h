// The tokenizer for Python 3 source (CPython's Parser/tokenizer.c behaviour): INDENT/DEDENT from
// leading whitespace, implicit line joining inside brackets and explicit joining after a
// backslash, comments, strings of every prefix (kept whole: the parser decodes them), numbers.
#pragma once

#include "nkicc/python/token.h"
#include "nkicc/support/diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nkicc::python {

/// CPython's limit on bracket nesting (MAXLEVEL in Parser/tokenizer.h).
inline constexpr std::size_t kMaxBracketDepth = 200;
/// CPython's limit on indentation levels (MAXINDENT).
inline constexpr std::size_t kMaxIndentDepth = 100;

/// A tokenizer error, in CPython's words, at a byte offset.
struct LexError {
  std::uint32_t offset = 0;
  std::string message;
};

struct TokenStream {
  std::vector<Token> tokens; ///< always ends with an EndOfFile token
  /// Set when the buffer ended inside brackets: the offset of the innermost open bracket.
  std::optional<std::uint32_t> unclosed_bracket;
};

/// Tokenizes a whole buffer. On a tokenizer error, returns the error; the tokens before it are
/// still in `out`. `first_offset` and `bracket_level` let the f-string parser tokenize an
/// expression part in place: it starts inside brackets, so newlines are not significant.
std::optional<LexError> tokenize(std::string_view text, TokenStream &out);
std::optional<LexError> tokenize_range(std::string_view text, std::uint32_t begin, std::uint32_t end, TokenStream &out);

} // namespace nkicc::python
