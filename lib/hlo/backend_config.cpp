#include "nkicc/hlo/hlo.h"

#include "hlo/config_cache.h"

#include "nkicc/bir/bir.h"
#include "nkicc/support/json_writer.h"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

namespace nkicc::hlo {

namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The backend_config schema version (seed 001 §4.3: KERNEL_VERSION, a module constant; SPEC
/// §9 fixes it at 1).
constexpr std::int64_t kKernelVersion = 1;

/// The fourteen keys in seed 001 §4.3's order; decode_config requires every one.
constexpr std::array<std::string_view, 14> kConfigKeys = {"kernel_version",
                                                          "func_name",
                                                          "grid",
                                                          "has_collectives",
                                                          "matmul_mac_count",
                                                          "platform_target",
                                                          "platform_target_is_fallback",
                                                          "opts",
                                                          "serialize_dims",
                                                          "serialize_ir_string",
                                                          "tiled",
                                                          "constant_values",
                                                          "kernel_return",
                                                          "result_is_sequence"};

void append_key(std::string &out, std::string_view key) {
  append_json_string(out, key, true);
  out += ": ";
}

void append_dims(std::string &out, const std::vector<std::int64_t> &dims) {
  out += '[';
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i)
      out += ", ";
    out += fmt::format("{}", dims[i]);
  }
  out += ']';
}

template <typename Range, typename Fn> void append_list(std::string &out, const Range &items, Fn &&each) {
  out += '[';
  bool first = true;
  for (const auto &item : items) {
    if (!first)
      out += ", ";
    first = false;
    each(item);
  }
  out += ']';
}

void append_named_values(std::string &out, const std::vector<std::pair<std::string, PyConstant>> &values) {
  out += '{';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i)
      out += ", ";
    append_key(out, values[i].first);
    append_python_json(out, values[i].second);
  }
  out += '}';
}

/// A JSON number literal's value (RapidJSON's syntax, NaN and Infinity included) as RapidJSON
/// would store it: int64, else uint64, else a correctly rounded double; nullopt when beyond the
/// double range. RapidJSON 1.1.0's own full-precision conversion reads out of bounds on some long
/// literals with a large negative exponent (`1.777...82e-0374`: decode-config crashed), so the
/// parser hands numbers over as text and std::from_chars converts them.
struct JsonNumber {
  enum class Kind { Int64, Uint64, Double } kind = Kind::Double;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0.0;
};

std::optional<JsonNumber> json_number(std::string_view text) {
  bool minus = !text.empty() && text[0] == '-';
  std::string_view body = minus ? text.substr(1) : text;
  if (body == "NaN")
    return JsonNumber{JsonNumber::Kind::Double, 0, 0, std::numeric_limits<double>::quiet_NaN()};
  if (body == "Inf" || body == "Infinity")
    return JsonNumber{JsonNumber::Kind::Double, 0, 0, (minus ? -1 : 1) * std::numeric_limits<double>::infinity()};
  const char *end = text.data() + text.size();
  if (text.find_first_of(".eE") == std::string_view::npos) {
    JsonNumber n;
    n.kind = JsonNumber::Kind::Int64;
    if (auto r = std::from_chars(text.data(), end, n.i); r.ec == std::errc() && r.ptr == end)
      return n;
    n.kind = JsonNumber::Kind::Uint64;
    if (auto r = std::from_chars(text.data(), end, n.u); !minus && r.ec == std::errc() && r.ptr == end)
      return n;
  }
  JsonNumber n;
  auto r = std::from_chars(text.data(), end, n.d);
  if (r.ec == std::errc() && r.ptr == end)
    return n;
  if (r.ec != std::errc::result_out_of_range)
    return std::nullopt;
  // Out of range: below the smallest subnormal is a signed zero (as RapidJSON and CPython say),
  // above the largest double an error. The literal's order of magnitude tells which.
  std::size_t e = body.find_first_of("eE");
  std::string_view mantissa = body.substr(0, e);
  std::size_t point = std::min(mantissa.find('.'), mantissa.size());
  std::size_t first = mantissa.find_first_of("123456789");
  long long magnitude = first == std::string_view::npos ? -1
                        : first < point                 ? static_cast<long long>(point - first)
                                                        : -static_cast<long long>(first - point);
  if (e != std::string_view::npos) {
    std::string_view exponent = body.substr(e + 1);
    bool exponent_minus = !exponent.empty() && exponent[0] == '-';
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+'))
      exponent.remove_prefix(1);
    long long value = 0;
    auto er = std::from_chars(exponent.data(), exponent.data() + exponent.size(), value);
    if (er.ec != std::errc())
      value = std::numeric_limits<int>::max(); // more digits than any double's exponent
    magnitude += exponent_minus ? -value : value;
  }
  if (magnitude > 0)
    return std::nullopt;
  return JsonNumber{JsonNumber::Kind::Double, 0, 0, minus ? -0.0 : 0.0};
}

