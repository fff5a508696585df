// Imports: Interpreter::import_module (sys.modules, the resolver, the standard library, kernel
// files) and FileModuleLoader, which finds kernel files and packages as Python's path finder
// does (a package's `__init__.py` before a module file, namespace folders last), names them by
// Python's rules and runs each file once.
#include "nkicc/trace/module_loader.h"

#include "nkicc/python/parser.h"
#include "nkicc/support/file_io.h"
#include "eval/classes.h"
#include "pylib/stdlib.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

namespace nkicc::trace {

namespace {

namespace fs = std::filesystem;

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s)
    if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '_')
      return false;
  return true;
}

/// What stat() says of a path: absent, a folder, a regular file, or something else (a FIFO, a
/// device), which nkicc never reads.
enum class Kind { Missing, Folder, Regular, Other };
Kind kind_of(const std::string &path) {
  struct stat st {};
  if (::stat(path.empty() ? "." : path.c_str(), &st) != 0)
    return Kind::Missing;
  if (S_ISDIR(st.st_mode))
    return Kind::Folder;
  return S_ISREG(st.st_mode) ? Kind::Regular : Kind::Other;
}

std::string canonical(const std::string &path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path.empty() ? "." : path, ec), ec);
  return ec ? fs::absolute(path.empty() ? "." : path).lexically_normal().string() : p.string();
}

bool under(const std::string &canonical_path, const std::string &root) {
  if (canonical_path == root)
    return true;
  std::string prefix = root.ends_with('/') ? root : root + "/";
  return canonical_path.starts_with(prefix);
}

std::string shown_dir(const std::string &dir) { return dir.empty() ? "." : dir; }

/// The folder above a folder, in the form the user's paths have (relative stays relative:
/// above "" is "..", above ".." is "../..").
std::string parent_of(const std::string &dir) {
  if (dir.empty() || dir == ".")
    return "..";
  if (dir == ".." || dir.ends_with("/.."))
    return dir + "/..";
  return parent_dir(dir);
}

/// "x.py or x/__init__.py in 'a', 'b'".
std::string describe_search(std::string_view part, const std::vector<std::string> &dirs,
                            const std::vector<std::string> &notes) {
  std::string out = fmt::format("{}.py or {}/__init__.py in ", part, part);
  for (std::size_t k = 0; k < dirs.size(); ++k)
    out += (k ? ", '" : "'") + shown_dir(dirs[k]) + "'";
  for (const std::string &n : notes)
    out += "; " + n;
  return out;
}

} // namespace

// ---- the loader -----------------------------------------------------------------------------

FileModuleLoader::FileModuleLoader(SourceManager &sources, DiagnosticEngine &diags, std::string base_dir)
    : sources_(sources), diags_(diags), base_dir_(std::move(base_dir)) {
  roots_.push_back(canonical(base_dir_));
}

FileModuleLoader::~FileModuleLoader() = default;

std::string FileModuleLoader::module_name_under(std::string_view root, std::string_view file) {
  fs::path rel = fs::path(file).lexically_relative(fs::path(root.empty() ? "." : root));
  if (rel.empty() || *rel.begin() == "..")
    return "";
  std::vector<std::string> parts;
  for (const fs::path &part : rel)
    parts.push_back(part.string());
  std::string &last = parts.back();
  if (!last.ends_with(".py"))
    return "";
  last.resize(last.size() - 3);
  if (last == "__init__")
    parts.pop_back();
  if (parts.empty())
    return "";
  std::string name;
  for (const std::string &p : parts) {
    if (!is_identifier(p))
      return "";
    name += (name.empty() ? "" : ".") + p;
  }
  return name;
}

