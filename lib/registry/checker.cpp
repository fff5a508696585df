#include "registry/checker.h"

#include "manifest/json_checker.h"

#include "nkicc/support/file_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <system_error>

namespace nkicc::registry {

namespace {

constexpr const char *kId = "registry";
constexpr std::int64_t kRegistryVersion = 1;

using Kind = JsonValue::Kind;

const JsonPointer kRoot{};

const std::vector<std::string> kEntryFields = {"source", "modules", "package", "entry", "args", "kwargs", "results"};
// The argument forms, then their modifiers.
const std::vector<std::string> kArgForms = {"operand", "operand_shape", "result", "result_shape", "result_dim",
                                            "attr",    "const",         "dtype",  "object"};
const std::vector<std::string> kArgFields = {"operand", "operand_shape", "result", "result_shape", "result_dim", "attr",
                                             "const",   "dtype",         "object", "default",      "fields"};
constexpr const char *kArgExpected =
    "an argument ({\"operand\": i}, {\"result\": i}, {\"attr\": name}, {\"const\": value}, ...; see docs/registry.md)";

/// ASCII identifiers, plus any non-ASCII byte: Python accepts Unicode letters and nkicc does not
/// keep their tables, so a non-ASCII name is left for the tracer to reject.
bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '_' || u >= 0x80))
      return false;
  }
  return true;
}

bool is_dotted_name(std::string_view s) {
  for (;;) {
    std::size_t dot = s.find('.');
    if (!is_identifier(s.substr(0, dot)))
      return false;
    if (dot == std::string_view::npos)
      return true;
    s.remove_prefix(dot + 1);
  }
}

/// Why `path` is no readable file (or folder, when `folder`), in read_file()'s words; empty
/// when it is one.
std::string unreadable_reason(const std::string &path, bool folder) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec) {
    std::string why = ec.message();
    if (!why.empty())
      why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
    return why;
  }
  bool is_dir = std::filesystem::is_directory(status);
  if (folder)
    return is_dir ? std::string() : "not a folder";
  return is_dir ? "is a directory" : std::string();
}

/// `a/./b/` -> `a/b`: a relative path as the registry writes it, for comparing and naming.
std::string normal_relative(std::string_view rel) {
  std::string out = std::filesystem::path(rel).lexically_normal().generic_string();
  while (out.size() > 1 && out.back() == '/')
    out.pop_back();
  return out;
}

class Checker : JsonChecker {
public:
  Checker(DiagnosticEngine &diags, const std::vector<std::string> &search)
      : JsonChecker(diags, kId), search_(search), folder_(search.back()) {}

  std::optional<std::vector<RegistryEntry>> check(const JsonValue &root) {
    std::vector<RegistryEntry> entries;
    if (root.kind() != Kind::Object) {
      error(root, kRoot, fmt::format("a registry must be a JSON object, not {}", json_kind_name(root.kind())));
      flush();
      return std::nullopt;
    }
    check_fields(root, kRoot, {"nkicc_registry", "kernels"});

    if (const JsonValue *v = root.find("nkicc_registry")) {
      JsonPointer p = pointer_append(kRoot, "nkicc_registry");
      if (auto version = integer(*v, p); version && *version != kRegistryVersion)
        error(*v, p,
              fmt::format("unsupported registry version {}; this nkicc reads version {}", *version, kRegistryVersion));
    } else {
      error(root, kRoot, "missing required field 'nkicc_registry' (the registry format version, 1)");
    }

    if (const JsonValue *v = root.find("kernels")) {
      JsonPointer p = pointer_append(kRoot, "kernels");
      if (expect(*v, Kind::Object, p, "an object of kernel entries by func_name"))
        for (const auto &[key, value] : v->members())
          if (auto e = entry(key, value, pointer_append(p, key.text())))
            entries.push_back(std::move(*e));
    } else {
      error(root, kRoot, "missing required field 'kernels' (an object of kernel entries by func_name)");
    }

    if (!flush())
      return std::nullopt;
    return entries;
  }

private:
  std::optional<std::string> nonempty_string(const JsonValue &v, const JsonPointer &ptr, std::string_view what) {
    auto s = string(v, ptr);
    if (s && s->empty()) {
      error(v, ptr, fmt::format("{} must not be empty", what));
      return std::nullopt;
    }
    return s;
  }

