// The internal-kernel registry (SPEC §7, seed 000 "The Internal Kernel Registry"): which NKI
// source and entry function implements each internal kernel `func_name`, and how an
// InternalNkiKernel op's operands, results and attrs marshal into that function's arguments
// (the InternalKernelConfig). Folders given with -I are searched before the installed
// share/nkicc/kernels. docs/registry.md is the user's description of the format.
//
// registry.json, in each folder (errors are located at the value, with its JSON pointer):
//   registry := {"nkicc_registry": 1, "kernels": {func_name: entry, ...}}
//   entry    := {"source": path, "modules"?: [path, ...], "package"?: folder, "entry": function name,
//                "args"?: [arg, ...], "kwargs"?: {parameter: arg, ...}, "results"?: positive int (1)}
//   arg      := {"operand": i} | {"operand_shape": i} | {"result": i} | {"result_shape": i}
//             | {"result_dim": [i, d]} | {"attr": name, "default"?: constant} | {"const": constant}
//             | {"dtype": name} | {"object": dotted name, "fields"?: {name: constant, ...}}
// Paths are relative; each is looked up along the search path, from its first folder up to the
// folder whose registry.json defines the entry (an earlier folder's file wins), so an -I folder
// holding only kernel files overrides the installed ones under the installed marshalling.
// Constants are converted as in the description file: an array is a list, {"tuple": [...]} a
// tuple, any other object a dict.
#pragma once

#include "nkicc/manifest/manifest.h"
#include "nkicc/support/diagnostics.h"
#include "nkicc/support/dtype.h"
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
    Operand,      ///< {"operand": i}: the op's operand i, an HBM tensor of its access shape
    OperandShape, ///< {"operand_shape": i}: operand i's access shape, a tuple of ints
    Result,       ///< {"result": i}: the op's result i, an output tensor the kernel writes
    ResultShape,  ///< {"result_shape": i}: result i's access shape, a tuple of ints
    ResultDim,    ///< {"result_dim": [i, d]}: dimension d of result i's access shape, an int
    Attr,         ///< {"attr": "name", "default"?: v}: the op attribute; absent and no default: not passed
    Const,        ///< {"const": v}: a constant
    DType,        ///< {"dtype": "bfloat16"}: the NKI dtype object (nl.bfloat16)
    Object,       ///< {"object": "Enum.MEMBER"} or {"object": "Class", "fields": {...}}: a value of
                  ///< the kernel's own module, called with `fields` as keyword arguments when given
  };
  Kind kind = Kind::Operand;
  std::size_t index = 0;           ///< Operand*, Result*: the operand or result index
  std::size_t dim = 0;             ///< ResultDim: the dimension
  std::string attr;                ///< Attr: the attribute name
  std::string object;              ///< Object: the dotted name
  std::optional<PyConstant> value; ///< Attr: the default; Const: the value
  DType dtype = DType::Float32;     ///< DType
  /// Object: the keyword arguments of the call, in document order; nullopt: no call.
  std::optional<std::vector<std::pair<std::string, PyConstant>>> fields;
  SourceLoc loc;       ///< the argument in its registry.json
  SourceLoc value_loc; ///< the value of its form ("object": here)

  /// The argument as one line of canonical text (`operand 0`, `attr 'block_size' default 512`,
  /// `object 'SkipMode' fields {...}`): what identifies it in a persistent key.
  std::string canonical_text() const;
};

/// One registry entry: an InternalKernelConfig.
struct RegistryEntry {
  std::string func_name;
  std::string source;  ///< the main source as nkicc opened it (its folder + `source`)
  std::string module;  ///< the module name its source runs as (`vision`, `pkg.reference.vision`)
  std::string entry;   ///< the function to call in that source
  std::string folder;  ///< the folder whose registry.json defines the entry
  std::string package; ///< the `package` folder as opened; empty when none
  /// Every file of the entry, as opened: the source, its `modules` in order, then the `.py`
  /// files of the package (sorted). Depfile inputs, and what the entry's identity hashes.
  std::vector<std::string> files;
  /// The same files by their names relative to the folder each was found in (`common.py`,
  /// `pkg/reference/vision.py`): how a key names them, whatever the install's location.
  std::vector<std::string> file_names;
  std::vector<RegistryArg> args; ///< positional, in order
  std::vector<std::pair<std::string, RegistryArg>> kwargs; ///< by keyword, in document order
  std::size_t results = 1;                                 ///< how many of the op's results it produces
  SourceLoc loc;                                           ///< the entry's func_name key in its registry.json
  SourceLoc source_loc;                                    ///< its `source` value
  SourceLoc entry_loc;                                     ///< its `entry` value

  /// Every argument, positional then keyword, with its parameter name (empty for a positional).
  std::vector<std::pair<std::string_view, const RegistryArg *>> all_args() const;

  /// The entry as canonical text, one field a line: func_name, module, each file by its
  /// name (file_names), entry, each argument, results.
  std::string canonical_text() const;
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
  /// Kernel files the driver read for entries (for depfiles), in reading order, each once.
  const std::vector<std::string> &sources_read() const { return sources_read_; }
  void note_source_read(std::string path);

private:
  std::vector<RegistryEntry> entries_;
  std::vector<std::string> files_;
  std::vector<std::string> sources_read_;
  std::map<std::string, std::size_t, std::less<>> index_; ///< func_name -> entries_ index
};

} // namespace nkicc
