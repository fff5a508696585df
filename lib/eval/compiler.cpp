// The compiler: one pass over a function's (or module's, or class body's) AST emitting
// register code. Expressions are compiled into a destination register; a local that is known
// to be bound is read in place, a constant is an operand. Every statement's first instruction
// counts a step, as the tree walker counted one per statement.
#include "eval/compiler.h"

#include <algorithm>
#include <limits>

namespace nkicc::eval {

using namespace python;
using trace::Interpreter;
using trace::TraceError;
using K = Value::Kind;

namespace {

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

bool contains_walrus(const Expr *e);

bool any_walrus(ExprList list) {
  return std::any_of(list.begin(), list.end(), [](const Expr *x) { return contains_walrus(x); });
}

/// Whether an expression assigns a name in passing (`:=`): its operands are then read from
/// copies, not from the locals in place.
bool contains_walrus(const Expr *e) {
  if (!e)
    return false;
  switch (e->kind) {
  case ExprKind::NamedExpr:
    return true;
  case ExprKind::BoolOp:
    return any_walrus(e->as<BoolOpExpr>().values);
  case ExprKind::BinOp:
    return contains_walrus(e->as<BinOpExpr>().left) || contains_walrus(e->as<BinOpExpr>().right);
  case ExprKind::UnaryOp:
    return contains_walrus(e->as<UnaryOpExpr>().operand);
  case ExprKind::IfExp:
    return contains_walrus(e->as<IfExpExpr>().test) || contains_walrus(e->as<IfExpExpr>().body) ||
           contains_walrus(e->as<IfExpExpr>().orelse);
  case ExprKind::Dict:
    return any_walrus(e->as<DictExpr>().keys) || any_walrus(e->as<DictExpr>().values);
  case ExprKind::Set:
    return any_walrus(e->as<SetExpr>().elts);
  case ExprKind::ListComp:
  case ExprKind::SetComp:
  case ExprKind::GeneratorExp:
  case ExprKind::DictComp:
    return true; // conservative: comprehensions may hold one anywhere
  case ExprKind::Compare:
    return contains_walrus(e->as<CompareExpr>().left) || any_walrus(e->as<CompareExpr>().comparators);
  case ExprKind::Call: {
    const auto &c = e->as<CallExpr>();
    if (contains_walrus(c.func) || any_walrus(c.args))
      return true;
    for (const Keyword *kw : c.keywords)
      if (contains_walrus(kw->value))
        return true;
    return false;
  }
  case ExprKind::FormattedValue:
    return contains_walrus(e->as<FormattedValueExpr>().value) ||
           contains_walrus(e->as<FormattedValueExpr>().format_spec);
  case ExprKind::JoinedStr:
    return any_walrus(e->as<JoinedStrExpr>().values);
  case ExprKind::Attribute:
    return contains_walrus(e->as<AttributeExpr>().value);
  case ExprKind::Subscript:
    return contains_walrus(e->as<SubscriptExpr>().value) || contains_walrus(e->as<SubscriptExpr>().slice);
  case ExprKind::Starred:
    return contains_walrus(e->as<StarredExpr>().value);
  case ExprKind::List:
    return any_walrus(e->as<ListExpr>().elts);
  case ExprKind::Tuple:
    return any_walrus(e->as<TupleExpr>().elts);
  case ExprKind::Slice:
    return contains_walrus(e->as<SliceExpr>().lower) || contains_walrus(e->as<SliceExpr>().upper) ||
           contains_walrus(e->as<SliceExpr>().step);
  default:
    return false;
  }
}

/// Whether compiling `e` into a register writes that register only as its last step, so that
/// an assignment `x = e` may compile e straight into x's register.
bool writes_last(const Expr &e) {
  switch (e.kind) {
  case ExprKind::BoolOp:
  case ExprKind::NamedExpr:
  case ExprKind::ListComp:
  case ExprKind::SetComp:
  case ExprKind::GeneratorExp:
  case ExprKind::DictComp:
  case ExprKind::Dict:
    return false;
  case ExprKind::Compare:
    return e.as<CompareExpr>().ops.size() == 1;
  case ExprKind::IfExp:
    return writes_last(*e.as<IfExpExpr>().body) && writes_last(*e.as<IfExpExpr>().orelse);
  default:
    return true;
  }
}

class Compiler {
public:
  Compiler(Code &code, const ScopeInfo &unit, Interpreter &in) : code_(code), unit_(unit), in_(in) {}

  void module_body(StmtList body) {
    code_.kind = CodeKind::Module;
    finish_locals();
    block(body);
    emit(Op::ReturnNone);
    finish();
  }

  void function_body(const FunctionTemplate &t) {
    code_.kind = t.lambda ? CodeKind::Lambda : CodeKind::Function;
    params(t.params);
    for (Symbol s : unit_.bound)
      if (!regs_.count(s.id()))
        local(s);
    finish_locals();
    for (std::uint16_t r : code_.cell_regs)
      emit(Op::MakeCell, r, is_param(r) ? 1 : 0);
    if (t.lambda) {
      std::uint16_t r = temp();
      expr_to(*t.lambda->body, r);
      emit(Op::Return, r);
    } else {
      block(t.def->body);
      emit(Op::ReturnNone);
    }
    finish();
  }

  void class_body(const ClassTemplate &t) {
    code_.kind = CodeKind::Class;
    if (unit_.has_class_cell) {
      code_.class_cell = local(class_cell_symbol(), false);
      code_.cell_regs.push_back(code_.class_cell);
    }
    finish_locals();
    if (code_.class_cell != kNoReg)
      emit(Op::MakeCell, code_.class_cell, 0);
    block(t.def->body);
    emit(Op::ReturnNone);
    finish();
  }

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
  };
  std::vector<Loop> loops_;

  bool pending_step_ = false;
  SourceLoc step_loc_;
  bool direct_locals_ = true; ///< read locals in place (false inside a statement with `:=`)

  // ---- registers -----------------------------------------------------------------------------

  std::uint16_t temp() {
    if (top_ >= 0xfff0)
      throw TraceError{"the function is too large for nkicc's evaluator (more than 65520 registers)",
                       "unsupported", {}, {}};
    std::uint16_t r = top_++;
    code_.nregs = std::max<std::uint16_t>(code_.nregs, top_);
    if (code_.local_names.size() < code_.nregs)
      code_.local_names.resize(code_.nregs);
    return r;
  }
  std::uint16_t temps(std::size_t n) {
    std::uint16_t first = top_;
    for (std::size_t k = 0; k < n; ++k)
      temp();
    return first;
  }

  std::uint16_t local(Symbol s, bool named = true) {
    std::uint16_t r = temp();
    regs_[s.id()] = r;
    if (named)
      code_.local_names[r] = s;
    NameKind kind = unit_.kind_of(s);
    if (kind == NameKind::Cell && !is_free(s))
      code_.cell_regs.push_back(r);
    return r;
  }
  bool is_free(Symbol s) const {
    return std::find(unit_.free.begin(), unit_.free.end(), s) != unit_.free.end();
  }
  bool is_param(std::uint16_t r) const {
    for (const Param &p : code_.positional)
      if (p.reg == r)
        return true;
    for (const Param &p : code_.kwonly)
      if (p.reg == r)
        return true;
    return (code_.has_vararg && code_.vararg.reg == r) || (code_.has_kwarg && code_.kwarg.reg == r);
  }

  void params(const Arguments *a) {
    auto param = [&](const Arg *p) {
      Symbol s = Symbol::intern(p->name);
      std::uint16_t r = regs_.count(s.id()) ? regs_[s.id()] : local(s);
      Param out{p->name, s, r, unit_.kind_of(s) == NameKind::Cell};
      if (out.cell)
        code_.simple_params = false;
      return out;
    };
    if (!a)
      return;
    for (const Arg *p : a->posonlyargs)
      code_.positional.push_back(param(p));
    code_.posonly = a->posonlyargs.size();
    for (const Arg *p : a->args)
      code_.positional.push_back(param(p));
    for (const Arg *p : a->kwonlyargs)
      code_.kwonly.push_back(param(p));
    if (a->vararg) {
      code_.has_vararg = true;
      code_.vararg = param(a->vararg);
    }
    if (a->kwarg) {
      code_.has_kwarg = true;
      code_.kwarg = param(a->kwarg);
    }
    if (!code_.kwonly.empty() || code_.has_vararg || code_.has_kwarg)
      code_.simple_params = false;
  }

