// `--emit=manifest`: the loaded description written back as canonical JSON, so that a golden
// test sees exactly what nkicc understood (defaults filled in, sources hashed).
#include "nkicc/manifest/manifest.h"
#include "nkicc/support/file_io.h"
#include "nkicc/support/json_writer.h"
#include "nkicc/support/sha256.h"

#include <cmath>

namespace nkicc {

namespace {

using Entries = std::vector<std::pair<std::string, PyConstant>>;

PyConstant str(std::string_view s) { return PyConstant::str(std::string(s)); }

PyConstant dims(const std::vector<std::int64_t> &v) {
  std::vector<PyConstant> items;
  for (std::int64_t d : v)
    items.push_back(PyConstant::integer(d));
  return PyConstant::list(std::move(items));
}

PyConstant tensor(const TensorSpec &t, bool with_access_shape, bool with_memory = false) {
  Entries e = {{"shape", dims(t.shape)}};
  if (with_access_shape)
    e.emplace_back("access_shape", dims(t.access_shape));
  e.emplace_back("dtype", str(dtype_name(t.dtype)));
  if (!t.name.empty())
    e.emplace_back("name", str(t.name));
  if (with_memory && !t.memory.empty())
    e.emplace_back("memory", str(t.memory));
  return PyConstant::make_dict(std::move(e));
}

/// A constant in the description's own forms: infinities and NaN as {"float": "inf"}, which
/// JSON numbers cannot say (named references are written as {"object": ...} by the JSON writer).
PyConstant description_form(const PyConstant &c) {
  switch (c.kind) {
  case PyConstant::Kind::Float:
    if (std::isnan(c.f))
      return PyConstant::make_dict({{"float", str("nan")}});
    if (std::isinf(c.f))
      return PyConstant::make_dict({{"float", str(c.f > 0 ? "inf" : "-inf")}});
    return c;
  case PyConstant::Kind::Tuple:
  case PyConstant::Kind::List:
  case PyConstant::Kind::Dict:
  case PyConstant::Kind::Ref: {
    PyConstant out = c;
    for (PyConstant &item : out.items)
      item = description_form(item);
    for (auto &entry : out.dict)
      entry.second = description_form(entry.second);
    return out;
  }
  default:
    return c;
  }
}

PyConstant argument(const Argument &a) {
  return a.is_tensor() ? tensor(a.tensor(), false) : description_form(a.constant());
}

PyConstant call_json(const Call &call) {
  Entries e = {{"index", PyConstant::integer(static_cast<std::int64_t>(call.index))}};
  if (call.is_external()) {
    const ExternalCall &c = call.external();
    std::vector<PyConstant> args;
    for (const Argument &a : c.args)
      args.push_back(argument(a));
    Entries kwargs, opts;
    for (const auto &[name, a] : c.kwargs)
      kwargs.emplace_back(name, argument(a));
    for (const auto &[name, v] : c.opts)
      opts.emplace_back(name, v);
    e.emplace_back("kernel", str(c.kernel));
    e.emplace_back("args", PyConstant::list(std::move(args)));
    e.emplace_back("kwargs", PyConstant::make_dict(std::move(kwargs)));
    e.emplace_back("grid", dims(c.grid));
    e.emplace_back("nc", PyConstant::integer(c.nc));
    e.emplace_back("opts", PyConstant::make_dict(std::move(opts)));
  } else {
    const InternalCall &c = call.internal();
    std::vector<PyConstant> operands, results;
    for (const TensorSpec &t : c.operands)
      operands.push_back(tensor(t, true));
    for (const TensorSpec &t : c.results)
      results.push_back(tensor(t, true, true));
    e.emplace_back("internal", str(c.internal));
    e.emplace_back("kernel_name", str(c.kernel_name));
    e.emplace_back("op", str(c.op));
    e.emplace_back("operands", PyConstant::list(std::move(operands)));
    e.emplace_back("results", PyConstant::list(std::move(results)));
    e.emplace_back("attrs", c.attrs);
  }
  return PyConstant::make_dict(std::move(e));
}

} // namespace

void write_manifest_json(TextSink &out, const Manifest &m, const SourceManager &sources) {
  std::vector<PyConstant> srcs;
  for (const KernelSource &s : m.sources) {
    std::string_view text = sources.contents(s.file);
    Entries e = {{"name", str(s.name)}};
    if (!s.path.empty())
      e.emplace_back("path", str(s.path));
    e.emplace_back("bytes", PyConstant::integer(static_cast<std::int64_t>(text.size())));
    e.emplace_back("sha256", str(sha256_hex(text)));
    srcs.push_back(PyConstant::make_dict(std::move(e)));
  }
  // The calls are the last member: the document is printed with an empty list there, and each
  // call is printed on its own into the list, so that a description of a million calls is
  // never held as one tree.
  PyConstant root = PyConstant::make_dict({
      {"nkicc", PyConstant::integer(kManifestVersion)},
      {"name", str(m.name)},
      {"target", m.target ? str(*m.target) : PyConstant::none()},
      {"sources", PyConstant::list(std::move(srcs))},
      {"calls", PyConstant::list({})},
  });
  std::string head = to_pretty_json(root);
  constexpr std::string_view kEmptyCalls = "[]\n}";
  if (m.calls.empty() || !head.ends_with(kEmptyCalls)) {
    out.text += head;
    out.text += '\n';
    return;
  }
  head.resize(head.size() - kEmptyCalls.size());
  out.text += head;
  out.text += "[\n";
  for (std::size_t i = 0; i < m.calls.size(); ++i) {
    std::string call = to_pretty_json(call_json(m.calls[i]));
    // Two levels deeper than at the top: every line of the call gets four more spaces.
    out.text += "    ";
    for (char c : call) {
      out.text += c;
      if (c == '\n')
        out.text += "    ";
    }
    out.text += i + 1 < m.calls.size() ? ",\n" : "\n";
    out.flush_if_large();
  }
  out.text += "  ]\n}\n";
}

std::string manifest_to_json(const Manifest &m, const SourceManager &sources) {
  TextSink sink;
  write_manifest_json(sink, m, sources);
  return std::move(sink.text);
}

} // namespace nkicc
