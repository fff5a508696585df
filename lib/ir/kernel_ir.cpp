#include "nkicc/ir/kernel_ir.h"

#include <limits>

namespace nkicc::ir {

std::string_view memory_name(Memory m) {
  switch (m) {
  case Memory::SharedHbm:
    return "shared_hbm";
  case Memory::PrivateHbm:
    return "private_hbm";
  case Memory::Sbuf:
    return "sbuf";
  case Memory::Psum:
    return "psum";
  }
  return "?";
}

std::string_view role_name(TensorRole r) {
  switch (r) {
  case TensorRole::Input:
    return "input";
  case TensorRole::Output:
    return "output";
  case TensorRole::Internal:
    return "internal";
  }
  return "?";
}

std::string_view engine_name(Engine e) {
  switch (e) {
  case Engine::Tensor:
    return "tensor";
  case Engine::Vector:
    return "vector";
  case Engine::Scalar:
    return "scalar";
  case Engine::GpSimd:
    return "gpsimd";
  case Engine::Sync:
    return "sync";
  }
  return "?";
}

std::string_view opcode_name(Opcode op) {
  switch (op) {
  case Opcode::Load:
    return "load";
  case Opcode::Store:
    return "store";
  case Opcode::DmaCopy:
    return "dma_copy";
  case Opcode::TensorCopy:
    return "tensor_copy";
  case Opcode::MatMul:
    return "matmul";
  case Opcode::Transpose:
    return "transpose";
  case Opcode::TensorTensor:
    return "tensor_tensor";
  case Opcode::TensorScalar:
    return "tensor_scalar";
  case Opcode::Activation:
    return "activation";
  case Opcode::TensorReduce:
    return "tensor_reduce";
  case Opcode::Memset:
    return "memset";
  case Opcode::Iota:
    return "iota";
  case Opcode::AffineSelect:
    return "affine_select";
  case Opcode::BnStats:
    return "bn_stats";
  case Opcode::BnAggr:
    return "bn_aggr";
  case Opcode::Select:
    return "select";
  case Opcode::Collective:
    return "collective";
  }
  return "?";
}

bool is_on_chip(Memory m) { return m == Memory::Sbuf || m == Memory::Psum; }

std::vector<std::int64_t> AccessPattern::shape() const {
  std::vector<std::int64_t> out;
  out.reserve(pattern.size());
  for (const auto &[step, num] : pattern)
    out.push_back(num);
  return out;
}

std::int64_t bytes_per_partition(const Tensor &t) {
  // Saturates instead of overflowing: an absurd shape must fail allocation, not wrap around.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t bytes = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (std::size_t d = 1; d < t.shape.size(); ++d) {
    std::int64_t n = t.shape[d] < 0 ? 0 : t.shape[d];
    if (n == 0)
      return 0;
    bytes = bytes > kMax / n ? kMax : bytes * n;
  }
  return bytes;
}

} // namespace nkicc::ir
