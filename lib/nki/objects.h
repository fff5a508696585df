// NKI's small value objects: buffers (`nl.sbuf`), the NKI ranges that
// record their loop kind, and the `@nki.jit` kernel wrapper.
#pragma once

#include "common.h"

#include "nkicc/support/dtype.h"

namespace nkicc::nki {

class NkiRuntime;

class BufferObject : public Object {
public:
  explicit BufferObject(ir::Memory m) : memory(m) {}
  std::string_view type_name() const override { return "buffer"; }
  std::string repr() const override { return std::string(ir::memory_name(memory)); }
  ir::Memory memory;
};

/// `nl.par_dim(n)`: marks the partition dimension in a shape (`(8, nl.par_dim(128), 512)`);
/// anywhere else it is the int n.
class ParDimObject final : public Object {
public:
  explicit ParDimObject(std::int64_t n) : size(n) {}
  std::string_view type_name() const override { return "par_dim"; }
  std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind op, const Value &other,
                                 bool reflected) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  std::string repr() const override { return "par_dim(" + std::to_string(size) + ")"; }
  std::int64_t size;
};

/// A member of `nisa.oob_mode` (`neuronxcc.nki.isa.constants.oob_mode`): what an indirect DMA
/// does with an index outside its dimension: `error` (the default) stops with a run-time error,
/// `skip` drops the elements it would move.
class OobModeObject final : public Object {
public:
  explicit OobModeObject(bool skip_out_of_bounds) : skip(skip_out_of_bounds) {}
  std::string_view type_name() const override { return "oob_mode"; }
  std::string repr() const override { return skip ? "oob_mode.skip" : "oob_mode.error"; }
  bool skip;
};

/// A member of `nisa.dge_mode`: which descriptor generation engine a DMA uses (`unknown` lets
/// the compiler choose, `swdge` software, `hwdge` hardware, `none` no DGE). It changes how the
/// device issues a DMA, not what the DMA moves: nkicc records it on the instruction.
class DgeModeObject final : public Object {
public:
  explicit DgeModeObject(std::string mode_name) : name(std::move(mode_name)) {}
  std::string_view type_name() const override { return "dge_mode"; }
  std::string repr() const override { return "dge_mode." + name; }
  std::string name;
};

/// A member of `nisa.matmul_perf_mode`: `none`, or `double_row` (FP8 double performance mode of
/// nc_matmul, NeuronCore-v3 and newer).
class MatmulPerfModeObject final : public Object {
public:
  explicit MatmulPerfModeObject(std::string mode_name) : name(std::move(mode_name)) {}
  std::string_view type_name() const override { return "matmul_perf_mode"; }
  std::string repr() const override { return "matmul_perf_mode." + name; }
  std::string name;
};

/// A member of `nisa.nc_version`: a NeuronCore generation (gen2 is trn1/inf2, gen3 trn2, gen4
/// trn3). Members order by generation, as kernels test `nisa.get_nc_version() >= nc_version.gen3`.
class NcVersionObject final : public Object {
public:
  explicit NcVersionObject(int gen) : generation(gen) {}
  std::string_view type_name() const override { return "nc_version"; }
  std::string repr() const override { return "nc_version.gen" + std::to_string(generation); }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  std::optional<std::int64_t> hash(Interpreter &) override { return generation; }
  int generation;
};

/// A member of `nisa.reduce_cmd`: what an instruction with a fused reduction does to its
/// engine's accumulator registers (one per partition): `idle` leaves them, `reset` zeroes them,
/// `reduce` accumulates into them, `reset_reduce` does both, `load_reduce` loads then accumulates.
class ReduceCmdObject final : public Object {
public:
  explicit ReduceCmdObject(std::string cmd_name) : name(std::move(cmd_name)) {}
  std::string_view type_name() const override { return "reduce_cmd"; }
  std::string repr() const override { return "reduce_cmd." + name; }
  std::string name;
};

/// What `nl.loop_reduce(x, op=, loop_indices=)` gives: a reduction whose destination is also
/// its left operand, so nothing is emitted until the result is assigned into that destination
/// (`acc[...] = nl.loop_reduce(x, op=np.add, loop_indices=[k])` is `acc = op(acc, x)`, one
/// TensorTensor). Used any other way it is an error naming the form (view_operators.cpp).
class LoopReduceObject final : public Object {
public:
  std::string_view type_name() const override { return "loop_reduce"; }
  std::string repr() const override { return "<nl.loop_reduce(" + op + ") result>"; }
  Value x;          ///< the tile reduced into the destination
  std::string op;   ///< NKI's ALU op name (`add`, `maximum`)
  std::string mask; ///< the predicate of `mask=`, empty for none
  std::string name; ///< the instruction's `name=`, empty for none
};

/// `nl.affine_range`, `nl.sequential_range`, `nl.static_range`: Python ranges that record
/// their loop kind on the instructions emitted in their body.
class NkiRangeObject final : public Object {
public:
  std::string_view type_name() const override { return "range"; }
  std::unique_ptr<Iterator> iterate(Interpreter &) override;
  LoopKind loop_kind() const override { return kind; }
  std::string repr() const override;
  std::int64_t start = 0, stop = 0, step = 1;
  LoopKind kind = LoopKind::Affine;
};

/// `@nki.jit` (and baremetal, benchmark, ...): wraps the kernel function. `kernel[2, 4]` gives
/// a launch with a grid; calling either from inside a traced kernel inlines it (seed 001
/// inline_function), and a grid there is err_nested_kernel_with_spmd_grid.
class JitKernel final : public Object {
public:
  std::string_view type_name() const override { return "GenericKernel"; }
  Value call(Interpreter &, CallArgs &args) override;
  Value get_item(Interpreter &, const Value &key) override;
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override;
  std::string repr() const override;
  bool is_callable() const override { return true; }
  Value function; ///< a FunctionObject
  /// `@nki.compiler.force_auto_alloc`: the kernel's own allocations are ignored.
  bool force_auto_alloc = false;
  /// lib: a launch from host code (no trace in progress: `kernel(np.zeros(...))` at module
  /// level) is inert, never a trace.
  const NkiRuntime *runtime = nullptr;
};

/// The decorator `nki.<name>` (`@nki.jit`, `@nki.jit()`, `@nki.jit(mode=...)`; a kernel jitted
/// twice stays the same kernel).
std::shared_ptr<BuiltinFunction> jit_decorator(const std::string &name, const NkiRuntime *runtime);
/// The kernel a decorator was given, as a JitKernel (a plain function is wrapped), or null.
std::shared_ptr<JitKernel> as_kernel(const Value &v);

} // namespace nkicc::nki
