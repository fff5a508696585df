#include "nkicc/manifest/kernel_file_call.h"

#include "nkicc/support/diagnostics.h"
#include "nkicc/support/dtype.h"
#include "nkicc/support/json_writer.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

namespace nkicc {

namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_ident_start(s[0]))
    return false;
  for (char c : s)
    if (!is_ident_char(c))
      return false;
  return true;
}

/// Reads one command-line value, as Python spells it, into JSON text of the description
/// format. A recursive-descent reader over a short string; nesting is capped so that a hostile
/// value cannot exhaust the stack.
class ValueReader {
public:
  ValueReader(std::string_view text, std::string_view option) : text_(text), option_(option) {}

  /// `tensors`: whether DTYPE[...] is allowed here (an argument, not a compile option).
  std::optional<std::string> read(bool tensors, bool scalars_only) {
    std::string out;
    skip_space();
    if (!value(out, tensors, scalars_only, 0))
      return std::nullopt;
    skip_space();
    if (pos_ < text_.size())
      return fail(fmt::format("unexpected {} after the value", quote_for_message(text_.substr(pos_))));
    return out;
  }

  const std::string &error() const { return error_; }

private:
  static constexpr int kMaxDepth = 32;

  std::nullopt_t fail(std::string message) {
    error_ = fmt::format("{} {}: {}", option_, quote_for_message(text_, 128), message);
    return std::nullopt;
  }
  bool failed(std::string message) {
    fail(std::move(message));
    return false;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  bool value(std::string &out, bool tensors, bool scalars_only, int depth) {
    if (depth > kMaxDepth)
      return failed(fmt::format("nested deeper than {} levels", kMaxDepth));
    if (pos_ >= text_.size())
      return failed("expected a value");
    char c = text_[pos_];
    if (c == '\'' || c == '"')
      return string(out);
    if (c == '(' || c == '[') {
      if (scalars_only)
        return failed("a compile option must be a scalar (a number, True, False, None or a quoted string)");
      return sequence(out, tensors, depth);
    }
    if (is_ident_start(c))
      return word(out, tensors);
    return number(out);
  }

  bool word(std::string &out, bool tensors) {
    std::size_t start = pos_;
    while (pos_ < text_.size() && is_ident_char(text_[pos_]))
      ++pos_;
    std::string_view w = text_.substr(start, pos_ - start);
    if (w == "True" || w == "true") {
      out += "true";
      return true;
    }
    if (w == "False" || w == "false") {
      out += "false";
      return true;
    }
    if (w == "None" || w == "null") {
      out += "null";
      return true;
    }
    if (at('[')) {
      if (!tensors)
        return failed("a tensor is only an argument (--arg, --kwarg), not a compile option");
      return tensor(out, w);
    }
    if (tensors && parse_dtype(w))
      return failed(fmt::format("a tensor needs its shape: {}[D0,D1,...]", w));
    std::string best = closest_match(w, dtype_names());
    if (tensors && !best.empty())
      return failed(fmt::format("unknown value {}; did you mean the dtype '{}'? (a tensor is {}[D0,D1,...])",
                                quote_for_message(w), best, best));
    return failed(fmt::format("unknown value {}; a string needs quotes ('{}'), a tensor is DTYPE[D0,D1,...]",
                              quote_for_message(w), escape_for_message(w)));
  }

  bool tensor(std::string &out, std::string_view dtype_word) {
    auto dtype = parse_dtype(dtype_word);
    if (!dtype) {
      std::string message = fmt::format("unknown dtype {}", quote_for_message(dtype_word));
      std::string best = closest_match(dtype_word, dtype_names());
      if (!best.empty())
        message += fmt::format("; did you mean '{}'?", best);
      else
        message += fmt::format(" (expected one of {})", fmt::join(dtype_names(), ", "));
      return failed(message);
    }
    ++pos_; // '['
    std::vector<std::int64_t> dims;
    for (;;) {
      skip_space();
      std::size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ']' && text_[pos_] != ' ')
        ++pos_;
      std::string_view digits = text_.substr(start, pos_ - start);
      std::int64_t d = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), d);
      if (digits.empty() && dims.empty() && at(']'))
        return failed("a tensor must have at least one dimension");
      if (ec != std::errc() || end != digits.data() + digits.size() || d <= 0)
        return failed(fmt::format("a dimension must be a positive integer, found {}", quote_for_message(digits)));
      dims.push_back(d);
      skip_space();
      if (at(',')) {
        ++pos_;
        continue;
      }
      if (at(']')) {
        ++pos_;
        break;
      }
      return failed("expected ',' or ']' in the shape");
    }
    out += fmt::format("{{\"shape\": [{}], \"dtype\": \"{}\"}}", fmt::join(dims, ", "), dtype_name(*dtype));
    return true;
  }

  bool string(std::string &out) {
    char quote = text_[pos_++];
    std::string decoded;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        char e = text_[pos_++];
        switch (e) {
        case 'n':
          decoded += '\n';
          break;
        case 't':
          decoded += '\t';
          break;
        case '\\':
        case '\'':
        case '"':
          decoded += e;
          break;
        default:
          return failed(fmt::format("unsupported escape \\{} in a string", escape_for_message(std::string(1, e))));
        }
        continue;
      }
      decoded += c;
    }
    if (pos_ >= text_.size())
      return failed("unterminated string");
    ++pos_;
    if (utf8_invalid(decoded))
      return failed("a string must be UTF-8");
    append_json_string(out, decoded, false);
    return true;
  }

  static bool utf8_invalid(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
      std::size_t n = utf8_sequence_length(s, i);
      if (n == 0)
        return true;
      i += n;
    }
    return false;
  }

  bool number(std::string &out) {
    std::size_t start = pos_;
    while (pos_ < text_.size() && std::string_view("+-.eE0123456789").find(text_[pos_]) != std::string_view::npos)
      ++pos_;
    std::string_view literal = text_.substr(start, pos_ - start);
    if (literal.empty())
      return failed(fmt::format("unexpected {}", quote_for_message(text_.substr(start, 1))));
    bool is_float = literal.find_first_of(".eE") != std::string_view::npos;
    if (!is_float) {
      std::int64_t i = 0;
      std::string_view digits = literal.starts_with('+') ? literal.substr(1) : literal;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
      if (ec == std::errc::result_out_of_range)
        return failed("an integer must fit in 64 bits (int64)");
      if (ec != std::errc() || end != digits.data() + digits.size())
        return failed(fmt::format("not a number: {}", quote_for_message(literal)));
      out += fmt::format("{}", i);
      return true;
    }
    std::string copy(literal);
    char *end = nullptr;
    errno = 0;
    double d = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || copy.find_first_of("0123456789") == std::string::npos)
      return failed(fmt::format("not a number: {}", quote_for_message(literal)));
    if (errno == ERANGE && std::isinf(d))
      return failed("the float is out of the double range");
    // The shortest text that reads back as the same double, always with a '.' or an exponent so
    // that the description reads it as a float again.
    std::string text = fmt::format("{}", d);
    if (text.find_first_of(".e") == std::string::npos)
      text += ".0";
    out += text;
    return true;
  }

  bool sequence(std::string &out, bool tensors, int depth) {
    char open = text_[pos_++];
    char close = open == '(' ? ')' : ']';
    std::vector<std::string> items;
    bool trailing_comma = false;
    skip_space();
    while (!at(close)) {
      std::string item;
      if (!value(item, tensors, false, depth + 1))
        return false;
      items.push_back(std::move(item));
      skip_space();
      trailing_comma = false;
      if (at(',')) {
        ++pos_;
        trailing_comma = true;
        skip_space();
        continue;
      }
      if (!at(close))
        return failed(fmt::format("expected ',' or '{}'", close));
    }
    ++pos_;
    // Python's `(x)` is x itself, not a one-element tuple.
    if (open == '(' && items.size() == 1 && !trailing_comma) {
      out += items.front();
      return true;
    }
    std::string list = fmt::format("[{}]", fmt::join(items, ", "));
    out += open == '(' ? "{\"tuple\": " + list + "}" : list;
    return true;
  }

  std::string_view text_;
  std::string_view option_;
  std::size_t pos_ = 0;
  std::string error_;
};