  std::optional<std::int64_t> index(const JsonValue &v, const JsonPointer &ptr, std::string_view what) {
    auto i = integer(v, ptr);
    if (i && *i < 0) {
      error(v, ptr, fmt::format("{} must not be negative, found {}", what, *i));
      return std::nullopt;
    }
    return i;
  }

  /// An I/O error (exit 3) at `v`: a file the registry names cannot be read.
  void io_error(const JsonValue &v, const JsonPointer &ptr, std::string message) {
    Diagnostic d;
    d.error_class = ErrorClass::IO;
    d.loc = v.loc();
    d.message = fmt::format("{}: {}", ptr.str(), message);
    d.id = kId;
    report(std::move(d));
  }

  /// `rel` looked up along the search path: the first folder that has it (a regular file, or a
  /// folder when `folder`) wins; the registry's own folder is the last one tried. Reported (an
  /// I/O error naming the own folder's path) when no folder has it.
  std::optional<std::string> locate(const JsonValue &v, const JsonPointer &ptr, const std::string &rel, bool folder,
                                    std::string_view what) {
    for (std::size_t i = 0; i + 1 < search_.size(); ++i) {
      std::string path = join_path(search_[i], rel);
      if (unreadable_reason(path, folder).empty())
        return path;
    }
    std::string own = join_path(folder_, rel);
    std::string why = unreadable_reason(own, folder);
    if (why.empty())
      return own;
    std::string message = fmt::format("cannot read {} {}: {}", what, quote_for_message(own, 256), why);
    if (search_.size() == 2)
      message += fmt::format(" (nor is it in the -I folder {})", quote_for_message(search_[0], 256));
    else if (search_.size() > 2)
      message += fmt::format(" (nor is it in any of the {} -I folders before it)", search_.size() - 1);
    io_error(v, ptr, std::move(message));
    return std::nullopt;
  }

  /// Adds `path` to the entry's files unless it is there already; false when it was.
  static bool add_file(RegistryEntry &e, const std::string &path, std::string name) {
    for (const std::string &f : e.files)
      if (f == path || same_file(f, path))
        return false;
    e.files.push_back(path);
    e.file_names.push_back(std::move(name));
    return true;
  }

