// NKI's operations as nkicc traces them: each checks NKI's constraints (reference/nki.md,
// with NKI's message and id), creates its result tile, and emits one or more IR instructions.
#include "nki_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace nkicc::trace {

using python::BinOpKind;
using python::UnaryOpKind;

namespace {

constexpr std::int64_t kMaxPartitions = 128;  // nl.tile_size.pmax
constexpr std::int64_t kPsumBankBytes = 2048; // nl.tile_size.psum_fmax fp32 elements
constexpr std::int64_t kStationaryFmax = 128; // nl.tile_size.gemm_stationary_fmax
constexpr std::int64_t kMovingFmax = 512;     // nl.tile_size.gemm_moving_fmax

// ---- argument binding -------------------------------------------------------------------------

/// Binds a call's arguments to an NKI op's parameter names, as Python would.
class Args {
public:
  Args(const CallArgs &args, std::string_view op, std::initializer_list<std::string_view> names)
      : op_(op), names_(names.begin(), names.end()) {
    values_.resize(names_.size(), nullptr);
    if (args.positional.size() > names_.size())
      raise_error("TypeError", fmt::format("{}() takes {} positional arguments but {} were given", op, names_.size(),
                                           args.positional.size()));
    for (std::size_t i = 0; i < args.positional.size(); ++i)
      values_[i] = &args.positional[i];
    for (const auto &[name, value] : args.keywords) {
      auto it = std::find(names_.begin(), names_.end(), name);
      if (it == names_.end())
        raise_error("TypeError", fmt::format("{}() got an unexpected keyword argument '{}'", op, name));
      std::size_t i = static_cast<std::size_t>(it - names_.begin());
      if (values_[i])
        raise_error("TypeError", fmt::format("{}() got multiple values for argument '{}'", op, name));
      values_[i] = &value;
    }
  }

  /// The argument, or null when it was not given (or given as None).
  const Value *get(std::string_view name) const {
    const Value *v = values_[index(name)];
    return v && !v->is_none() ? v : nullptr;
  }
  const Value &required(std::string_view name) const {
    const Value *v = values_[index(name)];
    if (!v)
      raise_error("TypeError", fmt::format("{}() missing required argument '{}'", op_, name));
    return *v;
  }
  std::string_view op() const { return op_; }

private:
  std::size_t index(std::string_view name) const {
    // Ops ask for their parameters by the same literals they declared them with: the
    // address compare finds those without comparing text.
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i].data() == name.data() && names_[i].size() == name.size())
        return i;
    auto it = std::find(names_.begin(), names_.end(), name);
    return static_cast<std::size_t>(it - names_.begin());
  }
  std::string_view op_;
  // Inline for the usual handful of parameters: parsing arguments allocates nothing.
  ir::SmallVector<std::string_view, 12> names_;
  ir::SmallVector<const Value *, 12> values_;
};

// ---- value helpers ----------------------------------------------------------------------------

/// A tensor argument. An out-of-bound view is NKI's error unless the operation is masked.
std::shared_ptr<TensorRef> as_tensor(const Value &v, std::string_view op, std::string_view param, bool masked = false) {
  if (auto t = v.shared_as<TensorRef>()) {
    if (!t->out_of_bound.empty() && !masked)
      raise_error("err_tensor_access_out_of_bound", t->out_of_bound);
    return t;
  }
  raise_error("TypeError",
              fmt::format("parameter '{}' of '{}' must be a tensor or tile, not '{}'", param, op, type_name(v)));
}

bool on_chip(ir::Memory m) { return m == ir::Memory::Sbuf || m == ir::Memory::Psum; }

void require_on_chip(const TensorRef &t, std::string_view op, std::string_view param) {
  if (!on_chip(t.tensor().memory))
    raise_error("err_unsupported_memory",
                fmt::format("Expected operand '{}' of '{}' to be in address space 'sbuf' or 'psum', but got a tile in "
                            "'{}' instead.",
                            param, op, ir::memory_name(t.tensor().memory)));
}

void require_hbm(const TensorRef &t, std::string_view op, std::string_view param) {
  if (on_chip(t.tensor().memory))
    raise_error("err_unsupported_memory",
                fmt::format("Expected operand '{}' of '{}' to be in address space 'hbm', but got a tile in '{}' "
                            "instead.",
                            param, op, ir::memory_name(t.tensor().memory)));
}

void check_partitions(const ir::Shape &shape) {
  // reference/nki.md: an on-chip tile has its partition dimension and at most 4 free ones.
  if (shape.size() > 5)
    raise_error("err_exceed_max_supported_dimension",
                fmt::format("tile of shape {} exceed max supported number of dimensions of 5 (a partition dimension "
                            "and 4 free dimensions).",
                            shape_text(shape)));
  if (!shape.empty() && shape[0] > kMaxPartitions)
    raise_error("err_num_partition_exceed_arch_limit",
                fmt::format("number of partitions {} exceed architecture limitation of {}.", shape[0], kMaxPartitions));
}

std::int64_t product(const ir::Shape &dims, std::size_t from = 0) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < dims.size(); ++i)
    p = checked_mul(p, dims[i]);
  return p;
}

void check_psum_tile(const ir::Shape &shape, DType dtype) {
  std::int64_t bytes = checked_mul(product(shape, 1), static_cast<std::int64_t>(dtype_size(dtype)));
  if (bytes > kPsumBankBytes)
    raise_error("err_psum_tile_exceed_bank_size",
                fmt::format("free size of a PSUM tile must fit one 2 KiB bank per partition (512 fp32 elements), "
                            "but tile {} of {} needs {} bytes",
                            shape_text(shape), dtype_name(dtype), bytes));
}

std::optional<DType> dtype_arg(const Value *v, std::string_view op) {
  if (!v)
    return std::nullopt;
  if (auto *d = v->as<DTypeObject>()) {
    // lib: a NumPy dtype; float64 and the 64-bit integers are no NKI dtypes.
    if (std::optional<DType> nd = d->nki_dtype())
      return nd;
    raise_error("TypeError", fmt::format("'dtype' of '{}' must be an NKI dtype such as nl.float32, not {}", op,
                                         d->to_str()));
  }
  if (v->kind == Value::Kind::Str)
    if (auto d = parse_dtype(v->str_text()))
      return d;
  raise_error("TypeError",
              fmt::format("'dtype' of '{}' must be an NKI dtype such as nl.float32, not {}", op, repr(*v)));
}

ir::Memory buffer_arg(const Value *v, ir::Memory fallback) {
  if (!v)
    return fallback;
  if (auto *b = v->as<BufferObject>())
    return b->memory;
  raise_error("TypeError", fmt::format("'buffer' must be nl.sbuf, nl.psum, nl.hbm or nl.shared_hbm, not {}", repr(*v)));
}

ir::Shape shape_arg(const Value &v, std::string_view op) {
  ir::Shape shape;
  auto dim = [&](const Value &d) {
    if (d.kind != Value::Kind::Int || d.i <= 0)
      raise_error("TypeError", fmt::format("the shape of '{}' must be positive integers, got {}", op, repr(d)));
    shape.push_back(d.i);
  };
  if (v.kind == Value::Kind::Tuple || v.kind == Value::Kind::List) {
    for (const Value &d : v.seq().items)
      dim(d);
  } else {
    dim(v);
  }
  if (shape.empty())
    raise_error("TypeError", fmt::format("the shape of '{}' must have at least one dimension", op));
  product(shape); // overflow check
  return shape;
}

/// The NKI name of an op argument (`np.exp`, `nl.add`, `nl.maximum`), for instruction attrs.
std::string op_name(const Value &v, std::string_view op, std::string_view param) {
  if (auto *f = v.as<BuiltinFunction>())
    return f->name();
  if (v.kind == Value::Kind::Str)
    return v.str_text();
  raise_error("TypeError", fmt::format("parameter '{}' of '{}' must be an operator such as np.add or nl.exp, not {}",
                                       param, op, repr(v)));
}