  void finish_locals() {
    for (Symbol s : unit_.free) {
      std::uint16_t r = regs_.count(s.id()) ? regs_[s.id()] : local(s, false);
      code_.free_regs.push_back(r);
    }
    code_.nlocals = top_;
    assigned_.assign(top_, 0);
    for (const Param &p : code_.positional)
      assigned_[p.reg] = 1;
    for (const Param &p : code_.kwonly)
      assigned_[p.reg] = 1;
    if (code_.has_vararg)
      assigned_[code_.vararg.reg] = 1;
    if (code_.has_kwarg)
      assigned_[code_.kwarg.reg] = 1;
    code_.dynamic_names = unit_.import_star && unit_.kind != ScopeKind::Module;
    code_.defines_functions = unit_.has_nested_functions;
  }

  void finish() {
    code_.extra_locs.resize(code_.insns.size());
    if (code_.nregs == 0)
      temp();
  }

  // ---- emission ------------------------------------------------------------------------------

  std::uint32_t pc() const { return static_cast<std::uint32_t>(code_.insns.size()); }

  std::uint32_t emit(Op op, std::uint16_t a = 0, std::uint16_t b = 0, std::uint16_t c = 0, std::uint32_t d = 0,
                     SourceLoc loc = {}, std::uint8_t flags = 0, SourceLoc extra = {}) {
    std::uint32_t at = pc();
    if (pending_step_) {
      flags |= kStep;
      code_.step_locs.push_back({at, step_loc_});
      pending_step_ = false;
    }
    code_.insns.push_back(Insn{op, flags, a, b, c, d});
    code_.locs.push_back(loc);
    code_.extra_locs.push_back(extra);
    return at;
  }
  void patch(std::uint32_t at, std::uint32_t target) { code_.insns[at].d = target; }
  void patch_all(std::vector<std::uint32_t> &list, std::uint32_t target) {
    for (std::uint32_t at : list)
      patch(at, target);
    list.clear();
  }
  std::uint32_t konst(Value v) {
    code_.consts.push_back(std::move(v));
    return static_cast<std::uint32_t>(code_.consts.size() - 1);
  }
  std::uint32_t name_index(Symbol s) {
    for (std::size_t k = 0; k < code_.names.size(); ++k)
      if (code_.names[k] == s)
        return static_cast<std::uint32_t>(k);
    code_.names.push_back(s);
    return static_cast<std::uint32_t>(code_.names.size() - 1);
  }
  std::uint32_t global_cache(Symbol s) {
    code_.globals.push_back(GlobalCache{s});
    return static_cast<std::uint32_t>(code_.globals.size() - 1);
  }
  std::uint32_t attr_cache(Symbol s) {
    code_.attrs.push_back(AttrCache{s});
    return static_cast<std::uint32_t>(code_.attrs.size() - 1);
  }

  void begin_statement(SourceLoc loc) {
    pending_step_ = true;
    step_loc_ = loc;
  }
  void end_statement() {
    if (pending_step_)
      emit(Op::Nop);
  }

  /// Raises `type: message` at run time (an error in compiled code is raised where the tree
  /// walker raised it: when the construct runs).
  void emit_error(std::string type, std::string message, SourceLoc loc) {
    std::uint32_t m = konst(Value::str(std::move(message)));
    emit(Op::Error, 0, static_cast<std::uint16_t>(m), 0, konst(Value::str(std::move(type))), loc);
  }
  void unsupported(std::string what, SourceLoc loc) { emit(Op::Unsupported, 0, 0, 0, konst(Value::str(what)), loc); }

  // ---- names ---------------------------------------------------------------------------------

  NameRef resolve(Symbol s) {
    // Inlined comprehensions, innermost first.
    for (std::size_t k = comps_.size(); k-- > 0;) {
      const CompContext &c = comps_[k];
      if (auto it = c.regs.find(s.id()); it != c.regs.end())
        return {c.scope->kind_of(s) == NameKind::Cell ? NameRef::Cell : NameRef::Reg, it->second};
    }
    // A class body's comprehension skips the class's own names.
    if (!comps_.empty() && unit_.kind == ScopeKind::Class) {
      NameKind kind = unit_.kind_of(s);
      if (kind == NameKind::Free)
        return {NameRef::Cell, regs_.at(s.id())};
      return {NameRef::Global};
    }
    switch (unit_.kind_of(s)) {
    case NameKind::Local:
      return {NameRef::Reg, regs_.at(s.id())};
    case NameKind::Cell:
    case NameKind::Free:
      if (unit_.kind == ScopeKind::Class && s != class_cell_symbol())
        return {NameRef::ClassDeref, regs_.at(s.id())};
      return {NameRef::Cell, regs_.at(s.id())};
    case NameKind::GlobalExplicit:
      return {NameRef::Global};
    case NameKind::GlobalImplicit:
      return {code_.dynamic_names ? NameRef::Dynamic : NameRef::Global};
    case NameKind::Namespace:
      return {unit_.kind == ScopeKind::Class ? NameRef::Namespace : NameRef::Global};
    }
    return {NameRef::Global};
  }

  bool is_assigned(std::uint16_t r) const { return r >= assigned_.size() || assigned_[r]; }
  void mark_assigned(std::uint16_t r) {
    if (r < assigned_.size() && conditional_ == 0)
      assigned_[r] = 1;
  }

  /// The register holding a local known to be bound, after a check when it may not be.
  std::uint16_t read_local(const NameExpr &n, std::uint16_t r) {
    if (!is_assigned(r)) {
      emit(Op::CheckBound, r, 0, 0, name_index(n.symbol), n.begin());
      mark_assigned(r);
    }
    return r;
  }

  void load_name(const NameExpr &n, std::uint16_t dst, std::uint8_t flags = 0) {
    NameRef ref = resolve(n.symbol);
    switch (ref.kind) {
    case NameRef::Reg: {
      std::uint16_t r = read_local(n, ref.reg);
      if (r != dst || flags)
        emit(Op::Move, dst, r, 0, 0, n.begin(), flags);
      return;
    }
    case NameRef::Cell:
      emit(Op::LoadDeref, dst, ref.reg, 0, name_index(n.symbol), n.begin(), flags);
      return;
    case NameRef::Global:
      emit(Op::LoadGlobal, dst, 0, 0, global_cache(n.symbol), n.begin(), flags);
      return;
    case NameRef::Namespace:
    case NameRef::Dynamic:
      emit(Op::LoadName, dst, 0, 0, global_cache(n.symbol), n.begin(), flags);
      return;
    case NameRef::ClassDeref:
      emit(Op::LoadClassDeref, dst, ref.reg, 0, global_cache(n.symbol), n.begin(), flags);
      return;
    }
  }

  /// Stores R[src] into a name; `bind` tells the object its name (an assignment).
  void store_name(Symbol s, std::uint16_t src, bool bind, SourceLoc loc) {
    NameRef ref = resolve(s);
    std::uint8_t flags = bind ? kBind : 0;
    switch (ref.kind) {
    case NameRef::Reg:
      if (src != ref.reg || bind)
        emit(Op::Move, ref.reg, src, 0, 0, loc, flags);
      mark_assigned(ref.reg);
      return;
    case NameRef::Cell:
    case NameRef::ClassDeref:
      emit(Op::StoreDeref, ref.reg, src, 0, name_index(s), loc, flags);
      return;
    case NameRef::Global:
      emit(Op::StoreGlobal, src, 0, 0, name_index(s), loc, flags);
      return;
    case NameRef::Namespace:
    case NameRef::Dynamic:
      emit(Op::StoreName, src, 0, 0, name_index(s), loc, flags);
      return;
    }
  }
  void store_name(std::string_view n, std::uint16_t src, SourceLoc loc) {
    store_name(Symbol::intern(n), src, false, loc);
  }

  void delete_name(const NameExpr &n) {
    NameRef ref = resolve(n.symbol);
    switch (ref.kind) {
    case NameRef::Reg:
      emit(Op::Unbind, ref.reg, 0, 0, name_index(n.symbol), n.begin());
      if (ref.reg < assigned_.size())
        assigned_[ref.reg] = 0;
      return;
    case NameRef::Cell:
    case NameRef::ClassDeref:
      emit(Op::DeleteDeref, ref.reg, 0, 0, name_index(n.symbol), n.begin());
      return;
    case NameRef::Global:
      emit(Op::DeleteGlobal, 0, 0, 0, name_index(n.symbol), n.begin());
      return;
    case NameRef::Namespace:
    case NameRef::Dynamic:
      emit(Op::DeleteName, 0, 0, 0, name_index(n.symbol), n.begin());
      return;
    }
  }

  // ---- constants -----------------------------------------------------------------------------

