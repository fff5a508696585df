// The abstract syntax tree of a Python 3 module, shaped like CPython's `ast` module (the same
// node kinds and fields) so that the tracer can interpret it the way CPython would evaluate it.
//
// Nodes live in an arena owned by the Module: they are trivially destructible, children are
// plain pointers, lists are spans into the arena, and text (identifiers, decoded strings) is
// copied into the arena, so a Module is independent of the token buffer. Every node carries
// the byte range it covers; SourceManager::line_col turns it into line:column.
#pragma once

#include "nkicc/python/symbol.h"
#include "nkicc/support/source_manager.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace nkicc::python {

struct Expr;
struct Stmt;
struct Arguments;

template <class T> using NodeList = std::span<T *const>;
using ExprList = NodeList<Expr>;
using StmtList = NodeList<Stmt>;

enum class ExprKind : std::uint8_t {
  BoolOp,
  NamedExpr,
  BinOp,
  UnaryOp,
  Lambda,
  IfExp,
  Dict,
  Set,
  ListComp,
  SetComp,
  DictComp,
  GeneratorExp,
  Await,
  Yield,
  YieldFrom,
  Compare,
  Call,
  FormattedValue,
  JoinedStr,
  Constant,
  Attribute,
  Subscript,
  Starred,
  Name,
  List,
  Tuple,
  Slice,
};

enum class StmtKind : std::uint8_t {
  FunctionDef,
  ClassDef,
  Return,
  Delete,
  Assign,
  AugAssign,
  AnnAssign,
  For,
  While,
  If,
  With,
  Raise,
  Try,
  Assert,
  Import,
  ImportFrom,
  Global,
  Nonlocal,
  Expr,
  Pass,
  Break,
  Continue,
};

/// Whether a Name, Attribute, Subscript, Starred, List or Tuple is read, assigned or deleted.
enum class ExprContext : std::uint8_t { Load, Store, Del };
enum class BoolOpKind : std::uint8_t { And, Or };
enum class BinOpKind : std::uint8_t {
  Add,
  Sub,
  Mult,
  MatMult,
  Div,
  Mod,
  Pow,
  LShift,
  RShift,
  BitOr,
  BitXor,
  BitAnd,
  FloorDiv
};
enum class UnaryOpKind : std::uint8_t { Invert, Not, UAdd, USub };
enum class CmpOpKind : std::uint8_t { Eq, NotEq, Lt, LtE, Gt, GtE, Is, IsNot, In, NotIn };
enum class ConstantKind : std::uint8_t { None, True, False, Ellipsis, Int, Float, Imaginary, Str, Bytes };

/// Names for dumps and messages (`Add`, `Eq`, `Store`, ...), as CPython's ast.dump spells them.
std::string_view expr_kind_name(ExprKind kind);
std::string_view stmt_kind_name(StmtKind kind);
std::string_view bin_op_name(BinOpKind op);
std::string_view unary_op_name(UnaryOpKind op);
std::string_view cmp_op_name(CmpOpKind op);
std::string_view context_name(ExprContext ctx);
/// The operator as Python source writes it (`<=`, `is not`), for messages.
std::string_view cmp_op_symbol(CmpOpKind op);

/// The common part of every node: its byte range in its file.
struct Node {
  SourceRange range;
  SourceLoc begin() const { return range.begin; }
  SourceLoc end() const { return SourceLoc{range.begin.file, range.end}; }
};

struct Expr : Node {
  ExprKind kind;

  /// Checked downcast: `expr.as<CallExpr>()`; the kind must match.
  template <class T> const T &as() const;
  template <class T> T &as();
  template <class T> bool is() const { return kind == T::kKind; }
};

struct Stmt : Node {
  StmtKind kind;

  template <class T> const T &as() const;
  template <class T> T &as();
  template <class T> bool is() const { return kind == T::kKind; }
};

// ---- expressions ------------------------------------------------------------------------------

