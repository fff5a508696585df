// Scope analysis: a first walk records, per scope, the names bound and used and the global and
// nonlocal declarations; a second walk, from the module down, classifies every name with the
// names the enclosing functions bind in view (CPython's symtable.c analyze_block).
#include "eval/symtable.h"

#include <algorithm>
#include <set>

namespace nkicc::eval {

using namespace python;

Symbol class_cell_symbol() {
  static const Symbol s = Symbol::intern("__class__");
  return s;
}

bool ScopeInfo::binds(Symbol s) const { return std::find(bound.begin(), bound.end(), s) != bound.end(); }

namespace {
bool contains(const std::vector<Symbol> &v, Symbol s) { return std::find(v.begin(), v.end(), s) != v.end(); }
void add_unique(std::vector<Symbol> &v, Symbol s) {
  if (!contains(v, s))
    v.push_back(s);
}
} // namespace

/// The first walk.
class ScopeBuilder {
public:
  explicit ScopeBuilder(SymbolTable &table) : t_(table) {}

  struct Facts {
    std::vector<Symbol> used;
    /// Names a comprehension of a class body reads (they skip the class's own names).
    std::vector<Symbol> comp_uses;
    bool uses_super = false;
  };
  std::map<const ScopeInfo *, Facts> facts;

  ScopeInfo *open(ScopeKind kind, const void *node, std::string_view name, ScopeInfo *parent) {
    auto s = std::make_unique<ScopeInfo>();
    s->kind = kind;
    s->node = node;
    s->name = name;
    s->parent = parent;
    ScopeInfo *raw = s.get();
    if (parent)
      parent->children.push_back(raw);
    t_.scopes_.push_back(std::move(s));
    t_.by_node_[node] = raw;
    return raw;
  }

  void module(const Module &m) {
    cur_ = open(ScopeKind::Module, &m, "<module>", nullptr);
    block(m.body);
  }

private:
  SymbolTable &t_;
  ScopeInfo *cur_ = nullptr;

  void bind(Symbol s) {
    // A walrus in a comprehension binds in the enclosing function (PEP 572); ordinary targets of
    // a comprehension bind in the comprehension.
    add_unique(cur_->bound, s);
  }
  void bind(std::string_view n) { bind(Symbol::intern(n)); }
  void use(Symbol s) {
    add_unique(facts[cur_].used, s);
    // A comprehension reads its enclosing scope's names as that scope would.
    for (ScopeInfo *s2 = cur_; s2->kind == ScopeKind::Comprehension && s2->parent; s2 = s2->parent) {
      if (s2->binds(s))
        break;
      ScopeInfo *p = s2->parent;
      if (p->kind == ScopeKind::Class) {
        add_unique(facts[p].comp_uses, s);
        break;
      }
      add_unique(facts[p].used, s);
      if (p->kind != ScopeKind::Comprehension)
        break;
    }
  }

  void targets(const Expr *e) {
    if (!e)
      return;
    switch (e->kind) {
    case ExprKind::Name:
      bind(e->as<NameExpr>().symbol);
      break;
    case ExprKind::Tuple:
      for (const Expr *x : e->as<TupleExpr>().elts)
        targets(x);
      break;
    case ExprKind::List:
      for (const Expr *x : e->as<ListExpr>().elts)
        targets(x);
      break;
    case ExprKind::Starred:
      targets(e->as<StarredExpr>().value);
      break;
    case ExprKind::Attribute:
      expr(e->as<AttributeExpr>().value);
      break;
    case ExprKind::Subscript:
      expr(e->as<SubscriptExpr>().value);
      expr(e->as<SubscriptExpr>().slice);
      break;
    default:
      expr(e);
      break;
    }
  }

  void exprs(ExprList list) {
    for (const Expr *e : list)
      expr(e);
  }

