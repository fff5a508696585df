#include "tensor.h"

#include "nkicc/trace/pylib.h"

#include "index.h"
#include "lowering.h"
#include "objects.h"

#include <fmt/format.h>

#include <algorithm>

namespace nkicc::nki {

using python::BinOpKind;
using python::UnaryOpKind;

namespace {

/// `offsets[0, i] + iy`: one element of a tile, read at run time, plus an index tile: it indexes
/// a dimension of an on-chip tile at a dynamic offset (nisa.tensor_copy_dynamic_src), the
/// index tile's part placed as any index tile's.
class DynamicIndexObject : public Object {
public:
  DynamicIndexObject(std::shared_ptr<TensorRef> t, Value i) : tile(std::move(t)), index(std::move(i)) {}
  std::string_view type_name() const override { return "DynamicIndex"; }
  std::string repr() const override { return tile->describe() + " + " + trace::repr(index); }
  std::shared_ptr<TensorRef> tile;
  Value index; ///< an IndexObject
};

} // namespace

const ir::Tensor &TensorRef::tensor() const { return builder->fn.tensors[ap.tensor]; }

std::string_view TensorRef::type_name() const {
  switch (tensor().memory) {
  case ir::Memory::Sbuf:
  case ir::Memory::Psum:
    return "tile";
  default:
    return "tensor";
  }
}

std::string TensorRef::describe() const { return tensor().name.str() + shape_text(shape()); }

std::string TensorRef::repr() const {
  return fmt::format("{}({}, {}, {})", type_name(), describe(), dtype_name(tensor().dtype),
                     ir::memory_name(tensor().memory));
}

void TensorRef::on_bind(std::string_view name) {
  // Only the whole tile takes the variable's name: `acc = tiles[0][:, 0:512]` names a view.
  if (!builder || !builder->auto_named[ap.tensor] || ap.offset != 0 ||
      ap.program_offset != decltype(ap.program_offset){})
    return;
  const ir::Shape &shape = tensor().shape;
  if (ap.pattern.size() != shape.size())
    return;
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (ap.pattern[i] != std::pair<std::int64_t, std::int64_t>{step, shape[i]})
      return;
    step *= shape[i];
  }
  builder->rename(ap.tensor, name);
}

bool TensorRef::truthy(Interpreter &) {
  raise_error("TypeError", fmt::format("the truth value of {} '{}' is not known while tracing: its values exist only "
                                       "on the device",
                                       type_name(), tensor().name));
}

std::optional<Value> TensorRef::get_attr(Interpreter &interp, std::string_view name) {
  if (name == "shape") {
    std::vector<Value> dims;
    for (std::int64_t d : shape())
      dims.push_back(Value::integer(d));
    return Value::tuple(std::move(dims));
  }
  if (name == "dtype")
    return trace::make_dtype_value(tensor().dtype, false); // lib: NumPy's dtype (nkicc/trace/numpy.h)
  if (name == "ndim")
    return Value::integer(static_cast<std::int64_t>(ap.pattern.size()));
  if (name == "buffer")
    return Value::object(std::make_shared<BufferObject>(tensor().memory));
  if (name == "name")
    return Value::str(tensor().name);
  auto self = std::make_shared<TensorRef>(*this);
  return tensor_method(interp, self, name);
}

namespace {

struct Bound {
  std::int64_t lo, hi; // smallest and largest index touched over all SPMD instances
};

/// The range of an index expression over its index tile and every SPMD instance of the grid.
Bound index_range(const IndexObject &e, const std::vector<std::int64_t> &grid) {
  std::int64_t lo = e.constant.constant, hi = e.constant.constant;
  auto add = [&](std::int64_t span) { (span < 0 ? lo : hi) = checked_add(span < 0 ? lo : hi, span); };
  for (std::size_t a = 0; a < e.constant.coef.size(); ++a)
    add(checked_mul(e.constant.coef[a], a < grid.size() ? grid[a] - 1 : 0));
  for (const IndexTerm &t : e.terms)
    add(checked_mul(t.coef, t.count - 1));
  return {lo, hi};
}

std::int64_t slice_int(const Value &v, const char *what) {
  if (v.kind == Value::Kind::Int)
    return v.i;
  if (v.kind == Value::Kind::Bool)
    return v.b;
  if (std::optional<Value> n = trace::index_number(v)) // lib: a NumPy integer
    return n->kind == Value::Kind::Bool ? n->b : n->i;
  raise_error("TypeError", fmt::format("slice {} must be an integer, not '{}'", what, trace::type_name(v)));
}

/// Lowers one indexing of a view to the sub-view's access pattern, checking every index
/// against its dimension.
class Indexer {
public:
  Indexer(const TensorRef &base, TensorRef &out) : base_(base), out_(out), grid_(base.builder->grid) {
    out_.builder = base.builder;
    out_.out_of_bound = base.out_of_bound;
    out_.ap.tensor = base.ap.tensor;
    out_.ap.offset = base.ap.offset;
    out_.ap.program_offset = base.ap.program_offset;
  }

