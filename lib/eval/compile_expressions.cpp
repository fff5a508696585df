// Expressions: each compiled into a destination register, with constant and local operands read
// in place; displays, subscripts, f-strings, calls (keywords, `*args`, methods, zero-argument
// super()), lambdas, comprehensions compiled inline, and conditions as jumps.
#include "eval/compiler_impl.h"

#include <algorithm>

namespace nkicc::eval {

using K = Value::Kind;

// ---- expressions -------------------------------------------------------------------------

Opnd Compiler::operand(const Expr &e) {
  if (std::optional<Value> v = fold(e)) {
    if (code_.consts.size() < 0xfff0)
      return {static_cast<std::uint16_t>(konst(std::move(*v))), true};
  }
  return {any_reg(e), false};
}

std::uint16_t Compiler::any_reg(const Expr &e) {
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

std::uint8_t Compiler::const_flags(Opnd b, Opnd c) {
  return static_cast<std::uint8_t>((b.konst ? kConstB : 0) | (c.konst ? kConstC : 0));
}

void Compiler::expr_to(const Expr &e, std::uint16_t dst, std::uint8_t flags) {
  std::uint16_t mark = top_;
  expr_to_inner(e, dst, flags);
  top_ = mark;
}

void Compiler::expr_to_inner(const Expr &e, std::uint16_t dst, std::uint8_t flags) {
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

void Compiler::display(ExprList elts, Op build, std::uint16_t dst, std::uint8_t flags, SourceLoc loc) {
  bool starred = std::any_of(elts.begin(), elts.end(), [](const Expr *x) { return x->kind == ExprKind::Starred; });
  if (!starred) {
    std::uint16_t first = temps(elts.size());
    for (std::size_t k = 0; k < elts.size(); ++k)
      expr_to(*elts[k], static_cast<std::uint16_t>(first + k));
    // lib: a set display of constants only iterates in the order of CPython's frozenset constant.
    auto constant = [](const Expr *x, auto &self) -> bool {
      if (x->kind == ExprKind::Constant)
        return true;
      if (x->kind == ExprKind::UnaryOp)
        return self(x->as<UnaryOpExpr>().operand, self);
      if (x->kind == ExprKind::Tuple)
        return std::all_of(x->as<TupleExpr>().elts.begin(), x->as<TupleExpr>().elts.end(),
                           [&](const Expr *y) { return self(y, self); });
      return false;
    };
    bool all_constant = build == Op::BuildSet &&
                        std::all_of(elts.begin(), elts.end(), [&](const Expr *x) { return constant(x, constant); });
    emit(build, dst, first, static_cast<std::uint16_t>(elts.size()), all_constant ? 1 : 0, loc, flags);
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

void Compiler::dict_display(const DictExpr &d, std::uint16_t dst, std::uint8_t flags, SourceLoc loc) {
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

Opnd Compiler::subscript_key(const Expr &slice, bool *made) {
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

void Compiler::fstring(const JoinedStrExpr &j, std::uint16_t dst, std::uint8_t flags, SourceLoc loc) {
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

void Compiler::formatted_value(const FormattedValueExpr &fv, std::uint16_t dst) {
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

// ---- calls -------------------------------------------------------------------------------

std::uint32_t Compiler::call_site(const CallExpr &c, SourceLoc loc) {
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

void Compiler::call(const CallExpr &c, std::uint16_t dst, std::uint8_t flags) {
  bool star = std::any_of(c.args.begin(), c.args.end(), [](const Expr *x) { return x->kind == ExprKind::Starred; }) ||
              std::any_of(c.keywords.begin(), c.keywords.end(), [](const Keyword *kw) { return kw->arg.empty(); });
  // A zero-argument super() in a method reads the class cell and the first argument.
  if (c.func->kind == ExprKind::Name && c.func->as<NameExpr>().id == "super" && c.args.empty() && c.keywords.empty() &&
      resolve(c.func->as<NameExpr>().symbol).kind == NameRef::Global && regs_.count(class_cell_symbol().id())) {
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

std::uint16_t Compiler::call_args(const CallExpr &c, std::uint16_t first) {
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

void Compiler::call_ex_args(const CallExpr &c, std::uint16_t first) {
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

void Compiler::super_call(const CallExpr &c, std::uint16_t dst, std::uint8_t flags) {
  std::uint16_t cell = regs_.count(class_cell_symbol().id()) ? regs_.at(class_cell_symbol().id()) : kNoReg;
  std::uint16_t self = kNoReg;
  if (!code_.positional.empty())
    self = code_.positional[0].reg;
  else if (code_.has_vararg)
    self = code_.vararg.reg;
  std::uint32_t site = call_site(c, c.begin());
  emit(Op::Super, dst, cell, self, site, c.begin(), flags);
}

void Compiler::make_function(const Arguments *params, const FunctionDefStmt *def, const LambdaExpr *lambda,
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

std::string Compiler::child_qualname(std::string_view name) const {
  if (unit_.kind == ScopeKind::Module)
    return std::string(name);
  if (unit_.kind == ScopeKind::Class)
    return code_.qualname + "." + std::string(name);
  return code_.qualname + ".<locals>." + std::string(name);
}

// ---- comprehensions ----------------------------------------------------------------------

void Compiler::comprehension(const Expr &e, std::uint16_t dst, std::uint8_t flags) {
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

void Compiler::comp_loop(const Expr &e, NodeList<Comprehension> gens, std::size_t k, std::uint16_t first_iter,
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
  emit(Op::ForLoop, it, item, 0, exit + 1, e.begin(), item_flags(*g.target));
  patch(exit, pc());
  top_ = mark;
}

// ---- conditions --------------------------------------------------------------------------

void Compiler::cond_jump(const Expr &e, bool when, std::vector<std::uint32_t> &out, SourceLoc loc) {
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

} // namespace nkicc::eval
