#include "ir_fixture.h"
#include "bir/schema.h"
#include "nkicc/bir/bir.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>
#include <string>

using namespace nkicc;
using namespace nkicc::ir;
using namespace nkicc::ir::testing;

namespace {

InstructionSpec inst(Opcode opcode, Engine engine, std::vector<AccessPattern> dst, std::vector<AccessPattern> src,
                     LoopKind loop = LoopKind::None) {
  InstructionSpec i;
  i.opcode = opcode;
  i.engine = engine;
  i.dst = std::move(dst);
  i.src = std::move(src);
  i.loop_kind = loop;
  return i;
}

constexpr Opcode kAllOpcodes[] = {
    Opcode::Load,          Opcode::Store,        Opcode::DmaCopy,      Opcode::TensorCopy, Opcode::MatMul,
    Opcode::Transpose,     Opcode::TensorTensor, Opcode::TensorScalar, Opcode::Activation, Opcode::TensorReduce,
    Opcode::Memset,        Opcode::Iota,         Opcode::AffineSelect, Opcode::BnStats,    Opcode::BnAggr,
    Opcode::Select,        Opcode::Collective,   Opcode::Max8,         Opcode::FindIndex8, Opcode::MatchReplace8,
    Opcode::StreamShuffle, Opcode::Rand,         Opcode::RandomSeed,   Opcode::Dropout,    Opcode::SequenceBounds,
};
/// The reduce/scan family's opcodes.
constexpr Opcode kReduceOpcodes[] = {Opcode::TensorTensorScan, Opcode::PartitionReduce, Opcode::SelectReduce,
                                     Opcode::ScalarTensorTensor};
/// Range selection, local gather and device printing.
constexpr Opcode kGatherOpcodes[] = {Opcode::RangeSelect,     Opcode::LocalGather, Opcode::DevicePrint,
                                     Opcode::GatherFlattened, Opcode::MatMulMx,    Opcode::QuantizeMx};
constexpr Engine kAllEngines[] = {Engine::Tensor, Engine::Vector, Engine::Scalar, Engine::GpSimd, Engine::Sync};
constexpr LoopKind kAllLoops[] = {LoopKind::None, LoopKind::Range, LoopKind::Affine, LoopKind::Sequential,
                                  LoopKind::Static};

/// A function with every tensor role and memory, every dtype, every opcode, engine and loop
/// kind, every attribute kind, grid terms and negative offsets.
Function sample_function(FileId file) {
  Function fn = sample_header(file);
  const DType other_dtypes[] = {DType::Float16,        DType::TFloat32,     DType::Float8E4M3,   DType::Float8E4M3FN,
                                DType::Float8E5M2,     DType::Int8,         DType::Int16,        DType::UInt16,
                                DType::UInt32,         DType::Bool,         DType::Float8E5M2X4, DType::Float8E4M3FNX4,
                                DType::Float4E2M1FNX4, DType::Float8E8M0FNU};
  for (DType dtype : other_dtypes)
    fn.tensors.push_back(tensor(std::string("t_") + std::string(dtype_name(dtype)), TensorRole::Internal,
                                Memory::PrivateHbm, {2}, dtype));

  InstructionSpec load = inst(Opcode::Load, Engine::Sync, {ap(4, {{512, 128}, {1, 512}})},
                              {ap(0, {{2048, 128}, {1, 512}}, 0, {262144, 512, 0})}, LoopKind::Affine);
  load.loc = sample_loc(file, "nl.load");
  add_instruction(fn, load);

  InstructionSpec add = inst(Opcode::TensorTensor, Engine::Vector, {ap(5, {{512, 64}, {1, 512}}, -7, {0, 0, -3})},
                             {ap(4, {{512, 64}, {1, 512}}, 32), ap(4, {{512, 64}, {1, 512}})}, LoopKind::Sequential);
  add.attrs = {
      {"op", PyConstant::str("add")},
      {"none", PyConstant::none()},
      {"flag", PyConstant::boolean(true)},
      {"off", PyConstant::boolean(false)},
      {"axis", PyConstant::integer(-1)},
      {"big", PyConstant::integer(std::numeric_limits<std::int64_t>::min())},
      {"zero", PyConstant::integer(0)},
      {"scale", PyConstant::floating(0.5)},
      {"negzero", PyConstant::floating(-0.0)},
      {"poszero", PyConstant::floating(0.0)},
      {"inf", PyConstant::floating(-std::numeric_limits<double>::infinity())},
      {"nan", PyConstant::floating(std::numeric_limits<double>::quiet_NaN())},
      {"tiny", PyConstant::floating(1e-5)},
      {"quote", PyConstant::str("it's \"x\"\n")},
      {"empty", PyConstant::str("")},
      {"bounds", PyConstant::tuple({PyConstant::integer(0), PyConstant::integer(128)})},
      {"single", PyConstant::tuple({PyConstant::integer(1)})},
      {"unit", PyConstant::tuple({})},
      {"mask",
       PyConstant::list({PyConstant::boolean(true), PyConstant::none(), PyConstant::str("x"), PyConstant::list({})})},
      {"opts",
       PyConstant::make_dict({{"b", PyConstant::integer(2)},
                              {"a", PyConstant::make_dict({{"n", PyConstant::tuple({PyConstant::floating(1.5)})}})},
                              {"", PyConstant::make_dict({})}})},
  };
  add.loc = sample_loc(file, "nl.add");
  add_instruction(fn, add);

  // Every opcode, engine and loop kind at least once.
  for (std::size_t i = 0; i < std::size(kAllOpcodes); ++i)
    add_instruction(fn, inst(kAllOpcodes[i], kAllEngines[i % std::size(kAllEngines)], {ap(3, {{1, 4}})}, {},
                             kAllLoops[i % std::size(kAllLoops)]));
  for (Opcode op : kReduceOpcodes)
    add_instruction(fn, inst(op, Engine::Vector, {ap(3, {{1, 4}})}, {ap(3, {{1, 4}})}));
  for (Opcode op : kGatherOpcodes)
    add_instruction(fn, inst(op, Engine::GpSimd, {ap(3, {{1, 4}})}, {ap(3, {{1, 4}})}));
  // An instruction with no operands, attributes or location.
  add_instruction(fn, inst(Opcode::Collective, Engine::GpSimd, {}, {}));
  return fn;
}

} // namespace