  /// Offsets the view by `step * start` and checks the indices `start + terms` against the
  /// dimension's size.
  void place(std::size_t d, const IndexObject &e, std::int64_t step, std::int64_t size) {
    out_.ap.offset = checked_add(out_.ap.offset, checked_mul(step, e.constant.constant));
    for (std::size_t a = 0; a < e.constant.coef.size(); ++a)
      out_.ap.program_offset[a] = checked_add(out_.ap.program_offset[a], checked_mul(step, e.constant.coef[a]));
    for (const IndexTerm &t : e.terms)
      if (t.count <= 0)
        raise_error("IndexError", fmt::format("empty index range on dimension {} of {} '{}'", d, base_.type_name(),
                                              base_.tensor().name));
    Bound b = index_range(e, grid_);
    if ((b.lo < 0 || b.hi >= size) && out_.out_of_bound.empty())
      out_.out_of_bound = fmt::format("Out-of-bound access for tensor `{}` on dimension {}: index range [{}, {}] "
                                      "exceed dimension size of {}",
                                      base_.tensor().name, d, b.lo, b.hi, size);
  }

  /// An integer or program-id index: Python's negative indices count from the end.
  IndexObject integer(const Affine &a, std::int64_t size) {
    IndexObject e;
    e.constant = a;
    if (a.is_constant() && a.constant < 0)
      e.constant.constant += size;
    return e;
  }

private:
  const TensorRef &base_;
  TensorRef &out_;
  const std::vector<std::int64_t> &grid_;
};

} // namespace