  /// The value of an expression made of literals, computed now, when computing it cannot fail
  /// and the result is small; nullopt otherwise.
  std::optional<Value> fold(const Expr &e) {
    switch (e.kind) {
    case ExprKind::Constant: {
      const auto &c = e.as<ConstantExpr>();
      switch (c.value_kind) {
      case ConstantKind::None:
        return Value();
      case ConstantKind::True:
        return Value::boolean(true);
      case ConstantKind::False:
        return Value::boolean(false);
      case ConstantKind::Ellipsis:
        return Value::ellipsis();
      case ConstantKind::Int:
        if (c.int_overflow)
          return std::nullopt;
        return Value::integer(c.int_value);
      case ConstantKind::Float:
        return Value::floating(c.float_value);
      case ConstantKind::Str:
        return Value::str(std::string(c.text));
      default:
        return std::nullopt;
      }
    }
    case ExprKind::UnaryOp: {
      const auto &u = e.as<UnaryOpExpr>();
      std::optional<Value> v = fold(*u.operand);
      if (!v || v->kind == K::Object)
        return std::nullopt;
      try {
        return in_.unary_op(u.op, *v);
      } catch (const TraceError &) {
        return std::nullopt;
      }
    }
    case ExprKind::BinOp: {
      const auto &b = e.as<BinOpExpr>();
      std::optional<Value> l = fold(*b.left);
      if (!l)
        return std::nullopt;
      std::optional<Value> r = fold(*b.right);
      if (!r)
        return std::nullopt;
      // Repetition and `%` formatting could make large or surprising values: left to run time.
      if (l->kind != K::Int && l->kind != K::Float && l->kind != K::Bool)
        if (!(l->kind == K::Str && r->kind == K::Str && b.op == BinOpKind::Add))
          return std::nullopt;
      try {
        Value out = in_.binary_op(b.op, *l, *r);
        if (out.kind == K::Str && out.str_text().size() > 4096)
          return std::nullopt;
        return out;
      } catch (const TraceError &) {
        return std::nullopt;
      }
    }
    case ExprKind::Tuple: {
      const auto &t = e.as<TupleExpr>();
      if (t.elts.size() > 256)
        return std::nullopt;
      std::vector<Value> items;
      for (const Expr *x : t.elts) {
        if (x->kind == ExprKind::Starred)
          return std::nullopt;
        std::optional<Value> v = fold(*x);
        if (!v)
          return std::nullopt;
        items.push_back(std::move(*v));
      }
      return Value::tuple(std::move(items));
    }
    case ExprKind::Slice: {
      const auto &s = e.as<SliceExpr>();
      Value parts[3];
      const Expr *exprs[3] = {s.lower, s.upper, s.step};
      for (int k = 0; k < 3; ++k) {
        if (!exprs[k])
          continue;
        std::optional<Value> v = fold(*exprs[k]);
        if (!v)
          return std::nullopt;
        parts[k] = std::move(*v);
      }
      return Value::slice(parts[0], parts[1], parts[2]);
    }
    default:
      return std::nullopt;
    }
  }

  void load_constant(const Value &v, std::uint16_t dst, std::uint8_t flags = 0, SourceLoc loc = {}) {
    if (v.kind == K::None)
      emit(Op::LoadNone, dst, 0, 0, 0, loc, flags);
    else if (v.kind == K::Bool)
      emit(Op::LoadBool, dst, v.b ? 1 : 0, 0, 0, loc, flags);
    else if (v.kind == K::Int && v.i >= std::numeric_limits<std::int32_t>::min() &&
             v.i <= std::numeric_limits<std::int32_t>::max())
      emit(Op::LoadInt, dst, 0, 0, static_cast<std::uint32_t>(static_cast<std::int32_t>(v.i)), loc, flags);
    else
      emit(Op::LoadConst, dst, 0, 0, konst(v), loc, flags);
  }

  // ---- expressions ---------------------------------------------------------------------------

  /// An operand for `e`: a constant, a bound local read in place, or a temporary.
  Opnd operand(const Expr &e) {
    if (std::optional<Value> v = fold(e)) {
      if (code_.consts.size() < 0xfff0)
        return {static_cast<std::uint16_t>(konst(std::move(*v))), true};
    }
    return {any_reg(e), false};
  }

  /// A register holding the value of `e`.
  std::uint16_t any_reg(const Expr &e) {
    if (e.kind == ExprKind::Name && direct_locals_) {
      const auto &n = e.as<NameExpr>();
      NameRef ref = resolve(n.symbol);
      if (ref.kind == NameRef::Reg)
        return read_local(n, ref.reg);
    }
    std::uint16_t r = temp();
    expr_to(e, r);
    return r;
  }

  static std::uint8_t const_flags(Opnd b, Opnd c) {
    return static_cast<std::uint8_t>((b.konst ? kConstB : 0) | (c.konst ? kConstC : 0));
  }

  /// Compiles `e` so that its value ends in R[dst]; the instruction writing it carries `flags`
  /// (kBind for an assignment to a name).
  void expr_to(const Expr &e, std::uint16_t dst, std::uint8_t flags = 0) {
    std::uint16_t mark = top_;
    expr_to_inner(e, dst, flags);
    top_ = mark;
  }