TEST_CASE("write_kernel: every part of a function survives into the text", "[bir]") {
  SourceManager sm;
  FileId file = sm.add_buffer("/some/where/kernel.py", std::string(kSampleSource));
  Function fn = sample_function(file);
  std::string blob = bir::write_kernel(fn, "trn2", sm);
  std::string error;
  auto text = bir::kernel_to_text(blob, error);
  INFO(error);
  REQUIRE(text);
  CHECK(*text == R"(kernel add_kernel
  format_version: 1
  target: trn2
  inputs: a_input, b_input
  outputs: c_output
  matmul_mac_count: 8388608
  has_collectives: true
  tensors: 21
    %0 a_input input shared_hbm float32[256, 2048]
    %1 b_input input shared_hbm bfloat16[256, 2048]
    %2 c_output output shared_hbm float32[256, 2048] @3:16
    %3 scratch internal private_hbm int32[4]
    %4 a_tile internal sbuf float32[128, 512] partitions=[0, 128) bytes=[0, 2048) @4:14
    %5 acc internal psum float32[64, 512] partitions=[64, 128) bytes=[2048, 4096)
    %6 unused internal sbuf uint8[1, 1] unallocated
    %7 t_float16 internal private_hbm float16[2]
    %8 t_tfloat32 internal private_hbm tfloat32[2]
    %9 t_float8_e4m3 internal private_hbm float8_e4m3[2]
    %10 t_float8_e4m3fn internal private_hbm float8_e4m3fn[2]
    %11 t_float8_e5m2 internal private_hbm float8_e5m2[2]
    %12 t_int8 internal private_hbm int8[2]
    %13 t_int16 internal private_hbm int16[2]
    %14 t_uint16 internal private_hbm uint16[2]
    %15 t_uint32 internal private_hbm uint32[2]
    %16 t_bool internal private_hbm bool[2]
    %17 t_float8_e5m2_x4 internal private_hbm float8_e5m2_x4[2]
    %18 t_float8_e4m3fn_x4 internal private_hbm float8_e4m3fn_x4[2]
    %19 t_float4_e2m1fn_x4 internal private_hbm float4_e2m1fn_x4[2]
    %20 t_float8_e8m0fnu internal private_hbm float8_e8m0fnu[2]
  instructions: 38
    0: load sync dst=%4[[512, 128], [1, 512]] src=%0[[2048, 128], [1, 512]]+262144*pid0+512*pid1 loop=affine_range @4:14
    1: tensor_tensor vector dst=%5[[512, 64], [1, 512]]-7-3*pid2 src=%4[[512, 64], [1, 512]]+32, %4[[512, 64], [1, 512]] op='add' none=None flag=True off=False axis=-1 big=-9223372036854775808 zero=0 scale=0.5 negzero=-0.0 poszero=0.0 inf=-inf nan=nan tiny=1e-05 quote='it\'s "x"\n' empty='' bounds=(0, 128) single=(1,) unit=() mask=[True, None, 'x', []] opts={'b': 2, 'a': {'n': (1.5,)}, '': {}} loop=sequential_range @5:14
    2: load tensor dst=%3[[1, 4]]
    3: store vector dst=%3[[1, 4]] loop=range
    4: dma_copy scalar dst=%3[[1, 4]] loop=affine_range
    5: tensor_copy gpsimd dst=%3[[1, 4]] loop=sequential_range
    6: matmul sync dst=%3[[1, 4]] loop=static_range
    7: transpose tensor dst=%3[[1, 4]]
    8: tensor_tensor vector dst=%3[[1, 4]] loop=range
    9: tensor_scalar scalar dst=%3[[1, 4]] loop=affine_range
    10: activation gpsimd dst=%3[[1, 4]] loop=sequential_range
    11: tensor_reduce sync dst=%3[[1, 4]] loop=static_range
    12: memset tensor dst=%3[[1, 4]]
    13: iota vector dst=%3[[1, 4]] loop=range
    14: affine_select scalar dst=%3[[1, 4]] loop=affine_range
    15: bn_stats gpsimd dst=%3[[1, 4]] loop=sequential_range
    16: bn_aggr sync dst=%3[[1, 4]] loop=static_range
    17: select tensor dst=%3[[1, 4]]
    18: collective vector dst=%3[[1, 4]] loop=range
    19: max8 scalar dst=%3[[1, 4]] loop=affine_range
    20: find_index8 gpsimd dst=%3[[1, 4]] loop=sequential_range
    21: match_replace8 sync dst=%3[[1, 4]] loop=static_range
    22: stream_shuffle tensor dst=%3[[1, 4]]
    23: rand vector dst=%3[[1, 4]] loop=range
    24: random_seed scalar dst=%3[[1, 4]] loop=affine_range
    25: dropout gpsimd dst=%3[[1, 4]] loop=sequential_range
    26: sequence_bounds sync dst=%3[[1, 4]] loop=static_range
    27: tensor_tensor_scan vector dst=%3[[1, 4]] src=%3[[1, 4]]
    28: partition_reduce vector dst=%3[[1, 4]] src=%3[[1, 4]]
    29: select_reduce vector dst=%3[[1, 4]] src=%3[[1, 4]]
    30: scalar_tensor_tensor vector dst=%3[[1, 4]] src=%3[[1, 4]]
    31: range_select gpsimd dst=%3[[1, 4]] src=%3[[1, 4]]
    32: local_gather gpsimd dst=%3[[1, 4]] src=%3[[1, 4]]
    33: device_print gpsimd dst=%3[[1, 4]] src=%3[[1, 4]]
    34: gather_flattened gpsimd dst=%3[[1, 4]] src=%3[[1, 4]]
    35: matmul_mx gpsimd dst=%3[[1, 4]] src=%3[[1, 4]]
    36: quantize_mx gpsimd dst=%3[[1, 4]] src=%3[[1, 4]]
    37: collective gpsimd
)");
}

