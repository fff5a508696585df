#include "nkicc/hlo/hlo.h"
#include "nkicc/support/file_io.h"

#include "hlo/config_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace nkicc::hlo {

namespace {

constexpr std::string_view kMetadata =
    R"(metadata={op_type="xla___op_NkiKernelCallImpl" op_name="xla___op_NkiKernelCallImpl"})";

/// XLA's primitive type name for an NKI dtype (reference/hlo.md "NKI mapping").
std::string_view hlo_type(DType dtype) {
  switch (dtype) {
  case DType::Float32:
    return "f32";
  case DType::Float16:
    return "f16";
  case DType::BFloat16:
    return "bf16";
  case DType::TFloat32:
    return "f32";
  case DType::Float8E4M3:
    return "f8e4m3";
  case DType::Float8E4M3FN:
    return "f8e4m3fn";
  case DType::Float8E5M2:
    return "f8e5m2";
  case DType::Int8:
    return "s8";
  case DType::Int16:
    return "s16";
  case DType::Int32:
    return "s32";
  case DType::UInt8:
    return "u8";
  case DType::UInt16:
    return "u16";
  case DType::UInt32:
    return "u32";
  case DType::Bool:
    return "pred";
  // XLA has no packed type: an x4 element travels as its bits (the unsigned integer of its
  // width), as the frameworks hand MX data to a kernel; so does an e8m0 scale (MLIR 19, which
  // checks nkicc's output, has no f8E8M0FNU).
  case DType::Float8E5M2X4:
  case DType::Float8E4M3FNX4:
    return "u32";
  case DType::Float4E2M1FNX4:
    return "u16";
  case DType::Float8E8M0FNU:
    return "u8";
  }
  return "f32";
}

/// MLIR's builtin element type for an NKI dtype (reference/hlo.md "Type mapping").
std::string_view mlir_type(DType dtype) {
  switch (dtype) {
  case DType::Float32:
    return "f32";
  case DType::Float16:
    return "f16";
  case DType::BFloat16:
    return "bf16";
  case DType::TFloat32:
    return "f32";
  case DType::Float8E4M3:
    return "f8E4M3";
  case DType::Float8E4M3FN:
    return "f8E4M3FN";
  case DType::Float8E5M2:
    return "f8E5M2";
  case DType::Int8:
    return "i8";
  case DType::Int16:
    return "i16";
  case DType::Int32:
    return "i32";
  case DType::UInt8:
    return "ui8";
  case DType::UInt16:
    return "ui16";
  case DType::UInt32:
    return "ui32";
  case DType::Bool:
    return "i1";
  case DType::Float8E5M2X4:
  case DType::Float8E4M3FNX4:
    return "ui32";
  case DType::Float4E2M1FNX4:
    return "ui16";
  case DType::Float8E8M0FNU:
    return "ui8";
  }
  return "f32";
}

/// `f32[256,512]`, then `{1,0}` (row-major, minor-to-major) when `layout` and the rank > 0.
void append_hlo_shape(std::string &out, DType dtype, const std::vector<std::int64_t> &dims, bool layout) {
  out += hlo_type(dtype);
  out += '[';
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i)
      out += ',';
    out += fmt::format("{}", dims[i]);
  }
  out += ']';
  if (layout && !dims.empty()) {
    out += '{';
    for (std::size_t i = dims.size(); i-- > 0;) {
      out += fmt::format("{}", i);
      if (i)
        out += ',';
    }
    out += '}';
  }
}

void append_mlir_type(std::string &out, DType dtype, const std::vector<std::int64_t> &dims) {
  out += "tensor<";
  for (std::int64_t d : dims)
    out += fmt::format("{}x", d);
  out += mlir_type(dtype);
  out += '>';
}

/// Words XLA's lexer turns into keywords or type names (hlo_lexer.cc), which cannot be names.
bool is_reserved_hlo_word(std::string_view s) {
  static const std::set<std::string_view> words = {"true",
                                                   "false",
                                                   "inf",
                                                   "nan",
                                                   "HloModule",
                                                   "ENTRY",
                                                   "ROOT",
                                                   "maximal",
                                                   "replicated",
                                                   "manual",
                                                   "last_tile_dim_replicate",
                                                   "last_tile_dims",
                                                   "shard_as",
                                                   "shard_like",
                                                   "unknown",
                                                   "pred",
                                                   "s2",
                                                   "s4",
                                                   "s8",
                                                   "s16",
                                                   "s32",
                                                   "s64",
                                                   "u2",
                                                   "u4",
                                                   "u8",
                                                   "u16",
                                                   "u32",
                                                   "u64",
                                                   "f16",
                                                   "bf16",
                                                   "f32",
                                                   "f64",
                                                   "c64",
                                                   "c128",
                                                   "f8e5m2",
                                                   "f8e4m3",
                                                   "f8e4m3fn",
                                                   "f8e4m3b11fnuz",
                                                   "f8e5m2fnuz",
                                                   "f8e4m3fnuz",
                                                   "f8e3m4",
                                                   "f4e2m1fn",
                                                   "f8e8m0fnu",
                                                   "tuple",
                                                   "opaque",
                                                   "token"};
  return words.count(s) != 0;
}

