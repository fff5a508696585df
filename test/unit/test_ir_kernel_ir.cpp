#include "nkicc/ir/kernel_ir.h"

#include <catch2/catch.hpp>

#include <limits>

using namespace nkicc;
using namespace nkicc::ir;

TEST_CASE("memories, roles, engines and opcodes have their snake_case names", "[ir]") {
  CHECK(memory_name(Memory::SharedHbm) == "shared_hbm");
  CHECK(memory_name(Memory::PrivateHbm) == "private_hbm");
  CHECK(memory_name(Memory::Sbuf) == "sbuf");
  CHECK(memory_name(Memory::Psum) == "psum");
  CHECK(role_name(TensorRole::Input) == "input");
  CHECK(role_name(TensorRole::Output) == "output");
  CHECK(role_name(TensorRole::Internal) == "internal");
  CHECK(engine_name(Engine::Tensor) == "tensor");
  CHECK(engine_name(Engine::Vector) == "vector");
  CHECK(engine_name(Engine::Scalar) == "scalar");
  CHECK(engine_name(Engine::GpSimd) == "gpsimd");
  CHECK(engine_name(Engine::Sync) == "sync");

  const std::vector<std::pair<Opcode, std::string_view>> opcodes = {
      {Opcode::Load, "load"},
      {Opcode::Store, "store"},
      {Opcode::DmaCopy, "dma_copy"},
      {Opcode::TensorCopy, "tensor_copy"},
      {Opcode::MatMul, "matmul"},
      {Opcode::Transpose, "transpose"},
      {Opcode::TensorTensor, "tensor_tensor"},
      {Opcode::TensorScalar, "tensor_scalar"},
      {Opcode::Activation, "activation"},
      {Opcode::TensorReduce, "tensor_reduce"},
      {Opcode::Memset, "memset"},
      {Opcode::Iota, "iota"},
      {Opcode::AffineSelect, "affine_select"},
      {Opcode::BnStats, "bn_stats"},
      {Opcode::BnAggr, "bn_aggr"},
      {Opcode::Select, "select"},
      {Opcode::Collective, "collective"},
  };
  for (const auto &[op, name] : opcodes)
    CHECK(opcode_name(op) == name);
  CHECK(opcodes.size() == static_cast<std::size_t>(Opcode::Collective) + 1);
}

TEST_CASE("only SBUF and PSUM are on chip", "[ir]") {
  CHECK_FALSE(is_on_chip(Memory::SharedHbm));
  CHECK_FALSE(is_on_chip(Memory::PrivateHbm));
  CHECK(is_on_chip(Memory::Sbuf));
  CHECK(is_on_chip(Memory::Psum));
}

TEST_CASE("an access pattern's shape is the num of each pair", "[ir]") {
  // reference/nki.md: `[1, 0:3, 0:2]` of a [4,3,2] tensor.
  AccessPattern ap;
  ap.pattern = {{6, 1}, {2, 3}, {1, 2}};
  ap.offset = 6;
  CHECK(ap.shape() == std::vector<std::int64_t>{1, 3, 2});
  CHECK(AccessPattern{}.shape().empty());
}

TEST_CASE("bytes per partition: the free dimensions times the element size", "[ir]") {
  Tensor t;
  t.shape = {128, 512};
  t.dtype = DType::Float32;
  CHECK(bytes_per_partition(t) == 2048);
  t.shape = {128, 4, 3};
  t.dtype = DType::BFloat16;
  CHECK(bytes_per_partition(t) == 24);
  t.shape = {64};
  t.dtype = DType::Int8;
  CHECK(bytes_per_partition(t) == 1);
  t.shape = {128, 0};
  CHECK(bytes_per_partition(t) == 0);
  // An absurd shape saturates instead of wrapping around, so allocation reports it.
  t.shape = {1, std::int64_t{1} << 40, std::int64_t{1} << 40};
  t.dtype = DType::Float32;
  CHECK(bytes_per_partition(t) == std::numeric_limits<std::int64_t>::max());
}
