// Python's str()/repr() of constants, byte for byte as CPython 3.11 prints them. The per-run
// binary cache hashes this text (seed 000: sha256(str(sorted(key_components.items())))), so a
// single differing byte would make nkicc's keys disagree with the reference compiler's.
#pragma once

#include "nkicc/support/py_constant.h"

#include <string>
#include <string_view>

namespace nkicc {

/// Appends repr(value) to out.
void append_py_repr(std::string &out, const PyConstant &value);
std::string py_repr(const PyConstant &value);

/// repr() of a str holding UTF-8 text: quote choice, escapes and printable non-ASCII as CPython.
void append_py_str_repr(std::string &out, std::string_view utf8);

/// repr() of a float: the shortest round-trip digits, `1.0`, `1e-05`, `1e+16`, `inf`, `nan`.
void append_py_float_repr(std::string &out, double value);

/// Python's str.isprintable() for one code point (Unicode 14.0, as CPython 3.11).
bool py_is_printable(char32_t code_point);

} // namespace nkicc
