// NKI as the interpreter sees it: tensors and their views, index tiles, program ids, dtypes,
// buffers and the module objects of `neuronxcc.nki.*` / `nki.*` (reference/nki.md). Each NKI
// call checks NKI's constraints with NKI's message and id, then emits IR through the
// KernelBuilder of the trace in progress.
#pragma once

#include "nkicc/ir/kernel_ir.h"
#include "nkicc/target/target.h"
#include "nkicc/trace/interpreter.h"
#include "nkicc/trace/numpy.h"

#include <array>
#include <initializer_list>
#include <span>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nkicc::trace {

class KernelBuilder;
class NkiRuntime;

/// An integer affine in the SPMD program ids: constant + sum(coef[a] * program_id(a)).
struct Affine {
  std::int64_t constant = 0;
  std::array<std::int64_t, ir::kMaxGridAxes> coef{};
  bool is_constant() const { return coef == std::array<std::int64_t, ir::kMaxGridAxes>{}; }
  std::string text() const;
};

/// An int or a program-id affine as an Affine; nullopt for anything else.
std::optional<Affine> to_affine(const Value &v);
/// Checked int64 arithmetic for shapes, offsets and MAC counts (SPEC §10: overflow is reported).
std::int64_t checked_add(std::int64_t a, std::int64_t b);
std::int64_t checked_mul(std::int64_t a, std::int64_t b);

/// `nl.program_id(axis)` and integer arithmetic on it: usable in index arithmetic, never in
/// Python control flow.
class AffineObject : public Object {
public:
  explicit AffineObject(Affine a) : value(a) {}
  std::string_view type_name() const override { return "program_id"; }
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> unary_op(Interpreter &, python::UnaryOpKind op) override;
  std::optional<Value> compare(Interpreter &, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override { return value.text(); }
  Affine value;
};

/// An index tile: `nl.arange(n)` placed on one axis of an index tile of `rank` axes
/// (`[:, None]`: axis 0 of 2, `[None, :]`: axis 1 of 2), with affine arithmetic applied:
/// the indices are start + step * k for k in [0, count).
class IndexObject : public Object {
public:
  std::string_view type_name() const override { return "IndexTile"; }
  Value get_item(Interpreter &, const Value &key) override;
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override;
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> compare(Interpreter &, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override;
  /// This index's terms in predicate text: `2*i1 + 5`.
  std::string term() const;

  Affine start;
  std::int64_t step = 1;
  std::int64_t count = 0;
  int rank = 1;
  int axis = 0;
};

/// A sum or difference of index tiles on different axes (`i_q - i_k`): usable only in the
/// predicates of masks and affine_select.
class IndexSumObject : public Object {
public:
  std::string_view type_name() const override { return "IndexExpr"; }
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> compare(Interpreter &, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override { return text; }
  std::string text;
};

/// A predicate over index tiles (`mask=(i * 128 + ix < n)`), recorded on the instruction and
/// relaxing bounds checks on the axes it constrains.
class MaskObject : public Object {
public:
  std::string_view type_name() const override { return "Mask"; }
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override { return text; }
  std::string text;
};

// The dtype objects (nl.float32, tile.dtype) are NumPy's: DTypeObject in nkicc/trace/numpy.h (lib).

class BufferObject : public Object {
public:
  explicit BufferObject(ir::Memory m) : memory(m) {}
  std::string_view type_name() const override { return "buffer"; }
  std::string repr() const override { return std::string(ir::memory_name(memory)); }
  ir::Memory memory;
};

/// A view of a tensor the kernel works on: the whole tensor when created, a sub-view when
/// indexed. Views of HBM tensors feed loads and stores; views of SBUF/PSUM tiles feed compute.
class TensorRef : public Object {
public:
  std::string_view type_name() const override;
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override;
  Value get_item(Interpreter &, const Value &key) override;
  void set_item(Interpreter &, const Value &key, const Value &value) override;
  void aug_set_item(Interpreter &, const Value &key, python::BinOpKind op, const Value &value) override;
  std::optional<Value> inplace_op(Interpreter &, python::BinOpKind op, const Value &other) override;
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> unary_op(Interpreter &, python::UnaryOpKind op) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override;
  void on_bind(std::string_view name) override;