/// Builds the Document from RapidJSON's SAX events, converting number literals with
/// json_number (kParseNumbersAsStringsFlag).
struct DocumentBuilder {
  rapidjson::Document &doc;
  bool number_out_of_range = false;

  bool Null() { return doc.Null(); }
  bool Bool(bool b) { return doc.Bool(b); }
  bool Int(int i) { return doc.Int(i); }
  bool Uint(unsigned u) { return doc.Uint(u); }
  bool Int64(std::int64_t i) { return doc.Int64(i); }
  bool Uint64(std::uint64_t u) { return doc.Uint64(u); }
  bool Double(double d) { return doc.Double(d); }
  bool RawNumber(const char *s, rapidjson::SizeType n, bool) {
    auto number = json_number(std::string_view(s, n));
    if (!number) {
      number_out_of_range = true;
      return false;
    }
    switch (number->kind) {
    case JsonNumber::Kind::Int64:
      return doc.Int64(number->i);
    case JsonNumber::Kind::Uint64:
      return doc.Uint64(number->u);
    case JsonNumber::Kind::Double:
      return doc.Double(number->d);
    }
    return false;
  }
  bool String(const char *s, rapidjson::SizeType n, bool copy) { return doc.String(s, n, copy); }
  bool StartObject() { return doc.StartObject(); }
  bool Key(const char *s, rapidjson::SizeType n, bool copy) { return doc.Key(s, n, copy); }
  bool EndObject(rapidjson::SizeType n) { return doc.EndObject(n); }
  bool StartArray() { return doc.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return doc.EndArray(n); }
};

/// Deep enough for any config nkicc writes; deeper input is refused before it can exhaust the
/// stack of the recursive conversion below.
constexpr int kMaxJsonDepth = 64;

std::optional<PyConstant> to_constant(const rapidjson::Value &v, int depth, std::string &error) {
  if (depth > kMaxJsonDepth) {
    error = fmt::format("malformed backend_config: JSON nested deeper than {} levels", kMaxJsonDepth);
    return std::nullopt;
  }
  if (v.IsNull())
    return PyConstant::none();
  if (v.IsBool())
    return PyConstant::boolean(v.GetBool());
  if (v.IsInt64())
    return PyConstant::integer(v.GetInt64());
  if (v.IsNumber()) {
    if (v.IsUint64()) {
      error = "malformed backend_config: an integer does not fit in 64 bits";
      return std::nullopt;
    }
    return PyConstant::floating(v.GetDouble());
  }
  if (v.IsString())
    return PyConstant::str(std::string(v.GetString(), v.GetStringLength()));
  if (v.IsArray()) {
    std::vector<PyConstant> items;
    items.reserve(v.Size());
    for (const auto &item : v.GetArray()) {
      auto c = to_constant(item, depth + 1, error);
      if (!c)
        return std::nullopt;
      items.push_back(std::move(*c));
    }
    return PyConstant::list(std::move(items));
  }
  std::vector<std::pair<std::string, PyConstant>> members;
  for (const auto &m : v.GetObject()) {
    auto c = to_constant(m.value, depth + 1, error);
    if (!c)
      return std::nullopt;
    members.emplace_back(std::string(m.name.GetString(), m.name.GetStringLength()), std::move(*c));
  }
  return PyConstant::make_dict(std::move(members));
}

} // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  Base64Encoder encoder(out, bytes.size());
  encoder.add(bytes);
  encoder.finish();
  return out;
}

