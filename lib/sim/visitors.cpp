// One visitor per opcode: what each instruction the tracer emits means (lib/nki says what it
// emits and with which attributes). Operands come in the order lib/nki appends them; where a
// choice about the hardware's behaviour is made, the visitor says so.
#include "executor.h"
#include "op_table.h"
#include "visitors_mx.h"
#include "visitors_reduce.h"
#include "visitors_select.h"

#include "nkicc/sim/numeric.h"

#include <Eigen/Core>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace nkicc::sim {
namespace {

/// Per-thread scratch reused by every instruction: a tile-sized vector allocated afresh per
/// instruction costs more (in page faults and zeroing) than the work it holds. Each visitor uses
/// its own fields and calls no other visitor while it holds them.
struct Scratch {
  Offsets off[3];
  std::vector<Offsets> srcs;
  std::vector<std::uint8_t> active;
  std::vector<double, UninitializedAllocator<double>> results;
  std::vector<double> values;
};

Scratch &scratch() {
  static thread_local Scratch s;
  return s;
}

bool finite(double v) { return std::isfinite(v); }

std::string shape_text(const std::vector<std::int64_t> &shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

bool number_attr(Executor &ex, std::string_view name, double &out, bool required = true) {
  const PyConstant *v = ex.attr(name);
  if (!v)
    return !required || ex.fail(fmt::format("it has no '{}' attribute", name));
  switch (v->kind) {
  case PyConstant::Kind::Int:
    out = static_cast<double>(v->i);
    return true;
  case PyConstant::Kind::Float:
    out = v->f;
    return true;
  case PyConstant::Kind::Bool:
    out = v->b ? 1.0 : 0.0;
    return true;
  default:
    return ex.fail(fmt::format("its '{}' attribute is not a number", name));
  }
}

bool flag_attr(Executor &ex, std::string_view name) {
  const PyConstant *v = ex.attr(name);
  return v && v->kind == PyConstant::Kind::Bool && v->b;
}

const std::string *string_attr(Executor &ex, std::string_view name) {
  const PyConstant *v = ex.attr(name);
  if (!v || v->kind != PyConstant::Kind::Str) {
    ex.fail(fmt::format("it has no '{}' attribute naming an op", name));
    return nullptr;
  }
  return &v->s;
}

bool operand_count(Executor &ex, const bir::KernelInstruction &inst, std::size_t dst, std::size_t src_min,
                   std::size_t src_max) {
  if (inst.dst.size() != dst || inst.src.size() < src_min || inst.src.size() > src_max)
    return ex.fail(fmt::format("it has {} destination and {} source operands", inst.dst.size(), inst.src.size()));
  return true;
}

bool same_count(Executor &ex, const ir::AccessPattern &dst, const ir::AccessPattern &src, std::string_view role) {
  if (Executor::count_of(dst) == Executor::count_of(src))
    return true;
  return ex.fail(fmt::format("its {} view {} and its destination view {} differ in size", role,
                             shape_text(Executor::shape_of(src)), shape_text(Executor::shape_of(dst))));
}

/// An element-wise instruction: `f(values, i)` for destination element i (row-major in its
/// view), the sources read at the same position of their views (broadcasts are zero steps in
/// the views already), the mask applied over the destination's shape.
template <class F>
bool elementwise(Executor &ex, const bir::KernelInstruction &inst, std::span<const ir::AccessPattern> srcs, F f) {
  const ir::AccessPattern &dst = inst.dst[0];
  for (std::size_t k = 0; k < srcs.size(); ++k)
    if (!same_count(ex, dst, srcs[k], "source"))
      return false;
  Scratch &sc = scratch();
  std::vector<std::uint8_t> &active = sc.active;
  bool masked = false;
  if (!ex.mask(Executor::shape_of(dst), active, masked))
    return false;
  const std::vector<std::uint8_t> *act = masked ? &active : nullptr;
  Offsets &dst_offs = sc.off[0];
  std::vector<Offsets> &src_offs = sc.srcs;
  src_offs.resize(srcs.size());
  for (std::size_t k = 0; k < srcs.size(); ++k) {
    if (!ex.offsets(srcs[k], src_offs[k], act, "source"))
      return false;
    ex.check_written(srcs[k].tensor, src_offs[k], act, "source");
  }
  if (!ex.offsets(dst, dst_offs, act, "destination"))
    return false;
  // The sources are read before anything is written: `a[...] = a[...] + b` reads the old a.
  auto &results = sc.results;
  std::vector<double> &values = sc.values;
  results.resize(dst_offs.size());
  values.resize(srcs.size());
  bool finite_in = true, nan_out = false;
  for (std::size_t i = 0; i < dst_offs.size(); ++i) {
    if (act && !(*act)[i])
      continue;
    for (std::size_t k = 0; k < srcs.size(); ++k) {
      values[k] = ex.read(srcs[k].tensor, src_offs[k][i]);
      finite_in = finite_in && finite(values[k]);
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

/// A view with its two dimensions swapped: `dst[j, i] = src[i, j]` becomes a plain copy.
bool transposed(Executor &ex, const ir::AccessPattern &src, ir::AccessPattern &out) {
  if (src.pattern.size() != 2)
    return ex.fail(fmt::format("it transposes a view of {} dimensions (2 expected)", src.pattern.size()));
  out = src;
  std::swap(out.pattern[0], out.pattern[1]);
  return true;
}

// ---- data movement --------------------------------------------------------------------------

/// Whether every value of `from` is a value of `to`, so a copy needs no rounding.
bool exact_conversion(DType from, DType to) {
  if (from == to || from == DType::Bool)
    return true;
  auto among = [from](std::initializer_list<DType> set) {
    return std::find(set.begin(), set.end(), from) != set.end();
  };
  constexpr DType F8[] = {DType::Float8E4M3, DType::Float8E4M3FN, DType::Float8E5M2};
  bool fp8 = std::find(std::begin(F8), std::end(F8), from) != std::end(F8);
  switch (to) {
  case DType::Float32:
    return fp8 || among({DType::BFloat16, DType::Float16, DType::TFloat32, DType::Int8, DType::Int16, DType::UInt8,
                         DType::UInt16});
  case DType::TFloat32:
    return fp8 || among({DType::BFloat16, DType::Float16, DType::Int8, DType::UInt8});
  case DType::BFloat16:
  case DType::Float16:
    return fp8 || among({DType::Int8, DType::UInt8});
  case DType::Int16:
    return among({DType::Int8, DType::UInt8});
  case DType::Int32:
    return among({DType::Int8, DType::Int16, DType::UInt8, DType::UInt16});
  case DType::UInt16:
    return among({DType::UInt8});
  case DType::UInt32:
    return among({DType::UInt8, DType::UInt16});
  default:
    return false;
  }
}

/// dst = src converted, element by element: the data-movement path, without the generic
/// element-wise machinery (loads and stores move most of a kernel's elements).
/// Element i of `src` at so[i] converted into `dst` at d_o[i], where `active` allows.
/// With `dst_rmw_op` (nl.atomic_rmw, dma_copy's dst_rmw_op) the destination becomes
/// op(destination, value), in float32 (exactly on integers, as the ALU ops).
bool move_elements(Executor &ex, ir::TensorId src, const Offsets &so, ir::TensorId dst, const Offsets &d_o,
                   const std::vector<std::uint8_t> *act) {
  if (const PyConstant *rmw = ex.attr("dst_rmw_op")) {
    const BinaryOp *op = rmw->kind == PyConstant::Kind::Str ? binary_op(rmw->s) : nullptr;
    if (!op)
      return ex.fail("its 'dst_rmw_op' attribute is not an ALU op nkicc simulates");
    ex.check_written(dst, d_o, act, "destination");
    bool ints = is_integer(ex.tensor(src).dtype) && is_integer(ex.tensor(dst).dtype);
    for (std::size_t i = 0; i < d_o.size(); ++i) {
      if (act && !(*act)[i])
        continue;
      double old = ex.read(dst, d_o[i]), v = ex.read(src, so[i]);
      ex.write(dst, d_o[i],
               ints ? op->exact(old, v) : static_cast<double>(op->f32(static_cast<float>(old), static_cast<float>(v))));
    }
    return true;
  }
  bool exact = exact_conversion(ex.tensor(src).dtype, ex.tensor(dst).dtype);
  bool finite_in = true, nan_out = false;
  for (std::size_t i = 0; i < d_o.size(); ++i) {
    if (act && !(*act)[i])
      continue;
    double v = ex.read(src, so[i]);
    if (exact) {
      ex.write_exact(dst, d_o[i], v);
    } else {
      finite_in = finite_in && finite(v);
      double r = ex.round_to_dtype(dst, v);
      nan_out = nan_out || std::isnan(r);
      ex.write_exact(dst, d_o[i], r);
    }
  }
  ex.note_nan(finite_in, nan_out);
  return true;
}

bool copy_view(Executor &ex, const bir::KernelInstruction &inst, const ir::AccessPattern &src) {
  const ir::AccessPattern &dst = inst.dst[0];
  if (src.tensor == dst.tensor) // overlapping views: read everything before writing
    return elementwise(ex, inst, std::span(&src, 1), [](const double *v, std::size_t) { return v[0]; });
  if (!same_count(ex, dst, src, "source"))
    return false;
  Scratch &sc = scratch();
  std::vector<std::uint8_t> &active = sc.active;
  bool masked = false;
  if (!ex.mask(Executor::shape_of(dst), active, masked))
    return false;
  const std::vector<std::uint8_t> *act = masked ? &active : nullptr;
  Offsets &so = sc.off[0], &d_o = sc.off[1];
  if (!ex.offsets(src, so, act, "source"))
    return false;
  ex.check_written(src.tensor, so, act, "source");
  if (!ex.offsets(dst, d_o, act, "destination"))
    return false;
  return move_elements(ex, src.tensor, so, dst.tensor, d_o, act);
}

/// An indirect DMA (Load, Store or DmaCopy with `indirect`, lib/nki/indirect.cpp) or a TensorCopy at a
/// dynamic offset (nisa.tensor_copy_dynamic_src / _dst, one index for the whole access): the last
/// source is the index tile; element e of the indexed view (`indirect='src'` or `'dst'`) lies at
/// its view offset plus index * indirect_step, the index being the index tile's element on e's
/// partition (or its only one). An index that is not in [0, indirect_size) is an error, as on the
/// device under NKI's default oob_mode.error, and under `oob_mode='skip'` its element is not
/// moved (the destination keeps what it held); an element the mask turns off reads no index.
bool visit_indirect_copy(Executor &ex, const bir::KernelInstruction &inst) {
  double step_d = 0, size_d = 0;
  const PyConstant *side = ex.attr("indirect");
  if (!operand_count(ex, inst, 1, 2, 2) || !number_attr(ex, "indirect_step", step_d) ||
      !number_attr(ex, "indirect_size", size_d))
    return false;
  if (side->kind != PyConstant::Kind::Str || (side->s != "src" && side->s != "dst"))
    return ex.fail("its 'indirect' attribute is neither 'src' nor 'dst'");
  bool on_dst = side->s == "dst";
  const PyConstant *oob = ex.attr("oob_mode");
  bool skip = oob && oob->kind == PyConstant::Kind::Str && oob->s == "skip";
  const ir::AccessPattern &dst = inst.dst[0], &src = inst.src[0], &index = inst.src[1];
  if (!same_count(ex, dst, src, "source"))
    return false;
  Scratch &sc = scratch();
  std::vector<std::uint8_t> &active = sc.active;
  bool masked = false;
  if (!ex.mask(Executor::shape_of(dst), active, masked))
    return false;
  const std::vector<std::uint8_t> *act = masked ? &active : nullptr;
  Offsets &so = sc.off[0], &d_o = sc.off[1], &io = sc.off[2];
  if (!ex.offsets(src, so, act, "source") || !ex.offsets(dst, d_o, act, "destination") ||
      !ex.offsets(index, io, nullptr, "index"))
    return false;
  const ir::AccessPattern &view = on_dst ? dst : src;
  Offsets &vo = on_dst ? d_o : so;
  std::int64_t partitions = view.pattern.empty() ? 1 : view.pattern[0].second;
  if (io.size() != 1 && static_cast<std::int64_t>(io.size()) != partitions)
    return ex.fail(fmt::format("its index tile holds {} indices for a view of {} partitions", io.size(), partitions));
  ex.check_written(index.tensor, io, nullptr, "index");
  const bir::KernelTensor &vt = ex.tensor(view.tensor);
  std::int64_t elements = 1;
  for (std::int64_t d : vt.shape)
    elements *= d;
  auto step = static_cast<std::int64_t>(step_d);
  auto size = static_cast<std::int64_t>(size_d);
  std::size_t per_partition = vo.size() / static_cast<std::size_t>(std::max<std::int64_t>(partitions, 1));
  for (std::size_t i = 0; i < vo.size(); ++i) {
    if (act && !(*act)[i])
      continue;
    std::size_t p = per_partition ? i / per_partition : 0;
    std::size_t k = io.size() == 1 ? 0 : p;
    double v = ex.read(index.tensor, io[k]);
    bool outside = !(v >= 0 && v < static_cast<double>(size)) || v != std::floor(v);
    if (outside && skip) {
      if (!act) {
        active.assign(vo.size(), 1);
        act = &active;
      }
      active[i] = 0;
      continue;
    }
    if (outside)
      return ex.fail(fmt::format("index {} on partition {} of index tile '{}' is outside [0, {}), the indexed "
                                 "dimension of '{}'",
                                 v, k, ex.tensor(index.tensor).name, size, vt.name));
    std::int64_t off = vo[i] + static_cast<std::int64_t>(v) * step;
    if (off < 0 || off >= elements)
      return ex.fail(fmt::format("index {} on partition {} of index tile '{}' reaches element {} of '{}', which has {}",
                                 v, k, ex.tensor(index.tensor).name, off, vt.name, elements));
    vo[i] = off;
  }
  ex.check_written(src.tensor, so, act, "source");
  return move_elements(ex, src.tensor, so, dst.tensor, d_o, act);
}

/// Load, Store, DmaCopy, TensorCopy: the value converted to the destination's dtype (round to
/// nearest even, saturating integers); `mask` limits the elements moved; Load's `transpose`
/// (nl.load_transpose2d) reads the source transposed.
bool visit_copy(Executor &ex, const bir::KernelInstruction &inst) {
  if (ex.attr("indirect")) // TensorCopy: nisa.tensor_copy_dynamic_src / _dst
    return visit_indirect_copy(ex, inst);
  if (!operand_count(ex, inst, 1, 1, 1))
    return false;
  ir::AccessPattern src = inst.src[0];
  if (inst.opcode == ir::Opcode::Load && flag_attr(ex, "transpose") && !transposed(ex, inst.src[0], src))
    return false;
  return copy_view(ex, inst, src);
}

/// Memset: every element (of the mask) set to `value`, rounded to the dtype.
bool visit_memset(Executor &ex, const bir::KernelInstruction &inst) {
  double value = 0;
  if (!operand_count(ex, inst, 1, 0, 0) || !number_attr(ex, "value", value))
    return false;
  return elementwise(ex, inst, {}, [value](const double *, std::size_t) { return value; });
}

// ---- Tensor engine ---------------------------------------------------------------------------

/// MatMul: psum[M, N] (+)= stationary[K, M].T @ moving[K, N]. The products and their sum are
/// float32 (the PE array multiplies its bf16/fp8/fp32 operands exactly enough for float32 and
/// accumulates in float32), summed by Eigen's float GEMM; `accumulate` adds into what PSUM
/// holds, else overwrites it.
bool visit_matmul(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operand_count(ex, inst, 1, 2, 2))
    return false;
  const ir::AccessPattern &dst = inst.dst[0];
  const ir::AccessPattern &st = inst.src[0];
  const ir::AccessPattern &mv = inst.src[1];
  // perf_mode double_row: stationary[K, 2, M] and moving[K, 2, N], both rows of each partition
  // contracted, which in row-major order is the [2K, M] x [2K, N] matmul. The PE tile
  // (tile_position, tile_size) places the matmul in the array and changes no result.
  const PyConstant *perf = ex.attr("perf_mode");
  bool double_row = perf && perf->kind == PyConstant::Kind::Str && !perf->s.empty();
  std::size_t rank = double_row ? 3 : 2;
  if (st.pattern.size() != rank || mv.pattern.size() != rank || dst.pattern.size() != 2)
    return ex.fail(double_row ? "its double_row operands are not [K, 2, F] views" : "its operands are not 2-D views");
  if (double_row && (st.pattern[1].second != 2 || mv.pattern[1].second != 2))
    return ex.fail("its double_row operands do not pair two rows per partition");
  std::int64_t K = st.pattern[0].second * (double_row ? 2 : 1), M = st.pattern[rank - 1].second,
               N = mv.pattern[rank - 1].second;
  if (mv.pattern[0].second * (double_row ? 2 : 1) != K || dst.pattern[0].second != M || dst.pattern[1].second != N)
    return ex.fail(fmt::format("its shapes do not chain: stationary {}, moving {}, result {}",
                               shape_text(Executor::shape_of(st)), shape_text(Executor::shape_of(mv)),
                               shape_text(Executor::shape_of(dst))));
  Scratch &sc = scratch();
  Offsets &so = sc.off[0], &mo = sc.off[1], &d_o = sc.off[2];
  // A mask (over the result's [M, N]) selects the results written; every product is computed.
  std::vector<std::uint8_t> &active = sc.active;
  bool masked = false;
  if (!ex.mask(Executor::shape_of(dst), active, masked))
    return false;
  const std::vector<std::uint8_t> *act = masked ? &active : nullptr;
  if (!ex.offsets(st, so, nullptr, "stationary") || !ex.offsets(mv, mo, nullptr, "moving") ||
      !ex.offsets(dst, d_o, act, "destination"))
    return false;
  ex.check_written(st.tensor, so, nullptr, "stationary");
  ex.check_written(mv.tensor, mo, nullptr, "moving");
  bool accumulate = flag_attr(ex, "accumulate");
  if (accumulate)
    ex.check_written(dst.tensor, d_o, act, "accumulated");
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  // Kept across instructions: a kernel's matmuls are mostly one shape.
  static thread_local RowMajor S, V, R;
  S.resize(K, M);
  V.resize(K, N);
  bool finite_in = true;
  for (std::size_t i = 0; i < so.size(); ++i) {
    double v = ex.read(st.tensor, so[i]);
    finite_in = finite_in && finite(v);
    S.data()[i] = static_cast<float>(v);
  }
  for (std::size_t i = 0; i < mo.size(); ++i) {
    double v = ex.read(mv.tensor, mo[i]);
    finite_in = finite_in && finite(v);
    V.data()[i] = static_cast<float>(v);
  }
  R.resize(M, N);
  R.noalias() = S.transpose() * V;
  bool nan_out = false;
  // A float32 PSUM tile holds the float sums exactly; another dtype rounds them.
  bool exact = ex.tensor(dst.tensor).dtype == DType::Float32;
  for (std::size_t i = 0; i < d_o.size(); ++i) {
    if (act && !active[i])
      continue;
    float r = R.data()[i];
    if (accumulate)
      r = static_cast<float>(ex.read(dst.tensor, d_o[i])) + r;
    nan_out = nan_out || std::isnan(r);
    if (exact)
      ex.write_exact(dst.tensor, d_o[i], r);
    else
      ex.write(dst.tensor, d_o[i], r);
  }
  ex.note_nan(finite_in, nan_out);
  return true;
}

/// Transpose (nc_transpose on the Tensor or Vector engine, nl.transpose): dst[j, i] = src[i, j],
/// exact (the PE array's transpose is a matmul with the identity).
bool visit_transpose(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operand_count(ex, inst, 1, 1, 1))
    return false;
  ir::AccessPattern src;
  if (!transposed(ex, inst.src[0], src))
    return false;
  return copy_view(ex, inst, src);
}

// ---- Vector / Scalar / GpSimd ------------------------------------------------------------------

bool integer_operands(Executor &ex, const bir::KernelInstruction &inst) {
  if (!is_integer(ex.tensor(inst.dst[0].tensor).dtype))
    return false;
  for (const ir::AccessPattern &s : inst.src)
    if (!is_integer(ex.tensor(s.tensor).dtype))
      return false;
  return true;
}

const BinaryOp *lookup_binary(Executor &ex, const std::string &name) {
  const BinaryOp *op = binary_op(name);
  if (!op)
    ex.fail(fmt::format("its ALU op '{}' is not one nkicc simulates", name));
  return op;
}

/// TensorTensor: dst = op(a, b).
bool visit_tensor_tensor(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operand_count(ex, inst, 1, 2, 2))
    return false;
  const std::string *name = string_attr(ex, "op");
  const BinaryOp *op = name ? lookup_binary(ex, *name) : nullptr;
  if (!op)
    return false;
  if (integer_operands(ex, inst))
    return elementwise(ex, inst, inst.src, [op](const double *v, std::size_t) { return op->exact(v[0], v[1]); });
  return elementwise(ex, inst, inst.src, [op](const double *v, std::size_t) {
    return static_cast<double>(op->f32(static_cast<float>(v[0]), static_cast<float>(v[1])));
  });
}

/// TensorScalar: dst = op1(op0(x, operand0), operand1), an operand a constant or, for "tile", a
/// per-partition value from the next source; `reverseN` swaps that op's operands. The
/// intermediate stays float32, as in the engine's pipeline.
bool visit_tensor_scalar(Executor &ex, const bir::KernelInstruction &inst) {
  struct Stage {
    const BinaryOp *op = nullptr;
    bool tile = false;
    double constant = 0;
    bool reverse = false;
    bool integer = true;
  };
  Stage stages[2];
  std::size_t n = 0, tiles = 0;
  for (const char *suffix : {"0", "1"}) {
    std::string op_name = std::string("op") + suffix;
    if (!ex.attr(op_name))
      break;
    const std::string *name = string_attr(ex, op_name);
    Stage &s = stages[n++];
    s.op = name ? lookup_binary(ex, *name) : nullptr;
    if (!s.op)
      return false;
    const PyConstant *operand = ex.attr(std::string("operand") + suffix);
    if (operand && operand->kind == PyConstant::Kind::Str && operand->s == "tile") {
      s.tile = true;
      ++tiles;
    } else if (!number_attr(ex, std::string("operand") + suffix, s.constant)) {
      return false;
    } else {
      s.integer = operand->kind != PyConstant::Kind::Float;
    }
    s.reverse = flag_attr(ex, std::string("reverse") + suffix);
  }
  if (n == 0)
    return ex.fail("it has no 'op0' attribute naming an op");
  FusedReduction reduce; // tensor_scalar_reduce
  if (!reduce.init(ex, inst) || !operand_count(ex, inst, reduce.destinations(), 1 + tiles, 1 + tiles))
    return false;
  bool integer = integer_operands(ex, inst) && stages[0].integer && (n < 2 || stages[1].integer);
  if (!elementwise(ex, inst, inst.src, [&stages, n, integer, &reduce](const double *v, std::size_t i) {
        double x = v[0];
        std::size_t next = 1;
        for (std::size_t k = 0; k < n; ++k) {
          const Stage &s = stages[k];
          double operand = s.tile ? v[next++] : s.constant;
          double a = s.reverse ? operand : x, b = s.reverse ? x : operand;
          x = integer ? s.op->exact(a, b)
                      : static_cast<double>(s.op->f32(static_cast<float>(a), static_cast<float>(b)));
        }
        reduce.add(i, x);
        return x;
      }))
    return false;
  return reduce.finish(ex, inst);
}

/// Activation: dst = func(data * scale + bias) in float32. Sources: data, then the bias tile
/// (when given), then the scale tile (when `scale` is "tile"); a constant `scale` is an
/// attribute (default 1), the bias defaults to 0. A fused reduction (reduce_cmd, a reduce_res
/// second destination) sums the results into the Scalar engine's accumulators.
bool visit_activation(Executor &ex, const bir::KernelInstruction &inst) {
  const std::string *name = string_attr(ex, "func");
  if (!name)
    return false;
  UnaryFn f = activation_fn(*name);
  if (!f)
    return ex.fail(fmt::format("its activation function '{}' is not one nkicc simulates", *name));
  const PyConstant *scale_attr = ex.attr("scale");
  bool scale_tile = scale_attr && scale_attr->kind == PyConstant::Kind::Str && scale_attr->s == "tile";
  double scale = 1.0;
  if (scale_attr && !scale_tile && !number_attr(ex, "scale", scale))
    return false;
  FusedReduction reduce;
  if (!reduce.init(ex, inst) || !operand_count(ex, inst, reduce.destinations(), scale_tile ? 2 : 1, scale_tile ? 3 : 2))
    return false;
  bool has_bias = inst.src.size() == (scale_tile ? 3u : 2u);
  auto s = static_cast<float>(scale);
  if (!elementwise(ex, inst, inst.src, [f, s, has_bias, scale_tile, &reduce](const double *v, std::size_t i) {
        float x = static_cast<float>(v[0]);
        float k = scale_tile ? static_cast<float>(v[has_bias ? 2 : 1]) : s;
        float b = has_bias ? static_cast<float>(v[1]) : 0.0f;
        auto r = static_cast<double>(f(x * k + b));
        reduce.add(i, r);
        return r;
      }))
    return false;
  return reduce.finish(ex, inst);
}

/// Select (nl.where): dst = cond ? on_true : on_false, sources in that order.
bool visit_select(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operand_count(ex, inst, 1, 3, 3))
    return false;
  return elementwise(ex, inst, inst.src, [](const double *v, std::size_t) { return v[0] != 0 ? v[1] : v[2]; });
}

/// Iota: element c is the affine `expr` over the destination's coordinates (`iK` is
/// coordinate K), with the program ids bound to the instance's. (Blobs written before `expr`
/// carry `start` and `step`: element k of the one axis spanned is start + step * k.)
// nki: `expr` replaced start/step when index tiles became affine combinations of axes.
bool visit_iota(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operand_count(ex, inst, 1, 0, 0))
    return false;
  if (const PyConstant *expr = ex.attr("expr")) {
    if (expr->kind != PyConstant::Kind::Str)
      return ex.fail("its 'expr' attribute is not a string");
    const Predicate *p = ex.predicate(expr->s, "expr");
    if (!p)
      return false;
    std::vector<std::int64_t> shape = Executor::shape_of(inst.dst[0]);
    std::vector<std::int64_t> c(shape.size(), 0);
    return elementwise(ex, inst, {}, [&](const double *, std::size_t i) {
      for (std::size_t d = shape.size(); d-- > 0;) {
        c[d] = static_cast<std::int64_t>(i) % shape[d];
        i /= static_cast<std::size_t>(shape[d]);
      }
      return static_cast<double>(p->value(c));
    });
  }
  const PyConstant *start = ex.attr("start");
  double step = 1;
  if (!start || start->kind != PyConstant::Kind::Str)
    return ex.fail("it has no 'expr' attribute");
  if (!number_attr(ex, "step", step))
    return false;
  const Predicate *p = ex.predicate(start->s, "start");
  if (!p)
    return false;
  double base = static_cast<double>(p->value({}));
  return elementwise(ex, inst, {},
                     [base, step](const double *, std::size_t k) { return base + step * static_cast<double>(k); });
}

