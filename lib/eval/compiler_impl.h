// The compiler's state while it compiles one code unit (a module body, a function, a class
// body): registers, the names in view, definite assignment, loops and the blocks an early exit
// unwinds. compiler.cpp holds registers, emission, names and constants; compile_expressions.cpp
// and compile_statements.cpp hold the two halves of the AST.
#pragma once

#include "eval/compiler.h"

#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace nkicc::eval {

using namespace python;
using trace::Interpreter;
using trace::TraceError;

/// Where a name lives for the code being compiled.
struct NameRef {
  enum Kind : std::uint8_t {
    Reg,        ///< a local register
    Cell,       ///< a register holding a cell (a captured local or a free variable)
    Global,     ///< the module's globals, then builtins
    Namespace,  ///< a class body's namespace, then globals and builtins
    ClassDeref, ///< a class body's free variable: the namespace, then the cell
    Dynamic,    ///< a function with `from m import *`: its namespace, then globals
  } kind;
  std::uint16_t reg = kNoReg;
};

/// An instruction operand: a register, or a constant.
struct Opnd {
  std::uint16_t index;
  bool konst;
};

/// Whether an expression assigns a name in passing (`:=`): its operands are then read from
/// copies, not from the locals in place.
bool contains_walrus(const Expr *e);
/// Whether compiling `e` into a register writes that register only as its last step, so that
/// an assignment `x = e` may compile e straight into x's register.
bool writes_last(const Expr &e);

class Compiler {
public:
  // ---- entry -----------------------------------------------------------------------------
  Compiler(Code &code, const ScopeInfo &unit, Interpreter &in) : code_(code), unit_(unit), in_(in) {}
  void module_body(StmtList body);
  void function_body(const FunctionTemplate &t);
  void class_body(const ClassTemplate &t);

  const SymbolTable *symtable_ = nullptr;

private:
  Code &code_;
  const ScopeInfo &unit_;
  Interpreter &in_;

  std::map<std::uint32_t, std::uint16_t> regs_; ///< the unit's locals, cells and free variables
  std::uint16_t top_ = 0;                       ///< the first free register

  /// An inlined comprehension: its variables' registers.
  struct CompContext {
    const ScopeInfo *scope;
    std::map<std::uint32_t, std::uint16_t> regs;
  };
  std::vector<CompContext> comps_;

  // Definite assignment of the unit's locals: a read of a local that may be unbound checks.
  std::vector<std::uint8_t> assigned_;
  bool dead_ = false;
  int conditional_ = 0; ///< inside a part of an expression that may not run

  struct Loop {
    std::uint32_t head;
    std::vector<std::uint32_t> breaks;
    std::size_t unwinds = 0; ///< unwinds_.size() when the loop began
    /// The loop statement: the step budget blames it for every statement of its body, so that
    /// where an endless loop stops does not depend on which statement the last step fell on.
    SourceLoc loc;
  };
  std::vector<Loop> loops_;

  /// Instructions whose exceptions go to one handler: spans, as a `return` or `break` that
  /// leaves the block through an inlined `finally` suspends the protection while that runs.
  struct Region {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> spans;
    std::uint32_t open_at = 0;
    bool open = false;
    std::uint16_t exc = 0;
    std::uint16_t loops = 0;
  };
  std::vector<std::unique_ptr<Region>> regions_;

  /// What leaving a block early must run: a try statement's `finally`, a `with`'s exit.
  struct Unwind {
    enum Kind : std::uint8_t { Try, With } kind;
    std::vector<Region *> regions; ///< suspended while this (and inner) blocks' code runs
    const StmtList *finalbody = nullptr;
    std::uint16_t with_reg = 0;
    SourceLoc loc;
  };
  std::vector<Unwind> unwinds_;
  /// Registers holding the exception of each enclosing `except` clause (for a bare `raise`).
  std::vector<std::uint16_t> handling_;

  bool pending_step_ = false;
  SourceLoc step_loc_;
  bool direct_locals_ = true; ///< read locals in place (false inside a statement with `:=`)

