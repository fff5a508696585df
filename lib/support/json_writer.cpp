#include "nkicc/support/json_writer.h"

#include "nkicc/cache/py_repr.h"

#include <fmt/format.h>

#include <cmath>

namespace nkicc {

namespace {

/// Decodes one UTF-8 sequence at s[i] (the loader guarantees valid UTF-8) and advances i.
char32_t next_code_point(std::string_view s, std::size_t &i) {
  auto c = static_cast<unsigned char>(s[i++]);
  if (c < 0x80)
    return c;
  int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
  char32_t cp = c & (0x3F >> extra);
  for (int k = 0; k < extra && i < s.size(); ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i++]) & 0x3F);
  return cp;
}

void append_float(std::string &out, double f) {
  if (std::isnan(f))
    out += "NaN";
  else if (std::isinf(f))
    out += f > 0 ? "Infinity" : "-Infinity";
  else
    append_py_float_repr(out, f);
}

bool is_scalar(const PyConstant &v) {
  using K = PyConstant::Kind;
  return v.kind != K::Tuple && v.kind != K::List && v.kind != K::Dict && v.kind != K::Ref;
}

void newline(std::string &out, int depth) {
  out += '\n';
  out.append(static_cast<std::size_t>(2 * depth), ' ');
}

/// Writes a scalar (null, bool, number, string) and returns true; false for containers.
bool append_scalar(std::string &out, const PyConstant &v, bool ensure_ascii) {
  using K = PyConstant::Kind;
  switch (v.kind) {
  case K::None:
    out += "null";
    return true;
  case K::Bool:
    out += v.b ? "true" : "false";
    return true;
  case K::Int:
    out += fmt::format("{}", v.i);
    return true;
  case K::Float:
    append_float(out, v.f);
    return true;
  case K::Str:
    append_json_string(out, v.s, ensure_ascii);
    return true;
  default:
    return false;
  }
}

/// A named reference as the description file writes it: {"object": name, "fields"?: {...}}.
PyConstant ref_form(const PyConstant &v) {
  std::vector<std::pair<std::string, PyConstant>> e = {{"object", PyConstant::str(v.s)}};
  if (v.b)
    e.emplace_back("fields", PyConstant::make_dict(v.dict));
  return PyConstant::make_dict(std::move(e));
}

void pretty(std::string &out, const PyConstant &v, int depth) {
  using K = PyConstant::Kind;
  if (append_scalar(out, v, false))
    return;
  switch (v.kind) {
  case K::None:
  case K::Bool:
  case K::Int:
  case K::Float:
  case K::Str:
    return; // written by append_scalar
  case K::Tuple:
    out += "{\"tuple\": ";
    [[fallthrough]];
  case K::List: {
    bool flat = true;
    for (const PyConstant &item : v.items)
      flat = flat && is_scalar(item);
    out += '[';
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      if (i)
        out += flat ? ", " : ",";
      if (!flat)
        newline(out, depth + 1);
      pretty(out, v.items[i], depth + 1);
    }
    if (!flat && !v.items.empty())
      newline(out, depth);
    out += ']';
    if (v.kind == K::Tuple)
      out += '}';
    return;
  }
  case K::Ref:
    pretty(out, ref_form(v), depth);
    return;
  case K::Dict:
    out += '{';
    for (std::size_t i = 0; i < v.dict.size(); ++i) {
      if (i)
        out += ',';
      newline(out, depth + 1);
      append_json_string(out, v.dict[i].first, false);
      out += ": ";
      pretty(out, v.dict[i].second, depth + 1);
    }
    if (!v.dict.empty())
      newline(out, depth);
    out += '}';
    return;
  }
}

} // namespace

void append_json_string(std::string &out, std::string_view s, bool ensure_ascii) {
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t start = i;
    char32_t cp = next_code_point(s, i);
    switch (cp) {
    case '"':
      out += "\\\"";
      continue;
    case '\\':
      out += "\\\\";
      continue;
    case '\n':
      out += "\\n";
      continue;
    case '\r':
      out += "\\r";
      continue;
    case '\t':
      out += "\\t";
      continue;
    case '\b':
      out += "\\b";
      continue;
    case '\f':
      out += "\\f";
      continue;
    default:
      break;
    }
    // ensure_ascii escapes everything outside ' '..'~', DEL included.
    if (cp < 0x20 || (ensure_ascii && cp == 0x7F)) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    } else if (cp >= 0x80 && ensure_ascii) {
      if (cp >= 0x10000) {
        char32_t v = cp - 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", static_cast<unsigned>(0xD800 + (v >> 10)),
                           static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
      } else {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
      }
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  out += '"';
}

std::string to_pretty_json(const PyConstant &value) {
  std::string out;
  pretty(out, value, 0);
  return out;
}

void append_python_json(std::string &out, const PyConstant &v) {
  using K = PyConstant::Kind;
  if (append_scalar(out, v, true))
    return;
  switch (v.kind) {
  case K::None:
  case K::Bool:
  case K::Int:
  case K::Float:
  case K::Str:
    return; // written by append_scalar
  case K::Tuple:
  case K::List:
    out += '[';
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      if (i)
        out += ", ";
      append_python_json(out, v.items[i]);
    }
    out += ']';
    return;
  case K::Ref: // a value of the kernel's module: its repr, as text
    append_json_string(out, py_repr(v), true);
    return;
  case K::Dict:
    out += '{';
    for (std::size_t i = 0; i < v.dict.size(); ++i) {
      if (i)
        out += ", ";
      append_json_string(out, v.dict[i].first, true);
      out += ": ";
      append_python_json(out, v.dict[i].second);
    }
    out += '}';
    return;
  }
}

} // namespace nkicc
