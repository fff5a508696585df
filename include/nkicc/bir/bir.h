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
#include "nkicc/support/source_manager.h"
#include "nkicc/support/text_options.h"

#include <cstdint>
#include <optional>
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
/// tracer's attributes are flat (names, numbers, small tuples).
std::string write_kernel(const ir::Function &fn, std::string_view target_name, const SourceManager &sources);

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

/// The canonical text of a module blob, or nullopt with `error` set (a lowercase message such
/// as `not a BIR module: wrong file identifier 'ELF\x02'` or `corrupt BIR module: verification
/// failed`). Output is bounded: a blob whose shared sub-objects would expand into far more text
/// than its size is rejected as corrupt. `options` may leave out source locations and show only
/// some calls (NKIKLIRKernel instructions, by index and func_name) and the kernels they use.
std::optional<std::string> module_to_text(std::string_view blob, std::string &error, const TextOptions &options = {});

/// The canonical text of one kernel blob (as embedded in a module or a backend_config).
std::optional<std::string> kernel_to_text(std::string_view kernel_blob, std::string &error,
                                          const TextOptions &options = {});

} // namespace nkicc::bir
