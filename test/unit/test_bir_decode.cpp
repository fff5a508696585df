#include "ir_fixture.h"
#include "nkicc/bir/bir.h"
#include "bir/schema.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace nkicc;
using namespace nkicc::ir;
using namespace nkicc::ir::testing;

namespace {

Function grid_function(FileId file) {
  Function fn;
  // (Assigned through swap: GCC 12 warns a false -Wrestrict on a literal assigned here.)
  std::string name = "k";
  fn.name.swap(name);
  fn.input_names = {"a"};
  fn.output_names = {"c"};
  fn.matmul_mac_count = 7;
  fn.tensors.push_back(tensor("a", TensorRole::Input, Memory::SharedHbm, {256, 64}, DType::BFloat16));
  fn.tensors.push_back(tensor("c", TensorRole::Output, Memory::SharedHbm, {256, 64}, DType::Float32));
  Tensor tile = tensor("t", TensorRole::Internal, Memory::Sbuf, {128, 64}, DType::Float32, {file, 3});
  tile.byte_offset = 512;
  fn.tensors.push_back(tile);
  InstructionSpec load;
  load.opcode = Opcode::Load;
  load.engine = Engine::Sync;
  load.loop_kind = LoopKind::Affine;
  load.dst.push_back(ap(2, {{64, 128}, {1, 64}}));
  load.src.push_back(ap(0, {{64, 128}, {1, 64}}, 5, {8192, 0, 0}));
  load.attrs = {{"mask", PyConstant::str("i0 + 128*program_id(0) < 200")},
                {"t", PyConstant::tuple({PyConstant::integer(1), PyConstant::floating(-0.5)})}};
  load.loc = {file, 10};
  add_instruction(fn, load);
  return fn;
}

} // namespace

TEST_CASE("read_kernel: every fact the writer stores comes back", "[bir]") {
  SourceManager sm;
  FileId file = sm.add_buffer("k.py", "def k(a):\n    t = nl.load(a)\n");
  std::vector<std::int64_t> grid = {2, 3};
  std::string blob = bir::write_kernel(grid_function(file), "trn2", sm, grid);
  std::string error;
  auto k = bir::read_kernel(blob, error);
  REQUIRE(k);
  CHECK(k->name == "k");
  CHECK(k->target == "trn2");
  CHECK(k->input_names == std::vector<std::string>{"a"});
  CHECK(k->output_names == std::vector<std::string>{"c"});
  CHECK(k->matmul_mac_count == 7);
  CHECK(k->grid == grid);
  REQUIRE(k->tensors.size() == 3);
  CHECK(k->tensors[0].dtype == DType::BFloat16);
  CHECK(k->tensors[2].memory == Memory::Sbuf);
  CHECK(k->tensors[2].byte_offset == 512);
  CHECK(k->tensors[2].shape == std::vector<std::int64_t>{128, 64});
  CHECK(k->tensors[2].line == 1);
  REQUIRE(k->instructions.size() == 1);
  const bir::KernelInstruction &inst = k->instructions[0];
  CHECK(inst.opcode == Opcode::Load);
  CHECK(inst.loop_kind == LoopKind::Affine);
  REQUIRE(inst.src.size() == 1);
  CHECK(inst.src[0].offset == 5);
  CHECK(inst.src[0].program_offset == std::array<std::int64_t, 3>{8192, 0, 0});
  CHECK(inst.src[0].pattern.size() == 2);
  CHECK(inst.src[0].pattern[1] == std::pair<std::int64_t, std::int64_t>{1, 64});
  REQUIRE(inst.attrs.size() == 2);
  CHECK(inst.attrs[0].second.s == "i0 + 128*program_id(0) < 200");
  CHECK(inst.attrs[1].second.items[1].f == -0.5);
  CHECK(inst.line == 2);

  // A kernel without a grid stores none, and its text shows none.
  std::string flat = bir::write_kernel(grid_function(file), "trn2", sm);
  auto f = bir::read_kernel(flat, error);
  REQUIRE(f);
  CHECK(f->grid.empty());
  CHECK(bir::kernel_to_text(flat, error)->find("grid:") == std::string::npos);
  CHECK(bir::kernel_to_text(blob, error)->find("  has_collectives: false\n  grid: [2, 3]\n") != std::string::npos);
}

