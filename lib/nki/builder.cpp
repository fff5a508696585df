#include "builder.h"

#include "tensor.h"

#include <fmt/format.h>

namespace nkicc::nki {

KernelBuilder::KernelBuilder(Interpreter &interp_, const TargetInfo &target_, std::vector<std::int64_t> grid_,
                             std::uint64_t max_instructions_)
    : interp(interp_), target(target_), grid(std::move(grid_)), max_instructions(max_instructions_) {}

ir::TensorId KernelBuilder::new_tensor(std::string name, ir::TensorRole role, ir::Memory memory, ir::Shape shape,
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
  last_writer.push_back(-1);
  return static_cast<ir::TensorId>(fn.tensors.size() - 1);
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
  for (const ir::AccessPattern &ap : dst)
    last_writer[ap.tensor] = static_cast<std::int64_t>(fn.instructions.size());
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