/// `a and b and c`: one node for the whole chain, as CPython.
struct BoolOpExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::BoolOp;
  BoolOpKind op;
  ExprList values;
};

/// `target := value`
struct NamedExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::NamedExpr;
  Expr *target;
  Expr *value;
};

struct BinOpExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::BinOp;
  BinOpKind op;
  Expr *left;
  Expr *right;
};

struct UnaryOpExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::UnaryOp;
  UnaryOpKind op;
  Expr *operand;
};

struct LambdaExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Lambda;
  Arguments *args;
  Expr *body;
};

/// `body if test else orelse`
struct IfExpExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::IfExp;
  Expr *test;
  Expr *body;
  Expr *orelse;
};

/// `{k: v, **m}`: a null key marks a `**m` entry, whose mapping is the value.
struct DictExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Dict;
  ExprList keys;
  ExprList values;
};

/// One `for target in iter if cond ...` clause of a comprehension.
struct Comprehension : Node {
  Expr *target;
  Expr *iter;
  ExprList ifs;
};

/// ListComp, SetComp and GeneratorExp: `elt` over `generators`.
struct ComprehensionExpr : Expr {
  Expr *elt;
  NodeList<Comprehension> generators;
};
struct ListCompExpr : ComprehensionExpr {
  static constexpr ExprKind kKind = ExprKind::ListComp;
};
struct SetCompExpr : ComprehensionExpr {
  static constexpr ExprKind kKind = ExprKind::SetComp;
};
struct GeneratorExpExpr : ComprehensionExpr {
  static constexpr ExprKind kKind = ExprKind::GeneratorExp;
};

struct DictCompExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::DictComp;
  Expr *key;
  Expr *value;
  NodeList<Comprehension> generators;
};

/// Await, Yield (value may be null) and YieldFrom.
struct AwaitExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Await;
  Expr *value;
};
struct YieldExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Yield;
  Expr *value;
};
struct YieldFromExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::YieldFrom;
  Expr *value;
};

/// `a < b <= c`: ops.size() == comparators.size().
struct CompareExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Compare;
  Expr *left;
  std::span<const CmpOpKind> ops;
  ExprList comparators;
};

/// `name=value` in a call or class header; `**value` when `arg` is empty.
struct Keyword : Node {
  std::string_view arg;
  Expr *value;
};

/// `func(args, keywords)`: `*x` arguments are Starred nodes in args.
struct CallExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Call;
  Expr *func;
  ExprList args;
  NodeList<Keyword> keywords;
};

/// One `{value!conversion:format_spec}` part of an f-string. conversion is 0, 's', 'r' or
/// 'a'; format_spec is null or a JoinedStr.
struct FormattedValueExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::FormattedValue;
  Expr *value;
  char conversion;
  Expr *format_spec;
};

/// An f-string (after implicit concatenation): Constant Str parts and FormattedValue parts.
struct JoinedStrExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::JoinedStr;
  ExprList values;
};

/// A literal. Numbers are converted: an Int that does not fit int64 sets `int_overflow` and
/// keeps its digits (no `_`, with any 0x/0o/0b prefix) in `text`. Str holds the decoded UTF-8
/// text of the (implicitly concatenated) literal; Bytes the decoded bytes.
struct ConstantExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Constant;
  ConstantKind value_kind;
  bool int_overflow = false;
  std::int64_t int_value = 0;
  double float_value = 0.0; ///< Float, and the imaginary part of Imaginary
  std::string_view text;
};

struct AttributeExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Attribute;
  ExprContext ctx;
  Expr *value;
  std::string_view attr;
  Symbol attr_symbol; ///< `attr`, interned
};

/// `value[slice]`: `a[i, 1:2]` has a Tuple slice whose elements include Slice nodes.
struct SubscriptExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Subscript;
  ExprContext ctx;
  Expr *value;
  Expr *slice;
};

struct StarredExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Starred;
  ExprContext ctx;
  Expr *value;
};