PyConstant scalar_constant(const Value &v) {
  switch (v.kind) {
  case Value::Kind::Bool:
    return PyConstant::boolean(v.b);
  case Value::Kind::Int:
    return PyConstant::integer(v.i);
  case Value::Kind::Float:
    return PyConstant::floating(v.f);
  default:
    raise_error("TypeError", fmt::format("expected a number, got '{}'", type_name(v)));
  }
}

bool is_scalar(const Value &v) {
  return v.kind == Value::Kind::Int || v.kind == Value::Kind::Float || v.kind == Value::Kind::Bool;
}

/// NumPy-style promotion between tile dtypes: floats win over ints, wider over narrower.
DType promote(DType a, DType b) {
  auto rank = [](DType d) {
    switch (d) {
    case DType::Float32:
    case DType::TFloat32:
      return 10;
    case DType::BFloat16:
    case DType::Float16:
      return 9;
    case DType::Float8E4M3:
    case DType::Float8E4M3FN:
    case DType::Float8E5M2:
      return 8;
    case DType::Int32:
    case DType::UInt32:
      return 5;
    case DType::Int16:
    case DType::UInt16:
      return 4;
    case DType::Int8:
    case DType::UInt8:
      return 3;
    case DType::Bool:
      return 1;
    }
    return 0;
  };
  return rank(b) > rank(a) ? b : a;
}

std::shared_ptr<TensorRef> new_tile(KernelBuilder &kb, std::string_view stem, ir::Memory memory, ir::Shape shape,
                                    DType dtype) {
  if (on_chip(memory))
    check_partitions(shape);
  if (memory == ir::Memory::Psum)
    check_psum_tile(shape, dtype);
  ir::TensorId id = kb.new_tensor(kb.auto_name(stem), ir::TensorRole::Internal, memory, std::move(shape), dtype, true);
  return kb.full_view(id);
}

/// A matmul's attributes: every matmul of a trace has one of these two lists.
const ir::AttrList &accumulate_attrs(bool accumulate) {
  static const ir::AttrList yes = {{"accumulate", PyConstant::boolean(true)}};
  static const ir::AttrList no = {{"accumulate", PyConstant::boolean(false)}};
  return accumulate ? yes : no;
}

ir::AttrList with_mask(ir::AttrList attrs, const Value *mask) {
  if (mask) {
    if (auto *m = mask->as<MaskObject>())
      attrs.emplace_back("mask", PyConstant::str(m->text));
    else
      raise_error("TypeError", fmt::format("'mask' must be a predicate on index tiles, not {}", repr(*mask)));
  }
  return attrs;
}

/// The result shape of an element-wise op: partition dimensions must match (NKI does not
/// broadcast across partitions); free dimensions broadcast from 1.
ir::Shape broadcast_shapes(const TensorRef &a, const TensorRef &b, std::string_view op, std::string_view pa,
                           std::string_view pb) {
  ir::Shape sa = a.shape(), sb = b.shape();
  if (sa.empty() || sb.empty() || sa[0] != sb[0])
    raise_error("err_num_partition_mismatch",
                fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters ({}{}, {}{}) of "
                            "'{}'",
                            pa, shape_text(sa), pb, shape_text(sb), op));
  if (sa.size() != sb.size())
    raise_error("ValueError", fmt::format("operands of '{}' have different ranks: {}{} and {}{}", op, pa,
                                          shape_text(sa), pb, shape_text(sb)));
  ir::Shape out = sa;
  for (std::size_t i = 1; i < sa.size(); ++i) {
    if (sa[i] == sb[i] || sb[i] == 1)
      continue;
    if (sa[i] == 1) {
      out[i] = sb[i];
      continue;
    }
    raise_error("ValueError", fmt::format("operands of '{}' cannot be broadcast together: {}{} and {}{}", op, pa,
                                          shape_text(sa), pb, shape_text(sb)));
  }
  return out;
}

/// Broadcasts a view to `shape` by zero strides on its size-1 free dimensions.
ir::AccessPattern broadcast_view(const TensorRef &t, const ir::Shape &shape) {
  ir::AccessPattern ap = t.ap;
  for (std::size_t i = 1; i < ap.pattern.size() && i < shape.size(); ++i)
    if (ap.pattern[i].second == 1 && shape[i] != 1)
      ap.pattern[i] = {0, shape[i]};
  return ap;
}

Value tensor_tensor(KernelBuilder &kb, std::string_view op, const TensorRef &a, const TensorRef &b,
                    std::optional<DType> dtype, std::string_view pa = "x", std::string_view pb = "y",
                    std::string_view label = {}) {
  std::string_view where = label.empty() ? op : label;
  require_on_chip(a, where, pa);
  require_on_chip(b, where, pb);
  ir::Shape shape = broadcast_shapes(a, b, where, pa, pb);
  auto out = new_tile(kb, op, ir::Memory::Sbuf, shape, dtype.value_or(promote(a.tensor().dtype, b.tensor().dtype)));
  kb.emit(ir::Opcode::TensorTensor, ir::Engine::Vector, {out->ap}, {broadcast_view(a, shape), broadcast_view(b, shape)},
          {{"op", PyConstant::str(std::string(op))}});
  return Value::object(out);
}

Value tensor_scalar(KernelBuilder &kb, std::string_view op, const TensorRef &a, const Value &scalar, bool reverse,
                    std::optional<DType> dtype) {
  require_on_chip(a, op, "x");
  DType result =
      dtype.value_or(scalar.kind == Value::Kind::Float ? promote(a.tensor().dtype, DType::Float32) : a.tensor().dtype);
  auto out = new_tile(kb, op, ir::Memory::Sbuf, a.shape(), result);
  kb.emit(ir::Opcode::TensorScalar, ir::Engine::Vector, {out->ap}, {a.ap},
          {{"op0", PyConstant::str(std::string(op))},
           {"operand0", scalar_constant(scalar)},
           {"reverse0", PyConstant::boolean(reverse)}});
  return Value::object(out);
}

/// An element-wise binary op of tiles and scalars (nl.add(x, y), x + y, ...).
Value elementwise(KernelBuilder &kb, std::string_view op, const Value &x, const Value &y, std::optional<DType> dtype,
                  std::string_view label = {}) {
  auto tx = x.shared_as<TensorRef>() ? as_tensor(x, op, "x") : nullptr;
  auto ty = y.shared_as<TensorRef>() ? as_tensor(y, op, "y") : nullptr;
  if (tx && ty)
    return tensor_tensor(kb, op, *tx, *ty, dtype, "x", "y", label);
  if (tx && is_scalar(y))
    return tensor_scalar(kb, op, *tx, y, false, dtype);
  if (ty && is_scalar(x))
    return tensor_scalar(kb, op, *ty, x, true, dtype);
  raise_error("TypeError",
              fmt::format("'{}' needs a tile and a tile or number, got '{}' and '{}'", op, type_name(x), type_name(y)));
}

Value activation(KernelBuilder &kb, std::string_view func, const TensorRef &x, std::optional<DType> dtype,
                 const Value *bias = nullptr, const Value *scale = nullptr, std::string_view label = {}) {
  std::string_view where = label.empty() ? func : label;
  require_on_chip(x, where, "data");
  auto out = new_tile(kb, func, ir::Memory::Sbuf, x.shape(), dtype.value_or(x.tensor().dtype));
  std::vector<ir::AccessPattern> src = {x.ap};
  ir::AttrList attrs = {{"func", PyConstant::str(std::string(func))}};
  if (bias) {
    auto b = as_tensor(*bias, where, "bias");
    require_on_chip(*b, where, "bias");
    if (b->shape()[0] != x.shape()[0])
      raise_error("err_num_partition_mismatch",
                  fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters (data{}, "
                              "bias{}) of '{}'",
                              shape_text(x.shape()), shape_text(b->shape()), where));
    src.push_back(broadcast_view(*b, x.shape()));
  }
  if (scale) {
    if (auto s = scale->shared_as<TensorRef>())
      src.push_back(broadcast_view(*s, x.shape()));
    else
      attrs.emplace_back("scale", scalar_constant(*scale));
  }
  kb.emit(ir::Opcode::Activation, ir::Engine::Scalar, {out->ap}, std::move(src), std::move(attrs));
  return Value::object(out);
}

