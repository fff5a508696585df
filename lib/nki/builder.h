// The state of one trace: the IR function being built and the facts NKI calls need (the
// target, the SPMD grid, which instruction last wrote each tile).
#pragma once

#include "common.h"

#include "nkicc/target/target.h"

#include <initializer_list>
#include <memory>
#include <vector>

namespace nkicc::nki {

class TensorRef;
class PlacementObject;

class KernelBuilder {
public:
  KernelBuilder(Interpreter &interp, const TargetInfo &target, std::vector<std::int64_t> grid,
                std::uint64_t max_instructions);

  ir::TensorId new_tensor(ir::TensorName name, ir::TensorRole role, ir::Memory memory, ir::Shape shape, DType dtype,
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
  /// A tensor with block dimensions (`shape[:partition_dim]`): its index in
  /// fn.block_tensors. Its blocks are made on first use.
  std::uint32_t new_block_tensor(std::string name, ir::Memory memory, ir::Shape shape, std::uint32_t partition_dim,
                                 DType dtype, bool auto_named);
  /// The tile of block `index` (row-major over the block dimensions), made on first use.
  ir::TensorId block(std::uint32_t block_tensor, std::size_t index);
  /// A tensor that views `base`'s bytes as `dtype` (`t.view(dtype)`, ir::TensorView): the same
  /// memory, its last dimension scaled by the ratio of the dtypes' sizes (NKI's ValueError when
  /// the bytes of the last dimension do not divide into the new dtype).
  ir::TensorId new_view(ir::TensorId base, DType dtype);
  /// A block tensor whose blocks view `base`'s blocks as `dtype`.
  std::uint32_t new_block_view(std::uint32_t base, DType dtype);
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
  std::vector<bool> block_auto_named;
  /// How the kernel places each block tensor's blocks (null: automatically).
  std::vector<std::shared_ptr<PlacementObject>> block_placement;
  /// Per block tensor: the block tensor whose blocks its blocks view, or -1.
  std::vector<std::int64_t> block_view_of;
  /// `@nki.compiler.force_auto_alloc`: placements the kernel asks for are ignored.
  bool force_auto_alloc = false;
  /// The index of the instruction that last wrote each tile, for `psum[...] += nl.matmul(...)`
  /// (kNoWriter: none yet). Instruction indices fit 32 bits (ir::Function::append).
  ir::SegmentedVector<std::uint32_t> last_writer;
  static constexpr std::uint32_t kNoWriter = 0xFFFFFFFFu;
  /// How many instructions existed when each tensor was made: a tile made for an op's result
  /// and written by that op alone was made at the op's own index.
  ir::SegmentedVector<std::uint32_t> created_at;
};

} // namespace nkicc::nki