/// An HLO identifier `[a-zA-Z_][a-zA-Z0-9_.-]*` from arbitrary text; `fallback` when empty.
std::string hlo_identifier(std::string_view text, std::string_view fallback) {
  std::string id;
  for (char c : text) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    id += ok ? c : '_';
  }
  if (id.empty())
    return std::string(fallback);
  if (!((id[0] >= 'a' && id[0] <= 'z') || (id[0] >= 'A' && id[0] <= 'Z') || id[0] == '_'))
    id.insert(id.begin(), '_');
  if (is_reserved_hlo_word(id))
    id += '_';
  return id;
}

/// An MLIR symbol reference: a bare identifier when it is one, else a quoted string.
std::string mlir_symbol(std::string_view name) {
  auto bare_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '.';
  };
  bool bare = !name.empty() && !(name[0] >= '0' && name[0] <= '9') && name[0] != '$' && name[0] != '.' &&
              std::all_of(name.begin(), name.end(), bare_char);
  if (bare)
    return "@" + std::string(name);
  std::string out = "@\"";
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || u < 0x20 || u >= 0x7F)
      out += fmt::format("\\{:02X}", u);
    else
      out += c;
  }
  out += '"';
  return out;
}

std::string call_label(const HloCall &call, std::size_t index) {
  return fmt::format("call {} ('{}')", index, call.func_name);
}

bool check_all(const std::vector<HloCall> &calls, std::string &error) {
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::string why;
    if (!check_aliases(calls[i], why)) {
      error = fmt::format("{}: {}", call_label(calls[i], i), why);
      return false;
    }
  }
  return true;
}

/// The HLO shape of a call's custom-call: one array, a tuple of arrays, or `()` for None.
void append_call_shape(std::string &out, const trace::KernelTrace &t, bool layout) {
  if (t.returns.size() == 1 && !t.result_is_sequence) {
    append_hlo_shape(out, t.returns[0].dtype, t.returns[0].shape, layout);
    return;
  }
  out += '(';
  for (std::size_t i = 0; i < t.returns.size(); ++i) {
    if (i)
      out += ", ";
    append_hlo_shape(out, t.returns[i].dtype, t.returns[i].shape, layout);
  }
  out += ')';
}

bool is_tuple_call(const trace::KernelTrace &t) { return !(t.returns.size() == 1 && !t.result_is_sequence); }

std::vector<std::pair<std::size_t, std::size_t>> sorted_aliases(const trace::KernelTrace &t) {
  auto aliases = t.aliases;
  std::sort(aliases.begin(), aliases.end(), [](const auto &a, const auto &b) { return a.second < b.second; });
  return aliases;
}

} // namespace

std::string_view custom_call_target(HloFlavor flavor) {
  return flavor == HloFlavor::Jax ? "AwsNeuronCustomNativeKernel" : "AwsNeuronNkiKernel";
}

bool check_aliases(const HloCall &call, std::string &error) {
  const trace::KernelTrace &t = *call.trace;
  std::set<std::size_t> operands_seen, outputs_seen;
  for (auto [operand, output] : t.aliases) {
    if (operand >= call.operands.size()) {
      error = fmt::format("output {} aliases operand {}, but the call has {} tensor operand{}", output, operand,
                          call.operands.size(), call.operands.size() == 1 ? "" : "s");
      return false;
    }
    if (output >= t.returns.size()) {
      error = fmt::format("operand {} aliases output {}, but the kernel returns {} tensor{}", operand, output,
                          t.returns.size(), t.returns.size() == 1 ? "" : "s");
      return false;
    }
    const HloOperand &in = call.operands[operand];
    const trace::ReturnedTensor &out = t.returns[output];
    if (in.shape != out.shape || in.dtype != out.dtype) {
      std::string a, b;
      append_hlo_shape(a, in.dtype, in.shape, false);
      append_hlo_shape(b, out.dtype, out.shape, false);
      error = fmt::format("output {} ({}) aliases operand {} ({}): an aliased output must have the operand's shape "
                          "and dtype",
                          output, b, operand, a);
      return false;
    }
    if (!outputs_seen.insert(output).second) {
      error = fmt::format("output {} aliases more than one operand", output);
      return false;
    }
    if (!operands_seen.insert(operand).second) {
      error = fmt::format("operand {} is aliased by more than one output", operand);
      return false;
    }
  }
  return true;
}

