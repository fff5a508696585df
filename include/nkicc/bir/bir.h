// BIR, the beta3 kernel format (SPEC §6; seed 000): the writer of kernel and module blobs and
// the reader that turns a blob back into canonical text (`nkicc dis`, `--emit=bir-text`).
//
// Binary layout (FlatBuffers; the schema is share/nkicc/bir.fbs, compiled by flatc at build time):
//
//   kernel blob  := flatbuffer(root Kernel, file identifier "NBIK")
//   module blob  := flatbuffer(root Module, file identifier "NBIR")
//   Module       := format_version nkicc_version name target nki_frontend
//                   kernels: KernelBlob*        (unique kernels, each stored once)
//                   instructions: NKIKLIRKernel* (one per call, in call order)
//   KernelBlob   := cache_key, kernel: the exact bytes of one kernel blob
//
// Writing is deterministic: the same input gives the same bytes (no defaults forced, fields in
// a fixed order, no paths, timestamps or addresses). Reading verifies every buffer first, so a
// truncated, corrupt or foreign blob is an error message, never a crash.
#pragma once

#include "nkicc/ir/kernel_ir.h"
#include "nkicc/support/owned_bytes.h"
#include "nkicc/support/source_manager.h"
#include "nkicc/support/text_options.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nkicc::bir {

/// The format version this nkicc writes and the only one it reads.
inline constexpr std::uint32_t kFormatVersion = 1;
/// NKIKLIRKernel.kernel_format: only the beta3 path exists (seed 000).
inline constexpr std::string_view kKernelFormat = "bir";
/// NKIKLIRKernel.nki_binary_version_identifier: names this nkicc's kernel format.
inline constexpr std::string_view kNkiBinaryVersionIdentifier = "nkicc-bir-1";
/// Deepest nesting of an attribute value (tuples, lists, dicts) a blob may hold. The
/// FlatBuffers verifier allows 64 nested tables; a kernel spends 4 before the value starts
/// and a dict level costs 2.
inline constexpr std::size_t kMaxAttrNesting = 28;

/// The kernel blob of one traced specialization: the bytes the per-run binary cache stores and
/// the backend_config carries. Source positions are kept as line:column only. A blob with an
/// attribute value nested deeper than kMaxAttrNesting fails verification when read back; the
/// tracer's attributes are flat (names, numbers, small tuples). `grid` is the SPMD launch grid
/// the kernel was specialized for (its access patterns' program-id terms range over it); empty
/// for a single instance.
std::string write_kernel(const ir::Function &fn, std::string_view target_name, const SourceManager &sources,
                         std::span<const std::int64_t> grid = {});
/// The same bytes, left in the builder's own buffer (a 400,000-instruction kernel is 55 MB).
OwnedBytes write_kernel_blob(const ir::Function &fn, std::string_view target_name, const SourceManager &sources,
                             std::span<const std::int64_t> grid = {});

/// One NKIKLIRKernel instruction: a call of a kernel stored in the module.
struct ModuleCall {
  std::string func_name;
  std::string kernel_name;
  std::string cache_key;
  std::uint32_t kernel_index = 0;     ///< index into the module's kernels
  std::vector<std::string> func_args; ///< input names
  std::vector<std::string> func_outs; ///< output names
};

struct ModuleInfo {
  std::string name;
  std::string nkicc_version;
  std::string target;
  std::string nki_frontend; ///< the `nki_frontend` environment value, recorded as data
};

/// The module blob of a run: `kernels` are (cache key, kernel blob) pairs stored in the given
/// order, each blob byte for byte; `calls` become NKIKLIRKernel instructions in order.
std::string write_module(const ModuleInfo &info,
                         const std::vector<std::pair<std::string_view, std::string_view>> &kernels,
                         const std::vector<ModuleCall> &calls);
/// The same bytes in pieces: the module's frame, left in the builder's buffer, and each kernel
/// blob where it lies (the frame holds an untouched hole of each blob's size where its vector's
/// bytes go). The output writes the pieces in turn.
ByteSequence write_module_blob(const ModuleInfo &info,
                               const std::vector<std::pair<std::string_view, OwnedBytes>> &kernels,
                               const std::vector<ModuleCall> &calls);

/// The canonical text of a module blob, or nullopt with `error` set (a lowercase message such
/// as `not a BIR module: wrong file identifier 'ELF\x02'` or `corrupt BIR module: verification
/// failed`). Output is bounded: a blob whose shared sub-objects would expand into far more text
/// than its size is rejected as corrupt. `options` may leave out source locations and show only
/// some calls (NKIKLIRKernel instructions, by index and func_name) and the kernels they use.
std::optional<std::string> module_to_text(std::string_view blob, std::string &error, const TextOptions &options = {});

/// The canonical text of one kernel blob (as embedded in a module or a backend_config).
std::optional<std::string> kernel_to_text(std::string_view kernel_blob, std::string &error,
                                          const TextOptions &options = {});

// ---- decoded blobs, for consumers that execute BIR (lib/sim) ----------------------------------

/// A tensor of a decoded kernel: every field of the blob's Tensor table.
struct KernelTensor {
  std::string name;
  ir::TensorRole role = ir::TensorRole::Internal;
  ir::Memory memory = ir::Memory::Sbuf;
  std::vector<std::int64_t> shape;
  DType dtype = DType::Float32;
  std::int64_t partition_start = 0;
  std::int64_t byte_offset = -1;
  std::int64_t bytes_per_partition = 0;
  std::uint32_t line = 0, col = 0;
  std::vector<std::uint8_t> data; ///< a Constant tensor's encoded elements (ir::ConstantData)
  std::int64_t view_of = -1;      ///< a view's base tensor (ir::TensorView), else -1
};

/// An instruction of a decoded kernel, its access patterns and attributes in blob order.
struct KernelInstruction {
  ir::Opcode opcode = ir::Opcode::TensorCopy;
  ir::Engine engine = ir::Engine::Vector;
  ir::LoopKind loop_kind = ir::LoopKind::None;
  std::vector<ir::AccessPattern> dst;
  std::vector<ir::AccessPattern> src;
  ir::AttrList attrs;
  std::uint32_t line = 0, col = 0;
};

/// A kernel blob decoded: what an executor needs, read only from the blob.
struct KernelData {
  std::string name;
  std::string target;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::int64_t matmul_mac_count = 0;
  bool has_collectives = false;
  std::vector<std::int64_t> grid; ///< empty: one instance
  std::vector<KernelTensor> tensors;
  std::vector<KernelInstruction> instructions;
};

/// A module blob decoded: its header, the kernel blobs it stores (byte for byte) and its calls.
struct ModuleData {
  ModuleInfo info;
  std::vector<std::pair<std::string, std::string>> kernels; ///< (cache key, kernel blob)
  std::vector<ModuleCall> calls;
};

/// Verifies and decodes a kernel blob, checking what the verifier cannot: enums in range, tensor
/// indices, grid and grid-term sizes, non-negative extents. Nullopt with `error` set (the
/// messages of kernel_to_text()) when the blob is not a sound kernel.
std::optional<KernelData> read_kernel(std::string_view kernel_blob, std::string &error);

/// Verifies and decodes a module blob; its kernels stay blobs, for read_kernel().
std::optional<ModuleData> read_module(std::string_view blob, std::string &error);

} // namespace nkicc::bir
