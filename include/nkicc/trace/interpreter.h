// nkicc's interpreter for the Python subset of SPEC §3: it runs module-level statements and
// re-executes kernel bodies with concrete arguments. It knows Python; it knows nothing of NKI,
// which reaches it through Object subclasses and the module resolver.
#pragma once

#include "nkicc/python/ast.h"
#include "nkicc/python/symbol.h"
#include "nkicc/trace/value.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc::eval {
class Machine;
struct FunctionTemplate;
struct Code;
} // namespace nkicc::eval

namespace nkicc::trace {

/// Names bound in one namespace (a module's globals, a class body's namespace), by interned
/// symbol, in the order they were first bound. A small scope scans a vector of symbols; a large
/// one (a module's globals, the builtins) also keeps a hash index from symbol to entry.
/// `version()` changes whenever an entry is added or removed (not when a value is rebound), so
/// that compiled code may remember where a name's value lives.
class Scope : public HeapData {
public:
  struct Entry {
    python::Symbol symbol;
    bool bound = true; ///< always true (kept for the entries' users)
    Value value;
    std::string_view name() const { return symbol.name(); }
  };

  Scope() : version_(next_version()) {}
  Value *find_local(std::string_view name);
  Value *find_local(python::Symbol name) {
    Entry *entry = find_entry(name);
    return entry ? &entry->value : nullptr;
  }
  void set(std::string_view name, Value value);
  void set(python::Symbol name, Value value);
  bool erase(std::string_view name);
  bool erase(python::Symbol name);
  /// Drops every binding (the interpreter breaks reference cycles with it).
  void clear();
  /// The entries in the order they were first made.
  const std::vector<Entry> &entries() const { return entries_; }
  std::uint64_t version() const { return version_; }

private:
  Entry *find_entry(python::Symbol name) {
    if (index_.empty()) {
      for (Entry &entry : entries_)
        if (entry.symbol == name)
          return &entry;
      return nullptr;
    }
    return find_indexed(name);
  }
  Entry *find_indexed(python::Symbol name);
  void rebuild_index();
  /// Versions are unique across all scopes, so that (scope, version) names one state.
  static std::uint64_t next_version();
  std::vector<Entry> entries_;
  /// Open addressing by symbol id (entry position + 1, 0 when free), once entries_ is large.
  std::vector<std::uint32_t> index_;
  std::uint64_t version_;
};

/// A module: its globals. NKI's modules (nl, nisa, ...) are ModuleObjects whose globals the NKI
/// layer fills; a kernel source file is one too.
class ModuleObject : public Object {
public:
  explicit ModuleObject(std::string name) : name_(std::move(name)), globals_(std::make_shared<Scope>()) {}
  std::string_view type_name() const override { return "module"; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  std::string repr() const override { return "<module '" + name_ + "'>"; }
  const std::string &name() const { return name_; }
  Scope &globals() { return *globals_; }
  const std::shared_ptr<Scope> &globals_ptr() const { return globals_; }

private:
  std::string name_;
  std::shared_ptr<Scope> globals_;
};

/// A module nkicc does not model (`torch`, `argparse`, ...): attribute access and calls give
/// further placeholders, so host code at module level is harmless; using one inside a traced
/// kernel (arithmetic, control flow, indexing) is an error naming the module (SPEC §3).
class OpaqueObject final : public Object {
public:
  /// `unmodelled`: the placeholder stands for a name real Python, NumPy or NKI has and nkicc
  /// does not model yet (lib/pylib/unmodelled.cpp): using it in a kernel says so
  /// (`nkicc does not model 'nl.softmax' yet`) instead of naming an unmodelled module.
  explicit OpaqueObject(std::string path, bool unmodelled = false) : path_(std::move(path)), unmodelled_(unmodelled) {}
  /// lib: a placeholder for an import nkicc could not resolve, with where it looked (`common.py
  /// in k/ and .`): the message of a use inside a kernel says so.
  OpaqueObject(std::string path, std::shared_ptr<const std::string> searched)
      : path_(std::move(path)), searched_(std::move(searched)) {}
  /// lib: a placeholder whose use in a kernel raises `[unmodelled] message` (what launching a
  /// kernel from host code gives: `nkicc does not model the result of launching kernel ...`).
  static std::shared_ptr<OpaqueObject> with_use_message(std::string path, std::string message);
  std::string_view type_name() const override { return "opaque"; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  Value call(Interpreter &interp, CallArgs &args) override;
  std::string repr() const override { return "<" + path_ + ">"; }
  const std::string &path() const { return path_; }
  /// The placeholder's module (`torch` for `torch.nn.functional.relu()`).
  std::string_view module_name() const;

  // In host code (no kernel trace in progress) these give further placeholders; during a
  // kernel's trace they raise a TypeError naming the module.
  void set_attr(Interpreter &interp, std::string_view name, const Value &value) override;
  Value get_item(Interpreter &interp, const Value &key) override;
  void set_item(Interpreter &interp, const Value &key, const Value &value) override;
  std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind op, const Value &other,
                                 bool reflected) override;
  std::optional<Value> unary_op(Interpreter &interp, python::UnaryOpKind op) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &interp) override;
  std::unique_ptr<Iterator> iterate(Interpreter &interp) override;
  /// Raises the TypeError for using this placeholder as `what` inside a kernel.
  [[noreturn]] void raise_use(std::string_view what) const;
  bool unmodelled() const { return unmodelled_; }
  bool is_host_placeholder() const override { return true; }