Value TensorRef::get_item(Interpreter &, const Value &key) {
  if (const auto *m = key.as<MaskObject>()) {
    auto out = std::make_shared<TensorRef>(*this);
    out->subscript_mask = std::make_shared<const std::string>(m->text);
    return Value::object(out);
  }
  if (indirect)
    raise_error("not-modelled", fmt::format("nkicc does not model indexing a view of tensor '{}' that a tile of "
                                            "indices already indexes",
                                            tensor().name));
  // The index parts, by address (no Value copies): indexing runs for every load and store of
  // an unrolled loop, so it allocates nothing for the usual few dimensions.
  ir::SmallVector<const Value *, 6> parts;
  std::optional<std::vector<Value>> grid_parts = mgrid_items(key);
  if (grid_parts) {
    // `t[nl.mgrid[0:128, 0:512]]` indexes with the grid's tiles.
    for (const Value &item : *grid_parts)
      parts.push_back(&item);
  } else if (key.kind == Value::Kind::Tuple) {
    for (const Value &item : key.seq().items)
      parts.push_back(&item);
  } else {
    parts.push_back(&key);
  }

  // `...` stands for as many full slices as the dimensions not otherwise indexed.
  static const Value full_slice = Value::slice(Value(), Value(), Value());
  std::size_t explicit_dims = 0;
  bool has_ellipsis = false, has_slice = false, has_multi_term = false;
  int index_rank = -1;
  for (const Value *part : parts) {
    const Value &p = *part;
    if (p.kind == Value::Kind::Ellipsis) {
      if (has_ellipsis)
        raise_error("IndexError", "an index can only have a single ellipsis ('...')");
      has_ellipsis = true;
      continue;
    }
    if (p.is_none())
      continue;
    ++explicit_dims;
    const Value &q = p.as<DynamicIndexObject>() ? p.as<DynamicIndexObject>()->index : p;
    if (p.kind == Value::Kind::Slice) {
      has_slice = true;
    } else if (auto *ix = q.as<IndexObject>()) {
      if (!ix->terms.empty()) {
        if (index_rank >= 0 && ix->rank != index_rank)
          raise_error("TypeError", fmt::format("index tiles of {} and {} dimensions cannot index one tensor: place "
                                               "both on the axes of one index space ([:, None], [None, :])",
                                               index_rank, ix->rank));
        index_rank = ix->rank;
        has_multi_term = has_multi_term || ix->terms.size() > 1;
      }
    }
  }
  std::size_t rank = ap.pattern.size();
  if (explicit_dims > rank)
    raise_error("IndexError", fmt::format("too many indices for {} '{}': it has {} dimensions but {} were indexed",
                                          type_name(), tensor().name, rank, explicit_dims));
  ir::SmallVector<const Value *, 6> expanded;
  for (const Value *p : parts) {
    if (p->kind == Value::Kind::Ellipsis) {
      for (std::size_t i = 0; i < rank - explicit_dims; ++i)
        expanded.push_back(&full_slice);
      has_slice = has_slice || rank > explicit_dims;
    } else {
      expanded.push_back(p);
    }
  }
  if (explicit_dims < rank && !has_ellipsis)
    has_slice = true;
  while (expanded.size() -
             std::count_if(expanded.begin(), expanded.end(), [](const Value *v) { return v->is_none(); }) <
         rank)
    expanded.push_back(&full_slice);

  auto out = std::make_shared<TensorRef>();
  Indexer ix(*this, *out);
  bool on_chip = ir::is_on_chip(tensor().memory);

  if (index_rank >= 0 && !has_slice) {
    // Advanced indexing: the view has the index space's axes. The index in each position is
    // an affine combination of axes (an integer is a constant one), and axis a steps by the
    // sum over positions of the position's stride times its coefficient of a. An integer
    // position keeps a size-1 dimension on an axis no index tile uses, as NKI's tiles stay
    // at least 2-D (`t[ip, k]` on a [P, N] tile is [P, 1]).
    ir::PatternPairs by_axis;
    by_axis.resize(static_cast<std::size_t>(index_rank), {1, 1});
    ir::SmallVector<bool, 8> used;
    used.resize(static_cast<std::size_t>(index_rank), false);
    for (const Value *p : expanded) {
      const Value &q = p->as<DynamicIndexObject>() ? p->as<DynamicIndexObject>()->index : *p;
      if (auto *e = q.as<IndexObject>())
        for (const IndexTerm &t : e->terms)
          used[static_cast<std::size_t>(t.axis)] = true;
      if (indirect_partitions(*p) > 1) // a tile of indices takes the partition axis
        used[0] = true;
    }
    ir::SmallVector<bool, 8> stepped; // an index term has set the axis's step
    stepped.resize(static_cast<std::size_t>(index_rank), false);
    std::size_t next_free = 0;
    std::size_t dim = 0;
    for (const Value *p : expanded) {
      if (p->is_none())
        continue;
      auto [dim_step, dim_size] = ap.pattern[dim];
      std::optional<IndexObject> e;
      auto keep_integer_dim = [&, dim_step = dim_step] {
        while (next_free < used.size() && used[next_free])
          ++next_free;
        if (next_free < used.size()) {
          by_axis[next_free] = {dim_step, 1};
          used[next_free++] = true;
        }
      };
      if (auto *tile = p->as<TensorRef>()) {
        std::int64_t n = add_indirect_index(*this, *out, *tile, dim_step, dim_size);
        if (n == 1) {
          keep_integer_dim();
        } else {
          if (stepped[0])
            raise_error("not-modelled", fmt::format("nkicc does not model a tile of indices and an index tile on "
                                                    "the same axis of an access to '{}'",
                                                    tensor().name));
          by_axis[0] = {0, n};
          stepped[0] = true;
        }
        ++dim;
        continue;
      }
      const IndexObject *dynamic_part = nullptr;
      if (auto *d = p->as<DynamicIndexObject>()) {
        if (add_indirect_index(*this, *out, *d->tile, dim_step, dim_size) != 1)
          raise_error("TypeError", "a dynamic offset is one element of a tile");
        dynamic_part = d->index.as<IndexObject>();
      }
      if (auto a = dynamic_part ? std::nullopt : to_affine(*p)) {
        e = ix.integer(*a, dim_size);
        keep_integer_dim();
      } else if (auto *idx = dynamic_part ? dynamic_part : p->as<IndexObject>()) {
        e = *idx;
        for (const IndexTerm &t : idx->terms) {
          auto &[step, num] = by_axis[static_cast<std::size_t>(t.axis)];
          bool fresh = !stepped[static_cast<std::size_t>(t.axis)];
          stepped[static_cast<std::size_t>(t.axis)] = true;
          if (!fresh && num != t.count && num != 1 && t.count != 1)
            raise_error("IndexError", fmt::format("index tiles of {} and {} elements on axis {} cannot index {} '{}' "
                                                  "together",
                                                  num, t.count, t.axis, type_name(), tensor().name));
          step = fresh ? checked_mul(dim_step, t.coef) : checked_add(step, checked_mul(dim_step, t.coef));
          num = std::max(num, t.count);
        }
      } else {
        raise_error("TypeError",
                    fmt::format("{} indices must be integers, slices, index tiles, None or '...', not '{}'",
                                type_name(), trace::type_name(*p)));
      }
      ix.place(dim, *e, dim_step, dim_size);
      ++dim;
    }
    out->ap.pattern = std::move(by_axis);
    return Value::object(out);
  }

  if (has_multi_term)
    raise_error("err_unsupported_mixing_basic_advanced_tensor_indexing",
                "Mixing basic tensor indexing and advanced tensor indexing is not supported");

  // Basic indexing, one view dimension per slice, None or single-axis index tile, in order.
  // An integer drops its dimension, except on chip: a tile keeps its partition dimension
  // (size 1), and keeps its last integer-indexed free dimension when dropping it would leave
  // fewer than two (`stats[:, 0]` on a [128, 2] tile is [128, 1]).
  std::size_t dim = 0;
  std::optional<std::size_t> last_int_free; // position in out's pattern where it would go
  std::int64_t last_int_step = 0;
  for (const Value *p : expanded) {
    if (p->is_none()) {
      out->ap.pattern.emplace_back(1, 1);
      continue;
    }
    auto [dim_step, dim_size] = ap.pattern[dim];
    if (auto a = to_affine(*p)) {
      ix.place(dim, ix.integer(*a, dim_size), dim_step, dim_size);
      if (on_chip && dim == 0) {
        out->ap.pattern.emplace_back(dim_step, 1);
      } else if (on_chip) {
        last_int_free = out->ap.pattern.size();
        last_int_step = dim_step;
      }
    } else if (p->kind == Value::Kind::Slice) {
      const SliceData &s = p->slice_data();
      std::int64_t step = s.step.is_none() ? 1 : slice_int(s.step, "step");
      if (step <= 0)
        raise_error("ValueError", "NKI tensor slices need a positive step");
      auto lower = s.lower.is_none() ? std::optional<Affine>(Affine{}) : to_affine(s.lower);
      auto upper = s.upper.is_none() ? std::optional<Affine>(Affine{dim_size, {}}) : to_affine(s.upper);
      if (!lower || !upper)
        raise_error("TypeError", "slice indices must be integers, program ids or None");
      if (lower->is_constant() && lower->constant < 0)
        lower->constant += dim_size;
      if (upper->is_constant() && upper->constant < 0)
        upper->constant += dim_size;
      Affine extent = affine_add(*upper, *lower, -1);
      if (!extent.is_constant())
        raise_error("TypeError", "the length of a slice must not depend on the program id");
      std::int64_t count = extent.constant <= 0 ? 0 : (extent.constant + step - 1) / step;
      IndexObject e;
      e.constant = *lower;
      e.terms.push_back({0, step, count});
      ix.place(dim, e, dim_step, dim_size);
      out->ap.pattern.emplace_back(checked_mul(dim_step, step), count);
    } else if (auto *tile = p->as<TensorRef>()) {
      // A tile of indices on the access's partition dimension, or one index for a dimension
      // the access drops.
      std::int64_t n = add_indirect_index(*this, *out, *tile, dim_step, dim_size);
      if (n > 1 && !out->ap.pattern.empty())
        raise_error("err_indirect_indices_free_dim",
                    fmt::format("Dynamic indexing for load/store only supports the indirect indexing to be on the "
                                "partition or block dimension: tile '{}' indexes dimension {} of '{}', which is not "
                                "the partition dimension of the access",
                                tile->tensor().name, dim, tensor().name));
      if (n > 1)
        out->ap.pattern.emplace_back(0, n);
    } else if (auto *idx = p->as<IndexObject>()) {
      ix.place(dim, *idx, dim_step, dim_size);
      if (idx->terms.empty())
        out->ap.pattern.emplace_back(dim_step, 1);
      else
        out->ap.pattern.emplace_back(checked_mul(dim_step, idx->terms[0].coef), idx->terms[0].count);
    } else {
      raise_error("TypeError", fmt::format("{} indices must be integers, slices, index tiles, None or '...', not '{}'",
                                           type_name(), trace::type_name(*p)));
    }
    ++dim;
  }
  if (on_chip && out->ap.pattern.size() < 2 && last_int_free)
    out->ap.pattern.insert(out->ap.pattern.begin() + static_cast<std::ptrdiff_t>(*last_int_free), {last_int_step, 1});
  return Value::object(out);
}

