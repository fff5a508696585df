// NKI's collectives: nl.all_reduce across the SPMD programs of one launch, and nki.nccl's
// all_reduce, all_gather, reduce_scatter and collective_permute_implicit across the ranks of a
// replica group. Each emits one Collective instruction per (source, destination) pair, with the
// collective's kind and parameters as attributes, and sets the kernel's has_collectives (seed 001:
// the flag goes into backend_config). nkicc checks what the trace can know, the shapes the
// collective implies and the groups' form; `nkicc simulate` runs one NeuronCore and refuses them.
#include "lowering.h"
#include "op_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace nkicc::nki {

namespace {

constexpr ir::Engine kSync = ir::Engine::Sync;
constexpr ir::Opcode kCollective = ir::Opcode::Collective;

/// The reduction a collective applies: add, maximum or minimum (np.add, np.max, nl.maximum).
std::string reduce_op(OpCall &c) {
  std::string op = c.op_name("op");
  if (op == "max" || op == "amax")
    op = "maximum";
  if (op == "min" || op == "amin")
    op = "minimum";
  if (op != "add" && op != "maximum" && op != "minimum")
    raise_error("ValueError", fmt::format("the op of '{}' must be np.add, np.maximum or np.minimum (nl.add, "
                                          "nl.maximum, nl.minimum), not '{}'",
                                          c.name(), op));
  return op;
}

// nl.all_reduce(x, op, program_axes): x reduced over the programs of the grid along
// program_axes; every program gets the result.
Value lower_all_reduce_programs(OpCall &c) {
  KernelBuilder &kb = c.kb();
  auto x = c.required_tensor("x");
  std::string op = reduce_op(c);
  const Value &axes_arg = c.required("program_axes");
  std::vector<PyConstant> axes;
  std::vector<Value> items;
  if (axes_arg.kind == Value::Kind::Tuple || axes_arg.kind == Value::Kind::List)
    items = axes_arg.seq().items;
  else
    items.push_back(axes_arg);
  if (items.empty())
    raise_error("ValueError", "parameter 'program_axes' of 'all_reduce' needs at least one axis");
  std::set<std::int64_t> seen;
  for (const Value &v : items) {
    std::int64_t axis = int_arg(v, "all_reduce", "program_axes");
    if (axis < 0 || static_cast<std::size_t>(axis) >= kb.grid.size())
      raise_error("ValueError",
                  fmt::format("program axis {} of 'all_reduce' is not an axis of the launch grid, which has {} "
                              "axis{}",
                              axis, kb.grid.size(), kb.grid.size() == 1 ? "" : "es"));
    if (!seen.insert(axis).second)
      raise_error("ValueError", fmt::format("program axis {} of 'all_reduce' is given twice", axis));
    axes.push_back(PyConstant::integer(axis));
  }
  auto out = new_tile(kb, "all_reduce", ir::Memory::Sbuf, x->shape(), c.dtype().value_or(x->tensor().dtype));
  ir::AttrList attrs = {{"collective", PyConstant::str("all_reduce")},
                        {"op", PyConstant::str(op)},
                        {"program_axes", PyConstant::tuple(std::move(axes))}};
  if (!c.flag("parallel_reduce"))
    attrs.emplace_back("parallel_reduce", PyConstant::boolean(false));
  if (c.flag("asynchronous"))
    attrs.emplace_back("asynchronous", PyConstant::boolean(true));
  c.emit({&out->ap, 1}, {&x->ap, 1}, with_mask(std::move(attrs), c.get("mask")));
  return Value::object(out);
}

/// replica_groups: a non-empty list of non-empty groups of distinct non-negative ranks, all of
/// one size, no rank in two groups. Returns the group size; `constant` receives the groups.
std::int64_t replica_groups(OpCall &c, PyConstant &constant) {
  const Value &v = c.required("replica_groups");
  auto groups_error = [&](const std::string &why) {
    raise_error("ValueError", fmt::format("parameter 'replica_groups' of '{}' {}", c.name(), why));
  };
  if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
    groups_error(fmt::format("must be a list of lists of ranks, not '{}'", trace::type_name(v)));
  const std::vector<Value> &groups = v.seq().items;
  if (groups.empty())
    groups_error("needs at least one group");
  std::int64_t size = -1;
  std::set<std::int64_t> ranks;
  std::vector<PyConstant> out;
  for (const Value &g : groups) {
    if (g.kind != Value::Kind::List && g.kind != Value::Kind::Tuple)
      groups_error(fmt::format("must be a list of lists of ranks, but holds '{}'", trace::type_name(g)));
    std::vector<PyConstant> members;
    for (const Value &r : g.seq().items) {
      std::int64_t rank = int_arg(r, c.name(), "replica_groups");
      if (rank < 0)
        groups_error(fmt::format("holds a negative rank, {}", rank));
      if (!ranks.insert(rank).second)
        groups_error(fmt::format("names rank {} twice", rank));
      members.push_back(PyConstant::integer(rank));
    }
    if (members.empty())
      groups_error("holds an empty group");
    if (size >= 0 && static_cast<std::int64_t>(members.size()) != size)
      groups_error(
          fmt::format("holds groups of {} and {} ranks: all groups must be of one size", size, members.size()));
    size = static_cast<std::int64_t>(members.size());
    out.push_back(PyConstant::list(std::move(members)));
  }
  constant = PyConstant::list(std::move(out));
  return size;
}

/// srcs and dsts: lists of one length of tensors, all in HBM or all on chip.
std::vector<std::pair<std::shared_ptr<TensorRef>, std::shared_ptr<TensorRef>>> pairs(OpCall &c) {
  auto list = [&](std::string_view param) {
    const Value &v = c.required(param);
    std::vector<Value> items;
    if (v.kind == Value::Kind::List || v.kind == Value::Kind::Tuple)
      items = v.seq().items;
    else
      items.push_back(v);
    std::vector<std::shared_ptr<TensorRef>> out;
    for (const Value &item : items)
      out.push_back(as_tensor(item, c.name(), param));
    if (out.empty())
      raise_error("ValueError", fmt::format("parameter '{}' of '{}' needs at least one tensor", param, c.name()));
    return out;
  };
  auto srcs = list("srcs"), dsts = list("dsts");
  if (srcs.size() != dsts.size())
    raise_error("ValueError",
                fmt::format("'{}' got {} source{} and {} destination{}: give one destination per source", c.name(),
                            srcs.size(), srcs.size() == 1 ? "" : "s", dsts.size(), dsts.size() == 1 ? "" : "s"));
  bool on_chip = ir::is_on_chip(srcs[0]->tensor().memory);
  std::vector<std::pair<std::shared_ptr<TensorRef>, std::shared_ptr<TensorRef>>> out;
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    for (const auto *t : {&srcs[i], &dsts[i]})
      if (ir::is_on_chip((*t)->tensor().memory) != on_chip)
        raise_error("ValueError",
                    fmt::format("the tensors of '{}' must be all in HBM or all on chip: '{}' is in {}, "
                                "'{}' in {}",
                                c.name(), srcs[0]->tensor().name, ir::memory_name(srcs[0]->tensor().memory),
                                (*t)->tensor().name, ir::memory_name((*t)->tensor().memory)));
    out.emplace_back(srcs[i], dsts[i]);
  }
  if (on_chip && out.size() > 1)
    raise_error("ValueError",
                fmt::format("'{}' reduces several tensors in one collective only in HBM, not on chip", c.name()));
  return out;
}

