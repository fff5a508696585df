// The tree-walking evaluator: expressions and statements of SPEC §3's Python subset, scopes
// (LEGB with per-function local analysis), calls with Python's argument binding, imports, and
// the step budget. The normal path allocates nothing for ints, floats and bools, looks names up
// by string_view, and signals break/continue/return with a status, not an exception.
#include "nkicc/trace/interpreter.h"
#include "nkicc/trace/pylib.h"

#include <algorithm>
#include <array>
#include <limits>
#include <typeinfo>

namespace nkicc::trace {

using namespace python;
using K = Value::Kind;

/// Facts about one function, computed once per `def` node.
struct FunctionInfo {
  /// A parameter: its name for keyword matching and messages, its symbol for binding.
  struct Param {
    std::string_view name;
    Symbol symbol;
    std::int32_t slot = -1; ///< index in `locals`; -1 when not a local (declared global)
  };
  const void *key = nullptr;  ///< the def or lambda node: NameExpr::slot_owner
  std::vector<Symbol> locals; ///< assigned anywhere in the body, and the parameters
  std::vector<Symbol> globals;
  std::vector<Symbol> nonlocals;
  std::vector<Param> positional; ///< posonlyargs then args
  std::size_t posonly = 0;
  std::vector<Param> kwonly;
  Param vararg, kwarg;
  bool has_vararg = false, has_kwarg = false;
  bool defines_functions = false; ///< the scope may be closed over

  static bool has(const std::vector<Symbol> &names, Symbol name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  }
};

/// One executing body: a module's or a call's, or a comprehension's (which sees its
/// enclosing frame's names).
struct InterpFrame {
  std::shared_ptr<Scope> scope; ///< owns `locals` (a closure may outlive the call)
  std::shared_ptr<ModuleObject> module_owner;
  Scope *locals = nullptr;
  Scope *globals = nullptr;
  ModuleObject *module = nullptr;
  const FunctionInfo *info = nullptr; ///< null at module level
  InterpFrame *comp_outer = nullptr;
  std::string_view qualname; ///< of the function, for nested `def`s' qualnames
};

namespace {

void add_unique(std::vector<Symbol> &names, Symbol name) {
  if (!FunctionInfo::has(names, name))
    names.push_back(name);
}
void add_unique(std::vector<Symbol> &names, std::string_view name) { add_unique(names, Symbol::intern(name)); }

void collect_targets(const Expr *e, std::vector<Symbol> &out) {
  if (!e)
    return;
  switch (e->kind) {
  case ExprKind::Name:
    add_unique(out, e->as<NameExpr>().symbol);
    break;
  case ExprKind::Tuple:
    for (const Expr *x : e->as<TupleExpr>().elts)
      collect_targets(x, out);
    break;
  case ExprKind::List:
    for (const Expr *x : e->as<ListExpr>().elts)
      collect_targets(x, out);
    break;
  case ExprKind::Starred:
    collect_targets(e->as<StarredExpr>().value, out);
    break;
  default:
    break;
  }
}

void collect_block(StmtList body, FunctionInfo &info, std::vector<Symbol> &assigned) {
  for (const Stmt *s : body) {
    switch (s->kind) {
    case StmtKind::FunctionDef:
      add_unique(assigned, s->as<FunctionDefStmt>().name);
      info.defines_functions = true;
      break;
    case StmtKind::ClassDef:
      add_unique(assigned, s->as<ClassDefStmt>().name);
      break;
    case StmtKind::Assign:
      for (const Expr *t : s->as<AssignStmt>().targets)
        collect_targets(t, assigned);
      break;
    case StmtKind::AugAssign:
      collect_targets(s->as<AugAssignStmt>().target, assigned);
      break;
    case StmtKind::AnnAssign:
      collect_targets(s->as<AnnAssignStmt>().target, assigned);
      break;
    case StmtKind::For: {
      const auto &f = s->as<ForStmt>();
      collect_targets(f.target, assigned);
      collect_block(f.body, info, assigned);
      collect_block(f.orelse, info, assigned);
      break;
    }
    case StmtKind::While:
      collect_block(s->as<WhileStmt>().body, info, assigned);
      collect_block(s->as<WhileStmt>().orelse, info, assigned);
      break;
    case StmtKind::If:
      collect_block(s->as<IfStmt>().body, info, assigned);
      collect_block(s->as<IfStmt>().orelse, info, assigned);
      break;
    case StmtKind::With:
      for (const WithItem *item : s->as<WithStmt>().items)
        collect_targets(item->optional_vars, assigned);
      collect_block(s->as<WithStmt>().body, info, assigned);
      break;
    case StmtKind::Try: {
      const auto &t = s->as<TryStmt>();
      collect_block(t.body, info, assigned);
      for (const ExceptHandler *h : t.handlers) {
        if (!h->name.empty())
          add_unique(assigned, h->name);
        collect_block(h->body, info, assigned);
      }
      collect_block(t.orelse, info, assigned);
      collect_block(t.finalbody, info, assigned);
      break;
    }
    case StmtKind::Delete:
      for (const Expr *t : s->as<DeleteStmt>().targets)
        collect_targets(t, assigned);
      break;
    case StmtKind::Import:
      for (const Alias *a : s->as<ImportStmt>().names)
        add_unique(assigned, a->asname.empty() ? a->name.substr(0, a->name.find('.')) : a->asname);
      break;
    case StmtKind::ImportFrom:
      for (const Alias *a : s->as<ImportFromStmt>().names)
        if (a->name != "*")
          add_unique(assigned, a->asname.empty() ? a->name : a->asname);
      break;
    case StmtKind::Global:
      for (std::string_view n : s->as<GlobalStmt>().names)
        add_unique(info.globals, n);
      break;
    case StmtKind::Nonlocal:
      for (std::string_view n : s->as<NonlocalStmt>().names)
        add_unique(info.nonlocals, n);
      break;
    default:
      break;
    }
  }
}

std::int32_t slot_of(const FunctionInfo &info, Symbol name) {
  auto it = std::find(info.locals.begin(), info.locals.end(), name);
  return it == info.locals.end() ? -1 : static_cast<std::int32_t>(it - info.locals.begin());
}

/// Records on every Name of a function's own code (not of nested defs and lambdas, whose
/// defaults and decorators are its own) the name's slot among the function's locals.
class SlotAnnotator {
public:
  explicit SlotAnnotator(const FunctionInfo &info) : info_(info) {}

  bool saw_lambda = false; ///< the code makes a lambda, which closes over the call's scope