ir::Shape axes_arg(const Value &v, std::size_t rank, std::string_view op) {
  ir::Shape axes;
  auto add = [&](const Value &a) {
    if (a.kind != Value::Kind::Int)
      raise_error("TypeError", fmt::format("'axis' of '{}' must be an integer or a tuple of integers", op));
    std::int64_t ax = a.i < 0 ? a.i + static_cast<std::int64_t>(rank) : a.i;
    if (ax < 0 || ax >= static_cast<std::int64_t>(rank))
      raise_error("IndexError",
                  fmt::format("axis {} is out of range for a tile of {} dimensions in '{}'", a.i, rank, op));
    if (ax == 0)
      raise_error("err_unsupported_reduction_axis",
                  fmt::format("'{}' cannot reduce the partition dimension (axis 0): reductions run along free axes "
                              "only",
                              op));
    axes.push_back(ax);
  };
  if (v.kind == Value::Kind::Tuple || v.kind == Value::Kind::List)
    for (const Value &a : v.seq().items)
      add(a);
  else
    add(v);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

Value reduce(KernelBuilder &kb, std::string_view op, const TensorRef &x, const Value &axis, bool keepdims, bool negate,
             std::optional<DType> dtype, std::string_view label = {}) {
  std::string_view where = label.empty() ? op : label;
  require_on_chip(x, where, "x");
  ir::Shape in = x.shape();
  ir::Shape axes = axes_arg(axis, in.size(), where);
  ir::Shape shape;
  for (std::size_t i = 0; i < in.size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(i)) != axes.end();
    if (!reduced)
      shape.push_back(in[i]);
    else if (keepdims)
      shape.push_back(1);
  }
  if (shape.size() == 1)
    shape.push_back(1); // a tile keeps a free dimension
  std::vector<PyConstant> ax;
  for (std::int64_t a : axes)
    ax.push_back(PyConstant::integer(a));
  auto out = new_tile(kb, op, ir::Memory::Sbuf, shape, dtype.value_or(x.tensor().dtype));
  kb.emit(ir::Opcode::TensorReduce, ir::Engine::Vector, {out->ap}, {x.ap},
          {{"op", PyConstant::str(std::string(op))},
           {"axis", PyConstant::tuple(std::move(ax))},
           {"negate", PyConstant::boolean(negate)},
           {"keepdims", PyConstant::boolean(keepdims)}});
  return Value::object(out);
}

/// nisa.nc_matmul(stationary[K, M], moving[K, N]) -> psum[M, N]: K*M*N MACs.
Value nc_matmul(KernelBuilder &kb, const TensorRef &stationary, const TensorRef &moving, std::string_view op) {
  require_on_chip(stationary, op, "stationary");
  require_on_chip(moving, op, "moving");
  ir::Shape s = stationary.shape(), m = moving.shape();
  if (s.size() != 2 || m.size() != 2)
    raise_error("err_exceed_max_supported_dimension",
                fmt::format("parameter '{}' of '{}' exceed max supported number of dimensions of 2.",
                            s.size() != 2 ? stationary.describe() : moving.describe(), op));
  check_partitions(s);
  check_partitions(m);
  if (s[0] != m[0])
    raise_error("err_num_partition_mismatch",
                fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters (stationary{}, "
                            "moving{}) of '{}'",
                            shape_text(s), shape_text(m), op));
  if (s[1] > kStationaryFmax)
    raise_error("err_size_of_dimension_exceed_arch_limit",
                fmt::format("size of dimension 1 in 'stationary{}' of '{}' exceed architecture limitation of {}.",
                            shape_text(s), op, kStationaryFmax));
  if (m[1] > kMovingFmax)
    raise_error("err_size_of_dimension_exceed_arch_limit",
                fmt::format("size of dimension 1 in 'moving{}' of '{}' exceed architecture limitation of {}.",
                            shape_text(m), op, kMovingFmax));
  auto out = new_tile(kb, "matmul", ir::Memory::Psum, {s[1], m[1]}, DType::Float32);
  kb.emit(ir::Opcode::MatMul, ir::Engine::Tensor, {out->ap}, {stationary.ap, moving.ap}, accumulate_attrs(false));
  kb.fn.matmul_mac_count = checked_add(kb.fn.matmul_mac_count, checked_mul(checked_mul(s[0], s[1]), m[1]));
  return Value::object(out);
}

Value transpose(KernelBuilder &kb, const TensorRef &x, std::string_view op, ir::Engine engine) {
  require_on_chip(x, op, "x");
  ir::Shape s = x.shape();
  if (s.size() != 2)
    raise_error(
        "err_exceed_max_supported_dimension",
        fmt::format("parameter '{}' of '{}' exceed max supported number of dimensions of 2.", x.describe(), op));
  for (std::size_t d = 0; d < 2; ++d)
    if (s[d] > kMaxPartitions)
      raise_error("err_size_of_dimension_exceed_arch_limit",
                  fmt::format("size of dimension {} in '{}' of '{}' exceed architecture limitation of {}.", d,
                              x.describe(), op, kMaxPartitions));
  ir::Memory memory = engine == ir::Engine::Tensor ? ir::Memory::Psum : ir::Memory::Sbuf;
  DType dtype = engine == ir::Engine::Tensor ? DType::Float32 : x.tensor().dtype;
  auto out = new_tile(kb, "transpose", memory, {s[1], s[0]}, dtype);
  kb.emit(ir::Opcode::Transpose, engine, {out->ap}, {x.ap});
  return Value::object(out);
}

/// A PSUM value cannot be stored straight to HBM: nkicc copies it to SBUF first, as NKI does.
std::shared_ptr<TensorRef> to_sbuf(KernelBuilder &kb, std::shared_ptr<TensorRef> v) {
  if (v->tensor().memory != ir::Memory::Psum)
    return v;
  auto copy = new_tile(kb, "psum_copy", ir::Memory::Sbuf, v->shape(), v->tensor().dtype);
  kb.emit(ir::Opcode::TensorCopy, ir::Engine::Vector, {copy->ap}, {v->ap});
  return copy;
}

void check_store_shape(const TensorRef &dst, const TensorRef &value, std::string_view dst_name,
                       std::string_view value_name) {
  ir::Shape d = dst.shape(), v = value.shape();
  bool smaller = d.size() != v.size();
  for (std::size_t i = 0; !smaller && i < d.size(); ++i)
    smaller = d[i] < v[i] || (d[i] != v[i] && v[i] != 1);
  if (smaller)
    raise_error("err_store_dst_shape_smaller_than_other_shape",
                fmt::format("Illegal assignment destination shape in '{} = {}': shape {} of parameter '{}' is smaller "
                            "than other parameter shapes {}{}.",
                            dst_name, value_name, shape_text(d), dst_name, value_name, shape_text(v)));
}

void store(KernelBuilder &kb, const TensorRef &dst, std::shared_ptr<TensorRef> value, const Value *mask,
           std::string_view dst_name = "dst", std::string_view value_name = "value") {
  require_hbm(dst, "store", "dst");
  require_on_chip(*value, "store", "value");
  check_store_shape(dst, *value, dst_name, value_name);
  value = to_sbuf(kb, value);
  kb.emit(ir::Opcode::Store, ir::Engine::Sync, {dst.ap}, {broadcast_view(*value, dst.shape())}, with_mask({}, mask));
}

void memset(KernelBuilder &kb, const TensorRef &t, const Value &value) {
  kb.emit(ir::Opcode::Memset, ir::Engine::Vector, {t.ap}, {}, {{"value", scalar_constant(value)}});
}

/// An activation-style unary (nl.exp, nl.relu, ...).
BuiltinFunction::Impl unary_op_impl(NkiRuntime &rt, std::string name) {
  return [&rt, name](Interpreter &, CallArgs &call) {
    Args a(call, name, {"x", "dtype", "mask"});
    auto x = as_tensor(a.required("x"), name, "x");
    return activation(rt.builder(name), name, *x, dtype_arg(a.get("dtype"), name));
  };
}