  void params(const Arguments *a) {
    if (!a)
      return;
    for (const Arg *p : a->posonlyargs)
      bind(p->name);
    for (const Arg *p : a->args)
      bind(p->name);
    if (a->vararg)
      bind(a->vararg->name);
    for (const Arg *p : a->kwonlyargs)
      bind(p->name);
    if (a->kwarg)
      bind(a->kwarg->name);
  }
  void defaults(const Arguments *a) {
    if (!a)
      return;
    exprs(a->defaults);
    for (const Expr *d : a->kw_defaults)
      expr(d);
  }

  void comprehension(const Expr &e, NodeList<Comprehension> gens, const Expr *elt, const Expr *value) {
    // The first iterable belongs to the enclosing scope.
    expr(gens[0]->iter);
    ScopeInfo *saved = cur_;
    cur_ = open(ScopeKind::Comprehension, &e, "<comprehension>", saved);
    for (std::size_t k = 0; k < gens.size(); ++k) {
      targets(gens[k]->target);
      if (k)
        expr(gens[k]->iter);
      exprs(gens[k]->ifs);
    }
    expr(elt);
    expr(value);
    cur_ = saved;
  }

  void named_target(Symbol s) {
    // The nearest enclosing scope that is not a comprehension binds it.
    ScopeInfo *saved = cur_;
    while (cur_->kind == ScopeKind::Comprehension && cur_->parent)
      cur_ = cur_->parent;
    bind(s);
    ScopeInfo *binder = cur_;
    cur_ = saved;
    // Each comprehension between reads it from the binder.
    for (ScopeInfo *s2 = saved; s2 != binder; s2 = s2->parent)
      add_unique(facts[s2].used, s);
  }

  void expr(const Expr *e) {
    if (!e)
      return;
    switch (e->kind) {
    case ExprKind::BoolOp:
      exprs(e->as<BoolOpExpr>().values);
      break;
    case ExprKind::NamedExpr: {
      const auto &n = e->as<NamedExpr>();
      expr(n.value);
      if (n.target->kind == ExprKind::Name)
        named_target(n.target->as<NameExpr>().symbol);
      break;
    }
    case ExprKind::BinOp:
      expr(e->as<BinOpExpr>().left);
      expr(e->as<BinOpExpr>().right);
      break;
    case ExprKind::UnaryOp:
      expr(e->as<UnaryOpExpr>().operand);
      break;
    case ExprKind::Lambda: {
      const auto &l = e->as<LambdaExpr>();
      defaults(l.args);
      ScopeInfo *saved = cur_;
      saved->has_nested_functions = true;
      cur_ = open(ScopeKind::Lambda, &l, "<lambda>", saved);
      params(l.args);
      expr(l.body);
      cur_ = saved;
      break;
    }
    case ExprKind::IfExp:
      expr(e->as<IfExpExpr>().test);
      expr(e->as<IfExpExpr>().body);
      expr(e->as<IfExpExpr>().orelse);
      break;
    case ExprKind::Dict:
      for (const Expr *k : e->as<DictExpr>().keys)
        expr(k);
      exprs(e->as<DictExpr>().values);
      break;
    case ExprKind::Set:
      exprs(e->as<SetExpr>().elts);
      break;
    case ExprKind::ListComp:
    case ExprKind::SetComp:
    case ExprKind::GeneratorExp: {
      const auto &c = static_cast<const ComprehensionExpr &>(*e);
      comprehension(*e, c.generators, c.elt, nullptr);
      break;
    }
    case ExprKind::DictComp: {
      const auto &d = e->as<DictCompExpr>();
      comprehension(*e, d.generators, d.key, d.value);
      break;
    }
    case ExprKind::Await:
      expr(e->as<AwaitExpr>().value);
      break;
    case ExprKind::Yield:
      expr(e->as<YieldExpr>().value);
      break;
    case ExprKind::YieldFrom:
      expr(e->as<YieldFromExpr>().value);
      break;
    case ExprKind::Compare:
      expr(e->as<CompareExpr>().left);
      exprs(e->as<CompareExpr>().comparators);
      break;
    case ExprKind::Call: {
      const auto &c = e->as<CallExpr>();
      expr(c.func);
      exprs(c.args);
      for (const Keyword *kw : c.keywords)
        expr(kw->value);
      break;
    }
    case ExprKind::FormattedValue:
      expr(e->as<FormattedValueExpr>().value);
      expr(e->as<FormattedValueExpr>().format_spec);
      break;
    case ExprKind::JoinedStr:
      exprs(e->as<JoinedStrExpr>().values);
      break;
    case ExprKind::Constant:
      break;
    case ExprKind::Attribute:
      expr(e->as<AttributeExpr>().value);
      break;
    case ExprKind::Subscript:
      expr(e->as<SubscriptExpr>().value);
      expr(e->as<SubscriptExpr>().slice);
      break;
    case ExprKind::Starred:
      expr(e->as<StarredExpr>().value);
      break;
    case ExprKind::Name: {
      const auto &n = e->as<NameExpr>();
      if (n.ctx == ExprContext::Load) {
        use(n.symbol);
        if (n.id == "super") {
          ScopeInfo *owner = cur_;
          while (owner->kind == ScopeKind::Comprehension && owner->parent)
            owner = owner->parent;
          facts[owner].uses_super = true;
        }
      } else {
        bind(n.symbol);
      }
      break;
    }
    case ExprKind::List:
      exprs(e->as<ListExpr>().elts);
      break;
    case ExprKind::Tuple:
      exprs(e->as<TupleExpr>().elts);
      break;
    case ExprKind::Slice:
      expr(e->as<SliceExpr>().lower);
      expr(e->as<SliceExpr>().upper);
      expr(e->as<SliceExpr>().step);
      break;
    }
  }