  void expr(const Expr *e) {
    if (!e)
      return;
    switch (e->kind) {
    case ExprKind::BoolOp:
      exprs(e->as<BoolOpExpr>().values);
      break;
    case ExprKind::NamedExpr:
      expr(e->as<NamedExpr>().target);
      expr(e->as<NamedExpr>().value);
      break;
    case ExprKind::BinOp:
      expr(e->as<BinOpExpr>().left);
      expr(e->as<BinOpExpr>().right);
      break;
    case ExprKind::UnaryOp:
      expr(e->as<UnaryOpExpr>().operand);
      break;
    case ExprKind::Lambda:
      defaults(e->as<LambdaExpr>().args);
      saw_lambda = true;
      break;
    case ExprKind::IfExp:
      expr(e->as<IfExpExpr>().test);
      expr(e->as<IfExpExpr>().body);
      expr(e->as<IfExpExpr>().orelse);
      break;
    case ExprKind::Dict:
      exprs(e->as<DictExpr>().keys);
      exprs(e->as<DictExpr>().values);
      break;
    case ExprKind::Set:
      exprs(e->as<SetExpr>().elts);
      break;
    case ExprKind::ListComp:
    case ExprKind::SetComp:
    case ExprKind::GeneratorExp: {
      const auto &c = static_cast<const ComprehensionExpr &>(*e);
      expr(c.elt);
      generators(c.generators);
      break;
    }
    case ExprKind::DictComp:
      expr(e->as<DictCompExpr>().key);
      expr(e->as<DictCompExpr>().value);
      generators(e->as<DictCompExpr>().generators);
      break;
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
    case ExprKind::Call:
      expr(e->as<CallExpr>().func);
      exprs(e->as<CallExpr>().args);
      for (const Keyword *kw : e->as<CallExpr>().keywords)
        expr(kw->value);
      break;
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
      n.slot = slot_of(info_, n.symbol);
      n.slot_owner = info_.key;
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

private:
  const FunctionInfo &info_;

  void exprs(ExprList list) {
    for (const Expr *e : list)
      expr(e);
  }
  void defaults(const Arguments *params) {
    if (!params)
      return;
    exprs(params->defaults);
    exprs(params->kw_defaults);
  }
  void generators(NodeList<Comprehension> gens) {
    for (const Comprehension *g : gens) {
      expr(g->target);
      expr(g->iter);
      exprs(g->ifs);
    }
  }
  void stmt(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::FunctionDef:
      exprs(s.as<FunctionDefStmt>().decorators);
      defaults(s.as<FunctionDefStmt>().args);
      break;
    case StmtKind::ClassDef:
      break;
    case StmtKind::Return:
      expr(s.as<ReturnStmt>().value);
      break;
    case StmtKind::Delete:
      exprs(s.as<DeleteStmt>().targets);
      break;
    case StmtKind::Assign:
      exprs(s.as<AssignStmt>().targets);
      expr(s.as<AssignStmt>().value);
      break;
    case StmtKind::AugAssign:
      expr(s.as<AugAssignStmt>().target);
      expr(s.as<AugAssignStmt>().value);
      break;
    case StmtKind::AnnAssign:
      expr(s.as<AnnAssignStmt>().target);
      expr(s.as<AnnAssignStmt>().value);
      break;
    case StmtKind::For:
      expr(s.as<ForStmt>().target);
      expr(s.as<ForStmt>().iter);
      block(s.as<ForStmt>().body);
      block(s.as<ForStmt>().orelse);
      break;
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
        expr(item->optional_vars);
      }
      block(s.as<WithStmt>().body);
      break;
    case StmtKind::Raise:
      expr(s.as<RaiseStmt>().exc);
      expr(s.as<RaiseStmt>().cause);
      break;
    case StmtKind::Try:
      block(s.as<TryStmt>().body);
      for (const ExceptHandler *h : s.as<TryStmt>().handlers) {
        expr(h->type);
        block(h->body);
      }
      block(s.as<TryStmt>().orelse);
      block(s.as<TryStmt>().finalbody);
      break;
    case StmtKind::Assert:
      expr(s.as<AssertStmt>().test);
      expr(s.as<AssertStmt>().msg);
      break;
    case StmtKind::Expr:
      expr(s.as<ExprStmt>().value);
      break;
    case StmtKind::Import:
    case StmtKind::ImportFrom:
    case StmtKind::Global:
    case StmtKind::Nonlocal:
    case StmtKind::Pass:
    case StmtKind::Break:
    case StmtKind::Continue:
      break;
    }
  }
};

std::shared_ptr<FunctionInfo> analyze(const Arguments *params, const FunctionDefStmt *def, const Expr *lambda_body,
                                      const void *key) {
  auto info = std::make_shared<FunctionInfo>();
  info->key = key;
  std::vector<Symbol> assigned;
  auto param = [](const Arg *a) { return FunctionInfo::Param{a->name, Symbol::intern(a->name)}; };
  if (params) {
    for (const Arg *a : params->posonlyargs)
      info->positional.push_back(param(a));
    info->posonly = params->posonlyargs.size();
    for (const Arg *a : params->args)
      info->positional.push_back(param(a));
    for (const Arg *a : params->kwonlyargs)
      info->kwonly.push_back(param(a));
    if (params->vararg) {
      info->has_vararg = true;
      info->vararg = param(params->vararg);
    }
    if (params->kwarg) {
      info->has_kwarg = true;
      info->kwarg = param(params->kwarg);
    }
  }
  for (const FunctionInfo::Param &p : info->positional)
    add_unique(assigned, p.symbol);
  for (const FunctionInfo::Param &p : info->kwonly)
    add_unique(assigned, p.symbol);
  if (info->has_vararg)
    add_unique(assigned, info->vararg.symbol);
  if (info->has_kwarg)
    add_unique(assigned, info->kwarg.symbol);
  if (def)
    collect_block(def->body, *info, assigned);
  else
    info->defines_functions = true; // a lambda body may hold lambdas; cheap to assume
  for (Symbol n : assigned)
    if (!FunctionInfo::has(info->globals, n) && !FunctionInfo::has(info->nonlocals, n))
      info->locals.push_back(n);
  for (FunctionInfo::Param &p : info->positional)
    p.slot = slot_of(*info, p.symbol);
  for (FunctionInfo::Param &p : info->kwonly)
    p.slot = slot_of(*info, p.symbol);
  info->vararg.slot = info->has_vararg ? slot_of(*info, info->vararg.symbol) : -1;
  info->kwarg.slot = info->has_kwarg ? slot_of(*info, info->kwarg.symbol) : -1;
  SlotAnnotator annotate(*info);
  if (def)
    annotate.block(def->body);
  annotate.expr(lambda_body);
  // A lambda closes over the call's scope as a nested def does: the scope may be in a cycle.
  if (annotate.saw_lambda)
    info->defines_functions = true;
  return info;
}

enum class Flow { Normal, Break, Continue, Return };

/// The Object if its type is exactly T (not a subclass, which may override T's behaviour).
template <class T> T *exactly(const Value &v) {
  Object *obj = v.object();
  return obj && &typeid(*obj) == &typeid(T) ? static_cast<T *>(obj) : nullptr;
}

/// One flag per parameter of a call, without a heap allocation for the usual few.
class Flags {
public:
  explicit Flags(std::size_t n) {
    if (n > small_.size())
      heap_ = std::make_unique<bool[]>(n);
  }
  bool &operator[](std::size_t k) { return heap_ ? heap_[k] : small_[k]; }

private:
  std::array<bool, 16> small_{};
  std::unique_ptr<bool[]> heap_;
};

std::string join_names(const std::vector<std::string_view> &names) {
  std::string out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k)
      out += names.size() == 2 ? " and " : (k + 1 == names.size() ? ", and " : ", ");
    out += "'" + std::string(names[k]) + "'";
  }
  return out;
}

} // namespace

// ---- Scope --------------------------------------------------------------------------------------

namespace {
constexpr std::size_t kScopeIndexFrom = 12; ///< entries before a scope keeps a hash index
}

Value *Scope::find_local(std::string_view name) {
  std::optional<Symbol> symbol = Symbol::find(name);
  return symbol ? find_local(*symbol) : nullptr;
}
Scope::Entry *Scope::find_indexed(Symbol name) {
  std::size_t mask = index_.size() - 1;
  for (std::size_t h = name.id() & mask;; h = (h + 1) & mask) {
    std::uint32_t slot = index_[h];
    if (!slot)
      return nullptr;
    if (entries_[slot - 1].symbol == name)
      return &entries_[slot - 1];
  }
}
void Scope::rebuild_index() {
  index_.clear();
  if (entries_.size() < kScopeIndexFrom)
    return;
  std::size_t capacity = 32;
  while (capacity < entries_.size() * 2)
    capacity *= 2;
  index_.assign(capacity, 0);
  std::size_t mask = capacity - 1;
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    std::size_t h = entries_[k].symbol.id() & mask;
    while (index_[h])
      h = (h + 1) & mask;
    index_[h] = static_cast<std::uint32_t>(k + 1);
  }
}
void Scope::add_slots(const std::vector<Symbol> &symbols) {
  entries_.reserve(symbols.size());
  for (Symbol symbol : symbols)
    entries_.push_back(Entry{symbol, false, Value()});
  slots_ = symbols.size();
  if (entries_.size() >= kScopeIndexFrom)
    rebuild_index();
}
void Scope::set(std::string_view name, Value value) { set(Symbol::intern(name), std::move(value)); }
void Scope::set(Symbol name, Value value) {
  if (Entry *entry = find_entry(name)) {
    entry->value = std::move(value);
    entry->bound = true;
    return;
  }
  entries_.push_back(Entry{name, true, std::move(value)});
  if (entries_.size() >= kScopeIndexFrom) {
    if (entries_.size() * 2 > index_.size()) {
      rebuild_index();
    } else {
      std::size_t mask = index_.size() - 1;
      std::size_t h = name.id() & mask;
      while (index_[h])
        h = (h + 1) & mask;
      index_[h] = static_cast<std::uint32_t>(entries_.size());
    }
  }
}
void Scope::reset(std::shared_ptr<Scope> parent) {
  entries_.clear();
  index_.clear();
  slots_ = 0;
  parent_ = std::move(parent);
}
void Scope::clear() {
  auto entries = std::move(entries_);
  entries_.clear();
  index_.clear();
  slots_ = 0;
}
bool Scope::erase(std::string_view name) {
  std::optional<Symbol> symbol = Symbol::find(name);
  return symbol && erase(*symbol);
}
bool Scope::erase(Symbol name) {
  Entry *entry = find_entry(name);
  if (!entry || !entry->bound)
    return false;
  auto k = static_cast<std::size_t>(entry - entries_.data());
  if (k < slots_) {
    entry->bound = false;
    entry->value = Value();
    return true;
  }
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(k));
  rebuild_index();
  return true;
}

std::optional<Value> ModuleObject::get_attr(Interpreter &, std::string_view name) {
  if (Value *v = globals_->find_local(name))
    return *v;
  if (name == "__name__")
    return Value::str(name_);
  return std::nullopt;
}

std::string FunctionObject::repr() const { return "<function " + qualname + ">"; }
std::optional<Value> FunctionObject::get_attr(Interpreter &, std::string_view attr) {
  if (attr == "__name__")
    return Value::str(std::string(name));
  if (attr == "__qualname__")
    return Value::str(qualname);
  return std::nullopt;
}

// ---- the evaluator ------------------------------------------------------------------------------

class Evaluator {
public:
  explicit Evaluator(Interpreter &interp) : in_(interp) {}

  Value eval(const Expr &e);
  Flow exec_block(StmtList body);
  Value call_function(FunctionObject &fn, CallArgs &args);
  Value call(const Value &callee, CallArgs &args, SourceLoc loc);
  void run_module_body(const Module &module, ModuleObject &m);

private:
  Interpreter &in_;
  Value ret_;