  void expr_to_inner(const Expr &e, std::uint16_t dst, std::uint8_t flags) {
    if (e.kind != ExprKind::Name) {
      if (std::optional<Value> v = fold(e)) {
        load_constant(*v, dst, flags, e.begin());
        return;
      }
    }
    switch (e.kind) {
    case ExprKind::Constant: {
      const auto &c = e.as<ConstantExpr>();
      if (c.value_kind == ConstantKind::Int && c.int_overflow) {
        emit_error("OverflowError",
                   "integer overflow: the literal " + std::string(c.text) +
                       " does not fit in 64 bits (nkicc has no big integers)",
                   e.begin());
      } else if (c.value_kind == ConstantKind::Imaginary) {
        unsupported("complex number", e.begin());
      } else {
        unsupported("bytes literal", e.begin());
      }
      emit(Op::LoadNone, dst, 0, 0, 0, e.begin(), flags);
      return;
    }
    case ExprKind::Name:
      load_name(e.as<NameExpr>(), dst, flags);
      return;
    case ExprKind::BinOp: {
      const auto &b = e.as<BinOpExpr>();
      Opnd l = operand(*b.left);
      Opnd r = operand(*b.right);
      Op op = b.op == BinOpKind::Add    ? Op::Add
              : b.op == BinOpKind::Sub  ? Op::Sub
              : b.op == BinOpKind::Mult ? Op::Mul
                                        : Op::Binary;
      emit(op, dst, l.index, r.index, static_cast<std::uint32_t>(b.op), e.begin(),
           static_cast<std::uint8_t>(flags | const_flags(l, r)));
      return;
    }
    case ExprKind::UnaryOp: {
      const auto &u = e.as<UnaryOpExpr>();
      std::uint16_t v = any_reg(*u.operand);
      if (u.op == UnaryOpKind::Not)
        emit(Op::Not, dst, v, 0, 0, e.begin(), flags);
      else
        emit(Op::Unary, dst, v, 0, static_cast<std::uint32_t>(u.op), e.begin(), flags);
      return;
    }
    case ExprKind::BoolOp: {
      const auto &b = e.as<BoolOpExpr>();
      std::vector<std::uint32_t> ends;
      for (std::size_t k = 0; k < b.values.size(); ++k) {
        bool last = k + 1 == b.values.size();
        if (k)
          ++conditional_;
        expr_to(*b.values[k], dst, last ? flags : 0);
        if (k)
          --conditional_;
        if (!last)
          ends.push_back(emit(b.op == BoolOpKind::And ? Op::JumpIfFalse : Op::JumpIfTrue, dst, 0, 0, 0, e.begin()));
      }
      patch_all(ends, pc());
      if (flags & kBind)
        emit(Op::Move, dst, dst, 0, 0, e.begin(), kBind);
      return;
    }
    case ExprKind::Compare: {
      const auto &c = e.as<CompareExpr>();
      if (c.ops.size() == 1) {
        Opnd l = operand(*c.left);
        Opnd r = operand(*c.comparators[0]);
        emit(Op::Compare, dst, l.index, r.index, static_cast<std::uint32_t>(c.ops[0]), e.begin(),
             static_cast<std::uint8_t>(flags | const_flags(l, r)));
        return;
      }
      std::uint16_t left = temp();
      expr_to(*c.left, left);
      std::vector<std::uint32_t> ends;
      for (std::size_t k = 0; k < c.ops.size(); ++k) {
        if (k)
          ++conditional_;
        std::uint16_t right = temp();
        expr_to(*c.comparators[k], right);
        if (k)
          --conditional_;
        emit(Op::Compare, dst, left, right, static_cast<std::uint32_t>(c.ops[k]), e.begin());
        if (k + 1 < c.ops.size()) {
          ends.push_back(emit(Op::JumpIfFalse, dst, 0, 0, 0, e.begin()));
          emit(Op::Move, left, right);
        }
      }
      patch_all(ends, pc());
      if (flags & kBind)
        emit(Op::Move, dst, dst, 0, 0, e.begin(), kBind);
      return;
    }
    case ExprKind::IfExp: {
      const auto &i = e.as<IfExpExpr>();
      std::vector<std::uint32_t> to_else;
      cond_jump(*i.test, false, to_else, e.begin());
      ++conditional_;
      expr_to(*i.body, dst, flags);
      std::uint32_t to_end = emit(Op::Jump);
      patch_all(to_else, pc());
      expr_to(*i.orelse, dst, flags);
      --conditional_;
      patch(to_end, pc());
      return;
    }
    case ExprKind::Call:
      call(e.as<CallExpr>(), dst, flags);
      return;
    case ExprKind::Attribute: {
      const auto &a = e.as<AttributeExpr>();
      std::uint16_t v = any_reg(*a.value);
      emit(Op::LoadAttr, dst, v, 0, attr_cache(a.attr_symbol), e.begin(), flags);
      return;
    }
    case ExprKind::Subscript: {
      const auto &s = e.as<SubscriptExpr>();
      std::uint16_t c = any_reg(*s.value);
      bool made = false;
      Opnd key = subscript_key(*s.slice, &made);
      emit(Op::GetItem, dst, c, key.index, 0, e.begin(),
           static_cast<std::uint8_t>(flags | (key.konst ? kConstC : 0) | (made ? kRecycle : 0)));
      return;
    }
    case ExprKind::Slice: {
      Opnd key = subscript_key(e);
      if (key.konst)
        emit(Op::LoadConst, dst, 0, 0, key.index, e.begin(), flags);
      else
        emit(Op::Move, dst, key.index, 0, 0, e.begin(), flags);
      return;
    }
    case ExprKind::Tuple:
      display(e.as<TupleExpr>().elts, Op::BuildTuple, dst, flags, e.begin());
      return;
    case ExprKind::List:
      display(e.as<ListExpr>().elts, Op::BuildList, dst, flags, e.begin());
      return;
    case ExprKind::Set:
      display(e.as<SetExpr>().elts, Op::BuildSet, dst, flags, e.begin());
      return;
    case ExprKind::Dict:
      dict_display(e.as<DictExpr>(), dst, flags, e.begin());
      return;
    case ExprKind::ListComp:
    case ExprKind::SetComp:
    case ExprKind::GeneratorExp:
    case ExprKind::DictComp:
      comprehension(e, dst, flags);
      return;
    case ExprKind::Lambda: {
      const auto &l = e.as<LambdaExpr>();
      make_function(l.args, nullptr, &l, "<lambda>", dst, flags, e.begin());
      return;
    }
    case ExprKind::JoinedStr:
      fstring(e.as<JoinedStrExpr>(), dst, flags, e.begin());
      return;
    case ExprKind::FormattedValue: {
      std::uint16_t part = temp();
      formatted_value(e.as<FormattedValueExpr>(), part);
      emit(Op::BuildString, dst, part, 1, 0, e.begin(), flags);
      return;
    }
    case ExprKind::NamedExpr: {
      const auto &n = e.as<NamedExpr>();
      expr_to(*n.value, dst);
      if (n.target->kind == ExprKind::Name)
        store_name(n.target->as<NameExpr>().symbol, dst, true, n.target->begin());
      if (flags)
        emit(Op::Move, dst, dst, 0, 0, e.begin(), flags);
      return;
    }
    case ExprKind::Starred:
      unsupported("starred expression", e.begin());
      break;
    case ExprKind::Await:
      unsupported("await expression", e.begin());
      break;
    case ExprKind::Yield:
      unsupported("yield expression", e.begin());
      break;
    case ExprKind::YieldFrom:
      unsupported("yield from expression", e.begin());
      break;
    }
    emit(Op::LoadNone, dst, 0, 0, 0, e.begin(), flags);
  }

  /// Elements of a tuple, list or set display, `*x` included, into R[dst].
  void display(ExprList elts, Op build, std::uint16_t dst, std::uint8_t flags, SourceLoc loc) {
    bool starred = std::any_of(elts.begin(), elts.end(), [](const Expr *x) { return x->kind == ExprKind::Starred; });
    if (!starred) {
      std::uint16_t first = temps(elts.size());
      for (std::size_t k = 0; k < elts.size(); ++k)
        expr_to(*elts[k], static_cast<std::uint16_t>(first + k));
      emit(build, dst, first, static_cast<std::uint16_t>(elts.size()), 0, loc, flags);
      return;
    }
    // With `*x`: a list grown element by element, then converted.
    std::uint16_t acc = temp();
    emit(Op::BuildList, acc, 0, 0, 0, loc);
    for (const Expr *x : elts) {
      if (x->kind == ExprKind::Starred) {
        std::uint16_t v = any_reg(*x->as<StarredExpr>().value);
        emit(Op::ListExtend, acc, v, 0, 0, x->begin());
      } else {
        std::uint16_t v = any_reg(*x);
        emit(Op::ListAppend, acc, v, 0, 0, x->begin());
      }
      top_ = static_cast<std::uint16_t>(acc + 1);
    }
    if (build == Op::BuildTuple) {
      emit(Op::ListToTuple, acc, 0, 0, 0, loc);
    } else if (build == Op::BuildSet) {
      std::uint16_t set = temp();
      emit(Op::BuildSet, set, 0, 0, 0, loc);
      // A set display with `*x`: each item added in order.
      emit(Op::SetAdd, set, acc, 1, 0, loc);
      emit(Op::Move, dst, set, 0, 0, loc, flags);
      return;
    }
    emit(Op::Move, dst, acc, 0, 0, loc, flags);
  }

  void dict_display(const DictExpr &d, std::uint16_t dst, std::uint8_t flags, SourceLoc loc) {
    std::uint16_t acc = temp();
    emit(Op::BuildDict, acc, 0, 0, 0, loc);
    for (std::size_t k = 0; k < d.keys.size(); ++k) {
      std::uint16_t mark = top_;
      if (!d.keys[k]) {
        std::uint16_t m = any_reg(*d.values[k]);
        emit(Op::DictMerge, acc, m, 0, 0, d.values[k]->begin());
      } else {
        std::uint16_t key = any_reg(*d.keys[k]);
        std::uint16_t value = any_reg(*d.values[k]);
        emit(Op::DictSet, acc, key, value, 0, d.keys[k]->begin());
      }
      top_ = mark;
    }
    emit(Op::Move, dst, acc, 0, 0, loc, flags);
  }

  /// A subscript's key: slices and tuples of them become slice and tuple values (constants when
  /// every part is one).
  Opnd subscript_key(const Expr &slice, bool *made = nullptr) {
    if (std::optional<Value> v = fold(slice))
      if (code_.consts.size() < 0xfff0)
        return {static_cast<std::uint16_t>(konst(std::move(*v))), true};
    if (slice.kind == ExprKind::Slice) {
      const auto &s = slice.as<SliceExpr>();
      std::uint16_t parts = temps(3);
      const Expr *exprs[3] = {s.lower, s.upper, s.step};
      for (int k = 0; k < 3; ++k) {
        if (exprs[k])
          expr_to(*exprs[k], static_cast<std::uint16_t>(parts + k));
        else
          emit(Op::LoadNone, static_cast<std::uint16_t>(parts + k));
      }
      std::uint16_t out = temp();
      emit(Op::BuildSlice, out, parts, 0, 0, slice.begin());
      if (made)
        *made = true;
      return {out, false};
    }
    if (slice.kind == ExprKind::Tuple) {
      const auto &t = slice.as<TupleExpr>();
      bool starred =
          std::any_of(t.elts.begin(), t.elts.end(), [](const Expr *x) { return x->kind == ExprKind::Starred; });
      if (!starred) {
        std::uint16_t first = temps(t.elts.size());
        for (std::size_t k = 0; k < t.elts.size(); ++k) {
          std::uint16_t mark = top_;
          Opnd part = subscript_key(*t.elts[k]);
          auto r = static_cast<std::uint16_t>(first + k);
          if (part.konst)
            emit(Op::LoadConst, r, 0, 0, part.index);
          else if (part.index != r)
            emit(Op::Move, r, part.index);
          top_ = mark;
        }
        std::uint16_t out = temp();
        emit(Op::BuildTuple, out, first, static_cast<std::uint16_t>(t.elts.size()), 0, slice.begin());
        if (made)
          *made = true;
        return {out, false};
      }
    }
    return operand(slice);
  }

