// The kernel IR a trace produces (SPEC §3, §6; seed 001 §2): tensors, instructions in program
// order with access patterns, and the facts the backend_config carries (MAC count, collectives).
// The BIR writer serializes exactly this; `--emit=ir` prints it as canonical text.
#pragma once

#include "nkicc/ir/segmented_vector.h"
#include "nkicc/ir/operand_offset.h"
#include "nkicc/ir/small_vector.h"
#include "nkicc/ir/tensor_name.h"
#include "nkicc/ir/tensor_shape.h"
#include "nkicc/support/dtype.h"
#include "nkicc/support/py_constant.h"
#include "nkicc/support/source_manager.h"
#include "nkicc/support/text_options.h"
#include "nkicc/trace/value.h"

#include <array>
#include <span>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nkicc {
class TextSink;
}

namespace nkicc::ir {

using trace::LoopKind;

enum class Memory : std::uint8_t { SharedHbm, PrivateHbm, Sbuf, Psum };
/// Constant: a shared HBM tensor whose contents the kernel gave at trace time
/// (`nl.shared_constant`, `nl.shared_identity_matrix`); its bytes travel in the IR and the BIR.
enum class TensorRole : std::uint8_t { Input, Output, Internal, Constant };
/// NeuronCore engines: Tensor (PE), Vector (DVE), Scalar (ACT), GpSimd (POOL), Sync (SP, DMA).
enum class Engine : std::uint8_t { Tensor, Vector, Scalar, GpSimd, Sync };

std::string_view memory_name(Memory m);   ///< shared_hbm, private_hbm, sbuf, psum
std::string_view role_name(TensorRole r); ///< input, output, internal, constant
std::string_view engine_name(Engine e);   ///< tensor, vector, scalar, gpsimd, sync
/// SBUF and PSUM hold tiles that allocate_on_chip() places; HBM tensors have no allocation.
inline bool is_on_chip(Memory m) { return m == Memory::Sbuf || m == Memory::Psum; }

using TensorId = std::uint32_t;

struct Tensor {
  TensorName name;
  TensorShape shape; ///< dim 0 is the partition dimension for SBUF/PSUM
  SourceLoc loc;     ///< where the kernel created it
  TensorRole role = TensorRole::Internal;
  Memory memory = Memory::Sbuf;
  DType dtype = DType::Float32;
  /// Placed by the kernel (`buffer=ncc.sbuf.mod_alloc(...)`): allocate_on_chip() keeps its
  /// partition_start and byte_offset and places the other tiles around it.
  bool user_placed = false;

  /// Allocation, filled by allocate_on_chip() for SBUF/PSUM tiles: partitions
  /// [partition_start, partition_start + shape[0]) and bytes [byte_offset, byte_offset +
  /// bytes_per_partition()) of each. (A trace holds one Tensor per tile it creates, up to
  /// millions: the fields are ordered to pack into 40 bytes.)
  std::int32_t partition_start = 0;
  std::int64_t byte_offset = -1;

  /// The bytes an SBUF or PSUM tile takes in each of its partitions (ir::bytes_per_partition);
  /// 0 for an HBM tensor. Computed from the shape and dtype, not kept.
  std::int64_t bytes_per_partition() const;
};

/// A tensor id that names no tensor (a block of a block tensor that no instruction uses).
inline constexpr TensorId kNoTensor = 0xFFFFFFFFu;

/// A tensor with block dimensions before its partition dimension
/// (`nl.ndarray((8, nl.par_dim(128), 512), buffer=nl.psum)`, NKI's block dimension guide):
/// each block is a tile of its own, an IR Tensor of the block's shape on the same partitions
/// with its own bytes, allocated by its own liveness. This record keeps the whole tensor for
/// the IR text and BIR: its per-partition size, if every block were live at once, is
/// product(block dims) x product(free dims) x dtype size.
struct BlockTensor {
  std::string name;
  Shape shape;                     ///< the block dimensions, then the partition and free dimensions
  std::uint32_t partition_dim = 0; ///< the number of block dimensions
  Memory memory = Memory::Sbuf;
  DType dtype = DType::Float32;
  SourceLoc loc;
  std::vector<TensorId> blocks; ///< row-major over the block dimensions; kNoTensor when unused