std::pair<std::string, std::string> FileModuleLoader::name_and_root(const std::string &path) const {
  // The package of a file is the chain of folders above it up to the topmost one with an
  // __init__.py (folders without one inside it are namespace portions of that package, as
  // `reference/rmsnorm_quant/` in `reference/__init__.py`'s package).
  std::string dir = parent_dir(path);
  std::string stem = file_stem(path);
  std::vector<std::string> chain; // folder names, innermost first
  std::vector<std::string> dirs;  // the folders themselves
  std::size_t top = std::string::npos;
  for (std::string here = dir; chain.size() < 64;) {
    std::string shown = here.empty() ? "." : here;
    std::string folder = file_stem(canonical(shown));
    if (canonical(shown) == "/" || !is_identifier(folder))
      break;
    chain.push_back(folder);
    dirs.push_back(here);
    if (kind_of(join_path(here, "__init__.py")) == Kind::Regular)
      top = chain.size() - 1;
    here = parent_of(here);
  }
  std::vector<std::string> parts;
  std::string root = dir;
  if (top != std::string::npos) {
    for (std::size_t k = top + 1; k-- > 0;)
      parts.push_back(chain[k]);
    root = parent_of(dirs[top]);
  } else {
    // No package on disk: under the description's folder, every folder on the way counts as
    // one (as when that folder is on sys.path).
    std::string base = canonical(base_dir_), file = canonical(path);
    if (under(file, base)) {
      std::string name = module_name_under(base, file);
      if (!name.empty())
        return {name, base_dir_};
    }
  }
  if (stem != "__init__")
    parts.push_back(stem);
  std::string name;
  for (const std::string &p : parts)
    name += (name.empty() ? "" : ".") + p;
  return {name.empty() ? stem : name, root};
}

bool FileModuleLoader::allowed(const std::string &canonical_path) const {
  for (const std::string &root : roots_)
    if (under(canonical_path, root))
      return true;
  return false;
}

FileModuleLoader::File &FileModuleLoader::file_for(const std::string &path, const std::string &canon, bool package) {
  auto [it, fresh] = files_.try_emplace(canon);
  File &f = it->second;
  if (fresh) {
    f.path = path;
    f.canonical = canon;
    f.package = package;
    f.name = name_and_root(path).first;
  }
  return f;
}

void FileModuleLoader::add_source(std::string path, const python::Module &module, bool on_disk) {
  // Inline code is found by its name under the description's folder, as if it were a file.
  std::string canon = canonical(path);
  File &f = file_for(path, canon, file_stem(path) == "__init__");
  f.ast = &module;
  if (f.name.empty())
    f.name = file_stem(path);
  listed_.push_back(canon);
  missing_.clear(); // (a search that found nothing may find this file now)
  if (on_disk) {
    // A listed source's folder and package root may be read by its imports.
    roots_.push_back(canonical(parent_dir(path)));
    roots_.push_back(canonical(name_and_root(path).second));
  }
}

void FileModuleLoader::add_entry_files(const std::vector<EntryFile> &files) {
  std::vector<std::string> search;
  for (const EntryFile &e : files) {
    std::string root = e.root.empty() ? std::string(".") : e.root;
    if (std::find(search.begin(), search.end(), root) == search.end())
      search.push_back(root);
    roots_.push_back(canonical(root));
    roots_.push_back(canonical(parent_dir(e.path)));
  }
  for (const EntryFile &e : files) {
    std::string canon = canonical(e.path);
    auto [it, fresh] = files_.try_emplace(canon);
    File &f = it->second;
    if (fresh) {
      f.path = e.path;
      f.canonical = canon;
      f.package = file_stem(e.path) == "__init__";
      f.name = e.name;
      f.text = e.text;
    }
    for (const std::string &d : search)
      if (std::find(f.search.begin(), f.search.end(), d) == f.search.end()) {
        f.search.push_back(d);
        f.import_dirs.reset();
      }
  }
  // New files and folders: a search that found nothing before may find something now.
  missing_.clear();
}

std::shared_ptr<ModuleObject> FileModuleLoader::run_entry_file(Interpreter &interp, const std::string &path,
                                                               const python::Module *&ast) {
  File &f = files_.at(canonical(path));
  if (!f.ast && f.text != kNoFile) {
    // The entry's own source: its syntax errors are the error (reported), not an import's.
    std::optional<python::Module> parsed = python::parse_module(sources_, f.text, diags_);
    if (!parsed) {
      ast = nullptr;
      return nullptr;
    }
    parsed_.push_back(std::make_unique<python::Module>(std::move(*parsed)));
    f.ast = parsed_.back().get();
  }
  std::shared_ptr<ModuleObject> m = f.module ? f.module : run(interp, f, f.name);
  ast = f.ast;
  return m;
}

