// SBUF/PSUM allocation by liveness (SPEC §3, seed 001 `allocate_pending_tensors`).
//
// A kernel unrolls to a million instructions and hundreds of thousands of tiles, so each
// allocation and release costs O(log capacity): the free bytes of a memory are a segment tree
// over 4-byte units that knows, per node, its longest free run and its free prefix and suffix.
// First fit is then a descent towards the leftmost run that is long enough.
#include "nkicc/ir/kernel_ir.h"

#include <algorithm>
#include <limits>
#include <memory>

namespace nkicc::ir {
namespace {

constexpr std::int64_t kUnitBytes = 4;        // SBUF and PSUM alignment
constexpr std::int64_t kPsumBankBytes = 2048; // reference/nki.md: 8 banks of 2 KiB
constexpr std::int64_t kBankUnits = kPsumBankBytes / kUnitBytes;

// The free units of one address range [0, size). Most kernels hold a few tiles live at a time:
// their ranges, sorted, answer first fit by a scan of the gaps. Past kMaxListed live ranges the
// segment tree takes over, so no kernel pays more than O(log size) an operation. Ranges are
// always released exactly as they were taken (Pool splits a tile the same way both times).
class FreeRuns {
public:
  explicit FreeRuns(std::int64_t size) : size_(static_cast<std::int32_t>(size)) {}

  std::int64_t size() const { return size_; }
  std::int64_t longest_free() const {
    if (tree_)
      return size_ > 0 ? nodes_[1].best : 0;
    std::int32_t best = 0, prev = 0;
    for (const auto &[begin, end] : used_) {
      best = std::max(best, begin - prev);
      prev = end;
    }
    return std::max(best, size_ - prev);
  }

  std::int64_t free_prefix() const {
    if (tree_)
      return size_ > 0 ? nodes_[1].pref : 0;
    return used_.empty() ? size_ : used_.front().first;
  }

  // The leftmost start of `len` free units, or -1.
  std::int64_t first_fit(std::int64_t len) {
    if (tree_) {
      if (len > longest_free())
        return -1;
      return find(1, 0, size_, static_cast<std::int32_t>(len));
    }
    std::int32_t prev = 0;
    for (const auto &[begin, end] : used_) {
      if (begin - prev >= len)
        return prev;
      prev = end;
    }
    return size_ - prev >= len ? prev : -1;
  }
  void mark_used(std::int64_t begin, std::int64_t len) {
    if (len <= 0)
      return;
    if (tree_) {
      update(begin, len, Lazy::Used);
      return;
    }
    std::pair<std::int32_t, std::int32_t> range(static_cast<std::int32_t>(begin),
                                                static_cast<std::int32_t>(begin + len));
    used_.insert(std::lower_bound(used_.begin(), used_.end(), range), range);
    if (used_.size() > kMaxListed)
      build_tree();
  }
  void mark_free(std::int64_t begin, std::int64_t len) {
    if (len <= 0)
      return;
    if (tree_) {
      update(begin, len, Lazy::Free);
      return;
    }
    auto it = std::lower_bound(used_.begin(), used_.end(),
                               std::pair<std::int32_t, std::int32_t>(static_cast<std::int32_t>(begin), 0));
    if (it != used_.end() && it->first == begin)
      used_.erase(it);
  }

private:
  static constexpr std::size_t kMaxListed = 32;

  void build_tree() {
    std::size_t leaves = 1;
    while (leaves < static_cast<std::size_t>(std::max<std::int32_t>(size_, 1)))
      leaves *= 2;
    // Left uninitialized: the root starts with a pending "free" tag, and a node is only read
    // after the tag above it was pushed into it, so only the nodes tiles reach are touched.
    nodes_ = std::make_unique_for_overwrite<Node[]>(2 * leaves);
    nodes_[1] = {0, 0, 0, Lazy::None};
    tree_ = true;
    if (size_ > 0)
      set(1, 0, size_, 0, size_, Lazy::Free);
    for (const auto &[begin, end] : used_)
      update(begin, end - begin, Lazy::Used);
    used_.clear();
    used_.shrink_to_fit();
  }

  enum class Lazy : std::uint8_t { None, Free, Used };
  struct Node {
    std::int32_t pref, suf, best;
    Lazy lazy;
  };

  void update(std::int64_t begin, std::int64_t len, Lazy to) {
    if (len > 0)
      set(1, 0, size_, static_cast<std::int32_t>(begin), static_cast<std::int32_t>(begin + len), to);
  }

