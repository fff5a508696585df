// Imports between kernel files (SPEC §3): `import common`, `from .sub import g`,
// `from ..util.types import T`, packages with `__init__.py`. A module resolves to a file beside
// the importing file, under its package root or under the description file's folder; a source
// listed in the description is found by its path and is the same module object, run once.
// Every file read this way is a dependency, and keeps its own diagnostics' locations.
#pragma once

#include "nkicc/python/ast.h"
#include "nkicc/support/diagnostics.h"
#include "nkicc/support/source_manager.h"
#include "nkicc/trace/interpreter.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nkicc::trace {

/// What Interpreter::import_module asks for kernel files.
class ModuleLoader {
public:
  virtual ~ModuleLoader() = default;
  /// The kernel file or package for absolute module `name`, run on first import into a module
  /// registered beforehand (so that an import cycle sees it partially initialized); null when
  /// no file matches. `parent`: the loaded parent package of a dotted name (null for a
  /// top-level name); `importer`: the module running the import.
  virtual std::shared_ptr<ModuleObject> load(Interpreter &interp, std::string_view name, const ModuleObject *parent,
                                             const ModuleObject *importer) = 0;
  /// Where load() looked for `name` (`common.py or common/__init__.py in k/ and .`), or null.
  virtual std::shared_ptr<const std::string> searched(std::string_view name) const = 0;
  /// Whether a module's code is still running (an import cycle reached it).
  virtual bool initializing(const ModuleObject &module) const = 0;
};

/// Kernel files as Python modules, read from disk on import. Reads are sandboxed: only regular
/// `.py` files (no FIFOs or devices), within the size limit, under the allowed folders (the
/// description's folder, and each listed source's folder and package root).
class FileModuleLoader : public ModuleLoader {
public:
  /// `base_dir`: the description file's folder, as it is displayed ("" for the current one).
  FileModuleLoader(SourceManager &sources, DiagnosticEngine &diags, std::string base_dir);
  ~FileModuleLoader() override;

  /// Registers a source listed in the description, already parsed: `path` is the path it was
  /// read from (for inline code, its name under the description's folder).
  void add_source(std::string path, const python::Module &module, bool on_disk);
  /// Runs listed source k, or returns its module when an import already ran it.
  std::shared_ptr<ModuleObject> run_source(Interpreter &interp, std::size_t k);
  /// The module name listed source k runs as (`kernels.matmul`, `k`).
  std::string source_module_name(std::size_t k) const;
  /// One file of a registry entry (SPEC §7): its path as opened, its text already read into the
  /// SourceManager, the module name it runs as and the folder that name is relative to.
  struct EntryFile {
    std::string path;
    FileId text = kNoFile;
    std::string name;
    std::string root;
  };
  /// Registers a registry entry's files (the source first): each is found by its path as a
  /// listed source is, parsed on first import, and imports from any of them look in the roots
  /// of all of them (so a module found in another -I folder than the source is still its
  /// sibling). A file registered before keeps its module and name.
  void add_entry_files(const std::vector<EntryFile> &files);
  /// Runs entry file `path` (registered by add_entry_files) as its module, or returns the
  /// module an import already ran; `ast` is set to its parsed source. Null when its source has
  /// syntax errors (reported); throws TraceError when its code fails.
  std::shared_ptr<ModuleObject> run_entry_file(Interpreter &interp, const std::string &path,
                                               const python::Module *&ast);
  /// Every file an import read (listed sources excluded), in reading order.
  const std::vector<std::string> &files_read() const { return files_read_; }

  std::shared_ptr<ModuleObject> load(Interpreter &interp, std::string_view name, const ModuleObject *parent,
                                     const ModuleObject *importer) override;
  std::shared_ptr<const std::string> searched(std::string_view name) const override;
  bool initializing(const ModuleObject &module) const override;

  /// The module name of a file under a root (`a/b/c.py` under `.` -> `a.b.c`; `pkg/__init__.py`
  /// -> `pkg`), or empty when a part is not a Python identifier. Exposed for tests.
  static std::string module_name_under(std::string_view root, std::string_view file);

private:
  struct File {
    std::string path;                ///< as displayed
    std::string canonical;           ///< identity
    std::string name;                ///< the module name it runs as
    bool package = false;            ///< an `__init__.py`
    FileId text = kNoFile;           ///< an entry file's text, read by the driver; parsed on first run
    std::vector<std::string> search; ///< an entry file's extra import folders
    /// The folders its absolute imports look in (its own, its package root's, `search`), once
    /// worked out.
    std::optional<std::vector<std::string>> import_dirs;
    const python::Module *ast = nullptr;
    std::shared_ptr<ModuleObject> module;
  };
  /// The name and root folder of a file by Python's rules (see module_name_under).
  std::pair<std::string, std::string> name_and_root(const std::string &path) const;
  /// A file found for an import, or null; `searched` collects what was tried.
  File *find(std::string_view name, const std::vector<std::string> &dirs, std::vector<std::string> &tried,
             std::vector<std::string> &namespace_dirs);
  /// Registers a file by its canonical path (once).
  File &file_for(const std::string &path, const std::string &canonical, bool package);
  std::shared_ptr<ModuleObject> run(Interpreter &interp, File &file, const std::string &bound_name);
  bool allowed(const std::string &canonical) const;

  SourceManager &sources_;
  DiagnosticEngine &diags_;
  std::string base_dir_;
  std::vector<std::string> roots_;    ///< canonical allowed folders
  std::map<std::string, File> files_; ///< by canonical path
  std::vector<std::string> listed_;   ///< canonical path of listed source k
  std::vector<std::unique_ptr<python::Module>> parsed_;
  std::map<const ModuleObject *, std::vector<std::string>> package_dirs_; ///< a package's __path__
  std::set<const ModuleObject *> running_;
  std::map<std::string, std::shared_ptr<const std::string>, std::less<>> searched_;
  /// Searches that found nothing, by the module's last name and the folders searched (each
  /// after a NUL): what they tried, as searched() says it.
  std::unordered_map<std::string, std::shared_ptr<const std::string>> missing_;
  std::vector<std::string> files_read_;
};

} // namespace nkicc::trace