struct NameExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Name;
  ExprContext ctx;
  std::string_view id;
  Symbol symbol; ///< `id`, interned
  /// Filled by the interpreter when it analyzes the function this name appears in (not a
  /// nested def or lambda): that function's node, and the name's index among its locals, -1
  /// when the name is not one of them. The interpreter checks the owner before using the slot.
  mutable const void *slot_owner = nullptr;
  mutable std::int32_t slot = -1;
};

/// List, Tuple and Set displays.
struct ListExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::List;
  ExprContext ctx;
  ExprList elts;
};
struct TupleExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Tuple;
  ExprContext ctx;
  ExprList elts;
};
struct SetExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Set;
  ExprList elts;
};

/// `lower:upper:step` inside a subscript; each part may be null.
struct SliceExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Slice;
  Expr *lower;
  Expr *upper;
  Expr *step;
};

// ---- statements -------------------------------------------------------------------------------

/// One parameter.
struct Arg : Node {
  std::string_view name;
  Expr *annotation; ///< may be null
};

/// A parameter list, as CPython's `arguments`: `defaults` align with the last positional
/// parameters (posonlyargs then args); `kw_defaults` align one to one with kwonlyargs, null
/// where a keyword-only parameter has no default.
struct Arguments {
  NodeList<Arg> posonlyargs;
  NodeList<Arg> args;
  Arg *vararg;
  NodeList<Arg> kwonlyargs;
  ExprList kw_defaults;
  Arg *kwarg;
  ExprList defaults;
};

struct FunctionDefStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::FunctionDef;
  std::string_view name;
  Arguments *args;
  StmtList body;
  ExprList decorators;
  Expr *returns; ///< may be null
};

struct ClassDefStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::ClassDef;
  std::string_view name;
  ExprList bases;
  NodeList<Keyword> keywords;
  StmtList body;
  ExprList decorators;
};

struct ReturnStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Return;
  Expr *value;
};
struct DeleteStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Delete;
  ExprList targets;
};

/// `t1 = t2 = value`
struct AssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assign;
  ExprList targets;
  Expr *value;
};

struct AugAssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::AugAssign;
  BinOpKind op;
  Expr *target;
  Expr *value;
};

/// `target: annotation [= value]`; simple is true for an unparenthesized Name target.
struct AnnAssignStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::AnnAssign;
  bool simple;
  Expr *target;
  Expr *annotation;
  Expr *value; ///< may be null
};

struct ForStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::For;
  Expr *target;
  Expr *iter;
  StmtList body;
  StmtList orelse;
};

struct WhileStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::While;
  Expr *test;
  StmtList body;
  StmtList orelse;
};

/// `elif` chains are nested If statements in orelse, as CPython.
struct IfStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::If;
  Expr *test;
  StmtList body;
  StmtList orelse;
};

struct WithItem : Node {
  Expr *context_expr;
  Expr *optional_vars; ///< may be null
};

struct WithStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::With;
  NodeList<WithItem> items;
  StmtList body;
};

struct RaiseStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Raise;
  Expr *exc;   ///< may be null
  Expr *cause; ///< may be null
};

struct ExceptHandler : Node {
  Expr *type;            ///< may be null
  std::string_view name; ///< empty when there is no `as name`
  StmtList body;
};

/// try/except/else/finally; is_star for `except*` (CPython's TryStar).
struct TryStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Try;
  bool is_star;
  StmtList body;
  NodeList<ExceptHandler> handlers;
  StmtList orelse;
  StmtList finalbody;
};

struct AssertStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assert;
  Expr *test;
  Expr *msg; ///< may be null
};

/// `name as asname`: name is dotted (`neuronxcc.nki.language`) or `*`; asname may be empty.
struct Alias : Node {
  std::string_view name;
  std::string_view asname;
};

struct ImportStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Import;
  NodeList<Alias> names;
};

/// `from ..module import names`: level counts the leading dots; module may be empty.
struct ImportFromStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::ImportFrom;
  std::string_view module;
  NodeList<Alias> names;
  std::uint32_t level;
};

