// The kernel IR a trace produces (SPEC §3, §6; seed 001 §2): tensors, instructions in program
// order with access patterns, and the facts the backend_config carries (MAC count, collectives).
// The BIR writer serializes exactly this; `--emit=ir` prints it as canonical text.
#pragma once

#include "nkicc/ir/small_vector.h"
#include "nkicc/support/dtype.h"
#include "nkicc/support/py_constant.h"
#include "nkicc/support/source_manager.h"
#include "nkicc/trace/value.h"

#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nkicc::ir {

using trace::LoopKind;

enum class Memory : std::uint8_t { SharedHbm, PrivateHbm, Sbuf, Psum };
enum class TensorRole : std::uint8_t { Input, Output, Internal };
/// NeuronCore engines: Tensor (PE), Vector (DVE), Scalar (ACT), GpSimd (POOL), Sync (SP, DMA).
enum class Engine : std::uint8_t { Tensor, Vector, Scalar, GpSimd, Sync };

std::string_view memory_name(Memory m);   ///< shared_hbm, private_hbm, sbuf, psum
std::string_view role_name(TensorRole r); ///< input, output, internal
std::string_view engine_name(Engine e);   ///< tensor, vector, scalar, gpsimd, sync
/// SBUF and PSUM hold tiles that allocate_on_chip() places; HBM tensors have no allocation.
bool is_on_chip(Memory m);

using TensorId = std::uint32_t;

struct Tensor {
  std::string name;
  TensorRole role = TensorRole::Internal;
  Memory memory = Memory::Sbuf;
  std::vector<std::int64_t> shape; ///< dim 0 is the partition dimension for SBUF/PSUM
  DType dtype = DType::Float32;
  SourceLoc loc; ///< where the kernel created it

  /// Allocation, filled by allocate_on_chip() for SBUF/PSUM tiles: partitions
  /// [partition_start, partition_start + shape[0]) and bytes [byte_offset, byte_offset +
  /// bytes_per_partition) of each.
  std::int64_t partition_start = 0;
  std::int64_t byte_offset = -1;
  std::int64_t bytes_per_partition = 0;
};

/// Up to three SPMD grid axes: a view's offset may carry `coefficient * program_id(axis)`.
inline constexpr std::size_t kMaxGridAxes = 3;

/// Dimensions an access pattern keeps inline (partition + two free); more go to the heap.
inline constexpr std::uint32_t kInlinePatternDims = 3;
/// `[step, num]` per dimension of an access pattern.
using PatternPairs = SmallVector<std::pair<std::int64_t, std::int64_t>, kInlinePatternDims>;

/// A view of a tensor: a loop nest over the row-major flat tensor, `[[step, num], ...]`,
/// partition pair first, plus an element offset (reference/nki.md "Access patterns").
struct AccessPattern {
  TensorId tensor = 0;
  PatternPairs pattern; ///< [step, num] per dimension
  std::int64_t offset = 0;
  std::array<std::int64_t, kMaxGridAxes> program_offset{}; ///< per-instance term of the offset

  /// The shape the view presents: the `num` of each pair.
  std::vector<std::int64_t> shape() const;
};

/// Instruction opcodes; the names follow NKI's ISA (`nisa.*`) and the nl ops that lower to them.
enum class Opcode : std::uint8_t {
  Load,         ///< DMA HBM -> SBUF (nl.load)
  Store,        ///< DMA SBUF -> HBM (nl.store)
  DmaCopy,      ///< nisa.dma_copy
  TensorCopy,   ///< nl.copy, nisa.tensor_copy, PSUM -> SBUF
  MatMul,       ///< nisa.nc_matmul / nl.matmul: stationary.T @ moving into PSUM
  Transpose,    ///< nisa.nc_transpose / nl.transpose
  TensorTensor, ///< element-wise binary op of two tiles (attr op)
  TensorScalar, ///< element-wise op of a tile and scalars (attrs op0, operand0, ...)
  Activation,   ///< f(data * scale + bias) on the Scalar engine (attr func)
  TensorReduce, ///< reduction over free axes (attrs op, axis, negate, keepdims)
  Memset,       ///< fill with a constant (nl.zeros, nisa.memset)
  Iota,         ///< nisa.iota
  AffineSelect, ///< nisa.affine_select
  BnStats,      ///< nisa.bn_stats
  BnAggr,       ///< nisa.bn_aggr
  Select,       ///< nl.where
  Collective,   ///< any collective op (sets has_collectives)
};
std::string_view opcode_name(Opcode op);

struct Instruction {
  Opcode opcode = Opcode::TensorCopy;
  Engine engine = Engine::Vector;
  LoopKind loop_kind = LoopKind::None;
  std::vector<AccessPattern> dst;
  std::vector<AccessPattern> src;
  /// Named attributes in a fixed order per opcode (activation function, ALU op, axis, mask
  /// bounds, accumulate flag, ...).
  std::vector<std::pair<std::string, PyConstant>> attrs;
  SourceLoc loc; ///< the kernel expression that emitted it
};

/// One traced kernel specialization.
struct Function {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Instruction> instructions;
  std::vector<std::string> input_names;  ///< the kernel's tensor parameter names, in order
  std::vector<std::string> output_names; ///< the returned tensors' names, in order
  std::int64_t matmul_mac_count = 0;     ///< K*M*N summed over MatMul instructions
  bool has_collectives = false;
};

/// The canonical, line-oriented text of a function (`--emit=ir`), stable for golden tests:
/// a header, one line per tensor, one line per instruction. Source locations are printed as
/// line:col only (never paths), so output does not depend on where files live. The grammar of
/// each line is at the top of lib/ir/print.cpp.
std::string print_function(const Function &fn, const SourceManager &sources);

/// The allocation error of allocate_on_chip(): which tile did not fit, and the figures.
struct AllocationError {
  TensorId tensor = 0;
  Memory memory = Memory::Sbuf;
  std::int64_t needed = 0;   ///< bytes per partition the tile needs
  std::int64_t capacity = 0; ///< bytes per partition of the memory
  std::int64_t in_use = 0;   ///< bytes per partition held by live tiles when it failed
};

/// Assigns every SBUF and PSUM tile a partition range and byte offset, following liveness
/// (SPEC §3 `allocate_pending_tensors`): a tile is live from the first instruction that touches
/// it (as dst or src) to the last one, so tiles of unrolled loop iterations reuse space. Tiles are
/// placed first-fit at their first use, in instruction order (dst before src), and freed after
/// their last use; every tile starts at partition 0. Offsets are 4-byte aligned; in PSUM a tile
/// of at most one 2 KiB bank lies inside one bank, a larger one starts at a bank. A tile no
/// instruction touches keeps byte_offset -1; bytes_per_partition is set on every SBUF/PSUM
/// tensor. Runs in O((tensors + access patterns) log capacity). Returns the first tile that
/// does not fit (tiles placed before it keep their offsets), or nothing when all fit.
std::optional<AllocationError> allocate_on_chip(Function &fn, std::int64_t sbuf_bytes_per_partition,
                                                std::int64_t psum_bytes_per_partition);

/// Bytes one partition of a tile needs: the product of its free dimensions times the element
/// size (saturating at INT64_MAX, so an absurd shape fails allocation instead of wrapping).
std::int64_t bytes_per_partition(const Tensor &t);

} // namespace nkicc::ir