BuiltinFunction::Impl binary_op_impl(NkiRuntime &rt, std::string name) {
  return [&rt, name](Interpreter &, CallArgs &call) {
    Args a(call, name, {"x", "y", "dtype", "mask"});
    return elementwise(rt.builder(name), name, a.required("x"), a.required("y"), dtype_arg(a.get("dtype"), name));
  };
}

BuiltinFunction::Impl reduce_impl(NkiRuntime &rt, std::string name) {
  return [&rt, name](Interpreter &, CallArgs &call) {
    Args a(call, name, {"x", "axis", "dtype", "keepdims", "mask"});
    auto x = as_tensor(a.required("x"), name, "x");
    bool keepdims = a.get("keepdims") && a.get("keepdims")->kind == Value::Kind::Bool && a.get("keepdims")->b;
    return reduce(rt.builder(name), name, *x, a.required("axis"), keepdims, false, dtype_arg(a.get("dtype"), name));
  };
}

void def(ModuleObject &m, const std::string &name, BuiltinFunction::Impl impl) {
  m.globals().set(name, Value::object(std::make_shared<BuiltinFunction>(name, std::move(impl))));
}

const char *const kUnaryOps[] = {
    "exp",  "log",         "sqrt",     "rsqrt",  "tanh",   "sigmoid",         "relu",    "gelu",
    "silu", "erf",         "softplus", "square", "abs",    "negative",        "sign",    "floor",
    "ceil", "reciprocal",  "sin",      "cos",    "arctan", "gelu_apprx_tanh", "gelu_dx", "silu_dx",
    "mish", "logical_not", "trunc"};
const char *const kBinaryOps[] = {"add",         "subtract",   "multiply",      "divide",      "power",
                                  "maximum",     "minimum",    "mod",           "fmod",        "equal",
                                  "not_equal",   "greater",    "greater_equal", "less",        "less_equal",
                                  "logical_and", "logical_or", "logical_xor",   "bitwise_and", "bitwise_or",
                                  "bitwise_xor", "left_shift", "right_shift"};
const char *const kReduceOps[] = {"sum", "max", "min", "mean", "prod", "all", "any"};

std::string_view binop_name(BinOpKind op) {
  switch (op) {
  case BinOpKind::Add:
    return "add";
  case BinOpKind::Sub:
    return "subtract";
  case BinOpKind::Mult:
    return "multiply";
  case BinOpKind::Div:
    return "divide";
  case BinOpKind::Pow:
    return "power";
  case BinOpKind::Mod:
    return "mod";
  case BinOpKind::BitAnd:
    return "bitwise_and";
  case BinOpKind::BitOr:
    return "bitwise_or";
  case BinOpKind::BitXor:
    return "bitwise_xor";
  case BinOpKind::LShift:
    return "left_shift";
  case BinOpKind::RShift:
    return "right_shift";
  default:
    return {};
  }
}

std::int64_t int_arg(const Value &v, std::string_view op, std::string_view param) {
  if (v.kind == Value::Kind::Int)
    return v.i;
  raise_error("TypeError", fmt::format("parameter '{}' of '{}' must be an integer, not '{}'", param, op, type_name(v)));
}

} // namespace

// ---- operators and methods on views -------------------------------------------------------

std::optional<Value> tensor_binary_operator(Interpreter &, std::shared_ptr<TensorRef> self, BinOpKind op,
                                            const Value &other, bool reflected) {
  std::string_view name = binop_name(op);
  if (name.empty())
    return std::nullopt;
  if (!other.shared_as<TensorRef>() && !is_scalar(other))
    return std::nullopt;
  KernelBuilder &kb = *self->builder;
  Value me = Value::object(self);
  return reflected ? elementwise(kb, name, other, me, std::nullopt) : elementwise(kb, name, me, other, std::nullopt);
}

std::optional<Value> tensor_unary_operator(Interpreter &, std::shared_ptr<TensorRef> self, UnaryOpKind op) {
  if (op == UnaryOpKind::USub)
    return tensor_scalar(*self->builder, "multiply", *self, Value::integer(-1), false, std::nullopt);
  if (op == UnaryOpKind::UAdd)
    return Value::object(self);
  return std::nullopt;
}

std::optional<Value> tensor_method(Interpreter &, std::shared_ptr<TensorRef> self, std::string_view name) {
  if (name == "reshape") {
    return Value::object(std::make_shared<BuiltinFunction>("reshape", [self](Interpreter &, CallArgs &call) {
      Args a(call, "reshape", {"shape"});
      ir::Shape shape = shape_arg(a.required("shape"), "reshape");
      ir::Shape old = self->shape();
      if (product(shape) != product(old))
        raise_error("ValueError", fmt::format("cannot reshape {} of shape {} into shape {}", self->describe(),
                                              shape_text(old), shape_text(shape)));
      // Only a contiguous view can be reinterpreted with another row-major shape.
      std::int64_t expected = 1;
      for (std::size_t i = self->ap.pattern.size(); i-- > 0;) {
        if (self->ap.pattern[i].first != expected && self->ap.pattern[i].second != 1)
          raise_error("ValueError", fmt::format("cannot reshape a strided view of '{}'", self->tensor().name));
        expected = checked_mul(expected, self->ap.pattern[i].second);
      }
      auto out = std::make_shared<TensorRef>(*self);
      out->ap.pattern.clear();
      std::int64_t step = 1;
      for (std::size_t i = shape.size(); i-- > 0;) {
        out->ap.pattern.insert(out->ap.pattern.begin(), {step, shape[i]});
        step = checked_mul(step, shape[i]);
      }
      return Value::object(out);
    }));
  }
  if (name == "ap") {
    // The new API's explicit access pattern: `t.ap([[step, num], ...], offset=0)`, steps in
    // elements of the underlying tensor (the partition entry first), as the IR's patterns are.
    return Value::object(std::make_shared<BuiltinFunction>("ap", [self](Interpreter &interp, CallArgs &call) {
      Args a(call, "ap", {"pattern", "offset"});
      std::vector<Value> entries = interp.to_list(a.required("pattern"));
      if (entries.empty())
        raise_error("ValueError", "an access pattern needs at least one [step, num] entry");
      auto out = std::make_shared<TensorRef>(*self);
      out->ap.pattern.clear();
      std::int64_t last = out->ap.offset;
      for (const Value &e : entries) {
        std::vector<Value> pair = interp.to_list(e);
        if (pair.size() != 2 || pair[0].kind != Value::Kind::Int || pair[1].kind != Value::Kind::Int || pair[1].i <= 0)
          raise_error("ValueError", "an access pattern entry must be [step, num] with integers and num > 0");
        out->ap.pattern.emplace_back(pair[0].i, pair[1].i);
      }
      if (const Value *o = a.get("offset")) {
        if (o->kind != Value::Kind::Int)
          raise_error("TypeError", "the offset of an access pattern must be an integer");
        out->ap.offset = checked_add(out->ap.offset, o->i);
      }
      for (auto [step, num] : out->ap.pattern)
        last = checked_add(last, checked_mul(step, num - 1));
      std::int64_t size = product(self->tensor().shape);
      if (out->ap.offset < 0 || last >= size)
        raise_error("err_tensor_access_out_of_bound",
                    fmt::format("Out-of-bound access for tensor `{}`: access pattern reaches element {} of {}",
                                self->tensor().name, last, size));
      return Value::object(out);
    }));
  }
  if (name == "broadcast_to") {
    return Value::object(std::make_shared<BuiltinFunction>("broadcast_to", [self](Interpreter &, CallArgs &call) {
      Args a(call, "broadcast_to", {"shape"});
      ir::Shape shape = shape_arg(a.required("shape"), "broadcast_to");
      ir::Shape old = self->shape();
      if (shape.size() != old.size())
        raise_error("ValueError", fmt::format("cannot broadcast {} to {}", self->describe(), shape_text(shape)));
      auto out = std::make_shared<TensorRef>(*self);
      for (std::size_t i = 0; i < shape.size(); ++i) {
        if (old[i] == shape[i])
          continue;
        if (old[i] != 1)
          raise_error("ValueError", fmt::format("cannot broadcast {} to {}", self->describe(), shape_text(shape)));
        out->ap.pattern[i] = {0, shape[i]};
      }
      return Value::object(out);
    }));
  }
  return std::nullopt;
}

