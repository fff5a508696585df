#include "affine.h"

#include "nkicc/trace/pylib.h"

#include <fmt/format.h>

namespace nkicc::nki {

using python::BinOpKind;
using python::CmpOpKind;
using python::UnaryOpKind;

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    raise_error("OverflowError", "integer overflow: the result does not fit in 64 bits");
  return r;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    raise_error("OverflowError", "integer overflow: the result does not fit in 64 bits");
  return r;
}

std::string shape_text(std::span<const std::int64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::string Affine::text() const {
  std::string out;
  for (std::size_t a = 0; a < coef.size(); ++a) {
    if (!coef[a])
      continue;
    if (!out.empty())
      out += " + ";
    out += coef[a] == 1 ? fmt::format("program_id({})", a) : fmt::format("{}*program_id({})", coef[a], a);
  }
  if (constant || out.empty())
    out += out.empty() ? fmt::format("{}", constant) : fmt::format(" + {}", constant);
  return out;
}

std::optional<Affine> to_affine(const Value &v) {
  if (v.kind == Value::Kind::Int)
    return Affine{v.i, {}};
  if (v.kind == Value::Kind::Bool)
    return Affine{v.b ? 1 : 0, {}};
  if (auto *a = v.as<AffineObject>())
    return a->value;
  if (std::optional<Value> n = trace::index_number(v)) // lib: a NumPy integer
    return to_affine(*n);
  return std::nullopt;
}

Value affine_value(const Affine &a) {
  if (a.is_constant())
    return Value::integer(a.constant);
  return Value::object(std::make_shared<AffineObject>(a));
}

Affine affine_add(const Affine &x, const Affine &y, std::int64_t sign) {
  Affine r;
  r.constant = checked_add(x.constant, checked_mul(sign, y.constant));
  for (std::size_t i = 0; i < r.coef.size(); ++i)
    r.coef[i] = checked_add(x.coef[i], checked_mul(sign, y.coef[i]));
  return r;
}

Affine affine_scale(const Affine &x, std::int64_t k) {
  Affine r;
  r.constant = checked_mul(x.constant, k);
  for (std::size_t i = 0; i < r.coef.size(); ++i)
    r.coef[i] = checked_mul(x.coef[i], k);
  return r;
}

std::optional<Value> AffineObject::binary_op(Interpreter &, BinOpKind op, const Value &other, bool reflected) {
  auto o = to_affine(other);
  if (!o)
    return std::nullopt;
  switch (op) {
  case BinOpKind::Add:
    return affine_value(affine_add(value, *o, 1));
  case BinOpKind::Sub:
    return affine_value(reflected ? affine_add(*o, value, -1) : affine_add(value, *o, -1));
  case BinOpKind::Mult:
    if (!o->is_constant())
      raise_error("TypeError", "program ids can only be multiplied by integers: the product would not be affine");
    return affine_value(affine_scale(value, o->constant));
  default:
    raise_error("TypeError", "unsupported operation on a program id: only +, - and * by an integer keep an index "
                             "affine");
  }
}

std::optional<Value> AffineObject::unary_op(Interpreter &, UnaryOpKind op) {
  if (op == UnaryOpKind::USub)
    return affine_value(affine_scale(value, -1));
  if (op == UnaryOpKind::UAdd)
    return Value::object(std::make_shared<AffineObject>(value));
  return std::nullopt;
}

std::optional<Value> AffineObject::compare(Interpreter &, CmpOpKind, const Value &, bool) {
  // Comparing a program id picks a branch per SPMD instance: the trace describes one instance.
  raise_error("err_control_flow_condition_depending_on_arange",
              "Control-flow depending on `nl.program_id` is not supported: the trace describes every SPMD "
              "instance at once");
}

bool AffineObject::truthy(Interpreter &) {
  raise_error("err_control_flow_condition_depending_on_arange",
              "Control-flow depending on `nl.program_id` is not supported: the trace describes every SPMD "
              "instance at once");
}

} // namespace nkicc::nki
