// The compiler: one pass over a function's (or module's, or class body's) AST emitting
// register code. Expressions are compiled into a destination register; a local that is known
// to be bound is read in place, a constant is an operand. Every statement's first instruction
// counts a step, as the tree walker counted one per statement.
#include "eval/compiler_impl.h"

#include <algorithm>
#include <limits>

namespace nkicc::eval {

using namespace python;
using trace::Interpreter;
using trace::TraceError;
using K = Value::Kind;

static bool any_walrus(ExprList list) {
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

// ---- entry -------------------------------------------------------------------------------

void Compiler::module_body(StmtList body) {
  code_.kind = CodeKind::Module;
  finish_locals();
  block(body);
  emit(Op::ReturnNone);
  finish();
}

void Compiler::function_body(const FunctionTemplate &t) {
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

void Compiler::class_body(const ClassTemplate &t) {
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

// ---- registers ---------------------------------------------------------------------------

std::uint16_t Compiler::temp() {
  if (top_ >= 0xfff0)
    throw TraceError{
        "the function is too large for nkicc's evaluator (more than 65520 registers)", "unsupported", {}, {}, Value()};
  std::uint16_t r = top_++;
  code_.nregs = std::max<std::uint16_t>(code_.nregs, top_);
  if (code_.local_names.size() < code_.nregs)
    code_.local_names.resize(code_.nregs);
  return r;
}

std::uint16_t Compiler::temps(std::size_t n) {
  std::uint16_t first = top_;
  for (std::size_t k = 0; k < n; ++k)
    temp();
  return first;
}

std::uint16_t Compiler::local(Symbol s, bool named) {
  std::uint16_t r = temp();
  regs_[s.id()] = r;
  if (named)
    code_.local_names[r] = s;
  NameKind kind = unit_.kind_of(s);
  if (kind == NameKind::Cell && !is_free(s))
    code_.cell_regs.push_back(r);
  return r;
}

bool Compiler::is_free(Symbol s) const {
  return std::find(unit_.free.begin(), unit_.free.end(), s) != unit_.free.end();
}

bool Compiler::is_param(std::uint16_t r) const {
  for (const Param &p : code_.positional)
    if (p.reg == r)
      return true;
  for (const Param &p : code_.kwonly)
    if (p.reg == r)
      return true;
  return (code_.has_vararg && code_.vararg.reg == r) || (code_.has_kwarg && code_.kwarg.reg == r);
}

void Compiler::params(const Arguments *a) {
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
  code_.nparams = static_cast<std::uint16_t>(code_.positional.size() + code_.kwonly.size() +
                                             (code_.has_vararg ? 1 : 0) + (code_.has_kwarg ? 1 : 0));
}

void Compiler::finish_locals() {
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

void Compiler::finish() {
  code_.extra_locs.resize(code_.insns.size());
  if (code_.nregs == 0)
    temp();
}

// ---- emission ----------------------------------------------------------------------------

std::uint32_t Compiler::emit(Op op, std::uint16_t a, std::uint16_t b, std::uint16_t c, std::uint32_t d, SourceLoc loc,
                             std::uint8_t flags, SourceLoc extra) {
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

void Compiler::patch_all(std::vector<std::uint32_t> &list, std::uint32_t target) {
  for (std::uint32_t at : list)
    patch(at, target);
  list.clear();
}

std::uint32_t Compiler::konst(Value v) {
  code_.consts.push_back(std::move(v));
  return static_cast<std::uint32_t>(code_.consts.size() - 1);
}

std::uint32_t Compiler::name_index(Symbol s) {
  for (std::size_t k = 0; k < code_.names.size(); ++k)
    if (code_.names[k] == s)
      return static_cast<std::uint32_t>(k);
  code_.names.push_back(s);
  return static_cast<std::uint32_t>(code_.names.size() - 1);
}

std::uint32_t Compiler::global_cache(Symbol s) {
  code_.globals.push_back(GlobalCache{s});
  return static_cast<std::uint32_t>(code_.globals.size() - 1);
}

std::uint32_t Compiler::attr_cache(Symbol s) {
  AttrCache cache;
  cache.name = s;
  code_.attrs.push_back(cache);
  return static_cast<std::uint32_t>(code_.attrs.size() - 1);
}

void Compiler::begin_statement(SourceLoc loc) {
  pending_step_ = true;
  step_loc_ = loc;
}

void Compiler::end_statement() {
  if (pending_step_)
    emit(Op::Nop);
}

void Compiler::emit_error(std::string type, std::string message, SourceLoc loc) {
  std::uint32_t m = konst(Value::str(std::move(message)));
  emit(Op::Error, 0, static_cast<std::uint16_t>(m), 0, konst(Value::str(std::move(type))), loc);
}

// ---- names -------------------------------------------------------------------------------

NameRef Compiler::resolve(Symbol s) {
  if (s == class_cell_symbol() && code_.class_cell != kNoReg)
    return {NameRef::Cell, code_.class_cell};
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

void Compiler::mark_assigned(std::uint16_t r) {
  if (r < assigned_.size() && conditional_ == 0)
    assigned_[r] = 1;
}

std::uint16_t Compiler::read_local(const NameExpr &n, std::uint16_t r) {
  if (!is_assigned(r)) {
    emit(Op::CheckBound, r, 0, 0, name_index(n.symbol), n.begin());
    mark_assigned(r);
  }
  return r;
}

void Compiler::load_name(const NameExpr &n, std::uint16_t dst, std::uint8_t flags) {
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

void Compiler::store_name(Symbol s, std::uint16_t src, bool bind, SourceLoc loc) {
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

void Compiler::store_name(std::string_view n, std::uint16_t src, SourceLoc loc) {
  store_name(Symbol::intern(n), src, false, loc);
}

void Compiler::delete_name(const NameExpr &n) {
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

// ---- constants ---------------------------------------------------------------------------

std::optional<Value> Compiler::fold(const Expr &e) {
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

void Compiler::load_constant(const Value &v, std::uint16_t dst, std::uint8_t flags, SourceLoc loc) {
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
