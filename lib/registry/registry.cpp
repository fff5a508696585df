#include "nkicc/registry/registry.h"

#include "manifest/json_checker.h"

#include "nkicc/support/file_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace nkicc {

namespace {

constexpr const char *kId = "registry";
constexpr std::int64_t kRegistryVersion = 1;
constexpr const char *kRegistryFile = "registry.json";

using Kind = JsonValue::Kind;

const JsonPointer kRoot{};

const std::vector<std::string> kEntryFields = {"source", "entry", "args", "kwargs", "results"};
// The argument forms, then the one modifier.
const std::vector<std::string> kArgForms = {"operand", "result_dim", "attr", "const"};
const std::vector<std::string> kArgFields = {"operand", "result_dim", "attr", "const", "default"};

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

/// Why `path` is no readable file, in read_file()'s words; empty when it is one.
std::string missing_file_reason(const std::string &path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec) {
    std::string why = ec.message();
    if (!why.empty())
      why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
    return why;
  }
  if (std::filesystem::is_directory(status))
    return "is a directory";
  return {};
}

/// Checks one registry.json and turns it into entries.
class RegistryChecker : JsonChecker {
public:
  RegistryChecker(DiagnosticEngine &diags, std::string folder) : JsonChecker(diags, kId), folder_(std::move(folder)) {}

  /// The file's entries in document order; empty when any error was found (all are reported).
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

  /// entry := {"source": str, "entry": identifier, "args"?: [arg...], "kwargs"?: {identifier: arg},
  ///           "results"?: positive int}
  std::optional<RegistryEntry> entry(const JsonValue &key, const JsonValue &v, const JsonPointer &ptr) {
    RegistryEntry e;
    e.func_name = key.text();
    e.loc = key.loc();
    bool ok = true;
    if (key.text().empty()) {
      error(key, ptr, "a func_name must not be empty");
      ok = false;
    }
    if (!expect(v, Kind::Object, ptr, "a kernel entry object"))
      return std::nullopt;
    check_fields(v, ptr, kEntryFields);

    if (const JsonValue *s = v.find("source")) {
      JsonPointer p = pointer_append(ptr, "source");
      if (auto path = nonempty_string(*s, p, "a source path")) {
        e.source = join_path(folder_, *path);
        e.source_loc = s->loc();
        if (std::string why = missing_file_reason(e.source); !why.empty()) {
          // The registry names a file that is not there: an I/O error (exit 3), as a
          // description file's missing source is.
          Diagnostic d;
          d.error_class = ErrorClass::IO;
          d.loc = s->loc();
          d.message =
              fmt::format("{}: cannot read kernel source {}: {}", p.str(), quote_for_message(e.source, 256), why);
          d.id = kId;
          report(std::move(d));
          ok = false;
        }
      } else {
        ok = false;
      }
    } else {
      error(v, ptr, "a kernel entry needs a 'source' (its NKI file, relative to the registry's folder)");
      ok = false;
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

    // Read before the arguments: a result_dim is checked against it.
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

  /// arg := {"operand": i} | {"result_dim": [i, d]} | {"attr": name, "default"?: constant}
  ///      | {"const": constant}
  std::optional<RegistryArg> argument(const JsonValue &v, const JsonPointer &ptr, std::size_t results) {
    if (!expect(v, Kind::Object, ptr,
                "an argument ({\"operand\": i}, {\"result_dim\": [i, d]}, {\"attr\": name} or {\"const\": value})"))
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
    JsonPointer p = pointer_append(ptr, kind);
    const JsonValue *def = v.find("default");
    if (def && kind != "attr") {
      error(*def, pointer_append(ptr, "default"), "'default' is only for an 'attr' argument");
      ok = false;
    }
    if (kind == "operand") {
      a.kind = RegistryArg::Kind::Operand;
      auto i = index(value, p, "an operand index");
      if (!i)
        return std::nullopt;
      a.index = static_cast<std::size_t>(*i);
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
      auto r = index(value.items()[0], pointer_append(p, std::size_t{0}), "a result index");
      auto d = index(value.items()[1], pointer_append(p, std::size_t{1}), "a dimension");
      if (!r || !d)
        return std::nullopt;
      if (static_cast<std::uint64_t>(*r) >= results) {
        error(value.items()[0], pointer_append(p, std::size_t{0}),
              fmt::format("result index {} is out of range: the entry returns {} result{}", *r, results,
                          results == 1 ? "" : "s"));
        return std::nullopt;
      }
      a.index = static_cast<std::size_t>(*r);
      a.dim = static_cast<std::size_t>(*d);
    } else if (kind == "attr") {
      a.kind = RegistryArg::Kind::Attr;
      auto name = nonempty_string(value, p, "an attribute name");
      if (!name)
        return std::nullopt;
      a.attr = *name;
      if (def) {
        a.value = constant(*def, pointer_append(ptr, "default"));
        if (!a.value)
          return std::nullopt;
      }
    } else {
      a.kind = RegistryArg::Kind::Const;
      a.value = constant(value, p);
      if (!a.value)
        return std::nullopt;
    }
    if (!ok)
      return std::nullopt;
    return a;
  }

  std::string folder_;
};

} // namespace

bool Registry::load(const std::vector<std::string> &folders, SourceManager &sources, DiagnosticEngine &diags) {
  bool ok = true;
  for (const std::string &folder : folders) {
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
    auto entries = RegistryChecker(diags, folder).check(doc->root());
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
    d.id = kId;
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