// ---- block tensors ----------------------------------------------------------------------------

ir::Shape BlockTensorRef::view_shape() const {
  const ir::Shape &full = block_tensor().shape;
  return ir::Shape(full.begin() + static_cast<std::ptrdiff_t>(fixed.size()), full.end());
}

std::optional<Value> BlockTensorRef::get_attr(Interpreter &, std::string_view name) {
  const ir::BlockTensor &b = block_tensor();
  ir::Shape shape = view_shape();
  if (name == "shape") {
    std::vector<Value> dims;
    for (std::int64_t d : shape)
      dims.push_back(Value::integer(d));
    return Value::tuple(std::move(dims));
  }
  if (name == "dtype")
    return trace::make_dtype_value(b.dtype, false);
  if (name == "ndim")
    return Value::integer(static_cast<std::int64_t>(shape.size()));
  if (name == "buffer")
    return Value::object(std::make_shared<BufferObject>(b.memory));
  if (name == "name")
    return Value::str(b.name);
  if (name == "view") {
    // `t.view(dtype)` of a block tensor: a block tensor whose blocks view these blocks' bytes.
    auto self = std::make_shared<BlockTensorRef>(*this);
    return Value::object(std::make_shared<BuiltinFunction>("view", [self](Interpreter &, CallArgs &call) {
      if (call.positional.size() + call.keywords.size() != 1)
        raise_error("TypeError", fmt::format("view() takes 1 argument (dtype) but {} were given",
                                             call.positional.size() + call.keywords.size()));
      const Value &arg = call.positional.empty() ? call.keywords[0].second : call.positional[0];
      if (!call.keywords.empty() && call.keywords[0].first != "dtype")
        raise_error("TypeError", fmt::format("view() got an unexpected keyword argument '{}'", call.keywords[0].first));
      std::optional<DType> dtype = dtype_arg(&arg, "view");
      if (!dtype)
        raise_error("TypeError", "view() missing required argument 'dtype'");
      auto out = std::make_shared<BlockTensorRef>(*self);
      if (*dtype != self->block_tensor().dtype)
        out->index = self->builder->new_block_view(self->index, *dtype);
      return Value::object(out);
    }));
  }
  return std::nullopt;
}

