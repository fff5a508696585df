// The kernel description file (SPEC §2) as plain structs, and its loader.
#pragma once

#include "nkicc/manifest/json_document.h"
#include "nkicc/support/dtype.h"
#include "nkicc/support/py_constant.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace nkicc {

class TextSink;

inline constexpr std::int64_t kManifestVersion = 1;

struct TensorSpec {
  std::vector<std::int64_t> shape;
  /// The view the kernel sees (SPEC §7): `access_shape` when given, else `shape`.
  std::vector<std::int64_t> access_shape;
  bool has_access_shape = false;
  DType dtype = DType::Float32;
  std::string name; ///< optional parameter name for HLO; empty when not given
  /// An internal call's result: `"memory"`, "shared_hbm" or "private_hbm" (empty: not given).
  /// Where an output parameter bound to it ({"result": i} in the registry) lives (shared_hbm when
  /// not given), or what a returned tensor must be in. Not part of the per-run key (SPEC §7).
  std::string memory;
  SourceLoc loc;
};

/// A call argument: a tensor, or a Python constant.
struct Argument {
  std::variant<TensorSpec, PyConstant> value;
  SourceLoc loc;

  bool is_tensor() const { return std::holds_alternative<TensorSpec>(value); }
  const TensorSpec &tensor() const { return std::get<TensorSpec>(value); }
  const PyConstant &constant() const { return std::get<PyConstant>(value); }
};

/// A call of a kernel defined in `sources` (what `@nki.jit` would call).
struct ExternalCall {
  std::string kernel;
  SourceLoc kernel_loc;
  std::vector<Argument> args;
  std::vector<std::pair<std::string, Argument>> kwargs;
  std::vector<std::int64_t> grid; ///< empty: no SPMD grid
  SourceLoc grid_loc;
  std::int64_t nc = 1; ///< physical cores the first grid dimension spans
  SourceLoc nc_loc;
  std::vector<std::pair<std::string, PyConstant>> opts; ///< scalars, in document order
};

/// An InternalNkiKernel op resolved through the internal-kernel registry (SPEC §7).
struct InternalCall {
  std::string internal; ///< func_name in the registry
  SourceLoc internal_loc;
  std::string kernel_name; ///< defaults to `internal`
  std::string op;          ///< the macro op type; "ResizeNearest" adds out_shape to the key
  std::vector<TensorSpec> operands;
  std::vector<TensorSpec> results;
  PyConstant attrs = PyConstant::make_dict({}); ///< a Dict in document order
};

struct Call {
  /// A streamed read checks a call whose bytes repeat an earlier call's only once: the calls
  /// with the same bytes share this id (the pipeline reuses what it made of the first of them).
  /// kNoText for a call read otherwise, or past the read's bound on texts kept.
  static constexpr std::uint32_t kNoText = 0xffffffff;

  std::size_t index = 0;
  SourceLoc loc;
  std::variant<ExternalCall, InternalCall> body;
  std::uint32_t text = kNoText;

  bool is_external() const { return std::holds_alternative<ExternalCall>(body); }
  const ExternalCall &external() const { return std::get<ExternalCall>(body); }
  const InternalCall &internal() const { return std::get<InternalCall>(body); }
};

/// Moves each location of a call read at offset `from` to where the same bytes sit at `to`: the
/// text is the same, so every position in it moves by the same distance (a streamed read reuses
/// the call it checked for each later copy of its text). Every SourceLoc a Call holds is moved: a
/// new one goes there, and in the unit test that compares the result with the copy checked.
void move_call_locations(Call &call, std::uint32_t from, std::uint32_t to);

struct KernelSource {
  std::string name;          ///< the path as written, or the inline source's `name`
  std::string path;          ///< empty for inline code
  std::string resolved_path; ///< the path nkicc opened (relative to the description's folder)
  FileId file = kNoFile;
  SourceLoc loc;
};

struct Manifest {
  FileId file = kNoFile;
  std::string name;
  std::optional<std::string> target; ///< as written, validated
  SourceLoc target_loc;
  std::vector<KernelSource> sources;
  std::vector<Call> calls;
};

struct ManifestLoadOptions {
  /// The folder `sources[].path` is relative to: the description file's folder ("" for stdin: the
  /// current folder).
  std::string base_dir;
  /// The module name when the file has no `name`: the description file's stem.
  std::string default_name;
};

/// Parses and checks a description file already registered with `sources`; reads the kernel
/// sources it names into `sources` too. Reports every error it finds; empty when any was found.
std::optional<Manifest> load_manifest(SourceManager &sources, FileId file, const ManifestLoadOptions &options,
                                      DiagnosticEngine &diags);

/// The loaded description as canonical JSON (the `--emit=manifest` stage): fixed key order,
/// defaults filled in, two-space indentation, a final newline.
std::string manifest_to_json(const Manifest &manifest, const SourceManager &sources);
/// The same text written through a sink, one call at a time.
void write_manifest_json(TextSink &out, const Manifest &manifest, const SourceManager &sources);

} // namespace nkicc