  InterpFrame &frame() { return *in_.frame_; }
  [[noreturn]] void unsupported(std::string_view what, SourceLoc loc) {
    std::string msg = "unsupported Python construct '" + std::string(what) + "'";
    if (in_.function_frames_ > 0)
      msg += " in kernel '" + in_.kernel_name_ + "'";
    raise_error("unsupported", std::move(msg), loc);
  }
  void step(SourceLoc loc) {
    if (++in_.steps_ > in_.limits_.max_steps)
      raise_error("step-budget",
                  "the trace ran more than " + std::to_string(in_.limits_.max_steps) +
                      " steps (an endless loop?); raise --max-instructions or fix the loop",
                  loc);
  }

  Value eval_inner(const Expr &e);
  Value lookup(const NameExpr &n);
  void store(Symbol name, Value v);
  void store_name(const NameExpr &n, Value v);
  void store(std::string_view name, Value v) { store(Symbol::intern(name), std::move(v)); }
  Value get_attr(const Value &v, const AttributeExpr &a, SourceLoc loc);
  void assign(const Expr &target, Value v);
  Value eval_subscript_key(const Expr &slice);
  /// Keeps a subscript key's tuple and slice records for the next key, when nothing else
  /// holds them.
  void recycle_subscript_key(Value &key);
  Value eval_call(const CallExpr &c);
  void build_args(const CallExpr &c, CallArgs &args);
  Value make_function(const Arguments *params, const FunctionDefStmt *def, const Expr *lambda_body,
                      std::string_view name, const void *key);
  void elements(ExprList elts, std::vector<Value> &out);
  Value comprehension(const Expr &e);
  void comp_loop(NodeList<Comprehension> gens, std::size_t k, const std::function<void()> &emit);
  Flow exec(const Stmt &s);
  Flow exec_for(const ForStmt &s);
  void exec_import(const ImportStmt &s);
  void exec_import_from(const ImportFromStmt &s);
  std::string fstring(const JoinedStrExpr &j);
};

Value Evaluator::eval(const Expr &e) {
  // Leaves that cannot fail without a location of their own skip the depth bookkeeping (which
  // they leave unchanged) and the handler that locates errors.
  if (in_.expr_depth_ < 3000) {
    if (e.kind == ExprKind::Name)
      return lookup(e.as<NameExpr>());
    if (e.kind == ExprKind::Constant) {
      const auto &c = e.as<ConstantExpr>();
      if (c.value_kind == ConstantKind::Int && !c.int_overflow)
        return Value::integer(c.int_value);
      if (c.value_kind == ConstantKind::None)
        return Value();
    }
  }
  if (++in_.expr_depth_ > 3000) {
    --in_.expr_depth_;
    raise_python("RecursionError", "maximum recursion depth exceeded during evaluation of a nested expression",
                 e.begin());
  }
  struct Depth {
    int &d;
    ~Depth() { --d; }
  } depth{in_.expr_depth_};
  try {
    return eval_inner(e);
  } catch (TraceError &err) {
    if (!err.loc.valid())
      err.loc = e.begin();
    throw;
  }
}

Value Evaluator::get_attr(const Value &v, const AttributeExpr &a, SourceLoc loc) {
  // A plain module's attribute is its global (ModuleObject::get_attr), found by symbol.
  if (auto *module = exactly<ModuleObject>(v))
    if (Value *global = module->globals().find_local(a.attr_symbol))
      return *global;
  return in_.get_attr(v, a.attr, loc);
}

Value Evaluator::lookup(const NameExpr &n) {
  Symbol name = n.symbol;
  InterpFrame *f = in_.frame_;
  while (f->comp_outer) {
    if (Value *v = f->locals->find_local(name))
      return *v;
    f = f->comp_outer;
  }
  // In its own function, a Name knows whether it is a local, and the local's slot.
  bool resolved = f->info && n.slot_owner == f->info->key;
  if (resolved) {
    if (n.slot >= 0) {
      Scope::Entry &entry = f->locals->slot(static_cast<std::size_t>(n.slot));
      if (entry.bound)
        return entry.value;
    } else if (Value *v = f->locals->find_unslotted(name)) {
      return *v;
    }
  } else if (Value *v = f->locals->find_local(name)) {
    return *v;
  }
  if (f->info) {
    if (resolved ? n.slot >= 0 : FunctionInfo::has(f->info->locals, name))
      raise_python("UnboundLocalError",
                   "cannot access local variable '" + std::string(n.id) + "' where it is not associated with a value",
                   n.begin());
    if (!FunctionInfo::has(f->info->globals, name))
      for (Scope *s = f->locals->parent().get(); s; s = s->parent().get())
        if (Value *v = s->find_local(name))
          return *v;
    if (Value *v = f->globals->find_local(name))
      return *v;
  }
  if (Value *v = in_.builtins_->find_local(name))
    return *v;
  raise_python("NameError", "name '" + std::string(n.id) + "' is not defined", n.begin());
}

void Evaluator::store_name(const NameExpr &n, Value v) {
  InterpFrame &f = frame();
  if (n.slot >= 0 && f.info && n.slot_owner == f.info->key)
    return f.locals->bind_slot(static_cast<std::size_t>(n.slot), std::move(v));
  store(n.symbol, std::move(v));
}

void Evaluator::store(Symbol name, Value v) {
  InterpFrame &f = frame();
  if (f.info && !f.comp_outer) {
    if (!f.info->globals.empty() && FunctionInfo::has(f.info->globals, name))
      return f.globals->set(name, std::move(v));
    if (!f.info->nonlocals.empty() && FunctionInfo::has(f.info->nonlocals, name)) {
      for (Scope *s = f.locals->parent().get(); s; s = s->parent().get())
        if (Value *slot = s->find_local(name)) {
          *slot = std::move(v);
          return;
        }
      if (f.locals->parent())
        return f.locals->parent()->set(name, std::move(v));
    }
  }
  f.locals->set(name, std::move(v));
}

void Evaluator::elements(ExprList elts, std::vector<Value> &out) {
  out.reserve(elts.size());
  for (const Expr *x : elts) {
    if (x->kind == ExprKind::Starred) {
      Value v = eval(*x->as<StarredExpr>().value);
      std::vector<Value> more = in_.to_list(v, x->begin());
      out.insert(out.end(), more.begin(), more.end());
      in_.check_length(out.size());
    } else {
      out.push_back(eval(*x));
    }
  }
}

Value Evaluator::eval_subscript_key(const Expr &slice) {
  // Keys of `t[a:b, c:d]` are made and dropped for every load and store of an unrolled loop:
  // their tuple and slice records come from spares that recycle_subscript_key() returns.
  if (slice.kind == ExprKind::Slice) {
    const auto &s = slice.as<SliceExpr>();
    Ref<SliceData> data;
    if (in_.spare_slices_.empty()) {
      data = make_ref<SliceData>();
    } else {
      data = std::move(in_.spare_slices_.back());
      in_.spare_slices_.pop_back();
    }
    if (s.lower)
      data->lower = eval(*s.lower);
    if (s.upper)
      data->upper = eval(*s.upper);
    if (s.step)
      data->step = eval(*s.step);
    return Value::from_heap(Value::Kind::Slice, std::move(data));
  }
  if (slice.kind == ExprKind::Tuple) {
    Ref<SeqData> data;
    if (in_.spare_tuples_.empty()) {
      data = make_ref<SeqData>();
    } else {
      data = std::move(in_.spare_tuples_.back());
      in_.spare_tuples_.pop_back();
    }
    data->items.reserve(slice.as<TupleExpr>().elts.size());
    for (const Expr *x : slice.as<TupleExpr>().elts)
      data->items.push_back(eval_subscript_key(*x));
    return Value::from_heap(Value::Kind::Tuple, std::move(data));
  }
  return eval(slice);
}

void Evaluator::recycle_subscript_key(Value &key) {
  // Only records nothing else holds: the object indexed may have kept the key.
  constexpr std::size_t kMaxSpares = 64;
  if (key.use_count() != 1)
    return;
  auto recycle_slice = [this](Value &v) {
    if (v.kind != Value::Kind::Slice || v.use_count() != 1 || in_.spare_slices_.size() >= kMaxSpares)
      return;
    Ref<SliceData> data(&v.slice_data());
    v = Value();
    data->lower = Value();
    data->upper = Value();
    data->step = Value();
    in_.spare_slices_.push_back(std::move(data));
  };
  if (key.kind == Value::Kind::Slice) {
    recycle_slice(key);
    return;
  }
  if (key.kind != Value::Kind::Tuple || in_.spare_tuples_.size() >= kMaxSpares)
    return;
  Ref<SeqData> data(&key.seq());
  key = Value();
  for (Value &item : data->items)
    recycle_slice(item);
  data->items.clear();
  in_.spare_tuples_.push_back(std::move(data));
}