namespace {

/// Encodes whole groups of three bytes: `n` must be a multiple of 3.
char *encode_groups(const unsigned char *p, std::size_t n, char *o) {
  for (std::size_t i = 0; i < n; i += 3, o += 4) {
    std::uint32_t v = (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
    o[0] = kAlphabet[(v >> 18) & 63];
    o[1] = kAlphabet[(v >> 12) & 63];
    o[2] = kAlphabet[(v >> 6) & 63];
    o[3] = kAlphabet[v & 63];
  }
  return o;
}

} // namespace

Base64Encoder::Base64Encoder(std::string &out, std::size_t total) : out_(out) { out_.reserve(out_.size() + (total + 2) / 3 * 4); }

void Base64Encoder::add(std::string_view bytes) {
  const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
  std::size_t n = bytes.size();
  while (carried_ > 0 && carried_ < 3 && n > 0) { // complete the group an earlier piece began
    carry_[carried_++] = *p++;
    --n;
  }
  std::size_t whole = n / 3 * 3;
  std::size_t at = out_.size();
  out_.resize(at + (carried_ == 3 ? 4 : 0) + whole / 3 * 4);
  char *o = out_.data() + at;
  if (carried_ == 3) {
    o = encode_groups(carry_, 3, o);
    carried_ = 0;
  }
  encode_groups(p, whole, o);
  for (std::size_t i = whole; i < n; ++i)
    carry_[carried_++] = p[i];
}

void Base64Encoder::finish() {
  if (carried_ == 0)
    return;
  std::uint32_t v = std::uint32_t{carry_[0]} << 16;
  if (carried_ > 1)
    v |= std::uint32_t{carry_[1]} << 8;
  out_ += kAlphabet[(v >> 18) & 63];
  out_ += kAlphabet[(v >> 12) & 63];
  out_ += carried_ > 1 ? kAlphabet[(v >> 6) & 63] : '=';
  out_ += '=';
  carried_ = 0;
}

std::optional<std::string> base64_decode(std::string_view text) {
  static const std::array<signed char, 256> table = [] {
    std::array<signed char, 256> t{};
    t.fill(-1);
    for (std::size_t i = 0; i < kAlphabet.size(); ++i)
      t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<signed char>(i);
    return t;
  }();
  if (text.size() % 4 != 0)
    return std::nullopt;
  std::size_t pad = 0;
  if (!text.empty() && text.back() == '=')
    pad = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (last && c == '=' && k >= 4 - pad) {
        v <<= 6;
        continue;
      }
      signed char d = table[static_cast<unsigned char>(c)];
      if (d < 0)
        return std::nullopt;
      v = (v << 6) | static_cast<std::uint32_t>(d);
    }
    out += static_cast<char>((v >> 16) & 0xFF);
    if (!last || pad < 2)
      out += static_cast<char>((v >> 8) & 0xFF);
    if (!last || pad < 1)
      out += static_cast<char>(v & 0xFF);
    // Python's b64decode accepts non-zero padding bits; a canonical encoder never writes them.
    if (last && ((pad == 1 && (v & 0xFF) != 0) || (pad == 2 && (v & 0xFFFF) != 0)))
      return std::nullopt;
  }
  return out;
}

std::string backend_config_json(const HloCall &call) { return backend_config_json(call, base64_encode(call.bir_blob)); }

std::string backend_config_json(const HloCall &call, std::string_view ir_base64) {
  ConfigJsonParts parts = backend_config_json_parts(call);
  std::string out;
  out.reserve(parts.head.size() + ir_base64.size() + parts.tail.size());
  out += parts.head;
  out += ir_base64;
  out += parts.tail;
  return out;
}

ConfigJsonParts backend_config_json_parts(const HloCall &call) {
  const trace::KernelTrace &t = *call.trace;
  const ir::Function &fn = t.function;
  ConfigJsonParts parts;
  std::string &out = parts.head;
  out += '{';
  append_key(out, "kernel_version");
  out += fmt::format("{}", kKernelVersion);
  out += ", ";
  append_key(out, "func_name");
  append_json_string(out, call.func_name, true);
  out += ", ";
  append_key(out, "grid");
  append_dims(out, call.grid);
  out += ", ";
  append_key(out, "has_collectives");
  out += fn.has_collectives ? "true" : "false";
  out += ", ";
  append_key(out, "matmul_mac_count");
  out += fmt::format("{}", fn.matmul_mac_count);
  out += ", ";
  append_key(out, "platform_target");
  append_json_string(out, call.platform_target, true);
  out += ", ";
  append_key(out, "platform_target_is_fallback");
  out += call.platform_target_is_fallback ? "true" : "false";
  out += ", ";
  append_key(out, "opts");
  append_named_values(out, call.opts);
  out += ", ";
  append_key(out, "serialize_dims");
  out += '{';
  append_key(out, "inputs");
  append_list(out, call.operands, [&](const HloOperand &o) { append_dims(out, o.shape); });
  out += ", ";
  append_key(out, "outputs");
  append_list(out, t.returns, [&](const trace::ReturnedTensor &r) { append_dims(out, r.shape); });
  out += "}, ";
  append_key(out, "serialize_ir_string");
  out += '"';
  std::string &rest = parts.tail;
  rest += "\", ";
  append_key(rest, "tiled");
  // Grid dimensions are positive, so there is more than one instance iff one exceeds 1.
  bool tiled = std::any_of(call.grid.begin(), call.grid.end(), [](std::int64_t d) { return d > 1; });
  rest += tiled ? "true" : "false";
  rest += ", ";
  append_key(rest, "constant_values");
  append_named_values(rest, t.constant_values);
  rest += ", ";
  append_key(rest, "kernel_return");
  append_list(rest, t.returns, [&](const trace::ReturnedTensor &r) {
    rest += '{';
    append_key(rest, "name");
    append_json_string(rest, r.name, true);
    rest += ", ";
    append_key(rest, "shape");
    append_dims(rest, r.shape);
    rest += ", ";
    append_key(rest, "dtype");
    append_json_string(rest, dtype_name(r.dtype), true);
    rest += '}';
  });
  rest += ", ";
  append_key(rest, "result_is_sequence");
  rest += t.result_is_sequence ? "true" : "false";
  rest += '}';
  return parts;
}

