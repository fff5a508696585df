// DictData: CPython's compact dict. Entries sit in insertion order in one array; an
// open-addressing index of positions, probed as CPython probes (`i = 5i + 1 + perturb`), finds
// them by hash. A removed entry stays as a hole until the next rebuild, so that positions
// (which iterators hold) do not move while a dict is only read.
#include "common.h"

#include "nkicc/trace/pylib.h"

#include <limits>

namespace nkicc::trace {

using namespace pylib;

namespace {
constexpr std::int32_t kEmpty = -1;
constexpr std::int32_t kDummy = -2; ///< a removed entry's slot: probing goes on past it
constexpr std::size_t kMinIndexSize = 8;
constexpr unsigned kPerturbShift = 5;

/// Entries an index of `n` slots may address (CPython's USABLE_FRACTION).
std::size_t usable(std::size_t n) { return n * 2 / 3; }
} // namespace

std::int64_t DictData::lookup(Interpreter *interp, const Value &key, std::int64_t hash) {
restart:
  if (index_.empty())
    return -1;
  std::size_t mask = index_.size() - 1;
  std::uint64_t perturb = static_cast<std::uint64_t>(hash);
  std::size_t i = static_cast<std::size_t>(hash) & mask;
  std::int64_t free_slot = -1;
  std::uint64_t version = version_;
  while (true) {
    std::int32_t ix = index_[i];
    if (ix == kEmpty)
      return -(static_cast<std::int64_t>(free_slot >= 0 ? static_cast<std::size_t>(free_slot) : i) + 1);
    if (ix == kDummy) {
      if (free_slot < 0)
        free_slot = static_cast<std::int64_t>(i);
    } else if (hashes_[static_cast<std::size_t>(ix)] == hash) {
      // `==` may be Python code that changes this dict: hold the key, and start again when the
      // table changed under the comparison (CPython does the same).
      Value held = entries_[static_cast<std::size_t>(ix)].first;
      bool equal = keys_equal(interp, held, key);
      if (version != version_)
        goto restart;
      if (equal)
        return static_cast<std::int64_t>(i);
    }
    perturb >>= kPerturbShift;
    i = (i * 5 + perturb + 1) & mask;
  }
}

void DictData::insert_index(std::int64_t hash, std::int32_t position) {
  std::size_t mask = index_.size() - 1;
  std::uint64_t perturb = static_cast<std::uint64_t>(hash);
  std::size_t i = static_cast<std::size_t>(hash) & mask;
  while (index_[i] >= 0) {
    perturb >>= kPerturbShift;
    i = (i * 5 + perturb + 1) & mask;
  }
  index_[i] = position;
}

void DictData::rebuild(std::size_t min_capacity) {
  if (used_ != entries_.size()) {
    std::size_t out = 0;
    for (std::size_t k = 0; k < entries_.size(); ++k) {
      if (hashes_[k] == kRemoved)
        continue;
      if (out != k) {
        entries_[out] = std::move(entries_[k]);
        hashes_[out] = hashes_[k];
      }
      ++out;
    }
    entries_.resize(out);
    hashes_.resize(out);
  }
  std::size_t want = std::max(min_capacity, used_ * 3 / 2 + 1);
  std::size_t n = kMinIndexSize;
  while (usable(n) < want)
    n *= 2;
  index_.assign(n, kEmpty);
  for (std::size_t k = 0; k < entries_.size(); ++k)
    insert_index(hashes_[k], static_cast<std::int32_t>(k));
  ++version_;
}

Value *DictData::find(Interpreter *interp, const Value &key) {
  std::int64_t hash = hash_value(interp, key);
  std::int64_t slot = lookup(interp, key, hash);
  if (slot < 0)
    return nullptr;
  return &entries_[static_cast<std::size_t>(index_[static_cast<std::size_t>(slot)])].second;
}

void DictData::set(Interpreter *interp, const Value &key, Value value) {
  std::int64_t hash = hash_value(interp, key);
  std::int64_t slot = lookup(interp, key, hash);
  if (slot >= 0) {
    entries_[static_cast<std::size_t>(index_[static_cast<std::size_t>(slot)])].second = std::move(value);
    return;
  }
  if (entries_.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    raise_python("MemoryError", "a dict holds at most 2147483647 entries in nkicc");
  auto position = static_cast<std::int32_t>(entries_.size());
  entries_.emplace_back(key, std::move(value));
  hashes_.push_back(hash);
  ++used_;
  ++version_;
  if (index_.empty() || entries_.size() > usable(index_.size())) {
    rebuild(used_ * 3); // grows by CPython's GROWTH_RATE, and drops the holes
    return;
  }
  index_[static_cast<std::size_t>(-slot - 1)] = position;
}

bool DictData::erase(Interpreter *interp, const Value &key, Value *removed) {
  std::int64_t hash = hash_value(interp, key);
  std::int64_t slot = lookup(interp, key, hash);
  if (slot < 0)
    return false;
  auto position = static_cast<std::size_t>(index_[static_cast<std::size_t>(slot)]);
  index_[static_cast<std::size_t>(slot)] = kDummy;
  Item item = std::move(entries_[position]);
  entries_[position] = Item();
  hashes_[position] = kRemoved;
  --used_;
  ++version_;
  // A hole at the end is dropped at once, so that popping from the back keeps the array dense.
  while (!entries_.empty() && hashes_.back() == kRemoved) {
    entries_.pop_back();
    hashes_.pop_back();
  }
  if (removed)
    *removed = std::move(item.second);
  return true;
}

std::optional<DictData::Item> DictData::pop_last() {
  if (used_ == 0)
    return std::nullopt;
  std::size_t position = entries_.size() - 1; // the last entry is live: erase() drops trailing holes
  std::int64_t hash = hashes_[position];
  std::size_t mask = index_.size() - 1;
  std::uint64_t perturb = static_cast<std::uint64_t>(hash);
  std::size_t i = static_cast<std::size_t>(hash) & mask;
  while (index_[i] != static_cast<std::int32_t>(position)) {
    perturb >>= kPerturbShift;
    i = (i * 5 + perturb + 1) & mask;
  }
  index_[i] = kDummy;
  Item item = std::move(entries_[position]);
  entries_.pop_back();
  hashes_.pop_back();
  while (!entries_.empty() && hashes_.back() == kRemoved) {
    entries_.pop_back();
    hashes_.pop_back();
  }
  --used_;
  ++version_;
  return item;
}

void DictData::clear() {
  std::vector<Item> old = std::move(entries_);
  entries_.clear();
  hashes_.clear();
  index_.clear();
  used_ = 0;
  ++version_;
  // `old` releases its nested containers through their own (non-recursive) destructors.
}

} // namespace nkicc::trace
