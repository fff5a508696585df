// Builders for IR functions in unit tests: tensors, access patterns and instructions given
// with their operands and attributes, as a trace would append them.
#pragma once

#include "nkicc/ir/kernel_ir.h"

#include <array>
#include <string>
#include <string_view>
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

/// The kernel source the sample functions are located in.
inline constexpr std::string_view kSampleSource = "@nki.jit\n"
                                                  "def add_kernel(a_input, b_input):\n"
                                                  "    c_output = nl.ndarray((256, 2048), dtype=a_input.dtype)\n"
                                                  "    a_tile = nl.load(a_input)\n"
                                                  "    c_tile = nl.add(a_tile, b_tile)\n";

/// Where `needle` starts in kSampleSource, registered as `file`.
inline SourceLoc sample_loc(FileId file, std::string_view needle) {
  return {file, static_cast<std::uint32_t>(kSampleSource.find(needle))};
}

/// `add_kernel` with a tensor of every role and memory (%0..%6), allocated ones included, and
/// its header facts; the tests add their instructions.
inline Function sample_header(FileId file) {
  Function fn;
  fn.name = "add_kernel";
  fn.input_names = {"a_input", "b_input"};
  fn.output_names = {"c_output"};
  fn.matmul_mac_count = 8388608;
  fn.has_collectives = true;
  fn.tensors.push_back(tensor("a_input", TensorRole::Input, Memory::SharedHbm, {256, 2048}, DType::Float32));
  fn.tensors.push_back(tensor("b_input", TensorRole::Input, Memory::SharedHbm, {256, 2048}, DType::BFloat16));
  fn.tensors.push_back(tensor("c_output", TensorRole::Output, Memory::SharedHbm, {256, 2048}, DType::Float32,
                              sample_loc(file, "nl.ndarray")));
  fn.tensors.push_back(tensor("scratch", TensorRole::Internal, Memory::PrivateHbm, {4}, DType::Int32));
  fn.tensors.push_back(
      tensor("a_tile", TensorRole::Internal, Memory::Sbuf, {128, 512}, DType::Float32, sample_loc(file, "nl.load")));
  fn.tensors[4].byte_offset = 0;
  fn.tensors.push_back(tensor("acc", TensorRole::Internal, Memory::Psum, {64, 512}, DType::Float32));
  fn.tensors[5].partition_start = 64;
  fn.tensors[5].byte_offset = 2048;
  fn.tensors.push_back(tensor("unused", TensorRole::Internal, Memory::Sbuf, {1, 1}, DType::UInt8));
  return fn;
}

} // namespace nkicc::ir::testing