  /// A placeholder derived from this one (an attribute, a call's result): it keeps what a use
  /// in a kernel reports.
  Value derive(std::string path) const;

private:
  std::string path_;
  bool unmodelled_ = false;
  std::shared_ptr<const std::string> searched_;
  std::shared_ptr<const std::string> use_message_;
};

/// A variable shared between a function and the functions nested in it (CPython's cell).
class Cell final : public Object {
public:
  /// The live cells of one interpreter, which breaks the cycles through them when it ends (a
  /// nested function that calls itself holds the cell that holds it).
  struct Registry {
    Cell *head = nullptr;
    ~Registry();
    /// Empties every live cell.
    void clear_all();
  };
  explicit Cell(Registry *registry = nullptr);
  ~Cell() override;
  Cell(const Cell &) = delete;
  Cell &operator=(const Cell &) = delete;
  std::string_view type_name() const override { return "cell"; }

  Value value;
  bool bound = false;

private:
  Registry *registry_;
  Cell *prev_ = nullptr, *next_ = nullptr;
};

/// A `def` (or lambda) with its defaults evaluated at definition and the cells it closes over.
class FunctionObject final : public Object {
public:
  std::string_view type_name() const override { return "function"; }
  Value call(Interpreter &interp, CallArgs &args) override;
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  void set_attr(Interpreter &interp, std::string_view name, const Value &value) override;
  std::string repr() const override;