  /// entry := {"source": str, "modules"?: [str...], "package"?: str, "entry": identifier,
  ///           "args"?: [arg...], "kwargs"?: {identifier: arg}, "results"?: positive int}
  std::optional<RegistryEntry> entry(const JsonValue &key, const JsonValue &v, const JsonPointer &ptr) {
    RegistryEntry e;
    e.func_name = key.text();
    e.loc = key.loc();
    e.folder = folder_;
    bool ok = true;
    if (key.text().empty()) {
      error(key, ptr, "a func_name must not be empty");
      ok = false;
    }
    if (!expect(v, Kind::Object, ptr, "a kernel entry object"))
      return std::nullopt;
    check_fields(v, ptr, kEntryFields);

    std::string source_rel;
    const JsonValue *source_value = nullptr;
    if (const JsonValue *s = v.find("source")) {
      JsonPointer p = pointer_append(ptr, "source");
      if (auto path = nonempty_string(*s, p, "a source path")) {
        source_rel = *path;
        source_value = s;
        e.source_loc = s->loc();
        if (auto found = locate(*s, p, *path, false, "kernel source")) {
          e.source = *found;
          add_file(e, e.source, normal_relative(*path));
        } else {
          ok = false;
        }
      } else {
        ok = false;
      }
    } else {
      error(v, ptr, "a kernel entry needs a 'source' (its NKI file, relative to the registry's folder)");
      ok = false;
    }
    e.module = file_stem(source_rel);

    if (const JsonValue *m = v.find("modules")) {
      JsonPointer p = pointer_append(ptr, "modules");
      if (expect(*m, Kind::Array, p, "an array of the files its source imports")) {
        for (std::size_t i = 0; i < m->items().size(); ++i) {
          const JsonValue &item = m->items()[i];
          JsonPointer q = pointer_append(p, i);
          auto path = nonempty_string(item, q, "a module path");
          std::optional<std::string> found = path ? locate(item, q, *path, false, "kernel module") : std::nullopt;
          if (found && !add_file(e, *found, normal_relative(*path))) {
            error(item, q, fmt::format("{} is already a file of this entry", quote_for_message(*path)));
            found.reset();
          }
          ok = ok && found.has_value();
        }
      } else {
        ok = false;
      }
    }

    if (const JsonValue *pkg = v.find("package")) {
      JsonPointer p = pointer_append(ptr, "package");
      auto rel = nonempty_string(*pkg, p, "a package folder");
      std::optional<std::string> found = rel ? locate(*pkg, p, *rel, true, "package folder") : std::nullopt;
      if (found) {
        e.package = *found;
        std::string package_rel = normal_relative(*rel);
        std::string source_norm = normal_relative(source_rel);
        if (source_value && (source_norm.size() <= package_rel.size() + 1 || !source_norm.starts_with(package_rel) ||
                             source_norm[package_rel.size()] != '/')) {
          error(*source_value, pointer_append(ptr, "source"),
                fmt::format("source {} is not inside the package folder {}", quote_for_message(source_rel),
                            quote_for_message(*rel)));
          ok = false;
        } else if (source_value) {
          e.module = package_module_name(package_rel, source_norm);
        }
        if (!add_package_files(e, package_rel, *pkg, p))
          ok = false;
      } else {
        ok = false;
      }
    }

    if (const JsonValue *n = v.find("entry")) {
      JsonPointer p = pointer_append(ptr, "entry");
      if (auto name = nonempty_string(*n, p, "an entry function name")) {
        if (is_identifier(*name)) {
          e.entry = *name;
          e.entry_loc = n->loc();
        } else {
          error(*n, p, fmt::format("entry {} is not a Python function name", quote_for_message(*name)));
          ok = false;
        }
      } else {
        ok = false;
      }
    } else {
      error(v, ptr, "a kernel entry needs an 'entry' (the function to call in its source)");
      ok = false;
    }

    // Read before the arguments: result indices are checked against it.
    if (const JsonValue *r = v.find("results")) {
      JsonPointer p = pointer_append(ptr, "results");
      auto count = integer(*r, p);
      if (count && *count <= 0) {
        error(*r, p, fmt::format("the result count must be positive, found {}", *count));
        count.reset();
      }
      if (count)
        e.results = static_cast<std::size_t>(*count);
      else
        ok = false;
    }

    passed_results_.clear();
    if (const JsonValue *args = v.find("args")) {
      JsonPointer p = pointer_append(ptr, "args");
      if (expect(*args, Kind::Array, p, "an array of arguments")) {
        for (std::size_t i = 0; i < args->items().size(); ++i) {
          auto a = argument(args->items()[i], pointer_append(p, i), e.results);
          ok = ok && a.has_value();
          if (a)
            e.args.push_back(std::move(*a));
        }
      } else {
        ok = false;
      }
    }

    if (const JsonValue *kwargs = v.find("kwargs")) {
      JsonPointer p = pointer_append(ptr, "kwargs");
      if (expect(*kwargs, Kind::Object, p, "an object of keyword arguments")) {
        for (const auto &[name, value] : kwargs->members()) {
          JsonPointer q = pointer_append(p, name.text());
          if (!is_identifier(name.text())) {
            error(name, q, fmt::format("keyword {} is not a Python parameter name", quote_for_message(name.text())));
            ok = false;
          }
          auto a = argument(value, q, e.results);
          ok = ok && a.has_value();
          if (a)
            e.kwargs.emplace_back(name.text(), std::move(*a));
        }
      } else {
        ok = false;
      }
    }

    if (!ok)
      return std::nullopt;
    return e;
  }

