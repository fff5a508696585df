// Index tiles: `nl.arange(n)[:, None]`, `nl.mgrid[0:128, 0:512]` and affine arithmetic on
// them (`i_f1 * 8 + i_f2`, `i_h + i_kh`, `bk * 256 + i_m`), which index tensors and form the
// predicates of masks, affine_select and iota.
//
// Predicate and expression text (the `mask`, `pred` and `expr` attributes of the IR, parsed
// by the simulator) is canonical: terms `iK` (axis K of the instruction's index space) and
// `program_id(A)` with integer coefficients, in axis order, then the constant; comparisons
// `< <= > >= == !=` between two such sums; `(p) & (q)`, `(p) | (q)`.
#pragma once

#include "affine.h"

#include "nkicc/ir/small_vector.h"

namespace nkicc::nki {

/// `coef * k` for k in [0, count), on one axis of an index tile.
struct IndexTerm {
  int axis = 0;
  std::int64_t coef = 1;
  std::int64_t count = 1;
};

/// An index tile: an affine combination of the axes of an index space of `rank` axes plus a
/// constant that may carry program ids. `nl.arange(n)` is one term on axis 0 of a 1-D space
/// (`placed` false) until `[:, None]` places it on an axis of a larger one.
class IndexObject final : public Object {
public:
  std::string_view type_name() const override { return "IndexTile"; }
  Value get_item(Interpreter &, const Value &key) override;
  void set_item(Interpreter &, const Value &key, const Value &value) override;
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override;
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> unary_op(Interpreter &, python::UnaryOpKind op) override;
  std::optional<Value> compare(Interpreter &, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override;

  /// The canonical text of the expression: `i0 + 8*i1 + 3`.
  std::string text() const;
  /// The index tile's shape: each axis's count, 1 where no term uses it.
  ir::Shape shape() const;
  /// The term on `axis`, or null.
  const IndexTerm *term(int axis) const;

  Affine constant;
  ir::SmallVector<IndexTerm, 3> terms; ///< sorted by axis, at most one per axis
  int rank = 1;
  bool placed = false;
};

/// A predicate over index tiles (`mask=(i * 128 + ix < n)`), recorded on the instruction and
/// relaxing bounds checks, as in NKI.
class MaskObject final : public Object {
public:
  std::string_view type_name() const override { return "Mask"; }
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> unary_op(Interpreter &, python::UnaryOpKind op) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override { return text; }
  std::string text;
};

/// An index expression as a constant-only IndexObject (an int or a program-id affine), or
/// the IndexObject itself; nullopt for anything else.
std::optional<IndexObject> to_index(const Value &v);

/// `nl.arange(start, stop, step)`: one term on a 1-D index space.
Value make_arange(std::int64_t start, std::int64_t stop, std::int64_t step);
/// `nl.mgrid`: `nl.mgrid[0:128, 0:512]` gives index tiles `.p` (axis 0) and `.x` (axis 1).
Value make_mgrid();
/// The index tiles of an `nl.mgrid[...]` result when `v` is one (a tensor indexed by the grid
/// itself is indexed by its tiles), else nullopt.
std::optional<std::vector<Value>> mgrid_items(const Value &v);

} // namespace nkicc::nki