  void fstring(const JoinedStrExpr &j, std::uint16_t dst, std::uint8_t flags, SourceLoc loc) {
    std::uint16_t first = temps(j.values.size());
    for (std::size_t k = 0; k < j.values.size(); ++k) {
      const Expr *part = j.values[k];
      auto r = static_cast<std::uint16_t>(first + k);
      std::uint16_t mark = top_;
      if (part->kind == ExprKind::Constant) {
        emit(Op::LoadConst, r, 0, 0, konst(Value::str(std::string(part->as<ConstantExpr>().text))));
      } else if (part->kind == ExprKind::FormattedValue) {
        formatted_value(part->as<FormattedValueExpr>(), r);
      } else {
        std::uint16_t v = temp();
        expr_to(*part, v);
        temp();
        emit(Op::Format, r, v, 0, 's', part->begin());
      }
      top_ = mark;
    }
    emit(Op::BuildString, dst, first, static_cast<std::uint16_t>(j.values.size()), 0, loc, flags);
  }

  void formatted_value(const FormattedValueExpr &fv, std::uint16_t dst) {
    std::uint16_t v = temps(2);
    expr_to(*fv.value, v);
    bool spec = fv.format_spec != nullptr;
    if (spec) {
      auto s = static_cast<std::uint16_t>(v + 1);
      if (fv.format_spec->kind == ExprKind::JoinedStr)
        fstring(fv.format_spec->as<JoinedStrExpr>(), s, 0, fv.value->begin());
      else {
        std::uint16_t raw = temp();
        expr_to(*fv.format_spec, raw);
        temp();
        emit(Op::Format, s, raw, 0, 's', fv.value->begin());
      }
    }
    emit(Op::Format, dst, v, spec ? 1 : 0, static_cast<std::uint32_t>(fv.conversion), fv.value->begin());
  }

  // ---- calls ---------------------------------------------------------------------------------

  std::uint32_t call_site(const CallExpr &c, SourceLoc loc) {
    CallSite site;
    site.loc = loc;
    site.func_loc = c.func->begin();
    for (const Keyword *kw : c.keywords)
      if (!kw->arg.empty())
        site.keywords.emplace_back(kw->arg);
    if (c.func->kind == ExprKind::Attribute)
      site.attr.name = c.func->as<AttributeExpr>().attr_symbol;
    code_.calls.push_back(std::move(site));
    return static_cast<std::uint32_t>(code_.calls.size() - 1);
  }

  void call(const CallExpr &c, std::uint16_t dst, std::uint8_t flags) {
    bool star = std::any_of(c.args.begin(), c.args.end(), [](const Expr *x) { return x->kind == ExprKind::Starred; }) ||
                std::any_of(c.keywords.begin(), c.keywords.end(), [](const Keyword *kw) { return kw->arg.empty(); });
    // A zero-argument super() in a method reads the class cell and the first argument.
    if (c.func->kind == ExprKind::Name && c.func->as<NameExpr>().id == "super" && c.args.empty() &&
        c.keywords.empty() && resolve(c.func->as<NameExpr>().symbol).kind == NameRef::Global &&
        regs_.count(class_cell_symbol().id())) {
      super_call(c, dst, flags);
      return;
    }
    bool method = c.func->kind == ExprKind::Attribute;
    std::uint16_t f = temps(method ? 2 : 1);
    if (method) {
      const auto &a = c.func->as<AttributeExpr>();
      expr_to(*a.value, static_cast<std::uint16_t>(f + 1));
      std::uint32_t site = call_site(c, c.begin());
      emit(Op::LoadMethod, f, 0, 0, site, c.func->begin());
      if (star) {
        call_ex_args(c, static_cast<std::uint16_t>(f + 2));
        emit(Op::CallMethodEx, dst, f, 0, site, c.begin(), flags);
        return;
      }
      std::uint16_t n = call_args(c, static_cast<std::uint16_t>(f + 2));
      emit(Op::CallMethod, dst, f, n, site, c.begin(), flags);
      return;
    }
    expr_to(*c.func, f);
    std::uint32_t site = call_site(c, c.begin());
    if (star) {
      call_ex_args(c, static_cast<std::uint16_t>(f + 1));
      emit(Op::CallEx, dst, f, 0, site, c.begin(), flags);
      return;
    }
    std::uint16_t n = call_args(c, static_cast<std::uint16_t>(f + 1));
    emit(Op::Call, dst, f, n, site, c.begin(), flags);
  }

  /// Positional then keyword argument values into R[first...]; returns their count.
  std::uint16_t call_args(const CallExpr &c, std::uint16_t first) {
    std::size_t n = c.args.size() + c.keywords.size();
    top_ = first;
    temps(n);
    std::size_t k = 0;
    for (const Expr *x : c.args)
      expr_to(*x, static_cast<std::uint16_t>(first + k++));
    for (const Keyword *kw : c.keywords)
      expr_to(*kw->value, static_cast<std::uint16_t>(first + k++));
    return static_cast<std::uint16_t>(n);
  }

  /// `f(*a, **m)`: R[first] the positional arguments (a list), R[first+1] the keywords (a dict).
  void call_ex_args(const CallExpr &c, std::uint16_t first) {
    top_ = first;
    std::uint16_t args = temp(), kwargs = temp();
    emit(Op::BuildList, args, 0, 0, 0, c.begin());
    for (const Expr *x : c.args) {
      std::uint16_t mark = top_;
      if (x->kind == ExprKind::Starred) {
        std::uint16_t v = any_reg(*x->as<StarredExpr>().value);
        emit(Op::ListExtend, args, v, 0, 0, x->begin());
      } else {
        std::uint16_t v = any_reg(*x);
        emit(Op::ListAppend, args, v, 0, 0, x->begin());
      }
      top_ = mark;
    }
    // The keywords as (name, value) pairs, in call order.
    emit(Op::BuildList, kwargs, 0, 0, 0, c.begin());
    for (const Keyword *kw : c.keywords) {
      std::uint16_t mark = top_;
      std::uint16_t v = any_reg(*kw->value);
      if (kw->arg.empty()) {
        emit(Op::DictMerge, kwargs, v, 1, 0, kw->value->begin(), 0, c.begin());
      } else {
        std::uint16_t key = temp();
        emit(Op::LoadConst, key, 0, 0, konst(Value::str(std::string(kw->arg))));
        emit(Op::DictSet, kwargs, key, v, 1, c.begin());
      }
      top_ = mark;
    }
  }

  void super_call(const CallExpr &c, std::uint16_t dst, std::uint8_t flags) {
    std::uint16_t cell = regs_.count(class_cell_symbol().id()) ? regs_.at(class_cell_symbol().id()) : kNoReg;
    std::uint16_t self = kNoReg;
    if (!code_.positional.empty())
      self = code_.positional[0].reg;
    else if (code_.has_vararg)
      self = code_.vararg.reg;
    std::uint32_t site = call_site(c, c.begin());
    emit(Op::Super, dst, cell, self, site, c.begin(), flags);
  }

  void make_function(const Arguments *params, const FunctionDefStmt *def, const LambdaExpr *lambda,
                     std::string_view name, std::uint16_t dst, std::uint8_t flags, SourceLoc loc) {
    auto t = std::make_unique<FunctionTemplate>();
    t->params = params;
    t->def = def;
    t->lambda = lambda;
    t->name = name;
    const void *node = def ? static_cast<const void *>(def) : static_cast<const void *>(lambda);
    t->symtable = symtable_;
    t->scope = symtable_->scope_of(node);
    t->qualname = child_qualname(name);
    for (Symbol s : t->scope->free) {
      NameRef ref = resolve(s);
      t->closure_regs.push_back(ref.reg);
    }
    std::size_t n = 0;
    std::uint16_t first = top_;
    if (params) {
      for (const Expr *d : params->defaults) {
        expr_to(*d, temp());
        ++n;
      }
      t->ndefaults = params->defaults.size();
      for (const Expr *d : params->kw_defaults) {
        t->kw_has_default.push_back(d != nullptr);
        if (d) {
          expr_to(*d, temp());
          ++n;
        }
      }
    }
    code_.functions.push_back(std::move(t));
    emit(Op::MakeFunction, dst, first, static_cast<std::uint16_t>(n),
         static_cast<std::uint32_t>(code_.functions.size() - 1), loc, flags);
  }

  std::string child_qualname(std::string_view name) const {
    if (unit_.kind == ScopeKind::Module)
      return std::string(name);
    if (unit_.kind == ScopeKind::Class)
      return code_.qualname + "." + std::string(name);
    return code_.qualname + ".<locals>." + std::string(name);
  }

  // ---- comprehensions ------------------------------------------------------------------------

