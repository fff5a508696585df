// The machine that runs compiled code: frames on a register stack, the dispatch loop, calls
// with Python's argument binding, and the compiled code of every module, function and class
// body (each compiled once, on first run).
#pragma once

#include "eval/classes.h"
#include "eval/code.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <typeinfo>
#include <memory>
#include <vector>

namespace nkicc::eval {

class ClassObject;
class Tracked;

using trace::CallArgs;
using trace::FunctionObject;
using trace::Interpreter;

/// A register whose local is not bound: kind None with a payload no None value has.
inline void set_unbound(Value &v) {
  v = Value();
  v.i = 1;
}
inline bool is_unbound(const Value &v) { return v.kind == Value::Kind::None && v.i == 1; }

/// Registers of the frames being executed, in chunks that never move, so that a frame's
/// registers stay where they are while it calls others.
class RegisterStack {
public:
  /// Where the stack stood before a push, which its pop restores.
  struct Mark {
    std::size_t chunk = 0, top = 0;
  };

  RegisterStack() = default;
  RegisterStack(const RegisterStack &) = delete;
  RegisterStack &operator=(const RegisterStack &) = delete;

  /// `n` registers, all None; `saved` is given to the matching pop.
  Value *push(std::size_t n, Mark &saved) {
    saved = Mark{chunk_, top_};
    if (!chunks_.empty() && top_ + n <= chunks_[chunk_].size) [[likely]] {
      Value *out = chunks_[chunk_].values.get() + top_;
      top_ += n;
      return out;
    }
    return push_chunk(n);
  }
  /// Releases the registers of the last push (LIFO), leaving them None.
  void pop(Value *regs, std::size_t n, const Mark &saved) {
    for (std::size_t k = 0; k < n; ++k) {
      Value &r = regs[k];
      if (r.is_heap()) {
        r = Value();
      } else {
        r.kind = Value::Kind::None;
        r.i = 0;
      }
    }
    chunk_ = saved.chunk;
    top_ = saved.top;
  }

private:
  struct Chunk {
    std::unique_ptr<Value[]> values;
    std::size_t size = 0;
  };
  std::vector<Chunk> chunks_;
  std::size_t chunk_ = 0, top_ = 0;

  Value *push_chunk(std::size_t n);
};

/// One executing code: its registers and what its names refer to.
struct Frame {
  const Code *code = nullptr;
  Value *regs = nullptr;
  const std::shared_ptr<trace::ModuleObject> *module = nullptr; ///< the module functions made here belong to
  trace::Scope *globals = nullptr;
  /// The namespace of a class body, or of a function's `from m import *` names.
  trace::Scope *ns = nullptr;
  std::shared_ptr<trace::Scope> dynamic_ns;
  const FunctionObject *fn = nullptr;
  std::size_t loop_base = 0;
};

/// How a `for` loop's iteration state (four registers) steps: R[it] is the mode.
enum ForMode : std::int64_t { kForRange = 0, kForSeq = 1, kForIter = 2 };

class Machine {
public:
  explicit Machine(Interpreter &in);
  ~Machine();
  Machine(const Machine &) = delete;
  Machine &operator=(const Machine &) = delete;

  /// Runs a module's body in the module's namespace.
  void run_module(const python::Module &module, const std::shared_ptr<trace::ModuleObject> &m);
  /// Calls any callable (a step, as every call counts one).
  Value call(const Value &callee, CallArgs &args, SourceLoc loc);
  /// Calls a function with Python's argument binding.
  Value call_function(FunctionObject &fn, CallArgs &args);
  /// Empties every cell, class and instance this machine made (the interpreter is ending).
  void break_cycles() {
    cells_.clear_all();
    tracked_.clear_all();
  }

  /// The classes every interpreter has: `object` and the exception classes.
  struct ClassModel {
    Ref<ClassObject> object;
    std::map<std::string, Ref<ClassObject>, std::less<>> exceptions;
    std::map<std::string, std::shared_ptr<trace::ModuleObject>, std::less<>> modules;
  };
  ClassModel &classes();
  Tracked::List &tracked() { return tracked_; }

private:
  Interpreter &in_;
  trace::Cell::Registry cells_;
  Tracked::List tracked_;
  ClassModel classes_;
  RegisterStack stack_;
  std::map<const python::Module *, std::unique_ptr<SymbolTable>> symtables_;
  std::map<const python::Module *, std::unique_ptr<Code>> module_codes_;