std::string FileModuleLoader::source_module_name(std::size_t k) const { return files_.at(listed_[k]).name; }

std::shared_ptr<ModuleObject> FileModuleLoader::run_source(Interpreter &interp, std::size_t k) {
  File &f = files_.at(listed_[k]);
  if (f.module)
    return f.module;
  return run(interp, f, f.name);
}

FileModuleLoader::File *FileModuleLoader::find(std::string_view part, const std::vector<std::string> &dirs,
                                               std::vector<std::string> &notes,
                                               std::vector<std::string> &namespace_dirs) {
  for (const std::string &dir : dirs) {
    std::string package_dir = join_path(dir, part);
    std::string init = join_path(package_dir, "__init__.py");
    std::string module = join_path(dir, std::string(part) + ".py");
    auto consider = [&](const std::string &path, bool package) -> File * {
      // A listed source (inline code too) is found by its path, on disk or not.
      if (auto it = files_.find(canonical(path)); it != files_.end() && (it->second.ast || it->second.text))
        return &it->second;
      Kind k = kind_of(path);
      if (k == Kind::Missing || k == Kind::Folder)
        return nullptr;
      if (k == Kind::Other) {
        notes.push_back(fmt::format("'{}' is not a regular file", path));
        return nullptr;
      }
      std::string canon = canonical(path);
      if (!allowed(canon)) {
        notes.push_back(fmt::format("'{}' is outside the folders nkicc reads", path));
        return nullptr;
      }
      return &file_for(path, canon, package);
    };
    if (kind_of(package_dir) == Kind::Folder) {
      if (File *f = consider(init, true))
        return f;
      if (allowed(canonical(package_dir)))
        namespace_dirs.push_back(package_dir);
    }
    if (File *f = consider(module, false))
      return f;
  }
  return nullptr;
}

std::shared_ptr<ModuleObject> FileModuleLoader::load(Interpreter &interp, std::string_view name,
                                                     const ModuleObject *parent, const ModuleObject *importer) {
  std::string_view part = name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
  std::vector<std::string> dirs;
  if (parent) {
    // A submodule is looked for in its package's folders only (its __path__).
    auto it = package_dirs_.find(parent);
    if (it == package_dirs_.end())
      return nullptr;
    dirs = it->second;
  } else {
    auto add = [&](const std::string &d) {
      if (std::find(dirs.begin(), dirs.end(), d) == dirs.end())
        dirs.push_back(d);
    };
    if (importer)
      for (auto &[canon, f] : files_)
        if (f.module.get() == importer) {
          // Worked out from the disk once per file: its imports may run in a loop.
          if (!f.import_dirs) {
            std::vector<std::string> own{parent_dir(f.path)};
            // A registry entry's file imports from its entry's folders, not by the layout on disk.
            if (f.search.empty())
              own.push_back(name_and_root(f.path).second);
            own.insert(own.end(), f.search.begin(), f.search.end());
            f.import_dirs = std::move(own);
          }
          for (const std::string &d : *f.import_dirs)
            add(d);
        }
    add(base_dir_);
  }
  // A module not found in these folders is not looked for there again in this run (a kernel
  // that imports it in a loop would search the disk on every pass); nor is the disk looked at
  // again for one found, which import_module keeps.
  std::string missing_key(part);
  for (const std::string &d : dirs)
    (missing_key += '\0') += d;
  if (auto it = missing_.find(missing_key); it != missing_.end()) {
    searched_[std::string(name)] = it->second;
    return nullptr;
  }
  std::vector<std::string> notes, namespace_dirs;
  File *f = find(part, dirs, notes, namespace_dirs);
  if (!f && !namespace_dirs.empty()) {
    // A folder without __init__.py: a namespace package, whose __path__ is every such folder.
    auto m = std::make_shared<ModuleObject>(std::string(name));
    m->globals().set("__name__", Value::str(std::string(name)));
    m->globals().set("__package__", Value::str(std::string(name)));
    std::vector<Value> path;
    for (const std::string &d : namespace_dirs)
      path.push_back(Value::str(d));
    m->globals().set("__path__", Value::list(std::move(path)));
    package_dirs_[m.get()] = namespace_dirs;
    interp.set_module(name, m);
    return m;
  }
  if (!f) {
    auto described = std::make_shared<const std::string>(describe_search(part, dirs, notes));
    searched_[std::string(name)] = described;
    missing_.emplace(std::move(missing_key), std::move(described));
    return nullptr;
  }
  if (f->module) {
    // The same file imported under another name (or a listed source already run).
    interp.set_module(name, f->module);
    return f->module;
  }
  return run(interp, *f, std::string(name));
}

