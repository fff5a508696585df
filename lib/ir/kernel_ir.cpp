#include "nkicc/ir/kernel_ir.h"

#include "nkicc/cache/py_repr.h"
#include "nkicc/support/sha256.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

namespace nkicc::ir {

std::string_view memory_name(Memory m) {
  switch (m) {
  case Memory::SharedHbm:
    return "shared_hbm";
  case Memory::PrivateHbm:
    return "private_hbm";
  case Memory::Sbuf:
    return "sbuf";
  case Memory::Psum:
    return "psum";
  }
  return "?";
}

std::string_view role_name(TensorRole r) {
  switch (r) {
  case TensorRole::Input:
    return "input";
  case TensorRole::Output:
    return "output";
  case TensorRole::Internal:
    return "internal";
  case TensorRole::Constant:
    return "constant";
  }
  return "?";
}

std::string constant_data_text(std::span<const std::uint8_t> bytes) {
  std::string digest =
      sha256_hex(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size())).substr(0, 16);
  return " data=sha256:" + digest;
}

std::vector<TensorId> Function::storage_roots() const {
  std::vector<TensorId> roots(tensors.size());
  for (std::size_t i = 0; i < roots.size(); ++i)
    roots[i] = static_cast<TensorId>(i);
  for (const TensorView &v : views)
    if (v.tensor < roots.size())
      roots[v.tensor] = v.base;
  return roots;
}

TensorId Function::view_base(TensorId id) const {
  for (const TensorView &v : views)
    if (v.tensor == id)
      return v.base;
  return kNoTensor;
}

const ConstantData *Function::constant_data(TensorId id) const {
  for (const ConstantData &c : constants)
    if (c.tensor == id)
      return &c;
  return nullptr;
}

std::string_view engine_name(Engine e) {
  switch (e) {
  case Engine::Tensor:
    return "tensor";
  case Engine::Vector:
    return "vector";
  case Engine::Scalar:
    return "scalar";
  case Engine::GpSimd:
    return "gpsimd";
  case Engine::Sync:
    return "sync";
  }
  return "?";
}

std::string_view opcode_name(Opcode op) {
  switch (op) {
  case Opcode::Load:
    return "load";
  case Opcode::Store:
    return "store";
  case Opcode::DmaCopy:
    return "dma_copy";
  case Opcode::TensorCopy:
    return "tensor_copy";
  case Opcode::MatMul:
    return "matmul";
  case Opcode::Transpose:
    return "transpose";
  case Opcode::TensorTensor:
    return "tensor_tensor";
  case Opcode::TensorScalar:
    return "tensor_scalar";
  case Opcode::Activation:
    return "activation";
  case Opcode::TensorReduce:
    return "tensor_reduce";
  case Opcode::Memset:
    return "memset";
  case Opcode::Iota:
    return "iota";
  case Opcode::AffineSelect:
    return "affine_select";
  case Opcode::BnStats:
    return "bn_stats";
  case Opcode::BnAggr:
    return "bn_aggr";
  case Opcode::Select:
    return "select";
  case Opcode::Collective:
    return "collective";
  case Opcode::TensorTensorScan:
    return "tensor_tensor_scan";
  case Opcode::PartitionReduce:
    return "partition_reduce";
  case Opcode::SelectReduce:
    return "select_reduce";
  case Opcode::ScalarTensorTensor:
    return "scalar_tensor_tensor";
  case Opcode::Max8:
    return "max8";
  case Opcode::FindIndex8:
    return "find_index8";
  case Opcode::MatchReplace8:
    return "match_replace8";
  case Opcode::StreamShuffle:
    return "stream_shuffle";
  case Opcode::Rand:
    return "rand";
  case Opcode::RandomSeed:
    return "random_seed";
  case Opcode::Dropout:
    return "dropout";
  case Opcode::SequenceBounds:
    return "sequence_bounds";
  case Opcode::RangeSelect:
    return "range_select";
  case Opcode::LocalGather:
    return "local_gather";
  case Opcode::DevicePrint:
    return "device_print";
  case Opcode::GatherFlattened:
    return "gather_flattened";
  case Opcode::MatMulMx:
    return "matmul_mx";
  case Opcode::QuantizeMx:
    return "quantize_mx";
  }
  return "?";
}

Shape AccessPattern::shape() const {
  Shape out;
  out.reserve(pattern.size());
  for (const auto &[step, num] : pattern)
    out.push_back(num);
  return out;
}

