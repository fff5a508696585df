// nl's memory ops: tensor creation (nl.ndarray, nl.zeros, ...), DMA between HBM and SBUF
// (nl.load, nl.store, nl.load_transpose2d), on-chip copies and broadcasts.
#include "allocation.h"
#include "lowering.h"
#include "op_table.h"
#include "runtime.h"

#include "nkicc/sim/numeric.h"
#include "nkicc/trace/numpy.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

namespace nkicc::nki {

namespace {

// A shared HBM tensor holding `element(k)` (C order) in `dtype`: NumPy's astype conversion
// (a float made an integer truncates toward zero; nkicc then saturates to the type's range where
// NumPy would wrap), each element stored as the BIR stores it.
Value constant_tensor(OpCall &c, std::string_view stem, const std::vector<std::int64_t> &shape, DType dtype,
                      const std::function<double(std::int64_t)> &element) {
  if (shape.empty())
    raise_error("ValueError", fmt::format("'{}' needs an array of at least one dimension, not a 0-d array", stem));
  KernelBuilder &kb = c.kb();
  std::int64_t count = 1;
  for (std::int64_t d : shape)
    count = checked_mul(count, d);
  std::size_t size = dtype_size(dtype);
  ir::ConstantData data;
  data.bytes.resize(static_cast<std::size_t>(count) * size);
  bool integer = dtype_is_integer(dtype, false);
  for (std::int64_t k = 0; k < count; ++k) {
    double v = element(k);
    if (integer && std::isfinite(v))
      v = std::trunc(v);
    sim::encode(dtype, v, data.bytes.data() + static_cast<std::size_t>(k) * size);
  }
  data.tensor = kb.new_tensor(kb.auto_name(stem), ir::TensorRole::Constant, ir::Memory::SharedHbm,
                              ir::Shape(shape.begin(), shape.end()), dtype, true);
  kb.fn.constants.push_back(std::move(data));
  return Value::object(kb.full_view(kb.fn.constants.back().tensor));
}

// nl.shared_constant(constant, dtype=None): the host array's values in shared HBM, in `dtype`
// (by default the array's own, which must then be one NKI has).
Value lower_shared_constant(OpCall &c) {
  const auto *array = c.required("constant").as<trace::HostArray>();
  if (!array)
    raise_error("TypeError", fmt::format("the constant of 'shared_constant' must be a numpy.ndarray, not '{}'",
                                         trace::type_name(c.required("constant"))));
  std::optional<DType> dtype = c.dtype();
  if (!dtype)
    dtype = array->nki_dtype();
  if (!dtype)
    raise_error("TypeError", "the array of 'shared_constant' has a NumPy-only dtype (float64, int64 or uint64): "
                             "give dtype= an NKI dtype such as nl.float32");
  return constant_tensor(c, "shared_constant", array->shape, *dtype,
                         [array](std::int64_t k) { return array->element_double(k); });
}

// nl.shared_identity_matrix(n, dtype=nl.uint8): the n x n identity in shared HBM.
Value lower_shared_identity_matrix(OpCall &c) {
  std::int64_t n = c.integer("n");
  if (n <= 0)
    raise_error("ValueError", fmt::format("the n of 'shared_identity_matrix' must be positive, got {}", n));
  return constant_tensor(c, "shared_identity_matrix", {n, n}, c.dtype().value_or(DType::UInt8),
                         [n](std::int64_t k) { return k / n == k % n ? 1.0 : 0.0; });
}

Value lower_load(OpCall &c) {
  auto src = c.required_tensor("src");
  KernelBuilder &kb = c.kb();
  // A tile has a partition and at least one free dimension: a 1-D access ([K], such as
  // `x[i]` of an [N, 1] tensor) loads into a [K, 1] tile.
  ir::Shape shape = src->shape();
  if (shape.size() == 1)
    shape.push_back(1);
  auto out = new_tile(kb, "load", ir::Memory::Sbuf, shape, c.dtype().value_or(src->tensor().dtype));
  std::vector<ir::AccessPattern> srcs = {src->ap};
  ir::AttrList attrs;
  add_indirect_operand(*src, "src", srcs, attrs);
  add_oob_mode(oob_skip(c.get("mode"), "load", "mode"), attrs);
  c.emit({&out->ap, 1}, srcs, with_mask(std::move(attrs), c.get("mask")));
  return Value::object(out);
}

Value lower_load_transpose2d(OpCall &c) {
  auto src = c.required_tensor("src");
  ir::Shape s = src->shape();
  if (s.size() != 2)
    raise_error("err_exceed_max_supported_dimension",
                fmt::format("parameter '{}' of 'load_transpose2d' exceed max supported number of dimensions of 2.",
                            src->describe()));
  KernelBuilder &kb = c.kb();
  auto out = new_tile(kb, "load", ir::Memory::Sbuf, {s[1], s[0]}, c.dtype().value_or(src->tensor().dtype));
  c.emit({&out->ap, 1}, {&src->ap, 1}, with_mask({{"transpose", PyConstant::boolean(true)}}, c.get("mask")));
  return Value::object(out);
}

Value lower_store(OpCall &c) {
  store(c.kb(), *c.required_tensor("dst"), c.required_tensor("value"), c.get("mask"), "dst", "value",
        oob_skip(c.get("mode"), "store", "mode"));
  return Value::none();
}

Value lower_copy(OpCall &c) {
  auto x = c.required_tensor("src");
  KernelBuilder &kb = c.kb();
  auto out = new_tile(kb, "copy", ir::Memory::Sbuf, x->shape(), c.dtype().value_or(x->tensor().dtype));
  c.emit({&out->ap, 1}, {&x->ap, 1}, with_mask({}, c.get("mask")));
  return Value::object(out);
}

/// nl.ndarray and the creation ops that fill what they create.
Value create(OpCall &c, const Value *fill) {
  std::string_view op = c.name();
  TensorShape ts = tensor_shape_arg(c.required("shape"), op);
  ir::Shape shape = ts.dims;
  DType dtype = *c.dtype();
  KernelBuilder &kb = c.kb();
  ir::Memory memory = buffer_arg(c.get("buffer"), ir::Memory::Sbuf);
  std::shared_ptr<PlacementObject> placement =
      c.get("buffer") ? c.get("buffer")->shared_as<PlacementObject>() : nullptr;
  if (kb.force_auto_alloc)
    placement = nullptr;
  if (placement && fill)
    raise_error("err_tensor_creation_on_scratchpad_with_init_value_not_supported",
                "Creating SBUF/PSUM tensor with init value is not supported in allocated NKI kernels.");
  if (memory == ir::Memory::SharedHbm && kb.interp.call_depth() > kb.kernel_call_depth)
    raise_error("err_shared_hbm_must_in_kernel_level", "shared_hbm buffer can only be created top level kernel scope");
  std::string name;
  bool auto_named = true;
  if (const Value *n = c.get("name")) {
    if (n->kind != Value::Kind::Str)
      raise_error("TypeError", fmt::format("'name' of '{}' must be a str", op));
    if (!n->str_text().empty()) {
      name = n->str_text();
      auto_named = false;
    }
  }
  if (ir::is_on_chip(memory) && ts.partition_dim > 0) {
    // Dimensions before nl.par_dim are block dimensions: each block is a tile of the shape
    // that follows, with its own bytes (NKI's block dimension guide).
    ir::Shape tile(shape.begin() + static_cast<std::ptrdiff_t>(ts.partition_dim), shape.end());
    check_partitions(tile);
    if (memory == ir::Memory::Psum)
      check_psum_tile(tile, dtype);
    auto group = std::make_shared<BlockTensorRef>();
    group->builder = &kb;
    group->index = kb.new_block_tensor(auto_named ? std::string(op) : name, memory, shape,
                                       static_cast<std::uint32_t>(ts.partition_dim), dtype, auto_named);
    kb.block_placement[group->index] = placement;
    if (placement) {
      // The first block's place is checked where the tensor is made; each block's when made.
      ir::Tensor first;
      first.memory = memory;
      first.dtype = dtype;
      first.shape = tile;
      std::vector<std::int64_t> zero(ts.partition_dim, 0);
      check_place(kb, *placement, zero, first);
    }
    if (fill)
      for (std::size_t b = 0; b < group->block_tensor().blocks.size(); ++b)
        memset(kb, *group->block_view(b), *fill);
    return Value::object(group);
  }
  if (ir::is_on_chip(memory))
    check_partitions(shape);
  if (memory == ir::Memory::Psum)
    check_psum_tile(shape, dtype);
  ir::TensorId id = kb.new_tensor(auto_named ? kb.auto_name(op) : kb.auto_name(name), ir::TensorRole::Internal, memory,
                                  shape, dtype, auto_named);
  if (placement)
    place_tile(kb, id, *placement, {});
  auto view = kb.full_view(id);
  if (fill) {
    if (!ir::is_on_chip(memory))
      raise_error("TypeError", fmt::format("'{}' can only fill an on-chip tile (sbuf or psum)", op));
    memset(kb, *view, *fill);
  }
  return Value::object(view);
}

Value lower_ndarray(OpCall &c) { return create(c, nullptr); }
Value lower_zeros(OpCall &c) {
  static const Value zero = Value::integer(0);
  return create(c, &zero);
}
Value lower_ones(OpCall &c) {
  static const Value one = Value::integer(1);
  return create(c, &one);
}
Value lower_full(OpCall &c) { return create(c, &c.required("fill_value")); }

/// zeros_like and friends: a tile of the argument's shape, on chip where the argument is.
Value like(OpCall &c, const Value *fill) {
  auto x = c.required_tensor("a");
  KernelBuilder &kb = c.kb();
  ir::Memory memory =
      buffer_arg(c.get("buffer"), ir::is_on_chip(x->tensor().memory) ? x->tensor().memory : ir::Memory::Sbuf);
  auto out = new_tile(kb, c.name(), memory, x->shape(), c.dtype().value_or(x->tensor().dtype));
  if (fill)
    memset(kb, *out, *fill);
  return Value::object(out);
}

Value lower_zeros_like(OpCall &c) {
  static const Value zero = Value::integer(0);
  return like(c, &zero);
}
Value lower_ones_like(OpCall &c) {
  static const Value one = Value::integer(1);
  return like(c, &one);
}
Value lower_empty_like(OpCall &c) { return like(c, nullptr); }

Value lower_broadcast_to(OpCall &c) {
  auto x = c.required_tensor("src");
  CallArgs inner;
  inner.positional.push_back(c.required("shape"));
  Value method = *tensor_method(c.interp, x, "broadcast_to");
  return method.object()->call(c.interp, inner);
}

constexpr ir::Engine kSync = ir::Engine::Sync;
constexpr ir::Engine kVector = ir::Engine::Vector;
constexpr ir::Opcode kLoad = ir::Opcode::Load;
constexpr ir::Opcode kMemset = ir::Opcode::Memset;

// Creation ops take `buffer` positionally too, as the new `nki` API does. NKI's
// `lazy_initialization=True` lets the compiler defer a fill to the tile's first use; nkicc
// always fills where the kernel creates the tile, which gives every later read the same values.
const OpDef kOps[] = {
    {"load(src: hbm, *, mask: mask? = None, dtype: dtype? = None, mode: any = None)",
     kSync,
     kLoad,
     lower_load,
     {},
     {},
     true},
    {"load_transpose2d(src: hbm, *, mask: mask? = None, dtype: dtype? = None)", kSync, kLoad, lower_load_transpose2d},
    {"store(dst: hbm, value: tile, *, mask: mask? = None, mode: any = None)",
     kSync,
     ir::Opcode::Store,
     lower_store,
     {},
     {},
     true},
    {"copy(src: tile, *, mask: mask? = None, dtype: dtype? = None)",
     kVector,
     ir::Opcode::TensorCopy,
     lower_copy,
     {},
     "copy"},
    {"ndarray(shape: shape, dtype: dtype, buffer: any = None, name: any = '', *, lazy_initialization: bool = False)",
     kVector, kMemset, lower_ndarray},
    {"empty(shape: shape, dtype: dtype, buffer: any = None, name: any = '', *, lazy_initialization: bool = False)",
     kVector, kMemset, lower_ndarray},
    {"zeros(shape: shape, dtype: dtype, buffer: any = None, name: any = '', *, lazy_initialization: bool = False)",
     kVector, kMemset, lower_zeros},
    {"ones(shape: shape, dtype: dtype, buffer: any = None, name: any = '', *, lazy_initialization: bool = False)",
     kVector, kMemset, lower_ones},
    {"full(shape: shape, fill_value: scalar, dtype: dtype, buffer: any = None, name: any = '', *, "
     "lazy_initialization: bool = False)",
     kVector, kMemset, lower_full},
    {"zeros_like(a: tensor, dtype: dtype? = None, *, buffer: any = None, name: any = '', "
     "lazy_initialization: bool = False)",
     kVector, kMemset, lower_zeros_like},
    {"ones_like(a: tensor, dtype: dtype? = None, *, buffer: any = None, name: any = '', "
     "lazy_initialization: bool = False)",
     kVector, kMemset, lower_ones_like},
    {"empty_like(a: tensor, dtype: dtype? = None, *, buffer: any = None, name: any = '', "
     "lazy_initialization: bool = False)",
     kVector, kMemset, lower_empty_like},
    {"broadcast_to(src: tile, *, shape: shape)", kVector, ir::Opcode::TensorCopy, lower_broadcast_to},
    {"shared_constant(constant: any, dtype: dtype? = None)", kSync, kLoad, lower_shared_constant},
    {"shared_identity_matrix(n: int, dtype: dtype? = None)", kSync, kLoad, lower_shared_identity_matrix},
};

} // namespace

std::span<const OpDef> language_memory_ops() { return kOps; }

} // namespace nkicc::nki