std::shared_ptr<ModuleObject> FileModuleLoader::run(Interpreter &interp, File &file, const std::string &bound_name) {
  if (!file.ast && file.text != kNoFile) {
    std::optional<python::Module> parsed = python::parse_module(sources_, file.text, diags_);
    if (!parsed)
      raise_python("ImportError",
                   fmt::format("cannot import '{}': '{}' has syntax errors (reported above)", bound_name, file.path));
    parsed_.push_back(std::make_unique<python::Module>(std::move(*parsed)));
    file.ast = parsed_.back().get();
  }
  if (!file.ast) {
    std::string why;
    std::optional<std::string> text = read_file(file.path, why);
    if (!text)
      raise_python("ImportError", fmt::format("cannot import '{}': cannot read '{}': {}", bound_name, file.path, why));
    FileId id = sources_.add_buffer(file.path, std::move(*text));
    files_read_.push_back(file.path);
    std::optional<python::Module> parsed = python::parse_module(sources_, id, diags_);
    if (!parsed)
      raise_python("ImportError",
                   fmt::format("cannot import '{}': '{}' has syntax errors (reported above)", bound_name, file.path));
    parsed_.push_back(std::make_unique<python::Module>(std::move(*parsed)));
    file.ast = parsed_.back().get();
  }
  auto m = std::make_shared<ModuleObject>(file.name);
  Scope &g = m->globals();
  g.set("__name__", Value::str(file.name));
  g.set("__file__", Value::str(file.path));
  std::string package =
      file.package
          ? file.name
          : (file.name.rfind('.') == std::string::npos ? std::string() : file.name.substr(0, file.name.rfind('.')));
  g.set("__package__", Value::str(package));
  if (file.package) {
    std::string dir = parent_dir(file.path);
    g.set("__path__", Value::list({Value::str(dir)}));
    package_dirs_[m.get()] = {dir};
  }
  file.module = m;
  interp.set_module(bound_name, m);
  if (file.name != bound_name)
    interp.set_module(file.name, m);
  running_.insert(m.get());
  try {
    interp.run_module(*file.ast, m);
  } catch (...) {
    // A module whose code failed is forgotten, as Python drops it from sys.modules.
    running_.erase(m.get());
    file.module.reset();
    interp.forget_module(bound_name);
    interp.forget_module(file.name);
    throw;
  }
  running_.erase(m.get());
  return m;
}

std::shared_ptr<const std::string> FileModuleLoader::searched(std::string_view name) const {
  // The search of the longest prefix that failed (`a` for `a.b.c`).
  for (std::string_view n = name;;) {
    if (auto it = searched_.find(n); it != searched_.end())
      return it->second;
    std::size_t dot = n.rfind('.');
    if (dot == std::string_view::npos)
      return nullptr;
    n = n.substr(0, dot);
  }
}

bool FileModuleLoader::initializing(const ModuleObject &module) const { return running_.count(&module) != 0; }

// ---- Interpreter's imports ----------------------------------------------------------------------

