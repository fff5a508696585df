// The NKI op catalogue. Every nl/nisa/numpy-on-tiles op is one OpDef in the table of its
// family (language_*.cpp, isa_*.cpp, ...): a Python signature that says its parameters, their
// kinds and defaults; the engine and IR opcode it emits; and the lowering that checks NKI's
// constraints, computes the result's shape and dtype and emits the instruction with its
// attributes. Binding a call to the signature (Python's rules), checking each argument's kind
// and the new API's `dst=` form are done here once for all ops, so adding an op is adding
// one entry and its lowering.
//
// Signature grammar (a subset of Python's, as NKI's documentation writes it):
//
//   signature := name '(' [param (',' param)*] ')'
//   param     := '*' | ['*'] name ':' kind ['?'] ['=' default]
//   kind      := any | tensor | tile | hbm | scalar | tile_or_scalar | dtype | op | bool | int
//              | shape | index | mask
//   default   := None | True | False | integer | float | 'text'
//
// Parameters after `*` are keyword-only; `*name` collects the remaining positional arguments
// (`nl.spmd_dim(*args)`); `?` admits None; a parameter without a default is required.
#pragma once

#include "builder.h"
#include "tensor.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace nkicc::nki {

class NkiRuntime;
class MaskObject;

enum class ParamKind : std::uint8_t {
  Any,          ///< any value; the lowering checks it
  Tensor,       ///< a tensor view in any memory
  Tile,         ///< an SBUF or PSUM view (err_unsupported_memory otherwise)
  Hbm,          ///< an HBM view (err_unsupported_memory otherwise)
  Scalar,       ///< int, float or bool
  TileOrScalar, ///< a view or a number
  Dtype,        ///< nl.float32, np.int8, 'bfloat16'
  Op,           ///< an ALU or activation function: np.add, nl.exp, nl.maximum
  Bool,
  Int,
  Shape, ///< a tuple or list of positive ints, or one int
  Index, ///< an index tile or expression
  Mask,  ///< a predicate on index tiles
};

struct ParamDef {
  std::string_view name;
  ParamKind kind = ParamKind::Any;
  bool nullable = false;     ///< `?`: None is accepted (and reads as absent)
  bool keyword_only = false; ///< declared after `*`
  bool variadic = false;     ///< `*name`: the remaining positional arguments
  std::optional<Value> default_value;
};

class OpCall;
using Lowering = Value (*)(OpCall &);

/// The new `nki` API's destination form of an ISA op (reference/nki.md "Two API
/// generations"): `nisa.tensor_copy(dst=t, src=x)` or `nisa.nc_matmul(psum, s, m)`. The op
/// runs in its value-returning form, then its instruction writes `dst` directly (an nc_matmul
/// accumulates into it). The positional form is recognised by a tensor at position `probe`,
/// where the value form never has one.
struct DstForm {
  bool enabled = false;
  std::size_t probe = 0;
  bool accumulates = false; ///< nc_matmul: `dst += result`
};

/// One declaration of the catalogue.
struct OpDef {
  std::string_view signature;
  ir::Engine engine = ir::Engine::Vector;
  ir::Opcode opcode = ir::Opcode::TensorCopy; ///< the instruction it emits (the main one)
  Lowering lower = nullptr;
  DstForm dst = {};
  /// The NumPy name that means this op when applied to a tile (`np.exp`), or empty.
  std::string_view numpy = {};
  /// Its HBM operands may be indexed by a tile of indices (indirect DMA, indirect.cpp); every
  /// other op refuses such a view (NKI's err_indirect_indices_are_not_supported_with_nki_api).
  bool indirect = false;
};

/// An OpDef with its signature parsed.
struct OpInfo {
  const OpDef *def = nullptr;
  std::string_view name;
  std::vector<ParamDef> params;
  std::size_t index(std::string_view param) const; ///< params.size() when there is none
  /// The index of `mask`, or params.size(): asked on every call.
  std::size_t mask_index = 0;

