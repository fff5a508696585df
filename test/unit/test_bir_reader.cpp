#include "ir_fixture.h"
#include "nkicc/bir/bir.h"

#include "bir/schema.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

using namespace nkicc;
using namespace nkicc::ir;
using namespace nkicc::ir::testing;

namespace {

/// A small but complete module: two kernels (attributes of every kind, grid terms, locations)
/// and three calls.
std::string sample_module() {
  SourceManager sm;
  FileId file = sm.add_buffer("k.py", "def k(a, b):\n    c = nl.load(a)\n");
  Function fn;
  fn.name = "k";
  fn.input_names = {"a", "b"};
  fn.output_names = {"c"};
  fn.matmul_mac_count = 4096;
  Tensor a;
  a.name = "a";
  a.role = TensorRole::Input;
  a.memory = Memory::SharedHbm;
  a.shape = {128, 64};
  Tensor c = a;
  c.name = "c";
  c.role = TensorRole::Output;
  Tensor tile = a;
  tile.name = "tile";
  tile.role = TensorRole::Internal;
  tile.memory = Memory::Sbuf;
  tile.byte_offset = 256;
  tile.loc = {file, 17};
  fn.tensors = {a, c, tile};
  InstructionSpec load;
  load.opcode = Opcode::Load;
  load.engine = Engine::Sync;
  load.loop_kind = LoopKind::Affine;
  load.dst.push_back({2, {{64, 128}, {1, 64}}, 0, {}});
  load.src.push_back({0, {{64, 128}, {1, 64}}, 8, {8192, 0, -1}});
  load.attrs = {
      {"mask", PyConstant::tuple({PyConstant::integer(0), PyConstant::str("x")})},
      {"opts", PyConstant::make_dict({{"f", PyConstant::floating(-0.0)},
                                      {"l", PyConstant::list({PyConstant::none(), PyConstant::boolean(true)})}})}};
  load.loc = {file, 21};
  add_instruction(fn, load);
  add_instruction(fn, load);
  std::string k1 = bir::write_kernel(fn, "trn2", sm);
  fn.name = "k2";
  fn.has_collectives = true;
  std::string k2 = bir::write_kernel(fn, "trn2", sm);
  return bir::write_module({"m", "0.1.0", "trn2", "beta3"}, {{"key1", k1}, {"key2", k2}},
                           {{"f", "k", "key1", 0, {"a", "b"}, {"c"}},
                            {"g", "k2", "key2", 1, {"a", "b"}, {"c"}},
                            {"f", "k", "key1", 0, {"a", "b"}, {"c"}}});
}

std::optional<std::string> to_text(std::string_view blob, std::string &error) {
  error.clear();
  auto text = bir::module_to_text(blob, error);
  // Exactly one of the two: text, or a one-line lowercase message.
  if (text) {
    CHECK(error.empty());
  } else {
    CHECK(!error.empty());
    CHECK(error.find('\n') == std::string::npos);
    CHECK(!(error[0] >= 'A' && error[0] <= 'Z'));
  }
  return text;
}

void write_le32(std::string &blob, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i)
    blob[at + static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
}

} // namespace

TEST_CASE("module_to_text: foreign, empty and short buffers get a clear message", "[bir]") {
  std::string error;
  CHECK_FALSE(bir::module_to_text("", error));
  CHECK(error == "not a BIR module: empty buffer");
  CHECK_FALSE(bir::module_to_text("NBIR", error));
  CHECK(error == "not a BIR module: too short (4 bytes)");
  CHECK_FALSE(bir::module_to_text(std::string_view("\x7f"
                                                   "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0",
                                                   16),
                                  error));
  CHECK(error == "not a BIR module: wrong file identifier '\\x02\\x01\\x01\\x00'");
  CHECK_FALSE(bir::module_to_text("{\"nkicc\": 1, \"name\": \"x\"}", error));
  CHECK(error == "not a BIR module: wrong file identifier 'icc\"'");

  SourceManager sm;
  std::string kernel = bir::write_kernel(Function{}, "trn2", sm);
  CHECK_FALSE(bir::module_to_text(kernel, error));
  CHECK(error == "not a BIR module: wrong file identifier 'NBIK' (this is a BIR kernel blob)");
  std::string module = sample_module();
  CHECK_FALSE(bir::kernel_to_text(module, error));
  CHECK(error == "not a BIR kernel: wrong file identifier 'NBIR' (this is a BIR module blob)");
  CHECK_FALSE(bir::kernel_to_text("", error));
  CHECK(error == "not a BIR kernel: empty buffer");
}