  void comprehension(const Expr &e, std::uint16_t dst, std::uint8_t flags) {
    NodeList<Comprehension> gens = e.kind == ExprKind::DictComp ? e.as<DictCompExpr>().generators
                                                                : static_cast<const ComprehensionExpr &>(e).generators;
    std::uint16_t first_iter = temp();
    expr_to(*gens[0]->iter, first_iter);
    const ScopeInfo *scope = symtable_->scope_of(&e);
    CompContext ctx{scope, {}};
    for (Symbol s : scope->bound) {
      std::uint16_t r = temp();
      code_.local_names[r] = s;
      ctx.regs[s.id()] = r;
    }
    comps_.push_back(std::move(ctx));
    for (const auto &[id, r] : comps_.back().regs) {
      (void)id;
      if (scope->kind_of(code_.local_names[r]) == NameKind::Cell)
        emit(Op::MakeCell, r, 0);
    }
    std::uint16_t result = temp();
    Op build = e.kind == ExprKind::DictComp ? Op::BuildDict : e.kind == ExprKind::SetComp ? Op::BuildSet : Op::BuildList;
    emit(build, result, 0, 0, 0, e.begin());
    ++conditional_;
    comp_loop(e, gens, 0, first_iter, result);
    --conditional_;
    comps_.pop_back();
    emit(Op::Move, dst, result, 0, 0, e.begin(), flags);
  }

  void comp_loop(const Expr &e, NodeList<Comprehension> gens, std::size_t k, std::uint16_t first_iter,
                 std::uint16_t result) {
    const Comprehension &g = *gens[k];
    std::uint16_t mark = top_;
    std::uint16_t iterable = first_iter;
    if (k) {
      iterable = temp();
      expr_to(*g.iter, iterable);
    }
    std::uint16_t it = temps(4);
    // c = 1: a comprehension's loop records no loop kind.
    emit(Op::ForPrep, it, iterable, 1, 0, g.iter->begin());
    std::uint32_t head = pc();
    std::uint16_t item = target_register(*g.target);
    std::uint32_t exit = emit(Op::ForNext, it, item, 0, 0, e.begin(), item_flags(*g.target));
    begin_statement(g.begin());
    assign_from(*g.target, item);
    std::vector<std::uint32_t> skip;
    for (const Expr *cond : g.ifs)
      cond_jump(*cond, false, skip, e.begin());
    if (k + 1 < gens.size()) {
      comp_loop(e, gens, k + 1, first_iter, result);
    } else if (e.kind == ExprKind::DictComp) {
      const auto &d = e.as<DictCompExpr>();
      std::uint16_t key = temp(), value = temp();
      expr_to(*d.key, key);
      expr_to(*d.value, value);
      emit(Op::DictSet, result, key, value, 0, d.key->begin());
    } else {
      std::uint16_t v = temp();
      expr_to(*static_cast<const ComprehensionExpr &>(e).elt, v);
      emit(e.kind == ExprKind::SetComp ? Op::SetAdd : Op::ListAppend, result, v, 0, 0, e.begin());
    }
    end_statement();
    patch_all(skip, pc());
    emit(Op::Jump, 0, 0, 0, head);
    patch(exit, pc());
    top_ = mark;
  }

  // ---- conditions ----------------------------------------------------------------------------

  /// Jumps (to addresses added to `out`) when `e`'s truth is `when`; falls through otherwise.
  /// `loc` is where the truth test's errors are reported.
  void cond_jump(const Expr &e, bool when, std::vector<std::uint32_t> &out, SourceLoc loc) {
    std::uint16_t mark = top_;
    if (e.kind == ExprKind::UnaryOp && e.as<UnaryOpExpr>().op == UnaryOpKind::Not) {
      cond_jump(*e.as<UnaryOpExpr>().operand, !when, out, e.begin());
      return;
    }
    if (e.kind == ExprKind::BoolOp) {
      const auto &b = e.as<BoolOpExpr>();
      bool is_and = b.op == BoolOpKind::And;
      std::vector<std::uint32_t> local;
      for (std::size_t k = 0; k < b.values.size(); ++k) {
        bool last = k + 1 == b.values.size();
        SourceLoc at = last ? loc : e.begin();
        if (k)
          ++conditional_;
        if (last)
          cond_jump(*b.values[k], when, out, at);
        else if (is_and == !when)
          cond_jump(*b.values[k], when, out, at); // `a or b` jumps when a is true
        else
          cond_jump(*b.values[k], !when, local, at); // `a and b` skips to the end when a is false
        if (k)
          --conditional_;
      }
      patch_all(local, pc());
      top_ = mark;
      return;
    }
    if (e.kind == ExprKind::Compare && e.as<CompareExpr>().ops.size() == 1) {
      const auto &c = e.as<CompareExpr>();
      Opnd l = operand(*c.left);
      Opnd r = operand(*c.comparators[0]);
      out.push_back(emit(when ? Op::CmpJumpTrue : Op::CmpJumpFalse, static_cast<std::uint16_t>(c.ops[0]), l.index,
                         r.index, 0, loc, const_flags(l, r), e.begin()));
      top_ = mark;
      return;
    }
    if (std::optional<Value> v = fold(e); v && v->kind != K::Object) {
      if (in_.truthy(*v) == when)
        out.push_back(emit(Op::Jump));
      top_ = mark;
      return;
    }
    std::uint16_t r = any_reg(e);
    out.push_back(emit(when ? Op::JumpIfTrue : Op::JumpIfFalse, r, 0, 0, 0, loc));
    top_ = mark;
  }

  // ---- assignment ----------------------------------------------------------------------------

  /// The register a loop's item goes into: the target's own when it is a local.
  std::uint16_t target_register(const Expr &target) {
    if (target.kind == ExprKind::Name) {
      NameRef ref = resolve(target.as<NameExpr>().symbol);
      if (ref.kind == NameRef::Reg)
        return ref.reg;
    }
    return temp();
  }
  std::uint8_t item_flags(const Expr &target) {
    if (target.kind == ExprKind::Name && resolve(target.as<NameExpr>().symbol).kind == NameRef::Reg)
      return kBind;
    return 0;
  }
  /// After a loop wrote its item into target_register(): the rest of the assignment.
  void assign_from(const Expr &target, std::uint16_t item) {
    if (target.kind == ExprKind::Name && resolve(target.as<NameExpr>().symbol).kind == NameRef::Reg) {
      mark_assigned(item);
      return;
    }
    assign(target, item);
  }

  void assign(const Expr &target, std::uint16_t src) {
    std::uint16_t mark = top_;
    switch (target.kind) {
    case ExprKind::Name:
      store_name(target.as<NameExpr>().symbol, src, true, target.begin());
      break;
    case ExprKind::Tuple:
    case ExprKind::List: {
      ExprList elts = target.kind == ExprKind::Tuple ? target.as<TupleExpr>().elts : target.as<ListExpr>().elts;
      std::uint32_t star = 0xffff;
      for (std::size_t k = 0; k < elts.size(); ++k)
        if (elts[k]->kind == ExprKind::Starred)
          star = static_cast<std::uint32_t>(k);
      std::uint16_t first = temps(elts.size());
      emit(Op::Unpack, first, src, static_cast<std::uint16_t>(elts.size()), star, target.begin());
      for (std::size_t k = 0; k < elts.size(); ++k) {
        const Expr *t = elts[k];
        if (t->kind == ExprKind::Starred)
          t = t->as<StarredExpr>().value;
        assign(*t, static_cast<std::uint16_t>(first + k));
      }
      break;
    }
    case ExprKind::Attribute: {
      const auto &a = target.as<AttributeExpr>();
      std::uint16_t obj = any_reg(*a.value);
      emit(Op::StoreAttr, obj, src, 0, attr_cache(a.attr_symbol), target.begin());
      break;
    }
    case ExprKind::Subscript: {
      const auto &s = target.as<SubscriptExpr>();
      std::uint16_t c = any_reg(*s.value);
      Opnd key = subscript_key(*s.slice);
      emit(Op::SetItem, c, key.index, src, 0, target.begin(), key.konst ? kConstB : 0);
      break;
    }
    case ExprKind::Starred:
      unsupported("starred assignment target", target.begin());
      break;
    default:
      unsupported("assignment to " + std::string(expr_kind_name(target.kind)), target.begin());
      break;
    }
    top_ = mark;
  }

  // ---- statements ----------------------------------------------------------------------------

  void block(StmtList body) {
    for (const Stmt *s : body)
      stmt(*s);
  }

  void stmt(const Stmt &s, SourceLoc cond_loc = {}) {
    std::uint16_t mark = top_;
    begin_statement(s.begin());
    direct_locals_ = true;
    stmt_inner(s, cond_loc.valid() ? cond_loc : s.begin());
    end_statement();
    top_ = mark;
  }