  // Argument vectors and subscript records of finished calls, kept for their capacity.
  std::vector<std::vector<Value>> spare_positional_;
  std::vector<std::vector<std::pair<std::string, Value>>> spare_keywords_;
  std::vector<Ref<trace::SliceData>> spare_slices_;
  std::vector<Ref<trace::SeqData>> spare_tuples_;

  struct FrameScope;
  struct PooledArgs;
  struct LocScope;

  Value execute(Frame &f);
  const Code &code_of(FunctionObject &fn);

  /// Counts a step (a call): past the gate, the step or time budget may be spent (an error at loc).
  void count_step(SourceLoc loc) {
    if (++in_.steps_ > in_.step_gate_) [[unlikely]]
      passed_step_gate(loc);
  }
  void passed_step_gate(SourceLoc loc);
  /// The same for the statement that instruction pc of code begins.
  void passed_step_gate(const Code &code, std::uint32_t pc);

  /// A call of `fn` with the `n` arguments in `args` (moved from; the last ones are passed by the
  /// names in `keywords`, when given) bound straight into its registers when its parameters are
  /// plain positional ones and every one gets a value; false when the general binding is needed.
  bool call_simple(FunctionObject &fn, Value *args, std::size_t n, const std::vector<std::string> *keywords,
                   SourceLoc loc, Value &out);
  /// How such a call binds its arguments: plan_simple says whether it can (false: the general
  /// binding is needed, which raises CPython's errors), bind_simple moves them into the
  /// registers, which are fresh from the stack (None).
  static bool plan_simple(const FunctionObject &fn, const Code &code, std::size_t n,
                          const std::vector<std::string> *keywords, BindPlan &b);
  static void bind_simple(const FunctionObject &fn, const BindPlan &b, Value *args, Value *regs);

