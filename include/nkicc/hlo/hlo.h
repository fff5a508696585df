// HLO emission (SPEC §9; seed 001 §3-§4): the base64-JSON backend_config that carries a
// kernel's BIR blob, a whole HLO module of custom-calls that XLA's text parser accepts, the same
// calls as StableHLO in MLIR's generic form, and `decode-config`, which reverses the config.
//
// Module layout (reference/hlo.md). For calls c0..ck with tensor operands and results:
//
//   HloModule <name>, entry_computation_layout={(<operand shapes>)-><root shape>}
//
//   ENTRY %main (<pname>: <shape>, ...) -> <root shape> {
//     %<pname> = <shape>{layout} parameter(N)           one per tensor operand, N = 0..n-1 in call order
//     %custom-call.K = <result shape> custom-call(<shape> %<operand>, ...), <attributes>
//     %get-tuple-element.K = ... get-tuple-element(...), index=j   tuple results, several calls only
//     ROOT %tuple.K = (...) tuple(...)                   every call's results, in call order
//   }
//
// A parameter is named after the tensor's `name` (sanitized to an HLO identifier) or `p<N>`,
// and every instruction name ends in `.<unique id>`, numbered from 1 in printing order. With
// one call the custom-call itself is the ROOT. A call with one non-sequence result has an
// array-shaped custom-call; a call whose kernel returns a tuple or list has a tuple-shaped one,
// even with one element. A call whose kernel returns None has the empty tuple `()` as its
// shape and `custom_call_has_side_effect=true`, so that XLA cannot remove it as dead code; it
// adds nothing to the ROOT tuple.
#pragma once

#include "nkicc/support/dtype.h"
#include "nkicc/support/py_constant.h"
#include "nkicc/support/text_options.h"
#include "nkicc/trace/tracer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nkicc {
class TextSink;
}

namespace nkicc::hlo {

/// A tensor operand of a call as the framework sees it: the full tensor shape (not the
/// kernel's access_shape) and dtype, and the optional parameter name from the description.
struct HloOperand {
  std::vector<std::int64_t> shape;
  DType dtype = DType::Float32;
  std::string name;
};

/// One kernel call, everything its custom-call and backend_config need.
struct HloCall {
  std::string func_name;
  std::vector<std::int64_t> grid;                       ///< empty: no SPMD grid
  std::vector<std::pair<std::string, PyConstant>> opts; ///< document order
  /// Returns, aliases, constant values, MAC count and collectives come from here (not owned).
  const trace::KernelTrace *trace = nullptr;
  std::string_view bir_blob;        ///< the kernel blob (not owned)
  std::string_view platform_target; ///< `trn2`, as TargetInfo::name
  bool platform_target_is_fallback = false;
  std::vector<HloOperand> operands; ///< tensor arguments in call order
};

enum class HloFlavor {
  Jax,      ///< AwsNeuronCustomNativeKernel, api_version=API_VERSION_STATUS_RETURNING
  TorchXla, ///< AwsNeuronNkiKernel, no api_version
};

/// The custom-call target of a flavor.
std::string_view custom_call_target(HloFlavor flavor);

/// The backend_config dict as Python's `json.dumps(cfg)` writes it: the fourteen keys in seed
/// 001 §4.3's order, separators `, ` and `: `, ensure_ascii, `serialize_ir_string` the base64 of
/// the BIR blob. `call.trace` must be set.
std::string backend_config_json(const HloCall &call);

/// `base64.b64encode(json.dumps(cfg).encode()).decode()`: the standard alphabet with padding.
std::string backend_config(const HloCall &call);

/// Standard base64 with padding.
std::string base64_encode(std::string_view bytes);
/// Strict standard base64 (padding required, no whitespace); nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text);

/// Checks a call's operand-output aliases the way XLA's verifier does, plus what buffer
/// assignment needs: the operand and output exist, their shapes and dtypes are identical, and
/// no operand or output appears twice. On a violation returns false with `error` set.
bool check_aliases(const HloCall &call, std::string &error);

/// The HLO module text (see the layout above), ending in a newline. Nullopt with `error` set
/// (a lowercase message naming the call) when a call's aliases do not hold.
std::optional<std::string> hlo_module_text(std::string_view module_name, const std::vector<HloCall> &calls,
                                           HloFlavor flavor, std::string &error);

/// The same calls as `"stablehlo.custom_call"` ops in MLIR's generic form inside
/// `module @<name> { func.func @main(...) }`, returned with `"func.return"`. The target is the
/// flavor's; `api_version = 2 : i32` (STATUS_RETURNING) for both, as JAX lowers. A call has one
/// result per returned tensor (a one-element sequence is one result: StableHLO results are not
/// tuples; result_is_sequence stays in the backend_config); with several, aliases name their
/// result with `output_tuple_indices = [k]`. A call returning None has no results and
/// `has_side_effect = true`; collectives add `mhlo.frontend_attributes = {has_collectives = "1"}`. Nullopt with
/// `error` set when a call's aliases do not hold.
std::optional<std::string> stablehlo_text(std::string_view module_name, const std::vector<HloCall> &calls,
                                          HloFlavor flavor, std::string &error);

/// The same two texts written through a sink, which hands them on as they grow (a module of
/// 100,000 calls is gigabytes: each call embeds its kernel). False, with `error` set, before
/// any text when an alias is invalid.
bool write_hlo_module(TextSink &sink, std::string_view module_name, const std::vector<HloCall> &calls, HloFlavor flavor,
                      std::string &error);
bool write_stablehlo(TextSink &sink, std::string_view module_name, const std::vector<HloCall> &calls, HloFlavor flavor,
                     std::string &error);

/// `nkicc decode-config`: the base64 backend_config (surrounding whitespace ignored) decoded to
/// nkicc's pretty JSON, then a blank line, then the embedded `serialize_ir_string` kernel as
/// canonical BIR text. Nullopt with `error` set on malformed base64, malformed JSON, a missing
/// or mistyped key, or a corrupt embedded kernel. `options` goes to the kernel's text (source
/// locations); `func_name`, when given, receives the config's func_name.
std::optional<std::string> decode_config(std::string_view base64_text, std::string &error,
                                         const TextOptions &options = {}, std::string *func_name = nullptr);

/// One custom-call of an HLO or StableHLO module text, as `decode-config --hlo` finds it.
struct CustomCallSite {
  std::string name;         ///< `%custom-call.3` (HLO) or the op's first result, `%0` (StableHLO); may be empty
  std::string target;       ///< custom_call_target (HLO) or call_target_name (StableHLO)
  std::size_t offset = 0;   ///< byte offset of the custom-call's line in the text
  std::size_t config_offset = 0; ///< byte offset of the backend_config's first character
  std::string_view config;  ///< the backend_config string's text (a view into the module text)
  bool has_config = false;  ///< the call has a backend_config string
};

/// Every custom-call of a module text, in text order: HLO's `custom-call(...)` instructions and
/// StableHLO's `stablehlo.custom_call` ops (generic and pretty forms), one op per line as both
/// printers write them. Text that is neither yields no sites.
std::vector<CustomCallSite> find_custom_calls(std::string_view module_text);

/// Whether a custom-call target is an NKI kernel call (either flavor of SPEC §9).
bool is_nki_custom_call_target(std::string_view target);

} // namespace nkicc::hlo