TEST_CASE("write_kernel: the kernel text matches --emit=ir line for line", "[bir]") {
  // The BIR text is the IR text plus the format version and target lines; the tensors and
  // instructions print identically, so a golden of one explains the other.
  SourceManager sm;
  FileId file = sm.add_buffer("kernel.py", std::string(kSampleSource));
  Function fn = sample_function(file);
  std::string error;
  auto text = bir::kernel_to_text(bir::write_kernel(fn, "trn1", sm), error);
  REQUIRE(text);
  std::string ir_text = print_function(fn, sm);
  std::string expected = ir_text;
  auto header_end = expected.find('\n') + 1;
  expected.insert(header_end, "  format_version: 1\n  target: trn1\n");
  CHECK(*text == expected);
}

TEST_CASE("write_kernel: the same function gives the same bytes", "[bir]") {
  SourceManager sm;
  FileId file = sm.add_buffer("kernel.py", std::string(kSampleSource));
  std::string first = bir::write_kernel(sample_function(file), "trn2", sm);
  std::string second = bir::write_kernel(sample_function(file), "trn2", sm);
  CHECK(first == second);
  // Paths never reach the blob; only line:col does.
  CHECK(first.find("kernel.py") == std::string::npos);
  SourceManager elsewhere;
  FileId moved = elsewhere.add_buffer("/a/different/folder/kernel.py", std::string(kSampleSource));
  CHECK(bir::write_kernel(sample_function(moved), "trn2", elsewhere) == first);
  // Any change of content changes the bytes.
  Function changed = sample_function(file);
  AttrList attrs = changed.attrs(changed.instructions[1]);
  attrs[0].second = PyConstant::str("subtract");
  changed.set_attrs(changed.instructions[1], attrs);
  CHECK(bir::write_kernel(changed, "trn2", sm) != first);
  CHECK(bir::write_kernel(sample_function(file), "trn3", sm) != first);
}

