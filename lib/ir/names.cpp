#include "nkicc/ir/kernel_ir.h"

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace nkicc::ir {
namespace {

struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

} // namespace

void number_tensor_names(Function &fn) {
  // The names taken so far are (a) every key of `counters`: the names tensors kept as they were,
  // plus numbered names a later tensor chose again, each with its next number; and (b) the
  // numbered names `stem.k` for k in 1..counters[stem]. A numbered name ends in `.digits`
  // without a leading zero, so it names exactly one stem and number; tensors get numbered
  // names without a map entry each, which keeps a trace of ten million tiles cheap.
  std::unordered_map<std::string, std::int64_t, NameHash, std::equal_to<>> counters;
  auto numbered = [&counters](std::string_view name) {
    std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot + 1 == name.size() || name[dot + 1] == '0')
      return false;
    std::int64_t k = 0;
    auto [end, ec] = std::from_chars(name.data() + dot + 1, name.data() + name.size(), k);
    if (ec != std::errc() || end != name.data() + name.size())
      return false;
    auto stem = counters.find(name.substr(0, dot));
    return stem != counters.end() && k <= stem->second;
  };
  // A name taken already: the stem and number it takes instead (the stem is the map's key,
  // which stays where it is). Nothing when the name is free: it is kept, and taken from now on.
  std::string candidate;
  auto unique = [&](const std::string &name) -> std::optional<std::pair<std::string_view, std::uint32_t>> {
    auto it = counters.find(std::string_view(name));
    if (it == counters.end()) {
      bool taken = numbered(name);
      it = counters.emplace(name, 0).first;
      if (!taken)
        return std::nullopt;
    }
    // A stem's own numbers only grow, and another stem's numbered names cannot be `stem.k`,
    // so only the kept names can collide with a candidate.
    do {
      candidate = it->first;
      candidate += '.';
      candidate += std::to_string(++it->second);
    } while (counters.count(std::string_view(candidate)));
    // (A kernel has fewer than 2^32 tensors, TensorId's range, so the number fits.)
    return std::pair{std::string_view(it->first), static_cast<std::uint32_t>(it->second)};
  };
  // Which block tensor, and which of its blocks, each block tile is.
  std::unordered_map<TensorId, std::pair<std::size_t, std::size_t>> block_of;
  for (std::size_t g = 0; g < fn.block_tensors.size(); ++g)
    for (std::size_t b = 0; b < fn.block_tensors[g].blocks.size(); ++b)
      if (fn.block_tensors[g].blocks[b] != kNoTensor)
        block_of.emplace(fn.block_tensors[g].blocks[b], std::pair{g, b});
  std::vector<bool> named(fn.block_tensors.size(), false);
  for (std::size_t id = 0; id < fn.tensors.size(); ++id) {
    Tensor &t = fn.tensors[id];
    auto block = block_of.empty() ? block_of.end() : block_of.find(static_cast<TensorId>(id));
    if (block == block_of.end()) {
      if (auto numbered_as = unique(t.name.str()))
        t.name = TensorName(numbered_as->first, numbered_as->second);
      continue;
    }
    BlockTensor &group = fn.block_tensors[block->second.first];
    if (!named[block->second.first]) {
      if (auto numbered_as = unique(group.name))
        group.name = TensorName(numbered_as->first, numbered_as->second).str();
      named[block->second.first] = true;
    }
    std::string name = group.name + '[';
    std::vector<std::int64_t> index = group.block_index(block->second.second);
    for (std::size_t d = 0; d < index.size(); ++d) {
      if (d)
        name += ", ";
      name += std::to_string(index[d]);
    }
    name += ']';
    t.name = TensorName(name);
    counters.emplace(std::move(name), 0);
  }
}

} // namespace nkicc::ir
