// nl's index and iteration ops: index tiles (nl.arange), dynamic slices (nl.ds), the
// partition-dimension marker (nl.par_dim), the SPMD grid (nl.program_id, nl.num_programs,
// nl.spmd_dim, nl.nc) and the NKI loop iterators.
#include "index.h"
#include "objects.h"
#include "lowering.h"
#include "op_table.h"
#include "runtime.h"

#include <fmt/format.h>

namespace nkicc::nki {

namespace {

Value lower_program_id(OpCall &c) {
  std::int64_t axis = c.integer("axis");
  KernelBuilder &kb = c.kb();
  if (axis < 0 || axis >= static_cast<std::int64_t>(ir::kMaxGridAxes))
    raise_error("ValueError", fmt::format("program_id axis {} is out of range (0 to 2)", axis));
  if (static_cast<std::size_t>(axis) >= kb.grid.size() || kb.grid[static_cast<std::size_t>(axis)] == 1)
    return Value::integer(0);
  Affine af;
  af.coef[static_cast<std::size_t>(axis)] = 1;
  return Value::object(std::make_shared<AffineObject>(af));
}

Value lower_num_programs(OpCall &c) {
  KernelBuilder &kb = c.kb();
  auto size = [&](std::int64_t axis) -> std::int64_t {
    return axis >= 0 && static_cast<std::size_t>(axis) < kb.grid.size() ? kb.grid[static_cast<std::size_t>(axis)] : 1;
  };
  const Value *axes = c.get("axes");
  if (!axes) {
    std::int64_t total = 1;
    for (std::int64_t g : kb.grid)
      total = checked_mul(total, g);
    return Value::integer(total);
  }
  if (axes->kind == Value::Kind::Int)
    return Value::integer(size(axes->i));
  if (axes->kind != Value::Kind::Tuple && axes->kind != Value::Kind::List)
    raise_error("TypeError", "parameter 'axes' of 'num_programs' must be an integer or a tuple of integers");
  std::vector<Value> out;
  for (const Value &ax : axes->seq().items)
    out.push_back(Value::integer(size(int_arg(ax, "num_programs", "axes"))));
  return Value::tuple(std::move(out));
}

Value lower_program_ndim(OpCall &c) { return Value::integer(static_cast<std::int64_t>(c.kb().grid.size())); }

Value lower_arange(OpCall &c) {
  std::int64_t start = 0, stop = c.integer("start"), step = 1;
  if (c.has("stop")) {
    start = stop;
    stop = c.integer("stop");
  }
  if (c.has("step"))
    step = c.integer("step");
  if (step <= 0 || stop <= start)
    raise_error("ValueError", fmt::format("nl.arange({}, {}, {}) is empty", start, stop, step));
  return make_arange(start, stop, step);
}

Value lower_ds(OpCall &c) {
  const Value &start = c.required("start");
  std::int64_t size = c.integer("size");
  // A slice of start:start+size with size <= 0 would be empty, or wrap to a huge partition count
  // further on: NKI asks for a positive size.
  if (size <= 0)
    raise_error("ValueError", fmt::format("nl.ds() size must be positive, got {}", size));
  Value stop = c.interp.binary_op(python::BinOpKind::Add, start, Value::integer(size));
  return Value::slice(start, stop, Value());
}

Value lower_par_dim(OpCall &c) { return Value::object(std::make_shared<ParDimObject>(c.integer("size"))); }

Value lower_nc(OpCall &c) { return Value::integer(c.integer("n")); }

Value lower_sizeinbytes(OpCall &c) { return Value::integer(static_cast<std::int64_t>(dtype_size(*c.dtype("dtype")))); }

// In a launch grid, nl.spmd_dim(nl.nc(2), 2) is an axis of 2 * 2 instances.
Value lower_spmd_dim(OpCall &c) {
  Value total = Value::integer(1);
  for (const Value &v : c.rest())
    total = c.interp.binary_op(python::BinOpKind::Mult, total, v);
  return total;
}

// `directives=` and `precise_schedule=` steer NKI's instruction scheduler; nkicc does not
// schedule (the trace is in program order), so they are checked and change nothing.
Value lower_range(OpCall &c) {
  auto r = std::make_shared<NkiRangeObject>();
  std::string_view op = c.name();
  r->kind = op == "affine_range"       ? LoopKind::Affine
            : op == "sequential_range" ? LoopKind::Sequential
                                       : LoopKind::Static;
  r->stop = c.integer("start");
  if (c.has("stop")) {
    r->start = r->stop;
    r->stop = c.integer("stop");
  }
  if (c.has("step"))
    r->step = c.integer("step");
  if (r->step == 0)
    raise_error("ValueError", fmt::format("{}() arg 3 must not be zero", op));
  return Value::object(r);
}

// None of these emits an instruction: the engine and opcode fields are unused.
constexpr ir::Engine kNone = ir::Engine::Sync;
constexpr ir::Opcode kNoOp = ir::Opcode::TensorCopy;

const OpDef kOps[] = {
    {"program_id(axis: int)", kNone, kNoOp, lower_program_id},
    {"num_programs(axes: any = None)", kNone, kNoOp, lower_num_programs},
    {"program_ndim()", kNone, kNoOp, lower_program_ndim},
    {"arange(start: int, stop: int? = None, step: int? = None)", kNone, kNoOp, lower_arange},
    {"ds(start: any, size: int)", kNone, kNoOp, lower_ds},
    {"par_dim(size: int)", kNone, kNoOp, lower_par_dim},
    {"nc(n: int)", kNone, kNoOp, lower_nc},
    {"spmd_dim(*dims: any)", kNone, kNoOp, lower_spmd_dim},
    {"affine_range(start: int, stop: int? = None, step: int? = None, *, directives: any = None, "
     "precise_schedule: bool = False)",
     kNone, kNoOp, lower_range},
    {"sequential_range(start: int, stop: int? = None, step: int? = None, *, directives: any = None, "
     "precise_schedule: bool = False)",
     kNone, kNoOp, lower_range},
    {"static_range(start: int, stop: int? = None, step: int? = None, *, directives: any = None, "
     "precise_schedule: bool = False)",
     kNone, kNoOp, lower_range},
};

/// nl.constants (neuronxcc.nki.language.constants): functions of dtypes kernels size tiles by.
const OpDef kConstantOps[] = {
    {"sizeinbytes(dtype: dtype)", kNone, kNoOp, lower_sizeinbytes},
};

} // namespace

std::span<const OpDef> language_index_ops() { return kOps; }
std::span<const OpDef> language_constants_ops() { return kConstantOps; }

} // namespace nkicc::nki