  void block(StmtList body) {
    for (const Stmt *s : body)
      stmt(*s);
  }

  void stmt(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::FunctionDef: {
      const auto &d = s.as<FunctionDefStmt>();
      exprs(d.decorators);
      defaults(d.args);
      bind(d.name);
      cur_->has_nested_functions = true;
      ScopeInfo *saved = cur_;
      cur_ = open(ScopeKind::Function, &d, d.name, saved);
      params(d.args);
      block(d.body);
      cur_ = saved;
      break;
    }
    case StmtKind::ClassDef: {
      const auto &c = s.as<ClassDefStmt>();
      exprs(c.decorators);
      exprs(c.bases);
      for (const Keyword *kw : c.keywords)
        expr(kw->value);
      bind(c.name);
      ScopeInfo *saved = cur_;
      cur_ = open(ScopeKind::Class, &c, c.name, saved);
      block(c.body);
      cur_ = saved;
      break;
    }
    case StmtKind::Return:
      expr(s.as<ReturnStmt>().value);
      break;
    case StmtKind::Delete:
      for (const Expr *t : s.as<DeleteStmt>().targets)
        targets(t);
      break;
    case StmtKind::Assign:
      expr(s.as<AssignStmt>().value);
      for (const Expr *t : s.as<AssignStmt>().targets)
        targets(t);
      break;
    case StmtKind::AugAssign: {
      const auto &a = s.as<AugAssignStmt>();
      expr(a.value);
      if (a.target->kind == ExprKind::Name) {
        use(a.target->as<NameExpr>().symbol);
        bind(a.target->as<NameExpr>().symbol);
      } else {
        targets(a.target);
      }
      break;
    }
    case StmtKind::AnnAssign: {
      const auto &a = s.as<AnnAssignStmt>();
      expr(a.value);
      // An annotation without a value binds nothing, but `x: int` still makes x local.
      targets(a.target);
      break;
    }
    case StmtKind::For: {
      const auto &f = s.as<ForStmt>();
      expr(f.iter);
      targets(f.target);
      block(f.body);
      block(f.orelse);
      break;
    }
    case StmtKind::While:
      expr(s.as<WhileStmt>().test);
      block(s.as<WhileStmt>().body);
      block(s.as<WhileStmt>().orelse);
      break;
    case StmtKind::If:
      expr(s.as<IfStmt>().test);
      block(s.as<IfStmt>().body);
      block(s.as<IfStmt>().orelse);
      break;
    case StmtKind::With:
      for (const WithItem *item : s.as<WithStmt>().items) {
        expr(item->context_expr);
        targets(item->optional_vars);
      }
      block(s.as<WithStmt>().body);
      break;
    case StmtKind::Raise:
      expr(s.as<RaiseStmt>().exc);
      expr(s.as<RaiseStmt>().cause);
      break;
    case StmtKind::Try: {
      const auto &t = s.as<TryStmt>();
      block(t.body);
      for (const ExceptHandler *h : t.handlers) {
        expr(h->type);
        if (!h->name.empty())
          bind(h->name);
        block(h->body);
      }
      block(t.orelse);
      block(t.finalbody);
      break;
    }
    case StmtKind::Assert:
      expr(s.as<AssertStmt>().test);
      expr(s.as<AssertStmt>().msg);
      break;
    case StmtKind::Import:
      for (const Alias *a : s.as<ImportStmt>().names)
        bind(a->asname.empty() ? a->name.substr(0, a->name.find('.')) : a->asname);
      break;
    case StmtKind::ImportFrom:
      for (const Alias *a : s.as<ImportFromStmt>().names) {
        if (a->name == "*")
          cur_->import_star = true;
        else
          bind(a->asname.empty() ? a->name : a->asname);
      }
      break;
    case StmtKind::Global:
      for (std::string_view n : s.as<GlobalStmt>().names)
        add_unique(cur_->declared_global, Symbol::intern(n));
      break;
    case StmtKind::Nonlocal:
      for (std::string_view n : s.as<NonlocalStmt>().names)
        add_unique(cur_->declared_nonlocal, Symbol::intern(n));
      break;
    case StmtKind::Expr:
      expr(s.as<ExprStmt>().value);
      break;
    case StmtKind::Pass:
    case StmtKind::Break:
    case StmtKind::Continue:
      break;
    }
  }
};

