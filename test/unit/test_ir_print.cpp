#include "ir_fixture.h"
#include "nkicc/ir/kernel_ir.h"

#include <catch2/catch.hpp>

#include <string>

using namespace nkicc;
using namespace nkicc::ir;
using namespace nkicc::ir::testing;

TEST_CASE("print_function: the canonical text of every part of a function", "[ir]") {
  SourceManager sm;
  FileId file = sm.add_buffer("/some/where/kernel.py", std::string(kSampleSource));

  Function fn = sample_header(file);

  InstructionSpec load;
  load.opcode = Opcode::Load;
  load.engine = Engine::Sync;
  load.dst = {ap(4, {{512, 128}, {1, 512}})};
  load.src = {ap(0, {{2048, 128}, {1, 512}}, 0, {262144, 512, 0})};
  load.loop_kind = LoopKind::Affine;
  load.loc = sample_loc(file, "nl.load");
  add_instruction(fn, load);

  InstructionSpec add;
  add.opcode = Opcode::TensorTensor;
  add.engine = Engine::Vector;
  add.dst = {ap(5, {{512, 64}, {1, 512}}), ap(3, {{1, 4}})};
  add.src = {ap(4, {{512, 64}, {1, 256}}, 256), ap(1, {{2048, 1}, {1, 8}}, 16, {0, -8, 3})};
  add.attrs = {
      {"op", PyConstant::str("add")},
      {"negate", PyConstant::boolean(false)},
      {"axis", PyConstant::integer(-1)},
      {"scale", PyConstant::floating(0.5)},
      {"bias", PyConstant::none()},
      {"shape", PyConstant::tuple({PyConstant::integer(128)})},
      {"bounds", PyConstant::list({PyConstant::integer(0), PyConstant::floating(1e-05)})},
      {"opts", PyConstant::make_dict({{"it's", PyConstant::boolean(true)}})},
  };
  add.loop_kind = LoopKind::Sequential;
  add.loc = sample_loc(file, "nl.add");
  add_instruction(fn, add);

  for (LoopKind kind : {LoopKind::None, LoopKind::Range, LoopKind::Static}) {
    InstructionSpec memset;
    memset.opcode = Opcode::Memset;
    memset.engine = Engine::GpSimd;
    memset.dst = {ap(5, {{512, 64}, {1, 512}})};
    memset.attrs = {{"value", PyConstant::floating(0.0)}};
    memset.loop_kind = kind;
    add_instruction(fn, memset);
  }
  InstructionSpec collective;
  collective.opcode = Opcode::Collective;
  collective.engine = Engine::Tensor;
  add_instruction(fn, collective);

  CHECK(print_function(fn, sm) ==
        "kernel add_kernel\n"
        "  inputs: a_input, b_input\n"
        "  outputs: c_output\n"
        "  matmul_mac_count: 8388608\n"
        "  has_collectives: true\n"
        "  tensors: 7\n"
        "    %0 a_input input shared_hbm float32[256, 2048]\n"
        "    %1 b_input input shared_hbm bfloat16[256, 2048]\n"
        "    %2 c_output output shared_hbm float32[256, 2048] @3:16\n"
        "    %3 scratch internal private_hbm int32[4]\n"
        "    %4 a_tile internal sbuf float32[128, 512] partitions=[0, 128) bytes=[0, 2048) @4:14\n"
        "    %5 acc internal psum float32[64, 512] partitions=[64, 128) bytes=[2048, 4096)\n"
        "    %6 unused internal sbuf uint8[1, 1] unallocated\n"
        "  instructions: 6\n"
        "    0: load sync dst=%4[[512, 128], [1, 512]] src=%0[[2048, 128], [1, 512]]+262144*pid0+512*pid1 "
        "loop=affine_range @4:14\n"
        "    1: tensor_tensor vector dst=%5[[512, 64], [1, 512]], %3[[1, 4]] "
        "src=%4[[512, 64], [1, 256]]+256, %1[[2048, 1], [1, 8]]+16-8*pid1+3*pid2 "
        "op='add' negate=False axis=-1 scale=0.5 bias=None shape=(128,) bounds=[0, 1e-05] "
        "opts={\"it's\": True} loop=sequential_range @5:14\n"
        "    2: memset gpsimd dst=%5[[512, 64], [1, 512]] value=0.0\n"
        "    3: memset gpsimd dst=%5[[512, 64], [1, 512]] value=0.0 loop=range\n"
        "    4: memset gpsimd dst=%5[[512, 64], [1, 512]] value=0.0 loop=static_range\n"
        "    5: collective tensor\n");
}

TEST_CASE("print_function: an empty function, and no path ever appears", "[ir]") {
  SourceManager sm;
  FileId file = sm.add_buffer("/some/where/kernel.py", std::string(kSampleSource));
  Function fn;
  fn.name = "empty";
  CHECK(print_function(fn, sm) == "kernel empty\n"
                                  "  inputs:\n"
                                  "  outputs:\n"
                                  "  matmul_mac_count: 0\n"
                                  "  has_collectives: false\n"
                                  "  tensors: 0\n"
                                  "  instructions: 0\n");
  fn.tensors.push_back(tensor("x", TensorRole::Input, Memory::SharedHbm, {1}, DType::Bool, sample_loc(file, "def")));
  // A location naming a file this SourceManager does not hold is left out, not a crash.
  fn.tensors.push_back(tensor("y", TensorRole::Input, Memory::SharedHbm, {1}, DType::Bool, SourceLoc{7, 0}));
  std::string text = print_function(fn, sm);
  CHECK(text.find("    %0 x input shared_hbm bool[1] @2:1\n") != std::string::npos);
  CHECK(text.find("    %1 y input shared_hbm bool[1]\n") != std::string::npos);
  CHECK(text.find("kernel.py") == std::string::npos);
}
