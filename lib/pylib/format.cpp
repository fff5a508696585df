// Formatting: `format(v, spec)` (the format-spec mini-language), `str.format` fields and
// printf-style `%`, as CPython 3.11 formats int, float, bool and str.
#include "common.h"

#include "nkicc/cache/py_repr.h"
#include "nkicc/support/utf8.h"
#include "nkicc/trace/pylib.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nkicc::trace {

using namespace pylib;

// `'%d items' % n`: the printf-style formatting of str, for the common conversions.
std::string percent_format(Interpreter &interp, const std::string &fmt, const Value &args) {
  std::vector<Value> values;
  if (args.kind == K::Tuple)
    values = args.seq().items;
  else
    values.push_back(args);
  // `'%(name)s' % mapping` takes its values by key (any mapping but a tuple or str).
  bool mapping = args.kind == K::Dict || (args.kind == K::Object && interp.find_attr(args, "keys"));
  std::size_t next = 0;
  std::string out;
  for (std::size_t k = 0; k < fmt.size(); ++k) {
    if (fmt[k] != '%') {
      out += fmt[k];
      continue;
    }
    std::size_t j = k + 1;
    std::optional<Value> keyed;
    if (j < fmt.size() && fmt[j] == '(') {
      if (!mapping)
        raise_python("TypeError", "format requires a mapping");
      int depth = 1;
      std::size_t close = j + 1;
      for (; close < fmt.size() && depth; ++close)
        depth += fmt[close] == '(' ? 1 : fmt[close] == ')' ? -1 : 0;
      if (depth)
        raise_python("ValueError", "incomplete format key");
      keyed = interp.get_item(args, Value::str(fmt.substr(j + 1, close - j - 2)));
      j = close;
      k = j - 1;
    }
    while (j < fmt.size() && std::string_view("-+ #0123456789.").find(fmt[j]) != std::string_view::npos)
      ++j;
    if (j >= fmt.size())
      raise_python("ValueError", "incomplete format");
    char conv = fmt[j];
    std::string flags = fmt.substr(k + 1, j - k - 1);
    k = j;
    if (conv == '%') {
      out += '%';
      continue;
    }
    if (!keyed && next >= values.size())
      raise_python("TypeError", "not enough arguments for format string");
    const Value &v = keyed ? *keyed : values[next++];
    std::string_view f = flags;
    std::string align; // right-aligned by default; '-' left-aligns
    if (!f.empty() && f[0] == '-') {
      align = "<";
      f.remove_prefix(1);
    }
    // Text conversions align right unless '-' is given, and ignore the other flags.
    std::size_t width_at = std::min(f.find_first_not_of("0+ #"), f.size());
    std::string text_spec = (align.empty() ? std::string(">") : align) + std::string(f.substr(width_at));
    switch (conv) {
    case 's':
      out += interp.format(Value::str(str(v)), text_spec);
      break;
    case 'r':
      out += interp.format(Value::str(repr(v)), text_spec);
      break;
    case 'd':
    case 'i':
    case 'u':
      if (!v.is_number())
        raise_python("TypeError", "%" + std::string(1, conv) + " format: a real number is required, not " + tn(v));
      out += interp.format(v.kind == K::Float ? Value::integer(static_cast<std::int64_t>(v.f)) : v,
                           align + std::string(f) + "d");
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
      if (!v.is_number())
        raise_python("TypeError", "must be real number, not " + tn(v));
      out += interp.format(Value::floating(float_of(v)), align + std::string(f) + conv);
      break;
    case 'x':
    case 'X':
    case 'o':
      if (!is_intlike(v))
        raise_python("TypeError", "%" + std::string(1, conv) + " format: an integer is required, not " + tn(v));
      out += interp.format(v, align + std::string(f) + conv);
      break;
    case 'c':
      if (v.kind == K::Str) {
        if (code_point_count(v.str_text()) != 1)
          raise_python("TypeError", "%c requires int or char");
        out += interp.format(v, text_spec);
      } else {
        out += interp.format(v, align + std::string(f) + "c");
      }
      break;
    default:
      raise_python("ValueError", "unsupported format character '" + std::string(1, conv) + "'");
    }
  }
  if (!mapping && next < values.size())
    raise_python("TypeError", "not all arguments converted during string formatting");
  return out;
}

// ---- format() -----------------------------------------------------------------------------------