  /// Definite assignment across branches: the state after both is what both guarantee.
  struct Branch {
    std::vector<std::uint8_t> assigned;
    bool dead;
  };

  // ---- registers -------------------------------------------------------------------------
  std::uint16_t temp();
  std::uint16_t temps(std::size_t n);
  std::uint16_t local(Symbol s, bool named = true);
  bool is_free(Symbol s) const;
  bool is_param(std::uint16_t r) const;
  void params(const Arguments *a);
  void finish_locals();
  void finish();

  // ---- emission --------------------------------------------------------------------------
  std::uint32_t pc() const { return static_cast<std::uint32_t>(code_.insns.size()); }
  std::uint32_t emit(Op op, std::uint16_t a = 0, std::uint16_t b = 0, std::uint16_t c = 0, std::uint32_t d = 0,
                     SourceLoc loc = {}, std::uint8_t flags = 0, SourceLoc extra = {});
  void patch(std::uint32_t at, std::uint32_t target) { code_.insns[at].d = target; }
  void patch_all(std::vector<std::uint32_t> &list, std::uint32_t target);
  std::uint32_t konst(Value v);
  std::uint32_t name_index(Symbol s);
  std::uint32_t global_cache(Symbol s);
  std::uint32_t attr_cache(Symbol s);
  void begin_statement(SourceLoc loc);
  void end_statement();
  /// Raises `type: message` at run time (an error in compiled code is raised where the tree
  /// walker raised it: when the construct runs).
  void emit_error(std::string type, std::string message, SourceLoc loc);
  void unsupported(std::string what, SourceLoc loc) { emit(Op::Unsupported, 0, 0, 0, konst(Value::str(what)), loc); }

  // ---- names -----------------------------------------------------------------------------
  NameRef resolve(Symbol s);
  bool is_assigned(std::uint16_t r) const { return r >= assigned_.size() || assigned_[r]; }
  void mark_assigned(std::uint16_t r);
  /// The register holding a local known to be bound, after a check when it may not be.
  std::uint16_t read_local(const NameExpr &n, std::uint16_t r);
  void load_name(const NameExpr &n, std::uint16_t dst, std::uint8_t flags = 0);
  /// Stores R[src] into a name; `bind` tells the object its name (an assignment).
  void store_name(Symbol s, std::uint16_t src, bool bind, SourceLoc loc);
  void store_name(std::string_view n, std::uint16_t src, SourceLoc loc);
  void delete_name(const NameExpr &n);

  // ---- constants -------------------------------------------------------------------------
  /// The value of an expression made of literals, computed now, when computing it cannot fail
  /// and the result is small; nullopt otherwise.
  std::optional<Value> fold(const Expr &e);
  void load_constant(const Value &v, std::uint16_t dst, std::uint8_t flags = 0, SourceLoc loc = {});

  // ---- expressions -----------------------------------------------------------------------
  /// An operand for `e`: a constant, a bound local read in place, or a temporary.
  Opnd operand(const Expr &e);
  /// A register holding the value of `e`.
  std::uint16_t any_reg(const Expr &e);
  static std::uint8_t const_flags(Opnd b, Opnd c);
  /// Compiles `e` so that its value ends in R[dst]; the instruction writing it carries `flags`
  /// (kBind for an assignment to a name).
  void expr_to(const Expr &e, std::uint16_t dst, std::uint8_t flags = 0);
  void expr_to_inner(const Expr &e, std::uint16_t dst, std::uint8_t flags);
  /// Elements of a tuple, list or set display, `*x` included, into R[dst].
  void display(ExprList elts, Op build, std::uint16_t dst, std::uint8_t flags, SourceLoc loc);
  void dict_display(const DictExpr &d, std::uint16_t dst, std::uint8_t flags, SourceLoc loc);
  /// A subscript's key: slices and tuples of them become slice and tuple values (constants when
  /// every part is one).
  Opnd subscript_key(const Expr &slice, bool *made = nullptr);
  void fstring(const JoinedStrExpr &j, std::uint16_t dst, std::uint8_t flags, SourceLoc loc);
  void formatted_value(const FormattedValueExpr &fv, std::uint16_t dst);