struct GlobalStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Global;
  std::span<const std::string_view> names;
};
struct NonlocalStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Nonlocal;
  std::span<const std::string_view> names;
};
struct ExprStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Expr;
  Expr *value;
};
struct PassStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Pass;
};
struct BreakStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Break;
};
struct ContinueStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Continue;
};

template <class T> const T &Expr::as() const {
  static_assert(std::is_base_of_v<Expr, T>);
  if (kind != T::kKind)
    __builtin_trap();
  return static_cast<const T &>(*this);
}
template <class T> T &Expr::as() {
  if (kind != T::kKind)
    __builtin_trap();
  return static_cast<T &>(*this);
}
template <class T> const T &Stmt::as() const {
  static_assert(std::is_base_of_v<Stmt, T>);
  if (kind != T::kKind)
    __builtin_trap();
  return static_cast<const T &>(*this);
}
template <class T> T &Stmt::as() {
  if (kind != T::kKind)
    __builtin_trap();
  return static_cast<T &>(*this);
}

// ---- the arena and the module -----------------------------------------------------------------

/// Bump allocator for AST nodes; everything it holds is trivially destructible.
class AstArena {
public:
  AstArena() = default;
  /// `first_block` sizes the first block (a tiny inline source needs far less than the default
  /// 64 KiB: 100,000 of them reserved 6.5 GB); blocks after it double as usual.
  explicit AstArena(std::size_t first_block) : next_block_(first_block) {}
  AstArena(const AstArena &) = delete;
  AstArena &operator=(const AstArena &) = delete;

  void *allocate(std::size_t size, std::size_t align);

  template <class T> T *make() {
    static_assert(std::is_trivially_destructible_v<T>);
    T *node = new (allocate(sizeof(T), alignof(T))) T{};
    if constexpr (requires { T::kKind; })
      node->kind = T::kKind;
    return node;
  }

  template <class T> std::span<const T> copy(std::span<const T> items) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (items.empty())
      return {};
    T *out = static_cast<T *>(allocate(sizeof(T) * items.size(), alignof(T)));
    for (std::size_t i = 0; i < items.size(); ++i)
      new (out + i) T(items[i]);
    return {out, items.size()};
  }

  std::string_view copy_string(std::string_view text);

  std::size_t bytes_used() const { return used_; }

private:
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
  std::byte *cur_ = nullptr;
  std::byte *end_ = nullptr;
  std::size_t next_block_ = 64 * 1024;
  std::size_t used_ = 0;
};

/// An import as the tracer binds it: `import a.b as c` binds `c` to module `a.b`; `import a.b`
/// binds `a`; `from a import b as c` binds `c` to `a.b`.
struct ImportBinding {
  std::string_view module; ///< the module imported from (`neuronxcc.nki.language`, `neuronxcc`)
  std::string_view name;   ///< for from-imports, the imported name (`nki`, `*`); empty for `import`
  std::string_view bound;  ///< the name the statement binds in the module namespace
  std::uint32_t level = 0; ///< relative-import dots
  const Stmt *stmt = nullptr;
};

/// A module-level `NAME = <expression>` (the last assignment wins when a name is reassigned).
struct ModuleConstant {
  std::string_view name;
  const Expr *value = nullptr;
  const Stmt *stmt = nullptr;
};

/// A parsed file: its statements and the module-level view the tracer starts from.
struct Module {
  FileId file = kNoFile;
  StmtList body;

  /// Top-level imports, in order.
  std::vector<ImportBinding> imports;
  /// Top-level `def`s (with their decorators), in order.
  std::vector<const FunctionDefStmt *> functions;
  /// Top-level single-name assignments, in order.
  std::vector<ModuleConstant> constants;

  /// The last top-level `def name`, or null.
  const FunctionDefStmt *function(std::string_view name) const;

  std::unique_ptr<AstArena> arena;
};

} // namespace nkicc::python
