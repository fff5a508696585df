#include "nkicc/ir/kernel_ir.h"
#include "nkicc/cache/py_repr.h"

#include <catch2/catch.hpp>

#include <limits>
#include <map>
#include <random>
#include <string>
#include <cstring>
#include <thread>
#include <vector>

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
      {Opcode::TensorTensorScan, "tensor_tensor_scan"},
      {Opcode::PartitionReduce, "partition_reduce"},
      {Opcode::SelectReduce, "select_reduce"},
      {Opcode::ScalarTensorTensor, "scalar_tensor_tensor"},
      {Opcode::Max8, "max8"},
      {Opcode::FindIndex8, "find_index8"},
      {Opcode::MatchReplace8, "match_replace8"},
      {Opcode::StreamShuffle, "stream_shuffle"},
      {Opcode::Rand, "rand"},
      {Opcode::RandomSeed, "random_seed"},
      {Opcode::Dropout, "dropout"},
      {Opcode::SequenceBounds, "sequence_bounds"},
      {Opcode::RangeSelect, "range_select"},
      {Opcode::LocalGather, "local_gather"},
      {Opcode::DevicePrint, "device_print"},
      {Opcode::GatherFlattened, "gather_flattened"},
      {Opcode::MatMulMx, "matmul_mx"},
      {Opcode::QuantizeMx, "quantize_mx"},
  };
  for (const auto &[op, name] : opcodes)
    CHECK(opcode_name(op) == name);
  CHECK(opcodes.size() == static_cast<std::size_t>(Opcode::QuantizeMx) + 1);
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

namespace {

/// The definition of number_tensor_names(): every name taken so far in a set, each name with
/// its own counter.
std::vector<std::string> reference_numbering(const std::vector<std::string> &names) {
  std::map<std::string, int> seen;
  std::vector<std::string> out;
  for (const std::string &name : names) {
    auto [it, fresh] = seen.emplace(name, 0);
    if (fresh) {
      out.push_back(name);
      continue;
    }
    std::string candidate;
    do {
      candidate = name + "." + std::to_string(++it->second);
    } while (seen.count(candidate));
    seen.emplace(candidate, 0);
    out.push_back(candidate);
  }
  return out;
}

std::vector<std::string> numbered(const std::vector<std::string> &names) {
  Function fn;
  for (const std::string &name : names) {
    Tensor t;
    t.name = name;
    fn.tensors.push_back(t);
  }
  number_tensor_names(fn);
  std::vector<std::string> out;
  for (const Tensor &t : fn.tensors)
    out.push_back(t.name);
  return out;
}

} // namespace

TEST_CASE("number_tensor_names: the first keeps its name, later ones are numbered", "[ir]") {
  CHECK(numbered({"load", "load", "add", "load"}) == std::vector<std::string>{"load", "load.1", "add", "load.2"});
  // A name the kernel chose that a number would give is skipped, and a numbered name chosen
  // again is numbered in turn.
  CHECK(numbered({"t", "t.1", "t", "t.2", "t.2"}) == std::vector<std::string>{"t", "t.1", "t.2", "t.2.1", "t.2.2"});
  CHECK(numbered({"t", "t", "t.1", "t.01", "t.0", "t."}) ==
        std::vector<std::string>{"t", "t.1", "t.1.1", "t.01", "t.0", "t."});
}

TEST_CASE("number_tensor_names: agrees with the set-of-all-names definition", "[ir]") {
  const std::vector<std::string> alphabet = {"a",   "a.1", "a.2",   "a.1.1", "a.01", "a.0", "a.",
                                             "a.3", "b",   "b.a.1", "a.1.2", ".1",   "",    "a.99999999999999999999"};
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> names(1 + rng() % 24);
    for (std::string &name : names)
      name = alphabet[rng() % alphabet.size()];
    INFO("round " << round);
    CHECK(numbered(names) == reference_numbering(names));
  }
}

