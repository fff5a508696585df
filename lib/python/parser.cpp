#include "nkicc/python/parser.h"

#include "nkicc/python/lexer.h"
#include "nkicc/support/utf8.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nkicc::python {

namespace {

using TK = TokenKind;

/// Thrown once the first syntax error is recorded: the parser stops there, as CPython does.
struct ParseAbort {};

/// What a block follows, for `expected an indented block after ... on line N`.
enum class BlockOwner { Function, Class, If, Elif, Else, For, While, With, Try, Except, ExceptStar, Finally };

const char *block_owner_text(BlockOwner owner) {
  switch (owner) {
  case BlockOwner::Function:
    return "function definition";
  case BlockOwner::Class:
    return "class definition";
  case BlockOwner::If:
    return "'if' statement";
  case BlockOwner::Elif:
    return "'elif' statement";
  case BlockOwner::Else:
    return "'else' statement";
  case BlockOwner::For:
    return "'for' statement";
  case BlockOwner::While:
    return "'while' statement";
  case BlockOwner::With:
    return "'with' statement";
  case BlockOwner::Try:
    return "'try' statement";
  case BlockOwner::Except:
    return "'except' statement";
  case BlockOwner::ExceptStar:
    return "'except*' statement";
  case BlockOwner::Finally:
    return "'finally' statement";
  }
  return "statement";
}

/// CPython's _PyPegen_get_expr_name: how messages name an expression.
const char *expr_description(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Attribute:
    return "attribute";
  case ExprKind::Subscript:
    return "subscript";
  case ExprKind::Starred:
    return "starred";
  case ExprKind::Name:
    return "name";
  case ExprKind::List:
    return "list";
  case ExprKind::Tuple:
    return "tuple";
  case ExprKind::Lambda:
    return "lambda";
  case ExprKind::Call:
    return "function call";
  case ExprKind::BoolOp:
  case ExprKind::BinOp:
  case ExprKind::UnaryOp:
    return "expression";
  case ExprKind::GeneratorExp:
    return "generator expression";
  case ExprKind::Yield:
  case ExprKind::YieldFrom:
    return "yield expression";
  case ExprKind::Await:
    return "await expression";
  case ExprKind::ListComp:
    return "list comprehension";
  case ExprKind::SetComp:
    return "set comprehension";
  case ExprKind::DictComp:
    return "dict comprehension";
  case ExprKind::Dict:
    return "dict literal";
  case ExprKind::Set:
    return "set display";
  case ExprKind::JoinedStr:
  case ExprKind::FormattedValue:
    return "f-string expression";
  case ExprKind::Constant:
    switch (e.as<ConstantExpr>().value_kind) {
    case ConstantKind::None:
      return "None";
    case ConstantKind::True:
      return "True";
    case ConstantKind::False:
      return "False";
    case ConstantKind::Ellipsis:
      return "ellipsis";
    default:
      return "literal";
    }
  case ExprKind::Compare:
    return "comparison";
  case ExprKind::IfExp:
    return "conditional expression";
  case ExprKind::NamedExpr:
    return "named expression";
  case ExprKind::Slice:
    return "slice";
  }
  return "expression";
}

bool is_augassign(TK k, BinOpKind &op) {
  switch (k) {
  case TK::PlusEqual:
    op = BinOpKind::Add;
    return true;
  case TK::MinusEqual:
    op = BinOpKind::Sub;
    return true;
  case TK::StarEqual:
    op = BinOpKind::Mult;
    return true;
  case TK::AtEqual:
    op = BinOpKind::MatMult;
    return true;
  case TK::SlashEqual:
    op = BinOpKind::Div;
    return true;
  case TK::PercentEqual:
    op = BinOpKind::Mod;
    return true;
  case TK::AmperEqual:
    op = BinOpKind::BitAnd;
    return true;
  case TK::VBarEqual:
    op = BinOpKind::BitOr;
    return true;
  case TK::CircumflexEqual:
    op = BinOpKind::BitXor;
    return true;
  case TK::LeftShiftEqual:
    op = BinOpKind::LShift;
    return true;
  case TK::RightShiftEqual:
    op = BinOpKind::RShift;
    return true;
  case TK::DoubleStarEqual:
    op = BinOpKind::Pow;
    return true;
  case TK::DoubleSlashEqual:
    op = BinOpKind::FloorDiv;
    return true;
  default:
    return false;
  }
}

/// Binary operator precedence from `|` (1) to `*` (6); 0 for anything else.
int binary_precedence(TK k, BinOpKind &op) {
  switch (k) {
  case TK::VBar:
    op = BinOpKind::BitOr;
    return 1;
  case TK::Circumflex:
    op = BinOpKind::BitXor;
    return 2;
  case TK::Amper:
    op = BinOpKind::BitAnd;
    return 3;
  case TK::LeftShift:
    op = BinOpKind::LShift;
    return 4;
  case TK::RightShift:
    op = BinOpKind::RShift;
    return 4;
  case TK::Plus:
    op = BinOpKind::Add;
    return 5;
  case TK::Minus:
    op = BinOpKind::Sub;
    return 5;
  case TK::Star:
    op = BinOpKind::Mult;
    return 6;
  case TK::Slash:
    op = BinOpKind::Div;
    return 6;
  case TK::DoubleSlash:
    op = BinOpKind::FloorDiv;
    return 6;
  case TK::Percent:
    op = BinOpKind::Mod;
    return 6;
  case TK::At:
    op = BinOpKind::MatMult;
    return 6;
  default:
    return 0;
  }
}