/// The dimension parameter of all_gather / reduce_scatter, checked against the rank.
std::size_t collective_dim(OpCall &c, std::string_view param, const TensorRef &src) {
  std::int64_t dim = c.integer(param);
  std::int64_t rank = static_cast<std::int64_t>(src.shape().size());
  if (dim < 0)
    dim += rank;
  if (dim < 0 || dim >= rank)
    raise_error("ValueError", fmt::format("parameter '{}' of '{}' is {}, but '{}' has {} dimensions", param, c.name(),
                                          c.integer(param), src.tensor().name, rank));
  return static_cast<std::size_t>(dim);
}

/// `dst` must have `want`'s shape; the message says what the collective implies.
void check_dst_shape(OpCall &c, const TensorRef &src, const TensorRef &dst, const ir::Shape &want,
                     std::string_view why) {
  if (dst.shape() == want)
    return;
  raise_error("ValueError",
              fmt::format("'{}' writes {} into '{}' of shape {}: {} (from '{}' {})", c.name(), shape_text(want),
                          dst.tensor().name, shape_text(dst.shape()), why, src.tensor().name, shape_text(src.shape())));
}

void emit_pairs(OpCall &c, const char *kind, const ir::AttrList &extra) {
  PyConstant groups;
  std::int64_t group_size = replica_groups(c, groups);
  std::string op = c.has("op") ? reduce_op(c) : std::string();
  for (auto &[src, dst] : pairs(c)) {
    ir::Shape want = src->shape();
    std::string_view why = "the source's shape";
    std::int64_t dim = -1;
    if (std::string_view(kind) == "all_gather") {
      dim = static_cast<std::int64_t>(collective_dim(c, "all_gather_dim", *src));
      want[static_cast<std::size_t>(dim)] = checked_mul(want[static_cast<std::size_t>(dim)], group_size);
      why = "the source's shape with all_gather_dim times the group size";
    } else if (std::string_view(kind) == "reduce_scatter") {
      dim = static_cast<std::int64_t>(collective_dim(c, "reduce_scatter_dim", *src));
      std::int64_t n = want[static_cast<std::size_t>(dim)];
      if (n % group_size != 0)
        raise_error("ValueError", fmt::format("'reduce_scatter' splits dimension {} of '{}' ({}) over groups of {} "
                                              "ranks: it must divide evenly",
                                              dim, src->tensor().name, n, group_size));
      want[static_cast<std::size_t>(dim)] = n / group_size;
      why = "the source's shape with reduce_scatter_dim divided by the group size";
    }
    check_dst_shape(c, *src, *dst, want, why);
    if (auto dtype = c.dtype(); dtype && *dtype != dst->tensor().dtype)
      raise_error("TypeError", fmt::format("the dtype of '{}' is {}, but its destination '{}' is {}", c.name(),
                                           dtype_name(*dtype), dst->tensor().name, dtype_name(dst->tensor().dtype)));
    ir::AttrList attrs = {{"collective", PyConstant::str(kind)}};
    if (!op.empty())
      attrs.emplace_back("op", PyConstant::str(op));
    attrs.emplace_back("replica_groups", groups);
    if (dim >= 0)
      attrs.emplace_back("dim", PyConstant::integer(dim));
    attrs.insert(attrs.end(), extra.begin(), extra.end());
    c.emit({&dst->ap, 1}, {&src->ap, 1}, attrs);
  }
}

