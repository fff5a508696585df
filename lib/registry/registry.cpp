#include "nkicc/registry/registry.h"

#include "registry/checker.h"

#include "nkicc/cache/py_repr.h"
#include "nkicc/manifest/json_document.h"
#include "nkicc/support/file_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace nkicc {

namespace {

constexpr const char *kRegistryFile = "registry.json";

void append_constant_dict(std::string &out, const std::vector<std::pair<std::string, PyConstant>> &entries) {
  append_py_repr(out, PyConstant::make_dict(entries));
}

} // namespace

std::string RegistryArg::canonical_text() const {
  std::string out;
  switch (kind) {
  case Kind::Operand:
    return fmt::format("operand {}", index);
  case Kind::OperandShape:
    return fmt::format("operand_shape {}", index);
  case Kind::Result:
    return fmt::format("result {}", index);
  case Kind::ResultShape:
    return fmt::format("result_shape {}", index);
  case Kind::ResultDim:
    return fmt::format("result_dim {} {}", index, dim);
  case Kind::Attr:
    out = "attr ";
    append_py_str_repr(out, attr);
    if (value) {
      out += " default ";
      append_py_repr(out, *value);
    }
    return out;
  case Kind::Const:
    out = "const ";
    append_py_repr(out, *value);
    return out;
  case Kind::DType:
    return fmt::format("dtype {}", dtype_name(dtype));
  case Kind::Object:
    out = "object ";
    append_py_str_repr(out, object);
    if (fields) {
      out += " fields ";
      append_constant_dict(out, *fields);
    }
    return out;
  }
  return out;
}

std::vector<std::pair<std::string_view, const RegistryArg *>> RegistryEntry::all_args() const {
  std::vector<std::pair<std::string_view, const RegistryArg *>> out;
  for (const RegistryArg &a : args)
    out.emplace_back(std::string_view(), &a);
  for (const auto &[name, a] : kwargs)
    out.emplace_back(name, &a);
  return out;
}

std::string RegistryEntry::canonical_text() const {
  std::string out = "func_name ";
  append_py_str_repr(out, func_name);
  out += "\nmodule ";
  append_py_str_repr(out, module);
  for (const std::string &f : file_names) {
    out += "\nfile ";
    append_py_str_repr(out, f);
  }
  out += "\nentry ";
  append_py_str_repr(out, entry);
  for (const RegistryArg &a : args)
    out += "\narg " + a.canonical_text();
  for (const auto &[name, a] : kwargs) {
    out += "\nkwarg ";
    append_py_str_repr(out, name);
    out += " " + a.canonical_text();
  }
  out += fmt::format("\nresults {}\n", results);
  return out;
}

void Registry::note_source_read(std::string path) {
  if (std::find(sources_read_.begin(), sources_read_.end(), path) == sources_read_.end())
    sources_read_.push_back(std::move(path));
}

bool Registry::load(const std::vector<std::string> &folders, SourceManager &sources, DiagnosticEngine &diags) {
  bool ok = true;
  for (std::size_t i = 0; i < folders.size(); ++i) {
    const std::string &folder = folders[i];
    std::string path = join_path(folder, kRegistryFile);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && !ec)
      continue;
    // The same folder given twice (-I of the installed one, say) is read once.
    if (std::any_of(files_.begin(), files_.end(), [&](const std::string &f) { return same_file(f, path); }))
      continue;
    std::string why;
    auto text = read_file(path, why);
    if (!text) {
      diags.io_error(path, "cannot read internal-kernel registry: " + why);
      ok = false;
      continue;
    }
    files_.push_back(path);
    FileId file = sources.add_buffer(path, std::move(*text));
    JsonParseOptions options;
    options.error_id = "registry-json";
    auto doc = parse_json(sources, file, diags, options);
    if (!doc) {
      ok = false;
      continue;
    }
    // An entry's files are looked up from the first folder of the path up to its own.
    std::vector<std::string> search(folders.begin(), folders.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    auto entries = registry::check_registry(doc->root(), search, diags);
    if (!entries) {
      ok = false;
      continue;
    }
    for (RegistryEntry &e : *entries) {
      // An earlier folder's func_name wins (-I overrides the installed kernels).
      if (index_.count(e.func_name))
        continue;
      index_.emplace(e.func_name, entries_.size());
      entries_.push_back(std::move(e));
    }
  }
  if (ok && files_.empty()) {
    // Without this, every internal call would be "not in the registry", which sends the user
    // looking for a typo in a kernel name when the registry itself is missing.
    std::vector<std::string> looked;
    for (const std::string &folder : folders)
      looked.push_back(quote_for_message(folder, 256));
    Diagnostic d;
    d.error_class = ErrorClass::IO;
    d.message = fmt::format("no internal-kernel registry found: no registry.json in {}{}",
                            folders.empty() ? std::string("any folder") : fmt::format("{}", fmt::join(looked, ", ")),
                            "; the installed one is share/nkicc/kernels beside the folder of the nkicc binary, and "
                            "-I DIR adds a folder");
    d.id = "registry";
    diags.report(std::move(d));
    return false;
  }
  return ok;
}

const RegistryEntry *Registry::find(std::string_view func_name) const {
  auto it = index_.find(func_name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  out.reserve(index_.size());
  for (const auto &[name, i] : index_)
    out.push_back(name);
  return out;
}

} // namespace nkicc
