// What the reduce/scan family's instructions mean (lib/nki/isa_reduce.cpp says what it emits):
// the Vector engine's scan along the free axes, GpSimd's reduction across partitions, the
// select and scalar_tensor_tensor element-wise ops, and the fused reduction into an engine's
// accumulator registers. The engines compute in float32; the write rounds to the destination's
// dtype. A view's element order is row-major over its shape, partition first, so element i of
// a [P, ...] view is in partition i / (elements per partition).
#include "visitors_reduce.h"

#include "op_table.h"

#include <fmt/format.h>

#include <cmath>
#include <span>

namespace nkicc::sim {
namespace {

std::string shape_text(const std::vector<std::int64_t> &shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

bool operands(Executor &ex, const bir::KernelInstruction &inst, std::size_t dst, std::size_t src_min,
              std::size_t src_max) {
  if (inst.dst.size() != dst || inst.src.size() < src_min || inst.src.size() > src_max)
    return ex.fail(fmt::format("it has {} destination and {} source operands", inst.dst.size(), inst.src.size()));
  return true;
}

const BinaryOp *alu_op(Executor &ex, std::string_view attr) {
  const PyConstant *v = ex.attr(attr);
  if (!v || v->kind != PyConstant::Kind::Str) {
    ex.fail(fmt::format("it has no '{}' attribute naming an op", attr));
    return nullptr;
  }
  const BinaryOp *op = binary_op(v->s);
  if (!op)
    ex.fail(fmt::format("its ALU op '{}' is not one nkicc simulates", v->s));
  return op;
}

bool flag(Executor &ex, std::string_view name) {
  const PyConstant *v = ex.attr(name);
  return v && v->kind == PyConstant::Kind::Bool && v->b;
}

/// A number attribute, or (when `tile` may be) the text 'tile': the operand is then a source.
bool number_or_tile(Executor &ex, std::string_view name, double &value, bool &tile) {
  const PyConstant *v = ex.attr(name);
  tile = false;
  if (!v)
    return ex.fail(fmt::format("it has no '{}' attribute", name));
  switch (v->kind) {
  case PyConstant::Kind::Str:
    if (v->s != "tile")
      break;
    tile = true;
    return true;
  case PyConstant::Kind::Int:
    value = static_cast<double>(v->i);
    return true;
  case PyConstant::Kind::Float:
    value = v->f;
    return true;
  case PyConstant::Kind::Bool:
    value = v->b ? 1.0 : 0.0;
    return true;
  default:
    break;
  }
  return ex.fail(fmt::format("its '{}' attribute is neither a number nor 'tile'", name));
}

/// The elements per partition of a destination view (its first dimension the partitions).
bool rows(Executor &ex, const ir::AccessPattern &ap, std::int64_t &partitions, std::int64_t &per_partition) {
  std::vector<std::int64_t> shape = Executor::shape_of(ap);
  if (shape.empty() || shape[0] <= 0)
    return ex.fail("its destination view has no partition dimension");
  partitions = shape[0];
  per_partition = Executor::count_of(ap) / partitions;
  return true;
}

/// An element-wise instruction of this family: `f(values, i)` for each active destination
/// element i, every source read at the same position of its view (views of the destination's
/// element count; broadcasts are zero steps already). Sources are read before anything is
/// written.
template <class F>
bool map_elements(Executor &ex, const bir::KernelInstruction &inst, std::span<const ir::AccessPattern> srcs, F f) {
  const ir::AccessPattern &dst = inst.dst[0];
  std::int64_t count = Executor::count_of(dst);
  for (const ir::AccessPattern &s : srcs)
    if (Executor::count_of(s) != count)
      return ex.fail(fmt::format("its source view {} and its destination view {} differ in size",
                                 shape_text(Executor::shape_of(s)), shape_text(Executor::shape_of(dst))));
  std::vector<std::uint8_t> active;
  bool masked = false;
  if (!ex.mask(Executor::shape_of(dst), active, masked))
    return false;
  const std::vector<std::uint8_t> *act = masked ? &active : nullptr;
  std::vector<Offsets> offs(srcs.size());
  for (std::size_t k = 0; k < srcs.size(); ++k) {
    if (!ex.offsets(srcs[k], offs[k], act, "source"))
      return false;
    ex.check_written(srcs[k].tensor, offs[k], act, "source");
  }
  Offsets dst_offs;
  if (!ex.offsets(dst, dst_offs, act, "destination"))
    return false;
  std::vector<double> results(dst_offs.size()), values(srcs.size());
  bool finite_in = true, nan_out = false;
  for (std::size_t i = 0; i < dst_offs.size(); ++i) {
    if (act && !(*act)[i])
      continue;
    for (std::size_t k = 0; k < srcs.size(); ++k) {
      values[k] = ex.read(srcs[k].tensor, offs[k][i]);
      finite_in = finite_in && std::isfinite(values[k]);
    }
    results[i] = f(values.data(), i);
  }
  for (std::size_t i = 0; i < dst_offs.size(); ++i) {
    if (act && !(*act)[i])
      continue;
    ex.write(dst.tensor, dst_offs[i], results[i]);
    nan_out = nan_out || std::isnan(results[i]);
  }
  ex.note_nan(finite_in, nan_out);
  return true;
}

float apply(const BinaryOp *op, bool reverse, float a, float b) { return reverse ? op->f32(b, a) : op->f32(a, b); }

} // namespace

// ---- the fused reduction --------------------------------------------------------------------

void FusedReduction::combine(float &acc, float v) const {
  switch (op_) {
  case Op::Add:
    acc += v;
    break;
  case Op::Subtract:
    acc -= v;
    break;
  case Op::Multiply:
    acc *= v;
    break;
  case Op::Max:
    acc = std::isnan(acc) || std::isnan(v) ? NAN : (v > acc ? v : acc);
    break;
  case Op::Min:
    acc = std::isnan(acc) || std::isnan(v) ? NAN : (v < acc ? v : acc);
    break;
  }
}

bool FusedReduction::init(Executor &ex, const bir::KernelInstruction &inst) {
  const PyConstant *cmd = ex.attr("reduce_cmd");
  if (!cmd)
    return true;
  if (cmd->kind != PyConstant::Kind::Str)
    return ex.fail("its 'reduce_cmd' attribute is not a string");
  cmd_ = cmd->s;
  if (cmd_ != "idle" && cmd_ != "reset" && cmd_ != "reduce" && cmd_ != "reset_reduce" && cmd_ != "load_reduce")
    return ex.fail(fmt::format("its reduce_cmd '{}' is not one nkicc simulates", cmd_));
  active_ = true;
  has_res_ = inst.dst.size() == 2;
  negate_ = flag(ex, "reduce_negate");
  if (const PyConstant *op = ex.attr("reduce_op")) {
    static const std::pair<std::string_view, Op> kOps[] = {
        {"add", Op::Add}, {"subtract", Op::Subtract}, {"multiply", Op::Multiply}, {"max", Op::Max}, {"min", Op::Min}};
    bool found = false;
    for (auto [name, o] : kOps)
      if (op->kind == PyConstant::Kind::Str && op->s == name) {
        op_ = o;
        found = true;
      }
    if (!found)
      return ex.fail("its 'reduce_op' attribute is not a reduction nkicc simulates");
  } else if (cmd_ == "reduce" || cmd_ == "reset_reduce" || cmd_ == "load_reduce") {
    return ex.fail("it accumulates without a 'reduce_op' attribute");
  }
  identity_ = op_ == Op::Multiply ? 1.0f : op_ == Op::Max ? -INFINITY : op_ == Op::Min ? INFINITY : 0.0f;
  if (cmd_ == "load_reduce") {
    double v = 0;
    bool tile = false;
    if (!number_or_tile(ex, "reduce_init", v, tile))
      return false;
    if (tile)
      return ex.fail("its reduce_init is a tile, which nkicc does not simulate");
    init_ = static_cast<float>(v);
  }
  if (inst.dst.empty())
    return ex.fail("it has no destination");
  std::int64_t partitions = 0;
  if (!rows(ex, inst.dst[0], partitions, per_partition_))
    return false;
  if (partitions > static_cast<std::int64_t>(Executor::kLanes))
    return ex.fail(
        fmt::format("it reduces {} partitions into the {} accumulator registers", partitions, Executor::kLanes));
  if (per_partition_ <= 0)
    per_partition_ = 1;
  partial_.assign(static_cast<std::size_t>(partitions), identity_);
  return true;
}

bool FusedReduction::finish(Executor &ex, const bir::KernelInstruction &inst) {
  if (!active_)
    return true;
  std::array<float, Executor::kLanes> &regs = ex.accumulators(inst.engine);
  for (std::size_t p = 0; p < partial_.size(); ++p) {
    float &r = regs[p];
    // A subtraction's partial result already holds the negated terms: it adds on.
    auto merge = [this](float acc, float part) {
      if (op_ == Op::Subtract)
        return acc + part;
      combine(acc, part);
      return acc;
    };
    if (cmd_ == "reset")
      r = identity_;
    else if (cmd_ == "reduce")
      r = merge(r, partial_[p]);
    else if (cmd_ == "reset_reduce")
      r = partial_[p];
    else if (cmd_ == "load_reduce")
      r = merge(init_, partial_[p]);
  }
  if (!has_res_)
    return true;
  const ir::AccessPattern &res = inst.dst[1];
  if (Executor::count_of(res) != static_cast<std::int64_t>(partial_.size()))
    return ex.fail(fmt::format("its reduce_res view {} does not hold one element per partition of {}",
                               shape_text(Executor::shape_of(res)), partial_.size()));
  Offsets offs;
  if (!ex.offsets(res, offs, nullptr, "reduce_res"))
    return false;
  for (std::size_t p = 0; p < partial_.size(); ++p) {
    float v = negate_ ? -regs[p] : regs[p];
    ex.write(res.tensor, offs[p], v);
  }
  return true;
}

// ---- the visitors ---------------------------------------------------------------------------

/// TensorTensorScan: per partition, state = initial, then for each element in order
/// state = op1(op0(data0, state), data1) (`reverse0` swaps op0's operands, `reverse1` op1's),
/// written to the destination. Sources: data0, data1, then the [P, 1] initial tile when
/// `initial` is 'tile'. The state stays float32 (the destination's rounding is not fed back);
/// a masked-off element is skipped and leaves the state as it was.
bool visit_tensor_tensor_scan(Executor &ex, const bir::KernelInstruction &inst) {
  double initial = 0;
  bool initial_tile = false;
  if (!number_or_tile(ex, "initial", initial, initial_tile))
    return false;
  if (!operands(ex, inst, 1, initial_tile ? 3 : 2, initial_tile ? 3 : 2))
    return false;
  const BinaryOp *op0 = alu_op(ex, "op0");
  const BinaryOp *op1 = op0 ? alu_op(ex, "op1") : nullptr;
  if (!op1)
    return false;
  bool reverse0 = flag(ex, "reverse0"), reverse1 = flag(ex, "reverse1");
  std::int64_t partitions = 0, per = 0;
  if (!rows(ex, inst.dst[0], partitions, per))
    return false;
  std::vector<float> init(static_cast<std::size_t>(partitions), static_cast<float>(initial));
  if (initial_tile) {
    const ir::AccessPattern &t = inst.src[2];
    if (Executor::count_of(t) != partitions)
      return ex.fail(fmt::format("its initial view {} does not hold one element per partition of {}",
                                 shape_text(Executor::shape_of(t)), partitions));
    Offsets offs;
    if (!ex.offsets(t, offs, nullptr, "initial"))
      return false;
    ex.check_written(t.tensor, offs, nullptr, "initial");
    for (std::size_t p = 0; p < init.size(); ++p)
      init[p] = static_cast<float>(ex.read(t.tensor, offs[p]));
  }
  float state = 0;
  std::size_t partition = init.size(), row = static_cast<std::size_t>(per > 0 ? per : 1);
  return map_elements(ex, inst, std::span(inst.src).first(2), [&](const double *v, std::size_t i) {
    // map_elements visits the active elements in order: the first one of each partition
    // starts from its initial value.
    if (i / row != partition) {
      partition = i / row;
      state = init[partition];
    }
    float x = apply(op0, reverse0, static_cast<float>(v[0]), state);
    state = apply(op1, reverse1, x, static_cast<float>(v[1]));
    return static_cast<double>(state);
  });
}

/// PartitionReduce: dst[0, f] = op over p of src[p, f] (add, average, max in float32;
/// bitwise_or and bitwise_and on the integers), partitions in order.
bool visit_partition_reduce(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operands(ex, inst, 1, 1, 1))
    return false;
  const PyConstant *op = ex.attr("op");
  if (!op || op->kind != PyConstant::Kind::Str)
    return ex.fail("it has no 'op' attribute naming a reduction");
  const std::string &name = op->s;
  const BinaryOp *bitwise = name == "bitwise_or" || name == "bitwise_and" ? binary_op(name) : nullptr;
  if (!bitwise && name != "add" && name != "average" && name != "max")
    return ex.fail(fmt::format("its reduction '{}' is not one nkicc simulates", name));
  const ir::AccessPattern &src = inst.src[0], &dst = inst.dst[0];
  std::int64_t partitions = 0, per = 0;
  if (!rows(ex, src, partitions, per))
    return false;
  if (Executor::count_of(dst) != per)
    return ex.fail(fmt::format("its destination view {} does not hold the {} elements of one partition of {}",
                               shape_text(Executor::shape_of(dst)), per, shape_text(Executor::shape_of(src))));
  Offsets so, d_o;
  if (!ex.offsets(src, so, nullptr, "source") || !ex.offsets(dst, d_o, nullptr, "destination"))
    return false;
  ex.check_written(src.tensor, so, nullptr, "source");
  bool finite_in = true, nan_out = false;
  for (std::int64_t f = 0; f < per; ++f) {
    double exact = 0;
    float acc = name == "max" ? -INFINITY : 0.0f;
    for (std::int64_t p = 0; p < partitions; ++p) {
      double v = ex.read(src.tensor, so[static_cast<std::size_t>(p * per + f)]);
      finite_in = finite_in && std::isfinite(v);
      if (bitwise)
        exact = p == 0 ? v : bitwise->exact(exact, v);
      else if (name == "max")
        acc = std::isnan(acc) || std::isnan(v) ? NAN : std::max(acc, static_cast<float>(v));
      else
        acc += static_cast<float>(v);
    }
    double r = bitwise ? exact : name == "average" ? acc / static_cast<float>(partitions) : acc;
    nan_out = nan_out || std::isnan(r);
    ex.write(dst.tensor, d_o[static_cast<std::size_t>(f)], r);
  }
  ex.note_nan(finite_in, nan_out);
  return true;
}

/// SelectReduce: dst = predicate != 0 ? on_true : on_false (`reverse_pred` inverts the
/// predicate), on_false a number or (when 'tile') a per-partition third source; with its fused
/// reduction (max).
bool visit_select_reduce(Executor &ex, const bir::KernelInstruction &inst) {
  double on_false = 0;
  bool tile = false;
  if (!number_or_tile(ex, "on_false", on_false, tile))
    return false;
  FusedReduction reduce;
  if (!reduce.init(ex, inst))
    return false;
  if (!operands(ex, inst, reduce.destinations(), tile ? 3 : 2, tile ? 3 : 2))
    return false;
  bool reverse = flag(ex, "reverse_pred");
  auto f = static_cast<float>(on_false);
  return map_elements(ex, inst, inst.src,
                      [&](const double *v, std::size_t i) {
                        bool pred = (v[0] != 0) != reverse;
                        double r = pred ? static_cast<double>(static_cast<float>(v[1]))
                                        : (tile ? static_cast<double>(static_cast<float>(v[2])) : f);
                        reduce.add(i, r);
                        return r;
                      }) &&
         reduce.finish(ex, inst);
}

/// RangeSelect: dst[p, f] = on_true[p, f] where comp_op0(range_start + f, bound0[p]) and
/// comp_op1(range_start + f, bound1[p]) hold (f the flattened free index, the comparisons in
/// float32), else on_false_value; with its fused reduction (max). Sources: on_true and the two
/// bounds broadcast along the free axes.
bool visit_range_select(Executor &ex, const bir::KernelInstruction &inst) {
  FusedReduction reduce;
  if (!reduce.init(ex, inst))
    return false;
  if (!operands(ex, inst, reduce.destinations(), 3, 3))
    return false;
  const BinaryOp *cmp0 = alu_op(ex, "comp_op0");
  const BinaryOp *cmp1 = cmp0 ? alu_op(ex, "comp_op1") : nullptr;
  if (!cmp1)
    return false;
  double start = 0, fill = 0;
  bool tile = false;
  if (!number_or_tile(ex, "range_start", start, tile) || !number_or_tile(ex, "on_false_value", fill, tile))
    return false;
  std::int64_t partitions = 0, per = 0;
  if (!rows(ex, inst.dst[0], partitions, per))
    return false;
  auto row = static_cast<std::size_t>(per > 0 ? per : 1);
  auto f = static_cast<float>(fill);
  return map_elements(ex, inst, inst.src,
                      [&](const double *v, std::size_t i) {
                        auto index = static_cast<float>(start + static_cast<double>(i % row));
                        bool in = cmp0->f32(index, static_cast<float>(v[1])) != 0 &&
                                  cmp1->f32(index, static_cast<float>(v[2])) != 0;
                        double r = in ? static_cast<double>(static_cast<float>(v[0])) : f;
                        reduce.add(i, r);
                        return r;
                      }) &&
         reduce.finish(ex, inst);
}

/// ScalarTensorTensor: dst = op1(op0(data, operand0), operand1) in float32 (`reverseN` swaps
/// that op's operands). Sources: data, the operand0 tile when `operand0` is 'tile', operand1.
bool visit_scalar_tensor_tensor(Executor &ex, const bir::KernelInstruction &inst) {
  double operand0 = 0;
  bool tile = false;
  if (!number_or_tile(ex, "operand0", operand0, tile))
    return false;
  if (!operands(ex, inst, 1, tile ? 3 : 2, tile ? 3 : 2))
    return false;
  const BinaryOp *op0 = alu_op(ex, "op0");
  const BinaryOp *op1 = op0 ? alu_op(ex, "op1") : nullptr;
  if (!op1)
    return false;
  bool reverse0 = flag(ex, "reverse0"), reverse1 = flag(ex, "reverse1");
  auto k = static_cast<float>(operand0);
  return map_elements(ex, inst, inst.src, [&](const double *v, std::size_t) {
    float o0 = tile ? static_cast<float>(v[1]) : k;
    float x = apply(op0, reverse0, static_cast<float>(v[0]), o0);
    return static_cast<double>(apply(op1, reverse1, x, static_cast<float>(v[tile ? 2 : 1])));
  });
}

} // namespace nkicc::sim
