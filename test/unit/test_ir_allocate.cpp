#include "ir_fixture.h"
#include "nkicc/ir/kernel_ir.h"
#include "nkicc/target/target.h"

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <random>

using namespace nkicc;
using namespace nkicc::ir;
using namespace nkicc::ir::testing;

namespace {

constexpr std::int64_t kPsumBytes = 16384;

TensorId add_tile(Function &fn, Memory memory, std::vector<std::int64_t> shape, DType dtype = DType::Float32) {
  Tensor t;
  t.name = "t" + std::to_string(fn.tensors.size());
  t.memory = memory;
  t.shape = std::move(shape);
  t.dtype = dtype;
  fn.tensors.push_back(std::move(t));
  return static_cast<TensorId>(fn.tensors.size() - 1);
}

AccessPattern ap(TensorId id) { return testing::ap(id, {}); }

/// The instruction's operands, dst before src.
std::span<const Operand> operands(const Function &fn, const Instruction &inst) { return fn.operands(inst); }

InstructionSpec inst(std::vector<TensorId> dst, std::vector<TensorId> src) {
  InstructionSpec i;
  for (TensorId t : dst)
    i.dst.push_back(ap(t));
  for (TensorId t : src)
    i.src.push_back(ap(t));
  return i;
}

std::vector<std::int64_t> offsets(const Function &fn) {
  std::vector<std::int64_t> out;
  for (const Tensor &t : fn.tensors)
    out.push_back(t.byte_offset);
  return out;
}

struct Liveness {
  std::vector<std::size_t> first, last;
};

Liveness liveness(const Function &fn) {
  constexpr std::size_t kNever = static_cast<std::size_t>(-1);
  Liveness l{std::vector<std::size_t>(fn.tensors.size(), kNever), std::vector<std::size_t>(fn.tensors.size(), kNever)};
  for (std::size_t i = 0; i < fn.instructions.size(); ++i)
    for (const Operand &a : operands(fn, fn.instructions[i])) {
      if (l.first[a.tensor] == kNever)
        l.first[a.tensor] = i;
      l.last[a.tensor] = i;
    }
  return l;
}

/// Checks the allocation's invariants independently of how it was found: every referenced
/// tile is placed in range and aligned, a small PSUM tile stays in one bank, a large one starts
/// a bank, and no two tiles that are live at the same instruction overlap. Returns the number
/// of violations (0 when sound).
int count_violations(const Function &fn, std::int64_t sbuf_bytes, std::int64_t psum_bytes) {
  Liveness l = liveness(fn);
  int bad = 0;
  std::map<std::int64_t, std::int64_t> live[2]; // begin -> end, per memory
  std::vector<std::vector<TensorId>> starting(fn.instructions.size()), ending(fn.instructions.size());
  for (TensorId t = 0; t < fn.tensors.size(); ++t) {
    const Tensor &tile = fn.tensors[t];
    if (!is_on_chip(tile.memory))
      continue;
    if (l.first[t] == static_cast<std::size_t>(-1)) {
      bad += tile.byte_offset != -1;
      continue;
    }
    std::int64_t begin = tile.byte_offset, end = begin + tile.bytes_per_partition();
    bool psum = tile.memory == Memory::Psum;
    bad += begin < 0 || begin % 4 != 0 || end > (psum ? psum_bytes : sbuf_bytes);
    bad += tile.bytes_per_partition() != bytes_per_partition(tile);
    if (psum && tile.bytes_per_partition() <= 2048)
      bad += tile.bytes_per_partition() > 0 && begin / 2048 != (end - 1) / 2048;
    if (psum && tile.bytes_per_partition() > 2048)
      bad += begin % 2048 != 0;
    starting[l.first[t]].push_back(t);
    ending[l.last[t]].push_back(t);
  }
  for (std::size_t i = 0; i < fn.instructions.size(); ++i) {
    for (TensorId t : starting[i]) {
      const Tensor &tile = fn.tensors[t];
      if (tile.bytes_per_partition() == 0)
        continue;
      auto &m = live[tile.memory == Memory::Psum];
      std::int64_t begin = tile.byte_offset, end = begin + tile.bytes_per_partition();
      auto next = m.lower_bound(begin);
      if (next != m.end() && next->first < end)
        ++bad;
      if (next != m.begin() && std::prev(next)->second > begin)
        ++bad;
      m[begin] = end;
    }
    for (TensorId t : ending[i])
      if (fn.tensors[t].bytes_per_partition() > 0)
        live[fn.tensors[t].memory == Memory::Psum].erase(fn.tensors[t].byte_offset);
  }
  return bad;
}

/// First fit written the obvious way, over a map of 4-byte units: the reference the fast
/// allocator must agree with, offset for offset.
std::optional<TensorId> naive_allocate(Function &fn, std::int64_t sbuf_bytes, std::int64_t psum_bytes) {
  Liveness l = liveness(fn);
  std::vector<bool> used[2] = {std::vector<bool>(sbuf_bytes / 4), std::vector<bool>(psum_bytes / 4)};
  std::vector<int> state(fn.tensors.size(), 0);
  for (Tensor &t : fn.tensors)
    if (is_on_chip(t.memory)) {
      t.byte_offset = -1;
    }
  auto units_of = [](const Tensor &t) { return (t.bytes_per_partition() + 3) / 4; };
  for (std::size_t i = 0; i < fn.instructions.size(); ++i) {
    for (const Operand &a : operands(fn, fn.instructions[i])) {
      Tensor &t = fn.tensors[a.tensor];
      if (!is_on_chip(t.memory) || state[a.tensor] != 0)
        continue;
      bool psum = t.memory == Memory::Psum;
      auto &map = used[psum];
      std::int64_t n = units_of(t), size = static_cast<std::int64_t>(map.size());
      std::int64_t found = -1;
      for (std::int64_t x = 0; x + n <= size && found < 0; ++x) {
        if (psum && n <= 512 && n > 0 && x / 512 != (x + n - 1) / 512)
          continue;
        if (psum && n > 512 && x % 512 != 0)
          continue;
        bool free = true;
        for (std::int64_t u = x; u < x + n && free; ++u)
          free = !map[u];
        if (free)
          found = x;
      }
      if (found < 0)
        return a.tensor;
      for (std::int64_t u = found; u < found + n; ++u)
        map[u] = true;
      t.byte_offset = found * 4;
      state[a.tensor] = 1;
    }
    for (const Operand &a : operands(fn, fn.instructions[i])) {
      Tensor &t = fn.tensors[a.tensor];
      if (!is_on_chip(t.memory) || state[a.tensor] != 1 || l.last[a.tensor] != i)
        continue;
      for (std::int64_t u = t.byte_offset / 4; u < t.byte_offset / 4 + units_of(t); ++u)
        used[t.memory == Memory::Psum][u] = false;
      state[a.tensor] = 2;
    }
  }
  return std::nullopt;
}

/// A kernel shaped like unrolled loops: each instruction writes a tile near a moving cursor and
/// reads a few recent ones, with now and then a read of an old tile that keeps it alive.
Function random_kernel(std::uint32_t seed, std::size_t tiles, std::size_t instructions) {
  std::mt19937 rng(seed);
  Function fn;
  add_tile(fn, Memory::SharedHbm, {4096, 4096});
  for (std::size_t k = 0; k < tiles; ++k) {
    bool psum = rng() % 4 == 0;
    DType dtype = rng() % 3 == 0 ? DType::BFloat16 : DType::Float32;
    std::int64_t free = psum ? 1 + rng() % (rng() % 8 == 0 ? 1100 : 512) : 1 + rng() % 300;
    add_tile(fn, psum ? Memory::Psum : Memory::Sbuf, {128, free}, dtype);
  }
  for (std::size_t i = 0; i < instructions; ++i) {
    std::size_t cursor = 1 + i * tiles / instructions;
    InstructionSpec in = inst({static_cast<TensorId>(cursor)}, {0});
    for (std::uint32_t r = rng() % 3; r > 0; --r)
      in.src.push_back(ap(static_cast<TensorId>(1 + (cursor - 1 - std::min<std::size_t>(cursor - 1, rng() % 4)))));
    // PSUM holds 8 banks: only SBUF tiles stay alive for long.
    if (auto old = static_cast<TensorId>(1 + rng() % cursor); rng() % 50 == 0 && fn.tensors[old].memory == Memory::Sbuf)
      in.src.push_back(ap(old));
    add_instruction(fn, std::move(in));
  }
  return fn;
}

} // namespace