TEST_CASE("write_kernel: an empty function and the deepest attribute value", "[bir]") {
  SourceManager sm;
  std::string error;
  auto text = bir::kernel_to_text(bir::write_kernel(Function{}, "", sm), error);
  REQUIRE(text);
  CHECK(*text == "kernel ''\n  format_version: 1\n  target: ''\n  inputs:\n  outputs:\n  matmul_mac_count: 0\n"
                 "  has_collectives: false\n  tensors: 0\n  instructions: 0\n");

  // Dicts cost two tables a level, the most of any kind: kMaxAttrNesting of them still verify.
  PyConstant value = PyConstant::integer(1);
  std::string expected = "1";
  for (std::size_t i = 0; i < bir::kMaxAttrNesting; ++i) {
    value = PyConstant::make_dict({{"k", std::move(value)}});
    expected = "{'k': " + expected + "}";
  }
  Function fn;
  InstructionSpec memset = inst(Opcode::Memset, Engine::GpSimd, {}, {});
  memset.attrs.push_back({"deep", value});
  add_instruction(fn, memset);
  text = bir::kernel_to_text(bir::write_kernel(fn, "trn2", sm), error);
  INFO(error);
  REQUIRE(text);
  CHECK(text->find("0: memset gpsimd deep=" + expected + "\n") != std::string::npos);
}