void assign_to_view(Interpreter &, TensorRef &target, const Value &value, std::optional<BinOpKind> op) {
  if (!target.out_of_bound.empty())
    raise_error("err_tensor_access_out_of_bound", target.out_of_bound);
  KernelBuilder &kb = *target.builder;
  const ir::Tensor &t = target.tensor();
  if (!on_chip(t.memory)) {
    // `out[...] = tile` is a store; HBM has no read-modify-write.
    if (op)
      raise_error("TypeError", fmt::format("augmented assignment to HBM tensor '{}' is not supported: load, compute "
                                           "and store instead",
                                           t.name));
    auto v = value.shared_as<TensorRef>();
    if (!v)
      raise_error("TypeError",
                  fmt::format("only a tile can be assigned to HBM tensor '{}', not '{}'", t.name, type_name(value)));
    store(kb, target, v, nullptr, t.name, v->tensor().name);
    return;
  }
  auto v = value.shared_as<TensorRef>();
  if (!op) {
    if (!v) {
      memset(kb, target, value);
      return;
    }
    require_on_chip(*v, "copy", "src");
    check_store_shape(target, *v, t.name, v->tensor().name);
    kb.emit(ir::Opcode::TensorCopy, ir::Engine::Vector, {target.ap}, {broadcast_view(*v, target.shape())});
    return;
  }
  // `psum[...] += nl.matmul(...)`: the matmul accumulates into the target itself (SPEC §3).
  if (*op == BinOpKind::Add && v && t.memory == ir::Memory::Psum) {
    std::int64_t writer = kb.last_writer[v->ap.tensor];
    if (writer >= 0 && static_cast<std::size_t>(writer) + 1 == kb.fn.instructions.size()) {
      ir::Instruction &inst = kb.fn.instructions.back();
      if (inst.opcode == ir::Opcode::MatMul && inst.num_dst == 1 && kb.fn.dst(inst)[0].tensor == v->ap.tensor) {
        if (kb.fn.access_pattern(kb.fn.dst(inst)[0]).shape() != target.shape())
          raise_error("ValueError", fmt::format("cannot accumulate a matmul result {} into {}", shape_text(v->shape()),
                                                target.describe()));
        kb.fn.set_dst(inst, 0, target.ap);
        kb.fn.set_attrs(inst, accumulate_attrs(true));
        kb.last_writer[target.ap.tensor] = writer;
        return;
      }
    }
  }
  std::string_view name = binop_name(*op);
  if (name.empty())
    raise_error("TypeError", "unsupported augmented assignment operator on a tile");
  if (v) {
    require_on_chip(*v, name, "y");
    broadcast_shapes(target, *v, name, "x", "y");
    kb.emit(ir::Opcode::TensorTensor, ir::Engine::Vector, {target.ap}, {target.ap, broadcast_view(*v, target.shape())},
            {{"op", PyConstant::str(std::string(name))}});
  } else {
    kb.emit(ir::Opcode::TensorScalar, ir::Engine::Vector, {target.ap}, {target.ap},
            {{"op0", PyConstant::str(std::string(name))},
             {"operand0", scalar_constant(value)},
             {"reverse0", PyConstant::boolean(false)}});
  }
}

// ---- nl -----------------------------------------------------------------------------------