  void apply(std::size_t k, std::int32_t lo, std::int32_t hi, Lazy to) {
    std::int32_t v = to == Lazy::Free ? hi - lo : 0;
    nodes_[k] = {v, v, v, hi - lo > 1 ? to : Lazy::None};
  }
  void push(std::size_t k, std::int32_t lo, std::int32_t mid, std::int32_t hi) {
    if (nodes_[k].lazy == Lazy::None)
      return;
    apply(2 * k, lo, mid, nodes_[k].lazy);
    apply(2 * k + 1, mid, hi, nodes_[k].lazy);
    nodes_[k].lazy = Lazy::None;
  }
  void pull(std::size_t k, std::int32_t lo, std::int32_t mid, std::int32_t hi) {
    const Node &l = nodes_[2 * k], &r = nodes_[2 * k + 1];
    Node &n = nodes_[k];
    n.pref = l.pref == mid - lo ? l.pref + r.pref : l.pref;
    n.suf = r.suf == hi - mid ? r.suf + l.suf : r.suf;
    n.best = std::max({l.best, r.best, l.suf + r.pref});
  }
  void set(std::size_t k, std::int32_t lo, std::int32_t hi, std::int32_t a, std::int32_t b, Lazy to) {
    if (b <= lo || hi <= a)
      return;
    if (a <= lo && hi <= b) {
      apply(k, lo, hi, to);
      return;
    }
    std::int32_t mid = lo + (hi - lo) / 2;
    push(k, lo, mid, hi);
    set(2 * k, lo, mid, a, b, to);
    set(2 * k + 1, mid, hi, a, b, to);
    pull(k, lo, mid, hi);
  }
  // Precondition: nodes_[k].best >= len.
  std::int32_t find(std::size_t k, std::int32_t lo, std::int32_t hi, std::int32_t len) {
    if (nodes_[k].pref >= len)
      return lo;
    std::int32_t mid = lo + (hi - lo) / 2;
    push(k, lo, mid, hi);
    if (nodes_[2 * k].best >= len)
      return find(2 * k, lo, mid, len);
    if (nodes_[2 * k].suf + nodes_[2 * k + 1].pref >= len)
      return mid - nodes_[2 * k].suf;
    return find(2 * k + 1, mid, hi, len);
  }

  std::int32_t size_;
  bool tree_ = false;
  std::vector<std::pair<std::int32_t, std::int32_t>> used_; ///< live [begin, end), sorted, before the tree
  std::unique_ptr<Node[]> nodes_;
};

// One memory: SBUF is one region; PSUM is one region per bank, so that a tile that fits a
// bank is found inside one, and a larger tile takes whole banks from a bank start.
class Pool {
public:
  Pool(std::int64_t capacity_bytes, bool banked) : banked_(banked) {
    std::int64_t units = std::max<std::int64_t>(capacity_bytes, 0) / kUnitBytes;
    // The tree indexes units with 32-bit integers; no chip comes near this.
    units = std::min<std::int64_t>(units, std::numeric_limits<std::int32_t>::max() / 2);
    if (!banked_) {
      regions_.emplace_back(units);
      return;
    }
    for (std::int64_t start = 0; start < units; start += kBankUnits)
      regions_.emplace_back(std::min(kBankUnits, units - start));
  }

  // The unit offset of `units` free units placed first-fit, or -1.
  std::int64_t allocate(std::int64_t units) {
    if (units == 0)
      return 0;
    if (!banked_) {
      std::int64_t at = regions_[0].first_fit(units);
      if (at >= 0)
        regions_[0].mark_used(at, units);
      return at;
    }
    if (units <= kBankUnits) {
      for (std::size_t r = 0; r < regions_.size(); ++r) {
        std::int64_t at = regions_[r].first_fit(units);
        if (at >= 0) {
          regions_[r].mark_used(at, units);
          return static_cast<std::int64_t>(r) * kBankUnits + at;
        }
      }
      return -1;
    }
    std::size_t whole = static_cast<std::size_t>(units / kBankUnits);
    std::int64_t rest = units % kBankUnits;
    std::size_t span = whole + (rest ? 1 : 0);
    for (std::size_t r = 0; r + span <= regions_.size(); ++r) {
      bool fits = true;
      for (std::size_t b = r; b < r + whole && fits; ++b)
        fits = regions_[b].size() == kBankUnits && regions_[b].longest_free() == kBankUnits;
      if (fits && rest)
        fits = regions_[r + whole].free_prefix() >= rest;
      if (fits) {
        std::int64_t at = static_cast<std::int64_t>(r) * kBankUnits;
        update(at, units, true);
        return at;
      }
    }
    return -1;
  }