TEST_CASE("write_kernel: equal shapes and repeated operands are written once and shared", "[bir]") {
  // A matmul loop: each step loads two new tiles of the same two shapes and accumulates into
  // one PSUM tile, whose operand is the same every time.
  Function fn;
  fn.name = "mm";
  fn.tensors.push_back(tensor("a", TensorRole::Input, Memory::SharedHbm, {1024, 128}, DType::BFloat16));
  fn.tensors.push_back(tensor("acc", TensorRole::Internal, Memory::Psum, {128, 512}, DType::Float32));
  constexpr int kSteps = 2000; // past the memo's 1,024 slots: the accumulator's slot is taken and refilled
  for (int i = 0; i < kSteps; ++i) {
    auto lhs = static_cast<TensorId>(fn.tensors.size());
    fn.tensors.push_back(
        tensor("l." + std::to_string(i), TensorRole::Internal, Memory::Sbuf, {128, 128}, DType::BFloat16));
    fn.tensors.push_back(
        tensor("r." + std::to_string(i), TensorRole::Internal, Memory::Sbuf, {128, 512}, DType::BFloat16));
    add_instruction(fn, inst(Opcode::Load, Engine::Sync, {ap(lhs, {{128, 128}, {1, 128}})},
                             {ap(0, {{128, 128}, {1, 128}}, 128 * (i % 8))}));
    add_instruction(fn, inst(Opcode::MatMul, Engine::Tensor, {ap(1, {{512, 128}, {1, 512}})},
                             {ap(lhs, {{128, 128}, {1, 128}}), ap(lhs + 1, {{512, 128}, {1, 512}})}));
  }
  SourceManager sm;
  std::string blob = bir::write_kernel(fn, "trn2", sm);
  const auto *kernel = flatbuffers::GetRoot<bir::Kernel>(blob.data());
  const auto *tensors = kernel->tensors();
  REQUIRE(tensors->size() == fn.tensors.size());
  // One vector per distinct shape, the same one for every tile of it.
  CHECK(tensors->Get(2)->shape() == tensors->Get(4)->shape());
  CHECK(tensors->Get(3)->shape() == tensors->Get(kSteps * 2 + 1)->shape());
  CHECK(tensors->Get(2)->shape() != tensors->Get(3)->shape());
  CHECK(tensors->Get(1)->shape() == tensors->Get(3)->shape()); // equal shapes share, whatever the dtype or memory
  // Every matmul's destination list is one vector, holding one AccessPattern table.
  const auto *insts = kernel->instructions();
  std::set<const void *> dst_lists;
  std::set<const void *> loads_src_tables;
  for (flatbuffers::uoffset_t i = 1; i < insts->size(); i += 2)
    dst_lists.insert(insts->Get(i)->dst());
  for (flatbuffers::uoffset_t i = 0; i < insts->size(); i += 2)
    loads_src_tables.insert(insts->Get(i)->src()->Get(0));
  // Written again only after a new tile's operand took the accumulator's slot (tile ids that
  // are 1 modulo 1,024).
  CHECK(dst_lists.size() <= 1 + 2 * kSteps / 1024);
  // The loads read eight offsets of `a`, alternately: the memo keeps the last one per tensor,
  // so a different offset is a new table (and the text is the same either way).
  CHECK(loads_src_tables.size() == kSteps);
  std::string error;
  auto text = bir::kernel_to_text(blob, error);
  INFO(error);
  REQUIRE(text);
  CHECK(text->find("3999: matmul tensor dst=%1[[512, 128], [1, 512]] src=%4000") != std::string::npos);
  CHECK(text->find("%4001 r.1999 internal sbuf bfloat16[128, 512]") != std::string::npos);
}