/// AffineSelect: dst[c] = pred(c) ? on_true[c] : on_false_value, the predicate over the
/// destination's coordinates (`iK` is coordinate K).
bool visit_affine_select(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operand_count(ex, inst, 1, 1, 1))
    return false;
  const PyConstant *pred = ex.attr("pred");
  double on_false = 0;
  if (!pred || pred->kind != PyConstant::Kind::Str)
    return ex.fail("it has no 'pred' attribute");
  if (!number_attr(ex, "on_false_value", on_false))
    return false;
  const Predicate *p = ex.predicate(pred->s, "pred");
  if (!p)
    return false;
  std::vector<std::int64_t> shape = Executor::shape_of(inst.dst[0]);
  std::vector<std::int64_t> c(shape.size(), 0);
  return elementwise(ex, inst, inst.src, [&](const double *v, std::size_t i) {
    for (std::size_t d = shape.size(); d-- > 0;) {
      c[d] = static_cast<std::int64_t>(i) % shape[d];
      i /= static_cast<std::size_t>(shape[d]);
    }
    return p->eval(c) ? v[0] : on_false;
  });
}

// ---- reductions and statistics --------------------------------------------------------------

/// TensorReduce: `op` over the free `axis` list of the source view, in float32, summing in
/// element order (the hardware's order is a choice too); `mean` divides by the count;
/// `negate` negates the result. The destination holds the kept axes in row-major order.
bool visit_tensor_reduce(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operand_count(ex, inst, 1, 1, 1))
    return false;
  const std::string *name = string_attr(ex, "op");
  if (!name)
    return false;
  const ReduceKind *kind = reduce_kind(*name);
  if (!kind)
    return ex.fail(fmt::format("its reduction '{}' is not one nkicc simulates", *name));
  const ir::AccessPattern &src = inst.src[0];
  const ir::AccessPattern &dst = inst.dst[0];
  std::vector<std::int64_t> shape = Executor::shape_of(src);
  std::vector<bool> reduced(shape.size(), false);
  if (const PyConstant *axis = ex.attr("axis"))
    for (const PyConstant &a : axis->items)
      if (a.kind == PyConstant::Kind::Int && a.i >= 0 && static_cast<std::size_t>(a.i) < shape.size())
        reduced[static_cast<std::size_t>(a.i)] = true;
  std::int64_t kept = 1, group = 1;
  for (std::size_t d = 0; d < shape.size(); ++d)
    (reduced[d] ? group : kept) *= shape[d];
  if (Executor::count_of(dst) != kept)
    return ex.fail(fmt::format("its destination view {} does not hold the {} kept elements of {}",
                               shape_text(Executor::shape_of(dst)), kept, shape_text(shape)));
  Scratch &sc = scratch();
  Offsets &so = sc.off[0], &d_o = sc.off[1];
  if (!ex.offsets(src, so, nullptr, "source") || !ex.offsets(dst, d_o, nullptr, "destination"))
    return false;
  ex.check_written(src.tensor, so, nullptr, "source");
  std::vector<float> acc(static_cast<std::size_t>(kept));
  float init = 0;
  switch (*kind) {
  case ReduceKind::Max:
    init = -INFINITY;
    break;
  case ReduceKind::Min:
    init = INFINITY;
    break;
  case ReduceKind::Prod:
  case ReduceKind::All:
    init = 1;
    break;
  default:
    break;
  }
  std::fill(acc.begin(), acc.end(), init);
  std::vector<std::int64_t> c(shape.size(), 0);
  bool finite_in = true;
  for (std::size_t i = 0; i < so.size(); ++i) {
    std::int64_t out = 0;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (!reduced[d])
        out = out * shape[d] + c[d];
    float v = static_cast<float>(ex.read(src.tensor, so[i]));
    finite_in = finite_in && std::isfinite(v);
    float &a = acc[static_cast<std::size_t>(out)];
    switch (*kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      a += v;
      break;
    case ReduceKind::Max:
      a = std::isnan(v) || std::isnan(a) ? NAN : (v > a ? v : a);
      break;
    case ReduceKind::Min:
      a = std::isnan(v) || std::isnan(a) ? NAN : (v < a ? v : a);
      break;
    case ReduceKind::Prod:
      a *= v;
      break;
    case ReduceKind::All:
      a = (a != 0 && v != 0) ? 1.0f : 0.0f;
      break;
    case ReduceKind::Any:
      a = (a != 0 || v != 0) ? 1.0f : 0.0f;
      break;
    }
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++c[d] < shape[d])
        break;
      c[d] = 0;
    }
  }
  bool negate = flag_attr(ex, "negate"), nan_out = false;
  for (std::size_t k = 0; k < acc.size(); ++k) {
    float r = acc[k];
    if (*kind == ReduceKind::Mean)
      r /= static_cast<float>(group);
    if (negate)
      r = -r;
    nan_out = nan_out || std::isnan(r);
    ex.write(dst.tensor, d_o[k], r);
  }
  ex.note_nan(finite_in, nan_out);
  return true;
}