  void stmt_inner(const Stmt &s, SourceLoc cond_loc) {
    switch (s.kind) {
    case StmtKind::Expr: {
      const Expr &e = *s.as<ExprStmt>().value;
      if (e.kind == ExprKind::Constant && e.as<ConstantExpr>().value_kind != ConstantKind::Int &&
          e.as<ConstantExpr>().value_kind != ConstantKind::Imaginary &&
          e.as<ConstantExpr>().value_kind != ConstantKind::Bytes)
        return; // a docstring
      direct_locals_ = !contains_walrus(&e);
      expr_to(e, temp());
      return;
    }
    case StmtKind::Assign: {
      const auto &a = s.as<AssignStmt>();
      direct_locals_ = !contains_walrus(a.value);
      if (a.targets.size() == 1 && a.targets[0]->kind == ExprKind::Name) {
        const auto &n = a.targets[0]->as<NameExpr>();
        NameRef ref = resolve(n.symbol);
        if (ref.kind == NameRef::Reg && writes_last(*a.value) && direct_locals_) {
          expr_to(*a.value, ref.reg, kBind);
          mark_assigned(ref.reg);
          return;
        }
      }
      std::uint16_t v = temp();
      expr_to(*a.value, v);
      for (const Expr *t : a.targets)
        assign(*t, v);
      return;
    }
    case StmtKind::AugAssign:
      aug_assign(s.as<AugAssignStmt>(), s.begin());
      return;
    case StmtKind::AnnAssign: {
      const auto &a = s.as<AnnAssignStmt>();
      if (!a.value)
        return;
      direct_locals_ = !contains_walrus(a.value);
      std::uint16_t v = temp();
      expr_to(*a.value, v);
      assign(*a.target, v);
      return;
    }
    case StmtKind::If:
      if_stmt(s.as<IfStmt>(), cond_loc);
      return;
    case StmtKind::For:
      for_stmt(s.as<ForStmt>());
      return;
    case StmtKind::While:
      while_stmt(s.as<WhileStmt>());
      return;
    case StmtKind::Pass:
      emit(Op::Nop);
      return;
    case StmtKind::Break: {
      if (loops_.empty()) {
        emit_error("SyntaxError", "'break' outside loop", s.begin());
        return;
      }
      loops_.back().breaks.push_back(emit(Op::Jump, 0, 0, 0, 0, s.begin()));
      set_dead();
      return;
    }
    case StmtKind::Continue: {
      if (loops_.empty()) {
        emit_error("SyntaxError", "'continue' not properly in loop", s.begin());
        return;
      }
      emit(Op::Jump, 0, 0, 0, loops_.back().head, s.begin());
      set_dead();
      return;
    }
    case StmtKind::Return: {
      const auto &r = s.as<ReturnStmt>();
      if (unit_.kind != ScopeKind::Function && unit_.kind != ScopeKind::Lambda) {
        emit_error("SyntaxError", "'return' outside function", s.begin());
        return;
      }
      if (!r.value) {
        emit(Op::ReturnNone, 0, 0, 0, 0, s.begin());
      } else {
        direct_locals_ = !contains_walrus(r.value);
        std::uint16_t v = any_reg(*r.value);
        emit(Op::Return, v, 0, 0, 0, s.begin());
      }
      set_dead();
      return;
    }
    case StmtKind::Assert: {
      const auto &a = s.as<AssertStmt>();
      std::vector<std::uint32_t> ok;
      cond_jump(*a.test, true, ok, s.begin());
      std::uint16_t msg = temp();
      if (a.msg)
        expr_to(*a.msg, msg);
      emit(Op::AssertFail, msg, a.msg ? 1 : 0, 0, 0, s.begin());
      patch_all(ok, pc());
      return;
    }
    case StmtKind::Raise: {
      const auto &r = s.as<RaiseStmt>();
      if (!r.exc) {
        emit_error("RuntimeError", "No active exception to reraise", s.begin());
        return;
      }
      std::uint16_t exc = temp(), cause = temp();
      expr_to(*r.exc, exc);
      if (r.cause)
        expr_to(*r.cause, cause);
      emit(Op::Raise, exc, cause, r.cause ? 1 : 0, 0, s.begin());
      set_dead();
      return;
    }
    case StmtKind::FunctionDef:
      function_def(s.as<FunctionDefStmt>());
      return;
    case StmtKind::Import:
      import_stmt(s.as<ImportStmt>());
      return;
    case StmtKind::ImportFrom:
      import_from(s.as<ImportFromStmt>());
      return;
    case StmtKind::Global:
    case StmtKind::Nonlocal:
      emit(Op::Nop);
      return;
    case StmtKind::Delete:
      for (const Expr *t : s.as<DeleteStmt>().targets)
        delete_target(*t);
      return;
    case StmtKind::ClassDef:
      unsupported("class definition", s.begin());
      return;
    case StmtKind::With:
      unsupported("with statement", s.begin());
      return;
    case StmtKind::Try:
      unsupported("try statement", s.begin());
      return;
    }
    unsupported(std::string(stmt_kind_name(s.kind)), s.begin());
  }

  void set_dead() {
    dead_ = true;
    std::fill(assigned_.begin(), assigned_.end(), 1);
  }

  /// Definite assignment across branches: the state after both is what both guarantee.
  struct Branch {
    std::vector<std::uint8_t> assigned;
    bool dead;
  };
  Branch save() const { return {assigned_, dead_}; }
  void restore(const Branch &b) {
    assigned_ = b.assigned;
    dead_ = b.dead;
  }
  void merge(const Branch &other) {
    if (other.dead)
      return;
    if (dead_) {
      restore(other);
      return;
    }
    for (std::size_t k = 0; k < assigned_.size(); ++k)
      assigned_[k] = assigned_[k] && other.assigned[k];
  }

  void if_stmt(const IfStmt &i, SourceLoc cond_loc) {
    std::vector<std::uint32_t> to_else;
    direct_locals_ = !contains_walrus(i.test);
    cond_jump(*i.test, false, to_else, cond_loc);
    direct_locals_ = true;
    Branch before = save();
    block(i.body);
    Branch after_body = save();
    restore(before);
    if (i.orelse.empty()) {
      patch_all(to_else, pc());
      merge(after_body);
      return;
    }
    std::uint32_t to_end = emit(Op::Jump);
    patch_all(to_else, pc());
    // An elif's truth test reports errors at the first `if`, as the tree walker did.
    if (i.orelse.size() == 1 && i.orelse[0]->kind == StmtKind::If)
      stmt(*i.orelse[0], cond_loc);
    else
      block(i.orelse);
    merge(after_body);
    patch(to_end, pc());
  }

  /// Locals a loop body deletes are not known bound at its start.
  void forget_deleted(StmtList body) {
    for (const Stmt *s : body) {
      switch (s->kind) {
      case StmtKind::Delete:
        for (const Expr *t : s->as<DeleteStmt>().targets)
          if (t->kind == ExprKind::Name) {
            NameRef ref = resolve(t->as<NameExpr>().symbol);
            if (ref.kind == NameRef::Reg && ref.reg < assigned_.size())
              assigned_[ref.reg] = 0;
          }
        break;
      case StmtKind::If:
        forget_deleted(s->as<IfStmt>().body);
        forget_deleted(s->as<IfStmt>().orelse);
        break;
      case StmtKind::For:
        forget_deleted(s->as<ForStmt>().body);
        forget_deleted(s->as<ForStmt>().orelse);
        break;
      case StmtKind::While:
        forget_deleted(s->as<WhileStmt>().body);
        forget_deleted(s->as<WhileStmt>().orelse);
        break;
      case StmtKind::With:
        forget_deleted(s->as<WithStmt>().body);
        break;
      case StmtKind::Try: {
        const auto &t = s->as<TryStmt>();
        forget_deleted(t.body);
        for (const ExceptHandler *h : t.handlers)
          forget_deleted(h->body);
        forget_deleted(t.orelse);
        forget_deleted(t.finalbody);
        break;
      }
      default:
        break;
      }
    }
  }

  void for_stmt(const ForStmt &f) {
    direct_locals_ = !contains_walrus(f.iter);
    std::uint16_t iterable = any_reg(*f.iter);
    std::uint16_t it = temps(4);
    emit(Op::ForPrep, it, iterable, 0, 0, f.iter->begin());
    forget_deleted(f.body);
    Branch before = save();
    std::uint32_t head = pc();
    std::uint16_t item = target_register(*f.target);
    std::uint32_t exit = emit(Op::ForNext, it, item, 0, 0, f.begin(), item_flags(*f.target));
    direct_locals_ = true;
    assign_from(*f.target, item);
    loops_.push_back({head, {}});
    block(f.body);
    emit(Op::Jump, 0, 0, 0, head);
    Loop loop = std::move(loops_.back());
    loops_.pop_back();
    restore(before);
    patch(exit, pc());
    emit(Op::LoopPop);
    block(f.orelse);
    restore(before);
    if (!loop.breaks.empty()) {
      std::uint32_t to_end = emit(Op::Jump);
      patch_all(loop.breaks, pc());
      emit(Op::LoopPop);
      patch(to_end, pc());
    }
  }