/// `NAME=VALUE` of --kwarg and --opt.
bool split_assignment(const std::string &text, std::string_view option, std::string &name, std::string &value,
                      std::string &error) {
  std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = fmt::format("{} {}: expected NAME=VALUE", option, quote_for_message(text, 128));
    return false;
  }
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  if (!is_identifier(name)) {
    error = fmt::format("{} {}: {} is not a Python identifier", option, quote_for_message(text, 128),
                        quote_for_message(name));
    return false;
  }
  return true;
}

std::optional<std::vector<std::int64_t>> read_grid(const std::string &text, std::string &error) {
  std::vector<std::int64_t> dims;
  std::string_view rest = text;
  for (;;) {
    std::size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    while (!part.empty() && part.front() == ' ')
      part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ')
      part.remove_suffix(1);
    std::int64_t d = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || d <= 0) {
      error = fmt::format("--grid {}: a grid dimension must be a positive integer, found {}",
                          quote_for_message(text, 128), quote_for_message(part));
      return std::nullopt;
    }
    dims.push_back(d);
    if (comma == std::string_view::npos)
      break;
    rest.remove_prefix(comma + 1);
  }
  if (dims.size() > 3) {
    error = fmt::format("--grid {}: an SPMD grid has 1 to 3 dimensions, found {}", quote_for_message(text, 128),
                        dims.size());
    return std::nullopt;
  }
  return dims;
}

} // namespace

