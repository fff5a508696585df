// The dispatch loop: one switch over the instruction set, with the common cases (int and float
// arithmetic, comparisons, jumps, loops over ranges and sequences, calls of compiled
// functions) handled inline and everything else passed to the Interpreter's operations, which
// raise Python's errors in Python's words. An error that leaves an instruction without a
// location takes the instruction's.
#include "eval/machine.h"

#include "eval/compiler.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace nkicc::eval {

using namespace python;
using trace::ModuleObject;
using trace::Object;
using trace::Scope;
using trace::TraceError;
using K = Value::Kind;

namespace {

/// The Object if its type is exactly T (not a subclass, which may override T's behaviour).
template <class T> T *exactly(const Value &v) {
  Object *obj = v.object();
  return obj && &typeid(*obj) == &typeid(T) ? static_cast<T *>(obj) : nullptr;
}

/// An iterator held in a register while a `for` loop runs.
class IteratorObject : public Object {
public:
  explicit IteratorObject(std::unique_ptr<trace::Iterator> i) : it(std::move(i)) {}
  std::string_view type_name() const override { return "iterator"; }
  std::unique_ptr<trace::Iterator> it;
};

enum ForMode : std::int64_t { kForRange = 0, kForSeq = 1, kForIter = 2 };

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

std::string ascii_of(const std::string &r) {
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
  return ascii;
}

} // namespace

// ---- the register stack -------------------------------------------------------------------------

Value *RegisterStack::push(std::size_t n) {
  constexpr std::size_t kChunk = 16384;
  marks_.emplace_back(chunk_, top_);
  if (chunks_.empty() || top_ + n > chunks_[chunk_].size) {
    // The next chunk large enough (chunks are kept once made).
    std::size_t next = chunks_.empty() ? 0 : chunk_ + 1;
    while (next < chunks_.size() && chunks_[next].size < n)
      ++next;
    if (next >= chunks_.size()) {
      Chunk c;
      c.size = std::max(kChunk, n);
      c.values = std::make_unique<Value[]>(c.size);
      chunks_.push_back(std::move(c));
      next = chunks_.size() - 1;
    }
    chunk_ = next;
    top_ = 0;
  }
  Value *out = chunks_[chunk_].values.get() + top_;
  top_ += n;
  return out;
}

void RegisterStack::pop(Value *regs, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k)
    regs[k] = Value();
  std::tie(chunk_, top_) = marks_.back();
  marks_.pop_back();
}

// ---- frames -------------------------------------------------------------------------------------

/// Enters a function's frame: registers, the call depth and the kernel name, restored on exit
/// however the call ends.
struct Machine::FrameScope {
  Machine &m;
  Interpreter &in;
  Value *regs;
  std::size_t nregs;
  std::size_t loop_base;
  const Code *code;
  bool entered = false;

  FrameScope(Machine &machine, Interpreter &interp, std::size_t n)
      : m(machine), in(interp), regs(machine.stack_.push(n)), nregs(n), loop_base(interp.loop_stack_.size()),
        code(nullptr) {}
  void enter(const FunctionObject &fn) {
    if (in.function_frames_ == 0)
      in.kernel_name_ = std::string(fn.name);
    ++in.function_frames_;
    in.call_depth_ = in.function_frames_ - 1;
    entered = true;
  }
  ~FrameScope() {
    if (entered) {
      --in.function_frames_;
      in.call_depth_ = in.function_frames_ ? in.function_frames_ - 1 : 0;
    }
    in.loop_stack_.resize(loop_base);
    if (code && code->defines_functions && !code->cell_regs.empty()) {
      // Temporaries may still hold the functions made here: let go of them first.
      for (std::size_t k = 0; k < nregs; ++k)
        if (std::find(code->cell_regs.begin(), code->cell_regs.end(), k) == code->cell_regs.end())
          regs[k] = Value();
      m.release_closures(*code, regs);
    }
    m.stack_.pop(regs, nregs);
  }
  FrameScope(const FrameScope &) = delete;
  FrameScope &operator=(const FrameScope &) = delete;
};

/// A call's arguments, whose vectors come from the machine's spares and go back to them
/// (emptied) when the call is done, so that a call does not allocate them.
struct Machine::PooledArgs {
  Machine &m;
  CallArgs args;
  explicit PooledArgs(Machine &machine) : m(machine) {
    if (!m.spare_positional_.empty()) {
      args.positional = std::move(m.spare_positional_.back());
      m.spare_positional_.pop_back();
    }
  }
  void want_keywords() {
    if (args.keywords.capacity() == 0 && !m.spare_keywords_.empty()) {
      args.keywords = std::move(m.spare_keywords_.back());
      m.spare_keywords_.pop_back();
    }
  }
  ~PooledArgs() {
    args.positional.clear();
    args.keywords.clear();
    if (args.positional.capacity() && m.spare_positional_.size() < 64)
      m.spare_positional_.push_back(std::move(args.positional));
    if (args.keywords.capacity() && m.spare_keywords_.size() < 64)
      m.spare_keywords_.push_back(std::move(args.keywords));
  }
  PooledArgs(const PooledArgs &) = delete;
  PooledArgs &operator=(const PooledArgs &) = delete;
};

/// Sets the interpreter's current location for the duration of a call.
struct Machine::LocScope {
  Interpreter &in;
  SourceLoc saved;
  LocScope(Interpreter &interp, SourceLoc loc) : in(interp), saved(interp.current_loc_) {
    if (loc.valid())
      in.current_loc_ = loc;
  }
  ~LocScope() { in.current_loc_ = saved; }
};