bool write_hlo_module(TextSink &sink, std::string_view module_name, const std::vector<HloCall> &calls, HloFlavor flavor,
                      std::string &error) {
  if (!check_all(calls, error))
    return false;
  ConfigCache configs;
  std::size_t next_id = 1;

  // Parameters, numbered 0..n-1 in call order.
  struct Param {
    std::string name;
    const HloOperand *operand;
  };
  std::vector<Param> params;
  for (const HloCall &call : calls)
    for (const HloOperand &o : call.operands) {
      std::string base = hlo_identifier(o.name, fmt::format("p{}", params.size()));
      params.push_back({fmt::format("{}.{}", base, next_id++), &o});
    }

  // The ROOT: with one call the custom-call itself; else a tuple of every call's results.
  std::vector<const trace::ReturnedTensor *> results;
  for (const HloCall &call : calls)
    for (const trace::ReturnedTensor &r : call.trace->returns)
      results.push_back(&r);
  auto append_root_shape = [&](std::string &out, bool layout) {
    if (calls.size() == 1) {
      append_call_shape(out, *calls[0].trace, layout);
      return;
    }
    out += '(';
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (i)
        out += ", ";
      append_hlo_shape(out, results[i]->dtype, results[i]->shape, layout);
    }
    out += ')';
  };

  std::string &out = sink.text;
  out += "HloModule ";
  out += hlo_identifier(module_name, "nkicc");
  out += ", entry_computation_layout={(";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i)
      out += ", ";
    append_hlo_shape(out, params[i].operand->dtype, params[i].operand->shape, true);
  }
  out += ")->";
  append_root_shape(out, true);
  out += "}\n\nENTRY %main (";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i)
      out += ", ";
    out += params[i].name;
    out += ": ";
    append_hlo_shape(out, params[i].operand->dtype, params[i].operand->shape, false);
  }
  out += ") -> ";
  append_root_shape(out, false);
  out += " {\n";
  for (std::size_t i = 0; i < params.size(); ++i) {
    out += fmt::format("  %{} = ", params[i].name);
    append_hlo_shape(out, params[i].operand->dtype, params[i].operand->shape, true);
    out += fmt::format(" parameter({})\n", i);
  }

  std::vector<std::string> root_operands; // `shape %name` per result, several calls only
  std::size_t param_index = 0;
  for (const HloCall &call : calls) {
    sink.flush_if_large(); // each call carries its kernel: hand the text on as it grows
    const trace::KernelTrace &t = *call.trace;
    std::string name = fmt::format("custom-call.{}", next_id++);
    std::string shape;
    append_call_shape(shape, t, true);
    out += calls.size() == 1 ? "  ROOT %" : "  %";
    out += name;
    out += " = ";
    out += shape;
    out += " custom-call(";
    for (std::size_t k = 0; k < call.operands.size(); ++k, ++param_index) {
      if (k)
        out += ", ";
      append_hlo_shape(out, call.operands[k].dtype, call.operands[k].shape, true);
      out += " %";
      out += params[param_index].name;
    }
    out += "), custom_call_target=\"";
    out += custom_call_target(flavor);
    out += '"';
    if (t.returns.empty())
      out += ", custom_call_has_side_effect=true";
    if (!t.aliases.empty()) {
      out += ", output_to_operand_aliasing={";
      bool first = true;
      for (auto [operand, output] : sorted_aliases(t)) {
        out += first ? "" : ", ";
        first = false;
        if (is_tuple_call(t))
          out += fmt::format("{{{}}}: ({}, {{}})", output, operand);
        else
          out += fmt::format("{{}}: ({}, {{}})", operand);
      }
      out += '}';
    }
    if (flavor == HloFlavor::Jax)
      out += ", api_version=API_VERSION_STATUS_RETURNING";
    if (t.function.has_collectives)
      out += ", frontend_attributes={has_collectives=\"1\"}";
    out += ", ";
    out += kMetadata;
    out += ", backend_config=\"";
    sink.write(configs.get(call)); // a large piece goes out from the cache, not through the buffer
    out += "\"\n";

    if (calls.size() == 1)
      continue;
    if (!is_tuple_call(t)) {
      std::string operand = shape;
      operand += " %";
      operand += name;
      root_operands.push_back(std::move(operand));
      continue;
    }
    for (std::size_t k = 0; k < t.returns.size(); ++k) {
      std::string element;
      append_hlo_shape(element, t.returns[k].dtype, t.returns[k].shape, true);
      std::string gte = fmt::format("get-tuple-element.{}", next_id++);
      out += fmt::format("  %{} = {} get-tuple-element({} %{}), index={}\n", gte, element, shape, name, k);
      root_operands.push_back(fmt::format("{} %{}", element, gte));
    }
  }
  if (calls.size() != 1) {
    out += fmt::format("  ROOT %tuple.{} = ", next_id++);
    append_root_shape(out, true);
    out += " tuple(";
    for (std::size_t i = 0; i < root_operands.size(); ++i) {
      if (i)
        out += ", ";
      out += root_operands[i];
    }
    out += ")\n";
  }
  out += "}\n";
  return true;
}

