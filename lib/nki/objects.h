// NKI's small value objects: dtypes (`nl.float32`), buffers (`nl.sbuf`), the NKI ranges that
// record their loop kind, and the `@nki.jit` kernel wrapper.
#pragma once

#include "common.h"

#include "nkicc/support/dtype.h"

namespace nkicc::nki {

class DTypeObject : public Object {
public:
  explicit DTypeObject(DType d) : dtype(d) {}
  std::string_view type_name() const override { return "dtype"; }
  std::optional<Value> compare(Interpreter &, python::CmpOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override;
  std::string repr() const override { return std::string(dtype_name(dtype)); }
  DType dtype;
};

class BufferObject : public Object {
public:
  explicit BufferObject(ir::Memory m) : memory(m) {}
  std::string_view type_name() const override { return "buffer"; }
  std::string repr() const override { return std::string(ir::memory_name(memory)); }
  ir::Memory memory;
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
  Value function; ///< a FunctionObject
};

/// The decorator `nki.<name>` (`@nki.jit`, `@nki.jit(mode=...)`).
std::shared_ptr<BuiltinFunction> jit_decorator(const std::string &name);

} // namespace nkicc::nki
