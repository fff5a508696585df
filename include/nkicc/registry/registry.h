// The internal-kernel registry (SPEC §7, seed 000 "The Internal Kernel Registry"): which NKI
// source and entry function implements each internal kernel `func_name`, and how an
// InternalNkiKernel op's operands, results and attrs marshal into that function's arguments
// (the InternalKernelConfig). Folders given with -I are searched before the installed
// share/nkicc/kernels.
//
// registry.json, in each folder (errors are located at the value, with its JSON pointer):
//   registry := {"nkicc_registry": 1, "kernels": {func_name: entry, ...}}
//   entry    := {"source": path relative to the folder, "entry": function name,
//                "args"?: [arg, ...], "kwargs"?: {parameter: arg, ...}, "results"?: positive int (1)}
//   arg      := {"operand": i} | {"result_dim": [i, d]} | {"attr": name, "default"?: constant}
//             | {"const": constant}
// Constants are converted as in the description file: an array is a list, {"tuple": [...]} a
// tuple, any other object a dict.
#pragma once

#include "nkicc/manifest/manifest.h"
#include "nkicc/support/diagnostics.h"
#include "nkicc/support/py_constant.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nkicc {

/// Where one argument of the entry function comes from.
struct RegistryArg {
  enum class Kind {
    Operand,   ///< {"operand": i}: the op's operand i, a tensor of its access shape
    ResultDim, ///< {"result_dim": [i, d]}: dimension d of result i's access shape, an int
    Attr,      ///< {"attr": "name", "default"?: v}: the op attribute; absent and no default: not passed
    Const,     ///< {"const": v}: a constant
  };
  Kind kind = Kind::Operand;
  std::size_t index = 0;           ///< Operand: operand index; ResultDim: result index
  std::size_t dim = 0;             ///< ResultDim: the dimension
  std::string attr;                ///< Attr: the attribute name
  std::optional<PyConstant> value; ///< Attr: the default; Const: the value
  SourceLoc loc;                   ///< the argument in its registry.json
};

/// One registry entry: an InternalKernelConfig.
struct RegistryEntry {
  std::string func_name;
  std::string source;            ///< the source path as nkicc opened it (registry folder + `source`)
  std::string entry;             ///< the function to call in that source
  std::vector<RegistryArg> args; ///< positional, in order
  std::vector<std::pair<std::string, RegistryArg>> kwargs; ///< by keyword, in document order
  std::size_t results = 1;                                 ///< how many tensors the entry returns
  SourceLoc loc;                                           ///< the entry's func_name key in its registry.json
  SourceLoc source_loc;                                    ///< its `source` value
  SourceLoc entry_loc;                                     ///< its `entry` value
};

class Registry {
public:
  /// Reads `registry.json` of each folder in order (-I folders first, then the installed one);
  /// a func_name defined by an earlier folder wins. A folder without registry.json is skipped;
  /// a malformed registry.json is a located error (exit 1), and no registry.json in any folder
  /// is an error naming the folders (exit 3). Each registry.json read is registered with
  /// `sources` (so it appears in depfiles).
  bool load(const std::vector<std::string> &folders, SourceManager &sources, DiagnosticEngine &diags);

  const RegistryEntry *find(std::string_view func_name) const;
  /// Every func_name, sorted, for "did you mean" suggestions.
  std::vector<std::string> names() const;
  /// The registry.json files that were read, in order.
  const std::vector<std::string> &files() const { return files_; }
  /// Kernel sources the driver read for entries (for depfiles), in reading order.
  const std::vector<std::string> &sources_read() const { return sources_read_; }
  void note_source_read(std::string path) { sources_read_.push_back(std::move(path)); }

private:
  std::vector<RegistryEntry> entries_;
  std::vector<std::string> files_;
  std::vector<std::string> sources_read_;
  std::map<std::string, std::size_t, std::less<>> index_; ///< func_name -> entries_ index
};

} // namespace nkicc
