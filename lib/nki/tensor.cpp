#include "tensor.h"

#include "nkicc/trace/pylib.h"

#include "index.h"
#include "objects.h"

#include <fmt/format.h>

#include <algorithm>

namespace nkicc::nki {

using python::BinOpKind;
using python::UnaryOpKind;

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

std::string TensorRef::describe() const { return tensor().name + shape_text(shape()); }

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

/// The range of `start + step*k` (k in [0, count)) over every SPMD instance of the grid.
Bound index_range(const Affine &start, std::int64_t step, std::int64_t count, const std::vector<std::int64_t> &grid) {
  std::int64_t lo = start.constant, hi = start.constant;
  for (std::size_t a = 0; a < start.coef.size(); ++a) {
    std::int64_t extent = a < grid.size() ? grid[a] - 1 : 0;
    std::int64_t term = checked_mul(start.coef[a], extent);
    (term < 0 ? lo : hi) = checked_add(term < 0 ? lo : hi, term);
  }
  std::int64_t span = checked_mul(step, count - 1);
  (span < 0 ? lo : hi) = checked_add(span < 0 ? lo : hi, span);
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

} // namespace

Value TensorRef::get_item(Interpreter &, const Value &key) {
  // The index parts, by address (no Value copies): indexing runs for every load and store of
  // an unrolled loop, so it allocates nothing for the usual few dimensions.
  ir::SmallVector<const Value *, 6> parts;
  if (key.kind == Value::Kind::Tuple)
    for (const Value &item : key.seq().items)
      parts.push_back(&item);
  else
    parts.push_back(&key);

  // `...` stands for as many full slices as the dimensions not otherwise indexed.
  static const Value full_slice = Value::slice(Value(), Value(), Value());
  std::size_t explicit_dims = 0;
  bool has_ellipsis = false;
  for (const Value *part : parts) {
    const Value &p = *part;
    if (p.kind == Value::Kind::Ellipsis) {
      if (has_ellipsis)
        raise_error("IndexError", "an index can only have a single ellipsis ('...')");
      has_ellipsis = true;
    } else if (!p.is_none()) {
      ++explicit_dims;
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
    } else {
      expanded.push_back(p);
    }
  }
  while (expanded.size() -
             std::count_if(expanded.begin(), expanded.end(), [](const Value *v) { return v->is_none(); }) <
         rank)
    expanded.push_back(&full_slice);

  auto out = std::make_shared<TensorRef>();
  out->builder = builder;
  out->out_of_bound = out_of_bound;
  out->ap.tensor = ap.tensor;
  out->ap.offset = ap.offset;
  out->ap.program_offset = ap.program_offset;
  const std::vector<std::int64_t> &grid = builder->grid;
  std::size_t dim = 0;
  auto add_offset = [&](const Affine &start, std::int64_t step) {
    out->ap.offset = checked_add(out->ap.offset, checked_mul(step, start.constant));
    for (std::size_t a = 0; a < start.coef.size(); ++a)
      out->ap.program_offset[a] = checked_add(out->ap.program_offset[a], checked_mul(step, start.coef[a]));
  };
  auto check = [&](std::size_t d, const Affine &start, std::int64_t step, std::int64_t count, std::int64_t size) {
    if (count <= 0)
      raise_error("IndexError",
                  fmt::format("empty index range on dimension {} of {} '{}'", d, type_name(), tensor().name));
    Bound b = index_range(start, step, count, grid);
    if ((b.lo < 0 || b.hi >= size) && out->out_of_bound.empty())
      out->out_of_bound = fmt::format("Out-of-bound access for tensor `{}` on dimension {}: index range [{}, {}] "
                                      "exceed dimension size of {}",
                                      tensor().name, d, b.lo, b.hi, size);
  };

  // For index-tile indexing (`t[ip, if_]`, `t[if_, ip]`, `t[ip, k]`) the view's dimensions
  // follow the index tiles' axes: when every index is an index tile of rank R or an integer and
  // they number R, an index tile on axis a gives dimension a and integers fill the other axes
  // with size 1 (`t[ip, k]` on an [P, N] tile is [P, 1]; `out[if_, ip]` is a transposed view).
  ir::SmallVector<int, 6> tile_axis;
  tile_axis.resize(expanded.size(), -2); // -1: an integer, >= 0: an index tile's axis
  {
    int tile_rank = -1;
    std::size_t tiles = 0;
    bool eligible = true;
    ir::SmallVector<bool, 8> used;
    for (std::size_t k = 0; k < expanded.size() && eligible; ++k) {
      if (auto *ix = expanded[k]->as<IndexObject>()) {
        if (tile_rank < 0) {
          tile_rank = ix->rank;
          used.clear();
          used.resize(static_cast<std::size_t>(tile_rank), false);
        }
        eligible = ix->rank == tile_rank && ix->axis < tile_rank && !used[static_cast<std::size_t>(ix->axis)];
        if (eligible)
          used[static_cast<std::size_t>(ix->axis)] = true;
        tile_axis[k] = ix->axis;
        ++tiles;
      } else if (to_affine(*expanded[k])) {
        tile_axis[k] = -1;
      } else {
        eligible = false;
      }
    }
    eligible = eligible && tiles > 0 && expanded.size() == static_cast<std::size_t>(tile_rank);
    if (eligible) {
      int next_free = 0;
      for (int &a : tile_axis)
        if (a == -1) {
          while (used[static_cast<std::size_t>(next_free)])
            ++next_free;
          a = next_free;
          used[static_cast<std::size_t>(next_free)] = true;
        }
    } else {
      tile_axis.clear();
    }
  }
  ir::PatternPairs by_axis;
  by_axis.resize(tile_axis.size(), {1, 1});
  std::size_t part = 0;
  for (const Value *expanded_part : expanded) {
    const Value &p = *expanded_part;
    std::size_t this_part = part++;
    if (!tile_axis.empty() && to_affine(p)) {
      // An integer keeps a size-1 dimension on its axis.
      auto [dim_step, dim_size] = ap.pattern[dim];
      Affine start = *to_affine(p);
      if (start.is_constant() && start.constant < 0)
        start.constant += dim_size;
      check(dim, start, 1, 1, dim_size);
      add_offset(start, dim_step);
      by_axis[static_cast<std::size_t>(tile_axis[this_part])] = {dim_step, 1};
      ++dim;
      continue;
    }
    if (p.is_none()) {
      out->ap.pattern.emplace_back(1, 1);
      continue;
    }
    auto [dim_step, dim_size] = ap.pattern[dim];
    if (auto a = to_affine(p)) {
      // An integer (or program-id) index selects one position and drops the dimension.
      Affine start = *a;
      if (start.is_constant() && start.constant < 0)
        start.constant += dim_size;
      check(dim, start, 1, 1, dim_size);
      add_offset(start, dim_step);
    } else if (p.kind == Value::Kind::Slice) {
      const SliceData &s = p.slice_data();
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
      check(dim, *lower, step, count, dim_size);
      add_offset(*lower, dim_step);
      out->ap.pattern.emplace_back(checked_mul(dim_step, step), count);
    } else if (auto *ix = p.as<IndexObject>()) {
      check(dim, ix->start, ix->step, ix->count, dim_size);
      add_offset(ix->start, dim_step);
      if (!tile_axis.empty())
        by_axis[static_cast<std::size_t>(ix->axis)] = {checked_mul(dim_step, ix->step), ix->count};
      else
        out->ap.pattern.emplace_back(checked_mul(dim_step, ix->step), ix->count);
    } else {
      raise_error("TypeError", fmt::format("{} indices must be integers, slices, index tiles, None or '...', not '{}'",
                                           type_name(), trace::type_name(p)));
    }
    ++dim;
  }
  if (!tile_axis.empty())
    out->ap.pattern = std::move(by_axis);
  return Value::object(out);
}

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
  return tensor_binary_operator(interp, self, op, other, reflected);
}

std::optional<Value> TensorRef::unary_op(Interpreter &interp, UnaryOpKind op) {
  auto self = std::make_shared<TensorRef>(*this);
  return tensor_unary_operator(interp, self, op);
}

} // namespace nkicc::nki