  /// A Python function that compiled code calls with a simple binding runs in the caller's
  /// dispatch loop, not in a nested execute(): its frame, and where its value goes, are kept
  /// here. Frames are pooled (each in its own allocation, so that a frame stays where it is while
  /// others are pushed) and reused: entering a call allocates nothing.
  struct InlineFrame {
    Frame frame;
    Frame *caller = nullptr;
    const Insn *call = nullptr; ///< the caller's call instruction: its result register and kBind
    /// A constructor call's instance: __init__ must return None, and the call gives this.
    Value instance;
    Value keep_alive; ///< a function only a class held (a constructor's __init__)
    RegisterStack::Mark mark;
    std::size_t nregs = 0;
    SourceLoc saved_loc; ///< the interpreter's location before the call
  };
  std::vector<std::unique_ptr<InlineFrame>> inline_pool_;
  std::size_t inline_depth_ = 0;
  /// Pushes the frame of `fn` called at `site` with `n` arguments (moved from) by the caller's
  /// instruction `call` in `caller`, as call_simple would run it; null when the call needs the
  /// general binding (nothing is changed then).
  InlineFrame *enter_inline(FunctionObject &fn, Value *args, std::size_t n, const CallSite &site, Frame *caller,
                            const Insn *call);
  /// Pops the innermost inline frame, as a finished call_simple would. Inline: every return
  /// takes it, and its rare cases cost a test each.
  [[gnu::always_inline]] void leave_inline() {
    InlineFrame &top = *inline_pool_[--inline_depth_];
    --in_.function_frames_;
    if (in_.loop_stack_.size() != top.frame.loop_base) [[unlikely]]
      in_.loop_stack_.resize(top.frame.loop_base);
    const Code &code = *top.frame.code;
    if (code.defines_functions && !code.cell_regs.empty()) [[unlikely]]
      release_frame(code, top.frame.regs, top.nregs, top.mark);
    else
      stack_.pop(top.frame.regs, top.nregs, top.mark);
    in_.current_loc_ = top.saved_loc;
    if (top.frame.dynamic_ns) [[unlikely]] {
      top.frame.dynamic_ns.reset();
      top.frame.ns = nullptr;
    }
    if (!top.keep_alive.is_none()) [[unlikely]]
      top.keep_alive = Value();
  }
  /// Where execute() resumes: a frame and its next instruction (a null frame: nowhere).
  struct Resume {
    Frame *frame = nullptr;
    const Insn *ip = nullptr;
    bool bad_init = false; ///< __init__ returned a value (in the call's register)
  };
  /// Returns from the innermost inline frame with `value` (moved from), in the dispatch loop:
  /// the caller's call register gets it, and the caller's call instruction is returned (the
  /// caller in `caller`). Null, with nothing done, for a constructor's __init__: return_init.
  [[gnu::always_inline]] const Insn *return_inline(Value &value, Frame *&caller) {
    InlineFrame &top = *inline_pool_[inline_depth_ - 1];
    if (!top.instance.is_none()) [[unlikely]]
      return nullptr;
    Value result = std::move(value); // (it may be one of the registers released here)
    leave_inline();
    caller = top.caller;
    caller->regs[top.call->a] = std::move(result);
    return top.call;
  }
  /// Returns from the innermost inline frame, a constructor's __init__, with `value`: the call
  /// gives the instance, or the value (bad_init) when __init__ returned one, and the caller
  /// resumes after its call instruction.
  Resume return_init(Value &value);
  /// The handler an exception raised by the instruction before `ip` of `fp` goes to: the
  /// frame's own, else its caller's (inline frames left on the way), up to `entry`; nowhere when
  /// none of them has one.
  Resume to_handler(trace::TraceError &e, Frame *fp, const Insn *ip, Frame *entry);
  /// Releases a finished frame's registers (and the closures only it reached).
  void release_frame(const Code &code, Value *regs, std::size_t nregs, const RegisterStack::Mark &mark);
  /// A function's frame over `regs`, whose first registers hold its arguments (the others are
  /// None, fresh from the stack: an unbound local only needs its payload set).
  [[gnu::always_inline]] void prepare_frame(FunctionObject &fn, const Code &code, Value *regs, Frame &f) {
    for (std::size_t k = code.nparams; k < code.nlocals; ++k)
      regs[k].i = 1;
    if (!code.free_regs.empty()) [[unlikely]]
      for (std::size_t k = 0; k < code.free_regs.size() && k < fn.closure.size(); ++k)
        regs[code.free_regs[k]] = Value::object(fn.closure[k]);
    f.code = &code;
    f.regs = regs;
    f.module = &fn.module;
    f.globals = fn.module ? &fn.module->globals() : nullptr;
    f.fn = &fn;
    f.loop_base = in_.loop_stack_.size();
  }
  /// The __init__ (a compiled function) of a plain class called at `site`, or null.
  const Value *plain_init(ClassObject &cls, const CallSite &site);
  static void check_init_result(const Value &result);
  /// Binds `args` to `code`'s parameters in `regs`, with CPython's messages.
  void bind_arguments(FunctionObject &fn, const Code &code, CallArgs &args, Value *regs);
  /// Runs `fn`'s code in a new frame whose first registers hold the arguments.
  Value run_function(FunctionObject &fn, const Code &code, Value *regs);