namespace {
/// The absolute name of `from <level dots>module import`, by the importer's __package__
/// (importlib's _resolve_name).
std::string resolve_relative(const ModuleObject *importer, int level, std::string_view module) {
  std::string package;
  if (importer) {
    Value *p = const_cast<ModuleObject *>(importer)->globals().find_local("__package__");
    if (p && p->kind == Value::Kind::Str)
      package = p->str_text();
  }
  if (package.empty())
    raise_python("ImportError", "attempted relative import with no known parent package");
  std::string base = package;
  for (int k = 1; k < level; ++k) {
    std::size_t dot = base.rfind('.');
    if (dot == std::string::npos)
      raise_python("ImportError", "attempted relative import beyond top-level package");
    base.resize(dot);
  }
  return module.empty() ? base : base + "." + std::string(module);
}
} // namespace

std::shared_ptr<Object> Interpreter::import_module(std::string_view dotted_name, int level, SourceLoc loc) {
  try {
    std::string name = level > 0 ? resolve_relative(current_module(), level, dotted_name) : std::string(dotted_name);
    if (auto it = modules_.find(name); it != modules_.end())
      return it->second;
    // The parent package first, as Python imports `a` before `a.b`.
    std::shared_ptr<Object> parent;
    std::size_t dot = name.rfind('.');
    if (dot != std::string::npos)
      parent = import_module(std::string_view(name).substr(0, dot));
    std::shared_ptr<Object> m;
    bool builtin = !not_builtin_.contains(name);
    if (builtin && name == "math")
      m = math_;
    if (builtin && !m && resolver_)
      m = resolver_(*this, name);
    if (builtin && !m) {
      m = pylib::make_stdlib_module(*this, name);
      // eval's class-based modules (dataclasses, enum, typing) and class-based names of
      // pylib's (collections.namedtuple) join them.
      std::shared_ptr<ModuleObject> classes = eval::class_module(*this, name);
      if (auto *lib_module = dynamic_cast<ModuleObject *>(m.get()); lib_module && classes) {
        for (const Scope::Entry &entry : classes->globals().entries())
          if (entry.bound && !lib_module->globals().find_local(entry.symbol))
            lib_module->globals().set(entry.symbol, entry.value);
      } else if (!m) {
        m = classes;
      }
      if (!m)
        not_builtin_.insert(name);
    }
    auto *parent_module = dynamic_cast<ModuleObject *>(parent.get());
    if (!m && loader_ && (dot == std::string::npos || parent_module))
      m = loader_->load(*this, name, parent_module, current_module());
    if (!m)
      return nullptr;
    modules_.emplace(name, m);
    // The submodule becomes an attribute of its package, as after Python's import.
    if (parent_module && !parent_module->globals().find_local(std::string_view(name).substr(dot + 1)))
      parent_module->globals().set(std::string_view(name).substr(dot + 1), Value::object(m));
    return m;
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

Value Interpreter::unresolved_module(std::string_view name) const {
  std::shared_ptr<const std::string> searched = loader_ ? loader_->searched(name) : nullptr;
  if (!searched) {
    static const auto nowhere = std::make_shared<const std::string>();
    searched = nowhere;
  }
  return Value::object(std::make_shared<OpaqueObject>(std::string(name), std::move(searched)));
}

void Interpreter::raise_cannot_import(const Object &module, std::string_view module_name, std::string_view name,
                                      SourceLoc loc) const {
  std::string where = "unknown location";
  bool partial = false;
  if (auto *m = dynamic_cast<const ModuleObject *>(&module)) {
    Value *file = const_cast<ModuleObject *>(m)->globals().find_local("__file__");
    if (file && file->kind == Value::Kind::Str)
      where = file->str_text();
    partial = loader_ && loader_->initializing(*m);
  }
  if (partial)
    raise_python("ImportError",
                 fmt::format("cannot import name '{}' from partially initialized module '{}' (most likely due to a "
                             "circular import) ({})",
                             name, module_name, where),
                 loc);
  raise_python("ImportError", fmt::format("cannot import name '{}' from '{}' ({})", name, module_name, where), loc);
}

void Interpreter::set_module(std::string_view name, std::shared_ptr<Object> module) {
  modules_[std::string(name)] = std::move(module);
}

void Interpreter::forget_module(std::string_view name) {
  if (auto it = modules_.find(name); it != modules_.end())
    modules_.erase(it);
}

} // namespace nkicc::trace