void add_language_functions(NkiRuntime &rt, ModuleObject &nl) {
  for (const char *n : kUnaryOps)
    def(nl, n, unary_op_impl(rt, n));
  for (const char *n : kBinaryOps)
    def(nl, n, binary_op_impl(rt, n));
  for (const char *n : kReduceOps)
    def(nl, n, reduce_impl(rt, n));

  def(nl, "load", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "load", {"src", "mask", "dtype"});
    auto src = as_tensor(a.required("src"), "load", "src", a.get("mask") != nullptr);
    require_hbm(*src, "load", "src");
    KernelBuilder &kb = rt.builder("load");
    auto out = new_tile(kb, "load", ir::Memory::Sbuf, src->shape(),
                        dtype_arg(a.get("dtype"), "load").value_or(src->tensor().dtype));
    kb.emit(ir::Opcode::Load, ir::Engine::Sync, {out->ap}, {src->ap}, with_mask({}, a.get("mask")));
    return Value::object(out);
  });
  def(nl, "load_transpose2d", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "load_transpose2d", {"src", "mask", "dtype"});
    auto src = as_tensor(a.required("src"), "load_transpose2d", "src");
    require_hbm(*src, "load_transpose2d", "src");
    ir::Shape s = src->shape();
    if (s.size() != 2)
      raise_error("err_exceed_max_supported_dimension",
                  fmt::format("parameter '{}' of 'load_transpose2d' exceed max supported number of dimensions of 2.",
                              src->describe()));
    KernelBuilder &kb = rt.builder("load_transpose2d");
    auto out = new_tile(kb, "load", ir::Memory::Sbuf, {s[1], s[0]},
                        dtype_arg(a.get("dtype"), "load_transpose2d").value_or(src->tensor().dtype));
    kb.emit(ir::Opcode::Load, ir::Engine::Sync, {out->ap}, {src->ap},
            with_mask({{"transpose", PyConstant::boolean(true)}}, a.get("mask")));
    return Value::object(out);
  });
  def(nl, "store", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "store", {"dst", "value", "mask"});
    bool masked = a.get("mask") != nullptr;
    auto dst = as_tensor(a.required("dst"), "store", "dst", masked);
    auto value = as_tensor(a.required("value"), "store", "value", masked);
    store(rt.builder("store"), *dst, value, a.get("mask"));
    return Value::none();
  });
  def(nl, "copy", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "copy", {"x", "dtype", "mask"});
    auto x = as_tensor(a.required("x"), "copy", "x");
    require_on_chip(*x, "copy", "x");
    KernelBuilder &kb = rt.builder("copy");
    auto out = new_tile(kb, "copy", ir::Memory::Sbuf, x->shape(),
                        dtype_arg(a.get("dtype"), "copy").value_or(x->tensor().dtype));
    kb.emit(ir::Opcode::TensorCopy, ir::Engine::Vector, {out->ap}, {x->ap}, with_mask({}, a.get("mask")));
    return Value::object(out);
  });

  auto create = [&rt](std::string op, CallArgs &call, const Value *fill) {
    Args a(call, op, {"shape", "dtype", "buffer", "name"});
    ir::Shape shape = shape_arg(a.required("shape"), op);
    auto dtype = dtype_arg(a.get("dtype"), op);
    if (!dtype)
      raise_error("TypeError", fmt::format("{}() missing required argument 'dtype'", op));
    KernelBuilder &kb = rt.builder(op);
    ir::Memory memory = buffer_arg(a.get("buffer"), ir::Memory::Sbuf);
    if (memory == ir::Memory::SharedHbm && kb.interp.call_depth() > kb.kernel_call_depth)
      raise_error("err_shared_hbm_must_in_kernel_level",
                  "shared_hbm buffer can only be created top level kernel scope");
    std::string name;
    bool auto_named = true;
    if (const Value *n = a.get("name")) {
      if (n->kind != Value::Kind::Str)
        raise_error("TypeError", fmt::format("'name' of '{}' must be a str", op));
      if (!n->str_text().empty()) {
        name = n->str_text();
        auto_named = false;
      }
    }
    if (on_chip(memory))
      check_partitions(shape);
    if (memory == ir::Memory::Psum)
      check_psum_tile(shape, *dtype);
    ir::TensorId id = kb.new_tensor(auto_named ? kb.auto_name(op) : kb.auto_name(name), ir::TensorRole::Internal,
                                    memory, shape, *dtype, auto_named);
    auto view = kb.full_view(id);
    if (fill) {
      if (!on_chip(memory))
        raise_error("TypeError", fmt::format("'{}' can only fill an on-chip tile (sbuf or psum)", op));
      memset(kb, *view, *fill);
    }
    return Value::object(view);
  };
  def(nl, "ndarray", [create](Interpreter &, CallArgs &call) { return create("ndarray", call, nullptr); });
  def(nl, "empty", [create](Interpreter &, CallArgs &call) { return create("empty", call, nullptr); });
  def(nl, "zeros", [create](Interpreter &, CallArgs &call) {
    Value zero = Value::integer(0);
    return create("zeros", call, &zero);
  });
  def(nl, "ones", [create](Interpreter &, CallArgs &call) {
    Value one = Value::integer(1);
    return create("ones", call, &one);
  });
  def(nl, "full", [create](Interpreter &, CallArgs &call) {
    // full(shape, fill_value, dtype, buffer, name)
    if (call.positional.size() < 2 && !call.keyword("fill_value"))
      raise_error("TypeError", "full() missing required argument 'fill_value'");
    Value fill;
    CallArgs rest = call;
    if (const Value *f = call.keyword("fill_value")) {
      fill = *f;
      std::erase_if(rest.keywords, [](const auto &kw) { return kw.first == "fill_value"; });
    } else {
      fill = call.positional[1];
      rest.positional.erase(rest.positional.begin() + 1);
    }
    return create("full", rest, &fill);
  });
  auto like = [&rt](std::string op, CallArgs &call, std::optional<Value> fill) {
    Args a(call, op, {"a", "dtype", "buffer", "name"});
    auto x = as_tensor(a.required("a"), op, "a");
    KernelBuilder &kb = rt.builder(op);
    ir::Memory memory =
        buffer_arg(a.get("buffer"), on_chip(x->tensor().memory) ? x->tensor().memory : ir::Memory::Sbuf);
    auto out = new_tile(kb, op, memory, x->shape(), dtype_arg(a.get("dtype"), op).value_or(x->tensor().dtype));
    if (fill)
      memset(kb, *out, *fill);
    return Value::object(out);
  };
  def(nl, "zeros_like", [like](Interpreter &, CallArgs &call) { return like("zeros_like", call, Value::integer(0)); });
  def(nl, "ones_like", [like](Interpreter &, CallArgs &call) { return like("ones_like", call, Value::integer(1)); });
  def(nl, "empty_like", [like](Interpreter &, CallArgs &call) { return like("empty_like", call, std::nullopt); });

  def(nl, "matmul", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "matmul", {"x", "y", "transpose_x", "mask"});
    auto x = as_tensor(a.required("x"), "matmul", "x");
    auto y = as_tensor(a.required("y"), "matmul", "y");
    const Value *tx = a.get("transpose_x");
    KernelBuilder &kb = rt.builder("matmul");
    // nl.matmul(x, y) = nisa.nc_matmul(transpose(x), y); with transpose_x, x is already [K, M].
    if (tx && tx->kind == Value::Kind::Bool && tx->b)
      return nc_matmul(kb, *x, *y, "matmul");
    Value xt = transpose(kb, *x, "matmul", ir::Engine::Tensor);
    auto xt_sbuf = to_sbuf(kb, xt.shared_as<TensorRef>());
    return nc_matmul(kb, *xt_sbuf, *y, "matmul");
  });
  def(nl, "transpose", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "transpose", {"x", "dtype", "mask"});
    auto x = as_tensor(a.required("x"), "transpose", "x");
    return transpose(rt.builder("transpose"), *x, "transpose", ir::Engine::Tensor);
  });
  def(nl, "broadcast_to", [](Interpreter &interp, CallArgs &call) {
    Args a(call, "broadcast_to", {"src", "shape"});
    auto x = as_tensor(a.required("src"), "broadcast_to", "src");
    CallArgs inner;
    inner.positional.push_back(a.required("shape"));
    Value method = *tensor_method(interp, x, "broadcast_to");
    return method.object()->call(interp, inner);
  });

  def(nl, "program_id", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "program_id", {"axis"});
    std::int64_t axis = int_arg(a.required("axis"), "program_id", "axis");
    KernelBuilder &kb = rt.builder("program_id");
    if (axis < 0 || axis >= static_cast<std::int64_t>(ir::kMaxGridAxes))
      raise_error("ValueError", fmt::format("program_id axis {} is out of range (0 to 2)", axis));
    if (static_cast<std::size_t>(axis) >= kb.grid.size() || kb.grid[static_cast<std::size_t>(axis)] == 1)
      return Value::integer(0);
    Affine af;
    af.coef[static_cast<std::size_t>(axis)] = 1;
    return Value::object(std::make_shared<AffineObject>(af));
  });
  def(nl, "num_programs", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "num_programs", {"axes"});
    KernelBuilder &kb = rt.builder("num_programs");
    auto size = [&](std::int64_t axis) -> std::int64_t {
      return axis >= 0 && static_cast<std::size_t>(axis) < kb.grid.size() ? kb.grid[static_cast<std::size_t>(axis)] : 1;
    };
    const Value *axes = a.get("axes");
    if (!axes) {
      std::int64_t total = 1;
      for (std::int64_t g : kb.grid)
        total = checked_mul(total, g);
      return Value::integer(total);
    }
    if (axes->kind == Value::Kind::Int)
      return Value::integer(size(axes->i));
    std::vector<Value> out;
    for (const Value &ax : axes->seq().items)
      out.push_back(Value::integer(size(int_arg(ax, "num_programs", "axes"))));
    return Value::tuple(std::move(out));
  });
  def(nl, "program_ndim", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "program_ndim", {});
    return Value::integer(static_cast<std::int64_t>(rt.builder("program_ndim").grid.size()));
  });

  def(nl, "arange", [](Interpreter &, CallArgs &call) {
    Args a(call, "arange", {"start", "stop", "step"});
    std::int64_t start = 0, stop = int_arg(a.required("start"), "arange", "start"), step = 1;
    if (const Value *s = a.get("stop")) {
      start = stop;
      stop = int_arg(*s, "arange", "stop");
    }
    if (const Value *s = a.get("step"))
      step = int_arg(*s, "arange", "step");
    if (step <= 0 || stop <= start)
      raise_error("ValueError", fmt::format("nl.arange({}, {}, {}) is empty", start, stop, step));
    auto ix = std::make_shared<IndexObject>();
    ix->start.constant = start;
    ix->step = step;
    ix->count = (stop - start + step - 1) / step;
    return Value::object(ix);
  });
  def(nl, "ds", [](Interpreter &interp, CallArgs &call) {
    Args a(call, "ds", {"start", "size"});
    const Value &start = a.required("start");
    std::int64_t size = int_arg(a.required("size"), "ds", "size");
    Value stop = interp.binary_op(BinOpKind::Add, start, Value::integer(size));
    return Value::slice(start, stop, Value());
  });
  def(nl, "par_dim", [](Interpreter &, CallArgs &call) {
    Args a(call, "par_dim", {"size"});
    return Value::integer(int_arg(a.required("size"), "par_dim", "size"));
  });
  def(nl, "nc", [](Interpreter &, CallArgs &call) {
    Args a(call, "nc", {"n"});
    return Value::integer(int_arg(a.required("n"), "nc", "n"));
  });
  def(nl, "spmd_dim", [](Interpreter &interp, CallArgs &call) {
    // In a launch grid, nl.spmd_dim(nl.nc(2), 2) is an axis of 2 * 2 instances.
    Value total = Value::integer(1);
    for (const Value &v : call.positional)
      total = interp.binary_op(BinOpKind::Mult, total, v);
    return total;
  });
  for (auto [name, kind] :
       {std::pair{"affine_range", LoopKind::Affine}, std::pair{"sequential_range", LoopKind::Sequential},
        std::pair{"static_range", LoopKind::Static}}) {
    std::string op = name;
    LoopKind k = kind;
    def(nl, op, [op, k](Interpreter &, CallArgs &call) {
      Args a(call, op, {"start", "stop", "step"});
      auto r = std::make_shared<NkiRangeObject>();
      r->kind = k;
      r->stop = int_arg(a.required("start"), op, "start");
      if (const Value *s = a.get("stop")) {
        r->start = r->stop;
        r->stop = int_arg(*s, op, "stop");
      }
      if (const Value *s = a.get("step"))
        r->step = int_arg(*s, op, "step");
      if (r->step == 0)
        raise_error("ValueError", fmt::format("{}() arg 3 must not be zero", op));
      return Value::object(r);
    });
  }
}

