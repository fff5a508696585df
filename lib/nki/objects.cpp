#include "objects.h"

#include <fmt/format.h>

namespace nkicc::nki {

using python::CmpOpKind;

// ---- dtypes -----------------------------------------------------------------------------------

std::optional<Value> DTypeObject::compare(Interpreter &, CmpOpKind op, const Value &other, bool) {
  if (op != CmpOpKind::Eq && op != CmpOpKind::NotEq)
    return std::nullopt;
  bool same = false;
  if (auto *d = other.as<DTypeObject>())
    same = d->dtype == dtype;
  else if (other.kind == Value::Kind::Str)
    same = parse_dtype(other.str_text()) == dtype;
  return Value::boolean(op == CmpOpKind::Eq ? same : !same);
}

std::optional<Value> DTypeObject::get_attr(Interpreter &, std::string_view name) {
  if (name == "itemsize")
    return Value::integer(static_cast<std::int64_t>(dtype_size(dtype)));
  if (name == "name")
    return Value::str(std::string(dtype_name(dtype)));
  // nl.fp32.min / .max, as numpy's finfo/iinfo give them.
  bool is_min = name == "min";
  if (!is_min && name != "max")
    return std::nullopt;
  switch (dtype) {
  case DType::Float32:
  case DType::TFloat32:
    return Value::floating(is_min ? -3.4028234663852886e38 : 3.4028234663852886e38);
  case DType::BFloat16:
    return Value::floating(is_min ? -3.3895313892515355e38 : 3.3895313892515355e38);
  case DType::Float16:
    return Value::floating(is_min ? -65504.0 : 65504.0);
  case DType::Int8:
    return Value::integer(is_min ? -128 : 127);
  case DType::Int16:
    return Value::integer(is_min ? -32768 : 32767);
  case DType::Int32:
    return Value::integer(is_min ? -2147483648LL : 2147483647LL);
  case DType::UInt8:
    return Value::integer(is_min ? 0 : 255);
  case DType::UInt16:
    return Value::integer(is_min ? 0 : 65535);
  case DType::UInt32:
    return Value::integer(is_min ? 0 : 4294967295LL);
  default:
    return std::nullopt;
  }
}

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

/// `kernel[2, 4]` from inside another kernel: NKI forbids a nested kernel its own grid.
class GridLaunch : public Object {
public:
  std::string_view type_name() const override { return "GridLaunch"; }
  Value call(Interpreter &, CallArgs &) override {
    raise_error("err_nested_kernel_with_spmd_grid",
                "a kernel called from another kernel may not carry its own SPMD grid");
  }
  std::string repr() const override { return "<nki kernel launch>"; }
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

std::shared_ptr<BuiltinFunction> jit_decorator(const std::string &name) {
  // `@nki.jit` and `@nki.jit(mode=...)`: both hand back a JitKernel around the function.
  return std::make_shared<BuiltinFunction>(name, [name](Interpreter &, CallArgs &args) -> Value {
    if (args.positional.size() == 1)
      if (auto k = as_kernel(args.positional[0]))
        return Value::object(k);
    if (!args.positional.empty())
      raise_error("TypeError", fmt::format("nki.{}() takes a kernel function", name));
    return Value::object(jit_decorator(name));
  });
}

Value JitKernel::call(Interpreter &interp, CallArgs &args) { return interp.call(function, args); }

Value JitKernel::get_item(Interpreter &, const Value &) { return Value::object(std::make_shared<GridLaunch>()); }

} // namespace nkicc::nki
