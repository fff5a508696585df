// Statements: assignment and unpacking, augmented assignment, if/for/while with definite
// assignment across branches, try/except/else/finally and with (handler regions, and the
// finally bodies and exits a return or break runs on its way out), def, class, import, del.
#include "eval/compiler_impl.h"

#include <algorithm>

namespace nkicc::eval {

using K = Value::Kind;

// ---- assignment --------------------------------------------------------------------------

std::uint16_t Compiler::target_register(const Expr &target) {
  if (target.kind == ExprKind::Name) {
    NameRef ref = resolve(target.as<NameExpr>().symbol);
    if (ref.kind == NameRef::Reg)
      return ref.reg;
  }
  return temp();
}

std::uint8_t Compiler::item_flags(const Expr &target) {
  if (target.kind == ExprKind::Name && resolve(target.as<NameExpr>().symbol).kind == NameRef::Reg)
    return kBind;
  return 0;
}

void Compiler::assign_from(const Expr &target, std::uint16_t item) {
  if (target.kind == ExprKind::Name && resolve(target.as<NameExpr>().symbol).kind == NameRef::Reg) {
    mark_assigned(item);
    return;
  }
  assign(target, item);
}

void Compiler::assign(const Expr &target, std::uint16_t src) {
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

// ---- statements --------------------------------------------------------------------------

void Compiler::block(StmtList body) {
  for (const Stmt *s : body)
    stmt(*s);
}

void Compiler::stmt(const Stmt &s, SourceLoc cond_loc) {
  std::uint16_t mark = top_;
  begin_statement(loops_.empty() ? s.begin() : loops_.back().loc);
  direct_locals_ = true;
  stmt_inner(s, cond_loc.valid() ? cond_loc : s.begin());
  end_statement();
  top_ = mark;
}

void Compiler::stmt_inner(const Stmt &s, SourceLoc cond_loc) {
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
    if (unit_.kind == ScopeKind::Class && comps_.empty() && a.simple && a.target->kind == ExprKind::Name) {
      const SourceManager &sm = in_.sources();
      std::string_view text = sm.contents(a.annotation->range.begin.file);
      std::uint32_t b = a.annotation->range.begin.offset, e = a.annotation->range.end;
      std::string ann(e > b && e <= text.size() ? text.substr(b, e - b) : std::string_view());
      emit(Op::AddAnnotation, 0, static_cast<std::uint16_t>(konst(Value::str(std::move(ann)))), 0,
           name_index(a.target->as<NameExpr>().symbol), s.begin());
    }
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
    unwind_to(loops_.back().unwinds);
    loops_.back().breaks.push_back(emit(Op::Jump, 0, 0, 0, 0, s.begin()));
    set_dead();
    return;
  }
  case StmtKind::Continue: {
    if (loops_.empty()) {
      emit_error("SyntaxError", "'continue' not properly in loop", s.begin());
      return;
    }
    unwind_to(loops_.back().unwinds);
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
      unwind_to(0);
      emit(Op::ReturnNone, 0, 0, 0, 0, s.begin());
    } else {
      direct_locals_ = !contains_walrus(r.value);
      std::uint16_t v = temp();
      expr_to(*r.value, v);
      unwind_to(0);
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
      if (handling_.empty())
        emit_error("RuntimeError", "No active exception to reraise", s.begin());
      else
        emit(Op::Reraise, handling_.back(), 0, 0, 0, s.begin());
      set_dead();
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
    class_def(s.as<ClassDefStmt>());
    return;
  case StmtKind::With:
    with_stmt(s.as<WithStmt>(), 0);
    return;
  case StmtKind::Try:
    if (s.as<TryStmt>().is_star) {
      unsupported("try statement with except*", s.begin());
      return;
    }
    try_stmt(s.as<TryStmt>());
    return;
  }
  unsupported(std::string(stmt_kind_name(s.kind)), s.begin());
}

void Compiler::set_dead() {
  dead_ = true;
  std::fill(assigned_.begin(), assigned_.end(), 1);
}

void Compiler::restore(const Branch &b) {
  assigned_ = b.assigned;
  dead_ = b.dead;
}

void Compiler::merge(const Branch &other) {
  if (other.dead)
    return;
  if (dead_) {
    restore(other);
    return;
  }
  for (std::size_t k = 0; k < assigned_.size(); ++k)
    assigned_[k] = assigned_[k] && other.assigned[k];
}

void Compiler::if_stmt(const IfStmt &i, SourceLoc cond_loc) {
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

void Compiler::forget_deleted(StmtList body) {
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

void Compiler::for_stmt(const ForStmt &f) {
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
  loops_.push_back({head, {}, unwinds_.size(), f.begin()});
  block(f.body);
  // The body's end takes the next item itself and goes back to just after the head (one
  // instruction an iteration instead of a jump and the head's); `continue` still jumps to the head.
  emit(Op::ForLoop, it, item, 0, exit + 1, f.begin(), item_flags(*f.target));
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

void Compiler::while_stmt(const WhileStmt &w) {
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
  std::uint32_t body = pc();
  loops_.push_back({head, {}, unwinds_.size(), w.begin()});
  block(w.body);
  if (std::optional<Value> v = fold(*w.test); v && v->kind != K::Object) {
    emit(Op::Jump, 0, 0, 0, head); // (`while True:`: its head is the step's Nop)
  } else {
    // The test again at the end of the body, jumping back into the body while it holds: one
    // instruction per pass instead of a jump to the head and the test there (CPython's loop
    // rotation). It is compiled knowing what the head's test knew; it counts the same step.
    restore(before);
    begin_statement(w.begin());
    std::vector<std::uint32_t> again;
    direct_locals_ = !contains_walrus(w.test);
    cond_jump(*w.test, true, again, w.begin());
    direct_locals_ = true;
    patch_all(again, body);
  }
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

void Compiler::aug_assign(const AugAssignStmt &a, SourceLoc loc) {
  const Expr &t = *a.target;
  direct_locals_ = !contains_walrus(a.value);
  if (t.kind == ExprKind::Name) {
    const auto &n = t.as<NameExpr>();
    NameRef ref = resolve(n.symbol);
    code_.extra_locs.resize(code_.insns.size());
    if (ref.kind == NameRef::Reg) {
      std::uint16_t cur = read_local(n, ref.reg);
      Opnd rhs = operand(*a.value);
      emit(Op::InplaceName, ref.reg, cur, rhs.index, static_cast<std::uint32_t>(a.op), loc, rhs.konst ? kConstC : 0,
           a.value->begin());
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
    emit(Op::LoadAttr, cur, obj, 0, attr_cache(at.attr_symbol), t.begin());
    Opnd rhs = operand(*a.value);
    emit(Op::Binary, cur, cur, rhs.index, static_cast<std::uint32_t>(a.op), loc, rhs.konst ? kConstC : 0);
    emit(Op::StoreAttr, obj, cur, 0, attr_cache(at.attr_symbol), t.begin());
    return;
  }
  unsupported("augmented assignment to " + std::string(expr_kind_name(t.kind)), t.begin());
}

void Compiler::delete_target(const Expr &t) {
  switch (t.kind) {
  case ExprKind::Name:
    delete_name(t.as<NameExpr>());
    return;
  case ExprKind::Subscript: {
    const auto &sub = t.as<SubscriptExpr>();
    std::uint16_t c = temp(), key = temp();
    expr_to(*sub.value, c);
    Opnd k = subscript_key(*sub.slice);
    if (k.konst)
      emit(Op::LoadConst, key, 0, 0, k.index);
    else
      emit(Op::Move, key, k.index);
    emit(Op::DeleteItem, c, key, 0, 0, t.begin());
    return;
  }
  case ExprKind::Attribute: {
    const auto &a = t.as<AttributeExpr>();
    std::uint16_t obj = any_reg(*a.value);
    emit(Op::DeleteAttr, obj, 0, 0, attr_cache(a.attr_symbol), t.begin());
    return;
  }
  case ExprKind::Tuple:
  case ExprKind::List:
    for (const Expr *x : t.kind == ExprKind::Tuple ? t.as<TupleExpr>().elts : t.as<ListExpr>().elts)
      delete_target(*x);
    return;
  default:
    unsupported("del of " + std::string(expr_kind_name(t.kind)), t.begin());
    return;
  }
}

// ---- exceptions and context managers -----------------------------------------------------

Compiler::Region *Compiler::open_region(std::uint16_t exc) {
  regions_.push_back(std::make_unique<Region>());
  Region *r = regions_.back().get();
  r->exc = exc;
  r->loops = static_cast<std::uint16_t>(loops_.size());
  r->open_at = pc();
  r->open = true;
  return r;
}

void Compiler::suspend(Region &r, std::uint32_t at) {
  if (r.open && at > r.open_at)
    r.spans.emplace_back(r.open_at, at);
  r.open = false;
}

void Compiler::resume(Region &r, std::uint32_t at) {
  r.open_at = at;
  r.open = true;
}

void Compiler::close_region(Region &r, std::uint32_t target) {
  suspend(r, pc());
  for (const auto &[b, e] : r.spans)
    code_.handlers.push_back(Handler{b, e, target, r.exc, r.loops});
}

void Compiler::unwind_to(std::size_t depth) {
  if (unwinds_.size() <= depth)
    return;
  std::vector<Unwind> saved(unwinds_.begin() + static_cast<std::ptrdiff_t>(depth), unwinds_.end());
  std::vector<Region *> suspended;
  for (std::size_t k = saved.size(); k-- > 0;) {
    for (Region *r : saved[k].regions) {
      suspend(*r, pc());
      suspended.push_back(r);
    }
    // The code that runs belongs to the enclosing blocks only.
    unwinds_.resize(depth + k);
    if (saved[k].kind == Unwind::With) {
      emit(Op::WithExit, 0, saved[k].with_reg, 0, 0, saved[k].loc);
    } else if (saved[k].finalbody) {
      Branch state = save();
      bool was_dead = dead_;
      block(*saved[k].finalbody);
      restore(state);
      dead_ = was_dead;
    }
  }
  unwinds_.insert(unwinds_.end(), saved.begin(), saved.end());
  for (Region *r : suspended)
    resume(*r, pc());
}

void Compiler::try_stmt(const TryStmt &t) {
  std::uint16_t exc = temp(), fin_exc = temp();
  Branch at_start = save();
  bool has_finally = !t.finalbody.empty();
  Region *fin = has_finally ? open_region(fin_exc) : nullptr;
  if (has_finally)
    unwinds_.push_back({Unwind::Try, {fin}, &t.finalbody, 0, t.begin()});
  std::vector<std::uint32_t> to_finally;
  Branch after;
  if (!t.handlers.empty()) {
    Region *body = open_region(exc);
    unwinds_.push_back({Unwind::Try, {body}, nullptr, 0, t.begin()});
    block(t.body);
    unwinds_.pop_back();
    suspend(*body, pc());
    block(t.orelse);
    after = save();
    to_finally.push_back(emit(Op::Jump));
    // The handlers, tried in order; none matching re-raises.
    std::uint32_t handler_pc = pc();
    close_region(*body, handler_pc);
    bool any_after = !after.dead;
    for (const ExceptHandler *h : t.handlers) {
      restore(at_start);
      std::uint16_t mark = top_;
      std::vector<std::uint32_t> next;
      if (h->type) {
        std::uint16_t type = temp(), match = temp();
        expr_to(*h->type, type);
        emit(Op::ExcMatch, match, exc, type, 0, h->type->begin());
        next.push_back(emit(Op::JumpIfFalse, match, 0, 0, 0, h->begin()));
      }
      if (!h->name.empty())
        store_name(Symbol::intern(h->name), exc, false, h->begin());
      handling_.push_back(exc);
      block(h->body);
      handling_.pop_back();
      if (!h->name.empty())
        clear_name(Symbol::intern(h->name), h->begin());
      if (!dead_) {
        if (any_after)
          merge(after);
        after = save();
        any_after = true;
      }
      to_finally.push_back(emit(Op::Jump));
      patch_all(next, pc());
      top_ = mark;
    }
    emit(Op::Reraise, exc, 0, 0, 0, t.handlers.back()->begin());
    if (any_after)
      restore(after);
    else
      set_dead();
  } else {
    block(t.body);
    block(t.orelse);
  }
  patch_all(to_finally, pc());
  if (!has_finally)
    return;
  unwinds_.pop_back();
  close_region(*fin, 0);
  std::size_t first_fin_handler = code_.handlers.size() - fin->spans.size();
  // The normal way out runs the finally body, then jumps past its copy for exceptions.
  Branch normal = save();
  block(t.finalbody);
  Branch after_finally = save();
  std::uint32_t to_end = emit(Op::Jump);
  for (std::size_t k = first_fin_handler; k < code_.handlers.size(); ++k)
    code_.handlers[k].target = pc();
  restore(at_start);
  (void)normal;
  block(t.finalbody);
  emit(Op::Reraise, fin_exc, 0, 0, 0, t.begin());
  restore(after_finally);
  patch(to_end, pc());
}

void Compiler::clear_name(Symbol s, SourceLoc loc) {
  NameRef ref = resolve(s);
  if (ref.kind == NameRef::Reg) {
    emit(Op::ClearLocal, ref.reg, 0, 0, 0, loc);
    if (ref.reg < assigned_.size())
      assigned_[ref.reg] = 0;
    return;
  }
  std::uint16_t none = temp();
  emit(Op::LoadNone, none);
  store_name(s, none, false, loc);
}

void Compiler::with_stmt(const WithStmt &w, std::size_t item) {
  if (item == w.items.size()) {
    block(w.body);
    return;
  }
  const WithItem &it = *w.items[item];
  std::uint16_t mgr = temps(2), value = temp(), exc = temp();
  direct_locals_ = true;
  expr_to(*it.context_expr, mgr);
  emit(Op::WithEnter, value, mgr, 0, 0, it.context_expr->begin());
  Region *r = open_region(exc);
  unwinds_.push_back({Unwind::With, {r}, nullptr, mgr, w.begin()});
  if (it.optional_vars)
    assign(*it.optional_vars, value);
  with_stmt(w, item + 1);
  unwinds_.pop_back();
  suspend(*r, pc());
  bool dead = dead_;
  emit(Op::WithExit, 0, mgr, 0, 0, w.begin());
  std::uint32_t to_end = emit(Op::Jump);
  close_region(*r, pc());
  emit(Op::WithExitExc, exc, mgr, 0, 0, w.begin());
  // A manager that suppresses the exception continues after the with statement.
  patch(to_end, pc());
  dead_ = dead;
}

void Compiler::class_def(const ClassDefStmt &c) {
  std::uint16_t decos = temps(c.decorators.size());
  for (std::size_t k = 0; k < c.decorators.size(); ++k)
    expr_to(*c.decorators[k], static_cast<std::uint16_t>(decos + k));
  auto t = std::make_unique<ClassTemplate>();
  t->def = &c;
  t->symtable = symtable_;
  t->scope = symtable_->scope_of(&c);
  t->qualname = child_qualname(c.name);
  for (Symbol s : t->scope->free)
    t->closure_regs.push_back(resolve(s).reg);
  std::size_t nkw = 0;
  for (const Keyword *kw : c.keywords)
    if (!kw->arg.empty()) {
      t->keywords.emplace_back(kw->arg);
      ++nkw;
    }
  std::uint16_t first = temps(c.bases.size() + nkw);
  std::size_t k = 0;
  for (const Expr *b : c.bases)
    expr_to(*b, static_cast<std::uint16_t>(first + k++));
  for (const Keyword *kw : c.keywords)
    if (!kw->arg.empty())
      expr_to(*kw->value, static_cast<std::uint16_t>(first + k++));
  code_.classes.push_back(std::move(t));
  std::uint16_t cls = temp();
  emit(Op::MakeClass, cls, first, static_cast<std::uint16_t>(c.bases.size()),
       static_cast<std::uint32_t>(code_.classes.size() - 1), c.begin());
  for (std::size_t j = c.decorators.size(); j-- > 0;) {
    std::uint16_t callee = temps(2);
    emit(Op::Move, callee, static_cast<std::uint16_t>(decos + j));
    emit(Op::Move, static_cast<std::uint16_t>(callee + 1), cls);
    CallSite site;
    site.loc = c.decorators[j]->begin();
    site.func_loc = site.loc;
    code_.calls.push_back(std::move(site));
    emit(Op::Call, cls, callee, 1, static_cast<std::uint32_t>(code_.calls.size() - 1), c.decorators[j]->begin());
    top_ = static_cast<std::uint16_t>(cls + 1);
  }
  store_name(Symbol::intern(c.name), cls, false, c.begin());
}

void Compiler::function_def(const FunctionDefStmt &d) {
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

void Compiler::import_stmt(const ImportStmt &s) {
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

void Compiler::import_from(const ImportFromStmt &s) {
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

} // namespace nkicc::eval