  std::string_view name;
  std::string qualname;                          ///< `outer.<locals>.inner`, for messages
  const python::FunctionDefStmt *def = nullptr;  ///< null for a lambda
  eval::FunctionTemplate *tmpl = nullptr;        ///< the code to run (compiled on first call)
  std::vector<Value> defaults;                   ///< aligned with the last positional parameters
  std::vector<std::optional<Value>> kw_defaults; ///< aligned with the keyword-only parameters
  std::vector<Ref<Cell>> closure;                ///< the cells of the template's free variables
  std::shared_ptr<ModuleObject> module;          ///< globals
  /// Attributes set on the function (`f.__wrapped__ = g`), by name.
  std::vector<std::pair<std::string, Value>> attrs;
};

/// A function implemented in C++ (builtins, NKI ops).
class BuiltinFunction : public Object {
public:
  using Impl = std::function<Value(Interpreter &, CallArgs &)>;
  BuiltinFunction(std::string name, Impl impl) : name_(std::move(name)), impl_(std::move(impl)) {}
  std::string_view type_name() const override { return "builtin_function_or_method"; }
  Value call(Interpreter &interp, CallArgs &args) override { return impl_(interp, args); }
  std::string repr() const override { return "<built-in function " + name_ + ">"; }
  const std::string &name() const { return name_; }

private:
  std::string name_;
  Impl impl_;
};

/// Builtin types usable with isinstance() and as constructors: int, float, bool, str, tuple,
/// list, dict, range, slice, type(None).
class TypeObject : public Object {
public:
  std::string_view type_name() const override { return "type"; }
  Value call(Interpreter &interp, CallArgs &args) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  std::string repr() const override { return "<class '" + name + "'>"; }
  /// Whether `v` is an instance (bool is an int; an Object matches by type name).
  bool is_instance(const Value &v) const;
  std::string name;
  Value::Kind instance_kind = Value::Kind::None;
};

/// `range(start, stop, step)`: lazy, so that `for i in range(65536)` never builds a list.
class RangeObject final : public Object {
public:
  RangeObject(std::int64_t first, std::int64_t last, std::int64_t stride) : start(first), stop(last), step(stride) {}
  std::string_view type_name() const override { return "range"; }
  Value get_item(Interpreter &interp, const Value &key) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override { return count() > 0; }
  std::unique_ptr<Iterator> iterate(Interpreter &interp) override;
  LoopKind loop_kind() const override { return LoopKind::Range; }
  std::string repr() const override;
  // lib/pylib: `r.start`, `r.index(x)`, len(), hash(), `in`; count() is exact where the
  // length exceeds int64 (range(-5, 2**63 - 1)), length() raises OverflowError there, as
  // CPython's len() does.
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  std::optional<std::int64_t> length(Interpreter &) override { return length(); }
  std::optional<std::int64_t> hash(Interpreter &interp) override;
  std::optional<bool> contains(Interpreter &interp, const Value &item) override;
  std::uint64_t count() const;
  std::int64_t length() const;
  bool contains(std::int64_t v) const;
  std::int64_t start, stop, step;
};

/// A built-in exception class (`ValueError`): calling it makes an ExceptionObject, which
/// `raise` turns into a TraceError with the class name as id.
class ExceptionTypeObject final : public Object {
public:
  explicit ExceptionTypeObject(std::string type) : name(std::move(type)) {}
  std::string_view type_name() const override { return "type"; }
  Value call(Interpreter &interp, CallArgs &args) override;
  std::string repr() const override { return "<class '" + name + "'>"; }
  std::string name;
};
class ExceptionObject final : public Object {
public:
  std::string_view type_name() const override { return type; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  std::string repr() const override;
  /// str(exc): '' without arguments, str(arg) with one, the tuple's repr with more.
  std::string message() const;
  std::string type;
  std::vector<Value> args;
};

/// A slice resolved against a length: `count` items from `start` by `step` (CPython's
/// PySlice_AdjustIndices).
struct ResolvedSlice {
  std::int64_t start, step, count;
};
ResolvedSlice resolve_slice(const SliceData &s, std::int64_t length);

/// Values, and str bytes, an operation copies that count as one step (Interpreter::count_copy),
/// about what the statements of a step cost: 200,000 passes of `s = s + "a"` stay well inside the
/// default budget, an endless one ends at it within seconds.
inline constexpr std::uint64_t kItemsPerCopyStep = 32;
inline constexpr std::uint64_t kBytesPerCopyStep = 512;

struct InterpreterLimits {
  std::uint64_t max_steps = 200'000'000;          ///< statements + calls: a runaway loop ends in an error
  std::uint32_t max_call_depth = 200;             ///< Python's RecursionError, well before the C++ stack
  std::uint64_t max_sequence_length = 50'000'000; ///< `[0] * n`, `range` materialized, str repeat
  /// Wall time a kernel trace (or a file's module-level code) may take; zero: no limit. The
  /// clock is read between statements, every kClockSteps steps, so one statement that runs long
  /// (a sort of a huge list) is stopped only after it; the step and memory budgets bound those.
  std::chrono::milliseconds max_trace_time{0};
};

/// Provides modules by dotted name for `import` (`neuronxcc.nki.language`). Returns null for a
/// module it does not know: the interpreter then binds an OpaqueObject.
using ModuleResolver = std::function<std::shared_ptr<Object>(Interpreter &, std::string_view dotted_name)>;

class Interpreter {
public:
  Interpreter(const SourceManager &sources, InterpreterLimits limits, ModuleResolver resolver);
  ~Interpreter();
  Interpreter(const Interpreter &) = delete;
  Interpreter &operator=(const Interpreter &) = delete;

