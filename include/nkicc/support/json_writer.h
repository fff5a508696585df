// JSON text from Python constants: the canonical pretty form of nkicc's own JSON outputs, and
// Python's `json.dumps` defaults byte for byte (the backend_config is encoded that way).
#pragma once

#include "nkicc/support/py_constant.h"

#include <string>
#include <string_view>

namespace nkicc {

/// A JSON string literal; `ensure_ascii` escapes every non-ASCII code point as `\uXXXX`
/// (surrogate pairs above the BMP), as Python's json module does by default.
void append_json_string(std::string &out, std::string_view utf8, bool ensure_ascii);

/// Canonical pretty JSON: two-space indentation, objects one member per line, arrays of
/// scalars on one line, a tuple as {"tuple": [...]} (the description file's own spelling),
/// non-ASCII kept as UTF-8. No trailing newline.
std::string to_pretty_json(const PyConstant &value);

/// `json.dumps(value)` with Python's defaults: separators `, ` and `: `, ensure_ascii, floats as
/// repr, `Infinity`/`NaN`, tuples as arrays.
void append_python_json(std::string &out, const PyConstant &value);

} // namespace nkicc