std::string BlockTensorRef::repr() const {
  const ir::BlockTensor &b = block_tensor();
  std::string name = b.name;
  for (std::size_t i = 0; i < fixed.size(); ++i)
    name += (i ? ", " : "[") + std::to_string(fixed[i]) + (i + 1 == fixed.size() ? "]" : "");
  return fmt::format("tensor({}{}, {}, {}, blocks={})", name, shape_text(view_shape()), dtype_name(b.dtype),
                     ir::memory_name(b.memory), open_block_dims());
}

void BlockTensorRef::on_bind(std::string_view name) {
  if (!fixed.empty()) // a view of some blocks (`sub = t[i]`) leaves the tensor's name alone
    return;
  if (builder->block_auto_named[index])
    builder->fn.block_tensors[index].name = std::string(name);
  builder->block_auto_named[index] = false;
}

bool BlockTensorRef::truthy(Interpreter &) {
  raise_error("TypeError", fmt::format("the truth value of tensor '{}' is not known while tracing: its values exist "
                                       "only on the device",
                                       block_tensor().name));
}

void BlockTensorRef::raise_not_a_tile() const {
  const ir::BlockTensor &b = block_tensor();
  raise_error("err_failed_to_infer_tile_from_local_tensor",
              fmt::format("Failed to infer tile from tensor '{}': its partition dimension is dimension {} of {}; "
                          "index its block dimensions first ('{}[i]')",
                          b.name, open_block_dims(), shape_text(view_shape()), b.name));
}

std::shared_ptr<TensorRef> BlockTensorRef::block_view(std::size_t block) {
  return builder->full_view(builder->block(index, block));
}

