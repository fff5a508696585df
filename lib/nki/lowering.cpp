#include "lowering.h"

#include "nkicc/trace/pylib.h"

#include "index.h"
#include "objects.h"

#include <fmt/format.h>

#include <algorithm>

namespace nkicc::nki {

using python::BinOpKind;

std::shared_ptr<TensorRef> as_tensor(const Value &v, std::string_view op, std::string_view param, bool masked) {
  if (auto t = v.shared_as<TensorRef>()) {
    if (!t->out_of_bound.empty() && !masked)
      raise_error("err_tensor_access_out_of_bound", t->out_of_bound);
    return t;
  }
  if (v.as<LoopReduceObject>())
    raise_loop_reduce_operand(param, op);
  raise_error("TypeError",
              fmt::format("parameter '{}' of '{}' must be a tensor or tile, not '{}'", param, op, trace::type_name(v)));
}

void raise_loop_reduce_operand(std::string_view param, std::string_view op) {
  raise_error("TypeError", fmt::format("parameter '{}' of '{}' is the result of 'nl.loop_reduce', which is assigned "
                                       "into its destination tile first (acc[...] = nl.loop_reduce(x, ...))",
                                       param, op));
}

void require_on_chip(const TensorRef &t, std::string_view op, std::string_view param) {
  if (!ir::is_on_chip(t.tensor().memory))
    raise_error("err_unsupported_memory",
                fmt::format("Expected operand '{}' of '{}' to be in address space 'sbuf' or 'psum', but got a tile in "
                            "'{}' instead.",
                            param, op, ir::memory_name(t.tensor().memory)));
}

void require_hbm(const TensorRef &t, std::string_view op, std::string_view param) {
  if (ir::is_on_chip(t.tensor().memory))
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

std::int64_t product(const ir::Shape &dims, std::size_t from) {
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
    raise_error("TypeError",
                fmt::format("'dtype' of '{}' must be an NKI dtype such as nl.float32, not {}", op, d->to_str()));
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

TensorShape tensor_shape_arg(const Value &v, std::string_view op) {
  TensorShape out;
  auto dim = [&](const Value &d) {
    std::int64_t n = 0;
    if (auto *p = d.as<ParDimObject>()) {
      if (out.par_dim)
        raise_error("ValueError", fmt::format("the shape of '{}' marks more than one nl.par_dim", op));
      out.partition_dim = out.dims.size();
      out.par_dim = true;
      n = p->size;
    } else if (d.kind == Value::Kind::Int) {
      n = d.i;
    } else {
      raise_error("TypeError", fmt::format("the shape of '{}' must be positive integers, got {}", op, trace::repr(d)));
    }
    if (n <= 0)
      raise_error("TypeError", fmt::format("the shape of '{}' must be positive integers, got {}", op, trace::repr(d)));
    out.dims.push_back(n);
  };
  if (v.kind == Value::Kind::Tuple || v.kind == Value::Kind::List) {
    for (const Value &d : v.seq().items)
      dim(d);
  } else {
    dim(v);
  }
  if (out.dims.empty())
    raise_error("TypeError", fmt::format("the shape of '{}' must have at least one dimension", op));
  product(out.dims); // overflow check
  return out;
}

ir::Shape shape_arg(const Value &v, std::string_view op) { return tensor_shape_arg(v, op).dims; }

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
    // lib: a NumPy scalar (np.float32(0.5)) is the Python number it holds.
    if (std::optional<Value> n = trace::host_number(v))
      return scalar_constant(*n);
    raise_error("TypeError", fmt::format("expected a number, got '{}'", trace::type_name(v)));
  }
}

bool is_scalar(const Value &v) {
  return v.kind == Value::Kind::Int || v.kind == Value::Kind::Float || v.kind == Value::Kind::Bool ||
         (v.kind == Value::Kind::Object && trace::host_number(v) && !v.as<trace::HostArray>()); // lib: NumPy scalars
}

DType promote(DType a, DType b) {
  // NKI's type promotion (its "NKI Type Promotion" rules): a float beats an int; of two floats
  // the wider, or a widened type where neither holds the other's range; of two ints the
  // wider, or a widened signed type (int32 with uint32 widens to float32, the hardware having
  // no int64). bool gives way to anything.
  if (a == b)
    return a;
  if (a == DType::Bool)
    return b;
  if (b == DType::Bool)
    return a;
  auto is_float = [](DType d) {
    switch (d) {
    case DType::Float32:
    case DType::TFloat32:
    case DType::BFloat16:
    case DType::Float16:
    case DType::Float8E4M3:
    case DType::Float8E4M3FN:
    case DType::Float8E5M2:
      return true;
    default:
      return false;
    }
  };
  bool fa = is_float(a), fb = is_float(b);
  if (fa != fb)
    return fa ? a : b;
  std::size_t sa = dtype_size(a), sb = dtype_size(b);
  if (fa) {
    if (a == DType::Float32 || b == DType::Float32)
      return DType::Float32;
    if (sa != sb)
      return sa > sb ? a : b;
    return sa == 1 ? DType::BFloat16 : DType::Float32; // float16 with bfloat16; two float8s
  }
  auto is_signed = [](DType d) { return d == DType::Int8 || d == DType::Int16 || d == DType::Int32; };
  bool ua = !is_signed(a), ub = !is_signed(b);
  if (ua == ub)
    return sa >= sb ? a : b;
  DType u = ua ? a : b, i = ua ? b : a;
  if (dtype_size(i) > dtype_size(u))
    return i;
  switch (dtype_size(u)) {
  case 1:
    return DType::Int16;
  case 2:
    return DType::Int32;
  default:
    return DType::Float32;
  }
}

DType weak_scalar_dtype(const Value &v) {
  // A Python number has no dtype of its own: NKI takes the widest the hardware has.
  switch (v.kind) {
  case Value::Kind::Bool:
    return DType::UInt8;
  case Value::Kind::Int:
    return DType::Int32;
  default:
    return DType::Float32;
  }
}

std::shared_ptr<TensorRef> new_tile(KernelBuilder &kb, std::string_view stem, ir::Memory memory, ir::Shape shape,
                                    DType dtype) {
  // A tile lives on at least one partition: the result of an op on a single element (nl.load of
  // `sinks[b, h]`, an SBUF scalar) is a [1, 1] tile, which nl's ops broadcast across partitions.
  if (ir::is_on_chip(memory) && shape.empty())
    shape = {1, 1};
  if (ir::is_on_chip(memory))
    check_partitions(shape);
  if (memory == ir::Memory::Psum)
    check_psum_tile(shape, dtype);
  ir::TensorId id = kb.new_tensor(kb.auto_name(stem), ir::TensorRole::Internal, memory, std::move(shape), dtype, true);
  return kb.full_view(id);
}

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

ir::Shape broadcast_shapes(const TensorRef &a, const TensorRef &b, std::string_view op, std::string_view pa,
                           std::string_view pb, bool partition_broadcast) {
  ir::Shape sa = a.shape(), sb = b.shape();
  bool partitions_ok =
      !sa.empty() && !sb.empty() && (sa[0] == sb[0] || (partition_broadcast && (sa[0] == 1 || sb[0] == 1)));
  if (!partitions_ok)
    raise_error("err_num_partition_mismatch",
                fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters ({}{}, {}{}) of "
                            "'{}'",
                            pa, shape_text(sa), pb, shape_text(sb), op));
  if (sa.size() != sb.size())
    raise_error("ValueError", fmt::format("operands of '{}' have different ranks: {}{} and {}{}", op, pa,
                                          shape_text(sa), pb, shape_text(sb)));
  ir::Shape out = sa;
  for (std::size_t i = 0; i < sa.size(); ++i) {
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

ir::AccessPattern broadcast_view(const TensorRef &t, const ir::Shape &shape) {
  // A size-1 dimension repeats by a zero step; on the partition dimension that is a partition
  // broadcast (every partition reads partition 0's elements).
  ir::AccessPattern ap = t.ap;
  // A per-partition value ([P, 1]) against a tile of more dimensions ([P, A, B], an activation's
  // bias, tensor_scalar_reduce's operand0) repeats along every free dimension of the tile.
  const ir::Shape &own = t.shape();
  if (!ap.pattern.empty() && own.size() < shape.size() &&
      std::all_of(own.begin() + 1, own.end(), [](std::int64_t d) { return d == 1; })) {
    auto partitions = ap.pattern.front();
    ap.pattern.clear();
    ap.pattern.push_back(partitions.second == 1 && shape[0] != 1 ? std::pair{std::int64_t{0}, shape[0]} : partitions);
    for (std::size_t d = 1; d < shape.size(); ++d)
      ap.pattern.push_back({0, shape[d]});
    return ap;
  }
  for (std::size_t i = 0; i < ap.pattern.size() && i < shape.size(); ++i)
    if (ap.pattern[i].second == 1 && shape[i] != 1)
      ap.pattern[i] = {0, shape[i]};
  return ap;
}

Value tensor_tensor(KernelBuilder &kb, std::string_view op, const TensorRef &a, const TensorRef &b,
                    std::optional<DType> dtype, std::string_view pa, std::string_view pb, std::string_view label) {
  std::string_view where = label.empty() ? op : label;
  require_on_chip(a, where, pa);
  require_on_chip(b, where, pb);
  // nl's ops (no label) broadcast partitions; nisa.tensor_tensor (labelled) does not.
  ir::Shape shape = broadcast_shapes(a, b, where, pa, pb, label.empty());
  auto out = new_tile(kb, op, ir::Memory::Sbuf, shape, dtype.value_or(promote(a.tensor().dtype, b.tensor().dtype)));
  kb.emit(ir::Opcode::TensorTensor, ir::Engine::Vector, {out->ap}, {broadcast_view(a, shape), broadcast_view(b, shape)},
          {{"op", PyConstant::str(std::string(op))}});
  return Value::object(out);
}

Value tensor_scalar(KernelBuilder &kb, std::string_view op, const TensorRef &a, const Value &scalar, bool reverse,
                    std::optional<DType> dtype) {
  require_on_chip(a, op, "x");
  DType result = dtype.value_or(promote(a.tensor().dtype, weak_scalar_dtype(scalar)));
  auto out = new_tile(kb, op, ir::Memory::Sbuf, a.shape(), result);
  kb.emit(ir::Opcode::TensorScalar, ir::Engine::Vector, {out->ap}, {a.ap},
          {{"op0", PyConstant::str(std::string(op))},
           {"operand0", scalar_constant(scalar)},
           {"reverse0", PyConstant::boolean(reverse)}});
  return Value::object(out);
}

Value elementwise(KernelBuilder &kb, std::string_view op, const Value &x, const Value &y, std::optional<DType> dtype,
                  std::string_view label) {
  auto tx = x.shared_as<TensorRef>() ? as_tensor(x, op, "x") : nullptr;
  auto ty = y.shared_as<TensorRef>() ? as_tensor(y, op, "y") : nullptr;
  if (tx && ty)
    return tensor_tensor(kb, op, *tx, *ty, dtype, "x", "y", label);
  if (tx && is_scalar(y))
    return tensor_scalar(kb, op, *tx, y, false, dtype);
  if (ty && is_scalar(x))
    return tensor_scalar(kb, op, *ty, x, true, dtype);
  raise_error("TypeError", fmt::format("'{}' needs a tile and a tile or number, got '{}' and '{}'", op,
                                       trace::type_name(x), trace::type_name(y)));
}

Value activation(KernelBuilder &kb, std::string_view func, const TensorRef &x, std::optional<DType> dtype,
                 const Value *bias, const Value *scale, std::string_view label, const FusedReduce *reduce) {
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
    if (auto s = scale->shared_as<TensorRef>()) {
      // Named, as tensor_scalar names a tile operand: {data, tile} is otherwise ambiguous
      // between a bias and a scale (the simulator reads the BIR alone).
      src.push_back(broadcast_view(*s, x.shape()));
      attrs.emplace_back("scale", PyConstant::str("tile"));
    } else {
      attrs.emplace_back("scale", scalar_constant(*scale));
    }
  }
  std::vector<ir::AccessPattern> dst = {out->ap};
  if (reduce) {
    attrs.insert(attrs.end(), reduce->attrs.begin(), reduce->attrs.end());
    if (reduce->dst)
      dst.push_back(*reduce->dst);
  }
  kb.emit(ir::Opcode::Activation, ir::Engine::Scalar, dst, src, attrs);
  return Value::object(out);
}

namespace {

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

} // namespace

Value reduce(KernelBuilder &kb, std::string_view op, const TensorRef &x, const Value &axis, bool keepdims, bool negate,
             std::optional<DType> dtype, std::string_view label) {
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

std::optional<std::pair<std::int64_t, std::int64_t>> pe_pair(const Value *v, std::string_view op,
                                                             std::string_view param) {
  if (!v)
    return std::nullopt;
  if (v->kind == Value::Kind::Tuple || v->kind == Value::Kind::List) {
    const auto &items = v->seq().items;
    if (items.empty())
      return std::nullopt;
    if (items.size() == 2 && items[0].kind == Value::Kind::Int && items[1].kind == Value::Kind::Int)
      return std::pair{items[0].i, items[1].i};
  }
  raise_error("TypeError",
              fmt::format("'{}' of '{}' must be a tuple of two integers, got {}", param, op, trace::repr(*v)));
}

ir::AttrList with_accumulate(const ir::AttrList &attrs, bool accumulate) {
  ir::AttrList out = attrs;
  for (auto &[name, value] : out)
    if (name == "accumulate") {
      value = PyConstant::boolean(accumulate);
      return out;
    }
  out.insert(out.begin(), {"accumulate", PyConstant::boolean(accumulate)});
  return out;
}

namespace {

bool is_fp8(DType d) { return d == DType::Float8E4M3 || d == DType::Float8E4M3FN || d == DType::Float8E5M2; }

// NKI's tiling-mode rules: a row or column tile of 128, 64 or (NeuronCore-v3 and newer) 32 PEs,
// starting at a multiple of its size inside the 128 PEs; the stationary tile fits in it.
void check_tiling(const KernelBuilder &kb, const MatmulMode &mode, std::int64_t rows, std::int64_t cols,
                  std::string_view op) {
  if (!mode.tile_position && !mode.tile_size)
    return;
  if (!mode.tile_position || !mode.tile_size)
    raise_error("ValueError", fmt::format("'tile_position' and 'tile_size' of '{}' must both be set to enable "
                                          "tiling mode, got only '{}'",
                                          op, mode.tile_position ? "tile_position" : "tile_size"));
  const char *axis[2] = {"row", "column"};
  std::int64_t size[2] = {mode.tile_size->first, mode.tile_size->second};
  std::int64_t start[2] = {mode.tile_position->first, mode.tile_position->second};
  std::int64_t need[2] = {rows, cols};
  for (int a = 0; a < 2; ++a) {
    if (size[a] != 128 && size[a] != 64 && size[a] != 32)
      raise_error("ValueError", fmt::format("{} tile size {} of '{}' must be 128, 64 or 32", axis[a], size[a], op));
    if (size[a] == 32 && kb.target.nc_generation < 3)
      raise_error("ValueError", fmt::format("{} tile size 32 of '{}' is not supported on NeuronCore-v{} (it needs "
                                            "NeuronCore-v3 or newer)",
                                            axis[a], op, kb.target.nc_generation));
    if (start[a] < 0 || start[a] % size[a] != 0 || start[a] + size[a] > kMaxPartitions)
      raise_error("ValueError", fmt::format("tile position start_{} {} of '{}' must be a multiple of the {} tile size "
                                            "{} and the tile must lie within the {} PE {}s",
                                            axis[a], start[a], op, axis[a], size[a], kMaxPartitions, axis[a]));
    if (need[a] > size[a])
      raise_error("ValueError", fmt::format("stationary tile of '{}' needs {} PE {}s, which exceed the {} tile size {} "
                                            "of tile_size",
                                            op, need[a], axis[a], axis[a], size[a]));
  }
}

} // namespace

Value nc_matmul(KernelBuilder &kb, const TensorRef &stationary, const TensorRef &moving, std::string_view op,
                const MatmulMode &mode) {
  require_on_chip(stationary, op, "stationary");
  require_on_chip(moving, op, "moving");
  ir::Shape s = stationary.shape(), m = moving.shape();
  std::size_t rank = mode.double_row() ? 3 : 2;
  if (s.size() != rank || m.size() != rank)
    raise_error("err_exceed_max_supported_dimension",
                fmt::format("parameter '{}' of '{}' exceed max supported number of dimensions of {}.",
                            s.size() != rank ? stationary.describe() : moving.describe(), op, rank));
  check_partitions(s);
  check_partitions(m);
  if (s[0] != m[0])
    raise_error("err_num_partition_mismatch",
                fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters (stationary{}, "
                            "moving{}) of '{}'",
                            shape_text(s), shape_text(m), op));
  std::int64_t rows = s[0]; // PE rows: the contraction (partition) dimension
  if (mode.double_row()) {
    if (kb.target.nc_generation < 3)
      raise_error("ValueError", fmt::format("perf_mode=`{}` is not supported on NeuronCore-v{} (it needs "
                                            "NeuronCore-v3 or newer)",
                                            mode.perf_mode, kb.target.nc_generation));
    if (s[1] != 2 || m[1] != 2)
      raise_error("ValueError", fmt::format("first F dim of LHS and RHS of the double_row matmult must be 2, got "
                                            "stationary{} and moving{} of '{}'",
                                            shape_text(s), shape_text(m), op));
    for (const TensorRef *t : {&stationary, &moving})
      if (!is_fp8(t->tensor().dtype))
        raise_error("TypeError", fmt::format("perf_mode=`{}` of '{}' multiplies FP8 operands (float8_e4m3, "
                                             "float8_e5m2), but '{}' is {}",
                                             mode.perf_mode, op, t->describe(), dtype_name(t->tensor().dtype)));
    if (mode.tile_size && mode.tile_size->second != kMaxPartitions)
      raise_error("ValueError", fmt::format("perf_mode=`{}` of '{}' cannot be combined with column tiling mode "
                                            "(tile_size column size {})",
                                            mode.perf_mode, op, mode.tile_size->second));
    // The pair of rows is contracted too: as a [2K, M] x [2K, N] matmul.
    s = {s[0], s[2]};
    m = {m[0], m[2]};
  }
  if (s[1] > kStationaryFmax)
    raise_error("err_size_of_dimension_exceed_arch_limit",
                fmt::format("size of dimension {} in 'stationary{}' of '{}' exceed architecture limitation of {}.",
                            rank - 1, shape_text(stationary.shape()), op, kStationaryFmax));
  if (m[1] > kMovingFmax)
    raise_error("err_size_of_dimension_exceed_arch_limit",
                fmt::format("size of dimension {} in 'moving{}' of '{}' exceed architecture limitation of {}.",
                            rank - 1, shape_text(moving.shape()), op, kMovingFmax));
  check_tiling(kb, mode, rows, s[1], op);
  auto out = new_tile(kb, "matmul", ir::Memory::Psum, {s[1], m[1]}, DType::Float32);
  if (!mode.double_row() && !mode.tile_size) {
    kb.emit(ir::Opcode::MatMul, ir::Engine::Tensor, {out->ap}, {stationary.ap, moving.ap}, accumulate_attrs(false));
  } else {
    ir::AttrList attrs = accumulate_attrs(false);
    if (mode.double_row())
      attrs.emplace_back("perf_mode", PyConstant::str(mode.perf_mode));
    if (mode.tile_size) {
      auto pair = [](std::pair<std::int64_t, std::int64_t> p) {
        return PyConstant::tuple({PyConstant::integer(p.first), PyConstant::integer(p.second)});
      };
      attrs.emplace_back("tile_position", pair(*mode.tile_position));
      attrs.emplace_back("tile_size", pair(*mode.tile_size));
    }
    kb.emit(ir::Opcode::MatMul, ir::Engine::Tensor, {out->ap}, {stationary.ap, moving.ap}, attrs);
  }
  std::int64_t k = mode.double_row() ? checked_mul(rows, 2) : rows;
  kb.fn.matmul_mac_count = checked_add(kb.fn.matmul_mac_count, checked_mul(checked_mul(k, s[1]), m[1]));
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
  // A single element (a 0-d view of HBM) takes a [1, 1] tile.
  auto single = [](const ir::Shape &s) {
    return std::all_of(s.begin(), s.end(), [](std::int64_t n) { return n == 1; });
  };
  if (single(d) && single(v))
    return;
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
           std::string_view dst_name, std::string_view value_name, bool skip_out_of_bounds) {
  require_hbm(dst, "store", "dst");
  require_on_chip(*value, "store", "value");
  check_store_shape(dst, *value, dst_name, value_name);
  value = to_sbuf(kb, value);
  std::vector<ir::AccessPattern> src = {broadcast_view(*value, dst.shape())};
  ir::AttrList attrs;
  add_indirect_operand(dst, "dst", src, attrs);
  add_oob_mode(skip_out_of_bounds, attrs);
  kb.emit(ir::Opcode::Store, ir::Engine::Sync, {dst.ap}, src, with_mask(std::move(attrs), mask));
}

bool write_result_into(KernelBuilder &kb, const TensorRef &target, const TensorRef &result) {
  ir::TensorId id = result.ap.tensor;
  std::size_t n = kb.fn.instructions.size();
  if (n == 0 || !kb.auto_named[id] || kb.last_writer[id] != n - 1 || kb.created_at[id] != n - 1 ||
      !ir::is_on_chip(target.tensor().memory) || result.shape() != target.shape())
    return false;
  ir::Instruction &inst = kb.fn.instructions.back();
  // A fused reduction's reduce_res is a second destination; the result is the first.
  if (inst.num_dst < 1 || kb.fn.dst(inst)[0].tensor != id)
    return false;
  for (std::size_t d = 1; d < inst.num_dst; ++d)
    if (kb.fn.dst(inst)[d].tensor == id)
      return false;
  for (const ir::Operand &src : kb.fn.src(inst))
    if (src.tensor == id)
      return false;
  // The Tensor engine writes only PSUM; a DMA only SBUF; the other engines either.
  ir::Memory memory = target.tensor().memory;
  if ((inst.engine == ir::Engine::Tensor && memory != ir::Memory::Psum) ||
      (inst.engine == ir::Engine::Sync && memory != ir::Memory::Sbuf))
    return false;
  kb.fn.set_dst(inst, 0, target.ap);
  kb.last_writer[target.ap.tensor] = static_cast<std::uint32_t>(n - 1);
  return true;
}

void memset(KernelBuilder &kb, const TensorRef &t, const Value &value) {
  kb.emit(ir::Opcode::Memset, ir::Engine::Vector, {t.ap}, {}, {{"value", scalar_constant(value)}});
}

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
  if (std::optional<Value> n = trace::index_number(v)) // lib: a NumPy integer
    return n->kind == Value::Kind::Bool ? n->b : n->i;
  raise_error("TypeError",
              fmt::format("parameter '{}' of '{}' must be an integer, not '{}'", param, op, trace::type_name(v)));
}

} // namespace nkicc::nki