TEST_CASE("module_to_text: a corrupt buffer fails verification", "[bir]") {
  std::string blob = sample_module();
  std::string error;
  // The root offset pointing past the end.
  std::string bad = blob;
  write_le32(bad, 0, static_cast<std::uint32_t>(blob.size() + 100));
  CHECK_FALSE(bir::module_to_text(bad, error));
  CHECK(error == "corrupt BIR module: verification failed");
  // Cut off: the identifier survives, the tables do not.
  CHECK_FALSE(bir::module_to_text(std::string_view(blob).substr(0, blob.size() / 2), error));
  CHECK(error == "corrupt BIR module: verification failed");
}

TEST_CASE("module_to_text: another format version is refused", "[bir]") {
  std::string blob = sample_module();
  std::string error;
  REQUIRE(bir::module_to_text(blob, error));
  // format_version is the module's first field; find its stored 1 through the vtable.
  auto le32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
      v = (v << 8) | static_cast<unsigned char>(blob[at + static_cast<std::size_t>(i)]);
    return v;
  };
  std::size_t table = le32(0);
  std::size_t vtable = table - static_cast<std::int32_t>(le32(table));
  std::size_t field =
      static_cast<unsigned char>(blob[vtable + 4]) | (static_cast<unsigned char>(blob[vtable + 5]) << 8);
  REQUIRE(field != 0);
  REQUIRE(le32(table + field) == 1);
  write_le32(blob, table + field, 7);
  CHECK_FALSE(bir::module_to_text(blob, error));
  CHECK(error == "unsupported BIR format version 7; this nkicc reads version 1");
}

TEST_CASE("module_to_text: indices out of range are corrupt", "[bir]") {
  SourceManager sm;
  Function fn;
  fn.tensors.resize(1);
  InstructionSpec copy;
  copy.dst.push_back({1, {{1, 1}}, 0, {}}); // tensor %1 of 1
  add_instruction(fn, copy);
  std::string error;
  CHECK_FALSE(bir::kernel_to_text(bir::write_kernel(fn, "trn2", sm), error));
  CHECK(error == "corrupt BIR kernel: instruction 0 refers to tensor %1 of 1");

  fn.operands(fn.instructions[0])[0].tensor = 0;
  std::string kernel = bir::write_kernel(fn, "trn2", sm);
  REQUIRE(bir::kernel_to_text(kernel, error));
  std::string module =
      bir::write_module({"m", "0.1.0", "trn2", "beta3"}, {{"key", kernel}}, {{"f", "k", "key", 1, {}, {}}});
  CHECK_FALSE(bir::module_to_text(module, error));
  CHECK(error == "corrupt BIR module: instruction 0 uses kernel #1 of 1");

  // A kernel entry whose bytes are not a kernel.
  module = bir::write_module({"m", "0.1.0", "trn2", "beta3"}, {{"key", "not a kernel at all"}}, {});
  CHECK_FALSE(bir::module_to_text(module, error));
  CHECK(error == "corrupt BIR module: kernel #0: not a BIR kernel: wrong file identifier 'a ke'");

  // An allocation whose end does not fit 64 bits.
  Function big;
  big.tensors.resize(1);
  big.tensors[0].shape = {1};
  big.tensors[0].byte_offset = INT64_MAX;
  CHECK_FALSE(bir::kernel_to_text(bir::write_kernel(big, "trn2", sm), error));
  CHECK(error == "corrupt BIR kernel: tensor %0 has an allocation past the 64-bit range");
}

TEST_CASE("module_to_text: a blob at any address reads the same", "[bir]") {
  // FlatBuffers reads 8-byte fields in place; the reader must not depend on the caller's
  // alignment.
  std::string blob = sample_module();
  std::string error;
  auto expected = bir::module_to_text(blob, error);
  REQUIRE(expected);
  for (std::size_t shift = 1; shift < 8; ++shift) {
    std::string shifted = std::string(shift, '\0') + blob;
    auto text = bir::module_to_text(std::string_view(shifted).substr(shift), error);
    REQUIRE(text);
    CHECK(*text == *expected);
  }
}