// ---- interning ------------------------------------------------------------------------------

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // FNV-1a over 64-bit words, then a final avalanche in hash_of: cheap and good enough for
  // the few thousand distinct lists of a trace.
  return (h ^ v) * 0x100000001b3ULL;
}
std::uint64_t item_hash(std::int64_t v) { return static_cast<std::uint64_t>(v); }
std::uint64_t item_hash(std::uint32_t v) { return v; }
std::uint64_t item_hash(char c) { return static_cast<unsigned char>(c); }
std::uint64_t item_hash(const std::pair<std::int64_t, std::int64_t> &p) {
  return static_cast<std::uint64_t>(p.first) * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(p.second);
}

} // namespace

template <class T> std::uint64_t ListInterner<T>::hash_of(const T *items, std::size_t count) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ count;
  for (std::size_t i = 0; i < count; ++i)
    h = mix(h, item_hash(items[i]));
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 32);
}

template <class T> std::uint32_t ListInterner<T>::intern(const T *items, std::size_t count) {
  if (slots_.empty() || (entries_.size() + 1) * 2 > slots_.size())
    grow();
  std::uint64_t h = hash_of(items, count);
  std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    std::uint32_t slot = slots_[i];
    if (slot == 0) {
      if (entries_.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
        throw std::length_error("too many distinct lists in one kernel");
      entries_.push_back({items_.size(), static_cast<std::uint32_t>(count), h});
      items_.insert(items_.end(), items, items + count);
      slots_[i] = static_cast<std::uint32_t>(entries_.size());
      return static_cast<std::uint32_t>(entries_.size() - 1);
    }
    const Entry &e = entries_[slot - 1];
    if (e.hash == h && e.count == count) {
      // An element loop, not std::equal: these lists are a few items long, and std::equal of
      // trivially copyable items becomes a call to memcmp.
      const T *stored = items_.data() + e.start;
      std::size_t k = 0;
      while (k < count && items[k] == stored[k])
        ++k;
      if (k == count)
        return slot - 1;
    }
  }
}

template <class T> void ListInterner<T>::grow() {
  std::vector<std::uint32_t> slots(slots_.empty() ? 64 : slots_.size() * 2, 0);
  std::size_t mask = slots.size() - 1;
  for (std::uint32_t id = 0; id < entries_.size(); ++id) {
    std::size_t i = entries_[id].hash & mask;
    while (slots[i])
      i = (i + 1) & mask;
    slots[i] = id + 1;
  }
  slots_ = std::move(slots);
}

template class ListInterner<std::pair<std::int64_t, std::int64_t>>;
template class ListInterner<std::int64_t>;
template class ListInterner<std::uint32_t>;
template class ListInterner<char>;

// ---- functions ------------------------------------------------------------------------------

std::int64_t BlockTensor::num_blocks() const {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < partition_dim && d < shape.size(); ++d)
    n *= shape[d];
  return n;
}

std::vector<std::int64_t> BlockTensor::block_index(std::size_t block) const {
  std::vector<std::int64_t> index(partition_dim, 0);
  auto rest = static_cast<std::int64_t>(block);
  for (std::size_t d = partition_dim; d-- > 0;) {
    index[d] = rest % shape[d];
    rest /= shape[d];
  }
  return index;
}

Function::Function() {
  // Id 0 of each pool is the common case: no grid term, no attributes.
  std::array<std::int64_t, kMaxGridAxes> zeros{};
  programs_.intern(zeros.data(), zeros.size());
  attr_keys_.intern(nullptr, 0);
  attr_lists_.emplace_back();
}

Operand Function::store(const AccessPattern &ap) {
  Operand op;
  op.tensor = ap.tensor;
  std::uint32_t pattern = patterns_.intern(ap.pattern.data(), ap.pattern.size());
  // Most views have no grid term: id 0 without a lookup.
  bool gridless =
      std::all_of(ap.program_offset.begin(), ap.program_offset.end(), [](std::int64_t c) { return c == 0; });
  std::uint32_t program = gridless ? 0 : programs_.intern(ap.program_offset.data(), ap.program_offset.size());
  // Consecutive operands often share their view (a loop's loads): no second lookup then.
  if (pattern != recent_view_.pattern || program != recent_view_.program) {
    std::array<std::uint32_t, 2> pair = {pattern, program};
    recent_view_ = {pattern, program, views_.intern(pair.data(), pair.size())};
  }
  op.view = recent_view_.view;
  op.offset = ap.offset;
  return op;
}

