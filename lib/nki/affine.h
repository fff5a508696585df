// SPMD program ids in index arithmetic: `nl.program_id(0) * 128 + 5` is an affine in the grid
// coordinates, since the trace describes every instance at once (SPEC §3).
#pragma once

#include "common.h"

#include <array>
#include <optional>

namespace nkicc::nki {

/// An integer affine in the SPMD program ids: constant + sum(coef[a] * program_id(a)).
struct Affine {
  std::int64_t constant = 0;
  std::array<std::int64_t, ir::kMaxGridAxes> coef{};
  bool is_constant() const { return coef == std::array<std::int64_t, ir::kMaxGridAxes>{}; }
  std::string text() const;
  friend bool operator==(const Affine &, const Affine &) = default;
};

/// An int, a bool or a program-id affine as an Affine; nullopt for anything else.
std::optional<Affine> to_affine(const Value &v);
/// x + sign * y, x * k (checked).
Affine affine_add(const Affine &x, const Affine &y, std::int64_t sign);
Affine affine_scale(const Affine &x, std::int64_t k);
/// An int when constant, else an AffineObject.
Value affine_value(const Affine &a);

/// `nl.program_id(axis)` and integer arithmetic on it: usable in index arithmetic, never in
/// Python control flow.
class AffineObject final : public Object {
public:
  explicit AffineObject(Affine a) : value(a) {}
  std::string_view type_name() const override { return "program_id"; }
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> unary_op(Interpreter &, python::UnaryOpKind op) override;
  std::optional<Value> compare(Interpreter &, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override { return value.text(); }
  Affine value;
};

} // namespace nkicc::nki