TEST_CASE("write_module: three calls over two kernels", "[bir]") {
  SourceManager sm;
  FileId file = sm.add_buffer("kernel.py", std::string(kSampleSource));
  Function add = sample_function(file);
  Function copy;
  copy.name = "copy_kernel";
  copy.input_names = {"x"};
  copy.output_names = {"y"};
  copy.tensors.push_back(tensor("x", TensorRole::Input, Memory::SharedHbm, {128, 4}, DType::Float16));
  copy.tensors.push_back(tensor("y", TensorRole::Output, Memory::SharedHbm, {128, 4}, DType::Float16));
  add_instruction(copy, inst(Opcode::DmaCopy, Engine::Sync, {ap(1, {{4, 128}, {1, 4}})}, {ap(0, {{4, 128}, {1, 4}})}));

  std::string add_blob = bir::write_kernel(add, "trn2", sm);
  std::string copy_blob = bir::write_kernel(copy, "trn2", sm);
  const std::string key_a(64, 'a');
  const std::string key_b(64, 'b');
  std::vector<std::pair<std::string_view, std::string_view>> kernels = {{key_a, add_blob}, {key_b, copy_blob}};
  std::vector<bir::ModuleCall> calls = {
      {"tiled_add", "add_kernel", key_a, 0, {"a_input", "b_input"}, {"c_output"}},
      {"copy", "copy_kernel", key_b, 1, {"x"}, {"y"}},
      {"tiled_add", "add_kernel", key_a, 0, {"a_input", "b_input"}, {"c_output"}},
  };
  bir::ModuleInfo info{"tutorial", "0.1.0", "trn2", "beta3"};
  std::string blob = bir::write_module(info, kernels, calls);
  CHECK(bir::write_module(info, kernels, calls) == blob);
  // Each kernel is stored once, byte for byte.
  CHECK(blob.find(add_blob) != std::string::npos);
  CHECK(blob.find(copy_blob) != std::string::npos);
  CHECK(blob.find(add_blob, blob.find(add_blob) + 1) == std::string::npos);

  std::string error;
  auto text = bir::module_to_text(blob, error);
  INFO(error);
  REQUIRE(text);
  CHECK(text->rfind("module tutorial\n"
                    "  format_version: 1\n"
                    "  nkicc_version: 0.1.0\n"
                    "  target: trn2\n"
                    "  nki_frontend: beta3\n"
                    "  kernels: 2\n"
                    "    #0 cache_key=" +
                        key_a +
                        "\n"
                        "      kernel add_kernel\n"
                        "        format_version: 1\n",
                    0) == 0);
  const std::string tail =
      "    #1 cache_key=" + key_b +
      "\n"
      "      kernel copy_kernel\n"
      "        format_version: 1\n"
      "        target: trn2\n"
      "        inputs: x\n"
      "        outputs: y\n"
      "        matmul_mac_count: 0\n"
      "        has_collectives: false\n"
      "        tensors: 2\n"
      "          %0 x input shared_hbm float16[128, 4]\n"
      "          %1 y output shared_hbm float16[128, 4]\n"
      "        instructions: 1\n"
      "          0: dma_copy sync dst=%1[[4, 128], [1, 4]] src=%0[[4, 128], [1, 4]]\n"
      "  instructions: 3\n"
      "    0: NKIKLIRKernel func_name=tiled_add kernel_name=add_kernel kernel_format=bir cache_key=" +
      key_a +
      " kernel=#0 nki_binary_version_identifier=nkicc-bir-1 func_args=[a_input, b_input] func_outs=[c_output]\n"
      "    1: NKIKLIRKernel func_name=copy kernel_name=copy_kernel kernel_format=bir cache_key=" +
      key_b +
      " kernel=#1 nki_binary_version_identifier=nkicc-bir-1 func_args=[x] func_outs=[y]\n"
      "    2: NKIKLIRKernel func_name=tiled_add kernel_name=add_kernel kernel_format=bir cache_key=" +
      key_a +
      " kernel=#0 nki_binary_version_identifier=nkicc-bir-1 func_args=[a_input, b_input] func_outs=[c_output]\n";
  REQUIRE(text->size() > tail.size());
  CHECK(text->substr(text->size() - tail.size()) == tail);

  // The module's kernel section is the kernel's own text, indented.
  auto kernel_text = bir::kernel_to_text(add_blob, error);
  REQUIRE(kernel_text);
  std::string indented;
  std::size_t start = 0;
  while (start < kernel_text->size()) {
    std::size_t end = kernel_text->find('\n', start) + 1;
    indented += "      " + kernel_text->substr(start, end - start);
    start = end;
  }
  CHECK(text->find(indented) != std::string::npos);
}