namespace {
struct FormatSpec {
  std::string fill = " ";
  char align = 0;
  char sign = 0;
  bool alternate = false;
  bool zero = false;
  std::int64_t width = -1;
  char grouping = 0;
  std::int64_t precision = -1;
  char type = 0;
};

bool is_align(char c) { return c == '<' || c == '>' || c == '=' || c == '^'; }

FormatSpec parse_spec(std::string_view spec, const Value &v) {
  FormatSpec out;
  std::size_t k = 0;
  std::size_t first_len = 1;
  if (!spec.empty()) {
    unsigned char c0 = static_cast<unsigned char>(spec[0]);
    first_len = c0 < 0x80 ? 1 : c0 < 0xE0 ? 2 : c0 < 0xF0 ? 3 : 4;
  }
  bool fill_specified = false;
  if (spec.size() > first_len && is_align(spec[first_len])) {
    fill_specified = true;
    out.fill = std::string(spec.substr(0, first_len));
    out.align = spec[first_len];
    k = first_len + 1;
  } else if (!spec.empty() && is_align(spec[0])) {
    out.align = spec[0];
    k = 1;
  }
  if (k < spec.size() && (spec[k] == '+' || spec[k] == '-' || spec[k] == ' '))
    out.sign = spec[k++];
  if (k < spec.size() && spec[k] == 'z')
    ++k;
  if (k < spec.size() && spec[k] == '#') {
    out.alternate = true;
    ++k;
  }
  if (k < spec.size() && spec[k] == '0') {
    out.zero = true;
    ++k;
  }
  auto digits = [&](std::int64_t &target) {
    std::size_t start = k;
    std::int64_t n = 0;
    while (k < spec.size() && spec[k] >= '0' && spec[k] <= '9') {
      n = n * 10 + (spec[k] - '0');
      if (n > 100'000'000)
        raise_python("ValueError", "Too many decimal digits in format string");
      ++k;
    }
    if (k > start)
      target = n;
    return k > start;
  };
  digits(out.width);
  if (k < spec.size() && (spec[k] == ',' || spec[k] == '_'))
    out.grouping = spec[k++];
  if (k < spec.size() && spec[k] == '.') {
    ++k;
    if (!digits(out.precision))
      raise_python("ValueError", "Format specifier missing precision");
  }
  if (k < spec.size())
    out.type = spec[k++];
  if (k < spec.size())
    raise_python("ValueError",
                 "Invalid format specifier '" + std::string(spec) + "' for object of type '" + tn(v) + "'");
  // A 0 before the width fills with zeros unless a fill is given, and pads after the sign when
  // no alignment is (CPython's parse_internal_render_format_spec; strings align left).
  if (out.zero) {
    if (!fill_specified)
      out.fill = "0";
    if (!out.align && v.kind != K::Str)
      out.align = '=';
  }
  return out;
}

std::string group_digits(const std::string &digits, char sep, std::size_t every) {
  std::string out;
  std::size_t n = digits.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (k && (n - k) % every == 0)
      out += sep;
    out += digits[k];
  }
  return out;
}

std::string pad(const FormatSpec &spec, const std::string &sign_prefix, const std::string &body, char default_align) {
  std::size_t len = code_point_count(sign_prefix) + code_point_count(body);
  if (spec.width < 0 || static_cast<std::size_t>(spec.width) <= len)
    return sign_prefix + body;
  std::size_t fill_count = static_cast<std::size_t>(spec.width) - len;
  std::string fill;
  auto fills = [&](std::size_t n) {
    std::string f;
    for (std::size_t k = 0; k < n; ++k)
      f += spec.fill;
    return f;
  };
  switch (spec.align ? spec.align : default_align) {
  case '<':
    return sign_prefix + body + fills(fill_count);
  case '^':
    return fills(fill_count / 2) + sign_prefix + body + fills(fill_count - fill_count / 2);
  case '=':
    return sign_prefix + fills(fill_count) + body;
  default:
    return fills(fill_count) + sign_prefix + body;
  }
}

std::string sign_of(bool negative, char sign) {
  if (negative)
    return "-";
  if (sign == '+')
    return "+";
  if (sign == ' ')
    return " ";
  return "";
}

