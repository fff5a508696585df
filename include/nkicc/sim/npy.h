// NumPy's .npy format (numpy.lib.format): the arrays `nkicc simulate` reads and writes.
//
//   npy     := magic version header_len header data
//   magic   := "\x93NUMPY"
//   version := major minor          (1.0: 2-byte header_len; 2.0 and 3.0: 4-byte; 3.0: UTF-8 header)
//   header  := a Python dict literal {'descr': <str>, 'fortran_order': <bool>, 'shape': <tuple>},
//              padded with spaces and ended by '\n' so that data starts 64-byte aligned
//   data    := the elements in C (or Fortran) order, raw
//
// Element types are named by their descr: `<f4`, `<f2`, `|i1`, `<u4`, `|b1`, ... ml_dtypes
// arrays (bfloat16, the float8 types) carry a void descr of their size, `<V2` / `|V1`, as
// numpy.save writes them; a descr of `bfloat16` (some writers name it) is read too.
#pragma once

#include "nkicc/support/dtype.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc::sim {

struct NpyArray {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
  std::string_view data; ///< the element bytes, a view into the parsed buffer
};

/// Parses a whole .npy file. Nullopt with `error` set to a lowercase reason (`not a .npy file
/// (no \x93NUMPY magic)`, `its header has no 'shape'`, `it holds 24 bytes of data, but shape
/// [2, 4] of '<f4' needs 32`).
std::optional<NpyArray> parse_npy(std::string_view bytes, std::string &error);

/// A .npy file (format 1.0, or 2.0 when the header needs it) in C order.
std::string write_npy(std::string_view descr, std::span<const std::int64_t> shape, std::string_view data);

/// The descr nkicc writes for a dtype: `<f4`, `<f2`, `|i1`, ..., `<V2` for bfloat16 and `|V1`
/// for the float8 types (ml_dtypes' encodings); tfloat32 as `<f4`.
std::string_view npy_descr(DType dtype);

/// The shape as NumPy prints it in a header: `(2, 3)`, `(5,)`, `()`.
std::string npy_shape_text(std::span<const std::int64_t> shape);

} // namespace nkicc::sim