namespace {

/// The second walk. `visible` maps each name bound by an enclosing function (or `__class__` of
/// an enclosing class) to the scope that binds it.
class Analyzer {
public:
  Analyzer(std::map<const ScopeInfo *, ScopeBuilder::Facts> &facts, std::vector<SymtableError> &errors)
      : facts_(facts), errors_(errors) {}

  void analyze(ScopeInfo &s, const std::map<std::uint32_t, ScopeInfo *> &visible) {
    ScopeBuilder::Facts &f = facts_[&s];
    auto in_view = [&](Symbol n) -> ScopeInfo * {
      auto it = visible.find(n.id());
      return it == visible.end() ? nullptr : it->second;
    };
    if ((s.kind == ScopeKind::Function || s.kind == ScopeKind::Lambda) && f.uses_super)
      add_unique(f.used, class_cell_symbol());

    for (Symbol n : s.declared_global)
      s.names[n.id()] = NameKind::GlobalExplicit;
    for (Symbol n : s.declared_nonlocal) {
      if (s.kind == ScopeKind::Module) {
        errors_.push_back({"nonlocal declaration not allowed at module level", {}});
        continue;
      }
      ScopeInfo *binder = in_view(n);
      if (!binder || binder->kind == ScopeKind::Class) {
        errors_.push_back({"no binding for nonlocal '" + std::string(n.name()) + "' found", {}});
        continue;
      }
      s.names[n.id()] = NameKind::Free;
      capture(s, n, *binder);
    }
    for (Symbol n : s.bound) {
      if (s.names.count(n.id()))
        continue;
      s.names[n.id()] =
          s.kind == ScopeKind::Module || s.kind == ScopeKind::Class ? NameKind::Namespace : NameKind::Local;
    }
    for (Symbol n : f.used) {
      if (s.names.count(n.id()))
        continue;
      if (s.kind == ScopeKind::Module) {
        s.names[n.id()] = NameKind::Namespace;
        continue;
      }
      ScopeInfo *binder = in_view(n);
      if (s.kind == ScopeKind::Class) {
        if (binder && binder->kind != ScopeKind::Class && n != class_cell_symbol()) {
          s.names[n.id()] = NameKind::Free;
          capture(s, n, *binder);
        } else {
          s.names[n.id()] = NameKind::Namespace;
        }
        continue;
      }
      if (binder && (n != class_cell_symbol() || binder->kind == ScopeKind::Class)) {
        s.names[n.id()] = NameKind::Free;
        capture(s, n, *binder);
      } else {
        s.names[n.id()] = NameKind::GlobalImplicit;
      }
    }
    // A class body's comprehension reads past the class's own names.
    for (Symbol n : f.comp_uses) {
      if (s.names.count(n.id()) && s.names[n.id()] != NameKind::Namespace)
        continue;
      ScopeInfo *binder = in_view(n);
      if (binder && binder->kind != ScopeKind::Class && !s.names.count(n.id())) {
        s.names[n.id()] = NameKind::Free;
        capture(s, n, *binder);
      }
    }

    std::map<std::uint32_t, ScopeInfo *> inner = visible;
    if (s.kind == ScopeKind::Class) {
      inner[class_cell_symbol().id()] = &s;
    } else if (s.is_function_like()) {
      for (const auto &[id, kind] : s.names)
        if (kind == NameKind::Local || kind == NameKind::Cell)
          inner[id] = &s;
    } else {
      inner.clear();
    }
    for (ScopeInfo *child : s.children)
      analyze(*child, inner);
  }

private:
  std::map<const ScopeInfo *, ScopeBuilder::Facts> &facts_;
  std::vector<SymtableError> &errors_;