std::string format_float(double x, FormatSpec spec, const Value &original) {
  char type = spec.type;
  if (type && std::string_view("eEfFgG%n").find(type) == std::string_view::npos)
    raise_python("ValueError",
                 "Unknown format code '" + std::string(1, type) + "' for object of type '" + tn(original) + "'");
  if (spec.precision > 1000)
    raise_python("ValueError", "precision too big");
  bool negative = std::signbit(x) && !std::isnan(x);
  double a = std::fabs(x);
  std::string body;
  if (type == '%')
    a *= 100.0;
  if (std::isnan(a) || std::isinf(a)) {
    body = std::isnan(a) ? "nan" : "inf";
    if (type == 'E' || type == 'F' || type == 'G')
      for (char &c : body)
        c = static_cast<char>(c - 32);
    if (type == '%')
      body += '%';
  } else if (!type && spec.precision < 0) {
    append_py_float_repr(body, a);
  } else {
    char conv = type ? type : 'g';
    if (conv == '%')
      conv = 'f';
    if (conv == 'n')
      conv = 'g';
    int precision = static_cast<int>(spec.precision < 0 ? 6 : spec.precision);
    if ((conv == 'g' || conv == 'G') && precision == 0)
      precision = 1;
    char fmt[8] = "%";
    std::size_t f = 1;
    if (spec.alternate)
      fmt[f++] = '#';
    fmt[f++] = '.';
    fmt[f++] = '*';
    fmt[f++] = conv;
    fmt[f] = 0;
    int n = std::snprintf(nullptr, 0, fmt, precision, a);
    body.resize(static_cast<std::size_t>(n) + 1);
    std::snprintf(body.data(), body.size(), fmt, precision, a);
    body.resize(static_cast<std::size_t>(n));
    if (!type && body.find_first_of(".e") == std::string::npos)
      body += ".0";
    if (type == '%')
      body += '%';
  }
  if (spec.grouping) {
    std::size_t int_end = body.find_first_not_of("0123456789");
    if (int_end == std::string::npos)
      int_end = body.size();
    body = group_digits(body.substr(0, int_end), spec.grouping, 3) + body.substr(int_end);
  }
  return pad(spec, sign_of(negative, spec.sign), body, '>');
}

std::string format_int(std::int64_t x, const FormatSpec &spec, const Value &original) {
  char type = spec.type;
  if (type && std::string_view("eEfFgG%").find(type) != std::string_view::npos)
    return format_float(static_cast<double>(x), spec, original);
  if (type && std::string_view("dnxXobc").find(type) == std::string_view::npos)
    raise_python("ValueError",
                 "Unknown format code '" + std::string(1, type) + "' for object of type '" + tn(original) + "'");
  if (spec.precision >= 0)
    raise_python("ValueError", "Precision not allowed in integer format specifier");
  if (spec.grouping == ',' && type && type != 'd')
    raise_python("ValueError", "Cannot specify ',' with '" + std::string(1, type) + "'.");
  std::uint64_t m = x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x);
  if (type == 'c') {
    std::string body;
    if (m > 0x10FFFF || x < 0)
      raise_python("OverflowError", "%c arg not in range(0x110000)");
    append_utf8(body, static_cast<char32_t>(m));
    return pad(spec, "", body, '<');
  }
  unsigned base = type == 'x' || type == 'X' ? 16 : type == 'o' ? 8 : type == 'b' ? 2 : 10;
  std::string digits;
  do {
    unsigned d = static_cast<unsigned>(m % base);
    digits += static_cast<char>(d < 10 ? '0' + d : (type == 'X' ? 'A' : 'a') + d - 10);
    m /= base;
  } while (m);
  std::reverse(digits.begin(), digits.end());
  if (spec.grouping)
    digits = group_digits(digits, spec.grouping, base == 10 ? 3 : 4);
  std::string prefix = sign_of(x < 0, spec.sign);
  if (spec.alternate && base != 10)
    prefix += type == 'X' ? "0X" : type == 'x' ? "0x" : type == 'o' ? "0o" : "0b";
  return pad(spec, prefix, digits, '>');
}

std::string format_str(const std::string &s, const FormatSpec &spec, const Value &original) {
  if (spec.type && spec.type != 's')
    raise_python("ValueError",
                 "Unknown format code '" + std::string(1, spec.type) + "' for object of type '" + tn(original) + "'");
  if (spec.sign)
    raise_python("ValueError", "Sign not allowed in string format specifier");
  if (spec.alternate)
    raise_python("ValueError", "Alternate form (#) not allowed in string format specifier");
  if (spec.align == '=')
    raise_python("ValueError", "'=' alignment not allowed in string format specifier");
  if (spec.grouping)
    raise_python("ValueError", std::string("Cannot specify '") + spec.grouping + "' with 's'.");
  std::string body = s;
  if (spec.precision >= 0 && code_point_count(s) > static_cast<std::size_t>(spec.precision)) {
    std::vector<std::size_t> offsets = code_point_offsets(s);
    body = s.substr(0, offsets[static_cast<std::size_t>(spec.precision)]);
  }
  return pad(spec, "", body, '<');
}
} // namespace

