// Index tiles: `nl.arange(n)[:, None]`, `nl.mgrid[0:128, 0:512]` and affine arithmetic on
// them, which index tensors (`t[ip, i * 512 + if_]`) and form the predicates of masks.
#pragma once

#include "affine.h"

namespace nkicc::nki {

/// An index tile: `nl.arange(n)` placed on one axis of an index tile of `rank` axes
/// (`[:, None]`: axis 0 of 2, `[None, :]`: axis 1 of 2), with affine arithmetic applied:
/// the indices are start + step * k for k in [0, count).
class IndexObject : public Object {
public:
  std::string_view type_name() const override { return "IndexTile"; }
  Value get_item(Interpreter &, const Value &key) override;
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override;
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> compare(Interpreter &, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override;
  /// This index's terms in predicate text: `2*i1 + 5`.
  std::string term() const;

  Affine start;
  std::int64_t step = 1;
  std::int64_t count = 0;
  int rank = 1;
  int axis = 0;
};

/// A sum or difference of index tiles on different axes (`i_q - i_k`): usable only in the
/// predicates of masks and affine_select.
class IndexSumObject : public Object {
public:
  std::string_view type_name() const override { return "IndexExpr"; }
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> compare(Interpreter &, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override { return text; }
  std::string text;
};

/// A predicate over index tiles (`mask=(i * 128 + ix < n)`), recorded on the instruction and
/// relaxing bounds checks on the axes it constrains.
class MaskObject : public Object {
public:
  std::string_view type_name() const override { return "Mask"; }
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override { return text; }
  std::string text;
};

/// `nl.mgrid`: `nl.mgrid[0:128, 0:512]` gives index tiles `.p` (axis 0) and `.x` (axis 1).
Value make_mgrid();

} // namespace nkicc::nki