  void release(std::int64_t at, std::int64_t units) { update(at, units, false); }
  /// Takes [at, at + units) out of use for good (free when called).
  void reserve(std::int64_t at, std::int64_t units) { update(at, units, true); }

private:
  void update(std::int64_t at, std::int64_t units, bool used) {
    if (!banked_) {
      used ? regions_[0].mark_used(at, units) : regions_[0].mark_free(at, units);
      return;
    }
    while (units > 0) {
      std::size_t r = static_cast<std::size_t>(at / kBankUnits);
      std::int64_t in_bank = at % kBankUnits;
      std::int64_t len = std::min(units, kBankUnits - in_bank);
      used ? regions_[r].mark_used(in_bank, len) : regions_[r].mark_free(in_bank, len);
      at += len;
      units -= len;
    }
  }

  bool banked_;
  std::vector<FreeRuns> regions_;
};

enum class TileState : std::uint8_t { Unused, Live, Dead };

std::int64_t units_of(std::int64_t bytes) { return bytes / kUnitBytes + (bytes % kUnitBytes != 0); }

} // namespace

std::optional<AllocationError> allocate_on_chip(Function &fn, std::int64_t sbuf_bytes_per_partition,
                                                std::int64_t psum_bytes_per_partition) {
  const std::size_t n = fn.tensors.size();
  for (Tensor &t : fn.tensors) {
    if (!is_on_chip(t.memory))
      continue;
    if (t.user_placed)
      continue;
    t.partition_start = 0;
    t.byte_offset = -1;
  }
  // A view (`t.view(dtype)`) uses its base's bytes: the base is placed, and stays live, for
  // the view's uses too, and the view gets the base's place.
  std::vector<TensorId> roots = fn.views.empty() ? std::vector<TensorId>() : fn.storage_roots();
  auto tile_of = [&](const Operand &ap) -> Tensor * {
    if (ap.tensor >= n || !is_on_chip(fn.tensors[ap.tensor].memory))
      return nullptr;
    return &fn.tensors[ap.tensor];
  };
  const Function &cfn = fn;
  // dst before src, as the instruction lists them; an operand of a view as one of its base.
  std::vector<Operand> rooted;
  auto operands = [&cfn, &roots, &rooted](const Instruction &inst) {
    std::span<const Operand> ops = cfn.operands(inst);
    if (roots.empty())
      return ops;
    rooted.assign(ops.begin(), ops.end());
    for (Operand &op : rooted)
      if (op.tensor < roots.size())
        op.tensor = roots[op.tensor];
    return std::span<const Operand>(rooted);
  };

  std::vector<std::size_t> last_use(n, 0);
  for (std::size_t i = 0; i < fn.instructions.size(); ++i) {
    for (const Operand &ap : operands(fn.instructions[i]))
      if (tile_of(ap))
        last_use[ap.tensor] = i;
  }

  Pool sbuf(sbuf_bytes_per_partition, false);
  Pool psum(psum_bytes_per_partition, true);
  std::int64_t sbuf_in_use = 0, psum_in_use = 0;
  std::vector<TileState> state(n, TileState::Unused);

  // The bytes of the tiles the kernel placed itself are kept from the other tiles for the
  // whole kernel (NKI does not mix the two in one kernel; nkicc places the rest around them).
  std::vector<TensorId> placed; // used tiles the kernel placed, in id order
  std::vector<bool> used(n, false);
  for (const Instruction &inst : fn.instructions)
    for (const Operand &ap : operands(inst))
      if (tile_of(ap))
        used[ap.tensor] = true;
  for (std::size_t id = 0; id < n; ++id) {
    const Tensor &t = fn.tensors[id];
    if (!used[id] || !is_on_chip(t.memory) || !t.user_placed)
      continue;
    std::int64_t capacity = t.memory == Memory::Psum ? psum_bytes_per_partition : sbuf_bytes_per_partition;
    if (t.byte_offset < 0 || t.byte_offset + t.bytes_per_partition() > capacity)
      return AllocationError{static_cast<TensorId>(id), t.memory, t.bytes_per_partition(), capacity,
                             t.byte_offset < 0 ? 0 : t.byte_offset};
    placed.push_back(static_cast<TensorId>(id));
  }
  for (Memory memory : {Memory::Sbuf, Memory::Psum}) {
    // The union of the placed ranges, so that each unit is reserved once.
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    for (TensorId id : placed) {
      const Tensor &t = fn.tensors[id];
      if (t.memory == memory && t.bytes_per_partition() > 0)
        ranges.emplace_back(t.byte_offset / kUnitBytes, units_of(t.byte_offset + t.bytes_per_partition()));
    }
    std::sort(ranges.begin(), ranges.end());
    std::int64_t begin = -1, end = -1;
    auto flush = [&]() {
      if (begin >= 0)
        (memory == Memory::Psum ? psum : sbuf).reserve(begin, end - begin);
    };
    for (auto [lo, hi] : ranges) {
      if (begin >= 0 && lo <= end) {
        end = std::max(end, hi);
        continue;
      }
      flush();
      begin = lo;
      end = hi;
    }
    flush();
  }
  std::vector<TensorId> live_placed;

  for (std::size_t i = 0; i < fn.instructions.size(); ++i) {
    const Instruction &inst = fn.instructions[i];
    // Every tile the instruction touches is live during it: place all newcomers first.
    for (const Operand &ap : operands(inst)) {
      Tensor *t = tile_of(ap);
      if (!t || state[ap.tensor] != TileState::Unused)
        continue;
      bool is_psum = t->memory == Memory::Psum;
      if (t->user_placed) {
        // Two placed tiles live at once must not share bytes of a partition.
        std::int64_t parts = t->shape.empty() ? 0 : t->shape[0];
        for (TensorId o : live_placed) {
          const Tensor &u = fn.tensors[o];
          std::int64_t uparts = u.shape.empty() ? 0 : u.shape[0];
          if (u.memory == t->memory && t->partition_start < u.partition_start + uparts &&
              u.partition_start < t->partition_start + parts &&
              t->byte_offset < u.byte_offset + u.bytes_per_partition() &&
              u.byte_offset < t->byte_offset + t->bytes_per_partition() && t->bytes_per_partition() > 0 &&
              u.bytes_per_partition() > 0) {
            AllocationError e{ap.tensor, t->memory, t->bytes_per_partition(),
                              is_psum ? psum_bytes_per_partition : sbuf_bytes_per_partition,
                              is_psum ? psum_in_use : sbuf_in_use};
            e.overlaps = o;
            e.instruction = i;
            return e;
          }
        }
        live_placed.push_back(ap.tensor);
        (is_psum ? psum_in_use : sbuf_in_use) += t->bytes_per_partition();
        state[ap.tensor] = TileState::Live;
        continue;
      }
      std::int64_t &in_use = is_psum ? psum_in_use : sbuf_in_use;
      std::int64_t capacity = is_psum ? psum_bytes_per_partition : sbuf_bytes_per_partition;
      std::int64_t bytes = t->bytes_per_partition();
      std::int64_t at = -1;
      if (bytes <= capacity)
        at = (is_psum ? psum : sbuf).allocate(units_of(bytes));
      if (at < 0)
        return AllocationError{ap.tensor, t->memory, bytes, capacity, in_use};
      t->byte_offset = at * kUnitBytes;
      in_use += bytes;
      state[ap.tensor] = TileState::Live;
    }
    for (const Operand &ap : operands(inst)) {
      Tensor *t = tile_of(ap);
      if (!t || state[ap.tensor] != TileState::Live || last_use[ap.tensor] != i)
        continue;
      bool is_psum = t->memory == Memory::Psum;
      if (t->user_placed) {
        std::erase(live_placed, ap.tensor);
        (is_psum ? psum_in_use : sbuf_in_use) -= t->bytes_per_partition();
        state[ap.tensor] = TileState::Dead;
        continue;
      }
      (is_psum ? psum : sbuf).release(t->byte_offset / kUnitBytes, units_of(t->bytes_per_partition()));
      (is_psum ? psum_in_use : sbuf_in_use) -= t->bytes_per_partition();
      state[ap.tensor] = TileState::Dead;
    }
  }
  for (const TensorView &v : fn.views)
    if (v.tensor < n && v.base < n && is_on_chip(fn.tensors[v.tensor].memory)) {
      fn.tensors[v.tensor].partition_start = fn.tensors[v.base].partition_start;
      fn.tensors[v.tensor].byte_offset = fn.tensors[v.base].byte_offset;
    }
  return std::nullopt;
}

} // namespace nkicc::ir