std::string Interpreter::format(const Value &v, std::string_view spec) {
  switch (v.kind) {
  case K::Int:
  case K::Bool: {
    if (spec.empty())
      return str(v);
    FormatSpec parsed = parse_spec(spec, v);
    check_length(static_cast<std::uint64_t>(std::max<std::int64_t>(parsed.width, 0)));
    return format_int(int_of(v), parsed, v);
  }
  case K::Float: {
    if (spec.empty())
      return str(v);
    FormatSpec parsed = parse_spec(spec, v);
    check_length(static_cast<std::uint64_t>(std::max<std::int64_t>(parsed.width, 0)));
    return format_float(v.f, parsed, v);
  }
  case K::Str: {
    if (spec.empty())
      return v.str_text();
    FormatSpec parsed = parse_spec(spec, v);
    check_length(static_cast<std::uint64_t>(std::max<std::int64_t>(parsed.width, 0)));
    return format_str(v.str_text(), parsed, v);
  }
  case K::Object: {
    // A value with its own __format__ (a NumPy scalar, a class instance) formats itself.
    if (std::optional<Value> method = find_attr(v, "__format__")) {
      CallArgs args;
      args.positional.push_back(Value::str(std::string(spec)));
      Value out = call(*method, args);
      if (out.kind != K::Str)
        raise_python("TypeError", "__format__ must return a str, not " + tn(out));
      return out.str_text();
    }
    break;
  }
  default:
    break;
  }
  // object.__format__: str(v), and only with an empty spec.
  if (spec.empty())
    return str(v);
  raise_python("TypeError", "unsupported format string passed to " + tn(v) + ".__format__");
}

