// The interpreter's entry points: running a module, calling a value from outside, the
// namespaces names are bound in (imports: lib/trace/imports.cpp, module_loader.cpp). Code runs on the compiled
// evaluator (lib/eval/): each module body and function is compiled once, on first run.
#include "nkicc/trace/interpreter.h"

#include "eval/classes.h"
#include "eval/machine.h"

#include <algorithm>

#include <fmt/format.h>

namespace nkicc::trace {

using python::Symbol;

// ---- Scope --------------------------------------------------------------------------------------

namespace {
constexpr std::size_t kScopeIndexFrom = 12; ///< entries before a scope keeps a hash index
}

std::uint64_t Scope::next_version() {
  static std::uint64_t counter = 0;
  return ++counter;
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
void Scope::set(std::string_view name, Value value) { set(Symbol::intern(name), std::move(value)); }
void Scope::set(Symbol name, Value value) {
  if (Entry *entry = find_entry(name)) {
    entry->value = std::move(value);
    return;
  }
  entries_.push_back(Entry{name, true, std::move(value)});
  version_ = next_version();
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
void Scope::clear() {
  auto entries = std::move(entries_);
  entries_.clear();
  index_.clear();
  version_ = next_version();
}
bool Scope::erase(std::string_view name) {
  std::optional<Symbol> symbol = Symbol::find(name);
  return symbol && erase(*symbol);
}
bool Scope::erase(Symbol name) {
  Entry *entry = find_entry(name);
  if (!entry)
    return false;
  auto k = static_cast<std::size_t>(entry - entries_.data());
  Value drop = std::move(entries_[k].value);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(k));
  rebuild_index();
  version_ = next_version();
  return true;
}

std::optional<Value> ModuleObject::get_attr(Interpreter &, std::string_view name) {
  if (Value *v = globals_->find_local(name))
    return *v;
  if (name == "__name__")
    return Value::str(name_);
  return std::nullopt;
}

// ---- cells --------------------------------------------------------------------------------------

Cell::Cell(Registry *registry) : registry_(registry) {
  if (registry_) {
    next_ = registry_->head;
    if (next_)
      next_->prev_ = this;
    registry_->head = this;
  }
}
Cell::~Cell() {
  if (!registry_)
    return;
  if (prev_)
    prev_->next_ = next_;
  else
    registry_->head = next_;
  if (next_)
    next_->prev_ = prev_;
}
void Cell::Registry::clear_all() {
  std::vector<Ref<Cell>> live;
  for (Cell *c = head; c; c = c->next_)
    live.emplace_back(c);
  for (const Ref<Cell> &c : live) {
    Value drop = std::move(c->value);
    c->bound = false;
  }
}
Cell::Registry::~Registry() {
  // Cells that outlive their interpreter leave the registry.
  for (Cell *c = head; c;) {
    Cell *next = c->next_;
    c->registry_ = nullptr;
    c->prev_ = c->next_ = nullptr;
    c = next;
  }
}

// ---- functions ----------------------------------------------------------------------------------

std::string FunctionObject::repr() const { return "<function " + qualname + ">"; }
std::optional<Value> FunctionObject::get_attr(Interpreter &, std::string_view attr) {
  for (const auto &[key, value] : attrs)
    if (key == attr)
      return value;
  if (attr == "__name__")
    return Value::str(std::string(name));
  if (attr == "__qualname__")
    return Value::str(qualname);
  return std::nullopt;
}
void FunctionObject::set_attr(Interpreter &, std::string_view attr, const Value &value) {
  for (auto &[key, v] : attrs)
    if (key == attr) {
      v = value;
      return;
    }
  attrs.emplace_back(std::string(attr), value);
}
Value FunctionObject::call(Interpreter &interp, CallArgs &args) { return interp.machine_->call_function(*this, args); }

// ---- Interpreter --------------------------------------------------------------------------------

namespace detail {
void install_builtins(Interpreter &interp, Scope &scope);
std::shared_ptr<ModuleObject> make_math_module(Interpreter &interp);
} // namespace detail

Interpreter::Interpreter(const SourceManager &sources, InterpreterLimits limits, ModuleResolver resolver)
    : sources_(sources), limits_(limits), resolver_(std::move(resolver)), builtins_(std::make_shared<Scope>()),
      machine_(std::make_unique<eval::Machine>(*this)) {
  detail::install_builtins(*this, *builtins_);
  eval::install_class_builtins(*this, *builtins_);
  math_ = detail::make_math_module(*this);
  restart_clock();
}

Interpreter::~Interpreter() {
  // Functions hold their module and closure cells, which hold the functions: break the cycles.
  machine_->break_cycles();
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
  if (!tracing_kernel_) // (a file a kernel imports while it is traced spends the trace's time)
    restart_clock();
  machine_->run_module(module, m);
}

Value Interpreter::call(const Value &callee, CallArgs &args) { return machine_->call(callee, args, args.loc); }

// ---- the step and time budgets ------------------------------------------------------------------

namespace {
/// Steps between two looks at the clock: reading it costs about as much as a few steps, so this
/// keeps the cost out of sight while a statement-sized step still ends a runaway trace within
/// moments of its deadline.
constexpr std::uint64_t kClockSteps = 4096;
} // namespace

void Interpreter::restart_clock() {
  if (limits_.max_trace_time.count() > 0) {
    clock_start_ = std::chrono::steady_clock::now();
    step_gate_ = std::min(limits_.max_steps, steps_ + kClockSteps);
  } else {
    step_gate_ = limits_.max_steps;
  }
}

Interpreter::Budget Interpreter::check_budgets() {
  if (steps_ > limits_.max_steps)
    return Budget::Steps;
  if (limits_.max_trace_time.count() > 0) {
    if (std::chrono::steady_clock::now() - clock_start_ > limits_.max_trace_time)
      return Budget::Time;
    step_gate_ = std::min(limits_.max_steps, steps_ + kClockSteps);
  } else {
    step_gate_ = limits_.max_steps;
  }
  return Budget::None;
}

void Interpreter::budget_error(Budget spent, SourceLoc loc) const {
  if (spent == Budget::Time) {
    auto ms = limits_.max_trace_time.count();
    std::string limit = std::to_string(ms / 1000);
    if (ms % 1000) { // as given: `2.5`, `0.25`
      std::string frac = fmt::format("{:03}", ms % 1000);
      limit += "." + frac.substr(0, frac.find_last_not_of('0') + 1);
    }
    raise_error("time-budget",
                "the trace ran longer than " + limit +
                    " seconds (an endless loop?); raise --max-trace-time or fix the kernel",
                loc);
  }
  raise_error("step-budget",
              "the trace ran more than " + std::to_string(limits_.max_steps) +
                  " steps (an endless loop?); raise --max-instructions or fix the loop",
              loc);
}

} // namespace nkicc::trace