TEST_CASE("read_module: the kernels stay blobs, the calls are decoded", "[bir]") {
  SourceManager sm;
  FileId file = sm.add_buffer("k.py", "x\n");
  std::string k1 = bir::write_kernel(grid_function(file), "trn2", sm);
  std::string blob = bir::write_module({"m", "0.1.0", "trn2", "beta3"}, {{"key1", k1}},
                                       {{"f", "k", "key1", 0, {"a"}, {"c"}}, {"g", "k", "key1", 0, {"a"}, {"c"}}});
  std::string error;
  auto m = bir::read_module(blob, error);
  REQUIRE(m);
  CHECK(m->info.name == "m");
  CHECK(m->info.nki_frontend == "beta3");
  REQUIRE(m->kernels.size() == 1);
  CHECK(m->kernels[0].first == "key1");
  CHECK(m->kernels[0].second == k1);
  REQUIRE(m->calls.size() == 2);
  CHECK(m->calls[1].func_name == "g");
  CHECK(m->calls[1].func_outs == std::vector<std::string>{"c"});
  CHECK_FALSE(bir::read_module(k1, error));
  CHECK(error == "not a BIR module: wrong file identifier 'NBIK' (this is a BIR kernel blob)");
  CHECK_FALSE(bir::read_kernel(blob, error));
  CHECK(error == "not a BIR kernel: wrong file identifier 'NBIR' (this is a BIR module blob)");
}

TEST_CASE("read_kernel: corrupt blobs are errors, never crashes", "[bir]") {
  SourceManager sm;
  FileId file = sm.add_buffer("k.py", "x\n");
  std::string blob = bir::write_kernel(grid_function(file), "trn2", sm, std::vector<std::int64_t>{2, 3});
  std::mt19937 rng(7);
  std::string error;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = blob;
    std::size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(rng());
    error.clear();
    auto k = bir::read_kernel(bad, error);
    CHECK((k.has_value() || !error.empty()));
  }
  CHECK_FALSE(bir::read_kernel(blob.substr(0, blob.size() - 8), error));
}

TEST_CASE("read_kernel, read_module: names that share one string stay bounded", "[bir]") {
  // 4,000 names pointing at one 64 KiB string: 256 MiB if each were copied, from an 80 KB blob.
  // The decoders count every copy against a budget proportional to the blob before making it.
  std::string error;
  auto finish = [](flatbuffers::FlatBufferBuilder &fbb, auto root, const char *identifier) {
    fbb.TrackMinAlign(8); // as nkicc's writer: the reader requires an 8-byte aligned size
    fbb.Finish(root, identifier);
    return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()), fbb.GetSize());
  };

  SECTION("a kernel's input names") {
    flatbuffers::FlatBufferBuilder fbb;
    auto name = fbb.CreateString(std::string(65536, 'x'));
    auto names = fbb.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::String>>(4000, name));
    std::string blob =
        finish(fbb, bir::CreateKernel(fbb, bir::kFormatVersion, fbb.CreateString("k"), fbb.CreateString("trn2"), names),
               bir::kKernelIdentifier);
    CHECK_FALSE(bir::read_kernel(blob, error));
    CHECK(error == "corrupt BIR kernel: its names would be far larger than the blob (shared data)");
    CHECK_FALSE(bir::kernel_to_text(blob, error));
    CHECK(error == "corrupt BIR kernel: its text would be far larger than the blob (shared data)");
  }

  SECTION("a module call's func_args") {
    SourceManager sm;
    std::string kernel = bir::write_kernel(Function{}, "trn2", sm);
    flatbuffers::FlatBufferBuilder fbb;
    auto bytes = fbb.CreateVector(reinterpret_cast<const std::uint8_t *>(kernel.data()), kernel.size());
    auto kernels = fbb.CreateVector(
        std::vector<flatbuffers::Offset<bir::KernelBlob>>{bir::CreateKernelBlob(fbb, fbb.CreateString("key"), bytes)});
    auto arg = fbb.CreateString(std::string(65536, 'a'));
    auto args = fbb.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::String>>(4000, arg));
    auto call = bir::CreateNKIKLIRKernel(fbb, fbb.CreateString("f"), fbb.CreateString("k"), fbb.CreateString("bir"),
                                         fbb.CreateString("key"), 0, 0, args);
    auto calls = fbb.CreateVector(std::vector<flatbuffers::Offset<bir::NKIKLIRKernel>>{call});
    std::string blob =
        finish(fbb, bir::CreateModule(fbb, bir::kFormatVersion, 0, 0, 0, 0, kernels, calls), bir::kModuleIdentifier);
    CHECK_FALSE(bir::read_module(blob, error));
    CHECK(error == "corrupt BIR module: its names would be far larger than the blob (shared data)");
    CHECK_FALSE(bir::module_to_text(blob, error));
    CHECK(error == "corrupt BIR module: its text would be far larger than the blob (shared data)");
  }
}

