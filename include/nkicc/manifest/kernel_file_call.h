// The quick path for one kernel (SPEC §1): `nkicc trace kernel.py --kernel NAME --arg
// bfloat16[4096,4096] --arg 1e-5 --kwarg eps=1e-6 --grid 2,4` describes one call of a kernel in a
// kernel file. It is turned into the text of a kernel description, which then goes through the
// same loader and checks as a description file (and prints with `--emit=manifest`).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nkicc {

struct KernelFileCall {
  std::string source_path;         ///< the kernel file as given (relative to the current folder)
  std::string kernel;              ///< --kernel: the function to call
  std::vector<std::string> args;   ///< --arg, in order
  std::vector<std::string> kwargs; ///< --kwarg NAME=VALUE
  std::string grid;                ///< --grid D0[,D1[,D2]]; empty: no SPMD grid
  std::string nc;                  ///< --nc K; empty: not given
  std::vector<std::string> opts;   ///< --opt NAME=VALUE (scalars)
};

/// The description of the call as JSON text, laid out one argument per line so that a
/// diagnostic's caret points at the argument it is about. Nullopt with `error` set (a message
/// naming the option and its value, such as `--arg 'float32[128,x]': a dimension must be a
/// positive integer, found 'x'`) when a value cannot be read.
///
/// A value is a tensor `DTYPE[D0,D1,...]` (an NKI dtype name, positive dimensions) or a
/// constant written as in Python: an integer, a float (`1e-5`), `True`, `False`, `None`, a quoted
/// string (`'tanh'` or `"tanh"`), a tuple `(1, 2)`, or a list `[1, 2]` (NKI rejects a list
/// argument as not hashable, with its own message).
std::optional<std::string> kernel_file_description(const KernelFileCall &call, std::string &error);

} // namespace nkicc
