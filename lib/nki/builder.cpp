#include "builder.h"

#include "allocation.h"
#include "tensor.h"

#include <fmt/format.h>

namespace nkicc::nki {

KernelBuilder::KernelBuilder(Interpreter &interp_, const TargetInfo &target_, std::vector<std::int64_t> grid_,
                             std::uint64_t max_instructions_)
    : interp(interp_), target(target_), grid(std::move(grid_)), max_instructions(max_instructions_) {}

ir::TensorId KernelBuilder::new_tensor(ir::TensorName name, ir::TensorRole role, ir::Memory memory, ir::Shape shape,
                                       DType dtype, bool auto_name_flag) {
  ir::Tensor t;
  t.name = std::move(name);
  t.role = role;
  t.memory = memory;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.loc = interp.current_loc();
  fn.tensors.push_back(std::move(t));
  auto_named.push_back(auto_name_flag);
  last_writer.push_back(kNoWriter);
  created_at.push_back(static_cast<std::uint32_t>(fn.instructions.size()));
  return static_cast<ir::TensorId>(fn.tensors.size() - 1);
}

std::uint32_t KernelBuilder::new_block_tensor(std::string name, ir::Memory memory, ir::Shape shape,
                                              std::uint32_t partition_dim, DType dtype, bool auto_name_flag) {
  ir::BlockTensor b;
  b.name = std::move(name);
  b.memory = memory;
  b.shape = std::move(shape);
  b.partition_dim = partition_dim;
  b.dtype = dtype;
  b.loc = interp.current_loc();
  std::int64_t n = 1;
  for (std::size_t d = 0; d < partition_dim; ++d)
    n = checked_mul(n, b.shape[d]);
  if (n > static_cast<std::int64_t>(max_instructions))
    raise_error("max-instructions",
                fmt::format("block tensor '{}' has {} blocks, more than the trace's {} instructions could use", b.name,
                            n, max_instructions));
  b.blocks.assign(static_cast<std::size_t>(n), ir::kNoTensor);
  fn.block_tensors.push_back(std::move(b));
  block_auto_named.push_back(auto_name_flag);
  block_placement.push_back(nullptr);
  block_view_of.push_back(-1);
  return static_cast<std::uint32_t>(fn.block_tensors.size() - 1);
}

namespace {

// The shape of `shape` (of `from` elements) viewed as `to` elements: the last dimension scaled.
ir::Shape viewed_shape(const ir::Shape &shape, std::string_view name, DType from, DType to) {
  ir::Shape out = shape;
  auto from_size = static_cast<std::int64_t>(dtype_size(from)), to_size = static_cast<std::int64_t>(dtype_size(to));
  if (out.empty())
    raise_error("ValueError", fmt::format("cannot view the 0-d tensor '{}' as {}", name, dtype_name(to)));
  std::int64_t bytes = checked_mul(out.back(), from_size);
  if (bytes % to_size != 0)
    raise_error("ValueError",
                fmt::format("cannot view '{}{}' of {} as {}: its last dimension holds {} bytes, not a multiple of {}'s "
                            "{} bytes",
                            name, shape_text(shape), dtype_name(from), dtype_name(to), bytes, dtype_name(to), to_size));
  out.back() = bytes / to_size;
  return out;
}

} // namespace

ir::TensorId KernelBuilder::new_view(ir::TensorId base, DType dtype) {
  if (ir::TensorId root = fn.view_base(base); root != ir::kNoTensor)
    base = root; // a view of a view uses the same bytes
  const ir::Tensor &b = fn.tensors[base];
  ir::Shape shape = viewed_shape(b.shape, b.name.str(), b.dtype, dtype);
  ir::TensorId id = new_tensor(b.name, ir::TensorRole::Internal, b.memory, std::move(shape), dtype, false);
  fn.views.push_back({id, base});
  return id;
}

std::uint32_t KernelBuilder::new_block_view(std::uint32_t base, DType dtype) {
  const ir::BlockTensor &b = fn.block_tensors[base];
  ir::Shape shape = viewed_shape(b.shape, b.name, b.dtype, dtype);
  std::uint32_t id = new_block_tensor(b.name, b.memory, std::move(shape), b.partition_dim, dtype, false);
  block_view_of[id] = base;
  return id;
}

ir::TensorId KernelBuilder::block(std::uint32_t block_tensor, std::size_t index) {
  ir::BlockTensor &b = fn.block_tensors[block_tensor];
  if (b.blocks[index] == ir::kNoTensor && block_view_of[block_tensor] >= 0) {
    // A block of a view is a view of the base's block (placed with it).
    ir::TensorId base = block(static_cast<std::uint32_t>(block_view_of[block_tensor]), index);
    ir::TensorId id = new_view(base, fn.block_tensors[block_tensor].dtype);
    fn.tensors[id].loc = fn.block_tensors[block_tensor].loc;
    fn.block_tensors[block_tensor].blocks[index] = id;
    return id;
  }
  if (b.blocks[index] == ir::kNoTensor) {
    ir::Shape tile(b.shape.begin() + b.partition_dim, b.shape.end());
    // A block is named after its block tensor when the trace numbers names.
    ir::TensorId id = new_tensor(b.name, ir::TensorRole::Internal, b.memory, std::move(tile), b.dtype, false);
    fn.tensors[id].loc = fn.block_tensors[block_tensor].loc;
    fn.block_tensors[block_tensor].blocks[index] = id;
    if (auto placement = block_placement[block_tensor]) {
      std::vector<std::int64_t> block_index = fn.block_tensors[block_tensor].block_index(index);
      place_tile(*this, id, *placement, block_index);
    }
    return id;
  }
  return b.blocks[index];
}

std::shared_ptr<TensorRef> KernelBuilder::full_view(ir::TensorId id) {
  auto ref = std::make_shared<TensorRef>();
  ref->builder = this;
  ref->ap.tensor = id;
  const ir::Shape &shape = fn.tensors[id].shape;
  ref->ap.pattern.resize(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    ref->ap.pattern[i] = {step, shape[i]};
    step = checked_mul(step, shape[i]);
  }
  return ref;
}

void KernelBuilder::emit(ir::Opcode opcode, ir::Engine engine, std::span<const ir::AccessPattern> dst,
                         std::span<const ir::AccessPattern> src, const ir::AttrList &attrs) {
  if (fn.instructions.size() >= max_instructions)
    raise_error("max-instructions",
                fmt::format("the trace emits more than {} instructions; raise --max-instructions if the kernel really "
                            "is this large",
                            max_instructions));
  ir::Instruction inst;
  inst.opcode = opcode;
  inst.engine = engine;
  inst.loop_kind = interp.current_loop_kind();
  inst.loc = interp.current_loc();
  for (const ir::AccessPattern &ap : dst) {
    if (fn.tensors[ap.tensor].role == ir::TensorRole::Constant)
      raise_error("read-only", fmt::format("'{}' is a shared constant (nl.shared_constant): a kernel reads it and "
                                           "cannot write it",
                                           fn.tensors[ap.tensor].name));
    last_writer[ap.tensor] = static_cast<std::uint32_t>(fn.instructions.size());
  }
  if (opcode == ir::Opcode::Collective)
    fn.has_collectives = true;
  fn.append(inst, dst, src, attrs);
}

std::string KernelBuilder::auto_name(std::string_view stem) {
  // Unique numbering happens once the trace is done (the tracer's number_tile_names).
  return std::string(stem);
}

void KernelBuilder::rename(ir::TensorId id, std::string_view name) {
  fn.tensors[id].name = std::string(name);
  auto_named[id] = false;
}

} // namespace nkicc::nki