// ---- nisa ---------------------------------------------------------------------------------

namespace {

/// The new `nki` API's destination form of an ISA op (reference/nki.md "Two API generations"):
/// `nisa.tensor_copy(dst=t, src=x)` or `nisa.nc_matmul(psum, stationary, moving)`. The op runs
/// in its legacy value-returning form, then its instruction writes `dst` directly (an
/// nc_matmul accumulates into a PSUM dst, as `psum += nisa.nc_matmul(...)` does). The
/// positional form is recognised by a tensor at `probe`, where the legacy form never has one.
BuiltinFunction::Impl dst_form(std::string op, std::size_t probe, BuiltinFunction::Impl legacy) {
  return [op = std::move(op), probe, legacy = std::move(legacy)](Interpreter &interp, CallArgs &call) -> Value {
    std::optional<Value> dst;
    for (auto it = call.keywords.begin(); it != call.keywords.end(); ++it)
      if (it->first == "dst") {
        dst = it->second;
        call.keywords.erase(it);
        break;
      }
    if (!dst && call.positional.size() > probe && call.positional[probe].as<TensorRef>()) {
      dst = call.positional.front();
      call.positional.erase(call.positional.begin());
    }
    if (!dst)
      return legacy(interp, call);
    auto target = as_tensor(*dst, op, "dst");
    if (!target->out_of_bound.empty())
      raise_error("err_tensor_access_out_of_bound", target->out_of_bound);
    Value result = legacy(interp, call);
    auto r = result.shared_as<TensorRef>();
    if (!r)
      return result;
    KernelBuilder &kb = *target->builder;
    if (op == "nc_matmul") {
      assign_to_view(interp, *target, result, BinOpKind::Add);
      return Value::none();
    }
    std::int64_t writer = kb.last_writer[r->ap.tensor];
    if (writer >= 0 && static_cast<std::size_t>(writer) + 1 == kb.fn.instructions.size() &&
        on_chip(target->tensor().memory)) {
      ir::Instruction &inst = kb.fn.instructions.back();
      if (inst.num_dst == 1 && kb.fn.dst(inst)[0].tensor == r->ap.tensor && r->shape() == target->shape()) {
        check_store_shape(*target, *r, target->tensor().name, r->tensor().name);
        kb.fn.set_dst(inst, 0, target->ap);
        kb.last_writer[target->ap.tensor] = writer;
        return Value::none();
      }
    }
    assign_to_view(interp, *target, result, std::nullopt);
    return Value::none();
  };
}

} // namespace