std::string Evaluator::fstring(const JoinedStrExpr &j) {
  std::string out;
  for (const Expr *part : j.values) {
    if (part->kind == ExprKind::Constant) {
      out += part->as<ConstantExpr>().text;
      continue;
    }
    if (part->kind != ExprKind::FormattedValue) {
      out += str(eval(*part));
      continue;
    }
    const auto &fv = part->as<FormattedValueExpr>();
    try {
      Value v = eval(*fv.value);
      if (fv.conversion == 'r' || fv.conversion == 'a') {
        std::string r = repr(v);
        if (fv.conversion == 'a') {
          std::string ascii;
          for (std::size_t k = 0; k < r.size();) {
            unsigned char c = static_cast<unsigned char>(r[k]);
            if (c < 0x80) {
              ascii += static_cast<char>(c);
              ++k;
              continue;
            }
            std::size_t len = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            char32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
            for (std::size_t m = 1; m < len && k + m < r.size(); ++m)
              cp = (cp << 6) | (static_cast<unsigned char>(r[k + m]) & 0x3F);
            k += len;
            char buf[16];
            std::snprintf(buf, sizeof buf,
                          cp < 0x100     ? "\\x%02x"
                          : cp < 0x10000 ? "\\u%04x"
                                         : "\\U%08x",
                          static_cast<unsigned>(cp));
            ascii += buf;
          }
          r = std::move(ascii);
        }
        v = Value::str(std::move(r));
      } else if (fv.conversion == 's') {
        v = Value::str(str(v));
      }
      std::string spec;
      if (fv.format_spec)
        spec = fv.format_spec->kind == ExprKind::JoinedStr ? fstring(fv.format_spec->as<JoinedStrExpr>())
                                                           : str(eval(*fv.format_spec));
      out += in_.format(v, spec);
      in_.check_length(out.size());
    } catch (TraceError &err) {
      if (!err.loc.valid())
        err.loc = fv.value->begin();
      throw;
    }
  }
  return out;
}

Value Evaluator::eval_inner(const Expr &e) {
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
        raise_python("OverflowError", "integer overflow: the literal " + std::string(c.text) +
                                          " does not fit in 64 bits (nkicc has no big integers)");
      return Value::integer(c.int_value);
    case ConstantKind::Float:
      return Value::floating(c.float_value);
    case ConstantKind::Str:
      return Value::str(std::string(c.text));
    case ConstantKind::Imaginary:
      unsupported("complex number", e.begin());
    case ConstantKind::Bytes:
      unsupported("bytes literal", e.begin());
    }
    break;
  }
  case ExprKind::Name:
    return lookup(e.as<NameExpr>());
  case ExprKind::BinOp: {
    const auto &b = e.as<BinOpExpr>();
    Value l = eval(*b.left);
    Value r = eval(*b.right);
    return in_.binary_op(b.op, l, r, e.begin());
  }
  case ExprKind::UnaryOp: {
    const auto &u = e.as<UnaryOpExpr>();
    Value v = eval(*u.operand);
    if (u.op == UnaryOpKind::Not)
      return Value::boolean(!in_.truthy(v));
    return in_.unary_op(u.op, v, e.begin());
  }
  case ExprKind::BoolOp: {
    const auto &b = e.as<BoolOpExpr>();
    Value v;
    for (std::size_t k = 0; k < b.values.size(); ++k) {
      v = eval(*b.values[k]);
      if (k + 1 == b.values.size())
        break;
      bool t = in_.truthy(v);
      if (b.op == BoolOpKind::And ? !t : t)
        break;
    }
    return v;
  }
  case ExprKind::Compare: {
    const auto &c = e.as<CompareExpr>();
    Value left = eval(*c.left);
    Value result;
    for (std::size_t k = 0; k < c.ops.size(); ++k) {
      Value right = eval(*c.comparators[k]);
      result = in_.compare(c.ops[k], left, right, e.begin());
      if (k + 1 < c.ops.size()) {
        if (!in_.truthy(result))
          return result;
        left = std::move(right);
      }
    }
    return result;
  }
  case ExprKind::IfExp: {
    const auto &i = e.as<IfExpExpr>();
    return in_.truthy(eval(*i.test)) ? eval(*i.body) : eval(*i.orelse);
  }
  case ExprKind::Call:
    return eval_call(e.as<CallExpr>());
  case ExprKind::Attribute: {
    const auto &a = e.as<AttributeExpr>();
    Value v = eval(*a.value);
    return get_attr(v, a, e.begin());
  }
  case ExprKind::Subscript: {
    const auto &s = e.as<SubscriptExpr>();
    Value c = eval(*s.value);
    Value key = eval_subscript_key(*s.slice);
    Value item = in_.get_item(c, key, e.begin());
    recycle_subscript_key(key);
    return item;
  }
  case ExprKind::Slice:
    return eval_subscript_key(e);
  case ExprKind::Tuple: {
    std::vector<Value> items;
    elements(e.as<TupleExpr>().elts, items);
    return Value::tuple(std::move(items));
  }
  case ExprKind::List: {
    std::vector<Value> items;
    elements(e.as<ListExpr>().elts, items);
    return Value::list(std::move(items));
  }
  case ExprKind::Set: {
    std::vector<Value> items;
    elements(e.as<SetExpr>().elts, items);
    // lib: the set type (pylib.h); CPython builds a display of three or more constants from a
    // frozenset constant, which changes its iteration order.
    auto constant = [](const Expr *x, auto &self) -> bool {
      if (x->kind == ExprKind::Constant)
        return true;
      if (x->kind == ExprKind::UnaryOp)
        return self(x->as<UnaryOpExpr>().operand, self);
      if (x->kind == ExprKind::Tuple) {
        for (const Expr *y : x->as<TupleExpr>().elts)
          if (!self(y, self))
            return false;
        return true;
      }
      return false;
    };
    bool all_constant = true;
    for (const Expr *x : e.as<SetExpr>().elts)
      all_constant = all_constant && constant(x, constant);
    return make_set(in_, std::move(items), all_constant);
  }
  case ExprKind::Dict: {
    const auto &d = e.as<DictExpr>();
    Value out = Value::dict();
    for (std::size_t k = 0; k < d.keys.size(); ++k) {
      if (!d.keys[k]) {
        Value m = eval(*d.values[k]);
        if (m.kind != K::Dict)
          raise_python("TypeError", "'" + std::string(type_name(m)) + "' object is not a mapping",
                       d.values[k]->begin());
        dict_update_from(in_, out, m); // lib: DictData is hashed (pylib.h)
        continue;
      }
      Value key = eval(*d.keys[k]);
      Value value = eval(*d.values[k]);
      in_.set_item(out, key, value, d.keys[k]->begin());
    }
    return out;
  }
  case ExprKind::ListComp:
  case ExprKind::SetComp:
  case ExprKind::GeneratorExp:
  case ExprKind::DictComp:
    return comprehension(e);
  case ExprKind::Lambda: {
    const auto &l = e.as<LambdaExpr>();
    return make_function(l.args, nullptr, l.body, "<lambda>", &l);
  }
  case ExprKind::JoinedStr:
    return Value::str(fstring(e.as<JoinedStrExpr>()));
  case ExprKind::FormattedValue: {
    // Only inside a JoinedStr; evaluate as a one-part f-string.
    Expr *part = const_cast<Expr *>(&e);
    JoinedStrExpr j{};
    j.values = ExprList(&part, 1);
    return Value::str(fstring(j));
  }
  case ExprKind::Starred:
    unsupported("starred expression", e.begin());
  case ExprKind::NamedExpr:
    unsupported("assignment expression", e.begin());
  case ExprKind::Await:
    unsupported("await expression", e.begin());
  case ExprKind::Yield:
    unsupported("yield expression", e.begin());
  case ExprKind::YieldFrom:
    unsupported("yield from expression", e.begin());
  }
  unsupported(expr_kind_name(e.kind), e.begin());
}

void Evaluator::comp_loop(NodeList<Comprehension> gens, std::size_t k, const std::function<void()> &emit) {
  if (k == gens.size())
    return emit();
  const Comprehension &g = *gens[k];
  // The first iterable is evaluated in the enclosing scope, as in Python.
  Value iterable;
  if (k == 0) {
    InterpFrame *inner = in_.frame_;
    in_.frame_ = inner->comp_outer;
    try {
      iterable = eval(*g.iter);
    } catch (...) {
      in_.frame_ = inner;
      throw;
    }
    in_.frame_ = inner;
  } else {
    iterable = eval(*g.iter);
  }
  std::unique_ptr<Iterator> it = in_.iterate(iterable, g.iter->begin());
  Value item;
  while (it->next(item)) {
    step(g.begin());
    assign(*g.target, item);
    bool keep = true;
    for (const Expr *cond : g.ifs)
      if (!in_.truthy(eval(*cond))) {
        keep = false;
        break;
      }
    if (keep)
      comp_loop(gens, k + 1, emit);
  }
}

Value Evaluator::comprehension(const Expr &e) {
  InterpFrame *owner = in_.frame_;
  while (owner->comp_outer)
    owner = owner->comp_outer;
  // Parented to the enclosing function's scope so that a lambda made here sees both.
  auto scope = std::make_shared<Scope>(owner->info ? owner->scope : nullptr);
  InterpFrame comp;
  comp.scope = scope;
  comp.module_owner = frame().module_owner;
  comp.locals = scope.get();
  comp.globals = frame().globals;
  comp.module = frame().module;
  comp.info = nullptr;
  comp.comp_outer = in_.frame_;
  comp.qualname = frame().qualname;
  InterpFrame *saved = in_.frame_;
  in_.frame_ = &comp;
  struct Restore {
    Interpreter &in;
    InterpFrame *saved;
    ~Restore() { in.frame_ = saved; }
  } restore{in_, saved};
  if (e.kind == ExprKind::DictComp) {
    const auto &d = e.as<DictCompExpr>();
    Value out = Value::dict();
    comp_loop(d.generators, 0, [&] {
      Value key = eval(*d.key);
      Value value = eval(*d.value);
      in_.set_item(out, key, value, d.key->begin());
    });
    return out;
  }
  const auto &c = static_cast<const ComprehensionExpr &>(e);
  std::vector<Value> items;
  comp_loop(c.generators, 0, [&] {
    items.push_back(eval(*c.elt));
    in_.check_length(items.size());
  });
  if (e.kind == ExprKind::SetComp)
    return make_set(in_, std::move(items)); // lib: the set type (pylib.h)
  // A generator expression is consumed at once (sum(x for x in ...)): a list serves.
  return Value::list(std::move(items));
}

