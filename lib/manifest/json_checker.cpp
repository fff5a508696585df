#include "manifest/json_checker.h"

#include "nkicc/support/dtype.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <cstdlib>

namespace nkicc {

namespace {

using Kind = JsonValue::Kind;

/// A number literal in a message is cut after this many characters.
constexpr std::size_t kShownDigits = 32;

} // namespace

std::string JsonPointer::str() const {
  std::string out = parent ? parent->str() : std::string();
  if (!parent)
    return out;
  out += '/';
  if (is_index)
    return out + std::to_string(index);
  // `~` and `/` in a key are escaped (RFC 6901); the key is user text, shown escaped and cut.
  for (char c : escape_for_message(key)) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string quote_list(const std::vector<std::string> &names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i)
      out += ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

std::string with_suggestion(std::string message, std::string_view word, const std::vector<std::string> &candidates) {
  std::string best = closest_match(word, candidates);
  if (!best.empty())
    message += fmt::format("; did you mean '{}'?", best);
  return message;
}

void JsonChecker::error(const JsonValue &v, const JsonPointer &ptr, std::string message) {
  std::string where = ptr.str();
  Diagnostic d;
  d.loc = v.loc();
  d.message = where.empty() ? std::move(message) : fmt::format("{}: {}", where, message);
  d.id = id_;
  report(std::move(d));
}

void JsonChecker::report(Diagnostic d) {
  failed_ = true;
  pending_.push_back(std::move(d));
}

bool JsonChecker::flush() {
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Diagnostic &a, const Diagnostic &b) { return a.loc.offset < b.loc.offset; });
  for (Diagnostic &d : pending_)
    diags_.report(std::move(d));
  pending_.clear();
  return !failed_;
}

bool JsonChecker::expect(const JsonValue &v, Kind kind, const JsonPointer &ptr, std::string_view what) {
  if (v.kind() == kind)
    return true;
  error(v, ptr, fmt::format("expected {}, found {}", what, json_kind_name(v.kind())));
  return false;
}

bool JsonChecker::check_fields(const JsonValue &obj, const JsonPointer &ptr, const std::vector<std::string> &accepted) {
  bool all_known = true;
  for (const auto &[key, value] : obj.members()) {
    bool known = false;
    for (const std::string &a : accepted)
      known = known || a == key.text();
    if (known)
      continue;
    all_known = false;
    std::string msg =
        with_suggestion(fmt::format("unknown field {}", quote_for_message(key.text())), key.text(), accepted);
    error(key, ptr, msg + fmt::format(" (accepted: {})", quote_list(accepted)));
  }
  return all_known;
}

std::optional<std::string> JsonChecker::string(const JsonValue &v, const JsonPointer &ptr) {
  if (!expect(v, Kind::String, ptr, "a string"))
    return std::nullopt;
  return std::string(v.text());
}

std::optional<std::int64_t> JsonChecker::integer(const JsonValue &v, const JsonPointer &ptr) {
  if (v.kind() != Kind::Number) {
    error(v, ptr, fmt::format("expected an integer, found {}", json_kind_name(v.kind())));
    return std::nullopt;
  }
  if (!v.is_integer_literal()) {
    // 1e0 is an integer's value, but JSON and Python both read it as a float.
    bool fraction = v.text().find('.') != std::string_view::npos;
    error(v, ptr,
          fraction ? std::string("expected an integer, found a fractional number")
                   : fmt::format("expected an integer, found {} (a number with an exponent)",
                                 escape_for_message(v.text(), kShownDigits)));
    return std::nullopt;
  }
  std::int64_t out = 0;
  auto [end, ec] = std::from_chars(v.text().data(), v.text().data() + v.text().size(), out);
  if (ec != std::errc() || end != v.text().data() + v.text().size()) {
    error(v, ptr, number_out_of_range_message(v.text()));
    return std::nullopt;
  }
  return out;
}