std::string backend_config(const HloCall &call) { return base64_encode(backend_config_json(call)); }

std::optional<std::string> decode_config(std::string_view base64_text, std::string &error, const TextOptions &options,
                                         std::string *func_name) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!base64_text.empty() && is_space(base64_text.front()))
    base64_text.remove_prefix(1);
  while (!base64_text.empty() && is_space(base64_text.back()))
    base64_text.remove_suffix(1);
  if (base64_text.empty()) {
    error = "empty backend_config";
    return std::nullopt;
  }
  auto json = base64_decode(base64_text);
  if (!json) {
    error = "malformed backend_config: not standard base64 with padding";
    return std::nullopt;
  }
  rapidjson::Document doc;
  rapidjson::ParseResult parsed;
  bool out_of_range = false;
  auto generate = [&](rapidjson::Document &d) {
    DocumentBuilder builder{d};
    rapidjson::MemoryStream bytes(json->data(), json->size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> input(bytes);
    rapidjson::Reader reader;
    parsed = reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag |
                          rapidjson::kParseNanAndInfFlag | rapidjson::kParseValidateEncodingFlag>(input, builder);
    out_of_range = builder.number_out_of_range;
    return !parsed.IsError();
  };
  doc.Populate(generate);
  if (parsed.IsError()) {
    error = fmt::format("malformed backend_config: invalid JSON at byte {}: {}", parsed.Offset(),
                        out_of_range ? rapidjson::GetParseError_En(rapidjson::kParseErrorNumberTooBig)
                                     : rapidjson::GetParseError_En(parsed.Code()));
    return std::nullopt;
  }
  if (!doc.IsObject()) {
    error = "malformed backend_config: the JSON is not an object";
    return std::nullopt;
  }
  for (std::string_view key : kConfigKeys) {
    if (!doc.HasMember(rapidjson::StringRef(key.data(), key.size()))) {
      error = fmt::format("malformed backend_config: no '{}' key", key);
      return std::nullopt;
    }
  }
  const rapidjson::Value &ir = doc["serialize_ir_string"];
  if (!ir.IsString()) {
    error = "malformed backend_config: 'serialize_ir_string' is not a string";
    return std::nullopt;
  }
  auto blob = base64_decode(std::string_view(ir.GetString(), ir.GetStringLength()));
  if (!blob) {
    error = "malformed backend_config: 'serialize_ir_string' is not standard base64 with padding";
    return std::nullopt;
  }
  std::string bir_error;
  auto kernel_text = bir::kernel_to_text(*blob, bir_error, options);
  if (!kernel_text) {
    error = "backend_config's serialize_ir_string: " + bir_error;
    return std::nullopt;
  }
  auto value = to_constant(doc, 0, error);
  if (!value)
    return std::nullopt;
  if (func_name) {
    const rapidjson::Value &f = doc["func_name"];
    *func_name = f.IsString() ? std::string(f.GetString(), f.GetStringLength()) : std::string();
  }
  std::string out = to_pretty_json(*value);
  out += "\n\n";
  out += *kernel_text;
  if (!out.empty() && out.back() != '\n')
    out += '\n';
  return out;
}

} // namespace nkicc::hlo