  /// Runs a parsed file's module-level statements in order (imports, constants, defs; `if
  /// __name__ == "__main__":` is false, `__name__` being the module's name) and returns the
  /// module. Throws TraceError.
  std::shared_ptr<ModuleObject> run_module(const python::Module &module, std::string name);

  /// Calls any callable value. Throws TraceError.
  Value call(const Value &callee, CallArgs &args);

  /// Python's truth value, str(), iteration and the binary operators, for the NKI layer.
  bool truthy(const Value &v);
  Value binary_op(python::BinOpKind op, const Value &left, const Value &right, SourceLoc loc = {});
  std::unique_ptr<Iterator> iterate(const Value &v, SourceLoc loc = {});

  /// The innermost loop kind around the statement being executed (None outside loops), and
  /// the depth of loops: the tracer records it on every instruction it emits.
  LoopKind current_loop_kind() const { return loop_stack_.empty() ? LoopKind::None : loop_stack_.back(); }
  std::size_t loop_depth() const { return loop_stack_.size(); }
  /// The call depth (0 in the kernel's own body, 1 in a helper it calls, ...).
  std::size_t call_depth() const { return function_frames_ ? function_frames_ - 1 : 0; }

  /// `print(...)` output; the tool logs it at info level.
  void set_print_handler(std::function<void(const std::string &)> handler) { print_ = std::move(handler); }

  /// The location of the expression being evaluated, for errors raised by NKI objects.
  SourceLoc current_loc() const { return current_loc_; }
  /// The `return` statement executed last: right after a call, the one that gave its value
  /// (invalid when none has run, or for a lambda's implicit return).
  SourceLoc last_return_loc() const { return last_return_loc_; }

  const SourceManager &sources() const { return sources_; }
  std::uint64_t steps() const { return steps_; }

  /// The budgets a run of Python code can spend (besides memory, which operator new counts).
  enum class Budget : std::uint8_t { None, Steps, Time };
  /// lib: steps_ passed step_gate_: the budget that is spent, if any; else the gate moves on to
  /// the next look at the clock. The evaluator counts steps and calls this on its slow path.
  Budget check_budgets();
  /// lib: the located error of a spent budget ([step-budget] or [time-budget]).
  [[noreturn]] void budget_error(Budget spent, SourceLoc loc) const;
  /// Starts the wall-time budget anew (a kernel trace begins; a file's module code runs).
  void restart_clock();

  /// The builtins scope (`len`, `range`, `int`, ...) and the `math` module.
  Scope &builtins() { return *builtins_; }
  const std::shared_ptr<ModuleObject> &math_module() const { return math_; }