void add_isa_functions(NkiRuntime &rt, ModuleObject &nisa) {
  def(nisa, "nc_matmul", dst_form("nc_matmul", 2, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "nc_matmul",
               {"stationary", "moving", "is_stationary_onezero", "is_moving_onezero", "is_transpose", "mask", "dtype"});
        auto s = as_tensor(a.required("stationary"), "nc_matmul", "stationary");
        auto m = as_tensor(a.required("moving"), "nc_matmul", "moving");
        return nc_matmul(rt.builder("nc_matmul"), *s, *m, "nc_matmul");
      }));
  def(nisa, "nc_transpose", dst_form("nc_transpose", 1, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "nc_transpose", {"data", "mask", "dtype", "engine"});
        auto x = as_tensor(a.required("data"), "nc_transpose", "data");
        ir::Engine engine = ir::Engine::Tensor;
        if (const Value *e = a.get("engine"))
          if (e->kind == Value::Kind::Str && e->str_text() == "vector_engine")
            engine = ir::Engine::Vector;
        return transpose(rt.builder("nc_transpose"), *x, "nc_transpose", engine);
      }));
  def(nisa, "activation", dst_form("activation", 0, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "activation",
               {"op", "data", "bias", "scale", "reduce_op", "reduce_res", "reduce_cmd", "mask", "dtype"});
        std::string func = op_name(a.required("op"), "activation", "op");
        auto x = as_tensor(a.required("data"), "activation", "data");
        return activation(rt.builder("activation"), func, *x, dtype_arg(a.get("dtype"), "activation"), a.get("bias"),
                          a.get("scale"), "activation");
      }));
  def(nisa, "tensor_tensor", dst_form("tensor_tensor", 2, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "tensor_tensor", {"data1", "data2", "op", "mask", "dtype"});
        auto x = as_tensor(a.required("data1"), "tensor_tensor", "data1");
        auto y = as_tensor(a.required("data2"), "tensor_tensor", "data2");
        std::string op = op_name(a.required("op"), "tensor_tensor", "op");
        return tensor_tensor(rt.builder("tensor_tensor"), op, *x, *y, dtype_arg(a.get("dtype"), "tensor_tensor"),
                             "data1", "data2", "tensor_tensor");
      }));
  def(nisa, "tensor_scalar", dst_form("tensor_scalar", 1, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "tensor_scalar",
               {"data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1", "mask", "dtype", "engine"});
        auto x = as_tensor(a.required("data"), "tensor_scalar", "data");
        require_on_chip(*x, "tensor_scalar", "data");
        KernelBuilder &kb = rt.builder("tensor_scalar");
        ir::AttrList attrs;
        std::vector<ir::AccessPattern> src = {x->ap};
        auto operand = [&](const char *op_param, const char *operand_param, const char *reverse_param) {
          attrs.emplace_back(op_param, PyConstant::str(op_name(a.required(op_param), "tensor_scalar", op_param)));
          const Value &v = a.required(operand_param);
          if (auto t = v.shared_as<TensorRef>()) {
            // A [P, 1] tile supplies one scalar per partition.
            if (t->shape()[0] != x->shape()[0])
              raise_error(
                  "err_num_partition_mismatch",
                  fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters (data{}, "
                              "{}{}) of 'tensor_scalar'",
                              shape_text(x->shape()), operand_param, shape_text(t->shape())));
            src.push_back(broadcast_view(*t, x->shape()));
            attrs.emplace_back(operand_param, PyConstant::str("tile"));
          } else {
            attrs.emplace_back(operand_param, scalar_constant(v));
          }
          const Value *r = a.get(reverse_param);
          attrs.emplace_back(reverse_param, PyConstant::boolean(r && r->kind == Value::Kind::Bool && r->b));
        };
        operand("op0", "operand0", "reverse0");
        if (a.get("op1"))
          operand("op1", "operand1", "reverse1");
        auto out = new_tile(kb, "tensor_scalar", ir::Memory::Sbuf, x->shape(),
                            dtype_arg(a.get("dtype"), "tensor_scalar").value_or(x->tensor().dtype));
        kb.emit(ir::Opcode::TensorScalar, ir::Engine::Vector, {out->ap}, std::move(src), std::move(attrs));
        return Value::object(out);
      }));
  def(nisa, "tensor_reduce", dst_form("tensor_reduce", 0, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "tensor_reduce", {"op", "data", "axis", "mask", "dtype", "negate", "keepdims"});
        std::string op = op_name(a.required("op"), "tensor_reduce", "op");
        auto x = as_tensor(a.required("data"), "tensor_reduce", "data");
        auto flag = [&](const char *n) { return a.get(n) && a.get(n)->kind == Value::Kind::Bool && a.get(n)->b; };
        return reduce(rt.builder("tensor_reduce"), op, *x, a.required("axis"), flag("keepdims"), flag("negate"),
                      dtype_arg(a.get("dtype"), "tensor_reduce"), "tensor_reduce");
      }));
  def(nisa, "tensor_copy", dst_form("tensor_copy", 1, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "tensor_copy", {"src", "mask", "dtype", "engine"});
        auto x = as_tensor(a.required("src"), "tensor_copy", "src");
        require_on_chip(*x, "tensor_copy", "src");
        KernelBuilder &kb = rt.builder("tensor_copy");
        auto out = new_tile(kb, "tensor_copy", ir::Memory::Sbuf, x->shape(),
                            dtype_arg(a.get("dtype"), "tensor_copy").value_or(x->tensor().dtype));
        kb.emit(ir::Opcode::TensorCopy, ir::Engine::Vector, {out->ap}, {x->ap});
        return Value::object(out);
      }));
  def(nisa, "memset", [&rt](Interpreter &, CallArgs &call) {
    // The new API's `nisa.memset(dst=t, value=0)` fills an existing tile.
    if (call.keyword("dst") || (!call.positional.empty() && call.positional[0].as<TensorRef>())) {
      Args a(call, "memset", {"dst", "value", "engine"});
      auto dst = as_tensor(a.required("dst"), "memset", "dst");
      require_on_chip(*dst, "memset", "dst");
      if (!dst->out_of_bound.empty())
        raise_error("err_tensor_access_out_of_bound", dst->out_of_bound);
      memset(rt.builder("memset"), *dst, a.required("value"));
      return Value::none();
    }
    Args a(call, "memset", {"shape", "value", "dtype", "mask", "engine"});
    ir::Shape shape = shape_arg(a.required("shape"), "memset");
    auto dtype = dtype_arg(a.get("dtype"), "memset");
    if (!dtype)
      raise_error("TypeError", "memset() missing required argument 'dtype'");
    KernelBuilder &kb = rt.builder("memset");
    auto out = new_tile(kb, "memset", ir::Memory::Sbuf, shape, *dtype);
    memset(kb, *out, a.required("value"));
    return Value::object(out);
  });
  def(nisa, "iota", dst_form("iota", 0, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "iota", {"expr", "dtype", "mask"});
        auto dtype = dtype_arg(a.get("dtype"), "iota");
        if (!dtype)
          raise_error("TypeError", "iota() missing required argument 'dtype'");
        auto *ix = a.required("expr").as<IndexObject>();
        if (!ix)
          raise_error("TypeError", "the 'expr' of 'iota' must be an index expression such as nl.arange(128)[:, None]");
        ir::Shape shape;
        for (int i = 0; i < ix->rank; ++i)
          shape.push_back(i == ix->axis ? ix->count : 1);
        if (shape.size() == 1)
          shape.push_back(1);
        KernelBuilder &kb = rt.builder("iota");
        auto out = new_tile(kb, "iota", ir::Memory::Sbuf, shape, *dtype);
        kb.emit(ir::Opcode::Iota, ir::Engine::GpSimd, {out->ap}, {},
                {{"start", PyConstant::str(ix->start.text())}, {"step", PyConstant::integer(ix->step)}});
        return Value::object(out);
      }));
  def(nisa, "affine_select", dst_form("affine_select", 0, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "affine_select", {"pred", "on_true_tile", "on_false_value", "mask", "dtype"});
        auto *pred = a.required("pred").as<MaskObject>();
        if (!pred)
          raise_error("TypeError", "the 'pred' of 'affine_select' must be an affine predicate on index tiles");
        auto x = as_tensor(a.required("on_true_tile"), "affine_select", "on_true_tile");
        require_on_chip(*x, "affine_select", "on_true_tile");
        KernelBuilder &kb = rt.builder("affine_select");
        auto out = new_tile(kb, "affine_select", ir::Memory::Sbuf, x->shape(),
                            dtype_arg(a.get("dtype"), "affine_select").value_or(x->tensor().dtype));
        kb.emit(
            ir::Opcode::AffineSelect, ir::Engine::GpSimd, {out->ap}, {x->ap},
            {{"pred", PyConstant::str(pred->text)}, {"on_false_value", scalar_constant(a.required("on_false_value"))}});
        return Value::object(out);
      }));
  def(nisa, "bn_stats", dst_form("bn_stats", 1, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "bn_stats", {"data", "mask", "dtype"});
        auto x = as_tensor(a.required("data"), "bn_stats", "data");
        require_on_chip(*x, "bn_stats", "data");
        ir::Shape s = x->shape();
        if (s.size() != 2)
          raise_error("err_exceed_max_supported_dimension",
                      fmt::format("parameter '{}' of 'bn_stats' exceed max supported number of dimensions of 2.",
                                  x->describe()));
        if (s[1] > 512)
          raise_error("err_size_of_dimension_exceed_arch_limit",
                      fmt::format("size of dimension 1 in '{}' of 'bn_stats' exceed architecture limitation of 512.",
                                  x->describe()));
        KernelBuilder &kb = rt.builder("bn_stats");
        auto out = new_tile(kb, "bn_stats", ir::Memory::Sbuf, {s[0], 6},
                            dtype_arg(a.get("dtype"), "bn_stats").value_or(x->tensor().dtype));
        kb.emit(ir::Opcode::BnStats, ir::Engine::Vector, {out->ap}, {x->ap});
        return Value::object(out);
      }));
  def(nisa, "bn_aggr", dst_form("bn_aggr", 1, [&rt](Interpreter &, CallArgs &call) {
        Args a(call, "bn_aggr", {"data", "mask", "dtype"});
        auto x = as_tensor(a.required("data"), "bn_aggr", "data");
        require_on_chip(*x, "bn_aggr", "data");
        ir::Shape s = x->shape();
        if (s.size() != 2 || s[1] % 6 != 0)
          raise_error("ValueError",
                      fmt::format("the data of 'bn_aggr' must be [P, 6*k] bn_stats results, got {}", x->describe()));
        KernelBuilder &kb = rt.builder("bn_aggr");
        auto out = new_tile(kb, "bn_aggr", ir::Memory::Sbuf, {s[0], 2},
                            dtype_arg(a.get("dtype"), "bn_aggr").value_or(x->tensor().dtype));
        kb.emit(ir::Opcode::BnAggr, ir::Engine::Vector, {out->ap}, {x->ap});
        return Value::object(out);
      }));
  def(nisa, "dma_copy", [&rt](Interpreter &, CallArgs &call) {
    Args a(call, "dma_copy", {"dst", "src", "mask", "dst_rmw_op", "oob_mode", "dge_mode"});
    auto dst = as_tensor(a.required("dst"), "dma_copy", "dst");
    auto src = as_tensor(a.required("src"), "dma_copy", "src");
    if (dst->shape() != src->shape())
      raise_error("ValueError", fmt::format("'dma_copy' needs equal shapes, got dst {} and src {}", dst->describe(),
                                            src->describe()));
    rt.builder("dma_copy")
        .emit(ir::Opcode::DmaCopy, ir::Engine::Sync, {dst->ap}, {src->ap}, with_mask({}, a.get("mask")));
    return Value::none();
  });
  // Engine selectors (`engine=nisa.vector_engine`).
  for (const char *e : {"tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine", "unknown_engine"})
    nisa.globals().set(e, Value::str(e));
}

void add_numpy_functions(NkiRuntime &, ModuleObject &np, ModuleObject &nl) {
  // NumPy's ufuncs name NKI ops when passed as `op=` (np.add, np.exp, np.max); called on tiles
  // they behave as the nl function of the same name (lib: host NumPy answers on host values).
  auto alias = [&](const char *np_name, const char *nl_name) {
    if (Value *v = nl.globals().find_local(nl_name))
      set_tile_function(np, np_name, *v);
  };
  for (const char *n : kUnaryOps)
    alias(n, n);
  for (const char *n : kBinaryOps)
    alias(n, n);
  for (const char *n : kReduceOps)
    alias(n, n);
  alias("copy", "copy");
  alias("amax", "max");
  alias("amin", "min");
  alias("true_divide", "divide");
}

} // namespace nkicc::trace
