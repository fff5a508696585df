// Tensors and tiles as a kernel holds them: a view of a traced tensor (the whole tensor when
// created, a sub-view when indexed), lowered to an IR access pattern with its bounds checked.
// Views of HBM tensors feed loads and stores; views of SBUF/PSUM tiles feed compute.
#pragma once

#include "builder.h"

namespace nkicc::nki {

/// The index tile of an indirect access (`t[idx[:, 0], i_f]`, NKI's indirect DMA): at run
/// time each element's offset gains `value * step`, where `value` is the index tile's element on
/// the element's partition (or its only element, `w[e[0, 0], ...]`), which must lie in [0, size).
struct IndirectIndex {
  ir::AccessPattern index; ///< an SBUF view of integers: [P, 1] or [1, 1]
  std::int64_t step = 0;   ///< the indexed dimension's step
  std::int64_t size = 0;   ///< the indexed dimension's size
};

class TensorRef final : public Object {
public:
  std::string_view type_name() const override;
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override;
  Value get_item(Interpreter &, const Value &key) override;
  void set_item(Interpreter &, const Value &key, const Value &value) override;
  void aug_set_item(Interpreter &, const Value &key, python::BinOpKind op, const Value &value) override;
  std::optional<Value> inplace_op(Interpreter &, python::BinOpKind op, const Value &other) override;
  std::optional<Value> binary_op(Interpreter &, python::BinOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> unary_op(Interpreter &, python::UnaryOpKind op) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override;
  void on_bind(std::string_view name) override;

  const ir::Tensor &tensor() const;
  ir::Shape shape() const { return ap.shape(); }
  /// `name[128, 512]`, as NKI's messages show a parameter.
  std::string describe() const;

  KernelBuilder *builder = nullptr;
  ir::AccessPattern ap;
  /// The first out-of-bound index of this view, if any: reported when an operation uses the
  /// view without a `mask=` (a masked access may reach past the end, as in NKI).
  std::string out_of_bound;
  /// Set on an HBM view indexed by a tile of indices; `ap` then takes index 0 on the indexed
  /// dimension (the dimension's pair has step 0, or is dropped for a single index).
  std::shared_ptr<const IndirectIndex> indirect;
  /// `t[...][mask]`: a predicate on the index tiles that the op reading this view applies to
  /// the instruction it emits, as its `mask=` (when it has none of its own).
  std::shared_ptr<const std::string> subscript_mask;
};

/// A tensor with block dimensions (`nl.ndarray((8, nl.par_dim(128), 512))`): indexing its
/// block dimensions with integers yields the block, a tile of its own (`a[i]`, `a[i, j, :, 0:64]`).
/// Whole, it is no tile: an op given one raises NKI's err_failed_to_infer_tile_from_local_tensor.
class BlockTensorRef final : public Object {
public:
  std::string_view type_name() const override { return "tensor"; }
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override;
  Value get_item(Interpreter &, const Value &key) override;
  void set_item(Interpreter &, const Value &key, const Value &value) override;
  void aug_set_item(Interpreter &, const Value &key, python::BinOpKind op, const Value &value) override;
  bool truthy(Interpreter &) override;
  std::string repr() const override;
  void on_bind(std::string_view name) override;

  const ir::BlockTensor &block_tensor() const { return builder->fn.block_tensors[index]; }
  /// A view of one block.
  std::shared_ptr<TensorRef> block_view(std::size_t block);
  /// NKI's error for using the whole block tensor where a tile is needed.
  [[noreturn]] void raise_not_a_tile() const;

  KernelBuilder *builder = nullptr;
  std::uint32_t index = 0; ///< in fn.block_tensors
  /// The leading block indices already chosen: `t[i]` of a tensor with two block dimensions is
  /// a block tensor of the remaining one (`dy_o_sum[i_q_head]` passed to a helper).
  std::vector<std::int64_t> fixed;

  /// The block dimensions still to index, and the shape this view presents.
  std::size_t open_block_dims() const { return block_tensor().partition_dim - fixed.size(); }
  ir::Shape view_shape() const;
};

/// An index tile in an index position of `view` (indirect.cpp): checks it (on SBUF, integers,
/// one index per partition), records it on `out` for the dimension of `step` and `size`, and
/// returns its partition count (1: a single index for the whole access).
std::int64_t add_indirect_index(const TensorRef &view, TensorRef &out, const TensorRef &index, std::int64_t step,
                                std::int64_t size);
/// The partitions of an index tile used in an index position, 0 when `v` is none.
std::int64_t indirect_partitions(const Value &v);
/// A DMA's operands and attributes for an indirectly indexed side: appends the index tile to
/// `src` and `indirect='src'|'dst'`, `indirect_step`, `indirect_size` to `attrs`.
void add_indirect_operand(const TensorRef &view, std::string_view side, std::vector<ir::AccessPattern> &src,
                          ir::AttrList &attrs);
/// A DMA's out-of-bounds mode argument (`mode=` of nl.load/nl.store, `oob_mode=` of
/// nisa.dma_copy): true for oob_mode.skip, false for oob_mode.error or none; anything else is a
/// TypeError naming `param` of `op`.
bool oob_skip(const Value *mode, std::string_view op, std::string_view param);
/// Records oob_mode.skip on an indirect DMA's attributes (`oob_mode='skip'`): the simulator
/// then drops the elements whose index is outside the indexed dimension. A DMA without an index
/// tile has no run-time index to check, so the mode changes nothing there.
void add_oob_mode(bool skip, ir::AttrList &attrs);

/// `x.view(dtype)`: a view of the same bytes as `dtype` (KernelBuilder::new_view).
std::shared_ptr<TensorRef> view_as(const TensorRef &self, DType to);

/// Methods of a tensor view: `x.reshape(shape)`, `x.broadcast_to(shape)`, `x.ap(...)`, `x.view(dtype)`.
std::optional<Value> tensor_method(Interpreter &interp, std::shared_ptr<TensorRef> self, std::string_view name);

/// `target[...] = value` and `target[...] op= value` on a view: a store into HBM, a copy or
/// memset on chip, and `psum[...] += nl.matmul(...)` folded into an accumulating matmul.
void assign_to_view(Interpreter &interp, TensorRef &target, const Value &value, std::optional<python::BinOpKind> op);

/// Python operators on tiles (`a + b`, `x * 0.125`, `1.0 / s`, `-x`).
std::optional<Value> tensor_binary_operator(Interpreter &interp, std::shared_ptr<TensorRef> self, python::BinOpKind op,
                                            const Value &other, bool reflected);
std::optional<Value> tensor_unary_operator(Interpreter &interp, std::shared_ptr<TensorRef> self,
                                           python::UnaryOpKind op);

} // namespace nkicc::nki