// ---- the machine --------------------------------------------------------------------------------

Machine::Machine(Interpreter &in) : in_(in) {
  spare_positional_.reserve(64);
  spare_keywords_.reserve(64);
}

Machine::~Machine() = default;

void Machine::run_module(const python::Module &module, const std::shared_ptr<ModuleObject> &m) {
  auto &st = symtables_[&module];
  if (!st)
    st = std::make_unique<SymbolTable>(module);
  auto &code = module_codes_[&module];
  if (!code)
    code = compile_module(module, *st, in_);
  Frame f;
  f.code = code.get();
  f.module = &m;
  f.globals = &m->globals();
  f.ns = f.globals;
  FrameScope scope(*this, in_, code->nregs);
  f.regs = scope.regs;
  f.loop_base = scope.loop_base;
  execute(f);
}

const Code &Machine::code_of(FunctionObject &fn) {
  FunctionTemplate &t = *fn.tmpl;
  if (!t.code)
    t.code = compile_function(t, in_);
  return *t.code;
}

void Machine::step(const Code &code, std::uint32_t pc) {
  if (++in_.steps_ > in_.limits_.max_steps)
    step_budget(code, pc);
}

void Machine::step_budget(const Code &code, std::uint32_t pc) {
  raise_error("step-budget",
              "the trace ran more than " + std::to_string(in_.limits_.max_steps) +
                  " steps (an endless loop?); raise --max-instructions or fix the loop",
              code.step_loc(pc));
}

// ---- calls --------------------------------------------------------------------------------------

