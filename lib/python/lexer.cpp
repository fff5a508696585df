#include "nkicc/python/lexer.h"

#include <array>
#include <cstdio>

namespace nkicc::python {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_ascii_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ascii_ident_char(char c) { return is_ascii_ident_start(c) || is_digit(c); }
bool is_newline(char c) { return c == '\n' || c == '\r'; }

/// Decodes the UTF-8 sequence at `p` (already validated by check_utf8) and returns its length.
std::uint32_t decode_utf8(std::string_view text, std::uint32_t p, char32_t &cp) {
  auto b = static_cast<unsigned char>(text[p]);
  auto cont = [&](std::uint32_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[p + i]) & 0x3f); };
  if (b < 0x80) {
    cp = b;
    return 1;
  }
  if (b < 0xe0) {
    cp = (static_cast<char32_t>(b & 0x1f) << 6) | cont(1);
    return 2;
  }
  if (b < 0xf0) {
    cp = (static_cast<char32_t>(b & 0x0f) << 12) | (cont(1) << 6) | cont(2);
    return 3;
  }
  cp = (static_cast<char32_t>(b & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
  return 4;
}

// Python's str.isprintable() is false for separators and format characters; CPython names
// such a character `invalid non-printable character` rather than `invalid character`.
bool is_non_printable(char32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0xa0) || cp == 0xad || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) || (cp >= 0x205f && cp <= 0x206f) ||
         cp == 0x3000 || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0xe000 && cp <= 0xf8ff);
}

// Without the Unicode tables, punctuation and symbol blocks are what authors actually paste
// into code (smart quotes, the euro sign, arrows, math operators): those are not identifier
// characters; letters of every script are.
bool is_symbol(char32_t cp) {
  return (cp >= 0xa1 && cp <= 0xbf && cp != 0xaa && cp != 0xb5 && cp != 0xba) || cp == 0xd7 || cp == 0xf7 ||
         (cp >= 0x2010 && cp <= 0x2027) || (cp >= 0x2030 && cp <= 0x205e) || (cp >= 0x2190 && cp <= 0x2bff) ||
         (cp >= 0x20a0 && cp <= 0x20cf) || (cp >= 0x3001 && cp <= 0x3003) || (cp >= 0x3008 && cp <= 0x3020) ||
         (cp >= 0xff01 && cp <= 0xff0f) || (cp >= 0xff1a && cp <= 0xff20) || cp == 0xfffd;
}

std::string hex_code_point(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

/// Checks the whole buffer is UTF-8 (CPython decodes the file before tokenizing).
std::optional<LexError> check_utf8(std::string_view text, std::uint32_t begin, std::uint32_t end) {
  std::uint32_t p = begin;
  while (p < end) {
    // Fast path: eight ASCII bytes at a time.
    while (p + 8 <= end) {
      std::uint64_t word;
      __builtin_memcpy(&word, text.data() + p, 8);
      if (word & 0x8080808080808080ull)
        break;
      p += 8;
    }
    if (p >= end)
      break;
    auto b = static_cast<unsigned char>(text[p]);
    if (b < 0x80) {
      ++p;
      continue;
    }
    std::uint32_t len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    const char *reason = "invalid start byte";
    bool ok = len != 0;
    if (ok) {
      for (std::uint32_t i = 1; i < len; ++i) {
        if (p + i >= end) {
          ok = false;
          reason = "unexpected end of data";
          break;
        }
        auto c = static_cast<unsigned char>(text[p + i]);
        bool valid = (c & 0xc0) == 0x80;
        // Overlong forms, surrogates and code points past U+10FFFF are invalid too.
        if (i == 1 && valid) {
          if (b == 0xe0 && c < 0xa0)
            valid = false;
          if (b == 0xed && c >= 0xa0)
            valid = false;
          if (b == 0xf0 && c < 0x90)
            valid = false;
          if (b == 0xf4 && c >= 0x90)
            valid = false;
        }
        if (!valid) {
          ok = false;
          reason = "invalid continuation byte";
          break;
        }
      }
    }
    if (!ok) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "(unicode error) 'utf-8' codec can't decode byte 0x%02x in position %u: %s", b,
                    static_cast<unsigned>(p - begin), reason);
      return LexError{p, buf};
    }
    p += len;
  }
  return std::nullopt;
}

