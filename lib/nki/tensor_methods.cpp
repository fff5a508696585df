// Methods of a tensor view (`x.reshape(shape)`, `x.broadcast_to(shape)`, `x.ap(...)`): ops of
// the catalogue whose first parameter is the view itself. None emits an instruction: each
// gives another view of the same tensor.
#include "lowering.h"
#include "op_table.h"
#include "runtime.h"

#include <fmt/format.h>

namespace nkicc::nki {

namespace {

Value lower_reshape(OpCall &c) {
  auto self = c.required_tensor("self");
  ir::Shape shape = shape_arg(c.required("shape"), "reshape");
  ir::Shape old = self->shape();
  if (product(shape) != product(old))
    raise_error("ValueError", fmt::format("cannot reshape {} of shape {} into shape {}", self->describe(),
                                          shape_text(old), shape_text(shape)));
  // Only a contiguous view can be reinterpreted with another row-major shape.
  std::int64_t expected = 1;
  for (std::size_t i = self->ap.pattern.size(); i-- > 0;) {
    if (self->ap.pattern[i].first != expected && self->ap.pattern[i].second != 1)
      raise_error("ValueError", fmt::format("cannot reshape a strided view of '{}'", self->tensor().name));
    expected = checked_mul(expected, self->ap.pattern[i].second);
  }
  auto out = std::make_shared<TensorRef>(*self);
  out->ap.pattern.clear();
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    out->ap.pattern.insert(out->ap.pattern.begin(), {step, shape[i]});
    step = checked_mul(step, shape[i]);
  }
  return Value::object(out);
}

// The new API's explicit access pattern: `t.ap([[step, num], ...], offset=0, dtype=None)`,
// steps in elements of the underlying tensor (the partition entry first), as the IR's patterns
// are. With `dtype`, the tensor's bytes are read as that dtype (as `t.view(dtype)`), and the
// steps and offset count its elements.
Value lower_ap(OpCall &c) {
  auto self = c.required_tensor("self");
  std::vector<Value> entries = c.interp.to_list(c.required("pattern"));
  if (entries.empty())
    raise_error("ValueError", "an access pattern needs at least one [step, num] entry");
  auto out = std::make_shared<TensorRef>(*self);
  if (auto dtype = c.dtype(); dtype && *dtype != self->tensor().dtype) {
    if (self->indirect)
      raise_error("ValueError", fmt::format("cannot read '{}', indexed by a tile of indices, as {}", self->describe(),
                                            dtype_name(*dtype)));
    auto from = static_cast<std::int64_t>(dtype_size(self->tensor().dtype));
    auto to = static_cast<std::int64_t>(dtype_size(*dtype));
    auto in_to = [&](std::int64_t elements) {
      std::int64_t bytes = checked_mul(elements, from);
      if (bytes % to != 0)
        raise_error("ValueError", fmt::format("cannot read '{}' as {}: its offset is not a whole number of {} "
                                              "elements",
                                              self->describe(), dtype_name(*dtype), dtype_name(*dtype)));
      return bytes / to;
    };
    out->ap.tensor = self->builder->new_view(self->ap.tensor, *dtype);
    out->ap.offset = in_to(out->ap.offset);
    for (std::int64_t &term : out->ap.program_offset)
      term = in_to(term);
  }
  out->ap.pattern.clear();
  for (const Value &e : entries) {
    std::vector<Value> pair = c.interp.to_list(e);
    if (pair.size() != 2 || pair[0].kind != Value::Kind::Int || pair[1].kind != Value::Kind::Int || pair[1].i <= 0)
      raise_error("ValueError", "an access pattern entry must be [step, num] with integers and num > 0");
    out->ap.pattern.emplace_back(pair[0].i, pair[1].i);
  }
  if (const Value *o = c.get("offset")) {
    if (o->kind != Value::Kind::Int)
      raise_error("TypeError", "the offset of an access pattern must be an integer");
    out->ap.offset = checked_add(out->ap.offset, o->i);
  }
  std::int64_t last = out->ap.offset;
  for (auto [step, num] : out->ap.pattern)
    last = checked_add(last, checked_mul(step, num - 1));
  std::int64_t size = product(out->tensor().shape);
  if (out->ap.offset < 0 || last >= size)
    raise_error("err_tensor_access_out_of_bound",
                fmt::format("Out-of-bound access for tensor `{}`: access pattern reaches element {} of {}",
                            self->tensor().name, last, size));
  return Value::object(out);
}

Value lower_broadcast_to(OpCall &c) {
  auto self = c.required_tensor("self");
  ir::Shape shape = shape_arg(c.required("shape"), "broadcast_to");
  ir::Shape old = self->shape();
  if (shape.size() != old.size())
    raise_error("ValueError", fmt::format("cannot broadcast {} to {}", self->describe(), shape_text(shape)));
  auto out = std::make_shared<TensorRef>(*self);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (old[i] == shape[i])
      continue;
    if (old[i] != 1)
      raise_error("ValueError", fmt::format("cannot broadcast {} to {}", self->describe(), shape_text(shape)));
    out->ap.pattern[i] = {0, shape[i]};
  }
  return Value::object(out);
}

} // namespace

