// nisa: NKI's instruction-level ops, each one instruction on one engine. Each takes its
// legacy value-returning form and the new API's `dst=` form (DstForm).
#include "index.h"
#include "isa_reduce.h"
#include "lowering.h"
#include "objects.h"
#include "op_table.h"
#include "runtime.h"

#include <fmt/format.h>

namespace nkicc::nki {

namespace {

// perf_mode: a member of nisa.matmul_perf_mode or its name ('double_row', and the legacy
// 'double_row_gen3'); empty for none.
std::string perf_mode(OpCall &c) {
  const Value *v = c.get("perf_mode");
  if (!v)
    return {};
  std::string name;
  if (const auto *m = v->as<MatmulPerfModeObject>())
    name = m->name;
  else if (v->kind == Value::Kind::Str)
    name = std::string(v->str_text());
  if (name == "none")
    return {};
  if (name == "double_row" || name == "double_row_gen3")
    return name;
  raise_error("ValueError", fmt::format("'perf_mode' of 'nc_matmul' must be nisa.matmul_perf_mode.none or "
                                        "nisa.matmul_perf_mode.double_row, got {}",
                                        trace::repr(*v)));
}

Value lower_nc_matmul(OpCall &c) {
  MatmulMode mode;
  mode.perf_mode = perf_mode(c);
  mode.tile_position = pe_pair(c.get("tile_position"), "nc_matmul", "tile_position");
  mode.tile_size = pe_pair(c.get("tile_size"), "nc_matmul", "tile_size");
  return nc_matmul(c.kb(), *c.required_tensor("stationary"), *c.required_tensor("moving"), "nc_matmul", mode);
}

Value lower_nc_transpose(OpCall &c) {
  ir::Engine engine = ir::Engine::Tensor;
  if (const Value *e = c.get("engine"))
    if (e->kind == Value::Kind::Str && e->str_text() == "vector_engine")
      engine = ir::Engine::Vector;
  return transpose(c.kb(), *c.required_tensor("data"), "nc_transpose", engine);
}

// nisa.reciprocal: 1 / data on the Vector engine, recorded as the tensor_scalar it is (divide,
// reversed, by 1.0), which the BIR and the simulator already know.
Value lower_reciprocal(OpCall &c) {
  return tensor_scalar(c.kb(), "divide", *c.required_tensor("data"), Value::floating(1.0), true, c.dtype());
}

// The fused reduction (reduce_op, reduce_res, reduce_cmd) is isa_reduce.cpp's.
Value lower_activation(OpCall &c) {
  auto data = c.required_tensor("data");
  auto reduce = fused_reduce(c, *data, Accumulator::Scalar, "idle");
  return activation(c.kb(), c.op_name("op"), *data, c.dtype(), c.get("bias"), c.get("scale"), "activation",
                    reduce ? &*reduce : nullptr);
}

Value lower_tensor_tensor(OpCall &c) {
  return tensor_tensor(c.kb(), c.op_name("op"), *c.required_tensor("data1"), *c.required_tensor("data2"), c.dtype(),
                       "data1", "data2", "tensor_tensor");
}

Value lower_tensor_scalar(OpCall &c) {
  auto x = c.required_tensor("data");
  KernelBuilder &kb = c.kb();
  ir::AttrList attrs;
  std::vector<ir::AccessPattern> src = {x->ap};
  auto operand = [&](const char *op_param, const char *operand_param, const char *reverse_param) {
    attrs.emplace_back(op_param, PyConstant::str(c.op_name(op_param)));
    const Value &v = c.required(operand_param);
    if (auto t = v.shared_as<TensorRef>()) {
      // A [P, 1] tile supplies one scalar per partition.
      if (t->shape()[0] != x->shape()[0])
        raise_error("err_num_partition_mismatch",
                    fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters (data{}, "
                                "{}{}) of 'tensor_scalar'",
                                shape_text(x->shape()), operand_param, shape_text(t->shape())));
      src.push_back(broadcast_view(*t, x->shape()));
      attrs.emplace_back(operand_param, PyConstant::str("tile"));
    } else {
      attrs.emplace_back(operand_param, scalar_constant(v));
    }
    attrs.emplace_back(reverse_param, PyConstant::boolean(c.flag(reverse_param)));
  };
  operand("op0", "operand0", "reverse0");
  if (c.has("op1"))
    operand("op1", "operand1", "reverse1");
  auto out = new_tile(kb, "tensor_scalar", ir::Memory::Sbuf, x->shape(), c.dtype().value_or(x->tensor().dtype));
  c.emit({&out->ap, 1}, src, attrs);
  return Value::object(out);
}

Value lower_tensor_reduce(OpCall &c) {
  return reduce(c.kb(), c.op_name("op"), *c.required_tensor("data"), c.required("axis"), c.flag("keepdims"),
                c.flag("negate"), c.dtype(), "tensor_reduce");
}

Value lower_tensor_copy(OpCall &c) {
  auto x = c.required_tensor("src");
  KernelBuilder &kb = c.kb();
  auto out = new_tile(kb, "tensor_copy", ir::Memory::Sbuf, x->shape(), c.dtype().value_or(x->tensor().dtype));
  c.emit({&out->ap, 1}, {&x->ap, 1});
  return Value::object(out);
}

// `nisa.memset(shape, value, dtype)` makes a tile; the new API's `nisa.memset(dst=t, value=0)`
// (or `nisa.memset(t, 0)`) fills an existing one.
Value lower_memset(OpCall &c) {
  std::shared_ptr<TensorRef> dst = c.tensor("dst");
  if (!dst)
    dst = c.tensor("shape");
  if (dst) {
    require_on_chip(*dst, "memset", "dst");
    if (!dst->out_of_bound.empty())
      raise_error("err_tensor_access_out_of_bound", dst->out_of_bound);
    memset(c.kb(), *dst, c.required("value"));
    return Value::none();
  }
  ir::Shape shape = shape_arg(c.required("shape"), "memset");
  auto dtype = c.dtype();
  if (!dtype)
    raise_error("TypeError", "memset() missing required argument 'dtype'");
  KernelBuilder &kb = c.kb();
  auto out = new_tile(kb, "memset", ir::Memory::Sbuf, shape, *dtype);
  memset(kb, *out, c.required("value"));
  return Value::object(out);
}

// The index expression's values, laid out on the index tile's axes: `expr` is its canonical
// text over the axes (`i0 + 8*i1`), which are the destination's dimensions.
Value lower_iota(OpCall &c) {
  auto dtype = c.dtype();
  if (!dtype)
    raise_error("TypeError", "iota() missing required argument 'dtype'");
  auto ix = to_index(c.required("expr"));
  if (!ix)
    raise_error("TypeError", "the 'expr' of 'iota' must be an index expression such as nl.arange(128)[:, None]");
  ir::Shape shape = ix->shape();
  while (shape.size() < 2)
    shape.push_back(1);
  KernelBuilder &kb = c.kb();
  auto out = new_tile(kb, "iota", ir::Memory::Sbuf, shape, *dtype);
  c.emit({&out->ap, 1}, {}, with_mask({{"expr", PyConstant::str(ix->text())}}, c.get("mask")));
  return Value::object(out);
}

Value lower_affine_select(OpCall &c) {
  auto *pred = c.required("pred").as<MaskObject>();
  if (!pred)
    raise_error("TypeError", "the 'pred' of 'affine_select' must be an affine predicate on index tiles");
  auto x = c.required_tensor("on_true_tile");
  KernelBuilder &kb = c.kb();
  auto out = new_tile(kb, "affine_select", ir::Memory::Sbuf, x->shape(), c.dtype().value_or(x->tensor().dtype));
  c.emit({&out->ap, 1}, {&x->ap, 1},
         {{"pred", PyConstant::str(pred->text)}, {"on_false_value", scalar_constant(c.required("on_false_value"))}});
  return Value::object(out);
}

Value lower_bn_stats(OpCall &c) {
  auto x = c.required_tensor("data");
  ir::Shape s = x->shape();
  if (s.size() != 2)
    raise_error(
        "err_exceed_max_supported_dimension",
        fmt::format("parameter '{}' of 'bn_stats' exceed max supported number of dimensions of 2.", x->describe()));
  if (s[1] > 512)
    raise_error(
        "err_size_of_dimension_exceed_arch_limit",
        fmt::format("size of dimension 1 in '{}' of 'bn_stats' exceed architecture limitation of 512.", x->describe()));
  KernelBuilder &kb = c.kb();
  auto out = new_tile(kb, "bn_stats", ir::Memory::Sbuf, {s[0], 6}, c.dtype().value_or(x->tensor().dtype));
  c.emit({&out->ap, 1}, {&x->ap, 1});
  return Value::object(out);
}

Value lower_bn_aggr(OpCall &c) {
  auto x = c.required_tensor("data");
  ir::Shape s = x->shape();
  if (s.size() != 2 || s[1] % 6 != 0)
    raise_error("ValueError",
                fmt::format("the data of 'bn_aggr' must be [P, 6*k] bn_stats results, got {}", x->describe()));
  KernelBuilder &kb = c.kb();
  auto out = new_tile(kb, "bn_aggr", ir::Memory::Sbuf, {s[0], 2}, c.dtype().value_or(x->tensor().dtype));
  c.emit({&out->ap, 1}, {&x->ap, 1});
  return Value::object(out);
}

Value lower_dma_copy(OpCall &c) {
  auto dst = c.required_tensor("dst");
  auto src = c.required_tensor("src");
  if (dst->shape() != src->shape())
    raise_error("ValueError",
                fmt::format("'dma_copy' needs equal shapes, got dst {} and src {}", dst->describe(), src->describe()));
  if (dst->indirect && src->indirect)
    raise_error("not-modelled", "nkicc does not model a 'dma_copy' indexed by tiles of indices on both sides");
  std::vector<ir::AccessPattern> srcs = {src->ap};
  ir::AttrList attrs;
  add_indirect_operand(*src, "src", srcs, attrs);
  add_indirect_operand(*dst, "dst", srcs, attrs);
  bool skip = oob_skip(c.get("oob_mode"), "dma_copy", "oob_mode");
  if (skip && c.has("dst_rmw_op"))
    raise_error("ValueError", "'dma_copy' with a dst_rmw_op takes only oob_mode=oob_mode.error, not oob_mode.skip");
  add_oob_mode(skip, attrs);
  if (c.has("dst_rmw_op")) // dst = op(dst, src), as nl.atomic_rmw
    attrs.emplace_back("dst_rmw_op", PyConstant::str(c.op_name("dst_rmw_op")));
  if (const Value *mode = c.get("dge_mode"); mode && !mode->is_none()) {
    const auto *dge = mode->as<DgeModeObject>();
    if (!dge)
      raise_error("TypeError",
                  fmt::format("'dma_copy' dge_mode must be a member of nisa.dge_mode, not {}", trace::repr(*mode)));
    if (dge->name != "unknown") // unknown: the compiler's choice, as when it is not given
      attrs.emplace_back("dge_mode", PyConstant::str(dge->name));
  }
  c.emit({&dst->ap, 1}, srcs, with_mask(std::move(attrs), c.get("mask")));
  return Value::none();
}

constexpr ir::Engine kVector = ir::Engine::Vector;
constexpr ir::Engine kGpSimd = ir::Engine::GpSimd;
constexpr DstForm dst_at(std::size_t probe, bool accumulates = false) { return {true, probe, accumulates}; }

const OpDef kOps[] = {
    {"nc_matmul(stationary: tile, moving: tile, *, is_stationary_onezero: bool = False, "
     "is_moving_onezero: bool = False, is_transpose: bool = False, tile_position: any = None, tile_size: any = None, "
     "perf_mode: any = None, mask: mask? = None, dtype: dtype? = None)",
     ir::Engine::Tensor, ir::Opcode::MatMul, lower_nc_matmul, dst_at(2, true)},
    {"nc_transpose(data: tile, *, mask: mask? = None, dtype: dtype? = None, engine: any = None)", ir::Engine::Tensor,
     ir::Opcode::Transpose, lower_nc_transpose, dst_at(1)},
    {"activation(op: op, data: tile, *, bias: tile? = None, scale: tile_or_scalar? = None, reduce_op: op? = None, "
     "reduce_res: tile? = None, reduce_cmd: any = None, mask: mask? = None, dtype: dtype? = None)",
     ir::Engine::Scalar, ir::Opcode::Activation, lower_activation, dst_at(0)},
    {"tensor_tensor(data1: tile, data2: tile, op: op, *, dtype: dtype? = None, mask: mask? = None, engine: any = None)",
     kVector, ir::Opcode::TensorTensor, lower_tensor_tensor, dst_at(2)},
    {"tensor_scalar(data: tile, op0: op, operand0: tile_or_scalar, reverse0: bool = False, op1: op? = None, "
     "operand1: tile_or_scalar? = None, reverse1: bool = False, *, dtype: dtype? = None, mask: mask? = None, "
     "engine: any = None)",
     kVector, ir::Opcode::TensorScalar, lower_tensor_scalar, dst_at(1)},
    {"reciprocal(data: tile, *, dtype: dtype? = None, mask: mask? = None)", kVector, ir::Opcode::TensorScalar,
     lower_reciprocal, dst_at(1)},
    {"tensor_reduce(op: op, data: tile, axis: any, *, mask: mask? = None, dtype: dtype? = None, negate: bool = False, "
     "keepdims: bool = False)",
     kVector, ir::Opcode::TensorReduce, lower_tensor_reduce, dst_at(0)},
    {"tensor_copy(src: tile, *, mask: mask? = None, dtype: dtype? = None, engine: any = None)", kVector,
     ir::Opcode::TensorCopy, lower_tensor_copy, dst_at(1)},
    {"memset(shape: any = None, value: scalar? = None, dtype: dtype? = None, *, dst: tensor? = None, "
     "mask: mask? = None, engine: any = None)",
     kVector, ir::Opcode::Memset, lower_memset},
    {"iota(expr: any, dtype: dtype? = None, *, mask: mask? = None)", kGpSimd, ir::Opcode::Iota, lower_iota, dst_at(0)},
    {"affine_select(pred: any, on_true_tile: tile, on_false_value: scalar, *, mask: mask? = None, "
     "dtype: dtype? = None)",
     kGpSimd, ir::Opcode::AffineSelect, lower_affine_select, dst_at(0)},
    {"bn_stats(data: tile, *, mask: mask? = None, dtype: dtype? = None)", kVector, ir::Opcode::BnStats, lower_bn_stats,
     dst_at(1)},
    {"bn_aggr(data: tile, *, mask: mask? = None, dtype: dtype? = None)", kVector, ir::Opcode::BnAggr, lower_bn_aggr,
     dst_at(1)},
    {"dma_copy(dst: tensor, src: tensor, *, mask: mask? = None, dst_rmw_op: op? = None, oob_mode: any = None, "
     "dge_mode: any = None)",
     ir::Engine::Sync,
     ir::Opcode::DmaCopy,
     lower_dma_copy,
     {},
     {},
     true},
};

} // namespace

std::span<const OpDef> isa_ops() { return kOps; }

} // namespace nkicc::nki