  // ---- calls -----------------------------------------------------------------------------
  std::uint32_t call_site(const CallExpr &c, SourceLoc loc);
  void call(const CallExpr &c, std::uint16_t dst, std::uint8_t flags);
  /// Positional then keyword argument values into R[first...]; returns their count.
  std::uint16_t call_args(const CallExpr &c, std::uint16_t first);
  /// `f(*a, **m)`: R[first] the positional arguments (a list), R[first+1] the keywords (a dict).
  void call_ex_args(const CallExpr &c, std::uint16_t first);
  void super_call(const CallExpr &c, std::uint16_t dst, std::uint8_t flags);
  void make_function(const Arguments *params, const FunctionDefStmt *def, const LambdaExpr *lambda,
                     std::string_view name, std::uint16_t dst, std::uint8_t flags, SourceLoc loc);
  std::string child_qualname(std::string_view name) const;

  // ---- comprehensions --------------------------------------------------------------------
  void comprehension(const Expr &e, std::uint16_t dst, std::uint8_t flags);
  void comp_loop(const Expr &e, NodeList<Comprehension> gens, std::size_t k, std::uint16_t first_iter,
                 std::uint16_t result);

  // ---- conditions ------------------------------------------------------------------------
  /// Jumps (to addresses added to `out`) when `e`'s truth is `when`; falls through otherwise.
  /// `loc` is where the truth test's errors are reported.
  void cond_jump(const Expr &e, bool when, std::vector<std::uint32_t> &out, SourceLoc loc);

  // ---- assignment ------------------------------------------------------------------------
  /// The register a loop's item goes into: the target's own when it is a local.
  std::uint16_t target_register(const Expr &target);
  std::uint8_t item_flags(const Expr &target);
  /// After a loop wrote its item into target_register(): the rest of the assignment.
  void assign_from(const Expr &target, std::uint16_t item);
  void assign(const Expr &target, std::uint16_t src);

  // ---- statements ------------------------------------------------------------------------
  void block(StmtList body);
  void stmt(const Stmt &s, SourceLoc cond_loc = {});
  void stmt_inner(const Stmt &s, SourceLoc cond_loc);
  void set_dead();
  Branch save() const { return {assigned_, dead_}; }
  void restore(const Branch &b);
  void merge(const Branch &other);
  void if_stmt(const IfStmt &i, SourceLoc cond_loc);
  /// Locals a loop body deletes are not known bound at its start.
  void forget_deleted(StmtList body);
  void for_stmt(const ForStmt &f);
  void while_stmt(const WhileStmt &w);
  void aug_assign(const AugAssignStmt &a, SourceLoc loc);
  void delete_target(const Expr &t);

  // ---- exceptions and context managers ---------------------------------------------------
  Region *open_region(std::uint16_t exc);
  static void suspend(Region &r, std::uint32_t at);
  static void resume(Region &r, std::uint32_t at);
  void close_region(Region &r, std::uint32_t target);
  /// Runs the `finally` bodies and `with` exits from the innermost block out to unwinds_[depth]
  /// (a `return`, `break` or `continue` leaving them). Each runs unprotected by the handlers of
  /// its own block and of the blocks inside it, but protected by the outer ones.
  void unwind_to(std::size_t depth);
  void try_stmt(const TryStmt &t);
  /// The end of an `except ... as name:` clause: the name is unbound, as Python deletes it.
  void clear_name(Symbol s, SourceLoc loc);
  void with_stmt(const WithStmt &w, std::size_t item);
  void class_def(const ClassDefStmt &c);
  void function_def(const FunctionDefStmt &d);
  void import_stmt(const ImportStmt &s);
  void import_from(const ImportFromStmt &s);
};

} // namespace nkicc::eval