/// Reads a source view as [P, F] (partition first, the free dimensions flattened).
bool partition_rows(Executor &ex, const ir::AccessPattern &ap, std::string_view role, Offsets &offs, std::int64_t &rows,
                    std::int64_t &cols) {
  if (ap.pattern.empty())
    return ex.fail(fmt::format("its {} view has no partition dimension", role));
  if (!ex.offsets(ap, offs, nullptr, role))
    return false;
  rows = ap.pattern[0].second;
  cols = rows ? static_cast<std::int64_t>(offs.size()) / rows : 0;
  return true;
}

/// BnStats: per partition, over the even-indexed and the odd-indexed elements: count, mean and
/// variance * count (the sum of squared deviations), six values, computed in float32.
bool visit_bn_stats(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operand_count(ex, inst, 1, 1, 1))
    return false;
  Offsets so, d_o;
  std::int64_t P = 0, F = 0, dp = 0, df = 0;
  if (!partition_rows(ex, inst.src[0], "source", so, P, F) ||
      !partition_rows(ex, inst.dst[0], "destination", d_o, dp, df))
    return false;
  if (dp != P || df != 6)
    return ex.fail(fmt::format("its destination is [{}, {}], not [{}, 6]", dp, df, P));
  ex.check_written(inst.src[0].tensor, so, nullptr, "source");
  bool finite_in = true, nan_out = false;
  for (std::int64_t p = 0; p < P; ++p) {
    for (std::int64_t parity = 0; parity < 2; ++parity) {
      float n = 0, sum = 0;
      for (std::int64_t f = parity; f < F; f += 2) {
        float v = static_cast<float>(ex.read(inst.src[0].tensor, so[static_cast<std::size_t>(p * F + f)]));
        finite_in = finite_in && std::isfinite(v);
        sum += v;
        n += 1;
      }
      float mean = n > 0 ? sum / n : 0.0f, m2 = 0;
      for (std::int64_t f = parity; f < F; f += 2) {
        float d = static_cast<float>(ex.read(inst.src[0].tensor, so[static_cast<std::size_t>(p * F + f)])) - mean;
        m2 += d * d;
      }
      float out[3] = {n, mean, m2};
      for (int k = 0; k < 3; ++k) {
        nan_out = nan_out || std::isnan(out[k]);
        ex.write(inst.dst[0].tensor, d_o[static_cast<std::size_t>(p * 6 + parity * 3 + k)], out[k]);
      }
    }
  }
  ex.note_nan(finite_in, nan_out);
  return true;
}