std::optional<std::string> hlo_module_text(std::string_view module_name, const std::vector<HloCall> &calls,
                                           HloFlavor flavor, std::string &error) {
  TextSink sink;
  if (!write_hlo_module(sink, module_name, calls, flavor, error))
    return std::nullopt;
  return std::move(sink.text);
}

bool write_stablehlo(TextSink &sink, std::string_view module_name, const std::vector<HloCall> &calls, HloFlavor flavor,
                     std::string &error) {
  if (!check_all(calls, error))
    return false;
  ConfigCache configs;
  std::string &out = sink.text;
  out += "module ";
  out += mlir_symbol(module_name);
  out += " {\n  func.func @main(";
  std::size_t arg = 0;
  for (const HloCall &call : calls)
    for (const HloOperand &o : call.operands) {
      if (arg)
        out += ", ";
      out += fmt::format("%arg{}: ", arg++);
      append_mlir_type(out, o.dtype, o.shape);
    }
  out += ')';
  std::string result_types;
  std::size_t result_count = 0;
  for (const HloCall &call : calls)
    for (const trace::ReturnedTensor &r : call.trace->returns) {
      if (result_count++)
        result_types += ", ";
      append_mlir_type(result_types, r.dtype, r.shape);
    }
  if (result_count == 1)
    out += " -> " + result_types;
  else if (result_count > 1)
    out += " -> (" + result_types + ")";
  out += " {\n";

  std::vector<std::string> returned; // SSA values of every result, in call order
  std::size_t first_arg = 0, value = 0;
  for (const HloCall &call : calls) {
    sink.flush_if_large(); // each call carries its kernel: hand the text on as it grows
    const trace::KernelTrace &t = *call.trace;
    std::size_t n = t.returns.size();
    out += "    ";
    if (n == 1) {
      out += fmt::format("%{} = ", value);
      returned.push_back(fmt::format("%{}", value));
      ++value;
    } else if (n > 1) {
      out += fmt::format("%{}:{} = ", value, n);
      for (std::size_t k = 0; k < n; ++k)
        returned.push_back(fmt::format("%{}#{}", value, k));
      ++value;
    }
    out += "\"stablehlo.custom_call\"(";
    for (std::size_t k = 0; k < call.operands.size(); ++k)
      out += fmt::format("{}%arg{}", k ? ", " : "", first_arg + k);
    // Attributes in the sorted order MLIR prints a dictionary in.
    out += ") {api_version = 2 : i32, backend_config = \"";
    sink.write(configs.get(call)); // a large piece goes out from the cache, not through the buffer
    out += "\", call_target_name = \"";
    out += custom_call_target(flavor);
    out += "\"";
    out += n == 0 ? ", has_side_effect = true" : ", has_side_effect = false";
    if (t.function.has_collectives)
      out += ", mhlo.frontend_attributes = {has_collectives = \"1\"}";
    if (!t.aliases.empty()) {
      out += ", output_operand_aliases = [";
      bool first = true;
      for (auto [operand, output] : sorted_aliases(t)) {
        out += first ? "" : ", ";
        first = false;
        out += fmt::format("#stablehlo.output_operand_alias<output_tuple_indices = [{}], operand_index = {}, "
                           "operand_tuple_indices = []>",
                           n > 1 ? fmt::format("{}", output) : "", operand);
      }
      out += ']';
    }
    out += "} : (";
    for (std::size_t k = 0; k < call.operands.size(); ++k) {
      if (k)
        out += ", ";
      append_mlir_type(out, call.operands[k].dtype, call.operands[k].shape);
    }
    out += ") -> ";
    if (n != 1)
      out += '(';
    for (std::size_t k = 0; k < n; ++k) {
      if (k)
        out += ", ";
      append_mlir_type(out, t.returns[k].dtype, t.returns[k].shape);
    }
    if (n != 1)
      out += ')';
    out += '\n';
    first_arg += call.operands.size();
  }
  out += "    \"func.return\"(";
  for (std::size_t i = 0; i < returned.size(); ++i) {
    if (i)
      out += ", ";
    out += returned[i];
  }
  out += ") : (";
  out += result_types;
  out += ") -> ()\n  }\n}\n";
  return true;
}

std::optional<std::string> stablehlo_text(std::string_view module_name, const std::vector<HloCall> &calls,
                                          HloFlavor flavor, std::string &error) {
  TextSink sink;
  if (!write_stablehlo(sink, module_name, calls, flavor, error))
    return std::nullopt;
  return std::move(sink.text);
}

} // namespace nkicc::hlo