Value lower_nccl_all_reduce(OpCall &c) {
  emit_pairs(c, "all_reduce", {});
  return Value();
}

Value lower_nccl_all_gather(OpCall &c) {
  emit_pairs(c, "all_gather", {});
  return Value();
}

Value lower_nccl_reduce_scatter(OpCall &c) {
  emit_pairs(c, "reduce_scatter", {});
  return Value();
}

// collective_permute_implicit(dst, src, replica_groups, channel_id, num_channels): src sent to
// the next rank of the group (the ring the runtime sets up), dst received from the previous one.
Value lower_collective_permute_implicit(OpCall &c) {
  auto dst = c.required_tensor("dst"), src = c.required_tensor("src");
  PyConstant groups;
  replica_groups(c, groups);
  check_dst_shape(c, *src, *dst, src->shape(), "the source's shape");
  std::int64_t channels = c.integer("num_channels"), channel = c.integer("channel_id");
  if (channels <= 0 || channel < 0 || channel >= channels)
    raise_error("ValueError", fmt::format("'collective_permute_implicit' has channel_id {} of num_channels {}: the "
                                          "channel must be in [0, num_channels)",
                                          channel, channels));
  ir::AttrList attrs = {{"collective", PyConstant::str("collective_permute_implicit")},
                        {"replica_groups", groups},
                        {"channel_id", PyConstant::integer(channel)},
                        {"num_channels", PyConstant::integer(channels)}};
  c.emit({&dst->ap, 1}, {&src->ap, 1}, with_mask(std::move(attrs), c.get("mask")));
  return Value();
}

const OpDef kLanguageOps[] = {
    {"all_reduce(x: tile, op: op, program_axes: any, *, dtype: dtype? = None, mask: mask? = None, "
     "parallel_reduce: bool = True, asynchronous: bool = False)",
     kSync, kCollective, lower_all_reduce_programs},
};

const OpDef kNcclOps[] = {
    {"all_reduce(*, op: op, srcs: any, dsts: any, replica_groups: any, dtype: dtype? = None)", kSync, kCollective,
     lower_nccl_all_reduce},
    {"all_gather(*, op: op? = None, srcs: any, dsts: any, replica_groups: any, all_gather_dim: int, "
     "dtype: dtype? = None)",
     kSync, kCollective, lower_nccl_all_gather},
    {"reduce_scatter(*, op: op, srcs: any, dsts: any, replica_groups: any, reduce_scatter_dim: int, "
     "dtype: dtype? = None)",
     kSync, kCollective, lower_nccl_reduce_scatter},
    {"collective_permute_implicit(*, dst: tensor, src: tensor, replica_groups: any, channel_id: int = 0, "
     "num_channels: int = 1, mask: mask? = None)",
     kSync, kCollective, lower_collective_permute_implicit},
};

} // namespace

std::span<const OpDef> language_collective_ops() { return kLanguageOps; }
std::span<const OpDef> nccl_ops() { return kNcclOps; }

} // namespace nkicc::nki
