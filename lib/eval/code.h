// Compiled code: the instructions of one function, lambda, class body or module body, with
// their source locations, constants, inline caches and call sites, and the templates of the
// functions and classes it defines (each compiled on its first call).
#pragma once

#include "eval/opcodes.h"
#include "eval/symtable.h"
#include "nkicc/trace/interpreter.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace nkicc::eval {

using trace::make_ref;
using trace::raise_error;
using trace::raise_python;
using trace::Ref;
using trace::Value;

enum class CodeKind : std::uint8_t { Module, Function, Lambda, Class };

/// A global (or builtin) looked up by name, remembered while neither namespace changes shape.
struct GlobalCache {
  Symbol name;
  const trace::Scope *globals = nullptr;
  std::uint64_t globals_version = 0;
  std::uint64_t builtins_version = 0;
  const Value *slot = nullptr;
};

/// An attribute looked up by name; `key` is the type the entry was made for (a module's globals,
/// a class) and `epoch` the state of classes it assumed. A site that sees two types in turn (a
/// base class and a subclass) keeps an entry for each: the one in use is the primary, the other
/// waits in `second`.
struct AttrCache {
  struct Entry {
    const void *key = nullptr;
    std::uint64_t epoch = 0;
    std::uint32_t index = 0;
    std::uint8_t kind = 0;
    const Value *slot = nullptr;
  };
  Symbol name;
  const void *key = nullptr;
  std::uint64_t epoch = 0;
  std::uint32_t index = 0;
  std::uint8_t kind = 0;
  const Value *slot = nullptr;
  Entry second;

  /// Whether an entry for `k` at `e` is cached; the second one is swapped in when it is that.
  bool probe(const void *k, std::uint64_t e) {
    if (key == k && epoch == e)
      return true;
    if (second.key != k || second.epoch != e)
      return false;
    Entry first{key, epoch, index, kind, slot};
    key = second.key;
    epoch = second.epoch;
    index = second.index;
    kind = second.kind;
    slot = second.slot;
    second = first;
    return true;
  }
  /// Keeps the primary entry as the second one, before the primary is refilled.
  void demote() { second = Entry{key, epoch, index, kind, slot}; }
};

/// An AttrCache's kind at a StoreAttr site: "write the instance's slot `index`".
inline constexpr std::uint8_t kStoreSlot = 0x80;

/// How a call binds its arguments straight into the callee's registers (Machine::plan_simple,
/// bind_simple): the first `given` arguments positionally, the `nkw` keyword arguments after
/// them into parameters `slot`, and the parameters from `first_default` on that neither gave
/// from the function's defaults.
struct BindPlan {
  std::uint16_t npos = 0, nkw = 0, given = 0, first_default = 0;
  std::uint64_t bound = 0;                ///< parameters given (with keywords)
  std::array<std::uint16_t, 8> slot = {}; ///< each keyword's parameter
};

struct CallSite {
  SourceLoc loc;      ///< the call expression
  SourceLoc func_loc; ///< its callee
  /// Names of the keyword arguments, which are the last of the call's arguments.
  std::vector<std::string> keywords;
  AttrCache attr; ///< CallMethod: the method's name
  /// A call of a plain class: its `__init__` (slot), for the class (key) at the epoch.
  AttrCache ctor;
  /// A method of a built-in value called here (`xs.append(x)`): the value kind it was found
  /// for, and the method (pylib's MethodImpl), so that the next call skips the lookup by name.
  Value::Kind method_kind = Value::Kind::None;
  Value (*method)(trace::Interpreter &, const Value &self, trace::CallArgs &) = nullptr;
  /// How the last compiled function called here binds its arguments, for its code, argument
  /// count and number of defaults: a call site almost always calls one function the same way,
  /// so the keywords are matched to parameters once.
  const Code *plan_code = nullptr;
  std::size_t plan_n = 0, plan_ndefaults = 0;
  BindPlan plan;
};

/// `[start, end)` of instructions whose exceptions go to `target`, with the exception in
/// register `exc`; `loops` is the number of loops of the frame open at `target`.
struct Handler {
  std::uint32_t start = 0, end = 0, target = 0;
  std::uint16_t exc = 0;
  std::uint16_t loops = 0;
};