  /// `pkg/reference/vision.py` in package `pkg` runs as `pkg.reference.vision` (an `__init__.py`
  /// as its package), so that relative imports resolve as Python resolves them.
  static std::string package_module_name(const std::string &package_rel, const std::string &source_rel) {
    std::string base = std::filesystem::path(package_rel).filename().generic_string();
    std::string rest = source_rel.substr(package_rel.size() + 1);
    if (rest.ends_with(".py"))
      rest.resize(rest.size() - 3);
    std::string name = base + "." + rest;
    std::replace(name.begin(), name.end(), '/', '.');
    if (name.ends_with(".__init__"))
      name.resize(name.size() - 9);
    return name;
  }

  /// Every `.py` file under the package folder, sorted by path, joins the entry's files.
  bool add_package_files(RegistryEntry &e, const std::string &package_rel, const JsonValue &v,
                         const JsonPointer &ptr) {
    std::vector<std::string> found;
    std::error_code ec;
    std::filesystem::recursive_directory_iterator it(e.package, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const std::filesystem::directory_entry &d = *it;
      std::error_code type_ec;
      if (d.path().extension() == ".py" && d.is_regular_file(type_ec))
        found.push_back(d.path().generic_string());
    }
    if (ec) {
      io_error(v, ptr, fmt::format("cannot list package folder {}: {}", quote_for_message(e.package, 256),
                                   ec.message()));
      return false;
    }
    std::sort(found.begin(), found.end());
    for (const std::string &f : found)
      add_file(e, f,
               package_rel + "/" + std::filesystem::path(f).lexically_relative(e.package).generic_string());
    return true;
  }

