// Python's operators on tiles and assignment to views: `a + b`, `-x`, `t[...] = v`,
// `t[...] += v`, `acc += x`, each lowered to the instruction NKI emits for it.
#include "lowering.h"
#include "objects.h"
#include "tensor.h"

#include <fmt/format.h>

#include <algorithm>

namespace nkicc::nki {

using python::BinOpKind;
using python::UnaryOpKind;

std::optional<Value> tensor_binary_operator(Interpreter &, std::shared_ptr<TensorRef> self, BinOpKind op,
                                            const Value &other, bool reflected) {
  std::string_view name = binop_name(op);
  if (name.empty())
    return std::nullopt;
  if (!other.shared_as<TensorRef>() && !is_scalar(other))
    return std::nullopt;
  KernelBuilder &kb = *self->builder;
  Value me = Value::object(self);
  return reflected ? elementwise(kb, name, other, me, std::nullopt) : elementwise(kb, name, me, other, std::nullopt);
}

std::optional<Value> tensor_unary_operator(Interpreter &, std::shared_ptr<TensorRef> self, UnaryOpKind op) {
  if (op == UnaryOpKind::USub)
    return tensor_scalar(*self->builder, "multiply", *self, Value::integer(-1), false, std::nullopt);
  if (op == UnaryOpKind::UAdd)
    return Value::object(self);
  return std::nullopt;
}

namespace {

/// Whether the instruction just emitted wrote `v` under a mask: `dst[...] = nl.copy(x, mask=m)`
/// then writes dst where m holds, so dst's view may reach past its tile where m does not.
bool written_under_mask(const KernelBuilder &kb, const Value &value) {
  const auto *v = value.as<TensorRef>();
  std::size_t n = kb.fn.instructions.size();
  if (!v || n == 0 || kb.last_writer[v->ap.tensor] != n - 1)
    return false;
  const ir::AttrList &attrs = kb.fn.attrs(kb.fn.instructions.back());
  return std::any_of(attrs.begin(), attrs.end(), [](const auto &a) { return a.first == "mask"; });
}

} // namespace

void assign_to_view(Interpreter &, TensorRef &target, const Value &value, std::optional<BinOpKind> op) {
  KernelBuilder &kb = *target.builder;
  // A view past its tile is an error unless a masked instruction writes it directly (below).
  bool out_of_bound = !target.out_of_bound.empty();
  if (out_of_bound && (op || !ir::is_on_chip(target.tensor().memory) || !written_under_mask(kb, value)))
    raise_error("err_tensor_access_out_of_bound", target.out_of_bound);
  const ir::Tensor &t = target.tensor();
  if (!ir::is_on_chip(t.memory)) {
    // `out[...] = tile` is a store; HBM has no read-modify-write.
    if (op)
      raise_error("TypeError", fmt::format("augmented assignment to HBM tensor '{}' is not supported: load, compute "
                                           "and store instead",
                                           t.name));
    auto v = value.shared_as<TensorRef>();
    if (!v)
      raise_error("TypeError", fmt::format("only a tile can be assigned to HBM tensor '{}', not '{}'", t.name,
                                           trace::type_name(value)));
    store(kb, target, v, nullptr, t.name.str(), v->tensor().name.str());
    return;
  }
  if (const auto *lr = value.as<LoopReduceObject>()) {
    // `acc[...] = nl.loop_reduce(x, op=...)`: acc = op(acc, x), acc the destination and the
    // left operand.
    if (op)
      raise_error("TypeError", "the result of 'nl.loop_reduce' is assigned into its destination with '=', not an "
                               "augmented assignment");
    const TensorRef &x = *lr->x.as<TensorRef>();
    broadcast_shapes(target, x, "loop_reduce", "dst", "x", true);
    ir::AttrList attrs = {{"op", PyConstant::str(lr->op)}};
    if (!lr->mask.empty())
      attrs.emplace_back("mask", PyConstant::str(lr->mask));
    if (!lr->name.empty())
      attrs.emplace_back("name", PyConstant::str(lr->name));
    kb.emit(ir::Opcode::TensorTensor, ir::Engine::Vector, {target.ap}, {target.ap, broadcast_view(x, target.shape())},
            attrs);
    return;
  }
  auto v = value.shared_as<TensorRef>();
  if (!op) {
    if (!v) {
      memset(kb, target, value);
      return;
    }
    require_on_chip(*v, "copy", "src");
    check_store_shape(target, *v, t.name.str(), v->tensor().name.str());
    if (write_result_into(kb, target, *v)) {
      // The masked instruction now writes the view: it must stay inside the tile wherever its
      // mask holds (NKI checks the same).
      if (out_of_bound) {
        const ir::Instruction &inst = kb.fn.instructions.back();
        const std::string *mask = nullptr;
        for (const auto &[name, attr] : kb.fn.attrs(inst))
          if (name == "mask" && attr.kind == PyConstant::Kind::Str)
            mask = &attr.s;
        if (!mask || !ir::masked_access_inside(kb.fn, kb.fn.dst(inst)[0], kb.grid, *mask).value_or(false))
          raise_error("err_tensor_access_out_of_bound", target.out_of_bound + " where the mask holds");
      }
      return;
    }
    if (out_of_bound)
      raise_error("err_tensor_access_out_of_bound", target.out_of_bound);
    kb.emit(ir::Opcode::TensorCopy, ir::Engine::Vector, {target.ap}, {broadcast_view(*v, target.shape())});
    return;
  }
  // `psum[...] += nl.matmul(...)`: the matmul accumulates into the target itself (SPEC §3).
  if (*op == BinOpKind::Add && v && t.memory == ir::Memory::Psum) {
    std::uint32_t writer = kb.last_writer[v->ap.tensor];
    if (writer != KernelBuilder::kNoWriter && std::size_t{writer} + 1 == kb.fn.instructions.size()) {
      ir::Instruction &inst = kb.fn.instructions.back();
      if (inst.opcode == ir::Opcode::MatMul && inst.num_dst == 1 && kb.fn.dst(inst)[0].tensor == v->ap.tensor) {
        if (kb.fn.access_pattern(kb.fn.dst(inst)[0]).shape() != target.shape())
          raise_error("ValueError", fmt::format("cannot accumulate a matmul result {} into {}", shape_text(v->shape()),
                                                target.describe()));
        kb.fn.set_dst(inst, 0, target.ap);
        const ir::AttrList &attrs = kb.fn.attrs(inst);
        kb.fn.set_attrs(inst, attrs.size() == 1 ? accumulate_attrs(true) : with_accumulate(attrs, true));
        kb.last_writer[target.ap.tensor] = writer;
        return;
      }
    }
  }
  std::string_view name = binop_name(*op);
  if (name.empty())
    raise_error("TypeError", "unsupported augmented assignment operator on a tile");
  if (v) {
    require_on_chip(*v, name, "y");
    broadcast_shapes(target, *v, name, "x", "y", true);
    kb.emit(ir::Opcode::TensorTensor, ir::Engine::Vector, {target.ap}, {target.ap, broadcast_view(*v, target.shape())},
            {{"op", PyConstant::str(std::string(name))}});
  } else {
    kb.emit(ir::Opcode::TensorScalar, ir::Engine::Vector, {target.ap}, {target.ap},
            {{"op0", PyConstant::str(std::string(name))},
             {"operand0", scalar_constant(value)},
             {"reverse0", PyConstant::boolean(false)}});
  }
}

} // namespace nkicc::nki