TEST_CASE("module_to_text: every proper prefix of a module is an error, the whole module reads", "[bir]") {
  // The in-process half of test/lit/bir/dis-truncations.test: every prefix, not a sample, and
  // decoded the way `nkicc dis` decodes (the module, then each kernel blob inside it).
  SourceManager sm;
  FileId file = sm.add_buffer("k.py", "x\n");
  std::string k1 = bir::write_kernel(grid_function(file), "trn2", sm, std::vector<std::int64_t>{2, 3});
  Function other = grid_function(file);
  std::string other_name = "k2";
  other.name.swap(other_name);
  std::string k2 = bir::write_kernel(other, "trn2", sm);
  std::string blob = bir::write_module({"m", "0.1.0", "trn2", "beta3"}, {{"key1", k1}, {"key2", k2}},
                                       {{"f", "k", "key1", 0, {"a"}, {"c"}}, {"g", "k2", "key2", 1, {"a"}, {"c"}}});
  std::string error;
  REQUIRE(bir::module_to_text(blob, error));
  std::size_t accepted = 0;
  for (std::size_t n = 0; n < blob.size(); ++n) {
    error.clear();
    if (bir::module_to_text(std::string_view(blob).substr(0, n), error)) {
      ++accepted;
      UNSCOPED_INFO("a prefix of " << n << " of " << blob.size() << " bytes decoded");
    } else if (error.empty()) {
      FAIL("a prefix of " << n << " bytes failed without an error message");
    }
  }
  CHECK(accepted == 0);
}

TEST_CASE("read_kernel: a constant tensor's data comes back; misplaced or misshapen data is corrupt", "[bir]") {
  SourceManager sm;
  Function fn;
  fn.tensors.push_back(tensor("c", TensorRole::Constant, Memory::SharedHbm, {2, 3}, DType::Int16));
  fn.constants.push_back({0, {1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}});
  std::string error;
  auto k = bir::read_kernel(bir::write_kernel(fn, "trn2", sm), error);
  REQUIRE(k);
  CHECK(k->tensors[0].role == TensorRole::Constant);
  CHECK(k->tensors[0].data == fn.constants[0].bytes);
  auto text = bir::kernel_to_text(bir::write_kernel(fn, "trn2", sm), error);
  REQUIRE(text);
  CHECK(text->find("%0 c constant shared_hbm int16[2, 3]" + constant_data_text(fn.constants[0].bytes)) !=
        std::string::npos);

  // A Tensor table written by hand: role, memory, shape and data as each case says.
  auto blob = [](bir::TensorRole role, bir::Memory memory, std::vector<std::int64_t> shape,
                 const std::vector<std::uint8_t> *data) {
    flatbuffers::FlatBufferBuilder fbb;
    auto shape_offset = fbb.CreateVector(shape);
    flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> data_offset;
    if (data)
      data_offset = fbb.CreateVector(*data);
    auto t = bir::CreateTensor(fbb, fbb.CreateString("c"), role, memory, shape_offset, bir::DType::Int16, 0, -1, 0, 0,
                               0, data_offset);
    auto tensors = fbb.CreateVector(std::vector<flatbuffers::Offset<bir::Tensor>>{t});
    auto kernel = bir::CreateKernel(fbb, bir::kFormatVersion, fbb.CreateString("k"), fbb.CreateString("trn2"), 0, 0, 0,
                                    false, tensors);
    fbb.TrackMinAlign(8);
    fbb.Finish(kernel, bir::kKernelIdentifier);
    return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()), fbb.GetSize());
  };
  std::vector<std::uint8_t> six(12, 0), five(10, 0);
  CHECK(bir::read_kernel(blob(bir::TensorRole::Constant, bir::Memory::SharedHbm, {2, 3}, &six), error));
  struct Case {
    bir::TensorRole role;
    bir::Memory memory;
    const std::vector<std::uint8_t> *data;
    const char *message;
  };
  for (const Case &c :
       {Case{bir::TensorRole::Internal, bir::Memory::SharedHbm, &six,
             "tensor %0 holds constant data but is not a constant"},
        Case{bir::TensorRole::Constant, bir::Memory::Sbuf, &six, "tensor %0 is a constant outside shared HBM"},
        Case{bir::TensorRole::Constant, bir::Memory::SharedHbm, nullptr, "tensor %0 is a constant without data"},
        Case{bir::TensorRole::Constant, bir::Memory::SharedHbm, &five,
             "tensor %0 is a constant whose data has 10 bytes, not the 6 elements of its shape"}}) {
    std::string b = blob(c.role, c.memory, {2, 3}, c.data);
    error.clear();
    CHECK_FALSE(bir::read_kernel(b, error));
    CHECK(error == std::string("corrupt BIR kernel: ") + c.message);
    error.clear();
    CHECK_FALSE(bir::kernel_to_text(b, error));
    CHECK(error.find(c.message) != std::string::npos);
  }
}