bool is_string_prefix(std::string_view word) {
  if (word.size() > 2)
    return false;
  bool r = false, b = false, u = false, f = false;
  for (char c : word) {
    switch (c | 0x20) {
    case 'r':
      if (r)
        return false;
      r = true;
      break;
    case 'b':
      if (b)
        return false;
      b = true;
      break;
    case 'u':
      if (u)
        return false;
      u = true;
      break;
    case 'f':
      if (f)
        return false;
      f = true;
      break;
    default:
      return false;
    }
  }
  return !(u && word.size() > 1) && !(b && f);
}

char closing_for(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

class Lexer {
public:
  Lexer(std::string_view text, std::uint32_t begin, std::uint32_t end, TokenStream &out, bool in_expression)
      : text_(text), pos_(begin), end_(end), out_(out), expression_mode_(in_expression) {}

  std::optional<LexError> run();

private:
  char at(std::uint32_t p) const { return p < end_ ? text_[p] : '\0'; }
  void emit(TokenKind kind, std::uint32_t begin, std::uint32_t end) {
    out_.tokens.push_back(Token{kind, false, begin, end});
    line_has_tokens_ = true;
  }
  std::uint32_t line_of(std::uint32_t offset) const {
    std::uint32_t line = 1;
    for (std::uint32_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n')))
        ++line;
    }
    return line;
  }
  // CPython reports most tokenizer errors at its read cursor: the column of the last character
  // it consumed. `cur` is the index of the next unread character.
  LexError error_at_cursor(std::uint32_t cur, std::string message) const {
    return LexError{cur > 0 ? cur - 1 : 0, std::move(message)};
  }

  std::optional<LexError> indentation();
  std::optional<LexError> identifier_or_string(std::uint32_t start);
  std::optional<LexError> string(std::uint32_t start, std::uint32_t quote);
  std::optional<LexError> number(std::uint32_t start);
  std::optional<LexError> verify_end_of_number(std::uint32_t p, const char *kind);
  std::optional<LexError> decimal_tail(std::uint32_t &p);
  std::optional<LexError> operator_token(std::uint32_t start);

  std::string_view text_;
  std::uint32_t pos_;
  std::uint32_t end_;
  TokenStream &out_;
  bool expression_mode_;
  bool line_has_tokens_ = false;
  bool at_line_start_ = true;
  std::vector<std::uint32_t> indents_{0};
  std::vector<std::uint32_t> alt_indents_{0};
  struct OpenBracket {
    char ch;
    std::uint32_t offset;
  };
  std::vector<OpenBracket> brackets_;
};

std::optional<LexError> Lexer::indentation() {
  std::uint32_t line_start = pos_;
  std::uint32_t col = 0, alt_col = 0;
  std::uint32_t p = pos_;
  for (;; ++p) {
    char c = at(p);
    if (c == ' ') {
      ++col;
      ++alt_col;
    } else if (c == '\t') {
      col = (col / 8 + 1) * 8;
      ++alt_col;
    } else if (c == '\f') {
      col = alt_col = 0;
    } else {
      break;
    }
  }
  pos_ = p;
  char c = at(p);
  // Blank and comment-only lines do not take part in indentation.
  if (p >= end_ || c == '#' || is_newline(c))
    return std::nullopt;
  at_line_start_ = false;
  auto tab_error = [&] { return LexError{line_start, "inconsistent use of tabs and spaces in indentation"}; };
  if (col == indents_.back()) {
    if (alt_col != alt_indents_.back())
      return tab_error();
  } else if (col > indents_.back()) {
    if (indents_.size() >= kMaxIndentDepth)
      return LexError{p, "too many levels of indentation"};
    if (alt_col <= alt_indents_.back())
      return tab_error();
    indents_.push_back(col);
    alt_indents_.push_back(alt_col);
    out_.tokens.push_back(Token{TokenKind::Indent, false, line_start, p});
  } else {
    while (indents_.size() > 1 && col < indents_.back()) {
      indents_.pop_back();
      alt_indents_.pop_back();
      out_.tokens.push_back(Token{TokenKind::Dedent, false, p, p});
    }
    if (col != indents_.back()) {
      std::uint32_t eol = p;
      while (eol < end_ && !is_newline(text_[eol]))
        ++eol;
      return LexError{eol, "unindent does not match any outer indentation level"};
    }
    if (alt_col != alt_indents_.back())
      return tab_error();
  }
  return std::nullopt;
}

std::optional<LexError> Lexer::run() {
  if (expression_mode_) {
    at_line_start_ = false;
  } else if (text_.substr(pos_, 3) == "\xEF\xBB\xBF") {
    pos_ += 3;
  }
  if (auto err = check_utf8(text_, pos_, end_))
    return err;
  for (;;) {
    if (at_line_start_ && brackets_.empty() && !expression_mode_) {
      if (auto err = indentation())
        return err;
    }
    while (pos_ < end_ && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\f'))
      ++pos_;
    if (pos_ >= end_)
      break;
    std::uint32_t start = pos_;
    char c = text_[pos_];
    if (c == '#') {
      while (pos_ < end_ && !is_newline(text_[pos_]))
        ++pos_;
      continue;
    }
    if (is_newline(c)) {
      pos_ += (c == '\r' && at(pos_ + 1) == '\n') ? 2 : 1;
      if (brackets_.empty() && !expression_mode_) {
        if (line_has_tokens_) {
          out_.tokens.push_back(Token{TokenKind::Newline, false, start, pos_});
          line_has_tokens_ = false;
        }
        at_line_start_ = true;
      }
      continue;
    }
    if (c == '\\') {
      char next = at(pos_ + 1);
      if (is_newline(next)) {
        pos_ += (next == '\r' && at(pos_ + 2) == '\n') ? 3 : 2;
        if (pos_ >= end_)
          return LexError{pos_, "unexpected EOF while parsing"};
        continue;
      }
      if (pos_ + 1 >= end_)
        return LexError{pos_ + 1, "unexpected EOF while parsing"};
      return LexError{pos_ + 1, "unexpected character after line continuation character"};
    }
    std::optional<LexError> err;
    if (is_ascii_ident_start(c) || static_cast<unsigned char>(c) >= 0x80) {
      err = identifier_or_string(start);
    } else if (is_digit(c) || (c == '.' && is_digit(at(pos_ + 1)))) {
      err = number(start);
    } else if (c == '"' || c == '\'') {
      err = string(start, start);
    } else {
      err = operator_token(start);
    }
    if (err)
      return err;
  }
  if (!brackets_.empty() && !expression_mode_) {
    out_.unclosed_bracket = brackets_.back().offset;
    out_.tokens.push_back(Token{TokenKind::EndOfFile, true, end_, end_});
    return std::nullopt;
  }
  if (!expression_mode_) {
    if (line_has_tokens_)
      out_.tokens.push_back(Token{TokenKind::Newline, false, end_, end_});
    for (std::size_t i = 1; i < indents_.size(); ++i)
      out_.tokens.push_back(Token{TokenKind::Dedent, false, end_, end_});
  }
  out_.tokens.push_back(Token{TokenKind::EndOfFile, false, end_, end_});
  return std::nullopt;
}

std::optional<LexError> Lexer::identifier_or_string(std::uint32_t start) {
  std::uint32_t p = start;
  bool ascii = true;
  while (p < end_) {
    char c = text_[p];
    if (is_ascii_ident_char(c)) {
      ++p;
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x80)
      break;
    char32_t cp;
    std::uint32_t len = decode_utf8(text_, p, cp);
    if (is_non_printable(cp))
      return LexError{p, "invalid non-printable character " + hex_code_point(cp)};
    if (is_symbol(cp))
      return LexError{p, "invalid character '" + std::string(text_.substr(p, len)) + "' (" + hex_code_point(cp) + ")"};
    ascii = false;
    p += len;
  }
  char next = at(p);
  if (ascii && (next == '"' || next == '\'') && is_string_prefix(text_.substr(start, p - start)))
    return string(start, p);
  std::string_view word = text_.substr(start, p - start);
  TokenKind kind = ascii ? keyword_kind(word) : TokenKind::Name;
  emit(kind, start, p);
  pos_ = p;
  return std::nullopt;
}

std::optional<LexError> Lexer::string(std::uint32_t start, std::uint32_t quote_pos) {
  char quote = text_[quote_pos];
  std::uint32_t p = quote_pos + 1;
  if (at(p) == quote && at(p + 1) == quote) {
    p += 2;
    for (;;) {
      if (p >= end_) {
        std::uint32_t last = end_ > 0 ? end_ - 1 : 0;
        return LexError{start, "unterminated triple-quoted string literal (detected at line " +
                                   std::to_string(line_of(last)) + ")"};
      }
      char c = text_[p];
      if (c == '\\') {
        p += 2;
      } else if (c == quote && at(p + 1) == quote && at(p + 2) == quote) {
        p += 3;
        break;
      } else {
        ++p;
      }
    }
  } else {
    for (;;) {
      if (p >= end_ || is_newline(text_[p])) {
        std::uint32_t where = p >= end_ ? (end_ > 0 ? end_ - 1 : 0) : p;
        return LexError{start, "unterminated string literal (detected at line " + std::to_string(line_of(where)) + ")"};
      }
      char c = text_[p];
      if (c == '\\') {
        if (at(p + 1) == '\r' && at(p + 2) == '\n')
          p += 3;
        else
          p += 2;
      } else if (c == quote) {
        ++p;
        break;
      } else {
        ++p;
      }
    }
  }
  p = std::min(p, end_);
  emit(TokenKind::String, start, p);
  pos_ = p;
  return std::nullopt;
}

std::optional<LexError> Lexer::verify_end_of_number(std::uint32_t p, const char *kind) {
  // `1if x else y` and friends tokenize (CPython only warns): a keyword that may follow a
  // number in valid code ends the number.
  char c = at(p);
  auto follows = [&](std::string_view rest) {
    return text_.substr(p + 1, rest.size()) == rest && p + 1 + rest.size() <= end_;
  };
  bool keyword = false;
  switch (c) {
  case 'a':
    keyword = follows("nd");
    break;
  case 'e':
    keyword = follows("lse");
    break;
  case 'f':
    keyword = follows("or");
    break;
  case 'i':
    keyword = at(p + 1) == 'f' || at(p + 1) == 'n' || at(p + 1) == 's';
    break;
  case 'o':
    keyword = follows("r");
    break;
  case 'n':
    keyword = follows("ot");
    break;
  default:
    break;
  }
  if (keyword)
    return std::nullopt;
  if (is_ascii_ident_char(c) || static_cast<unsigned char>(c) >= 0x80)
    return error_at_cursor(p, std::string("invalid ") + kind + " literal");
  return std::nullopt;
}

std::optional<LexError> Lexer::decimal_tail(std::uint32_t &p) {
  for (;;) {
    while (is_digit(at(p)))
      ++p;
    if (at(p) != '_')
      return std::nullopt;
    ++p;
    if (!is_digit(at(p)))
      return error_at_cursor(p, "invalid decimal literal");
  }
}

std::optional<LexError> Lexer::number(std::uint32_t start) {
  std::uint32_t p = start;
  auto finish = [&]() -> std::optional<LexError> {
    emit(TokenKind::Number, start, p);
    pos_ = p;
    return std::nullopt;
  };
  auto radix = [&](const char *kind, char max_digit, bool hex) -> std::optional<LexError> {
    auto ok = [&](char ch) { return hex ? is_hex_digit(ch) : (ch >= '0' && ch <= max_digit); };
    p += 2;
    do {
      if (at(p) == '_')
        ++p;
      if (!ok(at(p))) {
        if (!hex && is_digit(at(p)))
          return error_at_cursor(p + 1, std::string("invalid digit '") + at(p) + "' in " + kind + " literal");
        return error_at_cursor(p, std::string("invalid ") + kind + " literal");
      }
      while (ok(at(p)))
        ++p;
    } while (at(p) == '_');
    if (!hex && is_digit(at(p)))
      return error_at_cursor(p + 1, std::string("invalid digit '") + at(p) + "' in " + kind + " literal");
    if (auto err = verify_end_of_number(p, kind))
      return err;
    return finish();
  };
  if (text_[p] == '0' && (at(p + 1) | 0x20) == 'x')
    return radix("hexadecimal", 'f', true);
  if (text_[p] == '0' && (at(p + 1) | 0x20) == 'o')
    return radix("octal", '7', false);
  if (text_[p] == '0' && (at(p + 1) | 0x20) == 'b')
    return radix("binary", '1', false);
  if (text_[p] == '.') {
    // A fraction without an integer part: handled below.
  } else if (text_[p] == '0') {
    bool nonzero = false;
    for (;;) {
      if (at(p) == '_') {
        ++p;
        if (!is_digit(at(p)))
          return error_at_cursor(p, "invalid decimal literal");
      }
      if (at(p) != '0')
        break;
      ++p;
    }
    if (is_digit(at(p))) {
      nonzero = true;
      if (auto err = decimal_tail(p))
        return err;
    }
    char c = at(p);
    if (c != '.' && (c | 0x20) != 'e' && (c | 0x20) != 'j') {
      if (nonzero)
        return LexError{start, "leading zeros in decimal integer literals are not permitted; use an 0o prefix "
                               "for octal integers"};
      if (auto err = verify_end_of_number(p, "decimal"))
        return err;
      return finish();
    }
  } else {
    if (auto err = decimal_tail(p))
      return err;
  }
  if (at(p) == '.') {
    ++p;
    if (is_digit(at(p))) {
      if (auto err = decimal_tail(p))
        return err;
    }
  }
  if ((at(p) | 0x20) == 'e') {
    std::uint32_t e = p;
    ++p;
    if (at(p) == '+' || at(p) == '-') {
      ++p;
      if (!is_digit(at(p)))
        return error_at_cursor(p, "invalid decimal literal");
    } else if (!is_digit(at(p))) {
      if (auto err = verify_end_of_number(e, "decimal"))
        return err;
      p = e;
      return finish();
    }
    if (auto err = decimal_tail(p))
      return err;
  }
  if ((at(p) | 0x20) == 'j') {
    ++p;
    if (auto err = verify_end_of_number(p, "imaginary"))
      return err;
  } else if (auto err = verify_end_of_number(p, "decimal")) {
    return err;
  }
  return finish();
}

std::optional<LexError> Lexer::operator_token(std::uint32_t start) {
  char c = text_[start];
  char c1 = at(start + 1);
  char c2 = at(start + 2);
  TokenKind kind;
  std::uint32_t len = 1;
  auto two = [&](char second, TokenKind k2, TokenKind k1) {
    if (c1 == second) {
      len = 2;
      return k2;
    }
    return k1;
  };
  switch (c) {
  case '(':
  case '[':
  case '{': {
    if (brackets_.size() >= kMaxBracketDepth)
      return LexError{start, "too many nested parentheses"};
    brackets_.push_back({c, start});
    kind = c == '(' ? TokenKind::LParen : c == '[' ? TokenKind::LSquare : TokenKind::LBrace;
    break;
  }
  case ')':
  case ']':
  case '}': {
    if (brackets_.empty()) {
      if (expression_mode_) {
        kind = TokenKind::ErrorChar;
        break;
      }
      return LexError{start, std::string("unmatched '") + c + "'"};
    }
    OpenBracket open = brackets_.back();
    if (closing_for(open.ch) != c) {
      std::string message =
          std::string("closing parenthesis '") + c + "' does not match opening parenthesis '" + open.ch + "'";
      std::uint32_t open_line = line_of(open.offset);
      if (open_line != line_of(start))
        message += " on line " + std::to_string(open_line);
      return LexError{start, message};
    }
    brackets_.pop_back();
    kind = c == ')' ? TokenKind::RParen : c == ']' ? TokenKind::RSquare : TokenKind::RBrace;
    break;
  }
  case ':':
    kind = two('=', TokenKind::ColonEqual, TokenKind::Colon);
    break;
  case ',':
    kind = TokenKind::Comma;
    break;
  case ';':
    kind = TokenKind::Semi;
    break;
  case '.':
    if (c1 == '.' && c2 == '.') {
      kind = TokenKind::Ellipsis;
      len = 3;
    } else {
      kind = TokenKind::Dot;
    }
    break;
  case '+':
    kind = two('=', TokenKind::PlusEqual, TokenKind::Plus);
    break;
  case '-':
    if (c1 == '>') {
      kind = TokenKind::Arrow;
      len = 2;
    } else {
      kind = two('=', TokenKind::MinusEqual, TokenKind::Minus);
    }
    break;
  case '*':
    if (c1 == '*') {
      kind = c2 == '=' ? TokenKind::DoubleStarEqual : TokenKind::DoubleStar;
      len = c2 == '=' ? 3 : 2;
    } else {
      kind = two('=', TokenKind::StarEqual, TokenKind::Star);
    }
    break;
  case '/':
    if (c1 == '/') {
      kind = c2 == '=' ? TokenKind::DoubleSlashEqual : TokenKind::DoubleSlash;
      len = c2 == '=' ? 3 : 2;
    } else {
      kind = two('=', TokenKind::SlashEqual, TokenKind::Slash);
    }
    break;
  case '%':
    kind = two('=', TokenKind::PercentEqual, TokenKind::Percent);
    break;
  case '@':
    kind = two('=', TokenKind::AtEqual, TokenKind::At);
    break;
  case '|':
    kind = two('=', TokenKind::VBarEqual, TokenKind::VBar);
    break;
  case '&':
    kind = two('=', TokenKind::AmperEqual, TokenKind::Amper);
    break;
  case '^':
    kind = two('=', TokenKind::CircumflexEqual, TokenKind::Circumflex);
    break;
  case '~':
    kind = TokenKind::Tilde;
    break;
  case '=':
    kind = two('=', TokenKind::EqEqual, TokenKind::Equal);
    break;
  case '!':
    kind = two('=', TokenKind::NotEqual, TokenKind::ErrorChar);
    break;
  case '<':
    if (c1 == '<') {
      kind = c2 == '=' ? TokenKind::LeftShiftEqual : TokenKind::LeftShift;
      len = c2 == '=' ? 3 : 2;
    } else if (c1 == '>') {
      // `<>` is the Barry-as-FLUFL spelling; without the joke import it is a syntax error.
      kind = TokenKind::ErrorChar;
      len = 2;
    } else {
      kind = two('=', TokenKind::LessEqual, TokenKind::Less);
    }
    break;
  case '>':
    if (c1 == '>') {
      kind = c2 == '=' ? TokenKind::RightShiftEqual : TokenKind::RightShift;
      len = c2 == '=' ? 3 : 2;
    } else {
      kind = two('=', TokenKind::GreaterEqual, TokenKind::Greater);
    }
    break;
  default: {
    if (c == '\0')
      return LexError{start, "source code cannot contain null bytes"};
    auto uc = static_cast<unsigned char>(c);
    if (uc < 0x20 || uc == 0x7f)
      return LexError{start, "invalid non-printable character " + hex_code_point(uc)};
    kind = TokenKind::ErrorChar;
    break;
  }
  }
  emit(kind, start, start + len);
  pos_ = start + len;
  return std::nullopt;
}

} // namespace

std::optional<LexError> tokenize(std::string_view text, TokenStream &out) {
  out.tokens.clear();
  out.unclosed_bracket.reset();
  // Kernel code averages well over four bytes per token: one reservation avoids regrowth.
  out.tokens.reserve(text.size() / 4 + 16);
  Lexer lexer(text, 0, static_cast<std::uint32_t>(text.size()), out, false);
  return lexer.run();
}

std::optional<LexError> tokenize_range(std::string_view text, std::uint32_t begin, std::uint32_t end,
                                       TokenStream &out) {
  out.tokens.clear();
  out.unclosed_bracket.reset();
  Lexer lexer(text, begin, end, out, true);
  return lexer.run();
}

std::string_view token_spelling(TokenKind kind) {
  static constexpr std::array<std::string_view, static_cast<std::size_t>(TokenKind::KwYield) + 1> names = {
      "ENDMARKER", "NEWLINE", "INDENT", "DEDENT", "NAME",   "NUMBER",   "STRING", "ERRORTOKEN", "(",    ")",
      "[",         "]",       "{",      "}",      ":",      ",",        ";",      ".",          "...",  "->",
      ":=",        "@",       "=",      "+",      "-",      "*",        "/",      "//",         "%",    "**",
      "|",         "&",       "^",      "~",      "<<",     ">>",       "<",      ">",          "==",   "!=",
      "<=",        ">=",      "+=",     "-=",     "*=",     "/=",       "//=",    "%=",         "**=",  "|=",
      "&=",        "^=",      "<<=",    ">>=",    "@=",     "False",    "None",   "True",       "and",  "as",
      "assert",    "async",   "await",  "break",  "class",  "continue", "def",    "del",        "elif", "else",
      "except",    "finally", "for",    "from",   "global", "if",       "import", "in",         "is",   "lambda",
      "nonlocal",  "not",     "or",     "pass",   "raise",  "return",   "try",    "while",      "with", "yield"};
  return names[static_cast<std::size_t>(kind)];
}

TokenKind keyword_kind(std::string_view w) {
  // Dispatch on length and first letter: a hash table costs more than these few compares.
  if (w.size() < 2 || w.size() > 8)
    return TokenKind::Name;
  switch (w[0]) {
  case 'F':
    return w == "False" ? TokenKind::KwFalse : TokenKind::Name;
  case 'N':
    return w == "None" ? TokenKind::KwNone : TokenKind::Name;
  case 'T':
    return w == "True" ? TokenKind::KwTrue : TokenKind::Name;
  case 'a':
    if (w == "and")
      return TokenKind::KwAnd;
    if (w == "as")
      return TokenKind::KwAs;
    if (w == "assert")
      return TokenKind::KwAssert;
    if (w == "async")
      return TokenKind::KwAsync;
    if (w == "await")
      return TokenKind::KwAwait;
    return TokenKind::Name;
  case 'b':
    return w == "break" ? TokenKind::KwBreak : TokenKind::Name;
  case 'c':
    if (w == "class")
      return TokenKind::KwClass;
    if (w == "continue")
      return TokenKind::KwContinue;
    return TokenKind::Name;
  case 'd':
    if (w == "def")
      return TokenKind::KwDef;
    if (w == "del")
      return TokenKind::KwDel;
    return TokenKind::Name;
  case 'e':
    if (w == "elif")
      return TokenKind::KwElif;
    if (w == "else")
      return TokenKind::KwElse;
    if (w == "except")
      return TokenKind::KwExcept;
    return TokenKind::Name;
  case 'f':
    if (w == "finally")
      return TokenKind::KwFinally;
    if (w == "for")
      return TokenKind::KwFor;
    if (w == "from")
      return TokenKind::KwFrom;
    return TokenKind::Name;
  case 'g':
    return w == "global" ? TokenKind::KwGlobal : TokenKind::Name;
  case 'i':
    if (w == "if")
      return TokenKind::KwIf;
    if (w == "import")
      return TokenKind::KwImport;
    if (w == "in")
      return TokenKind::KwIn;
    if (w == "is")
      return TokenKind::KwIs;
    return TokenKind::Name;
  case 'l':
    return w == "lambda" ? TokenKind::KwLambda : TokenKind::Name;
  case 'n':
    if (w == "nonlocal")
      return TokenKind::KwNonlocal;
    if (w == "not")
      return TokenKind::KwNot;
    return TokenKind::Name;
  case 'o':
    return w == "or" ? TokenKind::KwOr : TokenKind::Name;
  case 'p':
    return w == "pass" ? TokenKind::KwPass : TokenKind::Name;
  case 'r':
    if (w == "raise")
      return TokenKind::KwRaise;
    if (w == "return")
      return TokenKind::KwReturn;
    return TokenKind::Name;
  case 't':
    return w == "try" ? TokenKind::KwTry : TokenKind::Name;
  case 'w':
    if (w == "while")
      return TokenKind::KwWhile;
    if (w == "with")
      return TokenKind::KwWith;
    return TokenKind::Name;
  case 'y':
    return w == "yield" ? TokenKind::KwYield : TokenKind::Name;
  default:
    return TokenKind::Name;
  }
}

} // namespace nkicc::python