Value Evaluator::make_function(const Arguments *params, const FunctionDefStmt *def, const Expr *lambda_body,
                               std::string_view name, const void *key) {
  auto fn = std::make_shared<FunctionObject>();
  fn->name = name;
  fn->params = params;
  fn->def = def;
  fn->lambda_body = lambda_body;
  auto &cached = in_.function_infos_[key];
  if (!cached)
    cached = analyze(params, def, lambda_body, key);
  fn->info = cached;
  InterpFrame &f = frame();
  InterpFrame *owner = &f;
  while (owner->comp_outer)
    owner = owner->comp_outer;
  fn->qualname = owner->info ? std::string(owner->qualname) + ".<locals>." + std::string(name) : std::string(name);
  if (params) {
    for (const Expr *d : params->defaults)
      fn->defaults.push_back(eval(*d));
    for (const Expr *d : params->kw_defaults)
      fn->kw_defaults.push_back(d ? std::optional<Value>(eval(*d)) : std::nullopt);
  }
  // The closure is the defining call's scope, shared, so that later assignments are seen.
  if (owner->info)
    fn->closure = f.scope;
  fn->module = f.module_owner;
  return Value::object(std::move(fn));
}

} // namespace nkicc::trace

namespace nkicc::trace {

using namespace python;

void Evaluator::build_args(const CallExpr &c, CallArgs &args) {
  args.loc = c.begin();
  if (!c.args.empty())
    elements(c.args, args.positional);
  for (const Keyword *kw : c.keywords) {
    if (!kw->arg.empty()) {
      args.keywords.emplace_back(std::string(kw->arg), eval(*kw->value));
      continue;
    }
    Value m = eval(*kw->value);
    if (m.kind != Value::Kind::Dict)
      raise_python("TypeError", "argument after ** must be a mapping, not " + std::string(type_name(m)),
                   kw->value->begin());
    for (const auto &[key, value] : std::vector<DictData::Item>(m.dict_data().items().begin(),
                                                                m.dict_data().items().end())) {
      if (key.kind != Value::Kind::Str)
        raise_python("TypeError", "keywords must be strings", kw->value->begin());
      if (args.keyword(key.str_text()))
        raise_python("TypeError", "got multiple values for keyword argument '" + key.str_text() + "'", c.begin());
      args.keywords.emplace_back(key.str_text(), value);
    }
  }
}

namespace {
/// A call's arguments, whose vectors come from the interpreter's spares and go back to them
/// (emptied) when the call is done, so that a call does not allocate them.
class PooledArgs {
public:
  PooledArgs(const CallExpr &c, std::vector<std::vector<Value>> &positional,
             std::vector<std::vector<std::pair<std::string, Value>>> &keywords)
      : positional_(positional), keywords_(keywords) {
    if (!c.args.empty() && !positional.empty()) {
      args.positional = std::move(positional.back());
      positional.pop_back();
    }
    if (!c.keywords.empty() && !keywords.empty()) {
      args.keywords = std::move(keywords.back());
      keywords.pop_back();
    }
  }
  ~PooledArgs() {
    args.positional.clear();
    args.keywords.clear();
    if (args.positional.capacity() && positional_.size() < positional_.capacity())
      positional_.push_back(std::move(args.positional));
    if (args.keywords.capacity() && keywords_.size() < keywords_.capacity())
      keywords_.push_back(std::move(args.keywords));
  }
  PooledArgs(const PooledArgs &) = delete;
  PooledArgs &operator=(const PooledArgs &) = delete;

  CallArgs args;

private:
  std::vector<std::vector<Value>> &positional_;
  std::vector<std::vector<std::pair<std::string, Value>>> &keywords_;
};
} // namespace

Value Evaluator::eval_call(const CallExpr &c) {
  // `lst.append(x)` on a built-in value calls the method without making a bound object.
  if (c.func->kind == ExprKind::Attribute) {
    const auto &a = c.func->as<AttributeExpr>();
    Value self = eval(*a.value);
    if (self.kind != Value::Kind::Object && self.kind != Value::Kind::None) {
      PooledArgs pooled(c, in_.spare_positional_, in_.spare_keywords_);
      CallArgs &args = pooled.args;
      build_args(c, args);
      step(c.begin());
      SourceLoc saved = in_.current_loc_;
      in_.current_loc_ = c.begin();
      std::optional<Value> out = in_.call_method(self, a.attr, args);
      in_.current_loc_ = saved;
      if (out)
        return std::move(*out);
      in_.get_attr(self, a.attr, c.func->begin()); // raises AttributeError
    }
    Value fn = get_attr(self, a, c.func->begin());
    PooledArgs pooled(c, in_.spare_positional_, in_.spare_keywords_);
    build_args(c, pooled.args);
    return call(fn, pooled.args, c.begin());
  }
  Value fn = eval(*c.func);
  PooledArgs pooled(c, in_.spare_positional_, in_.spare_keywords_);
  build_args(c, pooled.args);
  return call(fn, pooled.args, c.begin());
}

Value Evaluator::call(const Value &callee, CallArgs &args, SourceLoc loc) {
  step(loc);
  SourceLoc saved = in_.current_loc_;
  if (loc.valid())
    in_.current_loc_ = loc;
  struct Restore {
    Interpreter &in;
    SourceLoc saved;
    ~Restore() { in.current_loc_ = saved; }
  } restore{in_, saved};
  Object *obj = callee.object();
  if (!obj)
    raise_python("TypeError", "'" + std::string(type_name(callee)) + "' object is not callable");
  if (auto *fn = exactly<FunctionObject>(callee))
    return call_function(*fn, args);
  return obj->call(in_, args);
}

Value Evaluator::call_function(FunctionObject &fn, CallArgs &args) {
  const FunctionInfo &info = *fn.info;
  if (in_.function_frames_ >= in_.limits_.max_call_depth)
    raise_python("RecursionError", "maximum recursion depth exceeded");
  // The call's scope: a spare one when there is one. When the call is done and nothing else
  // holds the scope (no closure made here), it is reset and kept for the next call.
  struct Lease {
    Interpreter &in;
    std::shared_ptr<Scope> scope;
    bool reusable;
    ~Lease() {
      if (!scope)
        return;
      if (!reusable) {
        release_closures();
        return;
      }
      if (scope.use_count() == 1 && in.spare_scopes_.size() < in.spare_scopes_.capacity()) {
        scope->reset(nullptr);
        in.spare_scopes_.push_back(std::move(scope));
      }
    }
    // A function that defines functions makes a cycle: its scope holds the functions, which
    // hold the scope. When only those functions hold the scope, and only the scope holds them
    // (none was returned or stored elsewhere), nothing can reach them again: clearing the scope
    // frees them now instead of at the end of the run, so that a helper with a nested def
    // called in a loop runs in bounded memory.
    void release_closures() {
      long closures = 0;
      for (const Scope::Entry &e : scope->entries()) {
        if (!e.bound)
          continue;
        auto *f = e.value.as<FunctionObject>();
        if (!f || f->closure.get() != scope.get())
          continue;
        if (e.value.use_count() != 1)
          return;
        ++closures;
      }
      if (scope.use_count() != 1 + closures)
        return;
      scope->clear();
      if (!in.cycle_scopes_.empty() && in.cycle_scopes_.back().lock() == scope)
        in.cycle_scopes_.pop_back();
    }
  } lease{in_, nullptr, !info.defines_functions};
  if (!in_.spare_scopes_.empty()) {
    lease.scope = std::move(in_.spare_scopes_.back());
    in_.spare_scopes_.pop_back();
    lease.scope->reset(fn.closure);
  } else {
    lease.scope = std::make_shared<Scope>(fn.closure);
  }
  const std::shared_ptr<Scope> &scope = lease.scope;
  Scope &locals = *scope;
  locals.add_slots(info.locals);
  auto bind = [&locals](const FunctionInfo::Param &p, Value value) {
    if (p.slot >= 0)
      locals.bind_slot(static_cast<std::size_t>(p.slot), std::move(value));
    else
      locals.set(p.symbol, std::move(value));
  };
  const std::string &qn = fn.qualname;
  // Python's argument binding (CPython's initialize_locals), with its messages.
  std::size_t npos = info.positional.size();
  std::size_t given = args.positional.size();
  Flags bound(npos);
  for (std::size_t k = 0; k < std::min(given, npos); ++k) {
    bind(info.positional[k], args.positional[k]);
    bound[k] = true;
  }
  if (info.has_vararg) {
    std::vector<Value> rest;
    if (given > npos)
      rest.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(npos), args.positional.end());
    bind(info.vararg, Value::tuple(std::move(rest)));
  }
  Value kwargs = info.has_kwarg ? Value::dict() : Value();
  Flags kw_bound(info.kwonly.size());
  std::vector<std::string_view> posonly_as_kw;
  for (const auto &[name, value] : args.keywords) {
    bool matched = false;
    for (std::size_t k = info.posonly; k < npos; ++k)
      if (info.positional[k].name == name) {
        if (bound[k])
          raise_python("TypeError", qn + "() got multiple values for argument '" + name + "'");
        bind(info.positional[k], value);
        bound[k] = true;
        matched = true;
        break;
      }
    if (!matched)
      for (std::size_t k = 0; k < info.kwonly.size(); ++k)
        if (info.kwonly[k].name == name) {
          if (kw_bound[k])
            raise_python("TypeError", qn + "() got multiple values for argument '" + name + "'");
          bind(info.kwonly[k], value);
          kw_bound[k] = true;
          matched = true;
          break;
        }
    if (matched)
      continue;
    if (info.has_kwarg) {
      kwargs.dict_data().set(&in_, Value::str(name), value);
      continue;
    }
    for (std::size_t k = 0; k < info.posonly; ++k)
      if (info.positional[k].name == name)
        posonly_as_kw.push_back(info.positional[k].name);
    if (posonly_as_kw.empty())
      raise_python("TypeError", qn + "() got an unexpected keyword argument '" + name + "'");
  }
  if (!posonly_as_kw.empty()) {
    std::string names;
    for (std::size_t k = 0; k < posonly_as_kw.size(); ++k)
      names += (k ? ", '" : "'") + std::string(posonly_as_kw[k]) + "'";
    raise_python("TypeError", qn + "() got some positional-only arguments passed as keyword arguments: " + names);
  }
  if (info.has_kwarg)
    bind(info.kwarg, kwargs);
  if (given > npos && !info.has_vararg) {
    std::size_t ndefaults = fn.defaults.size();
    std::string takes =
        ndefaults ? "from " + std::to_string(npos - ndefaults) + " to " + std::to_string(npos) : std::to_string(npos);
    std::size_t kw_given = 0;
    for (std::size_t k = 0; k < info.kwonly.size(); ++k)
      kw_given += kw_bound[k] ? 1 : 0;
    std::string msg = qn + "() takes " + takes + " positional argument" + (npos == 1 && !ndefaults ? "" : "s") +
                      " but " + std::to_string(given);
    if (kw_given)
      msg += " positional argument" + std::string(given == 1 ? "" : "s") + " (and " + std::to_string(kw_given) +
             " keyword-only argument" + (kw_given == 1 ? "" : "s") + ") were given";
    else
      msg += given == 1 ? " was given" : " were given";
    raise_python("TypeError", msg);
  }
  std::size_t first_default = npos - fn.defaults.size();
  std::vector<std::string_view> missing;
  for (std::size_t k = 0; k < npos; ++k) {
    if (bound[k])
      continue;
    if (k >= first_default)
      bind(info.positional[k], fn.defaults[k - first_default]);
    else
      missing.push_back(info.positional[k].name);
  }
  if (!missing.empty())
    raise_python("TypeError", qn + "() missing " + std::to_string(missing.size()) + " required positional argument" +
                                  (missing.size() == 1 ? "" : "s") + ": " + join_names(missing));
  for (std::size_t k = 0; k < info.kwonly.size(); ++k) {
    if (kw_bound[k])
      continue;
    if (k < fn.kw_defaults.size() && fn.kw_defaults[k])
      bind(info.kwonly[k], *fn.kw_defaults[k]);
    else
      missing.push_back(info.kwonly[k].name);
  }
  if (!missing.empty())
    raise_python("TypeError", qn + "() missing " + std::to_string(missing.size()) + " required keyword-only argument" +
                                  (missing.size() == 1 ? "" : "s") + ": " + join_names(missing));

