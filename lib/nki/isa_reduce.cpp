// nisa's reduce/scan family: the scan along the free axes (tensor_tensor_scan), the reduction
// across partitions (tensor_partition_reduce), and the ops whose instruction carries a fused
// free-axis reduction into the engine's accumulator registers (activation_reduce,
// tensor_scalar_reduce, select_reduce; nisa.activation's own reduce_* parameters use the same
// fused_reduce), plus scalar_tensor_tensor. Each takes its legacy value-returning form and the
// new API's `dst=` form (DstForm).
#include "isa_reduce.h"

#include "objects.h"
#include "runtime.h"

#include <fmt/format.h>

namespace nkicc::nki {

namespace {

[[noreturn]] void partition_mismatch(std::string_view op, std::string_view pa, const ir::Shape &a, std::string_view pb,
                                     const ir::Shape &b) {
  raise_error("err_num_partition_mismatch",
              fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters ({}{}, {}{}) of "
                          "'{}'",
                          pa, shape_text(a), pb, shape_text(b), op));
}

/// A `[P, 1]` operand (one element per partition of `data`): a scan's `initial`, a
/// tensor_scalar's `operand0`, a select's `on_false`, a fused reduction's `reduce_res`.
void check_per_partition(std::string_view op, const TensorRef &data, std::string_view data_name, const TensorRef &t,
                         std::string_view name) {
  ir::Shape d = data.shape(), s = t.shape();
  if (s.empty() || s[0] != d[0])
    partition_mismatch(op, data_name, d, name, s);
  if (product(s, 1) != 1)
    raise_error("ValueError", fmt::format("the '{}' of '{}' must hold one element per partition of {}{}, got {}", name,
                                          op, data_name, shape_text(d), t.describe()));
}

/// Two tiles an instruction reads element by element: equal partitions and as many elements
/// per partition; not both in PSUM (the engine reads PSUM through one port).
void check_pair(std::string_view op, const TensorRef &a, std::string_view pa, const TensorRef &b, std::string_view pb) {
  ir::Shape sa = a.shape(), sb = b.shape();
  check_partitions(sa);
  check_partitions(sb);
  if (sa[0] != sb[0])
    partition_mismatch(op, pa, sa, pb, sb);
  if (product(sa, 1) != product(sb, 1))
    raise_error("ValueError", fmt::format("'{}' needs the same number of elements per partition in {} and {}, got {} "
                                          "and {}",
                                          op, pa, pb, a.describe(), b.describe()));
  if (a.tensor().memory == ir::Memory::Psum && b.tensor().memory == ir::Memory::Psum)
    raise_error("ValueError", fmt::format("the {} and {} of '{}' cannot both be in PSUM: at most one of them may be a "
                                          "PSUM tile",
                                          pa, pb, op));
}

/// A tile-or-scalar operand broadcast along the free axes: a `[P, 1]` tile becomes the next
/// source (its attribute says 'tile'), a number is the attribute itself.
void per_partition_operand(const OpCall &c, const TensorRef &data, std::string_view param,
                           std::vector<ir::AccessPattern> &src, ir::AttrList &attrs) {
  const Value &v = c.required(param);
  if (auto t = v.shared_as<TensorRef>()) {
    check_per_partition(c.name(), data, "data", *t, param);
    src.push_back(broadcast_view(*t, data.shape()));
    attrs.emplace_back(std::string(param), PyConstant::str("tile"));
  } else {
    attrs.emplace_back(std::string(param), scalar_constant(v));
  }
}

/// The canonical name of a reduction (`np.sum` and `nl.add` are one), or empty.
std::string_view reduce_name(std::string_view op) {
  if (op == "add" || op == "sum")
    return "add";
  if (op == "subtract")
    return "subtract";
  if (op == "multiply" || op == "prod")
    return "multiply";
  if (op == "max" || op == "maximum" || op == "amax")
    return "max";
  if (op == "min" || op == "minimum" || op == "amin")
    return "min";
  return {};
}

// ---- the scan -----------------------------------------------------------------------------

/// out[:, i] = op1(op0(data0[:, i], out[:, i-1]), data1[:, i]) from `initial`, along each
/// partition's elements in row-major order of the free axes.
Value lower_tensor_tensor_scan(OpCall &c) {
  auto d0 = c.required_tensor("data0");
  auto d1 = c.required_tensor("data1");
  check_pair(c.name(), *d0, "data0", *d1, "data1");
  std::vector<ir::AccessPattern> src = {d0->ap, d1->ap};
  ir::AttrList attrs = {{"op0", PyConstant::str(c.op_name("op0"))}, {"op1", PyConstant::str(c.op_name("op1"))}};
  const Value &initial = c.required("initial");
  if (auto t = initial.shared_as<TensorRef>()) {
    check_per_partition(c.name(), *d0, "data0", *t, "initial");
    src.push_back(t->ap);
    attrs.emplace_back("initial", PyConstant::str("tile"));
  } else {
    attrs.emplace_back("initial", scalar_constant(initial));
  }
  attrs.emplace_back("reverse0", PyConstant::boolean(c.flag("reverse0")));
  attrs.emplace_back("reverse1", PyConstant::boolean(c.flag("reverse1")));
  auto out =
      new_tile(c.kb(), "tensor_tensor_scan", ir::Memory::Sbuf, d0->shape(), c.dtype().value_or(d0->tensor().dtype));
  c.emit({&out->ap, 1}, src, attrs);
  return Value::object(out);
}

// ---- reductions across partitions ---------------------------------------------------------

/// [P, f...] -> [1, f...] on the GpSimd engine.
Value lower_tensor_partition_reduce(OpCall &c) {
  auto x = c.required_tensor("data");
  std::string name = c.op_name("op");
  std::string_view op;
  if (name == "add" || name == "sum")
    op = "add";
  else if (name == "average" || name == "mean")
    op = "average";
  else if (name == "max" || name == "maximum")
    op = "max";
  else if (name == "bitwise_or" || name == "bitwise_and")
    op = name;
  if (op.empty())
    raise_error("ValueError", fmt::format("the op of 'tensor_partition_reduce' must be one of nl.add, nl.average, "
                                          "nl.max, nl.bitwise_or, nl.bitwise_and, not '{}'",
                                          name));
  ir::Shape shape = x->shape();
  check_partitions(shape);
  if ((op == "bitwise_or" || op == "bitwise_and") && !dtype_is_integer(x->tensor().dtype, true))
    raise_error("ValueError", fmt::format("'tensor_partition_reduce' with {} needs an integer tile, got {} of {}", op,
                                          x->describe(), dtype_name(x->tensor().dtype)));
  shape[0] = 1;
  auto out =
      new_tile(c.kb(), "tensor_partition_reduce", ir::Memory::Sbuf, shape, c.dtype().value_or(x->tensor().dtype));
  c.emit({&out->ap, 1}, {&x->ap, 1}, {{"op", PyConstant::str(std::string(op))}});
  return Value::object(out);
}

// ---- ops with a fused free-axis reduction ---------------------------------------------------

/// The instruction's destinations: its result, then the fused reduction's reduce_res.
std::vector<ir::AccessPattern> with_reduce_dst(const TensorRef &out, const std::optional<FusedReduce> &reduce,
                                               ir::AttrList &attrs) {
  std::vector<ir::AccessPattern> dst = {out.ap};
  if (reduce) {
    attrs.insert(attrs.end(), reduce->attrs.begin(), reduce->attrs.end());
    if (reduce->dst)
      dst.push_back(*reduce->dst);
  }
  return dst;
}

/// nisa.activation with reduce_cmd=reset_reduce (NKI: "equivalent to calling nisa.activation
/// with reduce_cmd=nisa.reduce_cmd.reset_reduce and passing in reduce_res").
Value lower_activation_reduce(OpCall &c) {
  auto data = c.required_tensor("data");
  auto reduce = fused_reduce(c, *data, Accumulator::Scalar, "reset_reduce");
  return activation(c.kb(), c.op_name("op"), *data, c.dtype(), c.get("bias"), c.get("scale"), "activation_reduce",
                    reduce ? &*reduce : nullptr);
}

/// data <op0> operand0 on the Vector engine (the tensor_scalar instruction with one op), its
/// result reduced along the free axes into the accumulator registers.
Value lower_tensor_scalar_reduce(OpCall &c) {
  auto x = c.required_tensor("data");
  check_partitions(x->shape());
  std::vector<ir::AccessPattern> src = {x->ap};
  ir::AttrList attrs = {{"op0", PyConstant::str(c.op_name("op0"))}};
  per_partition_operand(c, *x, "operand0", src, attrs);
  attrs.emplace_back("reverse0", PyConstant::boolean(c.flag("reverse0")));
  auto reduce = fused_reduce(c, *x, Accumulator::Vector, "reset_reduce");
  auto out =
      new_tile(c.kb(), "tensor_scalar_reduce", ir::Memory::Sbuf, x->shape(), c.dtype().value_or(x->tensor().dtype));
  auto dst = with_reduce_dst(*out, reduce, attrs);
  c.emit(dst, src, attrs);
  return Value::object(out);
}

/// predicate ? on_true : on_false on the Vector engine, with an optional max into the
/// accumulator registers.
Value lower_select_reduce(OpCall &c) {
  auto pred = c.required_tensor("predicate");
  auto on_true = c.required_tensor("on_true");
  check_pair(c.name(), *pred, "predicate", *on_true, "on_true");
  if (pred->shape() != on_true->shape())
    raise_error("ValueError",
                fmt::format("'select_reduce' needs predicate and on_true of the same shape, got {} and {}",
                            pred->describe(), on_true->describe()));
  if (!dtype_is_integer(pred->tensor().dtype, true))
    raise_error("ValueError", fmt::format("the predicate of 'select_reduce' must be an integer tile, got {} of {}",
                                          pred->describe(), dtype_name(pred->tensor().dtype)));
  std::vector<ir::AccessPattern> src = {pred->ap, on_true->ap};
  ir::AttrList attrs;
  per_partition_operand(c, *on_true, "on_false", src, attrs);
  attrs.emplace_back("reverse_pred", PyConstant::boolean(c.flag("reverse_pred")));
  if (reduce_name(c.op_name("reduce_op")) != "max")
    raise_error("ValueError",
                fmt::format("the reduce_op of 'select_reduce' must be nl.maximum, not '{}'", c.op_name("reduce_op")));
  auto reduce = fused_reduce(c, *on_true, Accumulator::Vector, "idle");
  auto out = new_tile(c.kb(), "select_reduce", ir::Memory::Sbuf, on_true->shape(),
                      c.dtype().value_or(on_true->tensor().dtype));
  auto dst = with_reduce_dst(*out, reduce, attrs);
  c.emit(dst, src, attrs);
  return Value::object(out);
}

/// range_select: per element (p, f), on_true where comp_op0(range_start + f, bound0[p]) and
/// comp_op1(range_start + f, bound1[p]) (f the flattened free index, compared in float32),
/// else on_false_value (FP32_MIN, the only value the hardware takes), with an optional max into
/// the Vector engine's accumulator registers. NeuronCore-v3 and newer.
Value lower_range_select(OpCall &c) {
  std::string_view op = c.name();
  int gen = c.kb().target.nc_generation;
  if (gen < 3)
    raise_error("err_unsupported_target",
                fmt::format("'range_select' is available only on NeuronCore-v3 and newer (trn2, trn3), but the target "
                            "is NeuronCore-v{}",
                            gen));
  auto on_true = c.required_tensor("on_true_tile");
  check_partitions(on_true->shape());
  if (dtype_is_integer(on_true->tensor().dtype, true))
    raise_error("TypeError",
                fmt::format("the on_true_tile of 'range_select' must be a floating-point tile, got {} of {}",
                            on_true->describe(), dtype_name(on_true->tensor().dtype)));
  std::vector<ir::AccessPattern> src = {on_true->ap};
  for (std::string_view name : {"bound0", "bound1"}) {
    auto b = c.required_tensor(name);
    check_per_partition(op, *on_true, "on_true_tile", *b, name);
    if (b->tensor().dtype != DType::Float32)
      raise_error("TypeError", fmt::format("the {} of 'range_select' must be a float32 tile, got {} of {}", name,
                                           b->describe(), dtype_name(b->tensor().dtype)));
    // Partition p's bound, repeated along every free dimension of on_true (of any rank).
    src.push_back(broadcast_view(*b, on_true->shape()));
  }
  ir::AttrList attrs;
  for (std::string_view name : {"comp_op0", "comp_op1"}) {
    std::string cmp = c.op_name(name);
    if (cmp != "equal" && cmp != "less" && cmp != "less_equal" && cmp != "greater" && cmp != "greater_equal")
      raise_error("ValueError", fmt::format("the {} of 'range_select' must be one of nl.equal, nl.less, "
                                            "nl.less_equal, nl.greater, nl.greater_equal, not '{}'",
                                            name, cmp));
    attrs.emplace_back(std::string(name), PyConstant::str(cmp));
  }
  const Value &start = c.required("range_start");
  if (start.kind != Value::Kind::Int)
    raise_error("TypeError", fmt::format("the range_start of 'range_select' must be a compile-time integer, not {}",
                                         trace::repr(start)));
  if (start.i < 0 || start.i + product(on_true->shape(), 1) > (std::int64_t{1} << 24))
    raise_error("ValueError", fmt::format("'range_select' compares range_start + free index in float32: range_start "
                                          "{} plus the {} elements per partition of {} must stay within 2^24",
                                          start.i, product(on_true->shape(), 1), on_true->describe()));
  attrs.emplace_back("range_start", PyConstant::integer(start.i));
  constexpr double kFp32Min = -3.4028234663852886e38;
  double fill = kFp32Min;
  if (const Value *v = c.get("on_false_value")) {
    PyConstant k = scalar_constant(*v);
    fill = k.kind == PyConstant::Kind::Float ? k.f : k.kind == PyConstant::Kind::Int ? static_cast<double>(k.i) : 0;
    if (static_cast<float>(fill) != static_cast<float>(kFp32Min))
      raise_error("ValueError", fmt::format("the on_false_value of 'range_select' must be nl.fp32.min "
                                            "(-3.4028235e+38), the only fill value the hardware takes, not {}",
                                            trace::repr(*v)));
  }
  attrs.emplace_back("on_false_value", PyConstant::floating(kFp32Min));
  if (reduce_name(c.op_name("reduce_op")) != "max")
    raise_error("ValueError",
                fmt::format("the reduce_op of 'range_select' must be nl.maximum, not '{}'", c.op_name("reduce_op")));
  auto reduce = fused_reduce(c, *on_true, Accumulator::Vector, "idle");
  auto out =
      new_tile(c.kb(), "range_select", ir::Memory::Sbuf, on_true->shape(), c.dtype().value_or(on_true->tensor().dtype));
  auto dst = with_reduce_dst(*out, reduce, attrs);
  c.emit(dst, src, attrs);
  return Value::object(out);
}

/// (data <op0> operand0) <op1> operand1 on the Vector engine: operand0 a number or a [P, 1]
/// tile, operand1 a tile of data's size.
Value lower_scalar_tensor_tensor(OpCall &c) {
  auto x = c.required_tensor("data");
  auto operand1 = c.required_tensor("operand1");
  check_pair(c.name(), *x, "data", *operand1, "operand1");
  std::vector<ir::AccessPattern> src = {x->ap};
  ir::AttrList attrs = {{"op0", PyConstant::str(c.op_name("op0"))}};
  per_partition_operand(c, *x, "operand0", src, attrs);
  attrs.emplace_back("reverse0", PyConstant::boolean(c.flag("reverse0")));
  attrs.emplace_back("op1", PyConstant::str(c.op_name("op1")));
  attrs.emplace_back("reverse1", PyConstant::boolean(c.flag("reverse1")));
  src.push_back(operand1->ap);
  auto out =
      new_tile(c.kb(), "scalar_tensor_tensor", ir::Memory::Sbuf, x->shape(), c.dtype().value_or(x->tensor().dtype));
  c.emit({&out->ap, 1}, src, attrs);
  return Value::object(out);
}

constexpr ir::Engine kVector = ir::Engine::Vector;
constexpr DstForm dst_at(std::size_t probe) { return {true, probe, false}; }

const OpDef kOps[] = {
    {"tensor_tensor_scan(data0: tile, data1: tile, initial: tile_or_scalar, op0: op, op1: op, reverse0: bool = False, "
     "reverse1: bool = False, *, dtype: dtype? = None, mask: mask? = None)",
     kVector, ir::Opcode::TensorTensorScan, lower_tensor_tensor_scan, dst_at(3)},
    {"tensor_partition_reduce(op: op, data: tile, *, mask: mask? = None, dtype: dtype? = None)", ir::Engine::GpSimd,
     ir::Opcode::PartitionReduce, lower_tensor_partition_reduce, dst_at(0)},
    {"activation_reduce(op: op, data: tile, *, reduce_op: op, reduce_res: tile? = None, bias: tile? = None, "
     "scale: tile_or_scalar? = 1.0, mask: mask? = None, dtype: dtype? = None)",
     ir::Engine::Scalar, ir::Opcode::Activation, lower_activation_reduce, dst_at(0)},
    {"tensor_scalar_reduce(data: tile, op0: op, operand0: tile_or_scalar, reduce_op: op, reduce_res: tile? = None, "
     "reverse0: bool = False, *, reduce_cmd: any = None, reduce_init: tile_or_scalar? = None, "
     "reduce_res_negate: bool = False, dtype: dtype? = None, mask: mask? = None)",
     kVector, ir::Opcode::TensorScalar, lower_tensor_scalar_reduce, dst_at(1)},
    {"select_reduce(predicate: tile, on_true: tile, on_false: tile_or_scalar, *, reduce_res: tile? = None, "
     "reduce_cmd: any = None, reduce_op: op = 'maximum', reverse_pred: bool = False, dtype: dtype? = None, "
     "mask: mask? = None)",
     kVector, ir::Opcode::SelectReduce, lower_select_reduce, dst_at(3)},
    {"range_select(*, on_true_tile: tile, comp_op0: op, comp_op1: op, bound0: tile, bound1: tile, reduce_cmd: any = "
     "None, "
     "reduce_res: tile? = None, reduce_op: op = 'maximum', range_start: any = 0, on_false_value: scalar? = None, "
     "mask: mask? = None, dtype: dtype? = None)",
     kVector, ir::Opcode::RangeSelect, lower_range_select, dst_at(0)},
    {"scalar_tensor_tensor(data: tile, op0: op, operand0: tile_or_scalar, op1: op, operand1: tile, "
     "reverse0: bool = False, reverse1: bool = False, *, dtype: dtype? = None, mask: mask? = None)",
     kVector, ir::Opcode::ScalarTensorTensor, lower_scalar_tensor_tensor, dst_at(1)},
};

} // namespace