Value Machine::call(const Value &callee, CallArgs &args, SourceLoc loc) {
  if (++in_.steps_ > in_.limits_.max_steps)
    raise_error("step-budget",
                "the trace ran more than " + std::to_string(in_.limits_.max_steps) +
                    " steps (an endless loop?); raise --max-instructions or fix the loop",
                loc);
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

bool Machine::call_simple(FunctionObject &fn, Value *args, std::size_t n, SourceLoc loc, Value &out) {
  const Code &code = code_of(fn);
  std::size_t npos = code.positional.size();
  std::size_t first_default = npos - fn.defaults.size();
  if (!code.simple_params || n > npos || n < first_default)
    return false;
  if (++in_.steps_ > in_.limits_.max_steps)
    raise_error("step-budget",
                "the trace ran more than " + std::to_string(in_.limits_.max_steps) +
                    " steps (an endless loop?); raise --max-instructions or fix the loop",
                loc);
  LocScope at(in_, loc);
  if (in_.function_frames_ >= in_.limits_.max_call_depth)
    raise_python("RecursionError", "maximum recursion depth exceeded");
  FrameScope scope(*this, in_, code.nregs);
  scope.code = &code;
  Value *regs = scope.regs;
  for (std::size_t k = 0; k < n; ++k)
    regs[k] = std::move(args[k]);
  for (std::size_t k = n; k < npos; ++k)
    regs[k] = fn.defaults[k - first_default];
  scope.enter(fn);
  out = run_function(fn, code, regs);
  return true;
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
      kwargs.dict_data().entries.emplace_back(Value::str(name), value);
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
  // Locals that are not parameters start unbound; the closure's cells go to their registers.
  std::size_t nparams = code.positional.size() + code.kwonly.size() + (code.has_vararg ? 1 : 0) +
                        (code.has_kwarg ? 1 : 0);
  for (std::size_t k = nparams; k < code.nlocals; ++k)
    set_unbound(regs[k]);
  for (std::size_t k = 0; k < code.free_regs.size() && k < fn.closure.size(); ++k)
    regs[code.free_regs[k]] = Value::object(fn.closure[k]);
  Frame f;
  f.code = &code;
  f.regs = regs;
  f.module = &fn.module;
  f.globals = fn.module ? &fn.module->globals() : nullptr;
  f.fn = &fn;
  f.loop_base = in_.loop_stack_.size();
  return execute(f);
}

Value Machine::call_registers(const Value &callee, Value *args, std::size_t n, const CallSite &site) {
  if (!site.keywords.empty() || !exactly<FunctionObject>(callee)) {
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
  auto *fn = exactly<FunctionObject>(callee);
  Value out;
  if (call_simple(*fn, args, n, site.loc, out))
    return out;
  PooledArgs pooled(*this);
  CallArgs &a = pooled.args;
  a.loc = site.loc;
  for (std::size_t k = 0; k < n; ++k)
    a.positional.push_back(std::move(args[k]));
  return call(callee, a, site.loc);
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
    if (++in_.steps_ > in_.limits_.max_steps)
      raise_error("step-budget",
                  "the trace ran more than " + std::to_string(in_.limits_.max_steps) +
                      " steps (an endless loop?); raise --max-instructions or fix the loop",
                  site.loc);
    std::optional<Value> out;
    {
      LocScope at(in_, site.loc);
      out = in_.call_method(self, site.attr.name.name(), a);
    }
    if (out)
      return std::move(*out);
    in_.get_attr(self, site.attr.name.name(), site.func_loc); // raises AttributeError
    return Value();
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
    if (++in_.steps_ > in_.limits_.max_steps)
      raise_error("step-budget",
                  "the trace ran more than " + std::to_string(in_.limits_.max_steps) +
                      " steps (an endless loop?); raise --max-instructions or fix the loop",
                  site.loc);
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

// ---- names --------------------------------------------------------------------------------------

Value Machine::load_global(Frame &f, const Insn &in) {
  GlobalCache &gc = const_cast<Code *>(f.code)->globals[in.d];
  Scope &builtins = *in_.builtins_;
  if (f.globals) {
    if (gc.globals == f.globals && gc.globals_version == f.globals->version() &&
        gc.builtins_version == builtins.version())
      return *gc.slot;
    if (Value *v = f.globals->find_local(gc.name)) {
      gc = GlobalCache{gc.name, f.globals, f.globals->version(), builtins.version(), v};
      return *v;
    }
  }
  if (Value *v = builtins.find_local(gc.name)) {
    if (f.globals)
      gc = GlobalCache{gc.name, f.globals, f.globals->version(), builtins.version(), v};
    return *v;
  }
  raise_python("NameError", "name '" + std::string(gc.name.name()) + "' is not defined");
}

Value Machine::load_name(Frame &f, const Insn &in) {
  const GlobalCache &gc = f.code->globals[in.d];
  if (f.ns && f.ns != f.globals)
    if (Value *v = f.ns->find_local(gc.name))
      return *v;
  return load_global(f, in);
}

void Machine::store_name(Frame &f, Symbol name, const Value &v) {
  Scope *ns = f.ns ? f.ns : f.globals;
  ns->set(name, v);
}

void Machine::bind_name(Frame &f, const Insn &in) {
  Symbol name;
  const Value *v = nullptr;
  switch (in.op) {
  case Op::StoreGlobal:
  case Op::StoreName:
    name = f.code->names[in.d];
    v = &f.regs[in.a];
    break;
  case Op::StoreDeref:
    name = f.code->names[in.d];
    v = &f.regs[in.b];
    break;
  case Op::ForNext:
    name = f.code->local_names[in.b];
    v = &f.regs[in.b];
    break;
  default:
    name = f.code->local_names[in.a];
    v = &f.regs[in.a];
    break;
  }
  if (Object *obj = v->object())
    obj->on_bind(name.name());
}

Value Machine::load_attr(Frame &f, const Insn &in, const Value &obj) {
  AttrCache &ac = const_cast<Code *>(f.code)->attrs[in.d];
  // A plain module's attribute is its global (ModuleObject::get_attr), found by symbol.
  if (auto *module = exactly<ModuleObject>(obj)) {
    Scope &g = module->globals();
    if (ac.key == &g && ac.epoch == g.version())
      return *ac.slot;
    if (Value *global = g.find_local(ac.name)) {
      ac.key = &g;
      ac.epoch = g.version();
      ac.slot = global;
      return *global;
    }
  }
  return in_.get_attr(obj, ac.name.name(), f.code->locs[&in - f.code->insns.data()]);
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

// ---- loops --------------------------------------------------------------------------------------

void Machine::for_prep(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const Value &iterable = R[in.b];
  SourceLoc loc = f.code->locs[&in - f.code->insns.data()];
  Value *it = R + in.a;
  trace::LoopKind kind = in_.current_loop_kind();
  if (Object *obj = iterable.object())
    if (trace::LoopKind k = obj->loop_kind(); k != trace::LoopKind::None)
      kind = k;
  if (auto *range = exactly<trace::RangeObject>(iterable)) {
    it[0] = Value::integer(kForRange);
    it[1] = Value::integer(range->start);
    it[2] = Value::integer(range->step);
    it[3] = Value::integer(range->length());
  } else if (iterable.kind == K::Tuple || iterable.kind == K::List) {
    it[0] = Value::integer(kForSeq);
    it[1] = iterable;
    it[2] = Value::integer(0);
  } else {
    std::unique_ptr<trace::Iterator> i = in_.iterate(iterable, loc);
    it[0] = Value::integer(kForIter);
    it[1] = Value::object(make_ref<IteratorObject>(std::move(i)));
  }
  // A comprehension's loop records no loop kind (c); a `for` over a list keeps its
  // enclosing loop's kind.
  if (!in.c)
    in_.loop_stack_.push_back(kind);
}

bool Machine::for_next_slow(Frame &f, const Insn &in) {
  Value *it = f.regs + in.a;
  auto *iter = static_cast<IteratorObject *>(it[1].object());
  Value item;
  if (!iter->it->next(item))
    return false;
  f.regs[in.b] = std::move(item);
  return true;
}

// ---- assignment ---------------------------------------------------------------------------------

void Machine::unpack(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const Value v = R[in.b];
  std::size_t n = in.c;
  bool starred = in.d != 0xffff;
  std::vector<Value> items;
  if (v.kind != K::Object && v.kind != K::Tuple && v.kind != K::List && v.kind != K::Str && v.kind != K::Dict)
    raise_python("TypeError", "cannot unpack non-iterable " + std::string(type_name(v)) + " object");
  if (auto *obj = v.object(); obj && !dynamic_cast<trace::RangeObject *>(obj)) {
    std::unique_ptr<trace::Iterator> it = obj->iterate(in_);
    if (!it)
      raise_python("TypeError", "cannot unpack non-iterable " + std::string(type_name(v)) + " object");
    Value x;
    while (it->next(x)) {
      items.push_back(std::move(x));
      // More items than targets can only be an error; stop reading an endless iterable.
      if (items.size() > n + 1 && !starred)
        break;
      in_.check_length(items.size());
    }
  } else if ((v.kind == K::Tuple || v.kind == K::List) && !starred && v.seq().items.size() == n) {
    const auto &src = v.seq().items;
    for (std::size_t k = 0; k < n; ++k)
      R[in.a + k] = src[k];
    return;
  } else {
    items = in_.to_list(v);
  }
  if (!starred) {
    if (items.size() > n)
      raise_python("ValueError", "too many values to unpack (expected " + std::to_string(n) + ")");
    if (items.size() < n)
      raise_python("ValueError", "not enough values to unpack (expected " + std::to_string(n) + ", got " +
                                     std::to_string(items.size()) + ")");
    for (std::size_t k = 0; k < n; ++k)
      R[in.a + k] = std::move(items[k]);
    return;
  }
  if (items.size() < n - 1)
    raise_python("ValueError", "not enough values to unpack (expected at least " + std::to_string(n - 1) + ", got " +
                                   std::to_string(items.size()) + ")");
  std::size_t star = in.d, after = n - star - 1;
  for (std::size_t k = 0; k < star; ++k)
    R[in.a + k] = std::move(items[k]);
  std::vector<Value> rest(std::make_move_iterator(items.begin() + static_cast<std::ptrdiff_t>(star)),
                          std::make_move_iterator(items.end() - static_cast<std::ptrdiff_t>(after)));
  for (std::size_t k = 0; k < after; ++k)
    R[in.a + star + 1 + k] = std::move(items[items.size() - after + k]);
  R[in.a + star] = Value::list(std::move(rest));
}

void Machine::inplace_name(Frame &f, const Insn &in) {
  Value *R = f.regs;
  std::uint32_t pc = static_cast<std::uint32_t>(&in - f.code->insns.data());
  SourceLoc loc = f.code->locs[pc];
  const Value &cur = R[in.b];
  Value rhs = (in.flags & kConstC) ? f.code->consts[in.c] : R[in.c];
  auto op = static_cast<BinOpKind>(in.d);
  // list += iterable extends in place, as list.__iadd__.
  if (cur.kind == K::List && op == BinOpKind::Add) {
    std::vector<Value> more = in_.to_list(rhs, f.code->extra_locs[pc]);
    in_.check_length(cur.seq().items.size() + more.size());
    Value keep = cur;
    keep.seq().items.insert(keep.seq().items.end(), std::make_move_iterator(more.begin()),
                            std::make_move_iterator(more.end()));
    R[in.a] = std::move(keep);
    return;
  }
  if (Object *obj = cur.object()) {
    std::optional<Value> updated;
    {
      LocScope at(in_, loc);
      try {
        updated = obj->inplace_op(in_, op, rhs);
      } catch (TraceError &err) {
        if (!err.loc.valid())
          err.loc = loc;
        throw;
      }
    }
    if (updated) {
      R[in.a] = std::move(*updated);
      return;
    }
  }
  R[in.a] = in_.binary_op(op, cur, rhs, loc);
}

void Machine::aug_item(Frame &f, const Insn &in) {
  Value *R = f.regs;
  std::uint32_t pc = static_cast<std::uint32_t>(&in - f.code->insns.data());
  SourceLoc target = f.code->locs[pc], stmt = f.code->extra_locs[pc];
  const Value &c = R[in.a];
  const Value &key = R[in.b];
  const Value &rhs = R[in.c];
  auto op = static_cast<BinOpKind>(in.d);
  if (Object *obj = c.object()) {
    LocScope at(in_, stmt);
    try {
      obj->aug_set_item(in_, key, op, rhs);
    } catch (TraceError &err) {
      if (!err.loc.valid())
        err.loc = target;
      throw;
    }
    return;
  }
  Value cur = in_.get_item(c, key, target);
  in_.set_item(c, key, in_.binary_op(op, cur, rhs, stmt), target);
}

// ---- displays and strings -----------------------------------------------------------------------

Value Machine::format(Frame &f, const Insn &in) {
  Value *R = f.regs;
  Value v = R[in.b];
  char conversion = static_cast<char>(in.d);
  if (conversion == 'r' || conversion == 'a') {
    std::string r = repr(v);
    if (conversion == 'a')
      r = ascii_of(r);
    v = Value::str(std::move(r));
  } else if (conversion == 's') {
    v = Value::str(str(v));
  }
  std::string spec = in.c ? R[in.b + 1].str_text() : std::string();
  std::string out = in_.format(v, spec);
  in_.check_length(out.size());
  return Value::str(std::move(out));
}

Value Machine::build_string(Frame &f, const Insn &in) {
  std::string out;
  for (std::size_t k = 0; k < in.c; ++k) {
    out += f.regs[in.b + k].str_text();
    in_.check_length(out.size());
  }
  return Value::str(std::move(out));
}

Value Machine::build_slice(Frame &f, const Insn &in) {
  // A subscript's slice records are made and dropped for every load and store of an unrolled
  // loop: they come from the spares recycle_key() returns.
  Ref<trace::SliceData> data;
  if (spare_slices_.empty()) {
    data = make_ref<trace::SliceData>();
  } else {
    data = std::move(spare_slices_.back());
    spare_slices_.pop_back();
  }
  data->lower = f.regs[in.b];
  data->upper = f.regs[in.b + 1];
  data->step = f.regs[in.b + 2];
  return Value::from_heap(K::Slice, std::move(data));
}

Value Machine::build_tuple_key(Frame &f, const Insn &in) {
  Ref<trace::SeqData> data;
  if (spare_tuples_.empty()) {
    data = make_ref<trace::SeqData>();
  } else {
    data = std::move(spare_tuples_.back());
    spare_tuples_.pop_back();
  }
  data->items.reserve(in.c);
  for (std::size_t k = 0; k < in.c; ++k)
    data->items.push_back(std::move(f.regs[in.b + k]));
  return Value::from_heap(K::Tuple, std::move(data));
}

void Machine::recycle_key(Value &key) {
  // Only records nothing else holds: the object indexed may have kept the key.
  constexpr std::size_t kMaxSpares = 64;
  if (key.use_count() != 1)
    return;
  auto recycle_slice = [this](Value &v) {
    if (v.kind != K::Slice || v.use_count() != 1 || spare_slices_.size() >= kMaxSpares)
      return;
    Ref<trace::SliceData> data(&v.slice_data());
    v = Value();
    data->lower = Value();
    data->upper = Value();
    data->step = Value();
    spare_slices_.push_back(std::move(data));
  };
  if (key.kind == K::Slice) {
    recycle_slice(key);
    return;
  }
  if (key.kind != K::Tuple || spare_tuples_.size() >= kMaxSpares)
    return;
  Ref<trace::SeqData> data(&key.seq());
  key = Value();
  for (Value &item : data->items)
    recycle_slice(item);
  data->items.clear();
  spare_tuples_.push_back(std::move(data));
}

void Machine::dict_merge(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const Value &m = R[in.b];
  std::uint32_t pc = static_cast<std::uint32_t>(&in - f.code->insns.data());
  if (!in.c) {
    if (m.kind != K::Dict)
      raise_python("TypeError", "'" + std::string(type_name(m)) + "' object is not a mapping");
    for (const auto &[key, value] : std::vector(m.dict_data().entries))
      in_.set_item(R[in.a], key, value);
    return;
  }
  // `f(**m)`: keyword arguments, as (name, value) pairs in call order.
  if (m.kind != K::Dict)
    raise_python("TypeError", "argument after ** must be a mapping, not " + std::string(type_name(m)));
  auto &pairs = R[in.a].seq().items;
  for (const auto &[key, value] : m.dict_data().entries) {
    if (key.kind != K::Str)
      raise_python("TypeError", "keywords must be strings");
    for (const Value &p : pairs)
      if (p.seq().items[0].str_text() == key.str_text())
        raise_python("TypeError", "got multiple values for keyword argument '" + key.str_text() + "'",
                     f.code->extra_locs[pc]);
    pairs.push_back(Value::tuple({key, value}));
  }
}

// ---- imports and errors -------------------------------------------------------------------------

void Machine::import_star(Frame &f, const Insn &in) {
  auto *mod = dynamic_cast<ModuleObject *>(f.regs[in.a].object());
  if (!mod)
    return;
  for (const Scope::Entry &entry : std::vector(mod->globals().entries())) {
    if (entry.name().starts_with("_"))
      continue;
    if (f.code->kind == CodeKind::Function || f.code->kind == CodeKind::Lambda) {
      bool local = false;
      for (std::size_t r = 0; r < f.code->nlocals; ++r)
        if (f.code->local_names[r] == entry.symbol) {
          f.regs[r] = entry.value;
          local = true;
        }
      if (local)
        continue;
      if (!f.dynamic_ns) {
        f.dynamic_ns = std::make_shared<Scope>();
        f.ns = f.dynamic_ns.get();
      }
    }
    store_name(f, entry.symbol, entry.value);
  }
}

void Machine::raise(Frame &f, const Insn &in) {
  const Value &exc = f.regs[in.a];
  SourceLoc loc = f.code->locs[&in - f.code->insns.data()];
  if (auto *type = exc.as<trace::ExceptionTypeObject>())
    raise_error(type->name, "", loc);
  if (auto *e = exc.as<trace::ExceptionObject>())
    raise_error(e->type, e->message(), loc);
  raise_python("TypeError", "exceptions must derive from BaseException", loc);
}

void Machine::unsupported(const Code &code, const Insn &in) {
  std::string msg = "unsupported Python construct '" + code.consts[in.d].str_text() + "'";
  if (in_.function_frames_ > 0)
    msg += " in kernel '" + in_.kernel_name_ + "'";
  raise_error("unsupported", std::move(msg), code.locs[&in - code.insns.data()]);
}

// ---- the dispatch loop --------------------------------------------------------------------------

namespace {
// Results of the inline kinds written in place: the register's old value is released only when
// it pointed to heap data.
[[gnu::always_inline]] inline void set_int(Value &v, std::int64_t x) {
  if (v.is_heap())
    v = Value();
  v.kind = K::Int;
  v.i = x;
}
[[gnu::always_inline]] inline void set_float(Value &v, double x) {
  if (v.is_heap())
    v = Value();
  v.kind = K::Float;
  v.f = x;
}
[[gnu::always_inline]] inline void set_bool(Value &v, bool x) {
  if (v.is_heap())
    v = Value();
  v.kind = K::Bool;
  v.i = 0;
  v.b = x;
}
inline bool int_operands(const Value &x, const Value &y) { return x.kind == K::Int && y.kind == K::Int; }
inline bool float_operands(const Value &x, const Value &y) { return x.kind == K::Float && y.kind == K::Float; }

/// A comparison of two ints or two floats, or nullopt for anything else.
inline std::optional<bool> fast_compare(CmpOpKind op, const Value &x, const Value &y) {
  if (int_operands(x, y)) {
    switch (op) {
    case CmpOpKind::Eq:
      return x.i == y.i;
    case CmpOpKind::NotEq:
      return x.i != y.i;
    case CmpOpKind::Lt:
      return x.i < y.i;
    case CmpOpKind::LtE:
      return x.i <= y.i;
    case CmpOpKind::Gt:
      return x.i > y.i;
    case CmpOpKind::GtE:
      return x.i >= y.i;
    default:
      return std::nullopt;
    }
  }
  if (float_operands(x, y)) {
    switch (op) {
    case CmpOpKind::Eq:
      return x.f == y.f;
    case CmpOpKind::NotEq:
      return x.f != y.f;
    case CmpOpKind::Lt:
      return x.f < y.f;
    case CmpOpKind::LtE:
      return x.f <= y.f;
    case CmpOpKind::Gt:
      return x.f > y.f;
    case CmpOpKind::GtE:
      return x.f >= y.f;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

/// Truth of the inline kinds; nullopt for values whose truth needs the interpreter.
inline std::optional<bool> fast_truth(const Value &v) {
  switch (v.kind) {
  case K::Bool:
    return v.b;
  case K::None:
    return false;
  case K::Int:
    return v.i != 0;
  default:
    return std::nullopt;
  }
}
} // namespace

Value Machine::execute(Frame &f) {
  const Code &code = *f.code;
  const Insn *const base = code.insns.data();
  const Value *const K_ = code.consts.data();
  Value *const R = f.regs;
  const Insn *ip = base;
  std::uint64_t &steps = in_.steps_;
  const std::uint64_t max_steps = in_.limits_.max_steps;
#define RK_B(in) (((in).flags & kConstB) ? K_[(in).b] : R[(in).b])
#define RK_C(in) (((in).flags & kConstC) ? K_[(in).c] : R[(in).c])
#define PC(in) static_cast<std::uint32_t>(&(in) - base)
#define LOC(in) code.locs[PC(in)]
  for (;;) {
    try {
      for (;;) {
        const Insn &in = *ip++;
        if (in.flags & kStep) {
          if (++steps > max_steps) [[unlikely]]
            step_budget(code, PC(in));
        }
        switch (in.op) {
        case Op::Nop:
          break;
        case Op::Move:
          if (in.a != in.b)
            R[in.a] = R[in.b];
          break;
        case Op::LoadConst:
          R[in.a] = K_[in.d];
          break;
        case Op::LoadNone:
          R[in.a] = Value();
          break;
        case Op::LoadBool:
          R[in.a] = Value::boolean(in.b != 0);
          break;
        case Op::LoadInt:
          set_int(R[in.a], static_cast<std::int32_t>(in.d));
          break;
        case Op::CheckBound:
          if (is_unbound(R[in.a]))
            raise_python("UnboundLocalError", "cannot access local variable '" + std::string(code.names[in.d].name()) +
                                                  "' where it is not associated with a value");
          break;
        case Op::Unbind:
          if (is_unbound(R[in.a]))
            raise_python("UnboundLocalError", "cannot access local variable '" + std::string(code.names[in.d].name()) +
                                                  "' where it is not associated with a value");
          set_unbound(R[in.a]);
          break;
        case Op::ClearLocal:
          set_unbound(R[in.a]);
          break;
        case Op::MakeCell: {
          auto cell = make_ref<trace::Cell>(&cells_);
          if (in.b && !is_unbound(R[in.a])) {
            cell->value = std::move(R[in.a]);
            cell->bound = true;
          }
          R[in.a] = Value::object(std::move(cell));
          break;
        }
        case Op::LoadDeref: {
          auto *cell = static_cast<trace::Cell *>(R[in.b].object());
          if (!cell->bound) {
            bool free = std::find(code.free_regs.begin(), code.free_regs.end(), in.b) != code.free_regs.end();
            std::string name(code.names[in.d].name());
            if (free)
              raise_python("NameError", "cannot access free variable '" + name +
                                            "' where it is not associated with a value in enclosing scope");
            raise_python("UnboundLocalError",
                         "cannot access local variable '" + name + "' where it is not associated with a value");
          }
          R[in.a] = cell->value;
          break;
        }
        case Op::StoreDeref: {
          auto *cell = static_cast<trace::Cell *>(R[in.a].object());
          cell->value = R[in.b];
          cell->bound = true;
          break;
        }
        case Op::DeleteDeref: {
          auto *cell = static_cast<trace::Cell *>(R[in.a].object());
          if (!cell->bound)
            raise_python("UnboundLocalError", "cannot access local variable '" + std::string(code.names[in.d].name()) +
                                                  "' where it is not associated with a value");
          Value drop = std::move(cell->value);
          cell->bound = false;
          break;
        }
        case Op::LoadGlobal:
          R[in.a] = load_global(f, in);
          break;
        case Op::StoreGlobal:
          f.globals->set(code.names[in.d], R[in.a]);
          break;
        case Op::DeleteGlobal:
          if (!f.globals->erase(code.names[in.d]))
            raise_python("NameError", "name '" + std::string(code.names[in.d].name()) + "' is not defined");
          break;
        case Op::LoadName:
          R[in.a] = load_name(f, in);
          break;
        case Op::LoadClassDeref: {
          if (f.ns)
            if (Value *v = f.ns->find_local(code.globals[in.d].name)) {
              R[in.a] = *v;
              break;
            }
          auto *cell = static_cast<trace::Cell *>(R[in.b].object());
          if (!cell->bound)
            raise_python("NameError", "cannot access free variable '" + std::string(code.globals[in.d].name.name()) +
                                          "' where it is not associated with a value in enclosing scope");
          R[in.a] = cell->value;
          break;
        }
        case Op::StoreName:
          store_name(f, code.names[in.d], R[in.a]);
          break;
        case Op::DeleteName: {
          Scope *ns = f.ns ? f.ns : f.globals;
          if (!ns->erase(code.names[in.d]))
            raise_python("NameError", "name '" + std::string(code.names[in.d].name()) + "' is not defined");
          break;
        }
        case Op::LoadAttr: {
          Value v = load_attr(f, in, R[in.b]);
          R[in.a] = std::move(v);
          break;
        }
        case Op::LoadMethod:
          load_method(f, in);
          break;
        case Op::StoreAttr:
          in_.set_attr(R[in.a], code.attrs[in.d].name.name(), R[in.b], LOC(in));
          break;
        case Op::DeleteAttr:
          unsupported(code, in);
        case Op::GetItem: {
          const Value &c = R[in.b];
          const Value &key = RK_C(in);
          if ((c.kind == K::List || c.kind == K::Tuple) && key.kind == K::Int) {
            const auto &items = c.seq().items;
            std::int64_t k = key.i, n = static_cast<std::int64_t>(items.size());
            if (k < 0)
              k += n;
            if (k >= 0 && k < n) {
              R[in.a] = items[static_cast<std::size_t>(k)];
              break;
            }
          }
          Value item = in_.get_item(c, key, LOC(in));
          if (in.flags & kRecycle)
            recycle_key(R[in.c]);
          R[in.a] = std::move(item);
          break;
        }
        case Op::SetItem: {
          const Value &c = R[in.a];
          const Value &key = RK_B(in);
          if (c.kind == K::List && key.kind == K::Int) {
            auto &items = c.seq().items;
            std::int64_t k = key.i, n = static_cast<std::int64_t>(items.size());
            if (k < 0)
              k += n;
            if (k >= 0 && k < n) {
              items[static_cast<std::size_t>(k)] = R[in.c];
              break;
            }
          }
          in_.set_item(c, key, R[in.c], LOC(in));
          break;
        }
        case Op::DeleteItem:
          unsupported(code, in);
        case Op::Add: {
          const Value &x = RK_B(in), &y = RK_C(in);
          std::int64_t out;
          if (int_operands(x, y) && !__builtin_add_overflow(x.i, y.i, &out))
            set_int(R[in.a], out);
          else if (float_operands(x, y))
            set_float(R[in.a], x.f + y.f);
          else
            R[in.a] = in_.binary_op(BinOpKind::Add, x, y, LOC(in));
          break;
        }
        case Op::Sub: {
          const Value &x = RK_B(in), &y = RK_C(in);
          std::int64_t out;
          if (int_operands(x, y) && !__builtin_sub_overflow(x.i, y.i, &out))
            set_int(R[in.a], out);
          else if (float_operands(x, y))
            set_float(R[in.a], x.f - y.f);
          else
            R[in.a] = in_.binary_op(BinOpKind::Sub, x, y, LOC(in));
          break;
        }
        case Op::Mul: {
          const Value &x = RK_B(in), &y = RK_C(in);
          std::int64_t out;
          if (int_operands(x, y) && !__builtin_mul_overflow(x.i, y.i, &out))
            set_int(R[in.a], out);
          else if (float_operands(x, y))
            set_float(R[in.a], x.f * y.f);
          else
            R[in.a] = in_.binary_op(BinOpKind::Mult, x, y, LOC(in));
          break;
        }
        case Op::Binary:
          R[in.a] = in_.binary_op(static_cast<BinOpKind>(in.d), RK_B(in), RK_C(in), LOC(in));
          break;
        case Op::InplaceName:
          inplace_name(f, in);
          break;
        case Op::AugItem:
          aug_item(f, in);
          break;
        case Op::Unary:
          R[in.a] = in_.unary_op(static_cast<UnaryOpKind>(in.d), R[in.b], LOC(in));
          break;
        case Op::Not: {
          std::optional<bool> t = fast_truth(R[in.b]);
          R[in.a] = Value::boolean(!(t ? *t : in_.truthy(R[in.b])));
          break;
        }
        case Op::Compare: {
          const Value &x = RK_B(in), &y = RK_C(in);
          auto op = static_cast<CmpOpKind>(in.d);
          if (std::optional<bool> r = fast_compare(op, x, y))
            set_bool(R[in.a], *r);
          else
            R[in.a] = in_.compare(op, x, y, LOC(in));
          break;
        }
        case Op::Jump:
          ip = base + in.d;
          break;
        case Op::JumpIfFalse:
        case Op::JumpIfTrue: {
          std::optional<bool> t = fast_truth(R[in.a]);
          bool truth = t ? *t : in_.truthy(R[in.a]);
          if (truth == (in.op == Op::JumpIfTrue))
            ip = base + in.d;
          break;
        }
        case Op::CmpJumpFalse:
        case Op::CmpJumpTrue: {
          const Value &x = RK_B(in), &y = RK_C(in);
          auto op = static_cast<CmpOpKind>(in.a);
          bool truth;
          if (std::optional<bool> r = fast_compare(op, x, y)) {
            truth = *r;
          } else {
            Value result = in_.compare(op, x, y, code.extra_locs[PC(in)]);
            std::optional<bool> t = fast_truth(result);
            truth = t ? *t : in_.truthy(result);
          }
          if (truth == (in.op == Op::CmpJumpTrue))
            ip = base + in.d;
          break;
        }
        case Op::BuildTuple:
          R[in.a] = in.c ? build_tuple_key(f, in) : Value::tuple({});
          break;
        case Op::BuildList: {
          std::vector<Value> items(std::make_move_iterator(R + in.b), std::make_move_iterator(R + in.b + in.c));
          R[in.a] = Value::list(std::move(items));
          break;
        }
        case Op::BuildSet: {
          // nkicc has no set type: a set display is a list without duplicates.
          std::vector<Value> unique;
          for (std::size_t k = 0; k < in.c; ++k) {
            Value v = R[in.b + k];
            if (!in_.contains(Value::tuple(unique), v))
              unique.push_back(std::move(v));
          }
          R[in.a] = Value::list(std::move(unique));
          break;
        }
        case Op::BuildDict:
          R[in.a] = Value::dict();
          break;
        case Op::BuildSlice:
          R[in.a] = build_slice(f, in);
          break;
        case Op::ListAppend:
          R[in.a].seq().items.push_back(R[in.b]);
          in_.check_length(R[in.a].seq().items.size());
          break;
        case Op::ListExtend: {
          std::vector<Value> more = in_.to_list(R[in.b], LOC(in));
          auto &items = R[in.a].seq().items;
          items.insert(items.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
          in_.check_length(items.size());
          break;
        }
        case Op::ListToTuple: {
          std::vector<Value> items = std::move(R[in.a].seq().items);
          R[in.a] = Value::tuple(std::move(items));
          break;
        }
        case Op::SetAdd: {
          auto add = [&](const Value &v) {
            auto &items = R[in.a].seq().items;
            for (const Value &x : items)
              if (in_.truthy(in_.compare(CmpOpKind::Eq, x, v)))
                return;
            items.push_back(v);
            in_.check_length(items.size());
          };
          if (in.c) {
            for (const Value &v : std::vector(R[in.b].seq().items))
              add(v);
          } else {
            add(R[in.b]);
          }
          break;
        }
        case Op::DictSet:
          if (in.d) // a named keyword of a call with `**`: a (name, value) pair
            R[in.a].seq().items.push_back(Value::tuple({R[in.b], R[in.c]}));
          else
            in_.set_item(R[in.a], R[in.b], R[in.c], LOC(in));
          break;
        case Op::DictMerge:
          dict_merge(f, in);
          break;
        case Op::BuildString:
          R[in.a] = build_string(f, in);
          break;
        case Op::Format:
          R[in.a] = format(f, in);
          break;
        case Op::Unpack:
          unpack(f, in);
          break;
        case Op::ForPrep:
          for_prep(f, in);
          break;
        case Op::ForNext: {
          Value *it = R + in.a;
          switch (it[0].i) {
          case kForRange:
            if (it[3].i <= 0) {
              ip = base + in.d;
              goto next_insn;
            }
            set_int(R[in.b], it[1].i);
            it[1].i = static_cast<std::int64_t>(static_cast<std::uint64_t>(it[1].i) +
                                                static_cast<std::uint64_t>(it[2].i));
            --it[3].i;
            break;
          case kForSeq: {
            const auto &items = it[1].seq().items;
            auto k = static_cast<std::size_t>(it[2].i);
            if (k >= items.size()) {
              ip = base + in.d;
              goto next_insn;
            }
            R[in.b] = items[k];
            it[2].i = static_cast<std::int64_t>(k + 1);
            break;
          }
          default:
            if (!for_next_slow(f, in)) {
              ip = base + in.d;
              goto next_insn;
            }
            break;
          }
          break;
        }
        case Op::LoopPush:
          in_.loop_stack_.push_back(in_.current_loop_kind());
          break;
        case Op::LoopPop:
          in_.loop_stack_.pop_back();
          break;
        case Op::Call: {
          Value out = call_registers(R[in.b], R + in.b + 1, in.c, code.calls[in.d]);
          R[in.a] = std::move(out);
          break;
        }
        case Op::CallMethod: {
          Value out = call_method(f, in);
          R[in.a] = std::move(out);
          break;
        }
        case Op::CallEx:
        case Op::CallMethodEx: {
          Value out = call_ex(f, in, in.op == Op::CallMethodEx);
          R[in.a] = std::move(out);
          break;
        }
        case Op::Super:
        case Op::MakeClass:
          unsupported(code, in);
        case Op::MakeFunction:
          R[in.a] = make_function(f, in);
          break;
        case Op::Return:
          return std::move(R[in.a]);
        case Op::ReturnNone:
          return Value();
        case Op::Raise:
          raise(f, in);
        case Op::Reraise:
        case Op::ExcMatch:
        case Op::WithEnter:
        case Op::WithExit:
        case Op::WithExitExc:
          unsupported(code, in);
        case Op::AssertFail:
          raise_python("AssertionError", in.b ? str(R[in.a]) : std::string(), LOC(in));
        case Op::ImportName: {
          const ImportSite &site = code.imports[in.d];
          if (!site.from) {
            R[in.a] = in_.import_name(site.module, site.has_asname);
          } else {
            std::shared_ptr<Object> m = in_.import_from_module(site.level, site.module);
            R[in.a] = m ? Value::object(std::move(m)) : Value();
          }
          break;
        }
        case Op::ImportFrom: {
          const ImportSite &site = code.imports[in.d];
          Object *m = R[in.b].object();
          R[in.a] = in_.import_from(m ? m->shared_self() : nullptr, site.level, site.module, site.name, site.loc);
          break;
        }
        case Op::ImportStar:
          import_star(f, in);
          break;
        case Op::Unsupported:
          unsupported(code, in);
        case Op::Error:
          raise_python(K_[in.d].str_text(), K_[in.b].str_text(), LOC(in));
        }
        if (in.flags & kBind) [[unlikely]] {
          // Only an object takes its name (a tile created without `name=`).
          std::uint16_t r = in.op == Op::ForNext || in.op == Op::StoreDeref ? in.b : in.a;
          if (R[r].kind == K::Object)
            bind_name(f, in);
        }
      next_insn:;
      }
    } catch (TraceError &e) {
      std::uint32_t at = static_cast<std::uint32_t>(ip - 1 - base);
      if (!e.loc.valid())
        e.loc = code.locs[at];
      throw;
    }
  }
#undef RK_B
#undef RK_C
#undef PC
#undef LOC
}

} // namespace nkicc::eval
