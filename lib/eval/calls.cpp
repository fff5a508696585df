// Calls: Python's argument binding with CPython's messages, the fast path that binds positional
// arguments straight into the callee's registers, method calls without bound-method objects,
// `f(*args, **kwargs)`, instantiation of plain classes, and function objects with their
// defaults and closure cells.
#include "eval/machine.h"

#include "pylib/methods.h"

#include <array>

namespace nkicc::eval {

using namespace python;
using trace::ModuleObject;
using trace::Object;
using trace::Scope;
using trace::TraceError;
using K = Value::Kind;

namespace {

std::string join_names(const std::vector<std::string_view> &names) {
  std::string out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k)
      out += names.size() == 2 ? " and " : (k + 1 == names.size() ? ", and " : ", ");
    out += "'" + std::string(names[k]) + "'";
  }
  return out;
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

} // namespace

// ---- calls --------------------------------------------------------------------------------------

Value Machine::call(const Value &callee, CallArgs &args, SourceLoc loc) {
  count_step(loc);
  LocScope at(in_, loc);
  Object *obj = callee.object();
  if (!obj)
    raise_python("TypeError", "'" + std::string(type_name(callee)) + "' object is not callable");
  if (auto *fn = exactly<FunctionObject>(callee))
    return call_function(*fn, args);
  return obj->call(in_, args);
}

Value Machine::call_function(FunctionObject &fn, CallArgs &args) {
  const Code &code = code_of(fn);
  if (in_.function_frames_ >= in_.limits_.max_call_depth)
    raise_python("RecursionError", "maximum recursion depth exceeded");
  FrameScope scope(*this, in_, code.nregs);
  scope.code = &code;
  bind_arguments(fn, code, args, scope.regs);
  scope.enter(fn);
  return run_function(fn, code, scope.regs);
}

bool Machine::plan_simple(const FunctionObject &fn, const Code &code, std::size_t n,
                          const std::vector<std::string> *keywords, BindPlan &b) {
  std::size_t npos = code.positional.size();
  std::size_t nkw = keywords ? keywords->size() : 0;
  std::size_t given = n - nkw;
  if (!code.simple_params || given > npos || npos > 0xffff)
    return false;
  b.npos = static_cast<std::uint16_t>(npos);
  b.nkw = static_cast<std::uint16_t>(nkw);
  b.given = static_cast<std::uint16_t>(given);
  b.first_default = static_cast<std::uint16_t>(npos - fn.defaults.size());
  // Keywords naming ordinary parameters not given positionally, each at most once; anything
  // else (an unknown or repeated name, a missing argument) takes the general binding, which
  // raises CPython's error.
  b.bound = 0;
  if (nkw) {
    if (nkw > b.slot.size() || npos > 64)
      return false;
    b.bound = given == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << given) - 1;
    for (std::size_t j = 0; j < nkw; ++j) {
      std::string_view name = (*keywords)[j];
      std::size_t k = code.posonly;
      while (k < npos && code.positional[k].name != name)
        ++k;
      if (k == npos || (b.bound >> k & 1))
        return false;
      b.bound |= std::uint64_t{1} << k;
      b.slot[j] = static_cast<std::uint16_t>(k);
    }
    for (std::size_t k = given; k < b.first_default; ++k)
      if (!(b.bound >> k & 1))
        return false;
  } else if (given < b.first_default) {
    return false;
  }
  return true;
}

namespace {
// Moves and copies into a register fresh from the stack, which holds no heap value: there is
// nothing to release first.
[[gnu::always_inline]] inline void move_to_fresh(Value &to, Value &from) {
  to.kind = from.kind;
  to.i = from.i;
  from.kind = Value::Kind::None;
  from.i = 0;
}
[[gnu::always_inline]] inline void copy_to_fresh(Value &to, const Value &from) {
  if (from.is_heap())
    to = from;
  else {
    to.kind = from.kind;
    to.i = from.i;
  }
}
} // namespace

