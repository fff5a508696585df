// The machine that runs compiled code: frames on a register stack, the dispatch loop, calls
// with Python's argument binding, and the compiled code of every module, function and class
// body (each compiled once, on first run).
#pragma once

#include "eval/code.h"

#include <map>
#include <memory>
#include <vector>

namespace nkicc::eval {

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
  RegisterStack() = default;
  RegisterStack(const RegisterStack &) = delete;
  RegisterStack &operator=(const RegisterStack &) = delete;

  /// `n` registers, all None.
  Value *push(std::size_t n);
  /// Releases the registers of the last push (LIFO).
  void pop(Value *regs, std::size_t n);

private:
  struct Chunk {
    std::unique_ptr<Value[]> values;
    std::size_t size = 0;
  };
  std::vector<Chunk> chunks_;
  std::size_t chunk_ = 0, top_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> marks_;
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
  /// Empties every cell this machine made (the interpreter is ending).
  void break_cycles() { cells_.clear_all(); }

private:
  Interpreter &in_;
  trace::Cell::Registry cells_;
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

  void step(const Code &code, std::uint32_t pc);
  [[noreturn]] void step_budget(const Code &code, std::uint32_t pc);

  /// A call of `fn` with `n` positional arguments in `args` (moved from) when its parameters
  /// take them without keywords; false when the general binding is needed.
  bool call_simple(FunctionObject &fn, Value *args, std::size_t n, SourceLoc loc, Value &out);
  /// Binds `args` to `code`'s parameters in `regs`, with CPython's messages.
  void bind_arguments(FunctionObject &fn, const Code &code, CallArgs &args, Value *regs);
  /// Runs `fn`'s code in a new frame whose first registers hold the arguments.
  Value run_function(FunctionObject &fn, const Code &code, Value *regs);

  Value call_registers(const Value &callee, Value *args, std::size_t n, const CallSite &site);
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
  bool for_next_slow(Frame &f, const Insn &in);
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
  [[noreturn]] void unsupported(const Code &code, const Insn &in);
  /// Clears the cells of a finished call when only the call and its own nested functions
  /// reached them, so that a helper with a recursive nested function runs in bounded memory.
  void release_closures(const Code &code, Value *regs);
};

} // namespace nkicc::eval
