// Builders for IR functions in unit tests: tensors, access patterns and instructions given
// with their operands and attributes, as a trace would append them.
#pragma once

#include "nkicc/ir/kernel_ir.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace nkicc::ir::testing {

inline Tensor tensor(std::string name, TensorRole role, Memory memory, std::vector<std::int64_t> shape, DType dtype,
                     SourceLoc loc = {}) {
  Tensor t;
  t.name = std::move(name);
  t.role = role;
  t.memory = memory;
  t.shape = shape;
  t.dtype = dtype;
  t.loc = loc;
  return t;
}

inline AccessPattern ap(TensorId id, std::vector<std::pair<std::int64_t, std::int64_t>> pattern,
                        std::int64_t offset = 0, std::array<std::int64_t, kMaxGridAxes> program_offset = {}) {
  AccessPattern a;
  a.tensor = id;
  a.pattern = pattern;
  a.offset = offset;
  a.program_offset = program_offset;
  return a;
}

/// An instruction with its operands and attributes inline, for add_instruction().
struct InstructionSpec {
  Opcode opcode = Opcode::TensorCopy;
  Engine engine = Engine::Vector;
  LoopKind loop_kind = LoopKind::None;
  std::vector<AccessPattern> dst;
  std::vector<AccessPattern> src;
  AttrList attrs;
  SourceLoc loc;
};

inline void add_instruction(Function &fn, const InstructionSpec &spec) {
  Instruction header;
  header.opcode = spec.opcode;
  header.engine = spec.engine;
  header.loop_kind = spec.loop_kind;
  header.loc = spec.loc;
  fn.append(header, spec.dst, spec.src, spec.attrs);
}

} // namespace nkicc::ir::testing