void Machine::bind_simple(const FunctionObject &fn, const BindPlan &b, Value *args, Value *regs) {
  std::size_t given = b.given, nkw = b.nkw, npos = b.npos, first_default = b.first_default;
  for (std::size_t k = 0; k < given; ++k)
    move_to_fresh(regs[k], args[k]);
  for (std::size_t j = 0; j < nkw; ++j)
    move_to_fresh(regs[b.slot[j]], args[given + j]);
  for (std::size_t k = std::max(given, first_default); k < npos; ++k)
    if (nkw == 0 || !(b.bound >> k & 1)) // (with keywords, npos <= 64)
      copy_to_fresh(regs[k], fn.defaults[k - first_default]);
}

bool Machine::call_simple(FunctionObject &fn, Value *args, std::size_t n, const std::vector<std::string> *keywords,
                          SourceLoc loc, Value &out) {
  const Code &code = code_of(fn);
  BindPlan b;
  if (!plan_simple(fn, code, n, keywords, b))
    return false;
  count_step(loc);
  LocScope at(in_, loc);
  if (in_.function_frames_ >= in_.limits_.max_call_depth)
    raise_python("RecursionError", "maximum recursion depth exceeded");
  FrameScope scope(*this, in_, code.nregs);
  scope.code = &code;
  bind_simple(fn, b, args, scope.regs);
  scope.enter(fn);
  out = run_function(fn, code, scope.regs);
  return true;
}

Machine::InlineFrame *Machine::enter_inline(FunctionObject &fn, Value *args, std::size_t n, const CallSite &site,
                                            Frame *caller, const Insn *call) {
  const Code &code = fn.tmpl->code ? *fn.tmpl->code : code_of(fn);
  // The usual call passes every parameter positionally: nothing to plan. Else the site keeps
  // the plan it made for this callee's code, and binds by it.
  bool exact = n == code.positional.size() && site.keywords.empty() && code.simple_params;
  if (!exact) {
    auto &cached = const_cast<CallSite &>(site);
    if (cached.plan_code != &code || cached.plan_n != n || cached.plan_ndefaults != fn.defaults.size()) {
      cached.plan_code = nullptr;
      if (!plan_simple(fn, code, n, &site.keywords, cached.plan))
        return nullptr;
      cached.plan_code = &code;
      cached.plan_n = n;
      cached.plan_ndefaults = fn.defaults.size();
    }
  }
  count_step(site.loc);
  if (in_.function_frames_ >= in_.limits_.max_call_depth) [[unlikely]] {
    LocScope at(in_, site.loc);
    raise_python("RecursionError", "maximum recursion depth exceeded");
  }
  if (inline_depth_ == inline_pool_.size()) [[unlikely]]
    inline_pool_.push_back(std::make_unique<InlineFrame>());
  InlineFrame &top = *inline_pool_[inline_depth_++];
  top.caller = caller;
  top.call = call;
  top.saved_loc = in_.current_loc_;
  if (site.loc.valid())
    in_.current_loc_ = site.loc;
  top.nregs = code.nregs;
  Value *regs = stack_.push(code.nregs, top.mark);
  if (exact)
    for (std::size_t k = 0; k < n; ++k)
      move_to_fresh(regs[k], args[k]);
  else
    bind_simple(fn, site.plan, args, regs);
  if (in_.function_frames_ == 0) [[unlikely]]
    in_.kernel_name_ = std::string(fn.name);
  ++in_.function_frames_;
  prepare_frame(fn, code, regs, top.frame);
  return &top;
}

void Machine::release_frame(const Code &code, Value *regs, std::size_t nregs, const RegisterStack::Mark &mark) {
  if (code.defines_functions && !code.cell_regs.empty()) {
    // Temporaries may still hold the functions made here: let go of them first.
    for (std::size_t k = 0; k < nregs; ++k)
      if (std::find(code.cell_regs.begin(), code.cell_regs.end(), k) == code.cell_regs.end())
        regs[k] = Value();
    release_closures(code, regs);
  }
  stack_.pop(regs, nregs, mark);
}