  std::int64_t num_blocks() const;
  /// The block's index along each block dimension (`[1, 3]`).
  std::vector<std::int64_t> block_index(std::size_t block) const;
};

/// The contents of a Constant tensor: its elements in C order, each encoded in the tensor's
/// dtype as the BIR stores it (little-endian; sim::encode()'s encodings).
struct ConstantData {
  TensorId tensor = 0;
  std::vector<std::uint8_t> bytes;
};

/// ` data=sha256:<16 hex digits>`: how the IR text and `nkicc dis` show a constant's contents.
std::string constant_data_text(std::span<const std::uint8_t> bytes);

/// A tensor that reinterprets another's bytes with its own dtype (`t.view(dtype)`): the same
/// memory and the same bytes (an on-chip view has its base's allocation), its last dimension
/// scaled by the ratio of the two dtypes' sizes. A base is never itself a view.
struct TensorView {
  TensorId tensor = 0;
  TensorId base = 0;
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
  Shape shape() const;
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
  // The reduce/scan family (nisa.tensor_tensor_scan, ...).
  TensorTensorScan,   ///< nisa.tensor_tensor_scan: a scan along the free axes (attrs op0, op1, initial, ...)
  PartitionReduce,    ///< nisa.tensor_partition_reduce: a reduction across partitions (attr op)
  SelectReduce,       ///< nisa.select_reduce: predicate ? on_true : on_false, then an optional max
  ScalarTensorTensor, ///< nisa.scalar_tensor_tensor: (data op0 operand0) op1 operand1

  // Selection, shuffles and random numbers (lib/nki/isa_select.cpp, lib/sim/visitors_select.cpp).
  Max8,           ///< nisa.max8: the 8 largest values of each partition, descending
  FindIndex8,     ///< nisa.nc_find_index8: the index of the first match of each of 8 values
  MatchReplace8,  ///< nisa.nc_match_replace8: the first match of each of 8 values replaced by imm
  StreamShuffle,  ///< nisa.nc_stream_shuffle: partitions moved within each 32-partition quadrant
  Rand,           ///< nl.rand: uniform [0, 1) values from the engine's random number generator
  RandomSeed,     ///< nl.random_seed: seeds the random number generator
  Dropout,        ///< nisa.dropout: elements zeroed with a probability
  SequenceBounds, ///< nisa.sequence_bounds: start and end of each element's segment

  // Range selection (lib/nki/isa_reduce.cpp, lib/sim/visitors_reduce.cpp), local gather and
  // device printing (lib/nki/isa_select.cpp, lib/sim/visitors_select.cpp).
  RangeSelect,     ///< nisa.range_select: on_true where its free index is within bounds, else a fill value
  LocalGather,     ///< nisa.local_gather: GpSimd gather within each core's 16 partitions
  DevicePrint,     ///< nl.device_print: the simulator prints a tile (no computation)
  GatherFlattened, ///< nl.gather_flattened: per partition, elements of the flattened free dims by index

  // Microscaling (lib/nki/isa_mx.cpp, lib/sim/visitors_mx.cpp), NeuronCore-v4.
  MatMulMx,   ///< nisa.nc_matmul_mx: dequantizing matmul of x4-packed MX data with their scales
  QuantizeMx, ///< nisa.quantize_mx: bfloat16/float16 to x4-packed MX float8 and one scale per 8x4 group
};
std::string_view opcode_name(Opcode op);

/// Named attributes of an instruction, in a fixed order per opcode (activation function, ALU
/// op, axis, mask bounds, accumulate flag, ...).
using AttrList = std::vector<std::pair<std::string, PyConstant>>;

/// An access pattern as a Function stores it (12 bytes): the `[step, num]` list and the grid
/// terms are interned in the Function as one view id, since a trace repeats the same few
/// thousand of them over millions of instructions.
struct Operand {
  TensorId tensor = 0;
  std::uint32_t view = 0; ///< Function::pattern(), Function::program_offset()
  OperandOffset offset;
};
static_assert(sizeof(Operand) == 12);

/// One instruction (24 bytes): its operands live in the Function, `dst` first, then `src`, and
/// its attributes are an interned list.
struct Instruction {
  Opcode opcode = Opcode::TensorCopy;
  Engine engine = Engine::Vector;
  LoopKind loop_kind = LoopKind::None;
  std::uint8_t num_dst = 0;
  std::uint8_t num_src = 0;
  std::uint32_t attrs = 0;         ///< Function::attrs(); 0 is the empty list
  std::uint32_t first_operand = 0; ///< index of the first dst operand in the Function
  SourceLoc loc;                   ///< the kernel expression that emitted it
};

/// Interns lists of T (trivially copyable) as dense ids: equal lists get the same id, and each
/// distinct list is stored once. Open addressing over the ids keeps a lookup allocation-free.
template <class T> class ListInterner {
public:
  std::uint32_t intern(const T *items, std::size_t count);
  std::span<const T> get(std::uint32_t id) const {
    const Entry &e = entries_[id];
    return {items_.data() + e.start, e.count};
  }
  std::size_t size() const { return entries_.size(); }

private:
  struct Entry {
    std::size_t start;
    std::uint32_t count;
    std::uint64_t hash;
  };
  static std::uint64_t hash_of(const T *items, std::size_t count);
  void grow();
  std::vector<T> items_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> slots_; ///< id + 1, or 0 for an empty slot
};

/// One traced kernel specialization. Tensors are plain records; instructions refer to their
/// operands and attributes through the Function, which stores each distinct access pattern,
/// grid term and attribute list once (about 24 bytes per instruction plus 16 per operand).
class Function {
public:
  Function();