void Function::append(Instruction header, std::span<const AccessPattern> dst, std::span<const AccessPattern> src,
                      const AttrList &attrs) {
  if (dst.size() > 255 || src.size() > 255)
    throw std::length_error("an instruction with more than 255 destinations or sources");
  header.num_dst = static_cast<std::uint8_t>(dst.size());
  header.num_src = static_cast<std::uint8_t>(src.size());
  std::size_t count = dst.size() + src.size();
  if (count > operands_.room_in_segment())
    operands_.resize(operands_.size() + operands_.room_in_segment());
  if (operands_.size() + count > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("more than 2^32 operands in one kernel");
  if (instructions.size() >= std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("more than 2^32 - 1 instructions in one kernel");
  header.first_operand = static_cast<std::uint32_t>(operands_.size());
  for (const AccessPattern &ap : dst)
    operands_.push_back(store(ap));
  for (const AccessPattern &ap : src)
    operands_.push_back(store(ap));
  header.attrs = 0;
  instructions.push_back(header);
  if (!attrs.empty())
    set_attrs(instructions.back(), attrs);
}

AccessPattern Function::access_pattern(const Operand &op) const {
  AccessPattern ap;
  ap.tensor = op.tensor;
  auto pairs = pattern(op);
  ap.pattern.assign(pairs.begin(), pairs.end());
  ap.offset = op.offset;
  auto program = program_offset(op);
  std::copy(program.begin(), program.end(), ap.program_offset.begin());
  return ap;
}

void Function::set_dst(Instruction &inst, std::size_t i, const AccessPattern &ap) {
  operands_[inst.first_operand + i] = store(ap);
}

namespace {

/// Whether two attribute values are the same Python value of the same type: floats compare by
/// their bits, so that -0.0 and 0.0 (equal as numbers, different as repr) stay apart.
bool identical(const PyConstant &a, const PyConstant &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case PyConstant::Kind::None:
    return true;
  case PyConstant::Kind::Bool:
    return a.b == b.b;
  case PyConstant::Kind::Int:
    return a.i == b.i;
  case PyConstant::Kind::Float:
    return std::bit_cast<std::uint64_t>(a.f) == std::bit_cast<std::uint64_t>(b.f);
  case PyConstant::Kind::Str:
    return a.s == b.s;
  case PyConstant::Kind::Tuple:
  case PyConstant::Kind::List:
    return std::equal(a.items.begin(), a.items.end(), b.items.begin(), b.items.end(), identical);
  case PyConstant::Kind::Dict:
    return std::equal(a.dict.begin(), a.dict.end(), b.dict.begin(), b.dict.end(),
                      [](const auto &x, const auto &y) { return x.first == y.first && identical(x.second, y.second); });
  case PyConstant::Kind::Ref:
    return a.s == b.s && a.b == b.b &&
           std::equal(a.dict.begin(), a.dict.end(), b.dict.begin(), b.dict.end(),
                      [](const auto &x, const auto &y) { return x.first == y.first && identical(x.second, y.second); });
  }
  return false;
}

bool identical(const AttrList &a, const AttrList &b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const auto &x, const auto &y) { return x.first == y.first && identical(x.second, y.second); });
}

} // namespace

void Function::set_attrs(Instruction &inst, const AttrList &attrs) {
  // An unrolled loop sets the same few lists over and over (a matmul's, then its accumulating
  // form): the lists interned last are checked before a key is built.
  for (std::uint32_t id : recent_attrs_)
    if (identical(attr_lists_[id], attrs)) {
      inst.attrs = id;
      return;
    }
  // Python's repr tells every attribute value apart (1, 1.0 and True; -0.0; tuples and lists).
  std::string key;
  for (const auto &[attr_name, value] : attrs) {
    key += attr_name;
    key += '=';
    append_py_repr(key, value);
    key += '\0';
  }
  std::uint32_t id = attr_keys_.intern(key.data(), key.size());
  if (id == attr_lists_.size())
    attr_lists_.push_back(attrs);
  inst.attrs = id;
  recent_attrs_[next_recent_++ % recent_attrs_.size()] = id;
}

std::int64_t bytes_per_partition(const Tensor &t) {
  // Saturates instead of overflowing: an absurd shape must fail allocation, not wrap around.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t bytes = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (std::size_t d = 1; d < t.shape.size(); ++d) {
    std::int64_t n = t.shape[d] < 0 ? 0 : t.shape[d];
    if (n == 0)
      return 0;
    bytes = bytes > kMax / n ? kMax : bytes * n;
  }
  return bytes;
}

std::int64_t Tensor::bytes_per_partition() const { return is_on_chip(memory) ? ir::bytes_per_partition(*this) : 0; }

} // namespace nkicc::ir
