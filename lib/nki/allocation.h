// NKI's direct allocation (its direct allocation guide; `nki.compiler`): a tensor created with
// `buffer=ncc.sbuf.mod_alloc(...)`, `ncc.sbuf.alloc(func)` or their PSUM forms places each of its
// tiles (each block of a block tensor) where the kernel says. nkicc checks each place against
// NKI's rules and the memory's capacity when the tile is made, records it on the tile
// (ir::Tensor::user_placed), and allocate_on_chip() places the other tiles around it and
// reports two placed tiles live at once on the same bytes.
#pragma once

#include "objects.h"

#include <span>

namespace nkicc::nki {

class KernelBuilder;

/// A buffer that places its tiles: what `ncc.sbuf.mod_alloc(...)` and friends return.
class PlacementObject : public BufferObject {
public:
  using BufferObject::BufferObject;
  struct Place {
    std::int64_t partition = 0;
    std::int64_t byte_offset = 0; ///< in PSUM: bank * 2 KiB + the address within the bank
  };
  /// Where logical block `index` (empty without block dimensions) of a tile of `partitions`
  /// partitions and `bytes` bytes per partition goes, as the kernel's rule says.
  virtual Place place(Interpreter &interp, std::span<const std::int64_t> index, std::int64_t partitions,
                      std::int64_t bytes) = 0;
  std::string repr() const override { return description; }
  std::string description; ///< `ncc.sbuf.mod_alloc(base_addr=1024)`
};

/// Places tile `id` (block `index` of its tensor) by `placement`, checking NKI's rules: the
/// start partition (0 for more than 64 partitions, 0 or 64 for more than 32, a multiple of 32
/// otherwise), the bytes inside a partition (inside one bank in PSUM).
void place_tile(KernelBuilder &kb, ir::TensorId id, PlacementObject &placement, std::span<const std::int64_t> index);
/// The place `placement` gives block `index` of a tile shaped as `t`, checked as place_tile does.
PlacementObject::Place check_place(KernelBuilder &kb, PlacementObject &placement, std::span<const std::int64_t> index,
                                   const ir::Tensor &t);

/// The `nki.compiler` module (also `neuronxcc.nki.compiler`): sbuf/psum with alloc, mod_alloc
/// and auto_alloc, the kernel decorators and the loop directives.
std::shared_ptr<ModuleObject> make_compiler_module(const std::string &name);

} // namespace nkicc::nki