/// The statement an instruction flagged kStep begins, for the step budget's message.
struct StepLoc {
  std::uint32_t pc;
  SourceLoc loc;
};

/// One `import` name or `from` import.
struct ImportSite {
  bool from = false;
  std::uint32_t level = 0;
  std::string module; ///< dotted, without the leading dots
  std::string name;   ///< from-imports: the imported name
  bool has_asname = false;
  SourceLoc loc; ///< the alias, for ImportError
};

struct Param {
  std::string_view name;
  Symbol symbol;
  std::uint16_t reg = 0;
  bool cell = false; ///< captured by a nested function: wrapped in a cell at entry
};

struct FunctionTemplate;
struct ClassTemplate;

struct Code {
  CodeKind kind = CodeKind::Function;
  std::string_view name;
  std::string qualname;
  const ScopeInfo *scope = nullptr;

  std::vector<Insn> insns;
  std::vector<SourceLoc> locs; ///< per instruction: the construct whose errors it raises
  std::vector<StepLoc> step_locs;
  std::vector<SourceLoc> extra_locs;
  std::vector<Value> consts;
  std::vector<Symbol> names;
  std::vector<GlobalCache> globals;
  std::vector<AttrCache> attrs;
  std::vector<CallSite> calls;
  std::vector<Handler> handlers;
  std::vector<ImportSite> imports;
  std::vector<std::unique_ptr<FunctionTemplate>> functions;
  std::vector<std::unique_ptr<ClassTemplate>> classes;

  std::uint16_t nregs = 0;
  /// Registers [0, nlocals) are the named locals (parameters first); the rest are temporaries.
  std::uint16_t nlocals = 0;
  /// The name of each local register, for on_bind and `from m import *`.
  std::vector<Symbol> local_names;

  // The signature (functions and lambdas).
  std::vector<Param> positional; ///< posonly then ordinary
  std::size_t posonly = 0;
  std::vector<Param> kwonly;
  Param vararg, kwarg;
  bool has_vararg = false, has_kwarg = false;
  /// Registers [0, nparams) receive the arguments: positional, keyword-only, *args, **kwargs.
  std::uint16_t nparams = 0;
  /// Only positional parameters, none in a cell: a call binds R[0..n) directly.
  bool simple_params = true;
  /// Registers receiving the closure's cells at entry, in the order of scope->free.
  std::vector<std::uint16_t> free_regs;
  /// Registers that hold cells made at entry (locals captured by nested functions).
  std::vector<std::uint16_t> cell_regs;
  /// The register holding `__class__` (a class body with methods that need it).
  std::uint16_t class_cell = kNoReg;
  /// A function using `from m import *`: unknown names are looked up in its namespace.
  bool dynamic_names = false;
  /// The code makes functions that may close over its frame (cycles to break at exit).
  bool defines_functions = false;

  SourceLoc step_loc(std::uint32_t pc) const;
};

/// A `def` or lambda: compiled on first call.
struct FunctionTemplate {
  const python::Arguments *params = nullptr;
  const python::FunctionDefStmt *def = nullptr;
  const python::LambdaExpr *lambda = nullptr;
  std::string_view name;
  std::string qualname;
  const ScopeInfo *scope = nullptr;
  const SymbolTable *symtable = nullptr;
  /// Registers of the defining code holding the cells of scope->free, in order.
  std::vector<std::uint16_t> closure_regs;
  std::size_t ndefaults = 0;
  /// Which keyword-only parameters have a default (their values follow the positional ones).
  std::vector<bool> kw_has_default;
  std::unique_ptr<Code> code;
};

/// A class statement: its body is compiled on first execution.
struct ClassTemplate {
  const python::ClassDefStmt *def = nullptr;
  std::string qualname;
  const ScopeInfo *scope = nullptr;
  const SymbolTable *symtable = nullptr;
  std::vector<std::uint16_t> closure_regs;
  /// Names of the class keywords (`metaclass=`, dataclass-style options), whose values follow
  /// the bases.
  std::vector<std::string> keywords;
  std::unique_ptr<Code> code;
};

} // namespace nkicc::eval