  std::string name;
  SegmentedVector<Tensor> tensors;
  SegmentedVector<Instruction> instructions;
  std::vector<std::string> input_names;  ///< the kernel's tensor parameter names, in order
  std::vector<std::string> output_names; ///< the returned tensors' names, in order
  std::int64_t matmul_mac_count = 0;     ///< K*M*N summed over MatMul instructions
  bool has_collectives = false;
  std::vector<BlockTensor> block_tensors; ///< tensors with block dimensions, by creation
  std::vector<ConstantData> constants;    ///< the data of each Constant tensor, by creation
  std::vector<TensorView> views;          ///< tensors that view another's bytes, by creation
  /// Per tensor, the tensor whose bytes it uses: itself, or a view's base.
  std::vector<TensorId> storage_roots() const;
  /// A view's base, or kNoTensor.
  TensorId view_base(TensorId id) const;
  /// The data of a Constant tensor; null for any other.
  const ConstantData *constant_data(TensorId id) const;

  /// Appends an instruction with its operands and attributes; `header` gives the opcode,
  /// engine, loop kind and location.
  void append(Instruction header, std::span<const AccessPattern> dst, std::span<const AccessPattern> src,
              const AttrList &attrs = {});

  /// An instruction's operands, dst before src.
  std::span<const Operand> operands(const Instruction &inst) const {
    std::size_t n = std::size_t{inst.num_dst} + inst.num_src;
    return n ? std::span<const Operand>(&operands_[inst.first_operand], n) : std::span<const Operand>();
  }
  /// The same, writable, for passes that rewrite tensor ids.
  std::span<Operand> operands(const Instruction &inst) {
    std::size_t n = std::size_t{inst.num_dst} + inst.num_src;
    return n ? std::span<Operand>(&operands_[inst.first_operand], n) : std::span<Operand>();
  }
  std::span<const Operand> dst(const Instruction &inst) const { return operands(inst).first(inst.num_dst); }
  std::span<const Operand> src(const Instruction &inst) const { return operands(inst).subspan(inst.num_dst); }

  std::span<const std::pair<std::int64_t, std::int64_t>> pattern(const Operand &op) const {
    return patterns_.get(pattern_id(op));
  }
  std::span<const std::int64_t> program_offset(const Operand &op) const { return programs_.get(program_id(op)); }
  /// The interned ids of an operand's `[step, num]` list and of its grid terms: equal lists
  /// have equal ids (writers memoize by them). The grid terms' id is 0 when every term is 0.
  std::uint32_t pattern_id(const Operand &op) const { return views_.get(op.view)[0]; }
  std::uint32_t program_id(const Operand &op) const { return views_.get(op.view)[1]; }
  const AttrList &attrs(const Instruction &inst) const { return attr_lists_[inst.attrs]; }
  /// An operand in its full form.
  AccessPattern access_pattern(const Operand &op) const;

  /// Replaces one destination of an instruction (`psum[...] += nl.matmul(...)` retargets it).
  void set_dst(Instruction &inst, std::size_t i, const AccessPattern &ap);
  void set_attrs(Instruction &inst, const AttrList &attrs);

  /// Distinct attribute lists stored, the empty one included.
  std::size_t distinct_attr_lists() const { return attr_lists_.size(); }

private:
  Operand store(const AccessPattern &ap);