std::optional<FusedReduce> fused_reduce(const OpCall &c, const TensorRef &data, Accumulator engine,
                                        std::string_view default_cmd) {
  std::string_view op = c.name();
  std::string cmd(default_cmd);
  // activation_reduce has no reduce_cmd (it is always reset_reduce).
  bool has_cmd = c.op.index("reduce_cmd") < c.op.params.size();
  if (const Value *v = has_cmd ? c.get("reduce_cmd") : nullptr) {
    const auto *rc = v->as<ReduceCmdObject>();
    if (!rc)
      raise_error("TypeError",
                  fmt::format("'{}' reduce_cmd must be a member of nisa.reduce_cmd, not {}", op, trace::repr(*v)));
    cmd = rc->name;
  }
  auto res = c.tensor("reduce_res");
  bool accumulates = cmd == "reduce" || cmd == "reset_reduce" || cmd == "load_reduce";
  const Value *reduce_op = c.get("reduce_op");
  FusedReduce out;
  if (reduce_op) {
    std::string name = c.op_name("reduce_op");
    std::string_view canonical = reduce_name(name);
    if (engine == Accumulator::Scalar && canonical != "add")
      raise_error("ValueError", fmt::format("the reduce_op of '{}' must be nl.add (the Scalar engine's accumulator "
                                            "registers only sum), not '{}'",
                                            op, name));
    if (canonical.empty())
      raise_error("ValueError", fmt::format("the reduce_op of '{}' must be one of nl.add, nl.subtract, nl.multiply, "
                                            "nl.max, nl.min, not '{}'",
                                            op, name));
    out.attrs.emplace_back("reduce_op", PyConstant::str(std::string(canonical)));
  } else if (accumulates) {
    raise_error("TypeError", fmt::format("'{}' with reduce_cmd.{} needs a reduce_op", op, cmd));
  }
  // Idle without a reduce_res: the instruction neither changes nor reads the registers.
  if (cmd == "idle" && !res)
    return std::nullopt;
  out.attrs.emplace_back("reduce_cmd", PyConstant::str(cmd));
  bool has_init = c.op.index("reduce_init") < c.op.params.size();
  const Value *init = has_init ? c.get("reduce_init") : nullptr;
  if (cmd == "load_reduce") {
    if (engine == Accumulator::Scalar || !has_init)
      raise_error("ValueError", fmt::format("'{}' does not take reduce_cmd.load_reduce", op));
    if (!init)
      raise_error("ValueError", fmt::format("'{}' with reduce_cmd.load_reduce needs a reduce_init", op));
    if (init->as<TensorRef>())
      raise_error("not-modelled",
                  fmt::format("nkicc does not model a tile reduce_init of '{}' yet: give a number", op));
    out.attrs.emplace_back("reduce_init", scalar_constant(*init));
  } else if (init) {
    raise_error("ValueError", fmt::format("the reduce_init of '{}' is only used with reduce_cmd.load_reduce", op));
  }
  if (c.op.index("reduce_res_negate") < c.op.params.size() && c.flag("reduce_res_negate"))
    out.attrs.emplace_back("reduce_negate", PyConstant::boolean(true));
  if (res) {
    check_per_partition(op, data, "data", *res, "reduce_res");
    out.dst = res->ap;
  }
  return out;
}

std::span<const OpDef> isa_reduce_ops() { return kOps; }

} // namespace nkicc::nki
