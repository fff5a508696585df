// `nkicc simulate`: executes a BIR kernel on the CPU (SPEC §12; seed 001's SimulateKernel
// without Python or the SDK). The executor reads only what lib/bir decodes from the blob, so a
// kernel that simulates correctly proves the blob carries everything it needs at run time.
//
// Structure (XLA's HloEvaluator): one visitor per opcode (lib/sim/executor.cpp) over the
// decoded instructions, and one table of op semantics (lib/sim/op_table.cpp: ALU ops,
// activation functions, reductions, with the hardware choices they make), so adding an opcode
// or an op name is one local change.
#pragma once

#include "nkicc/bir/bir.h"
#include "nkicc/sim/npy.h"
#include "nkicc/sim/random_range.h"
#include "nkicc/support/diagnostics.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nkicc::sim {

/// A host array: a kernel input or output, its elements in C order, each already rounded to
/// `dtype` (numeric.h).
struct HostArray {
  std::vector<std::int64_t> shape;
  DType dtype = DType::Float32;
  std::vector<double> values;
};

/// A kernel's input from a .npy file: the element type must be the parameter's, or float32 for
/// a narrower float parameter (bfloat16, float16, tfloat32, float8), rounded on load; the
/// ml_dtypes encodings (`<V2`, `bfloat16`, `|V1`) are read for bfloat16 and float8 parameters.
/// Nullopt with `error` saying what was found and what was expected.
std::optional<HostArray> array_from_npy(const NpyArray &npy, std::span<const std::int64_t> shape, DType dtype,
                                        std::string &error);
/// The .npy bytes of an array, in its own dtype (npy_descr()).
std::string npy_from_array(const HostArray &array);

/// Deterministic inputs for `--random-inputs=SEED`: a splitmix64 stream keyed by the seed, the
/// call and the parameter's position, so every input is reproducible on its own. Floats are
/// uniform in [-1, 1) rounded to the dtype; signed integers in [-8, 8), unsigned in [0, 16), bools
/// 0 or 1. With a `range` (which random_range_mismatch() accepts for `dtype`), integers are
/// uniform in [low, high) and floats uniform in [low, high) rounded to the dtype (the rounding may
/// reach `high`); the stream is the same, so a range changes no other input.
HostArray random_array(std::span<const std::int64_t> shape, DType dtype, std::uint64_t seed, std::size_t call,
                       std::size_t param, const RandomRange *range = nullptr);

struct SimulateOptions {
  bool check_nan = false; ///< report a NaN an instruction makes from finite inputs
};

/// A finding of a run, turned into a diagnostic by the driver.
struct SimMessage {
  Severity severity = Severity::Warning;
  std::string message;
  std::string id;
};

struct KernelRun {
  bool ok = false;
  std::vector<HostArray> outputs; ///< in output_names order
  std::vector<SimMessage> messages;
};

/// Executes a decoded kernel over `inputs` (in input_names order, shapes and dtypes checked by
/// the caller), every SPMD instance of its grid in row-major order with the program ids bound.
/// Shared HBM persists across instances; tiles and private HBM start unwritten in each.
KernelRun run_kernel(const bir::KernelData &kernel, std::span<const HostArray> inputs, const SimulateOptions &options);

} // namespace nkicc::sim