void Machine::bind_arguments(FunctionObject &fn, const Code &code, CallArgs &args, Value *regs) {
  auto bind = [regs](const Param &p, Value value) { regs[p.reg] = std::move(value); };
  const std::string &qn = fn.qualname;
  // Python's argument binding (CPython's initialize_locals), with its messages.
  std::size_t npos = code.positional.size();
  std::size_t given = args.positional.size();
  Flags bound(npos);
  for (std::size_t k = 0; k < std::min(given, npos); ++k) {
    bind(code.positional[k], args.positional[k]);
    bound[k] = true;
  }
  if (code.has_vararg) {
    std::vector<Value> rest;
    if (given > npos)
      rest.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(npos), args.positional.end());
    bind(code.vararg, Value::tuple(std::move(rest)));
  }
  Value kwargs = code.has_kwarg ? Value::dict() : Value();
  Flags kw_bound(code.kwonly.size());
  std::vector<std::string_view> posonly_as_kw;
  for (const auto &[name, value] : args.keywords) {
    bool matched = false;
    for (std::size_t k = code.posonly; k < npos; ++k)
      if (code.positional[k].name == name) {
        if (bound[k])
          raise_python("TypeError", qn + "() got multiple values for argument '" + name + "'");
        bind(code.positional[k], value);
        bound[k] = true;
        matched = true;
        break;
      }
    if (!matched)
      for (std::size_t k = 0; k < code.kwonly.size(); ++k)
        if (code.kwonly[k].name == name) {
          if (kw_bound[k])
            raise_python("TypeError", qn + "() got multiple values for argument '" + name + "'");
          bind(code.kwonly[k], value);
          kw_bound[k] = true;
          matched = true;
          break;
        }
    if (matched)
      continue;
    if (code.has_kwarg) {
      kwargs.dict_data().set(&in_, Value::str(name), value); // lib: DictData is hashed
      continue;
    }
    for (std::size_t k = 0; k < code.posonly; ++k)
      if (code.positional[k].name == name)
        posonly_as_kw.push_back(code.positional[k].name);
    if (posonly_as_kw.empty())
      raise_python("TypeError", qn + "() got an unexpected keyword argument '" + name + "'");
  }
  if (!posonly_as_kw.empty()) {
    std::string names;
    for (std::size_t k = 0; k < posonly_as_kw.size(); ++k)
      names += (k ? ", '" : "'") + std::string(posonly_as_kw[k]) + "'";
    raise_python("TypeError", qn + "() got some positional-only arguments passed as keyword arguments: " + names);
  }
  if (code.has_kwarg)
    bind(code.kwarg, kwargs);
  if (given > npos && !code.has_vararg) {
    std::size_t ndefaults = fn.defaults.size();
    std::string takes =
        ndefaults ? "from " + std::to_string(npos - ndefaults) + " to " + std::to_string(npos) : std::to_string(npos);
    std::size_t kw_given = 0;
    for (std::size_t k = 0; k < code.kwonly.size(); ++k)
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
      bind(code.positional[k], fn.defaults[k - first_default]);
    else
      missing.push_back(code.positional[k].name);
  }
  if (!missing.empty())
    raise_python("TypeError", qn + "() missing " + std::to_string(missing.size()) + " required positional argument" +
                                  (missing.size() == 1 ? "" : "s") + ": " + join_names(missing));
  for (std::size_t k = 0; k < code.kwonly.size(); ++k) {
    if (kw_bound[k])
      continue;
    if (k < fn.kw_defaults.size() && fn.kw_defaults[k])
      bind(code.kwonly[k], *fn.kw_defaults[k]);
    else
      missing.push_back(code.kwonly[k].name);
  }
  if (!missing.empty())
    raise_python("TypeError", qn + "() missing " + std::to_string(missing.size()) + " required keyword-only argument" +
                                  (missing.size() == 1 ? "" : "s") + ": " + join_names(missing));
}

