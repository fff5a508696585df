#include "nkicc/cache/cache_key.h"

#include "nkicc/cache/py_repr.h"
#include "nkicc/support/sha256.h"

#include <algorithm>

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
  return PyConstant::make_dict({{"shapes", PyConstant::list(std::move(shapes))},
                                {"dtypes", PyConstant::list(std::move(dtypes))}});
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

std::string cache_key_of(const std::string &key_components_string) { return sha256_hex(key_components_string); }

} // namespace nkicc
