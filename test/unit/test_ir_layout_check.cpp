// The layout consistency check: access patterns inside their tensors (on chip, partition steps
// of whole partitions and free dimensions inside one partition), tiles inside their memory, and
// no two live tiles on the same bytes. Each case is a layout a tracer bug could produce.
#include "ir_fixture.h"
#include "nkicc/ir/kernel_ir.h"

#include <catch2/catch.hpp>

using namespace nkicc;
using namespace nkicc::ir;
using namespace nkicc::ir::testing;

namespace {

constexpr std::int64_t kSbuf = 212984, kPsum = 16384;

TensorId add(Function &fn, std::string name, Memory memory, std::vector<std::int64_t> shape,
             std::int64_t byte_offset = 0) {
  Tensor t = tensor(std::move(name), TensorRole::Internal, memory, std::move(shape), DType::Float32);
  if (is_on_chip(memory)) {
    t.byte_offset = byte_offset;
  }
  fn.tensors.push_back(std::move(t));
  return static_cast<TensorId>(fn.tensors.size() - 1);
}

void copy(Function &fn, AccessPattern dst, AccessPattern src, AttrList attrs = {}) {
  add_instruction(fn, {Opcode::TensorCopy, Engine::Vector, LoopKind::None, {dst}, {src}, std::move(attrs), {}});
}

std::string check(const Function &fn, std::vector<std::int64_t> grid = {}) {
  auto v = check_layout(fn, grid, kSbuf, kPsum);
  if (!v)
    return "ok";
  return (v->instruction == kNoInstruction ? std::string("alloc") : std::to_string(v->instruction)) + ": " + v->message;
}

} // namespace

TEST_CASE("a tile's own views pass") {
  Function fn;
  TensorId x = add(fn, "x", Memory::SharedHbm, {4, 128, 64});
  TensorId t = add(fn, "t", Memory::Sbuf, {128, 64});
  copy(fn, ap(t, {{64, 128}, {1, 64}}), ap(x, {{64, 128}, {1, 64}}, 3 * 128 * 64));
  // A partition broadcast (step 0) and a column view.
  copy(fn, ap(t, {{64, 128}, {1, 1}}, 63), ap(t, {{0, 128}, {1, 64}}));
  CHECK(check(fn) == "ok");
}

TEST_CASE("a block tensor traced as one tile on too few partitions is caught") {
  // (2, par_dim(128), 128) taken as a [2, 128, 128] tile: a[1] steps 128 over 128 "partitions"
  // inside partition 1's 16384 elements.
  Function fn;
  TensorId x = add(fn, "x", Memory::SharedHbm, {128, 128});
  TensorId t = add(fn, "a", Memory::Sbuf, {2, 128, 128});
  copy(fn, ap(t, {{128, 128}, {1, 128}}, 16384), ap(x, {{128, 128}, {1, 128}}));
  CHECK(check(fn) == "0: %1[[128, 128], [1, 128]]+16384: its first (partition) step 128 is not a whole partition of "
                     "16384 elements of 'a'");
}

TEST_CASE("views past their tensor are caught, unless a mask covers an HBM tensor") {
  Function fn;
  TensorId x = add(fn, "x", Memory::SharedHbm, {300, 64});
  TensorId t = add(fn, "t", Memory::Sbuf, {128, 64});
  copy(fn, ap(t, {{64, 128}, {1, 64}}), ap(x, {{64, 128}, {1, 64}}, 256 * 64));
  CHECK(check(fn) == "0: %0[[64, 128], [1, 64]]+16384 reaches elements [16384, 24575] of shared_hbm 'x' float32, "
                     "which has 19200");
  Function masked;
  x = add(masked, "x", Memory::SharedHbm, {300, 64});
  t = add(masked, "t", Memory::Sbuf, {128, 64});
  copy(masked, ap(t, {{64, 128}, {1, 64}}), ap(x, {{64, 128}, {1, 64}}, 256 * 64),
       {{"mask", PyConstant::str("i0 + 256 < 300")}});
  CHECK(check(masked) == "ok");
}

TEST_CASE("program-id terms are bounded by the grid") {
  Function fn;
  TensorId x = add(fn, "x", Memory::SharedHbm, {256, 64});
  TensorId t = add(fn, "t", Memory::Sbuf, {128, 64});
  copy(fn, ap(t, {{64, 128}, {1, 64}}), ap(x, {{64, 128}, {1, 64}}, 0, {8192, 0, 0}));
  CHECK(check(fn, {2}) == "ok");
  CHECK(check(fn, {3}) == "0: %0[[64, 128], [1, 64]] reaches elements [0, 24575] of shared_hbm 'x' float32, which "
                          "has 16384");
}