TEST_CASE("allocation: tiles of successive loop iterations reuse the same space", "[ir]") {
  Function fn;
  TensorId input = add_tile(fn, Memory::SharedHbm, {128, 51200});
  std::vector<TensorId> tiles;
  for (int k = 0; k < 100; ++k)
    tiles.push_back(add_tile(fn, Memory::Sbuf, {128, 512})); // 2048 bytes each
  TensorId unused = add_tile(fn, Memory::Sbuf, {128, 512});
  // Iteration k writes tile k and reads tile k-1: each tile is used by two consecutive
  // instructions, so two tiles are live at a time.
  for (int k = 0; k <= 100; ++k) {
    InstructionSpec i = inst({}, {input});
    if (k < 100)
      i.dst.push_back(ap(tiles[k]));
    if (k > 0)
      i.src.push_back(ap(tiles[k - 1]));
    add_instruction(fn, i);
  }

  REQUIRE_FALSE(allocate_on_chip(fn, 4096, kPsumBytes));
  for (int k = 0; k < 100; ++k) {
    CHECK(fn.tensors[tiles[k]].byte_offset == (k % 2) * 2048);
    CHECK(fn.tensors[tiles[k]].bytes_per_partition() == 2048);
    CHECK(fn.tensors[tiles[k]].partition_start == 0);
  }
  CHECK(fn.tensors[unused].byte_offset == -1);
  CHECK(fn.tensors[input].byte_offset == -1);
  CHECK(fn.tensors[input].bytes_per_partition() == 0);
  CHECK(count_violations(fn, 4096, kPsumBytes) == 0);

  // Four bytes less, and the second tile no longer fits beside the first.
  auto error = allocate_on_chip(fn, 4092, kPsumBytes);
  REQUIRE(error);
  CHECK(error->tensor == tiles[1]);
  CHECK(error->memory == Memory::Sbuf);
  CHECK(error->needed == 2048);
  CHECK(error->capacity == 4092);
  CHECK(error->in_use == 2048);
}