  /// `user` reads `n`, which `binder` binds: the binder keeps it in a cell, and every function
  /// or class between them passes the cell on. Comprehensions between are transparent: they
  /// are part of their enclosing function's code.
  void capture(ScopeInfo &user, Symbol n, ScopeInfo &binder) {
    if (user.kind != ScopeKind::Comprehension)
      add_unique(user.free, n);
    for (ScopeInfo *s = user.parent; s && s != &binder; s = s->parent) {
      if (s->kind == ScopeKind::Comprehension) {
        continue;
      }
      auto it = s->names.find(n.id());
      if (it == s->names.end() || it->second == NameKind::Namespace || it->second == NameKind::GlobalImplicit)
        s->names[n.id()] = NameKind::Free;
      add_unique(s->free, n);
    }
    if (user.kind == ScopeKind::Comprehension) {
      // The comprehension runs inside its enclosing code: reaching the binder needs no cell
      // when that code is the binder's.
      const ScopeInfo *owner = &user;
      while (owner->kind == ScopeKind::Comprehension && owner->parent)
        owner = owner->parent;
      if (owner == &binder || (binder.kind == ScopeKind::Comprehension && enclosing_code(binder) == owner))
        return;
    }
    if (binder.kind == ScopeKind::Class) {
      binder.has_class_cell = true;
      if (user.parent == &binder)
        user.needs_class_cell = true;
      return;
    }
    binder.names[n.id()] = NameKind::Cell;
  }

  static const ScopeInfo *enclosing_code(const ScopeInfo &s) {
    const ScopeInfo *o = &s;
    while (o->kind == ScopeKind::Comprehension && o->parent)
      o = o->parent;
    return o;
  }
};

} // namespace

SymbolTable::SymbolTable(const Module &module) {
  ScopeBuilder builder(*this);
  builder.module(module);
  Analyzer(builder.facts, errors_).analyze(*scopes_.front(), {});
}

const ScopeInfo *SymbolTable::scope_of(const void *node) const {
  auto it = by_node_.find(node);
  return it == by_node_.end() ? nullptr : it->second;
}

} // namespace nkicc::eval