std::optional<std::string> kernel_file_description(const KernelFileCall &call, std::string &error) {
  if (call.kernel.empty()) {
    error = "--kernel: the kernel name must not be empty";
    return std::nullopt;
  }
  std::string text = "{\"nkicc\": 1,\n \"sources\": [{\"path\": ";
  append_json_string(text, call.source_path, false);
  text += "}],\n \"calls\": [\n  {\"kernel\": ";
  append_json_string(text, call.kernel, false);
  text += ",\n   \"args\": [";
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    ValueReader reader(call.args[i], "--arg");
    auto value = reader.read(true, false);
    if (!value) {
      error = reader.error();
      return std::nullopt;
    }
    text += i ? ",\n     " : "\n     ";
    text += *value;
  }
  text += "]";
  // NAME=VALUE lists: kwargs take any value, opts only scalars.
  auto assignments = [&](const std::vector<std::string> &items, std::string_view option, std::string_view field,
                         bool tensors) {
    if (items.empty())
      return true;
    text += fmt::format(",\n   \"{}\": {{", field);
    std::set<std::string> names;
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string name, raw;
      if (!split_assignment(items[i], option, name, raw, error))
        return false;
      if (!names.insert(name).second) {
        error = fmt::format("{} {}: {} is given twice", option, quote_for_message(items[i], 128),
                            quote_for_message(name));
        return false;
      }
      ValueReader reader(raw, option);
      auto value = reader.read(tensors, !tensors);
      if (!value) {
        error = reader.error();
        return false;
      }
      text += i ? ",\n     " : "\n     ";
      append_json_string(text, name, false);
      text += ": " + *value;
    }
    text += "}";
    return true;
  };
  if (!assignments(call.kwargs, "--kwarg", "kwargs", true))
    return std::nullopt;
  if (!call.grid.empty()) {
    auto grid = read_grid(call.grid, error);
    if (!grid)
      return std::nullopt;
    text += fmt::format(",\n   \"grid\": [{}]", fmt::join(*grid, ", "));
  }
  if (!call.nc.empty()) {
    std::int64_t k = 0;
    auto [end, ec] = std::from_chars(call.nc.data(), call.nc.data() + call.nc.size(), k);
    if (ec != std::errc() || end != call.nc.data() + call.nc.size() || k <= 0) {
      error = fmt::format("--nc {}: expected a positive number of cores", quote_for_message(call.nc));
      return std::nullopt;
    }
    if (call.grid.empty()) {
      error = "--nc spreads the first grid dimension over physical cores and needs --grid";
      return std::nullopt;
    }
    text += fmt::format(",\n   \"nc\": {}", k);
  }
  if (!assignments(call.opts, "--opt", "opts", false))
    return std::nullopt;
  text += "}\n]}\n";
  return text;
}

} // namespace nkicc
