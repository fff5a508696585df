#include "ir_fixture.h"
#include "nkicc/driver/summary.h"

#include <catch2/catch.hpp>

using namespace nkicc;
using namespace nkicc::ir;
using namespace nkicc::ir::testing;

namespace {

/// A tile placed by hand: `bytes` per partition at `offset`, over `partitions` partitions.
TensorId tile(Function &fn, std::string name, Memory memory, std::int64_t partitions, std::int64_t elements,
              std::int64_t offset) {
  Tensor t = tensor(std::move(name), TensorRole::Internal, memory, {partitions, elements}, DType::Float32);
  t.byte_offset = offset;
  fn.tensors.push_back(std::move(t));
  return static_cast<TensorId>(fn.tensors.size() - 1);
}

void emit(Function &fn, Opcode op, Engine engine, std::vector<AccessPattern> dst, std::vector<AccessPattern> src) {
  InstructionSpec spec;
  spec.opcode = op;
  spec.engine = engine;
  spec.dst = std::move(dst);
  spec.src = std::move(src);
  add_instruction(fn, spec);
}

} // namespace

TEST_CASE("the summary finds the high water, the peak and the tiles live there", "[summary]") {
  Function fn;
  fn.matmul_mac_count = 42;
  TensorId hbm = static_cast<TensorId>(fn.tensors.size());
  fn.tensors.push_back(tensor("in", TensorRole::Input, Memory::SharedHbm, {256, 64}, DType::Float32));
  TensorId a = tile(fn, "a", Memory::Sbuf, 128, 64, 0);     // live 0..1
  TensorId b = tile(fn, "b", Memory::Sbuf, 64, 16, 256);    // live 1..2
  TensorId c = tile(fn, "c", Memory::Sbuf, 128, 32, 0);     // live 2..3: reuses a's bytes
  TensorId p = tile(fn, "p", Memory::Psum, 128, 512, 2048); // live 3
  emit(fn, Opcode::Load, Engine::Sync, {ap(a, {{64, 128}, {1, 64}})}, {ap(hbm, {{64, 128}, {1, 64}})});
  emit(fn, Opcode::TensorCopy, Engine::Vector, {ap(b, {{16, 64}, {1, 16}})}, {ap(a, {{64, 64}, {1, 16}})});
  emit(fn, Opcode::TensorCopy, Engine::Scalar, {ap(c, {{32, 128}, {1, 32}})}, {ap(b, {{16, 64}, {1, 16}})});
  emit(fn, Opcode::MatMul, Engine::Tensor, {ap(p, {{512, 128}, {1, 512}})}, {ap(c, {{32, 128}, {1, 32}})});
  emit(fn, Opcode::Store, Engine::Sync, {ap(hbm, {{64, 128}, {1, 32}})}, {ap(c, {{32, 128}, {1, 32}})});

  TargetInfo target{"trn2", "Trn2", 2, 1000, 16384, true, 3};
  KernelSummary s = summarize_kernel(fn, target);
  CHECK(s.sbuf.capacity == 1000);
  CHECK(s.sbuf.high_water == 320); // b ends at 256 + 64
  CHECK(s.sbuf.partitions == 128);
  // Instruction 1: a (256 bytes) and b (64) are live at once; later c (128) and b (64).
  CHECK(s.sbuf.peak_live == 320);
  CHECK(s.sbuf.peak_instruction == std::optional<std::size_t>(1));
  CHECK(s.sbuf.live_at_peak == std::vector<TensorId>{a, b});
  CHECK(s.psum.high_water == 4096);
  CHECK(s.psum.peak_instruction == std::optional<std::size_t>(3));
  CHECK(s.psum.live_at_peak == std::vector<TensorId>{p});
  CHECK(s.instructions == 5);
  CHECK(s.engines[static_cast<std::size_t>(Engine::Sync)].instructions == 2);
  // The load moves 128 x 64 float32, the store 128 x 32.
  CHECK(s.engines[static_cast<std::size_t>(Engine::Sync)].dma_bytes == 128 * 64 * 4 + 128 * 32 * 4);
  CHECK(s.engines[static_cast<std::size_t>(Engine::Vector)].dma_bytes == 0);
  CHECK(s.dma_bytes == 128 * 96 * 4);
  CHECK(s.macs == 42);

  CallSummary call;
  call.index = 3;
  call.func_name = "k";
  call.grid = {2, 4};
  call.function = &fn;
  call.figures = s;
  CallSummary again = call;
  again.index = 4;
  again.same_as = 3;
  SourceManager sources;
  CHECK(summary_text({call, again}, sources, {}) ==
        "call 3: kernel k, grid [2, 4]\n"
        "  SBUF: 320 of 1000 bytes per partition (32.0%), 128 partitions\n"
        "    peak: 320 bytes live at instruction 1, 2 tiles:\n"
        "      %1 a float32[128, 64] bytes [0, 256)\n"
        "      %2 b float32[64, 16] bytes [256, 320)\n"
        "  PSUM: 4096 of 16384 bytes per partition (25.0%), 128 partitions\n"
        "    peak: 2048 bytes live at instruction 3, 1 tile:\n"
        "      %4 p float32[128, 512] bytes [2048, 4096)\n"
        "  instructions: 5\n"
        "    tensor 1\n"
        "    vector 1\n"
        "    scalar 1\n"
        "    sync 2, dma 49152 bytes\n"
        "  DMA bytes: 49152\n"
        "  MACs: 42\n"
        "\n"
        "call 4: kernel k, grid [2, 4] (same kernel as call 3)\n");
}

TEST_CASE("a kernel without tiles has no peak", "[summary]") {
  Function fn;
  TargetInfo target{"trn1", "Trn1", 1, 100, 200, false, 2};
  KernelSummary s = summarize_kernel(fn, target);
  CHECK(s.sbuf.high_water == 0);
  CHECK_FALSE(s.sbuf.peak_instruction);
  CHECK(s.instructions == 0);
  CallSummary call;
  call.external = false;
  call.func_name = "t";
  call.function = &fn;
  call.figures = s;
  SourceManager sources;
  CHECK(summary_json({call}, sources, {}) ==
        "{\"calls\": [\n  {\"index\": 0, \"kind\": \"internal\", \"func_name\": \"t\", \"grid\": [], \"nc\": 1,\n"
        "   \"sbuf\": {\"capacity\": 100, \"high_water\": 0, \"partitions\": 0, \"peak_live\": 0, \"live_at_peak\": "
        "[]},\n"
        "   \"psum\": {\"capacity\": 200, \"high_water\": 0, \"partitions\": 0, \"peak_live\": 0, \"live_at_peak\": "
        "[]},\n"
        "   \"instructions\": 0, \"engines\": {},\n   \"dma_bytes\": 0, \"macs\": 0}\n]}\n");
}