  void while_stmt(const WhileStmt &w) {
    // The loop's head counts the while statement's step on entry and on every iteration.
    pending_step_ = false;
    emit(Op::LoopPush);
    forget_deleted(w.body);
    Branch before = save();
    std::uint32_t head = pc();
    begin_statement(w.begin());
    std::vector<std::uint32_t> to_else;
    direct_locals_ = !contains_walrus(w.test);
    cond_jump(*w.test, false, to_else, w.begin());
    if (pending_step_)
      emit(Op::Nop); // `while True:` has no test to count the step on
    direct_locals_ = true;
    loops_.push_back({head, {}});
    block(w.body);
    emit(Op::Jump, 0, 0, 0, head);
    Loop loop = std::move(loops_.back());
    loops_.pop_back();
    restore(before);
    patch_all(to_else, pc());
    emit(Op::LoopPop);
    block(w.orelse);
    restore(before);
    if (!loop.breaks.empty()) {
      std::uint32_t to_end = emit(Op::Jump);
      patch_all(loop.breaks, pc());
      emit(Op::LoopPop);
      patch(to_end, pc());
    }
  }

  void aug_assign(const AugAssignStmt &a, SourceLoc loc) {
    const Expr &t = *a.target;
    direct_locals_ = !contains_walrus(a.value);
    if (t.kind == ExprKind::Name) {
      const auto &n = t.as<NameExpr>();
      NameRef ref = resolve(n.symbol);
      code_.extra_locs.resize(code_.insns.size());
      if (ref.kind == NameRef::Reg) {
        std::uint16_t cur = read_local(n, ref.reg);
        Opnd rhs = operand(*a.value);
        emit(Op::InplaceName, ref.reg, cur, rhs.index, static_cast<std::uint32_t>(a.op), loc,
             rhs.konst ? kConstC : 0, a.value->begin());
        return;
      }
      std::uint16_t cur = temp();
      load_name(n, cur);
      Opnd rhs = operand(*a.value);
      emit(Op::InplaceName, cur, cur, rhs.index, static_cast<std::uint32_t>(a.op), loc, rhs.konst ? kConstC : 0,
           a.value->begin());
      store_name(n.symbol, cur, false, t.begin());
      return;
    }
    if (t.kind == ExprKind::Subscript) {
      const auto &sub = t.as<SubscriptExpr>();
      std::uint16_t c = temp();
      expr_to(*sub.value, c);
      Opnd key = subscript_key(*sub.slice);
      std::uint16_t k = key.index;
      if (key.konst) {
        k = temp();
        emit(Op::LoadConst, k, 0, 0, key.index);
      }
      std::uint16_t rhs = temp();
      expr_to(*a.value, rhs);
      emit(Op::AugItem, c, k, rhs, static_cast<std::uint32_t>(a.op), t.begin(), 0, loc);
      return;
    }
    if (t.kind == ExprKind::Attribute) {
      const auto &at = t.as<AttributeExpr>();
      std::uint16_t obj = temp();
      expr_to(*at.value, obj);
      std::uint16_t cur = temp();
      std::uint32_t cache = attr_cache(at.attr_symbol);
      emit(Op::LoadAttr, cur, obj, 0, cache, t.begin());
      Opnd rhs = operand(*a.value);
      emit(Op::Binary, cur, cur, rhs.index, static_cast<std::uint32_t>(a.op), loc, rhs.konst ? kConstC : 0);
      emit(Op::StoreAttr, obj, cur, 0, cache, t.begin());
      return;
    }
    unsupported("augmented assignment to " + std::string(expr_kind_name(t.kind)), t.begin());
  }

  void delete_target(const Expr &t) {
    switch (t.kind) {
    case ExprKind::Name:
      delete_name(t.as<NameExpr>());
      return;
    case ExprKind::Subscript:
      unsupported("del of a subscript", t.begin());
      return;
    case ExprKind::Attribute:
      unsupported("del of an attribute", t.begin());
      return;
    default:
      unsupported("del of a tuple", t.begin());
      return;
    }
  }

  void function_def(const FunctionDefStmt &d) {
    // Decorators are evaluated first, top to bottom, and applied bottom up.
    std::uint16_t decos = temps(d.decorators.size());
    for (std::size_t k = 0; k < d.decorators.size(); ++k)
      expr_to(*d.decorators[k], static_cast<std::uint16_t>(decos + k));
    std::uint16_t fn = temp();
    make_function(d.args, &d, nullptr, d.name, fn, 0, d.begin());
    for (std::size_t k = d.decorators.size(); k-- > 0;) {
      std::uint16_t callee = temps(2);
      emit(Op::Move, callee, static_cast<std::uint16_t>(decos + k));
      emit(Op::Move, static_cast<std::uint16_t>(callee + 1), fn);
      CallSite site;
      site.loc = d.decorators[k]->begin();
      site.func_loc = site.loc;
      code_.calls.push_back(std::move(site));
      emit(Op::Call, fn, callee, 1, static_cast<std::uint32_t>(code_.calls.size() - 1), d.decorators[k]->begin());
      top_ = static_cast<std::uint16_t>(fn + 1);
    }
    store_name(Symbol::intern(d.name), fn, false, d.begin());
  }

  void import_stmt(const ImportStmt &s) {
    for (const Alias *a : s.names) {
      ImportSite site;
      site.module = std::string(a->name);
      site.has_asname = !a->asname.empty();
      site.loc = a->begin();
      code_.imports.push_back(std::move(site));
      std::uint16_t r = temp();
      emit(Op::ImportName, r, 0, 0, static_cast<std::uint32_t>(code_.imports.size() - 1), s.begin());
      store_name(a->asname.empty() ? a->name.substr(0, a->name.find('.')) : a->asname, r, s.begin());
    }
  }

  void import_from(const ImportFromStmt &s) {
    ImportSite site;
    site.from = true;
    site.level = s.level;
    site.module = std::string(s.module);
    site.loc = s.begin();
    code_.imports.push_back(std::move(site));
    auto index = static_cast<std::uint32_t>(code_.imports.size() - 1);
    std::uint16_t m = temp();
    emit(Op::ImportName, m, 0, 0, index, s.begin());
    for (const Alias *a : s.names) {
      if (a->name == "*") {
        emit(Op::ImportStar, m, 0, 0, index, s.begin());
        continue;
      }
      ImportSite name;
      name.from = true;
      name.level = s.level;
      name.module = std::string(s.module);
      name.name = std::string(a->name);
      name.loc = a->begin();
      code_.imports.push_back(std::move(name));
      std::uint16_t r = temp();
      emit(Op::ImportFrom, r, m, 0, static_cast<std::uint32_t>(code_.imports.size() - 1), s.begin());
      store_name(a->asname.empty() ? a->name : a->asname, r, s.begin());
    }
  }

public:
  const SymbolTable *symtable_ = nullptr;
};

} // namespace

SourceLoc Code::step_loc(std::uint32_t at) const {
  auto it = std::lower_bound(step_locs.begin(), step_locs.end(), at,
                             [](const StepLoc &s, std::uint32_t p) { return s.pc < p; });
  return it != step_locs.end() && it->pc == at ? it->loc : SourceLoc{};
}

std::unique_ptr<Code> compile_module(const Module &module, const SymbolTable &symtable, Interpreter &interp) {
  auto code = std::make_unique<Code>();
  code->scope = &symtable.module_scope();
  code->name = "<module>";
  Compiler c(*code, symtable.module_scope(), interp);
  c.symtable_ = &symtable;
  c.module_body(module.body);
  return code;
}

std::unique_ptr<Code> compile_function(const FunctionTemplate &fn, Interpreter &interp) {
  auto code = std::make_unique<Code>();
  code->scope = fn.scope;
  code->name = fn.name;
  code->qualname = fn.qualname;
  Compiler c(*code, *fn.scope, interp);
  c.symtable_ = fn.symtable;
  c.function_body(fn);
  return code;
}

std::unique_ptr<Code> compile_class_body(const ClassTemplate &cls, Interpreter &interp) {
  auto code = std::make_unique<Code>();
  code->scope = cls.scope;
  code->name = cls.def->name;
  code->qualname = cls.qualname;
  Compiler c(*code, *cls.scope, interp);
  c.symtable_ = cls.symtable;
  c.class_body(cls);
  return code;
}

} // namespace nkicc::eval