  /// Calls `callee` with `n` arguments in registers (moved from); args[-1] is the callee's register.
  Value call_registers(const Value &callee, Value *args, std::size_t n, const CallSite &site);
  std::optional<Value> instantiate_simple(ClassObject &cls, Value *args, std::size_t n, const CallSite &site);
  void store_attr(Frame &f, const Insn &in);
  Value call_method(Frame &f, const Insn &in);
  Value call_ex(Frame &f, const Insn &in, bool method);
  void load_method(Frame &f, const Insn &in);
  Value load_attr(Frame &f, const Insn &in, const Value &obj);
  Value load_global(Frame &f, const Insn &in);
  Value load_name(Frame &f, const Insn &in);
  void store_name(Frame &f, Symbol name, const Value &v);
  void bind_name(Frame &f, const Insn &in);
  Value make_function(Frame &f, const Insn &in);
  void for_prep(Frame &f, const Insn &in);
  bool for_next_slow(Value *regs, const Insn &in);
  /// ForNext and ForLoop: the next item of the iteration R[a] into R[b]; false when exhausted.
  [[gnu::always_inline]] bool next_item(Value *regs, const Insn &in) {
    Value *it = regs + in.a;
    switch (it[0].i) {
    case kForRange:
      if (it[3].i <= 0)
        return false;
      if (regs[in.b].is_heap())
        regs[in.b] = Value();
      regs[in.b].kind = Value::Kind::Int;
      regs[in.b].i = it[1].i;
      it[1].i = static_cast<std::int64_t>(static_cast<std::uint64_t>(it[1].i) + static_cast<std::uint64_t>(it[2].i));
      --it[3].i;
      return true;
    case kForSeq: {
      const auto &items = it[1].seq().items;
      auto k = static_cast<std::size_t>(it[2].i);
      if (k >= items.size())
        return false;
      regs[in.b] = items[k];
      it[2].i = static_cast<std::int64_t>(k + 1);
      return true;
    }
    default:
      return for_next_slow(regs, in);
    }
  }
  void unpack(Frame &f, const Insn &in);
  void inplace_name(Frame &f, const Insn &in);
  void aug_item(Frame &f, const Insn &in);
  Value format(Frame &f, const Insn &in);
  Value build_string(Frame &f, const Insn &in);
  Value build_slice(Frame &f, const Insn &in);
  Value build_tuple_key(Frame &f, const Insn &in);
  void recycle_key(Value &key);
  void dict_merge(Frame &f, const Insn &in);
  void import_star(Frame &f, const Insn &in);
  [[noreturn]] void raise(Frame &f, const Insn &in);
  bool exception_matches(const Value &exc, const Value &cls);
  Value call_values(const Value &fn, std::vector<Value> args, SourceLoc loc);
  void with_enter(Frame &f, const Insn &in);
  void with_exit_exc(Frame &f, const Insn &in);
  Value make_class(Frame &f, const Insn &in);
  void add_annotation(Frame &f, const Insn &in);
  void delete_item(Frame &f, const Insn &in);
  void delete_attr(Frame &f, const Insn &in);
  [[noreturn]] void unsupported(const Code &code, const Insn &in);
  /// Clears the cells of a finished call when only the call and its own nested functions
  /// reached them, so that a helper with a recursive nested function runs in bounded memory.
  void release_closures(const Code &code, Value *regs);
};

/// The Object if its type is exactly T (not a subclass, which may override T's behaviour).
template <class T> T *exactly(const Value &v) {
  trace::Object *obj = v.object();
  return obj && &typeid(*obj) == &typeid(T) ? static_cast<T *>(obj) : nullptr;
}

/// An iterator held in a register while a `for` loop runs.
class IteratorObject : public trace::Object {
public:
  explicit IteratorObject(std::unique_ptr<trace::Iterator> i) : it(std::move(i)) {}
  std::string_view type_name() const override { return "iterator"; }
  std::unique_ptr<trace::Iterator> it;
};

/// Enters a function's frame: registers, the call depth and the kernel name, restored on exit
/// however the call ends.
struct Machine::FrameScope {
  Machine &m;
  Interpreter &in;
  RegisterStack::Mark mark; ///< (before regs, which the push that fills it initializes)
  Value *regs;
  std::size_t nregs;
  std::size_t loop_base;
  const Code *code;
  bool entered = false;

  FrameScope(Machine &machine, Interpreter &interp, std::size_t n)
      : m(machine), in(interp), mark(), regs(machine.stack_.push(n, mark)), nregs(n),
        loop_base(interp.loop_stack_.size()), code(nullptr) {}
  void enter(const FunctionObject &fn) {
    if (in.function_frames_ == 0)
      in.kernel_name_ = std::string(fn.name);
    ++in.function_frames_;
    entered = true;
  }
  ~FrameScope() {
    if (entered)
      --in.function_frames_;
    in.loop_stack_.resize(loop_base);
    if (code)
      m.release_frame(*code, regs, nregs, mark);
    else
      m.stack_.pop(regs, nregs, mark);
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

} // namespace nkicc::eval
