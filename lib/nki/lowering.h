// What the op families share: argument conversions, NKI's tile constraints with NKI's messages
// and ids (reference/nki.md), result tiles, broadcasting and dtype promotion, and the
// lowerings several ops reduce to (an element-wise op, an activation, a reduction, a matmul,
// a transpose, a store).
#pragma once

#include "builder.h"
#include "tensor.h"

#include <optional>

namespace nkicc::nki {

inline constexpr std::int64_t kMaxPartitions = 128;  // nl.tile_size.pmax
inline constexpr std::int64_t kPsumBankBytes = 2048; // nl.tile_size.psum_fmax fp32 elements
inline constexpr std::int64_t kStationaryFmax = 128; // nl.tile_size.gemm_stationary_fmax
inline constexpr std::int64_t kMovingFmax = 512;     // nl.tile_size.gemm_moving_fmax

// ---- conversions ------------------------------------------------------------------------------

/// A tensor argument. An out-of-bound view is NKI's error unless the operation is masked.
std::shared_ptr<TensorRef> as_tensor(const Value &v, std::string_view op, std::string_view param, bool masked = false);
std::optional<DType> dtype_arg(const Value *v, std::string_view op);
ir::Memory buffer_arg(const Value *v, ir::Memory fallback);
ir::Shape shape_arg(const Value &v, std::string_view op);
/// A shape as tensor creation reads it: where `nl.par_dim` marks the partition dimension.
struct TensorShape {
  ir::Shape dims;
  std::size_t partition_dim = 0;
  bool par_dim = false; ///< nl.par_dim marked it (else the legacy rule: dimension 0)
};
TensorShape tensor_shape_arg(const Value &v, std::string_view op);
/// The NKI name of an op argument (`np.exp`, `nl.add`, `nl.maximum`), for instruction attrs.
std::string op_name(const Value &v, std::string_view op, std::string_view param);
std::int64_t int_arg(const Value &v, std::string_view op, std::string_view param);
PyConstant scalar_constant(const Value &v);
bool is_scalar(const Value &v);
/// The nl name of a Python operator on tiles (`+`: add), or empty.
std::string_view binop_name(python::BinOpKind op);

// ---- constraints ------------------------------------------------------------------------------

void require_on_chip(const TensorRef &t, std::string_view op, std::string_view param);
/// The error for passing what nl.loop_reduce gives as an operand before it is assigned into its
/// destination (LoopReduceObject).
[[noreturn]] void raise_loop_reduce_operand(std::string_view param, std::string_view op);
void require_hbm(const TensorRef &t, std::string_view op, std::string_view param);
/// TC#1: at most 128 partitions and 4 free dimensions.
void check_partitions(const ir::Shape &shape);
/// TC#2: a PSUM tile's free size fits one 2 KiB bank.
void check_psum_tile(const ir::Shape &shape, DType dtype);
void check_store_shape(const TensorRef &dst, const TensorRef &value, std::string_view dst_name,
                       std::string_view value_name);
std::int64_t product(const ir::Shape &dims, std::size_t from = 0);

// ---- results ----------------------------------------------------------------------------------

/// NumPy-style promotion between tile dtypes: floats win over ints, wider over narrower.
DType promote(DType a, DType b);
/// The dtype NKI infers for a Python number in arithmetic with a tile: bool uint8, int int32,
/// float float32 (then promoted with the tile's).
DType weak_scalar_dtype(const Value &v);
std::shared_ptr<TensorRef> new_tile(KernelBuilder &kb, std::string_view stem, ir::Memory memory, ir::Shape shape,
                                    DType dtype);
/// A matmul's attributes: every matmul of a trace has one of these two lists.
const ir::AttrList &accumulate_attrs(bool accumulate);
ir::AttrList with_mask(ir::AttrList attrs, const Value *mask);
/// The result shape of an element-wise op: dimensions of size 1 broadcast. The partition
/// dimension broadcasts only for nl's ops (`nl.add(a[128, 512], b[1, 512])`); nisa's need
/// equal partitions (err_num_partition_mismatch).
ir::Shape broadcast_shapes(const TensorRef &a, const TensorRef &b, std::string_view op, std::string_view pa,
                           std::string_view pb, bool partition_broadcast = false);
/// Broadcasts a view to `shape` by zero steps on its size-1 dimensions.
ir::AccessPattern broadcast_view(const TensorRef &t, const ir::Shape &shape);

// ---- shared lowerings -------------------------------------------------------------------------

Value tensor_tensor(KernelBuilder &kb, std::string_view op, const TensorRef &a, const TensorRef &b,
                    std::optional<DType> dtype, std::string_view pa = "x", std::string_view pb = "y",
                    std::string_view label = {});
Value tensor_scalar(KernelBuilder &kb, std::string_view op, const TensorRef &a, const Value &scalar, bool reverse,
                    std::optional<DType> dtype);
/// An element-wise binary op of tiles and scalars (nl.add(x, y), x + y, ...).
Value elementwise(KernelBuilder &kb, std::string_view op, const Value &x, const Value &y, std::optional<DType> dtype,
                  std::string_view label = {});
/// A free-axis reduction fused into an instruction (activation's `reduce_op=`/`reduce_res=`/
/// `reduce_cmd=`, tensor_scalar_reduce, select_reduce; isa_reduce.cpp): its attributes, and the
/// `reduce_res` view the engine's accumulator registers are read out into (a second
/// destination), when the kernel gives one.
struct FusedReduce {
  ir::AttrList attrs;
  std::optional<ir::AccessPattern> dst;
};
/// f(data * scale + bias) on the Scalar engine, with its fused reduction if any.
Value activation(KernelBuilder &kb, std::string_view func, const TensorRef &x, std::optional<DType> dtype,
                 const Value *bias = nullptr, const Value *scale = nullptr, std::string_view label = {},
                 const FusedReduce *reduce = nullptr);
/// A reduction over free axes.
Value reduce(KernelBuilder &kb, std::string_view op, const TensorRef &x, const Value &axis, bool keepdims, bool negate,
             std::optional<DType> dtype, std::string_view label = {});
/// How nc_matmul uses the Tensor Engine's 128x128 PE array (NKI's tiling and performance modes):
/// `tile_size` (rows, columns) of 128, 64 or (NeuronCore-v3 and newer) 32 PEs, placed at
/// `tile_position` (start_row, start_column); `perf_mode` "double_row" (also spelled
/// "double_row_gen3") packs two FP8 rows per partition. Recorded on the instruction as
/// attributes `perf_mode`, `tile_position`, `tile_size`.
struct MatmulMode {
  std::string perf_mode; ///< empty: matmul_perf_mode.none
  std::optional<std::pair<std::int64_t, std::int64_t>> tile_position, tile_size;
  bool double_row() const { return !perf_mode.empty(); }
};
/// A `tile_position=(row, col)` / `tile_size=(rows, cols)` argument of `op`: a tuple or list of
/// two integers; None, absent or an empty tuple (NKI's default) is none.
std::optional<std::pair<std::int64_t, std::int64_t>> pe_pair(const Value *v, std::string_view op,
                                                             std::string_view param);
/// nisa.nc_matmul(stationary[K, M], moving[K, N]) -> psum[M, N]: K*M*N MACs. In double-row mode
/// stationary[K, 2, M] and moving[K, 2, N] contract over both: 2*K*M*N MACs.
Value nc_matmul(KernelBuilder &kb, const TensorRef &stationary, const TensorRef &moving, std::string_view op,
                const MatmulMode &mode = {});
/// The attribute list of an accumulating (or not) instruction: `attrs` with its `accumulate`
/// entry set to `accumulate`.
ir::AttrList with_accumulate(const ir::AttrList &attrs, bool accumulate);
Value transpose(KernelBuilder &kb, const TensorRef &x, std::string_view op, ir::Engine engine);
/// A PSUM value cannot be stored straight to HBM: nkicc copies it to SBUF first, as NKI does.
std::shared_ptr<TensorRef> to_sbuf(KernelBuilder &kb, std::shared_ptr<TensorRef> v);
/// `skip_out_of_bounds`: oob_mode.skip (an indirect store drops elements whose index is outside).
void store(KernelBuilder &kb, const TensorRef &dst, std::shared_ptr<TensorRef> value, const Value *mask,
           std::string_view dst_name = "dst", std::string_view value_name = "value", bool skip_out_of_bounds = false);
void memset(KernelBuilder &kb, const TensorRef &t, const Value &value);
/// `target[...] = <op result>`: when `result` is the fresh tile the last instruction made for
/// it (never named, never used elsewhere) and that instruction's engine can write `target`,
/// the instruction writes `target` itself, as NKI lowers the assignment (no copy); true then.
bool write_result_into(KernelBuilder &kb, const TensorRef &target, const TensorRef &result);

} // namespace nkicc::nki