Value Machine::run_function(FunctionObject &fn, const Code &code, Value *regs) {
  Frame f;
  prepare_frame(fn, code, regs, f);
  return execute(f);
}

Value Machine::call_registers(const Value &callee, Value *args, std::size_t n, const CallSite &site) {
  if (site.keywords.empty())
    if (auto *cls = exactly<ClassObject>(callee))
      if (std::optional<Value> obj = instantiate_simple(*cls, args, n, site))
        return std::move(*obj);
  auto *fn = exactly<FunctionObject>(callee);
  if (fn) {
    Value out;
    if (call_simple(*fn, args, n, &site.keywords, site.loc, out))
      return out;
  }
  if (!site.keywords.empty() || !fn) {
    PooledArgs pooled(*this);
    CallArgs &a = pooled.args;
    a.loc = site.loc;
    std::size_t npos = n - site.keywords.size();
    a.positional.reserve(npos);
    for (std::size_t k = 0; k < npos; ++k)
      a.positional.push_back(std::move(args[k]));
    if (!site.keywords.empty()) {
      pooled.want_keywords();
      for (std::size_t k = 0; k < site.keywords.size(); ++k)
        a.keywords.emplace_back(site.keywords[k], std::move(args[npos + k]));
    }
    return call(callee, a, site.loc);
  }
  PooledArgs pooled(*this);
  CallArgs &a = pooled.args;
  a.loc = site.loc;
  for (std::size_t k = 0; k < n; ++k)
    a.positional.push_back(std::move(args[k]));
  return call(callee, a, site.loc);
}

const Value *Machine::plain_init(ClassObject &cls, const CallSite &site) {
  // A plain class whose __init__ is a compiled function and whose __new__ is object's: the
  // site remembers the __init__ while the class's namespace stays as it was.
  AttrCache &cc = const_cast<CallSite &>(site).ctor;
  constexpr std::uint8_t kPlainInit = 1;
  if (!cc.probe(&cls, class_epoch())) {
    cc.demote();
    cc.key = &cls;
    cc.epoch = class_epoch();
    cc.kind = 0;
    cc.slot = nullptr;
    if (cls.flavor != ClassFlavor::Plain || cls.native != K::None)
      return nullptr;
    const Value *new_fn = cls.lookup("__new__");
    if (new_fn &&
        !(new_fn->as<trace::BuiltinFunction>() && new_fn->as<trace::BuiltinFunction>()->name() == "object.__new__"))
      return nullptr;
    const Value *found = cls.lookup("__init__");
    if (!found || !exactly<FunctionObject>(*found))
      return nullptr;
    cc.kind = kPlainInit;
    cc.slot = found;
  }
  return cc.kind == kPlainInit ? cc.slot : nullptr;
}

std::optional<Value> Machine::instantiate_simple(ClassObject &cls, Value *args, std::size_t n, const CallSite &site) {
  // `C(a, b)` for a plain class: the instance goes in the callee's register, followed by the
  // arguments, as a method call.
  const Value *slot = plain_init(cls, site);
  if (!slot)
    return std::nullopt;
  Value init = *slot; // (the class may drop its __init__ while it runs)
  auto *fn = exactly<FunctionObject>(init);
  Ref<ClassObject> keep(&cls);
  Value obj = Value::object(make_ref<InstanceObject>(keep));
  args[-1] = obj;
  Value result;
  if (!call_simple(*fn, args - 1, n + 1, nullptr, site.loc, result)) {
    PooledArgs pooled(*this);
    CallArgs &a = pooled.args;
    a.loc = site.loc;
    Value *with_self = args - 1; // (args[k - 1] with an unsigned k = 0 is an overflow, UBSan says)
    for (std::size_t k = 0; k < n + 1; ++k)
      a.positional.push_back(std::move(with_self[k]));
    result = call(init, a, site.loc);
  }
  check_init_result(result);
  return obj;
}