TEST_CASE("module_to_text: every truncation of a valid blob is an error, not a crash", "[bir]") {
  std::string blob = sample_module();
  std::string error;
  auto full = to_text(blob, error);
  REQUIRE(full);
  std::size_t accepted = 0;
  for (std::size_t n = 0; n < blob.size(); ++n) {
    // A FlatBuffer stores no total length: a prefix that only drops trailing alignment padding
    // still verifies, and then it must read exactly as the whole blob.
    auto text = to_text(std::string_view(blob).substr(0, n), error);
    if (text) {
      ++accepted;
      CHECK(*text == *full);
    }
  }
  CHECK(accepted < 8);
}

TEST_CASE("module_to_text: 20,000 byte-flip mutations and 2,000 random buffers never crash", "[bir]") {
  std::string blob = sample_module();
  std::mt19937_64 rng(20240601);
  std::string error;
  std::size_t accepted = 0;
  // 20,000 rather than 2,000: the run takes about a second under the sanitizers, and fewer
  // rounds missed a misaligned-vector case that a longer fuzz run found.
  for (int round = 0; round < 20000; ++round) {
    std::string mutated = blob;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      std::size_t at = rng() % mutated.size();
      switch (rng() % 3) {
      case 0:
        mutated[at] = static_cast<char>(mutated[at] ^ (1u << (rng() % 8)));
        break;
      case 1:
        mutated[at] = static_cast<char>(rng());
        break;
      default: // offsets and lengths are the dangerous fields: make one huge or negative
        if (at + 4 <= mutated.size())
          write_le32(mutated, at, static_cast<std::uint32_t>(rng() % 3 == 0 ? 0xfffffff0u : rng()));
        break;
      }
    }
    if (to_text(mutated, error))
      ++accepted;
  }
  // Most flips land in data (names, numbers) and still give a valid module.
  CHECK(accepted > 0);
  for (int round = 0; round < 2000; ++round) {
    std::string random(rng() % 512, '\0');
    for (char &ch : random)
      ch = static_cast<char>(rng());
    // Some with the right identifier, so that the verifier (not the identifier check) rejects them.
    if (round % 2 == 0 && random.size() >= 8)
      random.replace(4, 4, "NBIR");
    to_text(random, error);
  }
}