  /// arg := one form ({"operand": i}, ...), with "default" on an attr and "fields" on an object.
  std::optional<RegistryArg> argument(const JsonValue &v, const JsonPointer &ptr, std::size_t results) {
    if (!expect(v, Kind::Object, ptr, kArgExpected))
      return std::nullopt;
    bool ok = check_fields(v, ptr, kArgFields);
    const JsonMember *form = nullptr;
    for (const auto &member : v.members()) {
      if (std::find(kArgForms.begin(), kArgForms.end(), member.key.text()) == kArgForms.end())
        continue;
      if (form) {
        error(member.key, ptr,
              fmt::format("an argument has one form, found both '{}' and '{}'", form->key.text(), member.key.text()));
        return std::nullopt;
      }
      form = &member;
    }
    if (!form) {
      // An unknown field has been reported with its suggestion; that is the likelier mistake.
      if (ok)
        error(v, ptr, fmt::format("an argument needs one of {}", quote_list(kArgForms)));
      return std::nullopt;
    }

    RegistryArg a;
    a.loc = v.loc();
    std::string_view kind = form->key.text();
    const JsonValue &value = form->value;
    a.value_loc = value.loc();
    JsonPointer p = pointer_append(ptr, kind);
    for (auto [modifier, owner] : {std::pair{"default", "attr"}, std::pair{"fields", "object"}}) {
      const JsonValue *m = v.find(modifier);
      if (m && kind != owner) {
        error(*m, pointer_append(ptr, modifier), fmt::format("'{}' is only for an '{}' argument", modifier, owner));
        ok = false;
      }
    }

    // A result index: in range of the entry's results, and passed as an output tensor once.
    auto result_index = [&](const JsonValue &iv, const JsonPointer &ip) -> std::optional<std::size_t> {
      auto r = index(iv, ip, "a result index");
      if (!r)
        return std::nullopt;
      if (static_cast<std::uint64_t>(*r) >= results) {
        error(iv, ip,
              fmt::format("result index {} is out of range: the entry produces {} result{}", *r, results,
                          results == 1 ? "" : "s"));
        return std::nullopt;
      }
      return static_cast<std::size_t>(*r);
    };

    if (kind == "operand" || kind == "operand_shape") {
      a.kind = kind == "operand" ? RegistryArg::Kind::Operand : RegistryArg::Kind::OperandShape;
      auto i = index(value, p, "an operand index");
      if (!i)
        return std::nullopt;
      a.index = static_cast<std::size_t>(*i);
    } else if (kind == "result" || kind == "result_shape") {
      a.kind = kind == "result" ? RegistryArg::Kind::Result : RegistryArg::Kind::ResultShape;
      auto r = result_index(value, p);
      if (!r)
        return std::nullopt;
      a.index = *r;
      if (a.kind == RegistryArg::Kind::Result) {
        auto [it, fresh] = passed_results_.emplace(a.index, ptr.str());
        if (!fresh) {
          error(value, p, fmt::format("result {} is already passed as {}", a.index, it->second));
          return std::nullopt;
        }
      }
    } else if (kind == "result_dim") {
      a.kind = RegistryArg::Kind::ResultDim;
      if (!expect(value, Kind::Array, p, "[result index, dimension] (an array of two integers)"))
        return std::nullopt;
      if (value.items().size() != 2) {
        error(value, p,
              fmt::format("expected [result index, dimension], found {} item{}", value.items().size(),
                          value.items().size() == 1 ? "" : "s"));
        return std::nullopt;
      }
      auto r = result_index(value.items()[0], pointer_append(p, std::size_t{0}));
      auto d = index(value.items()[1], pointer_append(p, std::size_t{1}), "a dimension");
      if (!r || !d)
        return std::nullopt;
      a.index = *r;
      a.dim = static_cast<std::size_t>(*d);
    } else if (kind == "attr") {
      a.kind = RegistryArg::Kind::Attr;
      auto name = nonempty_string(value, p, "an attribute name");
      if (!name)
        return std::nullopt;
      a.attr = *name;
      if (const JsonValue *def = v.find("default")) {
        a.value = constant(*def, pointer_append(ptr, "default"));
        if (!a.value)
          return std::nullopt;
      }
    } else if (kind == "const") {
      a.kind = RegistryArg::Kind::Const;
      a.value = constant(value, p);
      if (!a.value)
        return std::nullopt;
    } else if (kind == "dtype") {
      a.kind = RegistryArg::Kind::DType;
      auto name = string(value, p);
      if (!name)
        return std::nullopt;
      auto dt = parse_dtype(*name);
      if (!dt) {
        error(value, p, with_suggestion(fmt::format("unknown dtype {}", quote_for_message(*name)), *name,
                                        dtype_names()));
        return std::nullopt;
      }
      a.dtype = *dt;
    } else {
      a.kind = RegistryArg::Kind::Object;
      auto name = string(value, p);
      if (!name)
        return std::nullopt;
      if (!is_dotted_name(*name)) {
        error(value, p,
              fmt::format("object {} is not a Python name or dotted name (such as 'Mode.FAST')",
                          quote_for_message(*name)));
        return std::nullopt;
      }
      a.object = *name;
      if (const JsonValue *fields = v.find("fields")) {
        JsonPointer q = pointer_append(ptr, "fields");
        if (!expect(*fields, Kind::Object, q, "an object of the keyword arguments to call it with"))
          return std::nullopt;
        std::vector<std::pair<std::string, PyConstant>> out;
        for (const auto &[fname, fvalue] : fields->members()) {
          JsonPointer f = pointer_append(q, fname.text());
          if (!is_identifier(fname.text())) {
            error(fname, f, fmt::format("field {} is not a Python parameter name", quote_for_message(fname.text())));
            ok = false;
            continue;
          }
          auto c = constant(fvalue, f);
          if (!c)
            return std::nullopt;
          out.emplace_back(fname.text(), std::move(*c));
        }
        a.fields = std::move(out);
      }
    }
    if (!ok)
      return std::nullopt;
    return a;
  }

  const std::vector<std::string> &search_;
  std::string folder_;
  std::map<std::size_t, std::string> passed_results_; ///< this entry's {"result": i} -> where
};

} // namespace

std::optional<std::vector<RegistryEntry>> check_registry(const JsonValue &root, const std::vector<std::string> &search,
                                                         DiagnosticEngine &diags) {
  return Checker(diags, search).check(root);
}

} // namespace nkicc::registry