TEST_CASE("free dimensions stay inside a partition") {
  Function fn;
  TensorId t = add(fn, "t", Memory::Sbuf, {128, 64});
  TensorId u = add(fn, "u", Memory::Sbuf, {64, 128}, 256);
  copy(fn, ap(u, {{128, 64}, {1, 128}}), ap(t, {{128, 64}, {1, 128}}));
  CHECK(check(fn) == "0: %0[[128, 64], [1, 128]]: its free dimensions reach elements [0, 127] of a partition of 't', "
                     "which holds 64");
  Function fn2;
  t = add(fn2, "t", Memory::Sbuf, {128, 64});
  u = add(fn2, "u", Memory::Sbuf, {128, 64}, 256);
  copy(fn2, ap(u, {{64, 128}, {1, 64}}), ap(t, {{64, 128}, {1, 64}}, 8));
  CHECK(check(fn2) == "0: %0[[64, 128], [1, 64]]+8 reaches elements [8, 8199] of sbuf 't' float32, which has 8192");
  Function fn3;
  t = add(fn3, "t", Memory::Sbuf, {128, 64});
  u = add(fn3, "u", Memory::Sbuf, {64, 64}, 256);
  copy(fn3, ap(u, {{64, 64}, {1, 64}}), ap(t, {{128, 64}, {1, 64}}, 8));
  CHECK(check(fn3) == "0: %0[[128, 64], [1, 64]]+8: its free dimensions reach elements [8, 71] of a partition of "
                      "'t', which holds 64");
}

TEST_CASE("allocations stay inside their memory and banks") {
  Function fn;
  add(fn, "big", Memory::Sbuf, {128, 64}, kSbuf - 128);
  CHECK(check(fn) == "alloc: tile 'big' is placed at bytes [212856, 213112) of 212984");
  Function psum;
  add(psum, "acc", Memory::Psum, {128, 256}, 1024);
  CHECK(check(psum) == "ok");
  Function straddle;
  add(straddle, "acc", Memory::Psum, {128, 256}, 1536);
  CHECK(check(straddle) == "alloc: PSUM tile 'acc' of 1024 bytes straddles a bank boundary at bytes [1536, 2560)");
}

TEST_CASE("two live tiles on the same bytes are caught; dead ones may share") {
  Function fn;
  TensorId a = add(fn, "a", Memory::Sbuf, {128, 64}, 0);
  TensorId b = add(fn, "b", Memory::Sbuf, {128, 64}, 128);
  copy(fn, ap(a, {{64, 128}, {1, 64}}), ap(a, {{64, 128}, {1, 64}}));
  copy(fn, ap(b, {{64, 128}, {1, 64}}), ap(a, {{64, 128}, {1, 64}}));
  CHECK(check(fn) == "1: tiles 'a' and 'b' are live at once on the same sbuf bytes");
  Function reuse;
  a = add(reuse, "a", Memory::Sbuf, {128, 64}, 0);
  b = add(reuse, "b", Memory::Sbuf, {128, 64}, 0);
  copy(reuse, ap(a, {{64, 128}, {1, 64}}), ap(a, {{64, 128}, {1, 64}}));
  copy(reuse, ap(b, {{64, 128}, {1, 64}}), ap(b, {{64, 128}, {1, 64}}));
  CHECK(check(reuse) == "ok");
  // Tiles first used by the same instruction are taken by id, whatever their operands' order:
  // the clash is told the same way as when `a` came first.
  Function together;
  a = add(together, "a", Memory::Sbuf, {128, 64}, 0);
  b = add(together, "b", Memory::Sbuf, {128, 64}, 128);
  TensorId c = add(together, "c", Memory::Sbuf, {128, 64}, 4096);
  copy(together, ap(c, {{64, 128}, {1, 64}}), ap(c, {{64, 128}, {1, 64}}));
  copy(together, ap(b, {{64, 128}, {1, 64}}), ap(a, {{64, 128}, {1, 64}}));
  CHECK(check(together) == "1: tiles 'a' and 'b' are live at once on the same sbuf bytes");
}

TEST_CASE("an indirect DMA's indexed view stays inside its tensor over every index") {
  // nl.load(data[idx[:, 0], 0:512]) on a [256, 512] tensor: the view takes row 0 (partition step
  // 0), and each index of [0, 256) adds 512 elements.
  auto gather = [](std::int64_t size, std::vector<std::int64_t> index_shape) {
    Function fn;
    TensorId data = add(fn, "data", Memory::SharedHbm, {256, 512});
    TensorId idx = add(fn, "idx", Memory::Sbuf, std::move(index_shape));
    TensorId t = add(fn, "t", Memory::Sbuf, {128, 512}, 512);
    std::int64_t p = fn.tensors[idx].shape[0], f = fn.tensors[idx].shape[1];
    AttrList attrs = {{"indirect", PyConstant::str("src")},
                      {"indirect_step", PyConstant::integer(512)},
                      {"indirect_size", PyConstant::integer(size)}};
    add_instruction(fn, {Opcode::Load,
                         Engine::Sync,
                         LoopKind::None,
                         {ap(t, {{512, 128}, {1, 512}})},
                         {ap(data, {{0, 128}, {1, 512}}), ap(idx, {{f, p}, {1, f}})},
                         std::move(attrs),
                         {}});
    return check(fn);
  };
  CHECK(gather(256, {128, 1}) == "ok");
  CHECK(gather(257, {128, 1}) == "0: %0[[0, 128], [1, 512]] indexed in [0, 257) by steps of 512 reaches elements "
                                 "[0, 131583] of 'data', which has 131072");
  CHECK(gather(256, {64, 1}) == "0: its index tile %1[[1, 64], [1, 1]] is not an SBUF tile of one index per "
                                "partition of the indexed view");
  CHECK(gather(256, {128, 2}) == "0: its index tile %1[[2, 128], [1, 2]] is not an SBUF tile of one index per "
                                 "partition of the indexed view");
}