  /// Parameters by name: an open-addressing table of indices (0xff: empty), so that the many
  /// lookups a lowering makes (`c.get("dtype")`) cost a hash and one comparison.
  static constexpr std::size_t kTableSize = 64;
  std::array<std::uint8_t, kTableSize> table{};
  static std::size_t hash(std::string_view name) {
    return (name.size() * 31 + static_cast<unsigned char>(name.front()) * 7 + static_cast<unsigned char>(name.back())) &
           (kTableSize - 1);
  }
};

/// Parses an OpDef's signature; a malformed one is a bug in the table (an internal error).
OpInfo parse_signature(const OpDef &def);

/// One call of an op: its arguments bound to the signature and checked by kind.
class OpCall {
public:
  /// `rt` finds the trace in progress; a method of a view passes the view's builder instead.
  OpCall(NkiRuntime *rt, KernelBuilder *kb, const OpInfo &op, Interpreter &interp, const CallArgs &args);

  std::string_view name() const { return op.name; }
  /// The builder of the trace in progress (outside a kernel, NKI's RuntimeError).
  KernelBuilder &kb();

  /// The argument or its default; null when absent or None.
  const Value *get(std::string_view param) const;
  const Value &required(std::string_view param) const;
  bool has(std::string_view param) const { return get(param) != nullptr; }
  /// A tensor-kind argument (already checked); null when absent.
  std::shared_ptr<TensorRef> tensor(std::string_view param) const;
  std::shared_ptr<TensorRef> required_tensor(std::string_view param) const;
  std::optional<DType> dtype(std::string_view param = "dtype") const;
  /// An Op-kind argument's NKI name (`exp`, `add`, `maximum`).
  std::string op_name(std::string_view param) const;
  /// A Bool-kind argument, false when absent.
  bool flag(std::string_view param) const;
  std::int64_t integer(std::string_view param) const;
  const MaskObject *mask() const;
  /// The positional arguments a `*name` parameter collected.
  std::span<const Value> rest() const { return rest_; }

  /// Emits the op's own opcode on its engine.
  void emit(std::span<const ir::AccessPattern> dst, std::span<const ir::AccessPattern> src,
            const ir::AttrList &attrs = {});

  const OpInfo &op;
  Interpreter &interp;

private:
  NkiRuntime *rt_;
  KernelBuilder *kb_;
  const Value *slot(std::string_view param) const;
  ir::SmallVector<const Value *, 12> values_;
  std::span<const Value> rest_;
};

/// Makes a module function of each op of `table` (named by its signature) in `module`.
/// `named`: the ops also take NKI's `name=` keyword (nisa's, and nl's compute ops): a name for
/// the instructions a call emits, which the IR and BIR record as their `name` attribute. An op
/// whose signature has its own `name` parameter handles it itself.
void install_ops(NkiRuntime &rt, ModuleObject &module, std::span<const OpDef> table, bool named = false);

/// The op families: each fills its table in its own file.
std::span<const OpDef> language_memory_ops();    ///< nl.load, nl.store, nl.ndarray, ...
std::span<const OpDef> language_math_ops();      ///< nl.exp, nl.add, nl.sum, nl.matmul, ...
std::span<const OpDef> language_index_ops();     ///< nl.arange, nl.ds, nl.program_id, ranges, ...
std::span<const OpDef> language_constants_ops(); ///< nl.constants.sizeinbytes
std::span<const OpDef> isa_ops();                ///< nisa.*
/// nisa's reduce/scan family (isa_reduce.cpp).
std::span<const OpDef> isa_reduce_ops();
std::span<const OpDef> isa_select_ops();          ///< nisa.max8, nc_stream_shuffle, dropout, ... (isa_select.cpp)
std::span<const OpDef> isa_mx_ops();              ///< nisa.quantize_mx, nc_matmul_mx (isa_mx.cpp)
std::span<const OpDef> language_misc_ops();       ///< nl.rand, random_seed, atomic_rmw (isa_select.cpp)
std::span<const OpDef> language_collective_ops(); ///< nl.all_reduce (collectives.cpp)
std::span<const OpDef> nccl_ops();                ///< nki.nccl's collectives (collectives.cpp)
/// Methods of a tensor view: their first parameter is `self`.
std::span<const OpDef> tensor_method_ops(); ///< x.reshape, x.broadcast_to, x.ap

} // namespace nkicc::nki