  // Python's operators and protocols on any value, for builtins and the NKI layer. Each
  // throws TraceError in Python's words, located at `loc` when given.
  Value unary_op(python::UnaryOpKind op, const Value &operand, SourceLoc loc = {});
  /// One comparison (`a < b`); the result of an Object's compare hook may be any value.
  Value compare(python::CmpOpKind op, const Value &left, const Value &right, SourceLoc loc = {});
  bool contains(const Value &container, const Value &item, SourceLoc loc = {});
  Value get_attr(const Value &v, std::string_view name, SourceLoc loc = {});
  /// `getattr(v, name, None)` without raising AttributeError.
  std::optional<Value> find_attr(const Value &v, std::string_view name);
  void set_attr(const Value &v, std::string_view name, const Value &value, SourceLoc loc = {});
  Value get_item(const Value &container, const Value &key, SourceLoc loc = {});
  void set_item(const Value &container, const Value &key, const Value &value, SourceLoc loc = {});
  /// format(v, spec): Python's format-spec mini-language for int, float, bool and str.
  std::string format(const Value &v, std::string_view spec);
  /// Every item of an iterable, materialized (bounded by max_sequence_length).
  std::vector<Value> to_list(const Value &iterable, SourceLoc loc = {});
  // lib (lib/trace/module_loader.cpp, lib/trace/imports.cpp): imports. ------------------------
  /// A module by dotted name, cached as sys.modules: the resolver's (NKI, NumPy), `math`, the
  /// standard library's (pylib's, then eval's class-based modules), then a kernel file or
  /// package through the ModuleLoader (a parent package is imported first). `level` > 0 is
  /// `from ..name import`: relative to the importing module's package, ImportError in Python's
  /// words beyond the top-level package. Null when unknown.
  std::shared_ptr<Object> import_module(std::string_view dotted_name, int level = 0, SourceLoc loc = {});
  /// The value `import dotted` binds in `importer`'s code: the top-level package (with `dotted`
  /// reachable from it by attributes), or with `as`, the module itself; placeholders for what is
  /// unknown.
  Value import_name(std::string_view dotted, bool has_asname, ModuleObject *importer = nullptr, SourceLoc loc = {});
  /// The module a `from` import (`level` leading dots) in `importer`'s code reads names from;
  /// null when unknown.
  std::shared_ptr<Object> import_from_module(std::uint32_t level, std::string_view module,
                                             ModuleObject *importer = nullptr, SourceLoc loc = {});
  /// `from module import name`: the value bound (an ImportError located at `loc` when the
  /// module is known but has no such name; a placeholder when the module is unknown).
  Value import_from(const std::shared_ptr<Object> &module, std::uint32_t level, std::string_view module_name,
                    std::string_view name, SourceLoc loc, ModuleObject *importer = nullptr);
  /// The placeholder bound for a module nkicc could not find: using it in a kernel names the
  /// module and where nkicc looked for it.
  Value unresolved_module(std::string_view name) const;
  /// ImportError for `from module import name` when `name` is missing: "cannot import name 'x'
  /// from 'm' (path)", or "... from partially initialized module ..." inside an import cycle.
  [[noreturn]] void raise_cannot_import(const Object &module, std::string_view module_name, std::string_view name,
                                        SourceLoc loc) const;
  /// Finds kernel files for import_module(); null (the default) imports no files.
  void set_module_loader(class ModuleLoader *loader) { loader_ = loader; }
  class ModuleLoader *module_loader() const {
    return loader_;
  }
  /// sys.modules: binds or forgets a module under a dotted name.
  void set_module(std::string_view name, std::shared_ptr<Object> module);
  void forget_module(std::string_view name);
  /// The module whose import statement is being executed, or null outside any.
  ModuleObject *current_module() const { return importer_; }
  /// Runs a parsed file's module-level statements into `into` (already registered, so that an
  /// import cycle sees it partially initialized).
  void run_module(const python::Module &module, const std::shared_ptr<ModuleObject> &into);
  void print(const std::string &text) {
    if (print_)
      print_(text);
  }
  /// Whether a function body (not module-level code) is executing.
  bool in_function() const { return function_frames_ > 0; }
  /// Whether a kernel is being traced (the tracer's call of it, and everything it calls), as
  /// opposed to host code: module-level statements and the functions they call, such as a
  /// file's own test code launching its kernels. Placeholders are inert in host code only.
  bool tracing_kernel() const { return tracing_kernel_; }
  /// lib: marks a kernel trace for its lifetime (the tracer holds one per traced call).
  class KernelTraceScope {
  public:
    explicit KernelTraceScope(Interpreter &interp) : interp_(interp), saved_(interp.tracing_kernel_) {
      interp.tracing_kernel_ = true;
      interp.restart_clock();
    }
    ~KernelTraceScope() { interp_.tracing_kernel_ = saved_; }
    KernelTraceScope(const KernelTraceScope &) = delete;
    KernelTraceScope &operator=(const KernelTraceScope &) = delete;