TEST_CASE("write_module_blob: kernel blobs are pieces of the module, never copied", "[bir]") {
  SourceManager sm;
  FileId file = sm.add_buffer("kernel.py", std::string(kSampleSource));
  OwnedBytes add = bir::write_kernel_blob(sample_function(file), "trn2", sm);
  Function empty;
  empty.name = "empty";
  OwnedBytes other = bir::write_kernel_blob(empty, "trn2", sm);
  const std::string key_a(64, 'a');
  const std::string key_b(64, 'b');
  std::vector<bir::ModuleCall> calls = {{"f", "add_kernel", key_a, 0, {}, {}}, {"g", "empty", key_b, 1, {}, {}}};
  bir::ModuleInfo info{"m", "0.1.0", "trn2", "beta3"};
  ByteSequence module = bir::write_module_blob(info, {{key_a, add}, {key_b, other}}, calls);

  // The frame around each blob, and each blob where write_kernel_blob left it: the last kernel
  // comes first in the bytes (FlatBuffers builds from the end).
  REQUIRE(module.pieces().size() == 5);
  CHECK(module.pieces()[1].bytes().data() == other.bytes().data());
  CHECK(module.pieces()[1].size() == other.size());
  CHECK(module.pieces()[3].bytes().data() == add.bytes().data());
  std::string joined = module.joined();
  CHECK(joined.size() == module.size());
  // The same bytes as the module written whole, each blob 16-byte aligned inside it.
  std::string add_copy(add.bytes());
  std::string other_copy(other.bytes());
  CHECK(joined == bir::write_module(info, {{key_a, add_copy}, {key_b, other_copy}}, calls));
  CHECK(joined.find(add.bytes()) % 16 == 0);
  CHECK(joined.find(other.bytes()) % 16 == 0);
  std::string error;
  auto text = bir::module_to_text(joined, error);
  INFO(error);
  REQUIRE(text);
  CHECK(text->find("      kernel add_kernel\n") != std::string::npos);
  CHECK(text->find("      kernel empty\n") != std::string::npos);

  // A module without kernels is its frame alone.
  ByteSequence bare = bir::write_module_blob(info, {}, {});
  REQUIRE(bare.pieces().size() == 1);
  CHECK(bir::module_to_text(bare.joined(), error));
}

TEST_CASE("ByteSequence: pieces read as their concatenation; empty pieces are dropped", "[bir]") {
  ByteSequence bytes;
  CHECK(bytes.empty());
  bytes.append(OwnedBytes::of("abc"));
  bytes.append(OwnedBytes());
  bytes.append(OwnedBytes::of("de"));
  CHECK(bytes.pieces().size() == 2);
  CHECK(bytes.size() == 5);
  CHECK_FALSE(bytes.empty());
  CHECK(bytes.joined() == "abcde");
}

TEST_CASE("write_module: names that are not plain tokens are quoted", "[bir]") {
  bir::ModuleInfo info{"my module", "0.1.0", "trn2", ""};
  SourceManager sm;
  Function fn;
  fn.name = "k\nernel";
  std::string blob = bir::write_kernel(fn, "trn2", sm);
  std::vector<std::pair<std::string_view, std::string_view>> kernels = {{"key", blob}};
  std::vector<bir::ModuleCall> calls = {{"f", "k\nernel", "key", 0, {"a b"}, {}}};
  std::string error;
  auto text = bir::module_to_text(bir::write_module(info, kernels, calls), error);
  REQUIRE(text);
  CHECK(text->rfind("module 'my module'\n", 0) == 0);
  CHECK(text->find("  nki_frontend: ''\n") != std::string::npos);
  CHECK(text->find("      kernel 'k\\nernel'\n") != std::string::npos);
  CHECK(text->find("func_args=['a b'] func_outs=[]\n") != std::string::npos);
}