/// BnAggr: per partition, the (count, mean, variance * count) triples of its source combined
/// (Chan et al.'s parallel formula) into the mean and the population variance, in float32.
bool visit_bn_aggr(Executor &ex, const bir::KernelInstruction &inst) {
  if (!operand_count(ex, inst, 1, 1, 1))
    return false;
  Offsets so, d_o;
  std::int64_t P = 0, F = 0, dp = 0, df = 0;
  if (!partition_rows(ex, inst.src[0], "source", so, P, F) ||
      !partition_rows(ex, inst.dst[0], "destination", d_o, dp, df))
    return false;
  if (F % 3 != 0)
    return ex.fail(fmt::format("its source has {} elements per partition, not a multiple of 3", F));
  if (dp != P || df != 2)
    return ex.fail(fmt::format("its destination is [{}, {}], not [{}, 2]", dp, df, P));
  ex.check_written(inst.src[0].tensor, so, nullptr, "source");
  bool finite_in = true, nan_out = false;
  for (std::int64_t p = 0; p < P; ++p) {
    float n = 0, mean = 0, m2 = 0;
    for (std::int64_t t = 0; t < F; t += 3) {
      auto at = [&](std::int64_t k) {
        float v = static_cast<float>(ex.read(inst.src[0].tensor, so[static_cast<std::size_t>(p * F + t + k)]));
        finite_in = finite_in && std::isfinite(v);
        return v;
      };
      float nb = at(0), mb = at(1), m2b = at(2);
      if (nb <= 0)
        continue;
      float total = n + nb, delta = mb - mean;
      mean += delta * nb / total;
      m2 += m2b + delta * delta * n * nb / total;
      n = total;
    }
    float var = n > 0 ? m2 / n : 0.0f;
    nan_out = nan_out || std::isnan(mean) || std::isnan(var);
    ex.write(inst.dst[0].tensor, d_o[static_cast<std::size_t>(p * 2)], mean);
    ex.write(inst.dst[0].tensor, d_o[static_cast<std::size_t>(p * 2 + 1)], var);
  }
  ex.note_nan(finite_in, nan_out);
  return true;
}

} // namespace