bool starts_expression(TK k) {
  switch (k) {
  case TK::Name:
  case TK::Number:
  case TK::String:
  case TK::LParen:
  case TK::LSquare:
  case TK::LBrace:
  case TK::Minus:
  case TK::Plus:
  case TK::Tilde:
  case TK::KwNot:
  case TK::KwLambda:
  case TK::KwAwait:
  case TK::KwNone:
  case TK::KwTrue:
  case TK::KwFalse:
  case TK::Ellipsis:
    return true;
  default:
    return false;
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// The prefix and body of one string token.
struct StringPiece {
  bool raw = false, bytes = false, fstring = false;
  std::uint32_t body_begin = 0, body_end = 0;
};

class Parser {
public:
  Parser(const SourceManager &sources, FileId file, AstArena &arena)
      : file_(file), text_(sources.contents(file)), arena_(arena) {}

  struct Error {
    std::uint32_t offset;
    std::string message;
    /// The parser had looked as far as the end of the file (inside brackets) when it failed.
    bool reached_eof = false;
  };

  StmtList parse_file(const TokenStream &stream);
  std::optional<Error> error;

private:
  // ---- tokens and errors ----------------------------------------------------------------------
  const Token &tok() const { return (*toks_)[pos_]; }
  const Token &peek(std::size_t n = 1) const {
    std::size_t i = pos_ + n;
    return i < toks_->size() ? (*toks_)[i] : toks_->back();
  }
  TK kind() const { return tok().kind; }
  bool at(TK k) const { return tok().kind == k; }
  const Token &advance() {
    const Token &t = (*toks_)[pos_];
    if (t.kind != TK::EndOfFile)
      ++pos_;
    // Nodes end at their last real token, never at a line end or an indentation change.
    if (t.kind != TK::Newline && t.kind != TK::Indent && t.kind != TK::Dedent)
      last_end_ = t.end;
    return t;
  }
  bool accept(TK k) {
    if (!at(k))
      return false;
    advance();
    return true;
  }
  std::string_view tok_text(const Token &t) const { return text_.substr(t.begin, t.end - t.begin); }

  [[noreturn]] void fail(std::uint32_t offset, std::string message) {
    if (fstring_depth_ > 0 && message.rfind("f-string", 0) != 0)
      message = "f-string: " + message;
    error = Error{offset, std::move(message), fstring_depth_ == 0 && tok().kind == TK::EndOfFile};
    throw ParseAbort{};
  }
  /// CPython's generic failure at the furthest token: `invalid syntax`, or what the token
  /// itself says (an unexpected indent, the end of a file inside brackets).
  [[noreturn]] void fail_here() {
    const Token &t = tok();
    if (t.kind == TK::Indent)
      fail(t.end > t.begin ? t.end - 1 : t.begin, "unexpected indent");
    fail(t.begin, "invalid syntax");
  }
  /// After an element inside brackets, when neither a comma nor the closer follows.
  [[noreturn]] void fail_after_element(const Expr *element) {
    if (bracket_depth_ > 0 && starts_expression(kind()) &&
        !(element->kind == ExprKind::Name && at(TK::String) &&
          element->range.end == element->range.begin.offset + element->as<NameExpr>().id.size())) {
      // CPython parses the next expression before it suggests the comma; whether that reached
      // the end of the file decides between this message and an unclosed bracket.
      bool reached_eof = false;
      try {
        parse_expression();
        reached_eof = fstring_depth_ == 0 && tok().kind == TK::EndOfFile;
      } catch (const ParseAbort &) {
        reached_eof = error && error->reached_eof;
      }
      error = Error{element->range.begin.offset, "invalid syntax. Perhaps you forgot a comma?", reached_eof};
      if (fstring_depth_ > 0)
        error->message = "f-string: " + error->message;
      throw ParseAbort{};
    }
    fail_here();
  }
  void expect(TK k) {
    if (!accept(k))
      fail_here();
  }
  void expect_colon() {
    if (!accept(TK::Colon))
      fail(tok().begin, "expected ':'");
  }
  void open_bracket() {
    advance();
    ++bracket_depth_;
  }
  void close_bracket(TK closer, const Expr *last) {
    if (!at(closer)) {
      if (last)
        fail_after_element(last);
      fail_here();
    }
    advance();
    --bracket_depth_;
  }

  struct DepthGuard {
    explicit DepthGuard(Parser &p) : parser(p) {
      if (++parser.depth_ > kMaxExpressionDepth)
        parser.fail(parser.tok().begin, "parser stack overflowed - Python source too complex to parse");
    }
    ~DepthGuard() { --parser.depth_; }
    DepthGuard(const DepthGuard &) = delete;
    DepthGuard &operator=(const DepthGuard &) = delete;
    Parser &parser;
  };

  /// Left-deep chains (`a.b.c`, `a + b + c`) are built by loops, but the tree they build is
  /// as deep as the chain is long, and every later walk over it recurses: each link counts
  /// against the same depth budget as nested expressions.
  struct ChainGuard {
    explicit ChainGuard(Parser &p) : parser(p) {}
    ~ChainGuard() { parser.depth_ -= links; }
    ChainGuard(const ChainGuard &) = delete;
    ChainGuard &operator=(const ChainGuard &) = delete;
    void link() {
      ++links;
      if (++parser.depth_ > kMaxExpressionDepth)
        parser.fail(parser.tok().begin, "parser stack overflowed - Python source too complex to parse");
    }
    Parser &parser;
    int links = 0;
  };

  // ---- node construction ----------------------------------------------------------------------
  template <class T> T *node(std::uint32_t begin, std::uint32_t end) {
    T *n = arena_.make<T>();
    n->range = SourceRange{SourceLoc{file_, begin}, end};
    return n;
  }
  template <class T> T *node_from(std::uint32_t begin) { return node<T>(begin, last_end_); }

  /// Lists are built on one scratch stack of pointers (inner lists finish before outer ones
  /// continue), then copied into the arena: no heap allocation per list.
  std::size_t mark() const { return scratch_.size(); }
  void push(void *p) { scratch_.push_back(p); }
  template <class T> NodeList<T> finish(std::size_t start) {
    std::size_t n = scratch_.size() - start;
    if (n == 0)
      return {};
    auto **out = static_cast<T **>(arena_.allocate(sizeof(T *) * n, alignof(T *)));
    for (std::size_t i = 0; i < n; ++i)
      out[i] = static_cast<T *>(scratch_[start + i]);
    scratch_.resize(start);
    return {out, n};
  }

  std::string_view intern(std::string_view s) { return arena_.copy_string(s); }

  // ---- statements -----------------------------------------------------------------------------
  void parse_statement(std::size_t list_mark);
  void parse_simple_statements();
  Stmt *parse_simple_statement();
  Stmt *parse_expression_statement();
  StmtList parse_block(BlockOwner owner, std::uint32_t owner_offset);
  Stmt *parse_decorated();
  FunctionDefStmt *parse_function_def(std::uint32_t begin, ExprList decorators);
  ClassDefStmt *parse_class_def(std::uint32_t begin, ExprList decorators);
  Stmt *parse_if(BlockOwner owner);
  Stmt *parse_for();
  Stmt *parse_while();
  Stmt *parse_with();
  WithItem *parse_with_item(bool parenthesized);
  Stmt *parse_try();
  Stmt *parse_import();
  Stmt *parse_from_import();
  std::string_view parse_dotted_name();
  Arguments *parse_parameters(TK closer, bool annotations);

  // ---- expressions ----------------------------------------------------------------------------
  Expr *parse_star_expressions();
  Expr *parse_star_expression();
  Expr *parse_star_named_expression();
  Expr *parse_named_expression();
  Expr *parse_expression();
  Expr *parse_lambda();
  Expr *parse_disjunction();
  Expr *parse_conjunction();
  Expr *parse_inversion();
  Expr *parse_comparison();
  Expr *parse_binary(int min_precedence);
  Expr *parse_factor();
  Expr *parse_power();
  Expr *parse_primary();
  Expr *parse_atom();
  Expr *parse_paren();
  Expr *parse_list_display();
  Expr *parse_brace_display();
  Expr *parse_call(Expr *func);
  Expr *parse_subscript(Expr *value);
  Expr *parse_slice();
  Expr *parse_yield_expression();
  NodeList<Comprehension> parse_comprehension_clauses();
  Expr *parse_star_targets();
  Expr *parse_number(const Token &t);
  Expr *parse_strings();
  void check_equal_in_condition(const Expr *condition);

  // ---- targets --------------------------------------------------------------------------------
  const Expr *invalid_target(Expr *e, ExprContext ctx);
  void set_target(Expr *e, ExprContext ctx);

  // ---- strings --------------------------------------------------------------------------------
  StringPiece string_piece(const Token &t) const;
  void decode_body(const StringPiece &piece, std::uint32_t begin, std::uint32_t end, const Token &t, std::string &out);
  std::uint32_t parse_fstring_body(const StringPiece &piece, std::uint32_t p, std::uint32_t end, int spec_level,
                                   std::uint32_t range_begin, std::uint32_t range_end, std::string &literal);
  std::uint32_t parse_fstring_field(const StringPiece &piece, std::uint32_t p, std::uint32_t end, int spec_level,
                                    std::uint32_t range_begin, std::uint32_t range_end, std::string &literal);
  void flush_literal(std::string &literal, std::uint32_t begin, std::uint32_t end);
  Expr *parse_fstring_expression(std::uint32_t begin, std::uint32_t end);

  FileId file_;
  std::string_view text_;
  AstArena &arena_;
  const std::vector<Token> *toks_ = nullptr;
  std::size_t pos_ = 0;
  std::uint32_t last_end_ = 0;
  int depth_ = 0;
  int bracket_depth_ = 0;
  int fstring_depth_ = 0;
  std::vector<void *> scratch_;
  std::vector<CmpOpKind> cmp_scratch_;
  std::vector<std::string_view> name_scratch_;
  std::string string_scratch_;
};

// ================================================================================================
// Statements
// ================================================================================================

/// file: [statements] ENDMARKER
StmtList Parser::parse_file(const TokenStream &stream) {
  toks_ = &stream.tokens;
  pos_ = 0;
  std::size_t m = mark();
  while (!at(TK::EndOfFile))
    parse_statement(m);
  return finish<Stmt>(m);
}

/// statement: compound_stmt | simple_stmts
void Parser::parse_statement(std::size_t) {
  std::uint32_t begin = tok().begin;
  switch (kind()) {
  case TK::KwDef:
    push(parse_function_def(begin, {}));
    return;
  case TK::At:
    push(parse_decorated());
    return;
  case TK::KwClass:
    push(parse_class_def(begin, {}));
    return;
  case TK::KwIf:
    push(parse_if(BlockOwner::If));
    return;
  case TK::KwFor:
    push(parse_for());
    return;
  case TK::KwWhile:
    push(parse_while());
    return;
  case TK::KwWith:
    push(parse_with());
    return;
  case TK::KwTry:
    push(parse_try());
    return;
  default:
    parse_simple_statements();
    return;
  }
}

/// simple_stmts: simple_stmt (';' simple_stmt)* [';'] NEWLINE
void Parser::parse_simple_statements() {
  for (;;) {
    push(parse_simple_statement());
    if (accept(TK::Semi)) {
      if (accept(TK::Newline))
        return;
      continue;
    }
    if (accept(TK::Newline))
      return;
    if (at(TK::EndOfFile) && !tok().in_brackets)
      return;
    fail_here();
  }
}

/// block: NEWLINE INDENT statements DEDENT | simple_stmts
StmtList Parser::parse_block(BlockOwner owner, std::uint32_t owner_offset) {
  std::size_t m = mark();
  if (!accept(TK::Newline)) {
    parse_simple_statements();
    return finish<Stmt>(m);
  }
  if (!at(TK::Indent)) {
    std::string line = std::to_string(1 + [&] {
      std::uint32_t n = 0;
      for (std::uint32_t i = 0; i < owner_offset; ++i)
        if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n')))
          ++n;
      return n;
    }());
    fail(tok().begin, std::string("expected an indented block after ") + block_owner_text(owner) + " on line " + line);
  }
  advance();
  while (!accept(TK::Dedent)) {
    if (at(TK::EndOfFile))
      fail_here();
    parse_statement(m);
  }
  return finish<Stmt>(m);
}

/// simple_stmt: assignment | star_expressions | return_stmt | import_stmt | raise_stmt | 'pass'
///   | del_stmt | yield_stmt | assert_stmt | 'break' | 'continue' | global_stmt | nonlocal_stmt
Stmt *Parser::parse_simple_statement() {
  std::uint32_t begin = tok().begin;
  switch (kind()) {
  case TK::KwPass:
    advance();
    return node_from<PassStmt>(begin);
  case TK::KwBreak:
    advance();
    return node_from<BreakStmt>(begin);
  case TK::KwContinue:
    advance();
    return node_from<ContinueStmt>(begin);
  case TK::KwReturn: {
    advance();
    Expr *value = starts_expression(kind()) || at(TK::Star) ? parse_star_expressions() : nullptr;
    auto *s = node_from<ReturnStmt>(begin);
    s->value = value;
    return s;
  }
  case TK::KwRaise: {
    advance();
    auto *s = node<RaiseStmt>(begin, 0);
    if (starts_expression(kind())) {
      s->exc = parse_expression();
      if (accept(TK::KwFrom))
        s->cause = parse_expression();
    }
    s->range.end = last_end_;
    return s;
  }
  case TK::KwAssert: {
    advance();
    auto *s = node<AssertStmt>(begin, 0);
    s->test = parse_expression();
    if (accept(TK::Comma))
      s->msg = parse_expression();
    s->range.end = last_end_;
    return s;
  }
  case TK::KwDel: {
    // del_stmt: 'del' del_targets; targets are primaries, (tuples of) names
    advance();
    std::size_t m = mark();
    do {
      if (!starts_expression(kind()))
        break;
      Expr *t = parse_binary(1);
      if (const Expr *bad = invalid_target(t, ExprContext::Del))
        fail(bad->range.begin.offset, std::string("cannot delete ") + expr_description(*bad));
      push(t);
    } while (accept(TK::Comma));
    if (mark() == m)
      fail_here();
    auto *s = node_from<DeleteStmt>(begin);
    s->targets = finish<Expr>(m);
    return s;
  }
  case TK::KwGlobal:
  case TK::KwNonlocal: {
    bool global = at(TK::KwGlobal);
    advance();
    std::size_t m = name_scratch_.size();
    do {
      if (!at(TK::Name))
        fail_here();
      name_scratch_.push_back(intern(tok_text(advance())));
    } while (accept(TK::Comma));
    auto names = arena_.copy(std::span<const std::string_view>(name_scratch_.data() + m, name_scratch_.size() - m));
    name_scratch_.resize(m);
    if (global) {
      auto *s = node_from<GlobalStmt>(begin);
      s->names = names;
      return s;
    }
    auto *s = node_from<NonlocalStmt>(begin);
    s->names = names;
    return s;
  }
  case TK::KwImport:
    return parse_import();
  case TK::KwFrom:
    return parse_from_import();
  default:
    return parse_expression_statement();
  }
}

/// assignment:
///   | NAME ':' expression ['=' annotated_rhs]
///   | single_target ':' expression ['=' annotated_rhs]
///   | (star_targets '=')+ (yield_expr | star_expressions)
///   | single_target augassign (yield_expr | star_expressions)
/// star_expressions (an expression statement)
Stmt *Parser::parse_expression_statement() {
  std::uint32_t begin = tok().begin;
  bool parenthesized = at(TK::LParen);
  Expr *first = at(TK::KwYield) ? parse_yield_expression() : parse_star_expressions();
  auto rhs = [&] { return at(TK::KwYield) ? parse_yield_expression() : parse_star_expressions(); };
  BinOpKind op;
  if (at(TK::Colon)) {
    if (first->kind == ExprKind::Tuple || first->kind == ExprKind::List)
      fail(first->range.begin.offset,
           std::string("only single target (not ") + expr_description(*first) + ") can be annotated");
    if (first->kind != ExprKind::Name && first->kind != ExprKind::Attribute && first->kind != ExprKind::Subscript)
      fail(first->range.begin.offset, "illegal target for annotation");
    advance();
    set_target(first, ExprContext::Store);
    auto *s = node<AnnAssignStmt>(begin, 0);
    s->target = first;
    s->annotation = parse_expression();
    if (accept(TK::Equal))
      s->value = rhs();
    s->simple = first->kind == ExprKind::Name && !parenthesized;
    s->range.end = last_end_;
    return s;
  }
  if (is_augassign(kind(), op)) {
    if (first->kind != ExprKind::Name && first->kind != ExprKind::Attribute && first->kind != ExprKind::Subscript)
      fail(first->range.begin.offset,
           std::string("'") + expr_description(*first) + "' is an illegal expression for augmented assignment");
    advance();
    set_target(first, ExprContext::Store);
    auto *s = node<AugAssignStmt>(begin, 0);
    s->target = first;
    s->op = op;
    s->value = rhs();
    s->range.end = last_end_;
    return s;
  }
  if (at(TK::Equal)) {
    std::size_t m = mark();
    push(first);
    Expr *value = nullptr;
    while (accept(TK::Equal)) {
      value = rhs();
      if (at(TK::Equal))
        push(value);
    }
    std::size_t count = mark() - m;
    for (std::size_t i = 0; i < count; ++i) {
      auto *target = static_cast<Expr *>(scratch_[m + i]);
      if (target->kind == ExprKind::Yield || target->kind == ExprKind::YieldFrom)
        fail(target->range.begin.offset, "assignment to yield expression not possible");
      const Expr *bad = invalid_target(target, ExprContext::Store);
      if (!bad)
        continue;
      bool bitwise_or_level =
          target->kind != ExprKind::Compare && target->kind != ExprKind::BoolOp && target->kind != ExprKind::IfExp &&
          target->kind != ExprKind::Lambda && target->kind != ExprKind::Tuple && target->kind != ExprKind::List &&
          target->kind != ExprKind::GeneratorExp && target->kind != ExprKind::Starred &&
          !(target->kind == ExprKind::UnaryOp && target->as<UnaryOpExpr>().op == UnaryOpKind::Not) &&
          !(target->kind == ExprKind::Constant && (target->as<ConstantExpr>().value_kind == ConstantKind::None ||
                                                   target->as<ConstantExpr>().value_kind == ConstantKind::True ||
                                                   target->as<ConstantExpr>().value_kind == ConstantKind::False));
      if (i == 0 && count == 1 && bitwise_or_level)
        fail(target->range.begin.offset, std::string("cannot assign to ") + expr_description(*target) +
                                             " here. Maybe you meant '==' instead of '='?");
      fail(bad->range.begin.offset, std::string("cannot assign to ") + expr_description(*bad));
    }
    auto *s = node_from<AssignStmt>(begin);
    s->targets = finish<Expr>(m);
    s->value = value;
    return s;
  }
  if (!at(TK::Newline) && !at(TK::Semi) && !(at(TK::EndOfFile) && !tok().in_brackets)) {
    // Python 2's print statement is the classic slip; CPython names it.
    if (first->kind == ExprKind::Name && starts_expression(kind()) &&
        (first->as<NameExpr>().id == "print" || first->as<NameExpr>().id == "exec")) {
      std::string name(first->as<NameExpr>().id);
      fail(first->range.begin.offset, "Missing parentheses in call to '" + name + "'. Did you mean " + name + "(...)?");
    }
    fail_here();
  }
  auto *s = node_from<ExprStmt>(begin);
  s->value = first;
  return s;
}

/// decorators: ('@' named_expression NEWLINE)+ (function_def | class_def)
Stmt *Parser::parse_decorated() {
  std::uint32_t begin = tok().begin;
  std::size_t m = mark();
  while (accept(TK::At)) {
    push(parse_named_expression());
    if (!accept(TK::Newline))
      fail_here();
  }
  ExprList decorators = finish<Expr>(m);
  // CPython's node starts at `def`/`class`, not at the first decorator.
  (void)begin;
  if (at(TK::KwDef))
    return parse_function_def(tok().begin, decorators);
  if (at(TK::KwClass))
    return parse_class_def(tok().begin, decorators);
  fail_here();
}

/// function_def: 'def' NAME '(' [params] ')' ['->' expression] ':' block
FunctionDefStmt *Parser::parse_function_def(std::uint32_t begin, ExprList decorators) {
  std::uint32_t def_offset = tok().begin;
  advance();
  if (!at(TK::Name))
    fail_here();
  auto *s = node<FunctionDefStmt>(begin, 0);
  s->name = intern(tok_text(advance()));
  s->decorators = decorators;
  if (!at(TK::LParen))
    fail_here();
  open_bracket();
  s->args = parse_parameters(TK::RParen, true);
  close_bracket(TK::RParen, nullptr);
  if (accept(TK::Arrow))
    s->returns = parse_expression();
  expect_colon();
  s->body = parse_block(BlockOwner::Function, def_offset);
  s->range.end = last_end_;
  return s;
}

/// params (CPython's `parameters` and `lambda_parameters`):
///   [posonly ... '/' ','] [args] ['*' [NAME] (',' kwonly)*] ['**' NAME] [',']
///   where each is NAME [':' expression] ['=' expression]
Arguments *Parser::parse_parameters(TK closer, bool annotations) {
  auto *a = arena_.make<Arguments>();
  std::size_t positional = mark();
  std::vector<void *> defaults, kwonly, kw_defaults; // rare and short: plain vectors are fine
  std::size_t posonly_count = 0;
  bool slash = false, star = false, bare_star = false;
  std::uint32_t bare_star_offset = 0;
  bool seen_default = false;
  auto parse_arg = [&](bool allow_annotation) {
    if (!at(TK::Name))
      fail_here();
    const Token &t = advance();
    auto *arg = node<Arg>(t.begin, t.end);
    arg->name = intern(tok_text(t));
    if (allow_annotation && annotations && accept(TK::Colon)) {
      arg->annotation = at(TK::Star) ? parse_star_expression() : parse_expression();
      arg->range.end = last_end_;
    }
    return arg;
  };
  while (!at(closer)) {
    if (a->kwarg)
      fail(tok().begin, "arguments cannot follow var-keyword argument");
    if (at(TK::Slash)) {
      if (slash)
        fail(tok().begin, "/ may appear only once");
      if (star)
        fail(tok().begin, "/ must be ahead of *");
      if (mark() == positional)
        fail(tok().begin, "at least one argument must precede /");
      advance();
      slash = true;
      posonly_count = mark() - positional;
    } else if (at(TK::Star)) {
      if (star)
        fail(tok().begin, "* argument may appear only once");
      std::uint32_t star_offset = tok().begin;
      advance();
      star = true;
      if (at(TK::Name)) {
        a->vararg = parse_arg(true);
      } else {
        bare_star = true;
        bare_star_offset = star_offset;
      }
    } else if (at(TK::DoubleStar)) {
      advance();
      a->kwarg = parse_arg(true);
    } else {
      Arg *arg = parse_arg(true);
      Expr *def = nullptr;
      if (accept(TK::Equal))
        def = parse_expression();
      if (star) {
        kwonly.push_back(arg);
        kw_defaults.push_back(def);
      } else {
        if (def) {
          seen_default = true;
          defaults.push_back(def);
        } else if (seen_default) {
          fail(arg->range.begin.offset, "non-default argument follows default argument");
        }
        push(arg);
      }
    }
    if (!accept(TK::Comma))
      break;
  }
  if (bare_star && kwonly.empty())
    fail(bare_star_offset, "named arguments must follow bare *");
  if (!at(closer)) {
    if (closer == TK::Colon && at(TK::Newline))
      fail(tok().begin, "expected ':'");
    fail_here();
  }
  NodeList<Arg> all = finish<Arg>(positional);
  a->posonlyargs = all.subspan(0, posonly_count);
  a->args = all.subspan(posonly_count);
  auto to_list = [&](std::vector<void *> &v) {
    std::size_t m = mark();
    for (void *p : v)
      push(p);
    return m;
  };
  std::size_t m = to_list(defaults);
  a->defaults = finish<Expr>(m);
  m = to_list(kwonly);
  a->kwonlyargs = finish<Arg>(m);
  // kw_defaults holds nulls: copy it directly.
  if (!kw_defaults.empty()) {
    auto **out = static_cast<Expr **>(arena_.allocate(sizeof(Expr *) * kw_defaults.size(), alignof(Expr *)));
    for (std::size_t i = 0; i < kw_defaults.size(); ++i)
      out[i] = static_cast<Expr *>(kw_defaults[i]);
    a->kw_defaults = {out, kw_defaults.size()};
  }
  return a;
}

/// class_def: 'class' NAME ['(' [arguments] ')'] ':' block
ClassDefStmt *Parser::parse_class_def(std::uint32_t begin, ExprList decorators) {
  std::uint32_t class_offset = tok().begin;
  advance();
  if (!at(TK::Name))
    fail_here();
  auto *s = node<ClassDefStmt>(begin, 0);
  s->name = intern(tok_text(advance()));
  s->decorators = decorators;
  if (at(TK::LParen)) {
    // Reuse the call parser: a class header's arguments are a call's.
    auto *dummy = node<NameExpr>(begin, begin);
    auto &call = parse_call(dummy)->as<CallExpr>();
    s->bases = call.args;
    s->keywords = call.keywords;
  }
  expect_colon();
  s->body = parse_block(BlockOwner::Class, class_offset);
  s->range.end = last_end_;
  return s;
}

/// if_stmt: 'if' named_expression ':' block (elif_stmt | [else_block])
/// elif_stmt: 'elif' named_expression ':' block (elif_stmt | [else_block])
Stmt *Parser::parse_if(BlockOwner owner) {
  std::uint32_t begin = tok().begin;
  advance();
  auto *s = node<IfStmt>(begin, 0);
  s->test = parse_named_expression();
  check_equal_in_condition(s->test);
  expect_colon();
  s->body = parse_block(owner, begin);
  if (at(TK::KwElif)) {
    std::size_t m = mark();
    push(parse_if(BlockOwner::Elif));
    s->orelse = finish<Stmt>(m);
  } else if (at(TK::KwElse)) {
    std::uint32_t else_offset = tok().begin;
    advance();
    expect_colon();
    s->orelse = parse_block(BlockOwner::Else, else_offset);
  }
  s->range.end = last_end_;
  return s;
}

/// for_stmt: 'for' star_targets 'in' star_expressions ':' block [else_block]
Stmt *Parser::parse_for() {
  std::uint32_t begin = tok().begin;
  advance();
  auto *s = node<ForStmt>(begin, 0);
  s->target = parse_star_targets();
  expect(TK::KwIn);
  s->iter = parse_star_expressions();
  expect_colon();
  s->body = parse_block(BlockOwner::For, begin);
  if (at(TK::KwElse)) {
    std::uint32_t else_offset = tok().begin;
    advance();
    expect_colon();
    s->orelse = parse_block(BlockOwner::Else, else_offset);
  }
  s->range.end = last_end_;
  return s;
}

/// while_stmt: 'while' named_expression ':' block [else_block]
Stmt *Parser::parse_while() {
  std::uint32_t begin = tok().begin;
  advance();
  auto *s = node<WhileStmt>(begin, 0);
  s->test = parse_named_expression();
  check_equal_in_condition(s->test);
  expect_colon();
  s->body = parse_block(BlockOwner::While, begin);
  if (at(TK::KwElse)) {
    std::uint32_t else_offset = tok().begin;
    advance();
    expect_colon();
    s->orelse = parse_block(BlockOwner::Else, else_offset);
  }
  s->range.end = last_end_;
  return s;
}

/// with_stmt:
///   | 'with' '(' ','.with_item+ ','? ')' ':' block
///   | 'with' ','.with_item+ ':' block
/// with_item: expression ['as' star_target]
Stmt *Parser::parse_with() {
  std::uint32_t begin = tok().begin;
  advance();
  auto *s = node<WithStmt>(begin, 0);
  std::size_t m = mark();
  bool parenthesized = false;
  if (at(TK::LParen) && peek().kind != TK::KwYield) {
    // The parenthesized form is the one whose ')' is followed by ':' (CPython tries it first).
    int depth = 0;
    std::size_t i = pos_;
    for (; i < toks_->size(); ++i) {
      TK k = (*toks_)[i].kind;
      if (k == TK::LParen || k == TK::LSquare || k == TK::LBrace)
        ++depth;
      else if ((k == TK::RParen || k == TK::RSquare || k == TK::RBrace) && --depth == 0)
        break;
      else if (k == TK::EndOfFile)
        break;
    }
    parenthesized = i + 1 < toks_->size() && (*toks_)[i].kind == TK::RParen && (*toks_)[i + 1].kind == TK::Colon;
  }
  if (parenthesized) {
    open_bracket();
    const Expr *last = nullptr;
    for (;;) {
      WithItem *item = parse_with_item(true);
      last = item->context_expr;
      push(item);
      if (!accept(TK::Comma) || at(TK::RParen))
        break;
    }
    close_bracket(TK::RParen, last);
  } else {
    do
      push(parse_with_item(false));
    while (accept(TK::Comma));
  }
  s->items = finish<WithItem>(m);
  expect_colon();
  s->body = parse_block(BlockOwner::With, begin);
  s->range.end = last_end_;
  return s;
}

WithItem *Parser::parse_with_item(bool) {
  std::uint32_t begin = tok().begin;
  auto *item = node<WithItem>(begin, 0);
  item->context_expr = parse_expression();
  if (accept(TK::KwAs)) {
    Expr *target = at(TK::Star) ? nullptr : parse_binary(1);
    if (!target)
      fail_here();
    if (const Expr *bad = invalid_target(target, ExprContext::Store))
      fail(bad->range.begin.offset, std::string("cannot assign to ") + expr_description(*bad));
    item->optional_vars = target;
  }
  item->range.end = last_end_;
  return item;
}

/// try_stmt:
///   | 'try' ':' block finally_block
///   | 'try' ':' block except_block+ [else_block] [finally_block]
///   | 'try' ':' block except_star_block+ [else_block] [finally_block]
/// except_block: 'except' [expression ['as' NAME]] ':' block
Stmt *Parser::parse_try() {
  std::uint32_t begin = tok().begin;
  advance();
  expect_colon();
  auto *s = node<TryStmt>(begin, 0);
  s->body = parse_block(BlockOwner::Try, begin);
  std::size_t m = mark();
  bool plain = false, star = false;
  while (at(TK::KwExcept)) {
    std::uint32_t except_offset = tok().begin;
    advance();
    bool is_star = accept(TK::Star);
    (is_star ? star : plain) = true;
    if (plain && star)
      fail(except_offset, "cannot have both 'except' and 'except*' on the same 'try'");
    auto *h = node<ExceptHandler>(except_offset, 0);
    if (!at(TK::Colon)) {
      h->type = parse_expression();
      if (at(TK::Comma))
        fail(h->type->range.begin.offset, "multiple exception types must be parenthesized");
      if (accept(TK::KwAs)) {
        if (!at(TK::Name))
          fail_here();
        h->name = intern(tok_text(advance()));
      }
    } else if (is_star) {
      fail(tok().begin, "expected one or more exception types");
    }
    expect_colon();
    h->body = parse_block(is_star ? BlockOwner::ExceptStar : BlockOwner::Except, except_offset);
    h->range.end = last_end_;
    push(h);
  }
  s->handlers = finish<ExceptHandler>(m);
  s->is_star = star;
  if (!s->handlers.empty() && at(TK::KwElse)) {
    std::uint32_t else_offset = tok().begin;
    advance();
    expect_colon();
    s->orelse = parse_block(BlockOwner::Else, else_offset);
  }
  if (at(TK::KwFinally)) {
    std::uint32_t finally_offset = tok().begin;
    advance();
    expect_colon();
    s->finalbody = parse_block(BlockOwner::Finally, finally_offset);
  }
  if (s->handlers.empty() && s->finalbody.empty())
    fail(tok().begin, "expected 'except' or 'finally' block");
  s->range.end = last_end_;
  return s;
}

/// dotted_name: NAME ('.' NAME)*
std::string_view Parser::parse_dotted_name() {
  if (!at(TK::Name))
    fail_here();
  const Token &first = advance();
  if (!at(TK::Dot))
    return intern(tok_text(first));
  std::string name(tok_text(first));
  while (accept(TK::Dot)) {
    if (!at(TK::Name))
      fail_here();
    name += '.';
    name += tok_text(advance());
  }
  return intern(name);
}

/// import_name: 'import' ','.(dotted_name ['as' NAME])+
Stmt *Parser::parse_import() {
  std::uint32_t begin = tok().begin;
  advance();
  std::size_t m = mark();
  do {
    std::uint32_t alias_begin = tok().begin;
    auto *alias = node<Alias>(alias_begin, 0);
    alias->name = parse_dotted_name();
    if (accept(TK::KwAs)) {
      if (!at(TK::Name))
        fail_here();
      alias->asname = intern(tok_text(advance()));
    }
    alias->range.end = last_end_;
    push(alias);
  } while (accept(TK::Comma));
  auto *s = node_from<ImportStmt>(begin);
  s->names = finish<Alias>(m);
  return s;
}

/// import_from:
///   | 'from' ('.' | '...')* dotted_name 'import' import_from_targets
///   | 'from' ('.' | '...')+ 'import' import_from_targets
/// import_from_targets: '(' import_from_as_names [','] ')' | import_from_as_names !',' | '*'
Stmt *Parser::parse_from_import() {
  std::uint32_t begin = tok().begin;
  advance();
  auto *s = node<ImportFromStmt>(begin, 0);
  for (;;) {
    if (accept(TK::Dot))
      s->level += 1;
    else if (accept(TK::Ellipsis))
      s->level += 3;
    else
      break;
  }
  if (!at(TK::KwImport) || s->level == 0)
    s->module = parse_dotted_name();
  expect(TK::KwImport);
  std::size_t m = mark();
  if (at(TK::Star)) {
    const Token &t = advance();
    auto *alias = node<Alias>(t.begin, t.end);
    alias->name = "*";
    push(alias);
  } else {
    bool paren = at(TK::LParen);
    if (paren)
      open_bracket();
    for (;;) {
      if (!at(TK::Name))
        fail_here();
      const Token &t = advance();
      auto *alias = node<Alias>(t.begin, t.end);
      alias->name = intern(tok_text(t));
      if (accept(TK::KwAs)) {
        if (!at(TK::Name))
          fail_here();
        alias->asname = intern(tok_text(advance()));
        alias->range.end = last_end_;
      }
      push(alias);
      if (!accept(TK::Comma))
        break;
      if (paren && at(TK::RParen))
        break;
      if (!paren && (at(TK::Newline) || at(TK::Semi) || at(TK::EndOfFile)))
        fail(tok().begin, "trailing comma not allowed without surrounding parentheses");
    }
    if (paren)
      close_bracket(TK::RParen, nullptr);
  }
  s->names = finish<Alias>(m);
  s->range.end = last_end_;
  return s;
}

// ================================================================================================
// Targets
// ================================================================================================

/// The first sub-expression that cannot be assigned (or deleted), or null; sets the context of
/// the valid ones on the way.
const Expr *Parser::invalid_target(Expr *e, ExprContext ctx) {
  switch (e->kind) {
  case ExprKind::Name:
    e->as<NameExpr>().ctx = ctx;
    return nullptr;
  case ExprKind::Attribute:
    e->as<AttributeExpr>().ctx = ctx;
    return nullptr;
  case ExprKind::Subscript:
    e->as<SubscriptExpr>().ctx = ctx;
    return nullptr;
  case ExprKind::Starred:
    if (ctx == ExprContext::Del)
      return e;
    e->as<StarredExpr>().ctx = ctx;
    return invalid_target(e->as<StarredExpr>().value, ctx);
  case ExprKind::Tuple:
  case ExprKind::List: {
    ExprList elts;
    if (e->kind == ExprKind::Tuple) {
      e->as<TupleExpr>().ctx = ctx;
      elts = e->as<TupleExpr>().elts;
    } else {
      e->as<ListExpr>().ctx = ctx;
      elts = e->as<ListExpr>().elts;
    }
    for (Expr *elt : elts)
      if (const Expr *bad = invalid_target(elt, ctx))
        return bad;
    return nullptr;
  }
  default:
    return e;
  }
}

void Parser::set_target(Expr *e, ExprContext ctx) { (void)invalid_target(e, ctx); }

/// star_targets: star_target (',' star_target)* [','], each a `*`-able bitwise_or that must be
/// assignable (checked here, as CPython's grammar does by construction).
Expr *Parser::parse_star_targets() {
  std::uint32_t begin = tok().begin;
  auto one = [&]() -> Expr * {
    if (at(TK::Star)) {
      std::uint32_t b = tok().begin;
      advance();
      auto *s = node<StarredExpr>(b, 0);
      s->value = parse_binary(1);
      s->range.end = last_end_;
      return s;
    }
    return parse_binary(1);
  };
  Expr *first = one();
  Expr *result = first;
  if (at(TK::Comma)) {
    std::size_t m = mark();
    push(first);
    while (accept(TK::Comma)) {
      if (!starts_expression(kind()) && !at(TK::Star))
        break;
      push(one());
    }
    auto *t = node<TupleExpr>(begin, last_end_);
    t->elts = finish<Expr>(m);
    result = t;
  }
  if (const Expr *bad = invalid_target(result, ExprContext::Store))
    fail(bad->range.begin.offset, std::string("cannot assign to ") + expr_description(*bad));
  return result;
}

// ================================================================================================
// Expressions
// ================================================================================================

/// star_expressions: star_expression (',' star_expression)* [',']
Expr *Parser::parse_star_expressions() {
  std::uint32_t begin = tok().begin;
  Expr *first = parse_star_expression();
  if (!at(TK::Comma))
    return first;
  std::size_t m = mark();
  push(first);
  std::uint32_t end = last_end_;
  while (accept(TK::Comma)) {
    end = last_end_;
    if (!starts_expression(kind()) && !at(TK::Star))
      break;
    push(parse_star_expression());
    end = last_end_;
  }
  auto *t = node<TupleExpr>(begin, end);
  t->elts = finish<Expr>(m);
  return t;
}

/// star_expression: '*' bitwise_or | expression
Expr *Parser::parse_star_expression() {
  if (at(TK::Star)) {
    std::uint32_t begin = tok().begin;
    advance();
    auto *s = node<StarredExpr>(begin, 0);
    s->value = parse_binary(1);
    s->range.end = last_end_;
    return s;
  }
  return parse_expression();
}

/// star_named_expression: '*' bitwise_or | named_expression
Expr *Parser::parse_star_named_expression() {
  if (at(TK::Star))
    return parse_star_expression();
  return parse_named_expression();
}

/// named_expression: NAME ':=' expression | expression !':='
Expr *Parser::parse_named_expression() {
  if (at(TK::Name) && peek().kind == TK::ColonEqual) {
    const Token &name = advance();
    auto *target = node<NameExpr>(name.begin, name.end);
    target->id = intern(tok_text(name));
    target->symbol = Symbol::intern(target->id);
    target->ctx = ExprContext::Store;
    advance();
    auto *n = node<NamedExpr>(name.begin, 0);
    n->target = target;
    n->value = parse_expression();
    n->range.end = last_end_;
    return n;
  }
  Expr *e = parse_expression();
  if (at(TK::ColonEqual))
    fail(e->range.begin.offset, std::string("cannot use assignment expressions with ") + expr_description(*e));
  return e;
}

/// A condition followed by `=`: CPython suggests `==` (invalid_named_expression).
void Parser::check_equal_in_condition(const Expr *condition) {
  if (!at(TK::Equal))
    return;
  if (condition->kind == ExprKind::Name)
    fail(condition->range.begin.offset, "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
  if (condition->kind != ExprKind::Compare && condition->kind != ExprKind::BoolOp &&
      condition->kind != ExprKind::IfExp && condition->kind != ExprKind::Lambda && condition->kind != ExprKind::Tuple &&
      condition->kind != ExprKind::List && condition->kind != ExprKind::GeneratorExp &&
      condition->kind != ExprKind::NamedExpr &&
      !(condition->kind == ExprKind::UnaryOp && condition->as<UnaryOpExpr>().op == UnaryOpKind::Not))
    fail(condition->range.begin.offset, std::string("cannot assign to ") + expr_description(*condition) +
                                            " here. Maybe you meant '==' instead of '='?");
  fail_here();
}

/// expression: disjunction 'if' disjunction 'else' expression | disjunction | lambdef
Expr *Parser::parse_expression() {
  DepthGuard guard(*this);
  if (at(TK::KwLambda))
    return parse_lambda();
  std::uint32_t begin = tok().begin;
  Expr *body = parse_disjunction();
  if (!at(TK::KwIf))
    return body;
  advance();
  auto *e = node<IfExpExpr>(begin, 0);
  e->body = body;
  e->test = parse_disjunction();
  if (!accept(TK::KwElse)) {
    if (at(TK::Newline) || at(TK::EndOfFile) || at(TK::RParen) || at(TK::RSquare) || at(TK::RBrace) || at(TK::Comma) ||
        at(TK::Semi))
      fail(begin, "expected 'else' after 'if' expression");
    fail_here();
  }
  e->orelse = parse_expression();
  e->range.end = last_end_;
  return e;
}

/// lambdef: 'lambda' [lambda_params] ':' expression
Expr *Parser::parse_lambda() {
  std::uint32_t begin = tok().begin;
  advance();
  auto *e = node<LambdaExpr>(begin, 0);
  e->args = parse_parameters(TK::Colon, false);
  expect(TK::Colon);
  e->body = parse_expression();
  e->range.end = last_end_;
  return e;
}

/// disjunction: conjunction ('or' conjunction)+ | conjunction
Expr *Parser::parse_disjunction() {
  std::uint32_t begin = tok().begin;
  Expr *first = parse_conjunction();
  if (!at(TK::KwOr))
    return first;
  std::size_t m = mark();
  push(first);
  while (accept(TK::KwOr))
    push(parse_conjunction());
  auto *e = node_from<BoolOpExpr>(begin);
  e->op = BoolOpKind::Or;
  e->values = finish<Expr>(m);
  return e;
}

/// conjunction: inversion ('and' inversion)+ | inversion
Expr *Parser::parse_conjunction() {
  std::uint32_t begin = tok().begin;
  Expr *first = parse_inversion();
  if (!at(TK::KwAnd))
    return first;
  std::size_t m = mark();
  push(first);
  while (accept(TK::KwAnd))
    push(parse_inversion());
  auto *e = node_from<BoolOpExpr>(begin);
  e->op = BoolOpKind::And;
  e->values = finish<Expr>(m);
  return e;
}

/// inversion: 'not' inversion | comparison
Expr *Parser::parse_inversion() {
  if (!at(TK::KwNot))
    return parse_comparison();
  DepthGuard guard(*this);
  std::uint32_t begin = tok().begin;
  advance();
  auto *e = node<UnaryOpExpr>(begin, 0);
  e->op = UnaryOpKind::Not;
  e->operand = parse_inversion();
  e->range.end = last_end_;
  return e;
}

/// comparison: bitwise_or (compare_op bitwise_or)*
/// compare_op: '==' | '!=' | '<=' | '<' | '>=' | '>' | 'not' 'in' | 'in' | 'is' 'not' | 'is'
Expr *Parser::parse_comparison() {
  std::uint32_t begin = tok().begin;
  Expr *left = parse_binary(1);
  std::size_t ops_mark = cmp_scratch_.size();
  std::size_t m = mark();
  for (;;) {
    CmpOpKind op;
    switch (kind()) {
    case TK::EqEqual:
      op = CmpOpKind::Eq;
      break;
    case TK::NotEqual:
      op = CmpOpKind::NotEq;
      break;
    case TK::Less:
      op = CmpOpKind::Lt;
      break;
    case TK::LessEqual:
      op = CmpOpKind::LtE;
      break;
    case TK::Greater:
      op = CmpOpKind::Gt;
      break;
    case TK::GreaterEqual:
      op = CmpOpKind::GtE;
      break;
    case TK::KwIn:
      op = CmpOpKind::In;
      break;
    case TK::KwIs:
      op = peek().kind == TK::KwNot ? CmpOpKind::IsNot : CmpOpKind::Is;
      break;
    case TK::KwNot:
      if (peek().kind != TK::KwIn)
        goto done;
      op = CmpOpKind::NotIn;
      break;
    default:
      goto done;
    }
    advance();
    if (op == CmpOpKind::IsNot || op == CmpOpKind::NotIn)
      advance();
    cmp_scratch_.push_back(op);
    push(parse_binary(1));
  }
done:
  if (mark() == m)
    return left;
  auto *e = node_from<CompareExpr>(begin);
  e->left = left;
  e->ops = arena_.copy(std::span<const CmpOpKind>(cmp_scratch_.data() + ops_mark, cmp_scratch_.size() - ops_mark));
  cmp_scratch_.resize(ops_mark);
  e->comparators = finish<Expr>(m);
  return e;
}

/// bitwise_or .. term, by precedence climbing:
///   bitwise_or: bitwise_or '|' bitwise_xor | bitwise_xor   (and so on down to)
///   term: term ('*' | '/' | '//' | '%' | '@') factor | factor
Expr *Parser::parse_binary(int min_precedence) {
  std::uint32_t begin = tok().begin;
  Expr *left = parse_factor();
  ChainGuard chain(*this);
  for (;;) {
    BinOpKind op;
    int precedence = binary_precedence(kind(), op);
    if (precedence == 0 || precedence < min_precedence)
      return left;
    chain.link();
    advance();
    Expr *right = parse_binary(precedence + 1);
    auto *e = node_from<BinOpExpr>(begin);
    e->op = op;
    e->left = left;
    e->right = right;
    left = e;
  }
}

/// factor: '+' factor | '-' factor | '~' factor | power
Expr *Parser::parse_factor() {
  DepthGuard guard(*this);
  UnaryOpKind op;
  switch (kind()) {
  case TK::Plus:
    op = UnaryOpKind::UAdd;
    break;
  case TK::Minus:
    op = UnaryOpKind::USub;
    break;
  case TK::Tilde:
    op = UnaryOpKind::Invert;
    break;
  default:
    return parse_power();
  }
  std::uint32_t begin = tok().begin;
  advance();
  auto *e = node<UnaryOpExpr>(begin, 0);
  e->op = op;
  e->operand = parse_factor();
  e->range.end = last_end_;
  return e;
}

/// power: await_primary '**' factor | await_primary
/// await_primary: 'await' primary | primary
Expr *Parser::parse_power() {
  std::uint32_t begin = tok().begin;
  Expr *base;
  if (at(TK::KwAwait)) {
    advance();
    auto *a = node<AwaitExpr>(begin, 0);
    a->value = parse_primary();
    a->range.end = last_end_;
    base = a;
  } else {
    base = parse_primary();
  }
  if (!accept(TK::DoubleStar))
    return base;
  auto *e = node<BinOpExpr>(begin, 0);
  e->op = BinOpKind::Pow;
  e->left = base;
  e->right = parse_factor();
  e->range.end = last_end_;
  return e;
}

/// primary: primary '.' NAME | primary genexp | primary '(' [arguments] ')'
///   | primary '[' slices ']' | atom
Expr *Parser::parse_primary() {
  std::uint32_t begin = tok().begin;
  Expr *e = parse_atom();
  ChainGuard chain(*this);
  for (;;) {
    if (at(TK::Dot) || at(TK::LParen) || at(TK::LSquare))
      chain.link();
    switch (kind()) {
    case TK::Dot: {
      advance();
      if (!at(TK::Name))
        fail_here();
      const Token &name = advance();
      auto *a = node<AttributeExpr>(begin, name.end);
      a->value = e;
      a->attr = intern(tok_text(name));
      a->attr_symbol = Symbol::intern(a->attr);
      e = a;
      break;
    }
    case TK::LParen:
      e = parse_call(e);
      break;
    case TK::LSquare:
      e = parse_subscript(e);
      break;
    default:
      return e;
    }
  }
}

/// arguments: ','.(starred_expression | (assignment_expression | expression !':=') !'=')+
///   [',' kwargs] | kwargs
/// kwargs: ','.(NAME '=' expression | '*' expression | '**' expression)+
Expr *Parser::parse_call(Expr *func) {
  std::uint32_t begin = func->range.begin.offset;
  std::uint32_t lparen = tok().begin;
  open_bracket();
  std::size_t args_mark = mark();
  std::vector<void *> keywords; // usually empty or short; kept apart from the scratch stack
  bool seen_keyword = false, seen_kwunpack = false;
  const Expr *last = nullptr;
  std::size_t count = 0;
  const Expr *genexp = nullptr;
  while (!at(TK::RParen)) {
    ++count;
    std::uint32_t arg_begin = tok().begin;
    if (at(TK::Star)) {
      advance();
      auto *s = node<StarredExpr>(arg_begin, 0);
      s->value = parse_expression();
      s->range.end = last_end_;
      if (seen_kwunpack)
        fail(arg_begin, "iterable argument unpacking follows keyword argument unpacking");
      push(s);
      last = s;
    } else if (at(TK::DoubleStar)) {
      advance();
      auto *k = node<Keyword>(arg_begin, 0);
      k->value = parse_expression();
      k->range.end = last_end_;
      keywords.push_back(k);
      seen_kwunpack = true;
      last = k->value;
    } else if (at(TK::Name) && peek().kind == TK::Equal) {
      const Token &name = advance();
      advance();
      auto *k = node<Keyword>(arg_begin, 0);
      k->arg = intern(tok_text(name));
      k->value = parse_expression();
      k->range.end = last_end_;
      keywords.push_back(k);
      seen_keyword = true;
      last = k->value;
    } else {
      Expr *e = parse_named_expression();
      if (at(TK::Equal))
        fail(e->range.begin.offset, "expression cannot contain assignment, perhaps you meant \"==\"?");
      if (at(TK::KwFor)) {
        auto *g = node<GeneratorExpExpr>(arg_begin, 0);
        g->elt = e;
        g->generators = parse_comprehension_clauses();
        g->range.end = last_end_;
        if (!genexp)
          genexp = g;
        e = g;
      }
      // CPython reports these at the token after the argument (its last token fetched).
      if (seen_kwunpack)
        fail(tok().begin, "positional argument follows keyword argument unpacking");
      if (seen_keyword)
        fail(tok().begin, "positional argument follows keyword argument");
      push(e);
      last = e;
    }
    if (!accept(TK::Comma))
      break;
  }
  if (genexp && (count > 1 || at(TK::Comma)))
    fail(genexp->range.begin.offset, "Generator expression must be parenthesized");
  close_bracket(TK::RParen, last);
  auto *c = node_from<CallExpr>(begin);
  c->func = func;
  c->args = finish<Expr>(args_mark);
  // A sole generator argument spans the parentheses, as in CPython.
  if (genexp && count == 1) {
    auto *g = const_cast<Expr *>(genexp);
    g->range.begin.offset = lparen;
    g->range.end = last_end_;
  }
  std::size_t m = mark();
  for (void *k : keywords)
    push(k);
  c->keywords = finish<Keyword>(m);
  return c;
}

/// slices: slice !',' | ','.(slice | starred_expression)+ [',']
Expr *Parser::parse_subscript(Expr *value) {
  std::uint32_t begin = value->range.begin.offset;
  open_bracket();
  std::uint32_t slice_begin = tok().begin;
  Expr *first = parse_slice();
  Expr *slice = first;
  if (first->kind == ExprKind::Starred && !at(TK::Comma)) {
    // `a[*idx]` subscripts with a one-element tuple, as CPython.
    auto *t = node<TupleExpr>(first->range.begin.offset, first->range.end);
    push(first);
    t->elts = finish<Expr>(mark() - 1);
    slice = t;
  } else if (at(TK::Comma)) {
    std::size_t m = mark();
    push(first);
    std::uint32_t end = last_end_;
    while (accept(TK::Comma)) {
      end = last_end_;
      if (at(TK::RSquare))
        break;
      push(parse_slice());
      end = last_end_;
    }
    auto *t = node<TupleExpr>(slice_begin, end);
    t->elts = finish<Expr>(m);
    slice = t;
  }
  close_bracket(TK::RSquare, first);
  auto *s = node_from<SubscriptExpr>(begin);
  s->value = value;
  s->slice = slice;
  return s;
}

/// slice: [expression] ':' [expression] [':' [expression]] | named_expression
///   (and '*' bitwise_or, a starred_expression, inside a tuple of slices)
Expr *Parser::parse_slice() {
  std::uint32_t begin = tok().begin;
  if (at(TK::Star))
    return parse_star_expression();
  Expr *lower = nullptr;
  if (!at(TK::Colon)) {
    lower = parse_named_expression();
    if (!at(TK::Colon))
      return lower;
  }
  advance();
  auto *s = node<SliceExpr>(begin, 0);
  s->lower = lower;
  auto ends_part = [&] { return at(TK::Colon) || at(TK::Comma) || at(TK::RSquare); };
  if (!ends_part())
    s->upper = parse_expression();
  if (accept(TK::Colon) && !at(TK::Comma) && !at(TK::RSquare))
    s->step = parse_expression();
  s->range.end = last_end_;
  return s;
}

/// yield_expr: 'yield' 'from' expression | 'yield' [star_expressions]
Expr *Parser::parse_yield_expression() {
  std::uint32_t begin = tok().begin;
  advance();
  if (accept(TK::KwFrom)) {
    auto *y = node<YieldFromExpr>(begin, 0);
    y->value = parse_expression();
    y->range.end = last_end_;
    return y;
  }
  auto *y = node<YieldExpr>(begin, 0);
  if (starts_expression(kind()) || at(TK::Star))
    y->value = parse_star_expressions();
  y->range.end = last_end_;
  return y;
}

/// for_if_clauses: ('for' star_targets 'in' disjunction ('if' disjunction)*)+
NodeList<Comprehension> Parser::parse_comprehension_clauses() {
  std::size_t m = mark();
  while (at(TK::KwFor)) {
    std::uint32_t begin = tok().begin;
    advance();
    auto *c = node<Comprehension>(begin, 0);
    c->target = parse_star_targets();
    expect(TK::KwIn);
    c->iter = parse_disjunction();
    std::size_t ifs = mark();
    while (accept(TK::KwIf))
      push(parse_disjunction());
    c->ifs = finish<Expr>(ifs);
    c->range.end = last_end_;
    push(c);
  }
  return finish<Comprehension>(m);
}

/// atom: NAME | 'True' | 'False' | 'None' | strings | NUMBER | (tuple | group | genexp)
///   | (list | listcomp) | (dict | set | dictcomp | setcomp) | '...'
Expr *Parser::parse_atom() {
  const Token &t = tok();
  switch (t.kind) {
  case TK::Name: {
    advance();
    auto *n = node<NameExpr>(t.begin, t.end);
    n->id = intern(tok_text(t));
    n->symbol = Symbol::intern(n->id);
    return n;
  }
  case TK::Number:
    advance();
    return parse_number(t);
  case TK::String:
    return parse_strings();
  case TK::KwTrue:
  case TK::KwFalse:
  case TK::KwNone:
  case TK::Ellipsis: {
    advance();
    auto *c = node<ConstantExpr>(t.begin, t.end);
    c->value_kind = t.kind == TK::KwTrue    ? ConstantKind::True
                    : t.kind == TK::KwFalse ? ConstantKind::False
                    : t.kind == TK::KwNone  ? ConstantKind::None
                                            : ConstantKind::Ellipsis;
    return c;
  }
  case TK::LParen:
    return parse_paren();
  case TK::LSquare:
    return parse_list_display();
  case TK::LBrace:
    return parse_brace_display();
  default:
    fail_here();
  }
}

/// tuple: '(' [star_named_expression ',' [star_named_expressions]] ')'
/// group: '(' (yield_expr | named_expression) ')'
/// genexp: '(' named_expression for_if_clauses ')'
Expr *Parser::parse_paren() {
  std::uint32_t begin = tok().begin;
  open_bracket();
  if (at(TK::RParen)) {
    close_bracket(TK::RParen, nullptr);
    return node_from<TupleExpr>(begin);
  }
  if (at(TK::KwYield)) {
    Expr *y = parse_yield_expression();
    close_bracket(TK::RParen, y);
    return y;
  }
  Expr *first = parse_star_named_expression();
  if (at(TK::KwFor)) {
    auto *g = node<GeneratorExpExpr>(begin, 0);
    g->elt = first;
    g->generators = parse_comprehension_clauses();
    close_bracket(TK::RParen, nullptr);
    g->range.end = last_end_;
    return g;
  }
  if (at(TK::RParen)) {
    if (first->kind == ExprKind::Starred)
      fail(first->range.begin.offset, "cannot use starred expression here");
    close_bracket(TK::RParen, first);
    return first;
  }
  if (!at(TK::Comma))
    fail_after_element(first);
  std::size_t m = mark();
  push(first);
  const Expr *last = first;
  while (accept(TK::Comma)) {
    if (at(TK::RParen))
      break;
    Expr *e = parse_star_named_expression();
    push(e);
    last = e;
  }
  close_bracket(TK::RParen, last);
  auto *t = node_from<TupleExpr>(begin);
  t->elts = finish<Expr>(m);
  return t;
}

/// list: '[' [star_named_expressions] ']'
/// listcomp: '[' named_expression for_if_clauses ']'
Expr *Parser::parse_list_display() {
  std::uint32_t begin = tok().begin;
  open_bracket();
  std::size_t m = mark();
  const Expr *last = nullptr;
  while (!at(TK::RSquare)) {
    Expr *e = parse_star_named_expression();
    if (mark() == m && at(TK::KwFor)) {
      auto *c = node<ListCompExpr>(begin, 0);
      c->elt = e;
      c->generators = parse_comprehension_clauses();
      close_bracket(TK::RSquare, nullptr);
      c->range.end = last_end_;
      return c;
    }
    push(e);
    last = e;
    if (!accept(TK::Comma))
      break;
  }
  close_bracket(TK::RSquare, last);
  auto *l = node_from<ListExpr>(begin);
  l->elts = finish<Expr>(m);
  return l;
}

/// dict: '{' [double_starred_kvpairs] '}'
/// set: '{' star_named_expressions '}'
/// dictcomp: '{' kvpair for_if_clauses '}'
/// setcomp: '{' named_expression for_if_clauses '}'
Expr *Parser::parse_brace_display() {
  std::uint32_t begin = tok().begin;
  open_bracket();
  if (at(TK::RBrace)) {
    close_bracket(TK::RBrace, nullptr);
    return node_from<DictExpr>(begin);
  }
  // The first entry decides between a dict and a set.
  bool is_dict;
  Expr *first_key = nullptr;
  Expr *first_value;
  if (at(TK::DoubleStar)) {
    advance();
    is_dict = true;
    first_value = parse_binary(1);
  } else {
    Expr *e = parse_star_named_expression();
    if (at(TK::Colon) && e->kind != ExprKind::Starred) {
      advance();
      is_dict = true;
      first_key = e;
      first_value = parse_expression();
      if (at(TK::KwFor)) {
        auto *c = node<DictCompExpr>(begin, 0);
        c->key = first_key;
        c->value = first_value;
        c->generators = parse_comprehension_clauses();
        close_bracket(TK::RBrace, nullptr);
        c->range.end = last_end_;
        return c;
      }
    } else {
      is_dict = false;
      first_value = e;
      if (at(TK::KwFor)) {
        auto *c = node<SetCompExpr>(begin, 0);
        c->elt = e;
        c->generators = parse_comprehension_clauses();
        close_bracket(TK::RBrace, nullptr);
        c->range.end = last_end_;
        return c;
      }
    }
  }
  if (!is_dict) {
    std::size_t m = mark();
    push(first_value);
    const Expr *last = first_value;
    while (accept(TK::Comma)) {
      if (at(TK::RBrace))
        break;
      Expr *e = parse_star_named_expression();
      push(e);
      last = e;
    }
    close_bracket(TK::RBrace, last);
    auto *s = node_from<SetExpr>(begin);
    s->elts = finish<Expr>(m);
    return s;
  }
  // Keys (null for `**`) and values go on the scratch stack interleaved, then split.
  std::size_t m = mark();
  push(first_key);
  push(first_value);
  const Expr *last = first_value;
  while (accept(TK::Comma)) {
    if (at(TK::RBrace))
      break;
    if (accept(TK::DoubleStar)) {
      push(nullptr);
      Expr *v = parse_binary(1);
      push(v);
      last = v;
      continue;
    }
    Expr *k = parse_expression();
    if (!at(TK::Colon)) {
      if (at(TK::Comma) || at(TK::RBrace))
        fail(k->range.begin.offset, "':' expected after dictionary key");
      fail_after_element(k);
    }
    advance();
    Expr *v = parse_expression();
    push(k);
    push(v);
    last = v;
  }
  close_bracket(TK::RBrace, last);
  std::size_t n = (mark() - m) / 2;
  auto **keys = static_cast<Expr **>(arena_.allocate(sizeof(Expr *) * n, alignof(Expr *)));
  auto **values = static_cast<Expr **>(arena_.allocate(sizeof(Expr *) * n, alignof(Expr *)));
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = static_cast<Expr *>(scratch_[m + 2 * i]);
    values[i] = static_cast<Expr *>(scratch_[m + 2 * i + 1]);
  }
  scratch_.resize(m);
  auto *d = node_from<DictExpr>(begin);
  d->keys = {keys, n};
  d->values = {values, n};
  return d;
}

/// NUMBER: converted here; the tokenizer has checked its form.
Expr *Parser::parse_number(const Token &t) {
  auto *c = node<ConstantExpr>(t.begin, t.end);
  std::string_view raw = tok_text(t);
  char digits_buf[128];
  std::string long_digits;
  char *digits = digits_buf;
  std::size_t n = 0;
  if (raw.size() >= sizeof digits_buf) {
    long_digits.resize(raw.size() + 1);
    digits = long_digits.data();
  }
  for (char ch : raw)
    if (ch != '_')
      digits[n++] = ch;
  digits[n] = '\0';
  std::string_view d(digits, n);
  char last = d.back();
  bool is_imaginary = last == 'j' || last == 'J';
  bool radix = d.size() > 1 && d[0] == '0' && ((d[1] | 0x20) == 'x' || (d[1] | 0x20) == 'o' || (d[1] | 0x20) == 'b');
  bool is_float = !radix && !is_imaginary && d.find_first_of(".eE") != std::string_view::npos;
  if (is_imaginary || is_float) {
    std::string_view body = is_imaginary ? d.substr(0, d.size() - 1) : d;
    double value = 0;
    auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (ec != std::errc() || ptr != body.data() + body.size()) {
      // Out of range: strtod gives inf or 0 as Python does.
      std::string copy(body);
      value = std::strtod(copy.c_str(), nullptr);
    }
    c->value_kind = is_imaginary ? ConstantKind::Imaginary : ConstantKind::Float;
    c->float_value = value;
    return c;
  }
  c->value_kind = ConstantKind::Int;
  int base = 10;
  std::string_view body = d;
  if (radix) {
    char r = static_cast<char>(d[1] | 0x20);
    base = r == 'x' ? 16 : r == 'o' ? 8 : 2;
    body = d.substr(2);
  }
  std::uint64_t value = 0;
  bool overflow = false;
  for (char ch : body) {
    auto digit = static_cast<std::uint64_t>(hex_value(ch));
    if (value > (std::uint64_t(INT64_MAX) - digit) / static_cast<std::uint64_t>(base)) {
      overflow = true;
      break;
    }
    value = value * static_cast<std::uint64_t>(base) + digit;
  }
  if (overflow) {
    c->int_overflow = true;
    c->text = intern(d);
  } else {
    c->int_value = static_cast<std::int64_t>(value);
  }
  return c;
}

// ================================================================================================
// Strings
// ================================================================================================

StringPiece Parser::string_piece(const Token &t) const {
  StringPiece piece;
  std::uint32_t p = t.begin;
  for (; text_[p] != '\'' && text_[p] != '"'; ++p) {
    char c = static_cast<char>(text_[p] | 0x20);
    piece.raw |= c == 'r';
    piece.bytes |= c == 'b';
    piece.fstring |= c == 'f';
  }
  char quote = text_[p];
  bool triple = p + 2 < t.end && text_[p + 1] == quote && text_[p + 2] == quote && t.end - p >= 6;
  std::uint32_t q = triple ? 3 : 1;
  piece.body_begin = p + q;
  piece.body_end = t.end - q;
  return piece;
}

/// Decodes the escapes of a non-f-string body (or an f-string's literal run) into `out`.
void Parser::decode_body(const StringPiece &piece, std::uint32_t begin, std::uint32_t end, const Token &t,
                         std::string &out) {
  auto unicode_error = [&](std::uint32_t from, std::uint32_t to, const char *what) {
    std::string message = std::string("(unicode error) 'unicodeescape' codec can't decode bytes in position ") +
                          std::to_string(from - piece.body_begin) + "-" + std::to_string(to - piece.body_begin) + ": " +
                          what;
    if (piece.bytes)
      message = std::string("(value error) invalid \\x escape at position ") + std::to_string(from - piece.body_begin);
    fail(t.end, message);
  };
  std::uint32_t p = begin;
  while (p < end) {
    std::uint32_t run = p;
    while (run < end && text_[run] != '\\' && !(text_[run] == '\r'))
      ++run;
    if (piece.bytes) {
      for (std::uint32_t i = p; i < run; ++i)
        if (static_cast<unsigned char>(text_[i]) >= 0x80)
          fail(t.begin, "bytes can only contain ASCII literal characters");
    }
    out.append(text_.data() + p, run - p);
    p = run;
    if (p >= end)
      break;
    char c = text_[p];
    if (c == '\r') {
      // Python reads source with universal newlines: CRLF and CR in a literal are '\n'.
      out += '\n';
      p += (p + 1 < end && text_[p + 1] == '\n') ? 2 : 1;
      continue;
    }
    // A backslash.
    if (piece.raw) {
      out += '\\';
      ++p;
      if (p < end) {
        if (text_[p] == '\r') {
          continue;
        }
        out += text_[p++];
      }
      continue;
    }
    std::uint32_t esc = p;
    ++p;
    if (p >= end) {
      out += '\\';
      break;
    }
    char e = text_[p++];
    switch (e) {
    case '\n':
      break;
    case '\r':
      if (p < end && text_[p] == '\n')
        ++p;
      break;
    case '\\':
      out += '\\';
      break;
    case '\'':
      out += '\'';
      break;
    case '"':
      out += '"';
      break;
    case 'a':
      out += '\a';
      break;
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'n':
      out += '\n';
      break;
    case 'r':
      out += '\r';
      break;
    case 't':
      out += '\t';
      break;
    case 'v':
      out += '\v';
      break;
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7': {
      unsigned value = static_cast<unsigned>(e - '0');
      for (int i = 0; i < 2 && p < end && text_[p] >= '0' && text_[p] <= '7'; ++i)
        value = value * 8 + static_cast<unsigned>(text_[p++] - '0');
      if (piece.bytes)
        out += static_cast<char>(value & 0xff);
      else
        append_utf8(out, value);
      break;
    }
    case 'x':
    case 'u':
    case 'U': {
      if (piece.bytes && e != 'x') {
        out += '\\';
        out += e;
        break;
      }
      int width = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      char32_t value = 0;
      for (int i = 0; i < width; ++i) {
        int h = p < end ? hex_value(text_[p]) : -1;
        if (h < 0)
          unicode_error(esc, p - 1 < esc + 1 ? esc + 1 : p - 1,
                        e == 'x'   ? "truncated \\xXX escape"
                        : e == 'u' ? "truncated \\uXXXX escape"
                                   : "truncated \\UXXXXXXXX escape");
        value = value * 16 + static_cast<char32_t>(h);
        ++p;
      }
      if (piece.bytes) {
        out += static_cast<char>(value);
      } else {
        if (value > 0x10ffff)
          unicode_error(esc, p - 1, "illegal Unicode character");
        append_utf8(out, value);
      }
      break;
    }
    case 'N':
      if (!piece.bytes) {
        // No Unicode name database in nkicc: a named escape is reported, not guessed.
        std::uint32_t close = p;
        while (close < end && text_[close] != '}')
          ++close;
        unicode_error(esc, close < end ? close : end - 1, "unknown Unicode character name");
      }
      out += "\\N";
      break;
    default:
      // An unknown escape keeps its backslash (CPython only warns).
      out += '\\';
      if (static_cast<unsigned char>(e) >= 0x80 && piece.bytes)
        fail(t.begin, "bytes can only contain ASCII literal characters");
      out += e;
      break;
    }
  }
}

void Parser::flush_literal(std::string &literal, std::uint32_t begin, std::uint32_t end) {
  if (literal.empty())
    return;
  auto *c = node<ConstantExpr>(begin, end);
  c->value_kind = ConstantKind::Str;
  c->text = intern(literal);
  literal.clear();
  push(c);
}

/// Parses an f-string body from p up to `end` (the closing quote) or, inside a format spec, up
/// to the '}' that closes the replacement field; returns where it stopped.
std::uint32_t Parser::parse_fstring_body(const StringPiece &piece, std::uint32_t p, std::uint32_t end, int spec_level,
                                         std::uint32_t range_begin, std::uint32_t range_end, std::string &literal) {
  Token fake{TK::String, false, range_begin, range_end};
  while (p < end) {
    std::uint32_t run = p;
    while (run < end && text_[run] != '{' && text_[run] != '}')
      ++run;
    decode_body(piece, p, run, fake, literal);
    p = run;
    if (p >= end)
      break;
    if (text_[p] == '{') {
      if (p + 1 < end && text_[p + 1] == '{') {
        literal += '{';
        p += 2;
        continue;
      }
      p = parse_fstring_field(piece, p, end, spec_level, range_begin, range_end, literal);
      continue;
    }
    // '}'
    if (p + 1 < end && text_[p + 1] == '}') {
      literal += '}';
      p += 2;
      continue;
    }
    if (spec_level > 0)
      return p;
    fail(p, "f-string: single '}' is not allowed");
  }
  return p;
}

/// One replacement field `{expression[=][!conversion][:format_spec]}` starting at the '{'.
std::uint32_t Parser::parse_fstring_field(const StringPiece &piece, std::uint32_t p, std::uint32_t end, int spec_level,
                                          std::uint32_t range_begin, std::uint32_t range_end, std::string &literal) {
  std::uint32_t field_begin = p;
  std::uint32_t expr_begin = p + 1;
  std::uint32_t q = expr_begin;
  // Find where the expression ends: CPython 3.11 scans for a top-level '!', ':', '=' or '}'
  // outside nested brackets and strings.
  char brackets[kMaxBracketDepth];
  std::size_t depth = 0;
  char in_string = 0;
  bool triple = false;
  bool debug = false;
  for (; q < end; ++q) {
    char c = text_[q];
    if (c == '\\')
      fail(q, "f-string expression part cannot include a backslash");
    if (in_string) {
      if (c == in_string && (!triple || (q + 2 < end && text_[q + 1] == c && text_[q + 2] == c))) {
        if (triple)
          q += 2;
        in_string = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      triple = q + 2 < end && text_[q + 1] == c && text_[q + 2] == c;
      if (triple)
        q += 2;
      in_string = c;
      continue;
    }
    if (c == '#')
      fail(q, "f-string expression part cannot include '#'");
    if (c == '(' || c == '[' || c == '{') {
      if (depth >= kMaxBracketDepth)
        fail(q, "f-string: too many nested parenthesis");
      brackets[depth++] = c;
      continue;
    }
    if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) {
        if (c == '}')
          break;
        fail(q, std::string("f-string: unmatched '") + c + "'");
      }
      char open = brackets[--depth];
      if ((open == '(' && c != ')') || (open == '[' && c != ']') || (open == '{' && c != '}'))
        fail(q, std::string("f-string: closing parenthesis '") + c + "' does not match opening parenthesis '" + open +
                    "'");
      continue;
    }
    if (depth > 0)
      continue;
    if (c == '!' && q + 1 < end && text_[q + 1] == '=') {
      ++q;
      continue;
    }
    if (c == '=' && q + 1 < end && text_[q + 1] == '=') {
      ++q;
      continue;
    }
    if ((c == '<' || c == '>') && q + 1 < end && text_[q + 1] == '=') {
      ++q;
      continue;
    }
    if (c == '=') {
      debug = true;
      break;
    }
    if (c == '!' || c == ':')
      break;
  }
  if (in_string)
    fail(q >= end ? end : q, "f-string: unterminated string");
  if (q >= end)
    fail(end, "f-string: expecting '}'");
  std::uint32_t expr_end = q;
  bool blank = true;
  for (std::uint32_t i = expr_begin; i < expr_end; ++i)
    if (text_[i] != ' ' && text_[i] != '\t' && text_[i] != '\n' && text_[i] != '\r' && text_[i] != '\f')
      blank = false;
  if (blank)
    fail(q, "f-string: empty expression not allowed");
  Expr *value = parse_fstring_expression(expr_begin, expr_end);
  auto *f = node<FormattedValueExpr>(field_begin, 0);
  f->value = value;
  if (debug) {
    // `{x=}` shows its own text before the value, merged into the literal before it.
    ++q;
    while (q < end && (text_[q] == ' ' || text_[q] == '\t' || text_[q] == '\n' || text_[q] == '\r'))
      ++q;
    literal.append(text_.substr(expr_begin, q - expr_begin));
  }
  flush_literal(literal, range_begin, range_end);
  if (q < end && text_[q] == '!') {
    ++q;
    char conv = q < end ? text_[q] : '\0';
    if (conv != 's' && conv != 'r' && conv != 'a')
      fail(q, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
    f->conversion = conv;
    ++q;
  }
  if (q < end && text_[q] == ':') {
    if (spec_level >= 1)
      fail(q, "f-string: expressions nested too deeply");
    ++q;
    std::uint32_t spec_begin = q;
    std::size_t m = mark();
    std::string spec_literal;
    q = parse_fstring_body(piece, q, end, spec_level + 1, range_begin, range_end, spec_literal);
    flush_literal(spec_literal, range_begin, range_end);
    auto *spec = node<JoinedStrExpr>(spec_begin, q);
    spec->range = SourceRange{SourceLoc{file_, range_begin}, range_end};
    spec->values = finish<Expr>(m);
    f->format_spec = spec;
  }
  if (q >= end || text_[q] != '}')
    fail(q >= end ? end : q, "f-string: expecting '}'");
  ++q;
  if (debug && f->conversion == 0 && f->format_spec == nullptr)
    f->conversion = 'r';
  f->range.end = q;
  push(f);
  return q;
}

/// Tokenizes and parses one f-string expression in place (its tokens carry real offsets).
Expr *Parser::parse_fstring_expression(std::uint32_t begin, std::uint32_t end) {
  DepthGuard guard(*this);
  TokenStream stream;
  if (auto err = tokenize_range(text_, begin, end, stream)) {
    ++fstring_depth_;
    fail(err->offset, err->message);
  }
  const std::vector<Token> *saved_toks = toks_;
  std::size_t saved_pos = pos_;
  std::uint32_t saved_last_end = last_end_;
  int saved_brackets = bracket_depth_;
  toks_ = &stream.tokens;
  pos_ = 0;
  ++fstring_depth_;
  // CPython parses the expression as if parenthesized: newlines are free and a missing comma
  // gets the bracket hint.
  bracket_depth_ = 1;
  Expr *e = at(TK::KwYield) ? parse_yield_expression() : parse_star_expressions();
  if (e->kind == ExprKind::Starred)
    fail(e->range.begin.offset, "cannot use starred expression here");
  if (!at(TK::EndOfFile))
    fail_after_element(e);
  // CPython 3.11 parses the part as `(expression)`: a bare tuple takes the braces' place.
  if (e->kind == ExprKind::Tuple && e->range.begin.offset == (*toks_)[0].begin) {
    e->range.begin.offset = begin - 1;
    e->range.end = end + 1;
  }
  --fstring_depth_;
  toks_ = saved_toks;
  pos_ = saved_pos;
  last_end_ = saved_last_end;
  bracket_depth_ = saved_brackets;
  return e;
}

/// strings: STRING+ (implicitly concatenated; bytes and str do not mix)
Expr *Parser::parse_strings() {
  std::uint32_t begin = tok().begin;
  std::size_t first = pos_;
  bool any_bytes = false, any_str = false, any_f = false;
  while (at(TK::String)) {
    StringPiece piece = string_piece(tok());
    (piece.bytes ? any_bytes : any_str) = true;
    any_f |= piece.fstring;
    advance();
  }
  std::uint32_t end = last_end_;
  if (any_bytes && any_str)
    fail(end, "cannot mix bytes and nonbytes literals");
  std::size_t last = pos_;
  if (!any_f) {
    string_scratch_.clear();
    for (std::size_t i = first; i < last; ++i) {
      const Token &t = (*toks_)[i];
      StringPiece piece = string_piece(t);
      decode_body(piece, piece.body_begin, piece.body_end, t, string_scratch_);
    }
    auto *c = node<ConstantExpr>(begin, end);
    c->value_kind = any_bytes ? ConstantKind::Bytes : ConstantKind::Str;
    c->text = intern(string_scratch_);
    return c;
  }
  std::size_t m = mark();
  std::string literal;
  for (std::size_t i = first; i < last; ++i) {
    const Token t = (*toks_)[i];
    StringPiece piece = string_piece(t);
    if (!piece.fstring) {
      decode_body(piece, piece.body_begin, piece.body_end, t, literal);
      continue;
    }
    std::uint32_t stop = parse_fstring_body(piece, piece.body_begin, piece.body_end, 0, begin, end, literal);
    (void)stop;
  }
  flush_literal(literal, begin, end);
  auto *j = node<JoinedStrExpr>(begin, end);
  j->values = finish<Expr>(m);
  return j;
}

// ================================================================================================
// The module-level view
// ================================================================================================

void build_module_view(Module &module) {
  for (const Stmt *s : module.body) {
    switch (s->kind) {
    case StmtKind::Import:
      for (const Alias *a : s->as<ImportStmt>().names) {
        ImportBinding b;
        b.module = a->name;
        b.bound = !a->asname.empty() ? a->asname : a->name.substr(0, a->name.find('.'));
        b.stmt = s;
        module.imports.push_back(b);
      }
      break;
    case StmtKind::ImportFrom: {
      const auto &from = s->as<ImportFromStmt>();
      for (const Alias *a : from.names) {
        ImportBinding b;
        b.module = from.module;
        b.name = a->name;
        b.bound = !a->asname.empty() ? a->asname : a->name;
        b.level = from.level;
        b.stmt = s;
        module.imports.push_back(b);
      }
      break;
    }
    case StmtKind::FunctionDef:
      module.functions.push_back(&s->as<FunctionDefStmt>());
      break;
    case StmtKind::Assign: {
      const auto &assign = s->as<AssignStmt>();
      for (const Expr *t : assign.targets)
        if (t->kind == ExprKind::Name)
          module.constants.push_back(ModuleConstant{t->as<NameExpr>().id, assign.value, s});
      break;
    }
    case StmtKind::AnnAssign: {
      const auto &assign = s->as<AnnAssignStmt>();
      if (assign.value && assign.target->kind == ExprKind::Name)
        module.constants.push_back(ModuleConstant{assign.target->as<NameExpr>().id, assign.value, s});
      break;
    }
    default:
      break;
    }
  }
}

std::uint32_t line_of(std::string_view text, std::uint32_t offset) {
  std::uint32_t line = 1;
  for (std::uint32_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n')))
      ++line;
  return line;
}

} // namespace

// ================================================================================================
// The arena
// ================================================================================================

void *AstArena::allocate(std::size_t size, std::size_t align) {
  auto space = static_cast<std::size_t>(end_ - cur_);
  std::size_t pad = cur_ ? (align - reinterpret_cast<std::uintptr_t>(cur_) % align) % align : 0;
  if (!cur_ || pad + size > space) {
    std::size_t block = std::max(next_block_, size + align);
    // Default-initialized: every node is constructed over its bytes, so zeroing is wasted work.
    blocks_.push_back(std::unique_ptr<std::byte[]>(new std::byte[block]));
    cur_ = blocks_.back().get();
    end_ = cur_ + block;
    if (next_block_ < 4 * 1024 * 1024)
      next_block_ *= 2;
    pad = (align - reinterpret_cast<std::uintptr_t>(cur_) % align) % align;
  }
  void *p = cur_ + pad;
  cur_ += pad + size;
  used_ += pad + size;
  return p;
}

std::string_view AstArena::copy_string(std::string_view text) {
  if (text.empty())
    return {};
  auto *p = static_cast<char *>(allocate(text.size(), 1));
  std::memcpy(p, text.data(), text.size());
  return {p, text.size()};
}

const FunctionDefStmt *Module::function(std::string_view name) const {
  const FunctionDefStmt *found = nullptr;
  for (const FunctionDefStmt *f : functions)
    if (f->name == name)
      found = f;
  return found;
}

std::optional<Module> parse_module(const SourceManager &sources, FileId file, DiagnosticEngine &diags) {
  std::string_view text = sources.contents(file);
  auto report = [&](std::uint32_t offset, std::string message) {
    diags.error(SourceLoc{file, offset}, std::move(message), "syntax-error");
    return std::nullopt;
  };
  if (text.size() >= UINT32_MAX)
    return report(0, "source file too large (4 GiB or more)");
  TokenStream stream;
  // CPython tokenizes the whole file when the parser fails, and a tokenizer error anywhere wins
  // over the parser's error: tokenizing first gives the same answer.
  if (auto err = tokenize(text, stream))
    return report(err->offset, err->message);
  Module module;
  module.file = file;
  // The first arena block from the token count (nodes take some tens of bytes a token), so that
  // a one-line source reserves 1 KiB rather than 64 KiB; large files start at 64 KiB as before.
  std::size_t first_block = std::clamp<std::size_t>(stream.tokens.size() * 64, 1024, 64 * 1024);
  module.arena = std::make_unique<AstArena>(first_block);
  Parser parser(sources, file, *module.arena);
  try {
    module.body = parser.parse_file(stream);
  } catch (const ParseAbort &) {
  }
  if (parser.error) {
    // When the file ends inside brackets, an error after the innermost unclosed bracket is
    // that bracket's fault (CPython's raise_unclosed_parentheses_error wins there).
    if (stream.unclosed_bracket) {
      std::uint32_t open = *stream.unclosed_bracket;
      if (parser.error->reached_eof || line_of(text, parser.error->offset) > line_of(text, open))
        return report(open, std::string("'") + text[open] + "' was never closed");
    }
    return report(parser.error->offset, parser.error->message);
  }
  if (stream.unclosed_bracket)
    return report(*stream.unclosed_bracket, std::string("'") + text[*stream.unclosed_bracket] + "' was never closed");
  build_module_view(module);
  return module;
}

} // namespace nkicc::python