TEST_CASE("allocation: a tile larger than SBUF is reported with the figures", "[ir]") {
  const std::int64_t trn1_sbuf = find_target("trn1")->sbuf_bytes_per_partition;
  REQUIRE(trn1_sbuf == 180224);

  Function fn;
  TensorId big = add_tile(fn, Memory::Sbuf, {128, 50000}); // 200,000 bytes per partition
  add_instruction(fn, inst({big}, {}));
  auto error = allocate_on_chip(fn, trn1_sbuf, kPsumBytes);
  REQUIRE(error);
  CHECK(error->tensor == big);
  CHECK(error->memory == Memory::Sbuf);
  CHECK(error->needed == 200000);
  CHECK(error->capacity == 180224);
  CHECK(error->in_use == 0);

  // Two tiles that fit alone but not together: the error counts what the first one holds.
  Function two;
  TensorId a = add_tile(two, Memory::Sbuf, {128, 25000});
  TensorId b = add_tile(two, Memory::Sbuf, {128, 25000}, DType::Float32);
  add_instruction(two, inst({a}, {}));
  add_instruction(two, inst({b}, {a}));
  error = allocate_on_chip(two, trn1_sbuf, kPsumBytes);
  REQUIRE(error);
  CHECK(error->tensor == b);
  CHECK(error->needed == 100000);
  CHECK(error->in_use == 100000);

  // A shape whose size overflows saturates and is reported, not wrapped.
  Function absurd;
  TensorId huge = add_tile(absurd, Memory::Psum, {1, std::int64_t{1} << 40, std::int64_t{1} << 40});
  add_instruction(absurd, inst({huge}, {}));
  error = allocate_on_chip(absurd, trn1_sbuf, kPsumBytes);
  REQUIRE(error);
  CHECK(error->memory == Memory::Psum);
  CHECK(error->capacity == kPsumBytes);
  CHECK(error->needed == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("allocation: SBUF offsets are 4-byte aligned", "[ir]") {
  Function fn;
  TensorId a = add_tile(fn, Memory::Sbuf, {128, 1}, DType::BFloat16); // 2 bytes
  TensorId b = add_tile(fn, Memory::Sbuf, {128, 3}, DType::Int8);     // 3 bytes
  TensorId c = add_tile(fn, Memory::Sbuf, {128, 1}, DType::Float32);
  add_instruction(fn, inst({c}, {a, b}));
  REQUIRE_FALSE(allocate_on_chip(fn, 1024, kPsumBytes));
  // First use in instruction order, destinations before sources.
  CHECK(fn.tensors[c].byte_offset == 0);
  CHECK(fn.tensors[a].byte_offset == 4);
  CHECK(fn.tensors[a].bytes_per_partition() == 2);
  CHECK(fn.tensors[b].byte_offset == 8);
  CHECK(fn.tensors[b].bytes_per_partition() == 3);
}

TEST_CASE("allocation: PSUM tiles stay within a 2 KiB bank, larger ones start a bank", "[ir]") {
  Function fn;
  TensorId t0 = add_tile(fn, Memory::Psum, {128, 384}); // 1536 bytes
  TensorId t1 = add_tile(fn, Memory::Psum, {128, 256}); // 1024: would straddle banks 0 and 1
  TensorId t2 = add_tile(fn, Memory::Psum, {128, 128}); // 512: fills the rest of bank 0
  TensorId t3 = add_tile(fn, Memory::Psum, {128, 750}); // 3000: two banks from a bank start
  TensorId t4 = add_tile(fn, Memory::Psum, {128, 250}); // 1000: the rest of bank 1
  TensorId t5 = add_tile(fn, Memory::Psum, {128, 512}); // 2048: a whole bank
  TensorId s = add_tile(fn, Memory::Sbuf, {128, 100});  // SBUF is allocated apart
  add_instruction(fn, inst({}, {t0, t1, t2, t3, t4, t5, s}));
  REQUIRE_FALSE(allocate_on_chip(fn, 192 * 1024, kPsumBytes));
  CHECK(fn.tensors[t0].byte_offset == 0);
  CHECK(fn.tensors[t1].byte_offset == 2048);
  CHECK(fn.tensors[t2].byte_offset == 1536);
  CHECK(fn.tensors[t3].byte_offset == 4096);
  CHECK(fn.tensors[t4].byte_offset == 3072);
  CHECK(fn.tensors[t5].byte_offset == 8192);
  CHECK(fn.tensors[s].byte_offset == 0);
  CHECK(count_violations(fn, 192 * 1024, kPsumBytes) == 0);

  // Eight full banks fill PSUM; a ninth tile does not fit.
  Function full;
  std::vector<TensorId> banks;
  for (int k = 0; k < 9; ++k)
    banks.push_back(add_tile(full, Memory::Psum, {128, 512}));
  add_instruction(full, inst(banks, {}));
  auto error = allocate_on_chip(full, 192 * 1024, kPsumBytes);
  REQUIRE(error);
  CHECK(error->tensor == banks[8]);
  CHECK(error->memory == Memory::Psum);
  CHECK(error->needed == 2048);
  CHECK(error->capacity == kPsumBytes);
  CHECK(error->in_use == kPsumBytes);
  for (int k = 0; k < 8; ++k)
    CHECK(full.tensors[banks[k]].byte_offset == k * 2048);
}

TEST_CASE("allocation: first fit, exactly as a byte-map allocator would place tiles", "[ir]") {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    // A tight SBUF runs out part way (both must stop at the same tile); a roomy one does not.
    const std::int64_t sbuf = seed % 2 ? 8192 : 65536;
    Function fn = random_kernel(seed, 400, 1500);
    Function reference = fn;
    auto error = allocate_on_chip(fn, sbuf, kPsumBytes);
    auto naive_failed = naive_allocate(reference, sbuf, kPsumBytes);
    INFO("seed " << seed);
    REQUIRE(error.has_value() == naive_failed.has_value());
    if (error)
      CHECK(error->tensor == *naive_failed);
    else
      CHECK(count_violations(fn, sbuf, kPsumBytes) == 0);
    CHECK(offsets(fn) == offsets(reference));
  }
}

TEST_CASE("allocation is deterministic", "[ir]") {
  Function fn = random_kernel(42, 2000, 6000);
  Function again = fn;
  REQUIRE_FALSE(allocate_on_chip(fn, 65536, kPsumBytes));
  REQUIRE_FALSE(allocate_on_chip(again, 65536, kPsumBytes));
  CHECK(offsets(fn) == offsets(again));
  // Allocating an allocated function again starts from scratch and gives the same answer.
  REQUIRE_FALSE(allocate_on_chip(again, 65536, kPsumBytes));
  CHECK(offsets(fn) == offsets(again));
  SourceManager sm;
  CHECK(print_function(fn, sm) == print_function(again, sm));
}

TEST_CASE("allocation of a million instructions and 300,000 tiles", "[ir]") {
  constexpr std::size_t kTiles = 300000, kInstructions = 1000000;
  Function fn;
  for (std::size_t k = 0; k < kTiles; ++k) {
    if (k % 10 == 0)
      add_tile(fn, Memory::Psum, {128, static_cast<std::int64_t>(1 + (k * 31) % 512)});
    else
      add_tile(fn, Memory::Sbuf, {128, static_cast<std::int64_t>(1 + (k * 7919) % 600)});
  }
  for (std::size_t i = 0; i < kInstructions; ++i) {
    auto t = static_cast<TensorId>(i * 3 / 10);
    InstructionSpec in = inst({t}, {});
    if (t >= 1)
      in.src.push_back(ap(t - 1));
    if (i % 1000 == 0 && t >= 3001) // keeps an old SBUF tile alive, leaving holes behind it
      in.src.push_back(ap(t - 3001));
    add_instruction(fn, std::move(in));
  }
  const std::int64_t sbuf = find_target("trn2")->sbuf_bytes_per_partition;
  REQUIRE_FALSE(allocate_on_chip(fn, sbuf, kPsumBytes));
  std::size_t unplaced = 0;
  for (const Tensor &t : fn.tensors)
    unplaced += t.byte_offset < 0;
  CHECK(unplaced == 0);
  CHECK(count_violations(fn, sbuf, kPsumBytes) == 0);
}

TEST_CASE("allocation: few live tiles and many give the byte-map answer alike", "[ir]") {
  // nkicc keeps a short list of live ranges while few tiles are live and moves to its segment
  // tree past 32: windows of 4 to 100 live tiles cover both and the move between them.
  for (std::size_t window : {1, 4, 31, 32, 33, 34, 100}) {
    std::mt19937 rng(static_cast<std::uint32_t>(window));
    Function fn;
    add_tile(fn, Memory::SharedHbm, {4096, 4096});
    const std::size_t tiles = 600;
    for (std::size_t k = 0; k < tiles; ++k) {
      Memory memory = rng() % 4 == 0 ? Memory::Psum : Memory::Sbuf;
      // A few sizes, so that gaps are often exactly as large as the next tile.
      const std::int64_t sizes[] = {4, 64, 128, 256, 512, 1024, 2048, 2052};
      std::int64_t free_bytes = sizes[rng() % (memory == Memory::Psum ? 8 : 6)];
      add_tile(fn, memory, {128, free_bytes / 4}, DType::Float32);
    }
    // Tile k is written at instruction k and read at k + window, so `window` tiles are live.
    for (std::size_t i = 0; i < tiles + window; ++i) {
      std::vector<TensorId> dst, src;
      if (i < tiles)
        dst.push_back(static_cast<TensorId>(1 + i));
      if (i >= window)
        src.push_back(static_cast<TensorId>(1 + i - window));
      add_instruction(fn, inst(dst, src));
    }
    Function reference = fn;
    auto error = allocate_on_chip(fn, 1 << 20, kPsumBytes);
    auto naive_failed = naive_allocate(reference, 1 << 20, kPsumBytes);
    INFO("window " << window);
    REQUIRE(error.has_value() == naive_failed.has_value());
    if (error)
      CHECK(error->tensor == *naive_failed);
    CHECK(offsets(fn) == offsets(reference));
  }
}