Value BlockTensorRef::get_item(Interpreter &interp, const Value &key) {
  const ir::BlockTensor &b = block_tensor();
  std::vector<Value> parts = key.kind == Value::Kind::Tuple ? key.seq().items : std::vector<Value>{key};
  std::size_t nb = open_block_dims();
  auto across = [&]() {
    raise_error("not-modelled",
                fmt::format("nkicc does not model a view across the blocks of tensor '{}' yet: index its {} block "
                            "dimension{} with integers ('{}[i]')",
                            b.name, nb, nb == 1 ? "" : "s", b.name));
  };
  // Integer indices of the leading block dimensions, each checked against its dimension.
  std::vector<std::int64_t> chosen = fixed;
  for (std::size_t d = 0; d < nb && d < parts.size(); ++d) {
    std::size_t dim = fixed.size() + d;
    auto a = to_affine(parts[d]);
    if (!a || !a->is_constant())
      across();
    std::int64_t i = a->constant < 0 ? a->constant + b.shape[dim] : a->constant;
    if (i < 0 || i >= b.shape[dim])
      raise_error("err_tensor_access_out_of_bound",
                  fmt::format("Out-of-bound access for tensor `{}` on dimension {}: index range [{}, {}] exceed "
                              "dimension size of {}",
                              b.name, dim, a->constant, a->constant, b.shape[dim]));
    chosen.push_back(i);
  }
  if (parts.size() < nb) {
    // Some block dimensions stay open: a block tensor of the rest.
    auto sub = std::make_shared<BlockTensorRef>(*this);
    sub->fixed = std::move(chosen);
    return Value::object(sub);
  }
  std::size_t block = 0;
  for (std::size_t d = 0; d < b.partition_dim; ++d)
    block = block * static_cast<std::size_t>(b.shape[d]) + static_cast<std::size_t>(chosen[d]);
  auto view = block_view(block);
  if (parts.size() == nb)
    return Value::object(view);
  std::vector<Value> rest(parts.begin() + static_cast<std::ptrdiff_t>(nb), parts.end());
  return view->get_item(interp, rest.size() == 1 ? rest[0] : Value::tuple(std::move(rest)));
}

void BlockTensorRef::set_item(Interpreter &interp, const Value &key, const Value &value) {
  Value target = get_item(interp, key);
  assign_to_view(interp, *target.as<TensorRef>(), value, std::nullopt);
}

void BlockTensorRef::aug_set_item(Interpreter &interp, const Value &key, BinOpKind op, const Value &value) {
  Value target = get_item(interp, key);
  assign_to_view(interp, *target.as<TensorRef>(), value, op);
}

// ---- assignment through a view ------------------------------------------------------------------

void TensorRef::set_item(Interpreter &interp, const Value &key, const Value &value) {
  Value target = get_item(interp, key);
  assign_to_view(interp, *target.as<TensorRef>(), value, std::nullopt);
}

void TensorRef::aug_set_item(Interpreter &interp, const Value &key, BinOpKind op, const Value &value) {
  Value target = get_item(interp, key);
  assign_to_view(interp, *target.as<TensorRef>(), value, op);
}

std::optional<Value> TensorRef::inplace_op(Interpreter &interp, BinOpKind op, const Value &other) {
  // `acc += x` updates an on-chip tile in place (a PSUM tile accumulates a matmul), as NKI's
  // tiles implement __iadd__; an HBM tensor has no in-place arithmetic.
  if (tensor().memory != ir::Memory::Sbuf && tensor().memory != ir::Memory::Psum)
    return std::nullopt;
  assign_to_view(interp, *this, other, op);
  return Value::object(std::make_shared<TensorRef>(*this));
}

std::optional<Value> TensorRef::binary_op(Interpreter &interp, BinOpKind op, const Value &other, bool reflected) {
  auto self = std::make_shared<TensorRef>(*this);
  if (op == BinOpKind::Add && other.as<IndexObject>() && !indirect &&
      std::all_of(ap.pattern.begin(), ap.pattern.end(), [](const auto &pair) { return pair.second == 1; }))
    return Value::object(std::make_shared<DynamicIndexObject>(self, other));
  return tensor_binary_operator(interp, self, op, other, reflected);
}

std::optional<Value> TensorRef::unary_op(Interpreter &interp, UnaryOpKind op) {
  auto self = std::make_shared<TensorRef>(*this);
  return tensor_unary_operator(interp, self, op);
}

} // namespace nkicc::nki