TEST_CASE("module_to_text: crafted blobs that share data stay bounded", "[bir]") {
  // nkicc's writer never shares a table, string or kernel; a crafted blob can, and naive
  // reading would then take time or memory exponential in its size.
  auto kernel_with_value = [](flatbuffers::FlatBufferBuilder &fbb, flatbuffers::Offset<bir::PyValue> value) {
    auto attr = bir::CreateAttr(fbb, fbb.CreateString("a"), value);
    auto attrs = fbb.CreateVector(std::vector<flatbuffers::Offset<bir::Attr>>{attr});
    auto instruction =
        bir::CreateInstruction(fbb, bir::Opcode::Memset, bir::Engine::GpSimd, bir::LoopKind::None, 0, 0, attrs);
    auto instructions = fbb.CreateVector(std::vector<flatbuffers::Offset<bir::Instruction>>{instruction});
    fbb.TrackMinAlign(8); // as nkicc's writer: the reader requires an 8-byte aligned size
    fbb.Finish(bir::CreateKernel(fbb, bir::kFormatVersion, fbb.CreateString("k"), fbb.CreateString("trn2"), 0, 0, 0,
                                 false, 0, instructions),
               bir::kKernelIdentifier);
    return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()), fbb.GetSize());
  };
  std::string error;

  SECTION("a list holding the same list twice, 60 levels deep: 2^60 nodes") {
    flatbuffers::FlatBufferBuilder fbb;
    auto value = bir::CreatePyValue(fbb, bir::PyKind::Int, false, 1);
    for (int level = 0; level < 58; ++level) {
      auto items = fbb.CreateVector(std::vector<flatbuffers::Offset<bir::PyValue>>{value, value});
      value = bir::CreatePyValue(fbb, bir::PyKind::List, false, 0, 0.0, 0, items);
    }
    std::string blob = kernel_with_value(fbb, value);
    CHECK_FALSE(bir::kernel_to_text(blob, error));
    CHECK(error == "corrupt BIR kernel: verification failed");
  }

  SECTION("one 64 KiB string shared by 4,000 list items") {
    flatbuffers::FlatBufferBuilder fbb;
    auto leaf = bir::CreatePyValue(fbb, bir::PyKind::Str, false, 0, 0.0, fbb.CreateString(std::string(65536, 'x')));
    auto items = fbb.CreateVector(std::vector<flatbuffers::Offset<bir::PyValue>>(4000, leaf));
    std::string blob = kernel_with_value(fbb, bir::CreatePyValue(fbb, bir::PyKind::List, false, 0, 0.0, 0, items));
    CHECK_FALSE(bir::kernel_to_text(blob, error));
    CHECK(error == "corrupt BIR kernel: its text would be far larger than the blob (shared data)");
  }

  SECTION("one kernel's bytes listed 10,000 times in a module") {
    SourceManager sm;
    std::string kernel = bir::write_kernel(Function{}, "trn2", sm);
    flatbuffers::FlatBufferBuilder fbb;
    auto bytes = fbb.CreateVector(reinterpret_cast<const std::uint8_t *>(kernel.data()), kernel.size());
    auto entry = bir::CreateKernelBlob(fbb, fbb.CreateString("key"), bytes);
    auto kernels = fbb.CreateVector(std::vector<flatbuffers::Offset<bir::KernelBlob>>(10000, entry));
    fbb.TrackMinAlign(8);
    fbb.Finish(bir::CreateModule(fbb, bir::kFormatVersion, 0, 0, 0, 0, kernels), bir::kModuleIdentifier);
    std::string blob(reinterpret_cast<const char *>(fbb.GetBufferPointer()), fbb.GetSize());
    CHECK_FALSE(bir::module_to_text(blob, error));
    CHECK(error == "corrupt BIR module: kernel blobs overlap");
  }

  SECTION("an enum value the schema does not name") {
    flatbuffers::FlatBufferBuilder fbb;
    std::string blob = kernel_with_value(fbb, bir::CreatePyValue(fbb, static_cast<bir::PyKind>(200)));
    CHECK_FALSE(bir::kernel_to_text(blob, error));
    CHECK(error == "corrupt BIR kernel: attribute value kind 200 out of range");
  }
}

TEST_CASE("flatc --json decodes a module with the installed schema", "[bir]") {
  if (std::system("flatc --version >/dev/null 2>&1") != 0) {
    WARN("flatc is not installed: skipping the flatc --json decode test");
    return;
  }
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("nkicc-bir-flatc-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "out.bir", std::ios::binary);
    std::string blob = sample_module();
    out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
  }
  std::string schema = std::string(NKICC_SOURCE_DIR) + "/share/nkicc/bir.fbs";
  std::string command =
      "cd '" + dir.string() + "' && flatc --json --strict-json '" + schema + "' -- out.bir >flatc.log 2>&1";
  int status = std::system(command.c_str());
  std::string json;
  if (std::ifstream in(dir / "out.json"); in)
    json.assign(std::istreambuf_iterator<char>(in), {});
  std::string log;
  if (std::ifstream in(dir / "flatc.log"); in)
    log.assign(std::istreambuf_iterator<char>(in), {});
  fs::remove_all(dir);
  INFO(log);
  REQUIRE(status == 0);
  CHECK(json.find("\"format_version\": 1") != std::string::npos);
  CHECK(json.find("\"nki_frontend\": \"beta3\"") != std::string::npos);
  CHECK(json.find("\"nki_binary_version_identifier\": \"nkicc-bir-1\"") != std::string::npos);
  CHECK(json.find("\"kernel_format\": \"bir\"") != std::string::npos);
  CHECK(json.find("\"cache_key\": \"key2\"") != std::string::npos);
  // The kernels are nested flatbuffers: flatc decodes them in place, not as byte arrays.
  CHECK(json.find("\"name\": \"k2\"") != std::string::npos);
  CHECK(json.find("\"opcode\": \"Load\"") != std::string::npos);
}