TEST_CASE("read_kernel: a view's base is an earlier tensor of the same bytes and memory", "[bir]") {
  std::string error;
  // Tensor 0 float32[128, 1] in SBUF; tensor 1 as the case says, viewing `view_of`.
  auto blob = [](bir::Memory memory, bir::DType dtype, std::vector<std::int64_t> shape, std::int64_t view_of,
                 std::int64_t base_view_of = -1) {
    flatbuffers::FlatBufferBuilder fbb;
    auto base_shape = fbb.CreateVector(std::vector<std::int64_t>{128, 1});
    auto base = bir::CreateTensor(fbb, fbb.CreateString("m"), bir::TensorRole::Internal, bir::Memory::Sbuf, base_shape,
                                  bir::DType::Float32, 0, 0, 4, 0, 0, 0, base_view_of);
    auto view_shape = fbb.CreateVector(shape);
    auto view = bir::CreateTensor(fbb, fbb.CreateString("m.1"), bir::TensorRole::Internal, memory, view_shape, dtype, 0,
                                  0, 4, 0, 0, 0, view_of);
    auto tensors = fbb.CreateVector(std::vector<flatbuffers::Offset<bir::Tensor>>{base, view});
    auto kernel = bir::CreateKernel(fbb, bir::kFormatVersion, fbb.CreateString("k"), fbb.CreateString("trn2"), 0, 0, 0,
                                    false, tensors);
    fbb.TrackMinAlign(8);
    fbb.Finish(kernel, bir::kKernelIdentifier);
    return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()), fbb.GetSize());
  };
  auto good = bir::read_kernel(blob(bir::Memory::Sbuf, bir::DType::UInt8, {128, 4}, 0), error);
  REQUIRE(good);
  CHECK(good->tensors[1].view_of == 0);
  CHECK(good->tensors[0].view_of == -1);
  auto text = bir::kernel_to_text(blob(bir::Memory::Sbuf, bir::DType::UInt8, {128, 4}, 0), error);
  REQUIRE(text);
  CHECK(text->find("%1 m.1 internal sbuf uint8[128, 4] partitions=[0, 128) bytes=[0, 4) view_of=%0") !=
        std::string::npos);
  struct Case {
    bir::Memory memory;
    bir::DType dtype;
    std::vector<std::int64_t> shape;
    std::int64_t view_of;
    const char *message;
  };
  for (const Case &c : {Case{bir::Memory::Sbuf,
                             bir::DType::UInt8,
                             {128, 4},
                             1,
                             "tensor %1 views tensor 1, which is not an earlier tensor"},
                        Case{bir::Memory::Sbuf,
                             bir::DType::UInt8,
                             {128, 4},
                             -2,
                             "tensor %1 views tensor -2, which is not an earlier tensor"},
                        Case{bir::Memory::Psum,
                             bir::DType::UInt8,
                             {128, 4},
                             0,
                             "tensor %1 views %0, which is a view, in another memory or of another size"},
                        Case{bir::Memory::Sbuf,
                             bir::DType::UInt8,
                             {128, 8},
                             0,
                             "tensor %1 views %0, which is a view, in another memory or of another size"}}) {
    error.clear();
    CHECK_FALSE(bir::read_kernel(blob(c.memory, c.dtype, c.shape, c.view_of), error));
    CHECK(error == std::string("corrupt BIR kernel: ") + c.message);
  }
  // A base that is itself a view (of a later tensor) is refused at the base already.
  error.clear();
  CHECK_FALSE(bir::read_kernel(blob(bir::Memory::Sbuf, bir::DType::UInt8, {128, 4}, 0, 1), error));
  CHECK(error == "corrupt BIR kernel: tensor %0 views tensor 1, which is not an earlier tensor");
}
