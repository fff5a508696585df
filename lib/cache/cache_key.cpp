#include "nkicc/cache/cache_key.h"
#include "nkicc/support/decimal.h"

#include "nkicc/cache/py_repr.h"
#include "nkicc/support/sha256.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace nkicc {

namespace {

PyConstant shape_tuple(const std::vector<std::int64_t> &dims) {
  std::vector<PyConstant> items;
  items.reserve(dims.size());
  for (std::int64_t d : dims)
    items.push_back(PyConstant::integer(d));
  return PyConstant::tuple(std::move(items));
}

/// Seed 000 `_extract_tensor_info`: {'shapes': [...], 'dtypes': [...]}, the shape being the
/// access shape, falling back to the tensor's shape.
PyConstant tensor_info(const std::vector<TensorSpec> &tensors) {
  std::vector<PyConstant> shapes, dtypes;
  for (const TensorSpec &t : tensors) {
    shapes.push_back(shape_tuple(t.access_shape));
    dtypes.push_back(PyConstant::str(std::string(dtype_name(t.dtype))));
  }
  return PyConstant::make_dict(
      {{"shapes", PyConstant::list(std::move(shapes))}, {"dtypes", PyConstant::list(std::move(dtypes))}});
}

} // namespace

PyConstant internal_key_components(const InternalCall &call, const TargetInfo &target) {
  std::vector<std::pair<std::string, PyConstant>> kc;
  kc.emplace_back("kernel_name", PyConstant::str(call.kernel_name));
  kc.emplace_back("operands", tensor_info(call.operands));
  kc.emplace_back("results", tensor_info(call.results));
  kc.emplace_back("attrs", call.attrs);
  // Seed 000: only the resize family keys on its output geometry.
  if (call.op == "ResizeNearest" && !call.results.empty())
    kc.emplace_back("out_shape", shape_tuple(call.results.front().access_shape));
  kc.emplace_back("target", PyConstant::str(std::string(target.class_name)));
  kc.emplace_back("num_neuroncores", PyConstant::integer(target.num_neuroncores_per_sengine));
  return PyConstant::make_dict(std::move(kc));
}

std::string key_components_string(const PyConstant &components) {
  // sorted(items) compares (key, value) tuples; the keys are distinct strings, so the order is
  // the keys' code-point order, which is the byte order of their UTF-8.
  std::vector<const std::pair<std::string, PyConstant> *> items;
  for (const auto &item : components.dict)
    items.push_back(&item);
  std::sort(items.begin(), items.end(), [](auto *a, auto *b) { return a->first < b->first; });
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ", ";
    out += '(';
    append_py_str_repr(out, items[i]->first);
    out += ", ";
    append_py_repr(out, items[i]->second);
    out += ')';
  }
  out += ']';
  return out;
}

namespace {

/// repr() of shape_tuple(dims): `()`, `(64,)`, `(64, 32)`.
void append_shape(std::string &out, const std::vector<std::int64_t> &dims) {
  out += '(';
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i)
      out += ", ";
    append_int(out, dims[i]);
  }
  if (dims.size() == 1)
    out += ',';
  out += ')';
}

/// repr() of tensor_info(tensors): a dict keeps its insertion order.
void append_tensor_info(std::string &out, const std::vector<TensorSpec> &tensors) {
  out += "{'shapes': [";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (i)
      out += ", ";
    append_shape(out, tensors[i].access_shape);
  }
  out += "], 'dtypes': [";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (i)
      out += ", ";
    append_py_str_repr(out, dtype_name(tensors[i].dtype));
  }
  out += "]}";
}

} // namespace

std::string internal_key_string(const InternalCall &call, const TargetInfo &target) {
  std::string out;
  out.reserve(256);
  append_internal_key_string(out, call, target);
  return out;
}

void append_internal_key_string(std::string &out, const InternalCall &call, const TargetInfo &target) {
  // internal_key_components' keys in sorted (byte) order.
  out += "[('attrs', ";
  append_py_repr(out, call.attrs);
  out += "), ('kernel_name', ";
  append_py_str_repr(out, call.kernel_name);
  out += "), ('num_neuroncores', ";
  append_int(out, target.num_neuroncores_per_sengine);
  out += "), ('operands', ";
  append_tensor_info(out, call.operands);
  if (call.op == "ResizeNearest" && !call.results.empty()) {
    out += "), ('out_shape', ";
    append_shape(out, call.results.front().access_shape);
  }
  out += "), ('results', ";
  append_tensor_info(out, call.results);
  out += "), ('target', ";
  append_py_str_repr(out, target.class_name);
  out += ")]";
}

std::string cache_key_of(const std::string &key_components_string) { return sha256_hex(key_components_string); }

namespace {

/// Seed 001 `_return_shape_dtype_or_hashable`: a tensor keys by (shape, dtype), a constant by
/// its value, and anything unhashable is NKI's error.
std::optional<PyConstant> arg_key(const Argument &arg, std::string_view name, DiagnosticEngine &diags) {
  if (arg.is_tensor()) {
    const TensorSpec &t = arg.tensor();
    return PyConstant::tuple({shape_tuple(t.shape), PyConstant::str(std::string(dtype_name(t.dtype)))});
  }
  const PyConstant &c = arg.constant();
  if (!c.hashable()) {
    diags.error(arg.loc, fmt::format("'{}' to be hashable, but got type {}", name, c.type_name()),
                "err_nki_param_not_hashable");
    return std::nullopt;
  }
  return c;
}

} // namespace

std::optional<PyConstant> specialization_key(const ExternalCall &call, const std::vector<std::string> &param_names,
                                             bool is_fallback, DiagnosticEngine &diags) {
  std::vector<PyConstant> per_arg;
  bool ok = true;
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    auto k = arg_key(call.args[i], i < param_names.size() ? param_names[i] : fmt::format("args[{}]", i), diags);
    ok = ok && k.has_value();
    if (k)
      per_arg.push_back(std::move(*k));
  }
  for (const auto &[name, arg] : call.kwargs) {
    auto k = arg_key(arg, name, diags);
    ok = ok && k.has_value();
    if (k)
      per_arg.push_back(PyConstant::tuple({PyConstant::str(name), std::move(*k)}));
  }
  if (!ok)
    return std::nullopt;
  std::vector<PyConstant> opts;
  for (const auto &[name, value] : call.opts)
    opts.push_back(PyConstant::tuple({PyConstant::str(name), value}));
  return PyConstant::tuple({PyConstant::tuple(std::move(per_arg)), shape_tuple(call.grid),
                            PyConstant::tuple(std::move(opts)), PyConstant::boolean(is_fallback)});
}

} // namespace nkicc