namespace {

bool is_dotted_name(std::string_view s) {
  if (s.empty())
    return false;
  bool start = true;
  for (char c : s) {
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (c == '.') {
      if (start)
        return false;
      start = true;
    } else if (letter || (digit && !start)) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

} // namespace

std::optional<std::optional<PyConstant>> JsonChecker::special_form(const JsonValue &v, const JsonPointer &ptr) {
  const auto &members = v.members();
  if (members.empty())
    return std::nullopt;
  std::string_view head = members[0].key.text();
  if (head == "float" && members.size() == 1) {
    // {"float": "inf" | "-inf" | "nan"}: the floats JSON numbers cannot say (a number is also
    // accepted, for symmetry).
    const JsonValue &f = members[0].value;
    JsonPointer p = pointer_append(ptr, "float");
    if (f.kind() == Kind::Number) {
      std::optional<PyConstant> c = constant(f, p);
      if (c && c->kind == PyConstant::Kind::Int)
        c = PyConstant::floating(static_cast<double>(c->i));
      return std::optional<std::optional<PyConstant>>(std::move(c));
    }
    std::string_view t = f.kind() == Kind::String ? f.text() : std::string_view();
    if (t == "inf" || t == "+inf" || t == "infinity")
      return std::optional<PyConstant>(PyConstant::floating(std::numeric_limits<double>::infinity()));
    if (t == "-inf" || t == "-infinity")
      return std::optional<PyConstant>(PyConstant::floating(-std::numeric_limits<double>::infinity()));
    if (t == "nan")
      return std::optional<PyConstant>(PyConstant::floating(std::numeric_limits<double>::quiet_NaN()));
    error(f, p, "expected \"inf\", \"-inf\", \"nan\" or a number for a float");
    return std::optional<std::optional<PyConstant>>(std::nullopt);
  }
  if (head == "dtype" && members.size() == 1) {
    // {"dtype": "float8_e5m2_x4"}: the NKI dtype object, as nl.float8_e5m2_x4 (a reference to
    // neuronxcc.nki.language's, which keys the caches by that spelling).
    const JsonValue &d = members[0].value;
    JsonPointer p = pointer_append(ptr, "dtype");
    std::optional<DType> dtype = d.kind() == Kind::String ? parse_dtype(d.text()) : std::nullopt;
    if (!dtype) {
      std::string text = d.kind() == Kind::String ? std::string(d.text()) : std::string();
      error(d, p,
            d.kind() == Kind::String
                ? with_suggestion(fmt::format("unknown dtype {}", quote_for_message(text)), text, dtype_names())
                : std::string("expected a dtype name such as \"bfloat16\" for a dtype value"));
      return std::optional<std::optional<PyConstant>>(std::nullopt);
    }
    std::string name(dtype_name(*dtype));
    return std::optional<PyConstant>(
        PyConstant::ref("neuronxcc.nki.language." + (name == "bool" ? std::string("bool_") : name)));
  }
  if ((head == "function" && members.size() == 1) || head == "object") {
    // {"function": "numpy.greater_equal"}, {"object": "NormType.NO_NORM"},
    // {"object": "FlashConfig", "fields": {...}}: names the kernel's module resolves.
    bool object = head == "object";
    const JsonValue *fields = nullptr;
    for (std::size_t i = 1; i < members.size(); ++i) {
      if (object && members[i].key.text() == "fields" && !fields) {
        fields = &members[i].value;
        continue;
      }
      error(members[i].value, pointer_append(ptr, members[i].key.text()),
            fmt::format("unknown member '{}' of an {{\"object\": ...}} value (it takes \"fields\")",
                        members[i].key.text()));
      return std::optional<std::optional<PyConstant>>(std::nullopt);
    }
    const JsonValue &name = members[0].value;
    JsonPointer p = pointer_append(ptr, head);
    if (name.kind() != Kind::String || !is_dotted_name(name.text())) {
      error(name, p,
            fmt::format("expected a dotted Python name such as \"{}\"",
                        object ? "NormType.NO_NORM" : "numpy.greater_equal"));
      return std::optional<std::optional<PyConstant>>(std::nullopt);
    }
    if (!fields)
      return std::optional<PyConstant>(PyConstant::ref(std::string(name.text())));
    JsonPointer fp = pointer_append(ptr, "fields");
    if (!expect(*fields, Kind::Object, fp, "an object of keyword arguments"))
      return std::optional<std::optional<PyConstant>>(std::nullopt);
    std::vector<std::pair<std::string, PyConstant>> entries;
    for (const auto &[key, value] : fields->members()) {
      auto c = constant(value, pointer_append(fp, key.text()));
      if (!c)
        return std::optional<std::optional<PyConstant>>(std::nullopt);
      entries.emplace_back(key.text(), std::move(*c));
    }
    return std::optional<PyConstant>(PyConstant::ref_call(std::string(name.text()), std::move(entries)));
  }
  return std::nullopt;
}

std::optional<PyConstant> JsonChecker::constant(const JsonValue &v, const JsonPointer &ptr) {
  switch (v.kind()) {
  case Kind::Null:
    return PyConstant::none();
  case Kind::Bool:
    return PyConstant::boolean(v.boolean());
  case Kind::String:
    return PyConstant::str(std::string(v.text()));
  case Kind::Number: {
    if (v.is_integer_literal()) {
      auto i = integer(v, ptr);
      if (!i)
        return std::nullopt;
      return PyConstant::integer(*i);
    }
    // The JSON reader has rejected literals beyond the double range (1e400: JSON has no
    // infinity, where Python's json module would read inf); 1e-400 is 0.0, as in Python
    // (strtod rounds correctly).
    double d = std::strtod(std::string(v.text()).c_str(), nullptr);
    if (std::isinf(d)) {
      // RapidJSON lets 9e308 through: its range check looks at the exponent only.
      error(v, ptr, number_out_of_range_message(v.text()));
      return std::nullopt;
    }
    return PyConstant::floating(d);
  }
  case Kind::Array: {
    std::vector<PyConstant> items;
    items.reserve(v.items().size());
    for (std::size_t i = 0; i < v.items().size(); ++i) {
      auto c = constant(v.items()[i], pointer_append(ptr, i));
      if (!c)
        return std::nullopt;
      items.push_back(std::move(*c));
    }
    return PyConstant::list(std::move(items));
  }
  case Kind::Object: {
    if (std::optional<std::optional<PyConstant>> form = special_form(v, ptr))
      return *form;
    if (v.members().size() == 1 && v.members()[0].key.text() == "tuple") {
      const JsonValue &arr = v.members()[0].value;
      JsonPointer p = pointer_append(ptr, "tuple");
      if (!expect(arr, Kind::Array, p, "an array of tuple items"))
        return std::nullopt;
      auto list = constant(arr, p);
      if (!list)
        return std::nullopt;
      return PyConstant::tuple(std::move(list->items));
    }
    std::vector<std::pair<std::string, PyConstant>> entries;
    entries.reserve(v.members().size());
    for (const auto &[key, value] : v.members()) {
      auto c = constant(value, pointer_append(ptr, key.text()));
      if (!c)
        return std::nullopt;
      entries.emplace_back(key.text(), std::move(*c));
    }
    return PyConstant::make_dict(std::move(entries));
  }
  }
  return std::nullopt;
}

} // namespace nkicc