  if (info.defines_functions) {
    // Scopes a call could not release at its end stay listed; those freed since are dropped
    // whenever the list doubles, so the list stays proportional to the scopes alive.
    if (in_.cycle_scopes_.size() >= in_.cycle_scopes_compact_at_) {
      std::erase_if(in_.cycle_scopes_, [](const std::weak_ptr<Scope> &w) { return w.expired(); });
      in_.cycle_scopes_compact_at_ = std::max<std::size_t>(1024, 2 * in_.cycle_scopes_.size());
    }
    in_.cycle_scopes_.push_back(scope);
  }
  InterpFrame f;
  f.scope = scope;
  f.module_owner = fn.module;
  f.locals = scope.get();
  f.module = fn.module.get();
  f.globals = fn.module ? &fn.module->globals() : scope.get();
  f.info = &info;
  f.qualname = fn.qualname;
  struct Enter {
    Interpreter &in;
    InterpFrame *saved;
    Enter(Interpreter &i, InterpFrame *f, const FunctionObject &fn) : in(i), saved(i.frame_) {
      if (in.function_frames_ == 0)
        in.kernel_name_ = std::string(fn.name);
      in.frame_ = f;
      ++in.function_frames_;
      in.call_depth_ = in.function_frames_ - 1;
    }
    ~Enter() {
      in.frame_ = saved;
      --in.function_frames_;
      in.call_depth_ = in.function_frames_ ? in.function_frames_ - 1 : 0;
    }
  } enter(in_, &f, fn);
  if (fn.lambda_body)
    return eval(*fn.lambda_body);
  Evaluator body(in_);
  if (body.exec_block(fn.def->body) == Flow::Return)
    return std::move(body.ret_);
  return Value();
}

void Evaluator::assign(const Expr &target, Value v) {
  switch (target.kind) {
  case ExprKind::Name:
    // A tile created without a name takes the kernel author's variable name.
    if (Object *obj = v.object())
      obj->on_bind(target.as<NameExpr>().id);
    return store_name(target.as<NameExpr>(), std::move(v));
  case ExprKind::Tuple:
  case ExprKind::List: {
    ExprList elts = target.kind == ExprKind::Tuple ? target.as<TupleExpr>().elts : target.as<ListExpr>().elts;
    std::vector<Value> items;
    try {
      if (v.kind != Value::Kind::Object && v.kind != Value::Kind::Tuple && v.kind != Value::Kind::List &&
          v.kind != Value::Kind::Str && v.kind != Value::Kind::Dict)
        raise_python("TypeError", "cannot unpack non-iterable " + std::string(type_name(v)) + " object");
      if (auto *obj = v.object(); obj && !dynamic_cast<RangeObject *>(obj)) {
        std::unique_ptr<Iterator> it = obj->iterate(in_);
        if (!it)
          raise_python("TypeError", "cannot unpack non-iterable " + std::string(type_name(v)) + " object");
        Value x;
        while (it->next(x)) {
          items.push_back(std::move(x));
          // More items than targets can only be an error; stop reading an endless iterable.
          if (items.size() > elts.size() + 1 &&
              std::none_of(elts.begin(), elts.end(), [](const Expr *t) { return t->kind == ExprKind::Starred; }))
            break;
          in_.check_length(items.size());
        }
      } else {
        items = in_.to_list(v);
      }
      std::size_t star = elts.size();
      for (std::size_t k = 0; k < elts.size(); ++k)
        if (elts[k]->kind == ExprKind::Starred)
          star = k;
      if (star == elts.size()) {
        if (items.size() > elts.size())
          raise_python("ValueError", "too many values to unpack (expected " + std::to_string(elts.size()) + ")");
        if (items.size() < elts.size())
          raise_python("ValueError", "not enough values to unpack (expected " + std::to_string(elts.size()) + ", got " +
                                         std::to_string(items.size()) + ")");
      } else if (items.size() < elts.size() - 1) {
        raise_python("ValueError", "not enough values to unpack (expected at least " + std::to_string(elts.size() - 1) +
                                       ", got " + std::to_string(items.size()) + ")");
      }
    } catch (TraceError &err) {
      if (!err.loc.valid())
        err.loc = target.begin();
      throw;
    }
    std::size_t star = elts.size();
    for (std::size_t k = 0; k < elts.size(); ++k)
      if (elts[k]->kind == ExprKind::Starred)
        star = k;
    if (star == elts.size()) {
      for (std::size_t k = 0; k < elts.size(); ++k)
        assign(*elts[k], std::move(items[k]));
      return;
    }
    std::size_t after = elts.size() - star - 1;
    for (std::size_t k = 0; k < star; ++k)
      assign(*elts[k], std::move(items[k]));
    std::vector<Value> rest(items.begin() + static_cast<std::ptrdiff_t>(star),
                            items.end() - static_cast<std::ptrdiff_t>(after));
    assign(*elts[star]->as<StarredExpr>().value, Value::list(std::move(rest)));
    for (std::size_t k = 0; k < after; ++k)
      assign(*elts[star + 1 + k], std::move(items[items.size() - after + k]));
    return;
  }
  case ExprKind::Attribute: {
    const auto &a = target.as<AttributeExpr>();
    Value obj = eval(*a.value);
    in_.set_attr(obj, a.attr, v, target.begin());
    return;
  }
  case ExprKind::Subscript: {
    const auto &s = target.as<SubscriptExpr>();
    Value c = eval(*s.value);
    Value key = eval_subscript_key(*s.slice);
    in_.set_item(c, key, v, target.begin());
    return;
  }
  case ExprKind::Starred:
    unsupported("starred assignment target", target.begin());
  default:
    unsupported("assignment to " + std::string(expr_kind_name(target.kind)), target.begin());
  }
}