  const ir::Tensor &tensor() const;
  ir::Shape shape() const { return ap.shape(); }
  /// `name[128, 512]`, as NKI's messages show a parameter.
  std::string describe() const;

  KernelBuilder *builder = nullptr;
  ir::AccessPattern ap;
  /// The first out-of-bound index of this view, if any: reported when an operation uses the
  /// view without a `mask=` (a masked access may reach past the end, as in NKI).
  std::string out_of_bound;
};

/// `nl.affine_range`, `nl.sequential_range`, `nl.static_range`: Python ranges that record
/// their loop kind on the instructions emitted in their body.
class NkiRangeObject : public Object {
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
class JitKernel : public Object {
public:
  std::string_view type_name() const override { return "GenericKernel"; }
  Value call(Interpreter &, CallArgs &args) override;
  Value get_item(Interpreter &, const Value &key) override;
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override;
  std::string repr() const override;
  bool is_callable() const override { return true; }
  Value function; ///< a FunctionObject
  /// lib: a launch from host code (no trace in progress: `kernel(np.zeros(...))` at module
  /// level) is inert, never a trace.
  const NkiRuntime *runtime = nullptr;
};

/// The state of one trace: the IR function being built and the facts NKI calls need.
class KernelBuilder {
public:
  KernelBuilder(Interpreter &interp, const TargetInfo &target, std::vector<std::int64_t> grid,
                std::uint64_t max_instructions);

  ir::TensorId new_tensor(std::string name, ir::TensorRole role, ir::Memory memory, ir::Shape shape, DType dtype,
                          bool auto_named);
  /// A view of the whole tensor.
  std::shared_ptr<TensorRef> full_view(ir::TensorId id);
  /// Appends an instruction, recording the loop kind and the location of the call in progress.
  void emit(ir::Opcode opcode, ir::Engine engine, std::span<const ir::AccessPattern> dst,
            std::span<const ir::AccessPattern> src, const ir::AttrList &attrs = {});
  void emit(ir::Opcode opcode, ir::Engine engine, std::initializer_list<ir::AccessPattern> dst,
            std::initializer_list<ir::AccessPattern> src, const ir::AttrList &attrs = {}) {
    emit(opcode, engine, std::span<const ir::AccessPattern>(dst.begin(), dst.size()),
         std::span<const ir::AccessPattern>(src.begin(), src.size()), attrs);
  }
  void emit(ir::Opcode opcode, ir::Engine engine, std::initializer_list<ir::AccessPattern> dst,
            const std::vector<ir::AccessPattern> &src, const ir::AttrList &attrs = {}) {
    emit(opcode, engine, std::span<const ir::AccessPattern>(dst.begin(), dst.size()), src, attrs);
  }
  /// A fresh tile name (`add.3`) for results the kernel does not name.
  std::string auto_name(std::string_view stem);
  void rename(ir::TensorId id, std::string_view name);

  Interpreter &interp;
  const TargetInfo &target;
  std::vector<std::int64_t> grid;
  /// The interpreter's call depth inside the kernel's own body: deeper is a helper function.
  std::size_t kernel_call_depth = 0;
  std::uint64_t max_instructions;
  ir::Function fn;
  std::vector<bool> auto_named;
  /// The index of the instruction that last wrote each tile, for `psum[...] += nl.matmul(...)`.
  ir::SegmentedVector<std::int64_t> last_writer;
};

/// NKI's modules and the kernel being traced; one per interpreter.
class NkiRuntime {
public:
  NkiRuntime();
  /// The ModuleResolver: `neuronxcc.nki.language`, `nki.isa`, `numpy`, ...; null otherwise.
  std::shared_ptr<Object> resolve(std::string_view dotted_name);
  KernelBuilder &builder(std::string_view op) const;
  KernelBuilder *current = nullptr;

private:
  void build_modules();
  std::map<std::string, std::shared_ptr<ModuleObject>, std::less<>> modules_;
};

/// The shape of a value for messages: `[128, 512]`.
std::string shape_text(std::span<const std::int64_t> shape);

} // namespace nkicc::trace