TEST_CASE("attribute lists are interned by Python value, not by numeric equality", "[ir]") {
  // 0.0 and -0.0, 1 and True and 1.0, a tuple and a list are different attributes, even when
  // the same list was set just before.
  Function fn;
  const std::vector<AttrList> lists = {
      {{"scale", PyConstant::floating(0.0)}},
      {{"scale", PyConstant::floating(-0.0)}},
      {{"scale", PyConstant::floating(0.0)}},
      {{"scale", PyConstant::integer(1)}},
      {{"scale", PyConstant::boolean(true)}},
      {{"scale", PyConstant::floating(1.0)}},
      {{"scale", PyConstant::tuple({PyConstant::integer(1)})}},
      {{"scale", PyConstant::list({PyConstant::integer(1)})}},
      {{"scale", PyConstant::integer(1)}},
  };
  for (const AttrList &attrs : lists) {
    Instruction header;
    fn.append(header, {}, {}, attrs);
  }
  REQUIRE(fn.instructions.size() == lists.size());
  for (std::size_t i = 0; i < lists.size(); ++i) {
    INFO("instruction " << i);
    const AttrList &stored = fn.attrs(fn.instructions[i]);
    REQUIRE(stored.size() == 1);
    CHECK(py_repr(stored[0].second) == py_repr(lists[i][0].second));
  }
  CHECK(fn.instructions[0].attrs == fn.instructions[2].attrs);
  CHECK(fn.instructions[3].attrs == fn.instructions[8].attrs);
  CHECK(fn.instructions[0].attrs != fn.instructions[1].attrs);
  CHECK(fn.instructions[3].attrs != fn.instructions[4].attrs);
  CHECK(fn.instructions[4].attrs != fn.instructions[5].attrs);
  CHECK(fn.instructions[6].attrs != fn.instructions[7].attrs);
  CHECK(fn.distinct_attr_lists() == 8); // the empty list and 7 distinct ones
}

TEST_CASE("an operand's view interns its pattern and grid terms together", "[ir]") {
  // Operands alternate patterns and grid terms, and repeat them, so that the shortcut for a
  // view equal to the previous one is taken and left in every order.
  auto view = [](std::int64_t rows, std::int64_t pid_term, std::int64_t offset) {
    AccessPattern ap;
    ap.tensor = 3;
    ap.pattern = PatternPairs{{512, rows}, {1, 512}};
    ap.offset = offset;
    ap.program_offset[1] = pid_term;
    return ap;
  };
  const std::vector<AccessPattern> views = {view(128, 0, 0), view(128, 0, 7),  view(128, 64, 0), view(64, 64, 5),
                                            view(64, 0, 0),  view(128, 64, 9), view(128, 0, 0)};
  Function fn;
  for (const AccessPattern &ap : views)
    fn.append(Instruction{}, std::span<const AccessPattern>(&ap, 1), {});
  REQUIRE(fn.instructions.size() == views.size());
  std::vector<Operand> ops;
  for (std::size_t i = 0; i < views.size(); ++i) {
    INFO("instruction " << i);
    const Operand &op = fn.dst(fn.instructions[i])[0];
    ops.push_back(op);
    AccessPattern back = fn.access_pattern(op);
    CHECK(back.tensor == 3);
    CHECK(back.offset == views[i].offset);
    CHECK(std::vector<std::pair<std::int64_t, std::int64_t>>(back.pattern.begin(), back.pattern.end()) ==
          std::vector<std::pair<std::int64_t, std::int64_t>>(views[i].pattern.begin(), views[i].pattern.end()));
    CHECK(back.program_offset == views[i].program_offset);
  }
  // Equal pattern and grid terms: one view, whatever the offset; the ids of the parts follow.
  CHECK(ops[0].view == ops[1].view);
  CHECK(ops[0].view == ops[6].view);
  CHECK(ops[2].view == ops[5].view);
  CHECK(ops[0].view != ops[2].view);
  CHECK(ops[3].view != ops[4].view);
  CHECK(fn.pattern_id(ops[0]) == fn.pattern_id(ops[2]));
  CHECK(fn.pattern_id(ops[3]) == fn.pattern_id(ops[4]));
  CHECK(fn.pattern_id(ops[0]) != fn.pattern_id(ops[3]));
  CHECK(fn.program_id(ops[0]) == 0);
  CHECK(fn.program_id(ops[4]) == 0);
  CHECK(fn.program_id(ops[2]) == fn.program_id(ops[3]));
  CHECK(fn.program_id(ops[2]) != 0);
}

TEST_CASE("a tensor name is its stem and number, equal to the same text however it was made", "[ir]") {
  using nkicc::ir::TensorName;
  TensorName plain("acc");
  TensorName numbered_name("acc", 17);
  CHECK(plain.str() == "acc");
  CHECK(plain.number() == 0);
  CHECK(numbered_name.str() == "acc.17");
  CHECK(numbered_name.stem() == "acc");
  CHECK(numbered_name.number() == 17);
  CHECK(fmt::format("[{}] [{:>8}]", numbered_name, plain) == "[acc.17] [     acc]");
  // The same text from a whole name and from a stem and number is the same name.
  CHECK(TensorName("acc.17") == numbered_name);
  CHECK(numbered_name == std::string_view("acc.17"));
  CHECK(numbered_name == std::string("acc.17"));
  CHECK_FALSE(numbered_name == plain);
  CHECK_FALSE(plain == "acc.17");
  CHECK(TensorName().empty());
  CHECK(TensorName("").str().empty());
  CHECK_FALSE(plain.empty());
  // More stems than the lookup's recent ones, in turn and again, each keep their own text; one
  // interned on another thread reads the same here.
  std::vector<TensorName> names;
  for (int round = 0; round < 2; ++round)
    for (int k = 0; k < 40; ++k)
      names.emplace_back("stem" + std::to_string(k), static_cast<std::uint32_t>(round));
  for (int k = 0; k < 40; ++k) {
    CHECK(names[static_cast<std::size_t>(k)].str() == "stem" + std::to_string(k));
    CHECK(names[static_cast<std::size_t>(40 + k)].str() == "stem" + std::to_string(k) + ".1");
  }
  TensorName from_thread;
  std::thread([&] { from_thread = TensorName("made elsewhere", 3); }).join();
  CHECK(from_thread.str() == "made elsewhere.3");
  CHECK(from_thread == TensorName("made elsewhere", 3));
  // A trace holds one Tensor per tile: the name takes 8 bytes of its 40.
  CHECK(sizeof(TensorName) == 8);
  CHECK(sizeof(Tensor) == 40);
}