Flow Evaluator::exec_block(StmtList body) {
  for (const Stmt *s : body) {
    Flow f = exec(*s);
    if (f != Flow::Normal)
      return f;
  }
  return Flow::Normal;
}

Flow Evaluator::exec_for(const ForStmt &s) {
  Value iterable = eval(*s.iter);
  // A loop over a plain list or tuple is unrolled like its enclosing loop: it keeps that kind.
  LoopKind kind = in_.current_loop_kind();
  if (Object *obj = iterable.object())
    if (LoopKind k = obj->loop_kind(); k != LoopKind::None)
      kind = k;
  in_.loop_stack_.push_back(kind);
  struct Pop {
    std::vector<LoopKind> &stack;
    ~Pop() { stack.pop_back(); }
  } pop{in_.loop_stack_};
  auto body = [&](Value item) -> int {
    assign(*s.target, std::move(item));
    Flow f = exec_block(s.body);
    if (f == Flow::Break)
      return 1;
    if (f == Flow::Return)
      return 2;
    return 0;
  };
  int stop = 0;
  if (auto *range = exactly<RangeObject>(iterable)) {
    // lib: count() is exact where the length exceeds int64; items are computed modulo 2^64.
    std::uint64_t n = range->count(), start = static_cast<std::uint64_t>(range->start),
                  stride = static_cast<std::uint64_t>(range->step);
    for (std::uint64_t k = 0; k < n && !stop; ++k)
      stop = body(Value::integer(static_cast<std::int64_t>(start + k * stride)));
  } else {
    std::unique_ptr<Iterator> it = in_.iterate(iterable, s.iter->begin());
    Value item;
    while (!stop && it->next(item))
      stop = body(std::move(item));
  }
  if (stop == 2)
    return Flow::Return;
  if (stop == 1)
    return Flow::Normal;
  in_.loop_stack_.pop_back();
  struct Push {
    std::vector<LoopKind> &stack;
    LoopKind kind;
    ~Push() { stack.push_back(kind); }
  } push_back_for_pop{in_.loop_stack_, kind};
  return exec_block(s.orelse);
}

Flow Evaluator::exec(const Stmt &s) {
  step(s.begin());
  try {
    switch (s.kind) {
    case StmtKind::Expr:
      eval(*s.as<ExprStmt>().value);
      return Flow::Normal;
    case StmtKind::Assign: {
      const auto &a = s.as<AssignStmt>();
      Value v = eval(*a.value);
      if (a.targets.size() == 1) {
        assign(*a.targets[0], std::move(v));
        return Flow::Normal;
      }
      for (const Expr *t : a.targets)
        assign(*t, v);
      return Flow::Normal;
    }
    case StmtKind::AugAssign: {
      const auto &a = s.as<AugAssignStmt>();
      const Expr &t = *a.target;
      if (t.kind == ExprKind::Name) {
        Value cur = lookup(t.as<NameExpr>());
        Value rhs = eval(*a.value);
        // list += iterable extends in place, as list.__iadd__.
        if (cur.kind == Value::Kind::List && a.op == BinOpKind::Add) {
          std::vector<Value> more = in_.to_list(rhs, a.value->begin());
          in_.check_length(cur.seq().items.size() + more.size());
          cur.seq().items.insert(cur.seq().items.end(), more.begin(), more.end());
          store_name(t.as<NameExpr>(), std::move(cur));
          return Flow::Normal;
        }
        if (Object *obj = cur.object()) {
          SourceLoc saved = in_.current_loc_;
          in_.current_loc_ = s.begin();
          std::optional<Value> updated;
          try {
            updated = obj->inplace_op(in_, a.op, rhs);
          } catch (TraceError &err) {
            in_.current_loc_ = saved;
            if (!err.loc.valid())
              err.loc = s.begin();
            throw;
          }
          in_.current_loc_ = saved;
          if (updated) {
            store_name(t.as<NameExpr>(), std::move(*updated));
            return Flow::Normal;
          }
        }
        store_name(t.as<NameExpr>(), in_.binary_op(a.op, cur, rhs, s.begin()));
        return Flow::Normal;
      }
      if (t.kind == ExprKind::Subscript) {
        const auto &sub = t.as<SubscriptExpr>();
        Value c = eval(*sub.value);
        Value key = eval_subscript_key(*sub.slice);
        Value rhs = eval(*a.value);
        if (Object *obj = c.object()) {
          SourceLoc saved = in_.current_loc_;
          in_.current_loc_ = s.begin();
          try {
            obj->aug_set_item(in_, key, a.op, rhs);
          } catch (TraceError &err) {
            in_.current_loc_ = saved;
            if (!err.loc.valid())
              err.loc = t.begin();
            throw;
          }
          in_.current_loc_ = saved;
          return Flow::Normal;
        }
        Value cur = in_.get_item(c, key, t.begin());
        in_.set_item(c, key, in_.binary_op(a.op, cur, rhs, s.begin()), t.begin());
        return Flow::Normal;
      }
      if (t.kind == ExprKind::Attribute) {
        const auto &at = t.as<AttributeExpr>();
        Value obj = eval(*at.value);
        Value cur = in_.get_attr(obj, at.attr, t.begin());
        Value rhs = eval(*a.value);
        in_.set_attr(obj, at.attr, in_.binary_op(a.op, cur, rhs, s.begin()), t.begin());
        return Flow::Normal;
      }
      unsupported("augmented assignment to " + std::string(expr_kind_name(t.kind)), t.begin());
    }
    case StmtKind::AnnAssign: {
      const auto &a = s.as<AnnAssignStmt>();
      if (a.value)
        assign(*a.target, eval(*a.value));
      return Flow::Normal;
    }
    case StmtKind::If: {
      const IfStmt *i = &s.as<IfStmt>();
      // elif chains are nested Ifs: walk them without recursion.
      for (;;) {
        if (in_.truthy(eval(*i->test)))
          return exec_block(i->body);
        if (i->orelse.size() == 1 && i->orelse[0]->kind == StmtKind::If) {
          i = &i->orelse[0]->as<IfStmt>();
          step(i->begin());
          continue;
        }
        return exec_block(i->orelse);
      }
    }
    case StmtKind::For:
      return exec_for(s.as<ForStmt>());
    case StmtKind::While: {
      const auto &w = s.as<WhileStmt>();
      in_.loop_stack_.push_back(in_.current_loop_kind());
      struct Pop {
        std::vector<LoopKind> &stack;
        ~Pop() { stack.pop_back(); }
      } pop{in_.loop_stack_};
      for (;;) {
        if (!in_.truthy(eval(*w.test)))
          break;
        Flow f = exec_block(w.body);
        if (f == Flow::Break)
          return Flow::Normal;
        if (f == Flow::Return)
          return f;
        step(s.begin());
      }
      return exec_block(w.orelse);
    }
    case StmtKind::Pass:
      return Flow::Normal;
    case StmtKind::Break:
      return Flow::Break;
    case StmtKind::Continue:
      return Flow::Continue;
    case StmtKind::Return: {
      const auto &r = s.as<ReturnStmt>();
      if (!in_.frame_->info)
        raise_python("SyntaxError", "'return' outside function");
      ret_ = r.value ? eval(*r.value) : Value();
      return Flow::Return;
    }
    case StmtKind::Assert: {
      const auto &a = s.as<AssertStmt>();
      if (!in_.truthy(eval(*a.test)))
        raise_python("AssertionError", a.msg ? str(eval(*a.msg)) : std::string(), s.begin());
      return Flow::Normal;
    }
    case StmtKind::Raise: {
      const auto &r = s.as<RaiseStmt>();
      if (!r.exc)
        raise_python("RuntimeError", "No active exception to reraise", s.begin());
      Value exc = eval(*r.exc);
      if (auto *type = exc.as<ExceptionTypeObject>())
        raise_error(type->name, "", s.begin());
      if (auto *e = exc.as<ExceptionObject>())
        raise_error(e->type, e->message(), s.begin());
      raise_python("TypeError", "exceptions must derive from BaseException", s.begin());
    }
    case StmtKind::FunctionDef: {
      const auto &d = s.as<FunctionDefStmt>();
      Value fn = make_function(d.args, &d, nullptr, d.name, &d);
      for (std::size_t k = d.decorators.size(); k-- > 0;) {
        Value deco = eval(*d.decorators[k]);
        CallArgs args;
        args.positional.push_back(std::move(fn));
        args.loc = d.decorators[k]->begin();
        fn = call(deco, args, d.decorators[k]->begin());
      }
      store(d.name, std::move(fn));
      return Flow::Normal;
    }
    case StmtKind::Import:
      exec_import(s.as<ImportStmt>());
      return Flow::Normal;
    case StmtKind::ImportFrom:
      exec_import_from(s.as<ImportFromStmt>());
      return Flow::Normal;
    case StmtKind::Global:
    case StmtKind::Nonlocal:
      return Flow::Normal;
    case StmtKind::Delete: {
      for (const Expr *t : s.as<DeleteStmt>().targets) {
        if (t->kind != ExprKind::Name)
          unsupported(t->kind == ExprKind::Subscript   ? "del of a subscript"
                      : t->kind == ExprKind::Attribute ? "del of an attribute"
                                                       : "del of a tuple",
                      t->begin());
        std::string_view name = t->as<NameExpr>().id;
        Symbol symbol = t->as<NameExpr>().symbol;
        InterpFrame &f = frame();
        Scope *scope = f.info && FunctionInfo::has(f.info->globals, symbol) ? f.globals : f.locals;
        if (!scope->erase(symbol)) {
          if (f.info && FunctionInfo::has(f.info->locals, symbol))
            raise_python("UnboundLocalError",
                         "cannot access local variable '" + std::string(name) +
                             "' where it is not associated with a value",
                         t->begin());
          raise_python("NameError", "name '" + std::string(name) + "' is not defined", t->begin());
        }
      }
      return Flow::Normal;
    }
    case StmtKind::ClassDef:
      unsupported("class definition", s.begin());
    case StmtKind::With:
      unsupported("with statement", s.begin());
    case StmtKind::Try:
      unsupported("try statement", s.begin());
    }
    unsupported(stmt_kind_name(s.kind), s.begin());
  } catch (TraceError &err) {
    if (!err.loc.valid())
      err.loc = s.begin();
    throw;
  }
}