namespace pylib {

namespace {
/// The numbering of replacement fields, shared by a format string and its nested specs.
struct FieldNumbering {
  std::size_t next = 0;
  bool manual = false, automatic = false;
};

std::string format_fields(Interpreter &interp, std::string_view fmt, const std::vector<Value> &positional,
                          const std::function<const Value *(std::string_view)> &keyword, int depth,
                          FieldNumbering &numbering) {
  if (depth > 2)
    raise_python("ValueError", "Max string recursion exceeded");
  std::string out;
  std::size_t &auto_index = numbering.next;
  bool &manual = numbering.manual, &automatic = numbering.automatic;
  for (std::size_t k = 0; k < fmt.size(); ++k) {
    char c = fmt[k];
    if (c == '}') {
      if (k + 1 < fmt.size() && fmt[k + 1] == '}') {
        out += '}';
        ++k;
        continue;
      }
      raise_python("ValueError", "Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (k + 1 < fmt.size() && fmt[k + 1] == '{') {
      out += '{';
      ++k;
      continue;
    }
    // The field runs to the matching '}': its format spec may hold nested fields.
    std::size_t close = k + 1;
    int nesting = 1;
    bool in_index = false;
    for (; close < fmt.size(); ++close) {
      char d = fmt[close];
      if (in_index) {
        in_index = d != ']';
        continue;
      }
      if (d == '[')
        in_index = true;
      else if (d == '{')
        ++nesting;
      else if (d == '}' && --nesting == 0)
        break;
    }
    if (close >= fmt.size())
      raise_python("ValueError", nesting > 1 ? "unmatched '{' in format spec" : "expected '}' before end of string");
    std::string_view field = fmt.substr(k + 1, close - k - 1);
    k = close;
    // field_name ["!" conversion] [":" format_spec]; the name ends at the first '!' or ':'
    // outside an index.
    std::size_t name_end = 0;
    for (bool idx = false; name_end < field.size(); ++name_end) {
      char d = field[name_end];
      if (idx)
        idx = d != ']';
      else if (d == '[')
        idx = true;
      else if (d == '!' || d == ':')
        break;
    }
    std::string_view name = field.substr(0, name_end), rest = field.substr(name_end);
    char conversion = 0;
    if (!rest.empty() && rest[0] == '!') {
      if (rest.size() < 2 || (rest.size() > 2 && rest[2] != ':'))
        raise_python("ValueError", "expected ':' after conversion specifier");
      conversion = rest[1];
      rest.remove_prefix(2);
    }
    // arg_name, then .attribute and [index] parts; the field takes its number before the
    // fields nested in its spec do ('{:>{}}'.format('x', 4)).
    std::size_t first_end = name.find_first_of(".[");
    std::string_view arg_name = name.substr(0, first_end);
    Value v;
    if (arg_name.empty()) {
      if (manual)
        raise_python("ValueError", "cannot switch from manual field specification to automatic field numbering");
      automatic = true;
      if (auto_index >= positional.size())
        raise_python("IndexError",
                     "Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
      v = positional[auto_index++];
    } else if (std::all_of(arg_name.begin(), arg_name.end(), [](char d) { return d >= '0' && d <= '9'; })) {
      if (automatic)
        raise_python("ValueError", "cannot switch from automatic field numbering to manual field specification");
      manual = true;
      std::size_t index = arg_name.size() > 18 ? std::string::npos : std::stoull(std::string(arg_name));
      if (index >= positional.size())
        raise_python("IndexError",
                     "Replacement index " + std::string(arg_name) + " out of range for positional args tuple");
      v = positional[index];
    } else if (const Value *kw = keyword(arg_name)) {
      v = *kw;
    } else {
      raise_python("KeyError", "'" + std::string(arg_name) + "'");
    }
    for (std::size_t at = first_end; at != std::string_view::npos && at < name.size();) {
      if (name[at] == '.') {
        std::size_t end = name.find_first_of(".[", at + 1);
        std::string_view attr = name.substr(at + 1, end == std::string_view::npos ? end : end - at - 1);
        if (attr.empty())
          raise_python("ValueError", "Empty attribute in format string");
        v = interp.get_attr(v, attr);
        at = end;
      } else if (name[at] == '[') {
        std::size_t end = name.find(']', at);
        if (end == std::string_view::npos)
          raise_python("ValueError", "Missing ']' in format string");
        std::string_view key = name.substr(at + 1, end - at - 1);
        if (key.empty())
          raise_python("ValueError", "Empty attribute in format string");
        bool digits = std::all_of(key.begin(), key.end(), [](char d) { return d >= '0' && d <= '9'; });
        v = interp.get_item(v, digits && key.size() <= 18 ? Value::integer(std::stoll(std::string(key)))
                                                          : Value::str(std::string(key)));
        at = end + 1;
        if (at < name.size() && name[at] != '.' && name[at] != '[')
          raise_python("ValueError", "Only '.' or '[' may follow ']' in format field specifier");
      } else {
        break;
      }
    }
    if (conversion == 'r')
      v = Value::str(repr(v));
    else if (conversion == 's')
      v = Value::str(str(v));
    else if (conversion == 'a')
      v = Value::str(ascii_repr(repr(v)));
    else if (conversion)
      raise_python("ValueError", std::string("Unknown conversion specifier ") + conversion);
    std::string spec;
    if (!rest.empty())
      spec = format_fields(interp, rest.substr(1), positional, keyword, depth + 1, numbering);
    out += interp.format(v, spec);
  }
  return out;
}
} // namespace

std::string str_format(Interpreter &interp, std::string_view fmt, const std::vector<Value> &positional,
                       const std::function<const Value *(std::string_view)> &keyword, int depth) {
  FieldNumbering numbering;
  return format_fields(interp, fmt, positional, keyword, depth, numbering);
}

std::string ascii_repr(const std::string &text) {
  std::string out;
  for (std::size_t k = 0; k < text.size();) {
    auto c0 = static_cast<unsigned char>(text[k]);
    if (c0 < 0x80) {
      out += text[k++];
      continue;
    }
    std::size_t len = c0 < 0xE0 ? 2 : c0 < 0xF0 ? 3 : 4;
    char32_t cp = len == 2 ? c0 & 0x1F : len == 3 ? c0 & 0x0F : c0 & 0x07;
    for (std::size_t j = 1; j < len && k + j < text.size(); ++j)
      cp = (cp << 6) | (static_cast<unsigned char>(text[k + j]) & 0x3F);
    char buf[16];
    if (cp <= 0xFF)
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
    else if (cp <= 0xFFFF)
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    else
      std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(cp));
    out += buf;
    k += len;
  }
  return out;
}

} // namespace pylib

} // namespace nkicc::trace
