// The layout consistency check (check_layout in kernel_ir.h): an internal check, run on every
// trace, that every access pattern stays inside its tensor's layout and every tile inside its
// memory. It exists because a wrong layout is otherwise silent: a tile placed on too few
// partitions still traces, with views that run past it.
#include "nkicc/ir/kernel_ir.h"

#include "sim/predicate.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <map>
#include <queue>

namespace nkicc::ir {
namespace {

constexpr std::int64_t kPartitions = 128;
constexpr std::int64_t kPsumBankBytes = 2048;

struct Range {
  std::int64_t lo = 0, hi = 0;
};

// Saturating, so an absurd pattern reports a violation instead of wrapping.
std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
  return r;
}

void widen(Range &r, std::int64_t span) {
  if (span < 0)
    r.lo = sat_add(r.lo, span);
  else
    r.hi = sat_add(r.hi, span);
}

std::string pattern_text(const Function &fn, const Operand &op) {
  std::string out = fmt::format("%{}[", op.tensor);
  auto pattern = fn.pattern(op);
  for (std::size_t i = 0; i < pattern.size(); ++i)
    out += fmt::format("{}[{}, {}]", i ? ", " : "", pattern[i].first, pattern[i].second);
  out += ']';
  if (op.offset)
    out += fmt::format("{:+}", static_cast<std::int64_t>(op.offset));
  return out;
}

std::string check_operand_bounds(const Function &fn, const Operand &op, std::span<const std::int64_t> grid,
                                 bool masked);

/// Whether every element a masked on-chip operand reaches where its mask holds lies inside its
/// tile, each free index inside one partition's row: the points of the iteration space (the
/// operand's dimensions, over every SPMD instance) are enumerated, so an access that reaches
/// past its tile only where the mask is false passes (NKI's idiom
/// `temp[i_P, i_J * I + i_I] = nl.copy(x, mask=(j * J_tile + i_J < J))`). Nullopt when the mask
/// cannot be read or the space is too large to enumerate (more than 2^24 points): the caller
/// then reports the violation as found.
std::optional<bool> masked_access_inside_impl(const Function &fn, const Operand &op, std::span<const std::int64_t> grid,
                                              const std::string &mask) {
  std::string error;
  std::optional<sim::Predicate> pred = sim::Predicate::parse(mask, error);
  auto pattern = fn.pattern(op);
  if (!pred || pattern.empty() || pred->axes() > pattern.size() || pattern.size() > sim::kMaxIndexAxes)
    return std::nullopt;
  const Tensor &t = fn.tensors[op.tensor];
  std::int64_t elements = 1;
  for (std::int64_t d : t.shape)
    elements = sat_mul(elements, d);
  std::int64_t per_partition = t.shape.empty() || t.shape[0] == 0 ? elements : elements / t.shape[0];
  std::array<std::int64_t, sim::kMaxProgramAxes> extent{1, 1, 1};
  for (std::size_t a = 0; a < grid.size() && a < extent.size(); ++a)
    extent[a] = grid[a];
  std::int64_t points = extent[0] * extent[1] * extent[2];
  for (auto [step, num] : pattern)
    points = sat_mul(points, num);
  if (points > (std::int64_t{1} << 24))
    return std::nullopt;
  auto program = fn.program_offset(op);
  std::array<std::int64_t, sim::kMaxProgramAxes> pid{};
  std::vector<std::int64_t> coords(pattern.size());
  for (pid[0] = 0; pid[0] < extent[0]; ++pid[0])
    for (pid[1] = 0; pid[1] < extent[1]; ++pid[1])
      for (pid[2] = 0; pid[2] < extent[2]; ++pid[2]) {
        pred->bind(pid);
        std::int64_t base = op.offset;
        for (std::size_t a = 0; a < program.size() && a < pid.size(); ++a)
          base += program[a] * pid[a];
        std::fill(coords.begin(), coords.end(), 0);
        while (true) {
          if (pred->eval(coords)) {
            std::int64_t e = base, free = base % per_partition;
            for (std::size_t k = 0; k < pattern.size(); ++k) {
              e += pattern[k].first * coords[k];
              if (k > 0)
                free += pattern[k].first * coords[k];
            }
            if (e < 0 || e >= elements || free < 0 || free >= per_partition)
              return false;
          }
          std::size_t k = pattern.size();
          while (k > 0 && ++coords[k - 1] == pattern[k - 1].second)
            coords[--k] = 0;
          if (k == 0)
            break;
        }
      }
  return true;
}

/// The first way `op` leaves its tensor, or empty.
std::string check_operand(const Function &fn, const Operand &op, std::span<const std::int64_t> grid,
                          const std::string *mask) {
  std::string why = check_operand_bounds(fn, op, grid, mask != nullptr);
  if (!why.empty() && mask && op.tensor < fn.tensors.size() && is_on_chip(fn.tensors[op.tensor].memory) &&
      masked_access_inside_impl(fn, op, grid, *mask).value_or(false))
    return {};
  return why;
}

/// The first way `op` leaves its tensor, or empty (a masked on-chip access checked whole).
std::string check_operand_bounds(const Function &fn, const Operand &op, std::span<const std::int64_t> grid,
                                 bool masked) {
  if (op.tensor >= fn.tensors.size())
    return fmt::format("names tensor %{}, but the function has {}", op.tensor, fn.tensors.size());
  const Tensor &t = fn.tensors[op.tensor];
  auto pattern = fn.pattern(op);
  auto program = fn.program_offset(op);
  std::int64_t elements = 1;
  for (std::int64_t d : t.shape)
    elements = sat_mul(elements, d);
  // The per-instance part of the offset, over every instance of the grid.
  Range instance;
  for (std::size_t a = 0; a < program.size(); ++a)
    widen(instance, sat_mul(program[a], a < grid.size() ? grid[a] - 1 : 0));
  Range all{sat_add(op.offset, instance.lo), sat_add(op.offset, instance.hi)};
  for (auto [step, num] : pattern) {
    if (num <= 0)
      return fmt::format("{} has an empty dimension", pattern_text(fn, op));
    widen(all, sat_mul(step, num - 1));
  }
  // A masked access may reach past an HBM tensor where its mask is false (NKI's tiling idiom
  // `mask=(i * 128 + ip < n)`); a tile is always addressed whole.
  if ((all.lo < 0 || all.hi >= elements) && !(masked && !is_on_chip(t.memory)))
    return fmt::format("{} reaches elements [{}, {}] of {} '{}' {}, which has {}", pattern_text(fn, op), all.lo, all.hi,
                       memory_name(t.memory), t.name, dtype_name(t.dtype), elements);
  if (!is_on_chip(t.memory) || t.shape.empty() || pattern.empty())
    return {};
  // On chip, the first pair steps over partitions and the others stay inside one: every
  // partition makes the same accesses within its own bytes.
  std::int64_t per_partition = elements / t.shape[0];
  auto [p_step, p_num] = pattern[0];
  if (p_num > 1 && p_step % per_partition != 0)
    return fmt::format("{}: its first (partition) step {} is not a whole partition of {} elements of '{}'",
                       pattern_text(fn, op), p_step, per_partition, t.name);
  Range within{op.offset % per_partition, op.offset % per_partition};
  if (within.lo < 0)
    within = {within.lo + per_partition, within.hi + per_partition};
  for (std::size_t a = 0; a < program.size(); ++a) {
    std::int64_t extent = a < grid.size() ? grid[a] - 1 : 0;
    if (program[a] % per_partition != 0)
      widen(within, sat_mul(program[a] % per_partition, extent));
  }
  for (std::size_t k = 1; k < pattern.size(); ++k)
    widen(within, sat_mul(pattern[k].first, pattern[k].second - 1));
  if (within.lo < 0 || within.hi >= per_partition)
    return fmt::format("{}: its free dimensions reach elements [{}, {}] of a partition of '{}', which holds {}",
                       pattern_text(fn, op), within.lo, within.hi, t.name, per_partition);
  return {};
}

/// An indirect DMA (lib/nki/indirect.cpp): its last source is an SBUF tile of integers, one
/// index per partition of the indexed view or one for all, and the indexed view with every
/// index of [0, indirect_size) stays inside its tensor (the device checks the values).
std::string check_indirect(const Function &fn, const Instruction &inst, std::span<const std::int64_t> grid,
                           bool masked) {
  const PyConstant *side = nullptr, *step = nullptr, *size = nullptr;
  for (const auto &[name, value] : fn.attrs(inst)) {
    if (name == "indirect")
      side = &value;
    else if (name == "indirect_step")
      step = &value;
    else if (name == "indirect_size")
      size = &value;
  }
  if (!side)
    return {};
  if (side->kind != PyConstant::Kind::Str || (side->s != "src" && side->s != "dst") || !step ||
      step->kind != PyConstant::Kind::Int || !size || size->kind != PyConstant::Kind::Int || size->i <= 0)
    return "its indirect attributes are incomplete";
  bool on_dst = side->s == "dst";
  if (inst.num_src < 2 || (on_dst && inst.num_dst < 1))
    return "an indirect DMA needs the indexed view and the index tile";
  const Operand &index = fn.src(inst).back();
  const Operand &view = on_dst ? fn.dst(inst)[0] : fn.src(inst)[0];
  const Tensor &it = fn.tensors[index.tensor];
  auto ip = fn.pattern(index);
  std::int64_t indices = 1;
  for (auto [s, n] : ip)
    indices = sat_mul(indices, n);
  auto vp = fn.pattern(view);
  std::int64_t partitions = vp.empty() ? 1 : vp[0].second;
  if (it.memory != Memory::Sbuf || ip.empty() || indices != ip[0].second || (indices != 1 && indices != partitions))
    return fmt::format("its index tile {} is not an SBUF tile of one index per partition of the indexed view",
                       pattern_text(fn, index));
  // The indexed view over every index of [0, indirect_size).
  const Tensor &t = fn.tensors[view.tensor];
  std::int64_t elements = 1;
  for (std::int64_t d : t.shape)
    elements = sat_mul(elements, d);
  Range all{view.offset, view.offset};
  auto program = fn.program_offset(view);
  for (std::size_t a = 0; a < program.size(); ++a)
    widen(all, sat_mul(program[a], a < grid.size() ? grid[a] - 1 : 0));
  for (auto [s, n] : vp)
    widen(all, sat_mul(s, n - 1));
  widen(all, sat_mul(step->i, size->i - 1));
  if ((all.lo < 0 || all.hi >= elements) && !masked)
    return fmt::format("{} indexed in [0, {}) by steps of {} reaches elements [{}, {}] of '{}', which has {}",
                       pattern_text(fn, view), size->i, step->i, all.lo, all.hi, t.name, elements);
  return {};
}

std::string check_allocation(const Tensor &t, std::int64_t capacity) {
  if (!is_on_chip(t.memory) || t.byte_offset < 0)
    return {};
  std::int64_t partitions = t.shape.empty() ? 0 : t.shape[0];
  if (t.partition_start < 0 || t.partition_start + partitions > kPartitions)
    return fmt::format("tile '{}' is placed on partitions [{}, {})", t.name, t.partition_start,
                       t.partition_start + partitions);
  if (t.byte_offset + t.bytes_per_partition() > capacity)
    return fmt::format("tile '{}' is placed at bytes [{}, {}) of {}", t.name, t.byte_offset,
                       t.byte_offset + t.bytes_per_partition(), capacity);
  if (t.memory == Memory::Psum && t.bytes_per_partition() <= kPsumBankBytes &&
      t.byte_offset / kPsumBankBytes != (t.byte_offset + t.bytes_per_partition() - 1) / kPsumBankBytes)
    return fmt::format("PSUM tile '{}' of {} bytes straddles a bank boundary at bytes [{}, {})", t.name,
                       t.bytes_per_partition(), t.byte_offset, t.byte_offset + t.bytes_per_partition());
  return {};
}

} // namespace