  /// Each instruction's operands are contiguous: one that would straddle two segments starts
  /// the next, and the slots skipped are never referred to.
  SegmentedVector<Operand> operands_;
  ListInterner<std::pair<std::int64_t, std::int64_t>> patterns_;
  ListInterner<std::int64_t> programs_;
  ListInterner<std::uint32_t> views_; ///< [pattern id, program id] pairs, an Operand's view
  struct RecentView {
    std::uint32_t pattern = 0, program = 0, view = 0;
  };
  RecentView recent_view_{~0u, ~0u, 0}; ///< the pair store() interned last
  ListInterner<char> attr_keys_;        ///< an attribute list's text, which identifies it
  std::vector<AttrList> attr_lists_;
  /// The lists set_attrs() interned last (0 is the empty list): enough for the distinct lists
  /// of one unrolled loop body (a softmax tile uses six), which a smaller ring would evict in turn.
  std::array<std::uint32_t, 16> recent_attrs_{};
  std::uint32_t next_recent_ = 0;
};

/// The canonical, line-oriented text of a function (`--emit=ir`), stable for golden tests:
/// a header, one line per tensor, one line per instruction. Source locations are printed as
/// line:col only (never paths), so output does not depend on where files live. The grammar of
/// each line is at the top of lib/ir/print.cpp. `options.source_locations` off leaves the
/// `@line:col` out (`options.calls` is the caller's business: a function is one call's).
std::string print_function(const Function &fn, const SourceManager &sources, const TextOptions &options = {});
/// Appends the text of print_function() to a sink, which may write it out as it grows.
void print_function(TextSink &out, const Function &fn, const SourceManager &sources, const TextOptions &options = {});

/// Makes tensor names unique in creation order: the first `load` keeps its name, later ones
/// become `load.1`, `load.2`, ..., skipping any name already taken (a later tensor named
/// `load.1` by the kernel becomes `load.1.1`). A block tensor is numbered as one name where
/// its first block appears, and each block becomes `name[i, j]` by its block index. The trace
/// numbers names once it is done, so that tiles renamed after their variable leave no gaps.
/// Memory is proportional to the number of distinct names the kernel chose, not to the number
/// of tensors.
void number_tensor_names(Function &fn);

/// The allocation error of allocate_on_chip(): which tile did not fit, and the figures; or
/// which two tiles the kernel placed on the same bytes while both are live.
struct AllocationError {
  TensorId tensor = 0;
  Memory memory = Memory::Sbuf;
  std::int64_t needed = 0;       ///< bytes per partition the tile needs
  std::int64_t capacity = 0;     ///< bytes per partition of the memory
  std::int64_t in_use = 0;       ///< bytes per partition held by live tiles when it failed
  TensorId overlaps = kNoTensor; ///< a live tile the kernel placed on the same bytes
  std::size_t instruction = 0;   ///< where both are live (for an overlap)
};

/// Assigns every SBUF and PSUM tile a partition range and byte offset, following liveness
/// (SPEC §3 `allocate_pending_tensors`): a tile is live from the first instruction that touches
/// it (as dst or src) to the last one, so tiles of unrolled loop iterations reuse space. Tiles are
/// placed first-fit at their first use, in instruction order (dst before src), and freed after
/// their last use; every tile starts at partition 0. A tile the kernel placed itself
/// (Tensor::user_placed) keeps its place; its bytes are kept free of the other tiles for the
/// whole kernel, and two placed tiles live at once must not share bytes of a partition (an
/// error naming both). Offsets are 4-byte aligned; in PSUM a tile
/// of at most one 2 KiB bank lies inside one bank, a larger one starts at a bank. A tile no
/// instruction touches keeps byte_offset -1; bytes_per_partition is set on every SBUF/PSUM
/// tensor. Runs in O((tensors + access patterns) log capacity). Returns the first tile that
/// does not fit (tiles placed before it keep their offsets), or nothing when all fit.
std::optional<AllocationError> allocate_on_chip(Function &fn, std::int64_t sbuf_bytes_per_partition,
                                                std::int64_t psum_bytes_per_partition);

/// Whether a masked on-chip operand stays inside its tile at every point of its iteration space
/// (over every SPMD instance) where `mask` (the instruction's predicate text) holds, each free
/// index within one partition; nullopt when the mask cannot be read or the space has more than
/// 2^24 points. check_layout() accepts a masked tile access past its tile when this is true.
std::optional<bool> masked_access_inside(const Function &fn, const Operand &op, std::span<const std::int64_t> grid,
                                         const std::string &mask);

/// A broken invariant of a traced function's layout, found by check_layout().
struct LayoutViolation {
  std::size_t instruction = 0; ///< the instruction it concerns, or kNoInstruction
  TensorId tensor = 0;
  std::string message;
};
inline constexpr std::size_t kNoInstruction = static_cast<std::size_t>(-1);

/// The tracer's internal consistency check of an allocated function (a violation is nkicc's
/// bug): every access pattern stays inside its tensor; on chip, its first pair steps over
/// whole partitions and the others stay inside one partition; every tile lies inside its
/// memory (a PSUM tile of at most a bank inside one bank); and no two tiles live at the same
/// time share bytes of a partition. `grid` bounds the program-id terms of the offsets.
std::optional<LayoutViolation> check_layout(const Function &fn, std::span<const std::int64_t> grid,
                                            std::int64_t sbuf_bytes_per_partition,
                                            std::int64_t psum_bytes_per_partition);

/// Bytes one partition of a tile needs: the product of its free dimensions times the element
/// size (saturating at INT64_MAX, so an absurd shape fails allocation instead of wrapping).
std::int64_t bytes_per_partition(const Tensor &t);

} // namespace nkicc::ir
