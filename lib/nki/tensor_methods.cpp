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
    raise_error("ValueError",
                fmt::format("cannot reshape {} of shape {} into shape {}", self->describe(), shape_text(old),
                            shape_text(shape)));
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

// The new API's explicit access pattern: `t.ap([[step, num], ...], offset=0)`, steps in
// elements of the underlying tensor (the partition entry first), as the IR's patterns are.
Value lower_ap(OpCall &c) {
  auto self = c.required_tensor("self");
  std::vector<Value> entries = c.interp.to_list(c.required("pattern"));
  if (entries.empty())
    raise_error("ValueError", "an access pattern needs at least one [step, num] entry");
  auto out = std::make_shared<TensorRef>(*self);
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
  std::int64_t size = product(self->tensor().shape);
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

constexpr ir::Engine kNone = ir::Engine::Vector;
constexpr ir::Opcode kNoOp = ir::Opcode::TensorCopy;

const OpDef kOps[] = {
    {"reshape(self: any, shape: shape)", kNone, kNoOp, lower_reshape},
    {"ap(self: any, pattern: any, offset: int? = None)", kNone, kNoOp, lower_ap},
    {"broadcast_to(self: any, shape: shape)", kNone, kNoOp, lower_broadcast_to},
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