  private:
    Interpreter &interp_;
    bool saved_;
  };
  /// The outermost function being executed (the kernel), or empty at module level.
  const std::string &kernel_name() const { return kernel_name_; }
  const InterpreterLimits &limits() const { return limits_; }
  /// `self.name(args)` for a method of a built-in value (`lst.append(x)`, `d.items()`,
  /// `s.join(...)`); nullopt when the value has no such method.
  std::optional<Value> call_method(const Value &self, std::string_view name, CallArgs &args);
  /// The evaluator (the class model and the compiled code reach it through this).
  eval::Machine &machine() { return *machine_; }
  /// Sorts as `sorted(items, key=key, reverse=reverse)` (stable, by `<`).
  void sort(std::vector<Value> &items, const Value *key, bool reverse);
  /// Raises MemoryError when a sequence of `n` items would exceed max_sequence_length.
  void check_length(std::uint64_t n) const;
  /// An operation copied `items` values into a new sequence (`a + b`, `xs * n`, `list(xs)`):
  /// every kItemsPerCopyStep of them count as a step, so that a loop that copies a growing value
  /// (`xs = xs + [x]`, quadratic) or a large one ends at the step budget within seconds, as a
  /// loop of cheap statements does. (The budget is looked at by the next step.)
  void count_copy(std::uint64_t items) const { steps_ += items / kItemsPerCopyStep; }
  /// The same for `bytes` characters copied into a new str, which cost far less each.
  void count_text_copy(std::uint64_t bytes) const { steps_ += bytes / kBytesPerCopyStep; }

private:
  friend class eval::Machine;
  friend class FunctionObject;
  friend class OpaqueObject;
  std::shared_ptr<ModuleObject> math_;
  std::size_t function_frames_ = 0;
  bool tracing_kernel_ = false;
  std::string kernel_name_;
  std::map<std::string, std::shared_ptr<Object>, std::less<>> modules_;
  /// Names that are none of nkicc's own modules (NKI's, the standard library's): an import of
  /// one goes straight to the kernel files (a kernel may import it in a loop).
  std::set<std::string, std::less<>> not_builtin_;
  /// Module namespaces that hold functions that hold them: cleared when the interpreter is
  /// destroyed, to break the cycles (values it made are inert afterwards).
  std::vector<std::weak_ptr<Scope>> cycle_scopes_;
  class ModuleLoader *loader_ = nullptr; ///< lib: kernel files for import_module()
  ModuleObject *importer_ = nullptr;     ///< lib: the module whose import is being resolved
  const SourceManager &sources_;
  InterpreterLimits limits_;
  ModuleResolver resolver_;
  std::shared_ptr<Scope> builtins_;
  std::vector<LoopKind> loop_stack_;
  mutable std::uint64_t steps_ = 0; ///< (count_copy adds to it from const operations)
  /// The step count at which the evaluator leaves its fast path: the step budget, or the next
  /// look at the clock when there is a time budget, whichever comes first.
  std::uint64_t step_gate_ = 0;
  std::chrono::steady_clock::time_point clock_start_;
  SourceLoc current_loc_;
  SourceLoc last_return_loc_;
  std::function<void(const std::string &)> print_;
  std::unique_ptr<eval::Machine> machine_;
};

} // namespace nkicc::trace