std::shared_ptr<TensorRef> view_as(const TensorRef &self, DType to) {
  KernelBuilder &kb = *self.builder;
  const ir::Tensor &t = self.tensor();
  if (t.dtype == to)
    return std::make_shared<TensorRef>(self);
  if (self.indirect)
    raise_error("ValueError",
                fmt::format("cannot view '{}', indexed by a tile of indices, as {}", self.describe(), dtype_name(to)));
  std::string described = self.describe();
  DType from = t.dtype;
  ir::TensorId id = kb.new_view(self.ap.tensor, to);
  // The same bytes: steps and offset in `to` elements; the last dimension must be contiguous.
  auto from_size = static_cast<std::int64_t>(dtype_size(from)), to_size = static_cast<std::int64_t>(dtype_size(to));
  auto out = std::make_shared<TensorRef>(self);
  out->ap.tensor = id;
  ir::PatternPairs &p = out->ap.pattern;
  auto [last_step, last_num] = p.back();
  if (last_step != 1 && last_num != 1)
    raise_error("ValueError", fmt::format("cannot view '{}' as {}: its last dimension is strided (step {})", described,
                                          dtype_name(to), last_step));
  auto scale = [&](std::int64_t v, const char *what) {
    if (from_size >= to_size)
      return checked_mul(v, from_size / to_size);
    if (v % (to_size / from_size) != 0)
      raise_error("ValueError", fmt::format("cannot view '{}' as {}: its {} is not a whole number of {} elements",
                                            described, dtype_name(to), what, dtype_name(to)));
    return v / (to_size / from_size);
  };
  for (std::size_t i = 0; i + 1 < p.size(); ++i)
    p[i].first = scale(p[i].first, "layout");
  p.back() = {1, scale(last_num, "last dimension")};
  out->ap.offset = scale(out->ap.offset, "offset");
  for (std::int64_t &term : out->ap.program_offset)
    term = scale(term, "offset");
  return out;
}

namespace {

// `t.view(dtype)`: the same bytes read as another dtype (NKI's tensor.view); the free (last)
// dimension scales by the ratio of the dtypes' sizes.
Value lower_view(OpCall &c) {
  auto dtype = c.dtype("dtype");
  if (!dtype)
    raise_error("TypeError", "view() missing required argument 'dtype'");
  return Value::object(view_as(*c.required_tensor("self"), *dtype));
}

constexpr ir::Engine kNone = ir::Engine::Vector;
constexpr ir::Opcode kNoOp = ir::Opcode::TensorCopy;

const OpDef kOps[] = {
    {"reshape(self: any, shape: shape)", kNone, kNoOp, lower_reshape},
    {"ap(self: any, pattern: any, offset: int? = None, dtype: dtype? = None)", kNone, kNoOp, lower_ap},
    {"broadcast_to(self: any, shape: shape)", kNone, kNoOp, lower_broadcast_to},
    {"view(self: any, dtype: dtype? = None)", kNone, kNoOp, lower_view},
};

const std::vector<OpInfo> &method_infos() {
  static const std::vector<OpInfo> infos = [] {
    std::vector<OpInfo> out;
    for (const OpDef &def : kOps)
      out.push_back(parse_signature(def));
    return out;
  }();
  return infos;
}

} // namespace

std::span<const OpDef> tensor_method_ops() { return kOps; }

std::optional<Value> tensor_method(Interpreter &, std::shared_ptr<TensorRef> self, std::string_view name) {
  for (const OpInfo &info : method_infos()) {
    if (info.name != name)
      continue;
    KernelBuilder *kb = self->builder;
    const OpInfo *op = &info;
    return Value::object(
        std::make_shared<BuiltinFunction>(std::string(name), [self, kb, op](Interpreter &interp, CallArgs &call) {
          CallArgs bound = call;
          bound.positional.insert(bound.positional.begin(), Value::object(self));
          // A view's method runs in the trace that made the view.
          OpCall c(nullptr, kb, *op, interp, bound);
          return op->def->lower(c);
        }));
  }
  return std::nullopt;
}

} // namespace nkicc::nki