void Machine::check_init_result(const Value &result) {
  if (!result.is_none())
    raise_python("TypeError", "__init__() should return None, not '" + std::string(type_name(result)) + "'");
}

void Machine::load_method(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const CallSite &site = f.code->calls[in.d];
  Value &self = R[in.a + 1];
  // A method of a built-in value is found when it is called (`lst.append(x)`).
  if (self.kind != K::Object && self.kind != K::None) {
    set_unbound(R[in.a]);
    return;
  }
  if (auto *module = exactly<ModuleObject>(self)) {
    if (Value *global = module->globals().find_local(site.attr.name)) {
      R[in.a] = *global;
      set_unbound(self);
      return;
    }
  }
  if (auto *inst = exactly<InstanceObject>(self)) {
    // A function on the class is called with the instance first, without a bound method.
    AttrCache &ac = const_cast<CallSite &>(site).attr;
    ClassObject *cls = inst->cls.get();
    if (!ac.probe(cls, class_epoch())) {
      ac.demote();
      AttrPlan p = cls->plan(ac.name);
      ac.key = cls;
      ac.epoch = class_epoch();
      ac.kind = p.kind;
      ac.index = p.index;
      ac.slot = p.value;
    }
    if (ac.kind == AttrPlan::Method) {
      R[in.a] = *ac.slot;
      return;
    }
    if (ac.kind == AttrPlan::Slot && ac.index < inst->slots.size() && !is_unbound(inst->slots[ac.index])) {
      R[in.a] = inst->slots[ac.index];
      set_unbound(self);
      return;
    }
  }
  if (auto *sup = exactly<SuperObject>(self)) {
    // `super().name(args)` in a method: a function found after the class in the instance's MRO
    // is called with the instance first, as for an instance, without a bound method.
    if (ClassObject *cls = class_of(sup->self)) {
      const auto &mro = cls->mro;
      auto it = std::find(mro.begin(), mro.end(), sup->after.get());
      if (it != mro.end())
        for (++it; it != mro.end(); ++it)
          if (const Value *v = (*it)->dict.find_local(site.attr.name)) {
            if (!exactly<FunctionObject>(*v))
              break;
            R[in.a] = *v;
            Value instance = sup->self;
            self = std::move(instance);
            return;
          }
    }
  }
  Value attr = in_.get_attr(self, site.attr.name.name(), site.func_loc);
  R[in.a] = std::move(attr);
  set_unbound(self);
}

Value Machine::call_method(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const CallSite &site = f.code->calls[in.d];
  Value *args = R + in.b + 2;
  std::size_t n = in.c;
  if (is_unbound(R[in.b])) {
    // `value.name(args)` on a built-in value.
    Value &self = R[in.b + 1];
    PooledArgs pooled(*this);
    CallArgs &a = pooled.args;
    a.loc = site.loc;
    std::size_t npos = n - site.keywords.size();
    for (std::size_t k = 0; k < npos; ++k)
      a.positional.push_back(std::move(args[k]));
    if (!site.keywords.empty()) {
      pooled.want_keywords();
      for (std::size_t k = 0; k < site.keywords.size(); ++k)
        a.keywords.emplace_back(site.keywords[k], std::move(args[npos + k]));
    }
    count_step(site.loc);
    // The site remembers the method it found for this kind of value (a dict subclass's
    // methods depend on more than the kind: those are looked up each time).
    auto &cached = const_cast<CallSite &>(site);
    bool by_kind = self.kind != K::Dict || self.dict_data().flavor == trace::DictData::Flavor::Dict;
    trace::pylib::MethodImpl impl = by_kind && cached.method_kind == self.kind ? cached.method : nullptr;
    if (!impl) {
      impl = trace::pylib::value_method(self, site.attr.name.name());
      if (impl && by_kind) {
        cached.method_kind = self.kind;
        cached.method = impl;
      }
    }
    if (impl) {
      LocScope at(in_, site.loc);
      return impl(in_, self, a);
    }
    // Not one of the type's methods: the attribute itself (lib: a special method such as
    // `x.__add__`, or a placeholder for a method nkicc does not model), or AttributeError.
    Value fn = in_.get_attr(self, site.attr.name.name(), site.func_loc);
    LocScope at(in_, site.loc);
    return in_.call(fn, a);
  }
  if (is_unbound(R[in.b + 1]))
    return call_registers(R[in.b], args, n, site);
  // A function found on the receiver's type: the receiver is its first argument.
  return call_registers(R[in.b], R + in.b + 1, n + 1, site);
}