void Evaluator::exec_import(const ImportStmt &s) {
  // lib: module resolution (kernel files, packages, the standard library) is
  // Interpreter::import_module's (lib/trace/module_loader.cpp); an unknown module binds
  // unresolved_module(), which says where nkicc looked.
  for (const Alias *a : s.names) {
    std::string dotted(a->name);
    if (!a->asname.empty()) {
      std::shared_ptr<Object> m = in_.import_module(dotted, 0, a->begin());
      store(a->asname, m ? Value::object(m) : in_.unresolved_module(dotted));
      continue;
    }
    // `import a.b.c` binds `a`, and makes `a.b` and `a.b.c` reachable as attributes. When the
    // resolver knows `a.b.c` but not `a.b`, the intermediate is an empty module (a namespace
    // package); when it does not know `a.b.c`, the unknown part is a placeholder.
    bool known = in_.import_module(dotted, 0, a->begin()) != nullptr;
    auto module_for = [&](const std::string &prefix) -> std::shared_ptr<Object> {
      if (std::shared_ptr<Object> m = in_.import_module(prefix, 0, a->begin()))
        return m;
      if (!known)
        return nullptr;
      auto ns = std::make_shared<ModuleObject>(prefix);
      in_.modules_.emplace(prefix, ns);
      return ns;
    };
    auto placeholder = [&](const std::string &name) {
      return in_.unresolved_module(name).object()->shared_self();
    };
    std::string root = dotted.substr(0, dotted.find('.'));
    std::shared_ptr<Object> top = module_for(root);
    if (!top)
      top = placeholder(root);
    std::shared_ptr<Object> parent = top;
    for (std::size_t at = root.size(); at < dotted.size();) {
      std::size_t next = dotted.find('.', at + 1);
      if (next == std::string::npos)
        next = dotted.size();
      std::string part = dotted.substr(at + 1, next - at - 1);
      std::string prefix = dotted.substr(0, next);
      at = next;
      auto *pm = dynamic_cast<ModuleObject *>(parent.get());
      std::shared_ptr<Object> child = module_for(prefix);
      if (child) {
        if (pm && !pm->globals().find_local(part))
          pm->globals().set(part, Value::object(child));
      } else {
        std::optional<Value> existing = pm ? pm->get_attr(in_, part) : std::nullopt;
        child = existing && existing->object() ? existing->object()->shared_self() : placeholder(prefix);
      }
      parent = child;
    }
    store(root, Value::object(top));
  }
}

void Evaluator::exec_import_from(const ImportFromStmt &s) {
  // lib: `from ..a import b` resolves by the current module's __package__ (import_module).
  std::shared_ptr<Object> m = in_.import_module(s.module, s.level, s.begin());
  auto *module = dynamic_cast<ModuleObject *>(m.get());
  std::string dotted = module ? module->name() : std::string(s.level, '.') + std::string(s.module);
  for (const Alias *a : s.names) {
    std::string_view bound = a->asname.empty() ? a->name : a->asname;
    if (a->name == "*") {
      if (module) {
        // `__all__` when the module defines it, else every public name.
        Value *all = module->globals().find_local("__all__");
        if (all && (all->kind == Value::Kind::List || all->kind == Value::Kind::Tuple)) {
          for (const Value &name : std::vector(all->seq().items)) {
            if (name.kind != Value::Kind::Str)
              raise_python("TypeError", "Item in " + dotted + ".__all__ must be str, not " +
                                            std::string(type_name(name)),
                           a->begin());
            std::optional<Value> v = m->get_attr(in_, name.str_text());
            if (!v)
              raise_python("AttributeError",
                           "module '" + dotted + "' has no attribute '" + name.str_text() + "'", a->begin());
            store(name.str_text(), std::move(*v));
          }
        } else {
          for (const Scope::Entry &entry : std::vector(module->globals().entries()))
            if (entry.bound && !entry.name().starts_with("_"))
              store(entry.symbol, entry.value);
        }
      }
      continue;
    }
    std::string full = dotted + (dotted.empty() || dotted.back() == '.' ? "" : ".") + std::string(a->name);
    if (!m) {
      store(bound, in_.unresolved_module(full));
      continue;
    }
    std::optional<Value> v = m->get_attr(in_, a->name);
    if (!v && module)
      if (std::shared_ptr<Object> sub = in_.import_module(full, 0, a->begin()))
        v = Value::object(sub);
    if (!v)
      in_.raise_cannot_import(*m, dotted, a->name, a->begin());
    store(bound, std::move(*v));
  }
}

void Evaluator::run_module_body(const Module &module, ModuleObject &) { exec_block(module.body); }

// ---- Interpreter --------------------------------------------------------------------------------

namespace detail {
void install_builtins(Interpreter &interp, Scope &scope);
std::shared_ptr<ModuleObject> make_math_module(Interpreter &interp);
} // namespace detail

Interpreter::Interpreter(const SourceManager &sources, InterpreterLimits limits, ModuleResolver resolver)
    : sources_(sources), limits_(limits), resolver_(std::move(resolver)), builtins_(std::make_shared<Scope>()) {
  detail::install_builtins(*this, *builtins_);
  math_ = detail::make_math_module(*this);
  spare_positional_.reserve(64);
  spare_keywords_.reserve(64);
  spare_scopes_.reserve(64);
}

Interpreter::~Interpreter() {
  // Functions hold their module and closure scopes, which hold the functions: break the cycles.
  for (auto &weak : cycle_scopes_)
    if (auto scope = weak.lock())
      scope->clear();
  for (auto &[name, module] : modules_)
    if (auto *m = dynamic_cast<ModuleObject *>(module.get()))
      m->globals().clear();
}

std::shared_ptr<ModuleObject> Interpreter::run_module(const python::Module &module, std::string name) {
  auto m = std::make_shared<ModuleObject>(name);
  m->globals().set("__name__", Value::str(name));
  run_module(module, m);
  return m;
}

// lib: runs into a module registered beforehand (imports between kernel files).
void Interpreter::run_module(const python::Module &module, const std::shared_ptr<ModuleObject> &m) {
  cycle_scopes_.push_back(m->globals_ptr());
  InterpFrame f;
  f.scope = m->globals_ptr();
  f.module_owner = m;
  f.locals = &m->globals();
  f.globals = &m->globals();
  f.module = m.get();
  InterpFrame *saved = frame_;
  frame_ = &f;
  try {
    Evaluator(*this).run_module_body(module, *m);
  } catch (...) {
    frame_ = saved;
    throw;
  }
  frame_ = saved;
}

// lib: the module of the code executing, for relative imports.
ModuleObject *Interpreter::current_module() const { return frame_ ? frame_->module : nullptr; }

Value Interpreter::call(const Value &callee, CallArgs &args) {
  if (!frame_) {
    // A call from outside (the tracer calling a kernel): run it in a frame of its own.
    expr_depth_ = 0;
  }
  InterpFrame outside;
  bool top = !frame_;
  if (top) {
    outside.scope = std::make_shared<Scope>();
    outside.locals = outside.scope.get();
    outside.globals = outside.locals;
    frame_ = &outside;
  }
  struct Restore {
    Interpreter &in;
    bool top;
    ~Restore() {
      if (top)
        in.frame_ = nullptr;
    }
  } restore{*this, top};
  return Evaluator(*this).call(callee, args, args.loc);
}

Value FunctionObject::call(Interpreter &interp, CallArgs &args) {
  InterpFrame outside;
  bool top = !interp.frame_;
  if (top) {
    outside.scope = std::make_shared<Scope>();
    outside.locals = outside.scope.get();
    outside.globals = outside.locals;
    interp.frame_ = &outside;
  }
  struct Restore {
    Interpreter &in;
    bool top;
    ~Restore() {
      if (top)
        in.frame_ = nullptr;
    }
  } restore{interp, top};
  return Evaluator(interp).call_function(*this, args);
}

} // namespace nkicc::trace
