// Indirect DMA (reference/nki.md, NKI's nl.load / nl.store "indirect DMA access with dynamic
// index values"): a tile of indices in an index position of an HBM tensor's view gathers
// (`nl.load(data[idx[:, 0], i_f])`) or scatters (`nl.store(data[idx[:, 0], i_f], value=t)`) rows
// chosen at run time; a single-element tile (`w[expert[0, 0], ...]`) is a run-time offset of the
// whole access. Indices must be in SBUF and index the partition dimension of the access or a
// dimension the access drops (NKI's err_indirect_indices_free_dim otherwise).
//
// In the IR the DMA instruction carries the index tile as its last source operand, and its
// indexed operand's view takes index 0 on the indexed dimension; the attributes say which side
// is indexed (`indirect='src'` or `'dst'`) and how (`indirect_step`, `indirect_size`): element e
// of the view is at `view offset(e) + index(e's partition) * indirect_step`, with the index in
// [0, indirect_size) (out of range is a run-time error, as on the device, unless the DMA says
// `oob_mode='skip'`: then the element is not moved).
#include "lowering.h"
#include "objects.h"
#include "tensor.h"

#include <fmt/format.h>

#include <algorithm>

namespace nkicc::nki {

namespace {} // namespace

std::int64_t indirect_partitions(const Value &v) {
  auto *t = v.as<TensorRef>();
  if (!t || t->ap.pattern.empty())
    return 0;
  return t->ap.pattern[0].second;
}

std::int64_t add_indirect_index(const TensorRef &view, TensorRef &out, const TensorRef &index, std::int64_t step,
                                std::int64_t size) {
  const ir::Tensor &t = view.tensor();
  const ir::Tensor &it = index.tensor();
  // On chip, one index is a dynamic offset within each partition (nisa.tensor_copy_dynamic_src
  // and _dst); a tile of several indexes HBM only.
  bool partition_dim = !t.shape.empty() && step == product(t.shape, 1) && size == t.shape[0];
  if (ir::is_on_chip(t.memory) && (product(index.shape()) != 1 || partition_dim))
    raise_error("TypeError", fmt::format("tile '{}' cannot be indexed by tile '{}': a tile of indices indexes HBM "
                                         "tensors only (indirect DMA: nl.load, nl.store, nisa.dma_copy), and one "
                                         "index is a dynamic offset within a tile's partitions "
                                         "(nisa.tensor_copy_dynamic_src)",
                                         t.name, it.name));
  if (!index.out_of_bound.empty())
    raise_error("err_tensor_access_out_of_bound", index.out_of_bound);
  if (out.indirect)
    raise_error("not-modelled",
                fmt::format("nkicc does not model two index tiles in one access of tensor '{}'", t.name));
  if (it.memory != ir::Memory::Sbuf)
    raise_error("err_unsupported_memory",
                fmt::format("the index tile '{}' of an indirect access to '{}' must be in 'sbuf', not '{}'", it.name,
                            t.name, ir::memory_name(it.memory)));
  if (!dtype_is_integer(it.dtype, false))
    raise_error("TypeError", fmt::format("the index tile '{}' of an indirect access to '{}' must hold integers, not {}",
                                         it.name, t.name, dtype_name(it.dtype)));
  ir::Shape shape = index.shape();
  if (shape.empty() || product(shape, 1) != 1)
    raise_error("err_indirect_indices_free_dim",
                fmt::format("Dynamic indexing for load/store only supports the indirect indexing to be on the "
                            "partition or block dimension: index tile {} of '{}' must hold one index per partition",
                            index.describe(), t.name));
  auto rec = std::make_shared<IndirectIndex>();
  rec->index = index.ap;
  rec->step = step;
  rec->size = size;
  out.indirect = std::move(rec);
  return shape[0];
}

void add_indirect_operand(const TensorRef &view, std::string_view side, std::vector<ir::AccessPattern> &src,
                          ir::AttrList &attrs) {
  if (!view.indirect)
    return;
  src.push_back(view.indirect->index);
  attrs.emplace_back("indirect", PyConstant::str(std::string(side)));
  attrs.emplace_back("indirect_step", PyConstant::integer(view.indirect->step));
  attrs.emplace_back("indirect_size", PyConstant::integer(view.indirect->size));
}

bool oob_skip(const Value *mode, std::string_view op, std::string_view param) {
  if (!mode)
    return false;
  if (auto *m = mode->as<OobModeObject>())
    return m->skip;
  raise_error("TypeError", fmt::format("'{}' of '{}' must be nisa.oob_mode.error or nisa.oob_mode.skip, not {}", param,
                                       op, trace::repr(*mode)));
}

void add_oob_mode(bool skip, ir::AttrList &attrs) {
  bool indirect = std::any_of(attrs.begin(), attrs.end(), [](const auto &a) { return a.first == "indirect"; });
  if (skip && indirect)
    attrs.emplace_back("oob_mode", PyConstant::str("skip"));
}

} // namespace nkicc::nki