std::optional<LayoutViolation> check_layout(const Function &fn, std::span<const std::int64_t> grid,
                                            std::int64_t sbuf_bytes_per_partition,
                                            std::int64_t psum_bytes_per_partition) {
  const std::size_t n = fn.tensors.size();
  for (std::size_t id = 0; id < n; ++id) {
    const Tensor &t = fn.tensors[id];
    std::string why =
        check_allocation(t, t.memory == Memory::Psum ? psum_bytes_per_partition : sbuf_bytes_per_partition);
    if (!why.empty())
      return LayoutViolation{kNoInstruction, static_cast<TensorId>(id), std::move(why)};
  }
  // Live ranges, for the overlap check: a tile is live from its first use to its last.
  // A view lives on its base's bytes: its uses are its base's for the overlap check.
  std::vector<TensorId> roots = fn.views.empty() ? std::vector<TensorId>() : fn.storage_roots();
  // (Instruction indices fit 32 bits: Function::append stops a kernel before they would not.)
  constexpr std::uint32_t kUnused = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> first(n, kUnused), last(n, 0);
  // What an instruction's attributes mean here, found once per attribute list (the Function
  // interns them: a trace of millions of instructions has a handful), not once per instruction.
  struct AttrFacts {
    bool known = false;
    bool indirect = false;
    const std::string *mask = nullptr;
  };
  std::vector<AttrFacts> facts(fn.distinct_attr_lists());
  for (std::size_t i = 0; i < fn.instructions.size(); ++i) {
    const Instruction &inst = fn.instructions[i];
    AttrFacts &f = facts[inst.attrs];
    if (!f.known) {
      for (const auto &[name, value] : fn.attrs(inst)) {
        if (name == "mask" && value.kind == PyConstant::Kind::Str)
          f.mask = &value.s;
        if (name == "indirect")
          f.indirect = true;
      }
      f.known = true;
    }
    const std::string *mask = f.mask;
    bool masked = mask != nullptr;
    if (std::string why = f.indirect ? check_indirect(fn, inst, grid, masked) : std::string(); !why.empty()) {
      TensorId about = fn.operands(inst).empty() ? TensorId{0} : fn.operands(inst)[0].tensor;
      return LayoutViolation{i, about, std::move(why)};
    }
    for (const Operand &op : fn.operands(inst)) {
      std::string why = check_operand(fn, op, grid, mask);
      if (!why.empty())
        return LayoutViolation{i, op.tensor, std::move(why)};
      TensorId root = roots.empty() || op.tensor >= roots.size() ? op.tensor : roots[op.tensor];
      if (first[root] == kUnused)
        first[root] = static_cast<std::uint32_t>(i);
      last[root] = static_cast<std::uint32_t>(i);
    }
  }
  // Tiles in order of their first use, and those first used by the same instruction by id. Those
  // on partition 0 onwards (every tile the automatic allocator places) overlap in partitions, so
  // among them bytes must not: a map of live byte ranges finds a clash from its neighbours. Tiles
  // placed elsewhere (a user's allocation) are few and compared with every live tile.
  auto placed = [&](TensorId id) {
    const Tensor &t = fn.tensors[id];
    return is_on_chip(t.memory) && t.byte_offset >= 0 && t.bytes_per_partition() > 0;
  };
  std::map<std::int64_t, TensorId> live_at[2]; // byte offset -> tile, per memory (SBUF, PSUM)
  std::vector<TensorId> placed_elsewhere;
  using Ending = std::pair<std::uint32_t, TensorId>;
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> endings;
  auto clash = [&](TensorId a, TensorId b) -> std::optional<LayoutViolation> {
    const Tensor &t = fn.tensors[a], &u = fn.tensors[b];
    if (t.memory != u.memory)
      return std::nullopt;
    std::int64_t tp = t.shape.empty() ? 0 : t.shape[0], up = u.shape.empty() ? 0 : u.shape[0];
    bool partitions = t.partition_start < u.partition_start + up && u.partition_start < t.partition_start + tp;
    bool bytes = t.byte_offset < u.byte_offset + u.bytes_per_partition() &&
                 u.byte_offset < t.byte_offset + t.bytes_per_partition();
    if (!partitions || !bytes)
      return std::nullopt;
    return LayoutViolation{first[a], a,
                           fmt::format("tiles '{}' and '{}' are live at once on the same {} bytes", u.name, t.name,
                                       memory_name(t.memory))};
  };
  auto visit = [&](TensorId id) -> std::optional<LayoutViolation> {
    const Tensor &t = fn.tensors[id];
    while (!endings.empty() && endings.top().first < first[id]) {
      TensorId done = endings.top().second;
      endings.pop();
      const Tensor &d = fn.tensors[done];
      if (d.partition_start == 0)
        live_at[d.memory == Memory::Psum].erase(d.byte_offset);
      else
        std::erase(placed_elsewhere, done);
    }
    for (TensorId o : placed_elsewhere)
      if (auto v = clash(id, o))
        return v;
    auto &live = live_at[t.memory == Memory::Psum];
    if (t.partition_start == 0) {
      auto next = live.lower_bound(t.byte_offset);
      if (next != live.end())
        if (auto v = clash(id, next->second))
          return v;
      if (next != live.begin())
        if (auto v = clash(id, std::prev(next)->second))
          return v;
      live.emplace(t.byte_offset, id);
    } else {
      for (const auto &[offset, o] : live)
        if (auto v = clash(id, o))
          return v;
      placed_elsewhere.push_back(id);
    }
    endings.emplace(last[id], id);
    return std::nullopt;
  };
  // The tiles an instruction uses first are found from its operands again, rather than from a
  // list of every tile sorted by first use: the trace's peak is here, and that list was 4 bytes
  // a tile, twice over while it grew.
  std::vector<TensorId> starting;
  for (std::size_t i = 0; i < fn.instructions.size(); ++i) {
    starting.clear();
    for (const Operand &op : fn.operands(fn.instructions[i])) {
      TensorId root = roots.empty() || op.tensor >= roots.size() ? op.tensor : roots[op.tensor];
      if (first[root] == i && placed(root))
        starting.push_back(root);
    }
    std::sort(starting.begin(), starting.end());
    starting.erase(std::unique(starting.begin(), starting.end()), starting.end());
    for (TensorId id : starting)
      if (auto v = visit(id))
        return v;
  }
  return std::nullopt;
}

std::optional<bool> masked_access_inside(const Function &fn, const Operand &op, std::span<const std::int64_t> grid,
                                         const std::string &mask) {
  return masked_access_inside_impl(fn, op, grid, mask);
}

} // namespace nkicc::ir
