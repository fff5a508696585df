#include "objects.h"

#include "runtime.h"

#include <fmt/format.h>

namespace nkicc::nki {

using python::CmpOpKind;

// ---- par_dim ----------------------------------------------------------------------------------

std::optional<Value> ParDimObject::binary_op(Interpreter &interp, python::BinOpKind op, const Value &other,
                                             bool reflected) {
  Value me = Value::integer(size);
  return reflected ? interp.binary_op(op, other, me) : interp.binary_op(op, me, other);
}

std::optional<Value> ParDimObject::compare(Interpreter &interp, CmpOpKind op, const Value &other, bool reflected) {
  Value me = Value::integer(size);
  return reflected ? interp.compare(op, other, me) : interp.compare(op, me, other);
}

std::optional<Value> NcVersionObject::get_attr(Interpreter &, std::string_view name) {
  if (name == "name")
    return Value::str("gen" + std::to_string(generation));
  return std::nullopt;
}

std::optional<Value> NcVersionObject::compare(Interpreter &interp, CmpOpKind op, const Value &other, bool reflected) {
  auto *them = other.as<NcVersionObject>();
  if (!them || op == CmpOpKind::Is || op == CmpOpKind::IsNot || op == CmpOpKind::In || op == CmpOpKind::NotIn)
    return std::nullopt;
  Value a = Value::integer(generation), b = Value::integer(them->generation);
  return reflected ? interp.compare(op, b, a) : interp.compare(op, a, b);
}

// ---- ranges -----------------------------------------------------------------------------------

namespace {
class CountingIterator : public Iterator {
public:
  CountingIterator(std::int64_t start, std::int64_t stop, std::int64_t step) : cur_(start), stop_(stop), step_(step) {}
  bool next(Value &out) override {
    if (step_ > 0 ? cur_ >= stop_ : cur_ <= stop_)
      return false;
    out = Value::integer(cur_);
    cur_ += step_;
    return true;
  }

private:
  std::int64_t cur_, stop_, step_;
};
} // namespace

std::unique_ptr<Iterator> NkiRangeObject::iterate(Interpreter &) {
  return std::make_unique<CountingIterator>(start, stop, step);
}

std::string NkiRangeObject::repr() const {
  return fmt::format("{}({}, {}, {})", loop_kind_name(kind), start, stop, step);
}

std::string JitKernel::repr() const { return "<nki kernel " + trace::repr(function) + ">"; }

std::optional<Value> JitKernel::get_attr(Interpreter &interp, std::string_view name) {
  if (name == "__name__" || name == "func")
    return function.object()->get_attr(interp, name == "func" ? "__wrapped__" : name);
  return std::nullopt;
}

// ---- jit kernels --------------------------------------------------------------------------

namespace {

/// lib: what launching a kernel from host code gives (`out = kernel(a)` at module level, in a
/// file's test code): nothing nkicc computes. A placeholder in host code (`a, b = kernel(x)`,
/// `out.shape`); a kernel that uses it says so.
Value host_launch_result(const std::string &kernel) {
  return Value::object(trace::OpaqueObject::with_use_message(
      kernel + "()", fmt::format("nkicc does not model the result of launching kernel '{}' from host "
                                 "code: it traces only the description's calls",
                                 kernel)));
}

std::string kernel_name(const Value &function) {
  if (auto *f = function.as<FunctionObject>())
    return std::string(f->name);
  return "kernel";
}

/// `kernel[2, 4]`: from inside another kernel NKI forbids a nested kernel its own grid; from host
/// code the launch is inert.
class GridLaunch : public Object {
public:
  GridLaunch(const NkiRuntime *rt, std::string kernel) : rt_(rt), kernel_(std::move(kernel)) {}
  std::string_view type_name() const override { return "GridLaunch"; }
  Value call(Interpreter &, CallArgs &) override {
    if (rt_ && !rt_->current)
      return host_launch_result(kernel_);
    raise_error("err_nested_kernel_with_spmd_grid",
                "a kernel called from another kernel may not carry its own SPMD grid");
  }
  std::string repr() const override { return "<nki kernel launch>"; }

private:
  const NkiRuntime *rt_;
  std::string kernel_;
};

} // namespace

std::shared_ptr<JitKernel> as_kernel(const Value &v) {
  if (auto k = v.shared_as<JitKernel>())
    return k;
  if (!v.as<FunctionObject>())
    return nullptr;
  auto k = std::make_shared<JitKernel>();
  k->function = v;
  return k;
}

std::shared_ptr<BuiltinFunction> jit_decorator(const std::string &name, const NkiRuntime *rt) {
  // `@nki.jit`, `@nki.jit()` and `@nki.jit(mode=...)` hand back a JitKernel around the function;
  // a kernel jitted twice (`nki.jit(nki.jit(f))`) stays the same kernel, and one a
  // `nki.compiler` decorator made first gains the runtime.
  return std::make_shared<BuiltinFunction>(name, [name, rt](Interpreter &interp, CallArgs &args) -> Value {
    if (args.positional.size() == 1) {
      if (auto *existing = args.positional[0].as<JitKernel>()) {
        if (existing->runtime)
          return args.positional[0];
        auto k = std::make_shared<JitKernel>(*existing);
        k->runtime = rt;
        return Value::object(k);
      }
      if (args.positional[0].as<FunctionObject>()) {
        auto k = std::make_shared<JitKernel>();
        k->function = args.positional[0];
        k->runtime = rt;
        return Value::object(k);
      }
    }
    if (!args.positional.empty())
      raise_error("TypeError", fmt::format("nki.{}() takes a kernel function", name));
    (void)interp;
    return Value::object(jit_decorator(name, rt));
  });
}

Value JitKernel::call(Interpreter &interp, CallArgs &args) {
  // From host code (no trace in progress) a launch computes nothing nkicc sees.
  if (runtime && !runtime->current)
    return host_launch_result(kernel_name(function));
  return interp.call(function, args);
}

Value JitKernel::get_item(Interpreter &, const Value &) {
  return Value::object(std::make_shared<GridLaunch>(runtime, kernel_name(function)));
}

} // namespace nkicc::nki