bool execute_instruction(Executor &ex, const bir::KernelInstruction &inst) {
  // A switch, not a table of pointers: a new opcode is a -Wswitch error here until it has a visitor.
  switch (inst.opcode) {
  case ir::Opcode::Load:
  case ir::Opcode::Store:
  case ir::Opcode::DmaCopy:
  case ir::Opcode::TensorCopy:
    return visit_copy(ex, inst);
  case ir::Opcode::Memset:
    return visit_memset(ex, inst);
  case ir::Opcode::MatMul:
    return visit_matmul(ex, inst);
  case ir::Opcode::Transpose:
    return visit_transpose(ex, inst);
  case ir::Opcode::TensorTensor:
    return visit_tensor_tensor(ex, inst);
  case ir::Opcode::TensorScalar:
    return visit_tensor_scalar(ex, inst);
  case ir::Opcode::Activation:
    return visit_activation(ex, inst);
  case ir::Opcode::TensorReduce:
    return visit_tensor_reduce(ex, inst);
  case ir::Opcode::Iota:
    return visit_iota(ex, inst);
  case ir::Opcode::AffineSelect:
    return visit_affine_select(ex, inst);
  case ir::Opcode::BnStats:
    return visit_bn_stats(ex, inst);
  case ir::Opcode::BnAggr:
    return visit_bn_aggr(ex, inst);
  case ir::Opcode::Select:
    return visit_select(ex, inst);
  case ir::Opcode::Collective: {
    // nl.all_reduce over program axes never gets here (collectives.cpp); these span NeuronCores.
    const PyConstant *kind = ex.attr("collective");
    return ex.fail(fmt::format("'{}' combines the ranks of replica groups, which are other NeuronCores: nkicc "
                               "simulates one NeuronCore",
                               kind && kind->kind == PyConstant::Kind::Str ? kind->s : "collective"));
  }
  case ir::Opcode::TensorTensorScan:
    return visit_tensor_tensor_scan(ex, inst);
  case ir::Opcode::PartitionReduce:
    return visit_partition_reduce(ex, inst);
  case ir::Opcode::SelectReduce:
    return visit_select_reduce(ex, inst);
  case ir::Opcode::ScalarTensorTensor:
    return visit_scalar_tensor_tensor(ex, inst);
  case ir::Opcode::Max8:
    return visit_max8(ex, inst);
  case ir::Opcode::FindIndex8:
    return visit_find_index8(ex, inst);
  case ir::Opcode::MatchReplace8:
    return visit_match_replace8(ex, inst);
  case ir::Opcode::StreamShuffle:
    return visit_stream_shuffle(ex, inst);
  case ir::Opcode::Rand:
    return visit_rand(ex, inst);
  case ir::Opcode::RandomSeed:
    return visit_random_seed(ex, inst);
  case ir::Opcode::Dropout:
    return visit_dropout(ex, inst);
  case ir::Opcode::SequenceBounds:
    return visit_sequence_bounds(ex, inst);
  case ir::Opcode::RangeSelect:
    return visit_range_select(ex, inst);
  case ir::Opcode::LocalGather:
    return visit_local_gather(ex, inst);
  case ir::Opcode::DevicePrint:
    return visit_device_print(ex, inst);
  case ir::Opcode::GatherFlattened:
    return visit_gather_flattened(ex, inst);
  case ir::Opcode::MatMulMx:
    return visit_matmul_mx(ex, inst);
  case ir::Opcode::QuantizeMx:
    return visit_quantize_mx(ex, inst);
  }
  return ex.fail("its opcode has no simulator visitor");
}

} // namespace nkicc::sim