TEST_CASE("a tensor shape is the one kept copy of its dimensions", "[ir]") {
  using nkicc::ir::Shape;
  using nkicc::ir::TensorShape;
  TensorShape scalar;
  CHECK(scalar.empty());
  CHECK(scalar == Shape{});
  CHECK(scalar == TensorShape(Shape{}));
  TensorShape tile{128, 512};
  CHECK(tile.size() == 2);
  CHECK(tile[0] == 128);
  CHECK(tile.front() == 128);
  CHECK(tile.back() == 512);
  CHECK(tile.to_vector() == std::vector<std::int64_t>{128, 512});
  CHECK(std::vector<std::int64_t>(tile.begin(), tile.end()) == std::vector<std::int64_t>{128, 512});
  // The same dimensions however they are given are the same kept shape; others are not.
  CHECK(tile == TensorShape(Shape{128, 512}));
  CHECK(tile == TensorShape(std::vector<std::int64_t>{128, 512}));
  CHECK(&tile.get() == &TensorShape(Shape{128, 512}).get());
  CHECK_FALSE(tile == TensorShape{512, 128});
  CHECK_FALSE(tile == TensorShape{128, 512, 1});
  CHECK(tile == Shape{128, 512});
  // More shapes than the lookup's recent ones, in turn and again, each keep their dimensions,
  // past the three a Shape keeps inline too; one made on another thread is the same here.
  std::vector<TensorShape> shapes;
  for (int round = 0; round < 2; ++round)
    for (std::int64_t k = 0; k < 40; ++k)
      shapes.emplace_back(Shape{k, 2, 3, 4, k});
  for (std::size_t k = 0; k < 40; ++k) {
    auto d = static_cast<std::int64_t>(k);
    CHECK(shapes[k] == Shape{d, 2, 3, 4, d});
    CHECK(&shapes[k].get() == &shapes[40 + k].get());
  }
  TensorShape from_thread;
  std::thread([&] { from_thread = TensorShape{7, 9}; }).join();
  CHECK(from_thread == TensorShape{7, 9});
  CHECK(sizeof(TensorShape) == 8);
}

TEST_CASE("an operand offset is held in 4 bytes whatever its value", "[ir]") {
  using nkicc::ir::OperandOffset;
  CHECK(sizeof(OperandOffset) == 4);
  CHECK(sizeof(nkicc::ir::Operand) == 12);
  // Inline from -2^30 to 2^31 - 1, kept in the process's table beyond; the same value is the
  // same whichever way it is held, and a kept one is kept once.
  for (std::int64_t v :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1}, -(std::int64_t{1} << 30), -(std::int64_t{1} << 30) - 1,
        std::int64_t{INT32_MAX}, std::int64_t{INT32_MAX} + 1, std::int64_t{INT32_MIN}, std::int64_t{1} << 40,
        std::int64_t{INT64_MAX}, std::int64_t{INT64_MIN}})
    CHECK(static_cast<std::int64_t>(OperandOffset(v)) == v);
  OperandOffset a(std::int64_t{5} << 32), b(std::int64_t{5} << 32);
  CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  std::int64_t from_thread = 0;
  std::thread([&] { from_thread = OperandOffset((std::int64_t{7} << 33) + 3); }).join();
  CHECK(from_thread == (std::int64_t{7} << 33) + 3);
  // Through a Function: the operand gives back the access pattern's offset.
  Function fn;
  Tensor big;
  big.name = "big";
  big.role = TensorRole::Input;
  big.memory = Memory::SharedHbm;
  big.shape = {1 << 20, 1 << 14};
  fn.tensors.push_back(big);
  AccessPattern ap;
  ap.tensor = 0;
  ap.pattern = {{1 << 14, 128}, {1, 512}};
  ap.offset = (std::int64_t{1} << 34) - 128 * (1 << 14);
  fn.append(Instruction{}, std::span<const AccessPattern>(&ap, 1), {});
  CHECK(fn.access_pattern(fn.operands(fn.instructions[0])[0]).offset == ap.offset);
}