Value Machine::call_ex(Frame &f, const Insn &in, bool method) {
  Value *R = f.regs;
  const CallSite &site = f.code->calls[in.d];
  std::uint16_t first = method ? in.b + 2 : in.b + 1;
  PooledArgs pooled(*this);
  CallArgs &a = pooled.args;
  a.loc = site.loc;
  if (method && !is_unbound(R[in.b]) && !is_unbound(R[in.b + 1]))
    a.positional.push_back(R[in.b + 1]);
  for (Value &v : R[first].seq().items)
    a.positional.push_back(std::move(v));
  pooled.want_keywords();
  for (Value &kv : R[first + 1].seq().items) {
    auto &pair = kv.seq().items;
    a.keywords.emplace_back(pair[0].str_text(), std::move(pair[1]));
  }
  if (method && is_unbound(R[in.b])) {
    count_step(site.loc);
    Value &self = R[in.b + 1];
    std::optional<Value> out;
    {
      LocScope at(in_, site.loc);
      out = in_.call_method(self, site.attr.name.name(), a);
    }
    if (out)
      return std::move(*out);
    in_.get_attr(self, site.attr.name.name(), site.func_loc);
    return Value();
  }
  return call(R[in.b], a, site.loc);
}

// ---- functions ----------------------------------------------------------------------------------

Value Machine::make_function(Frame &f, const Insn &in) {
  FunctionTemplate &t = *f.code->functions[in.d];
  auto fn = make_ref<FunctionObject>();
  fn->name = t.name;
  fn->qualname = t.qualname;
  fn->def = t.def;
  fn->tmpl = &t;
  Value *R = f.regs;
  std::size_t k = in.b;
  for (std::size_t d = 0; d < t.ndefaults; ++d)
    fn->defaults.push_back(R[k++]);
  for (bool has : t.kw_has_default)
    fn->kw_defaults.push_back(has ? std::optional<Value>(R[k++]) : std::nullopt);
  for (std::uint16_t r : t.closure_regs)
    fn->closure.push_back(R[r].ref_as<trace::Cell>());
  if (f.module)
    fn->module = *f.module;
  return Value::object(std::move(fn));
}

void Machine::release_closures(const Code &code, Value *regs) {
  // The cells this call made, and the functions in them that only their cell holds.
  long internal_total = 0;
  std::vector<std::pair<trace::Cell *, long>> cells;
  for (std::uint16_t r : code.cell_regs) {
    auto *cell = regs[r].as<trace::Cell>();
    if (!cell)
      continue;
    cells.emplace_back(cell, 1);
  }
  if (cells.empty())
    return;
  for (auto &[cell, refs] : cells) {
    auto *fn = cell->value.as<FunctionObject>();
    if (!fn || cell->value.use_count() != 1)
      continue;
    for (const Ref<trace::Cell> &c : fn->closure)
      for (auto &[other, count] : cells)
        if (c.get() == other)
          ++count;
  }
  for (auto &[cell, refs] : cells) {
    if (cell->ref_count() != static_cast<std::uint32_t>(refs))
      return;
    internal_total += refs;
  }
  (void)internal_total;
  for (auto &[cell, refs] : cells) {
    (void)refs;
    Value drop = std::move(cell->value);
    cell->bound = false;
  }
}

} // namespace nkicc::eval
