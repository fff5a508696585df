// Expected strings are CPython 3.11.7 output, pasted verbatim; the data-driven tests at the end
// check test/unit/data/py_repr_cases.txt, written by scripts/gen_py_repr_cases.py.
#include "nkicc/cache/py_repr.h"

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include <bit>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using nkicc::PyConstant;

namespace {

std::string str_repr(std::string_view utf8) {
  std::string out;
  nkicc::append_py_str_repr(out, utf8);
  return out;
}

std::string float_repr(double value) {
  std::string out;
  nkicc::append_py_float_repr(out, value);
  return out;
}

PyConstant s(const char *text) { return PyConstant::str(text); }
PyConstant i(std::int64_t value) { return PyConstant::integer(value); }

} // namespace

TEST_CASE("py_repr: str quote choice", "[cache][py_repr]") {
  CHECK(str_repr("") == "''");
  CHECK(str_repr("abc") == "'abc'");
  CHECK(str_repr("it's") == "\"it's\"");
  CHECK(str_repr("say \"hi\"") == "'say \"hi\"'");
  // Both quotes: single quotes win and only the single quote is escaped.
  CHECK(str_repr("it's \"x\"") == "'it\\'s \"x\"'");
  CHECK(str_repr("\"") == "'\"'");
  CHECK(str_repr("'") == "\"'\"");
}

TEST_CASE("py_repr: str escapes", "[cache][py_repr]") {
  CHECK(str_repr("\\") == "'\\\\'");
  CHECK(str_repr("a\tb\nc\rd") == "'a\\tb\\nc\\rd'");
  CHECK(str_repr(std::string_view("\x00\x01\x1f\x7f", 4)) == "'\\x00\\x01\\x1f\\x7f'");
  CHECK(str_repr("\x1b[0m") == "'\\x1b[0m'");
  CHECK(str_repr(" ") == "' '");
  // Latin-1: C1 controls, NO-BREAK SPACE and SOFT HYPHEN are escaped, é is not.
  CHECK(str_repr("\u0080\u009f\u00a0\u00ad\u00e9") == "'\\x80\\x9f\\xa0\\xad\u00e9'");
  CHECK(str_repr("\u00a0") == "'\\xa0'");
  CHECK(str_repr("\u200b") == "'\\u200b'");
  CHECK(str_repr("\u2028\u2029\u3000\ufeff") == "'\\u2028\\u2029\\u3000\\ufeff'");
  CHECK(str_repr("\ufffe") == "'\\ufffe'");
  CHECK(str_repr("\ue000") == "'\\ue000'"); // private use
  CHECK(str_repr("\U000e0001") == "'\\U000e0001'");
  CHECK(str_repr("\U000f0000") == "'\\U000f0000'");
  CHECK(str_repr("\U0010ffff") == "'\\U0010ffff'");
}

TEST_CASE("py_repr: unassigned code points are escaped", "[cache][py_repr]") {
  CHECK(str_repr("\u0378") == "'\\u0378'");
  CHECK(str_repr("\U0002ffff") == "'\\U0002ffff'");
  // Assigned only in Unicode 15: CPython 3.11 (Unicode 14) still escapes them.
  CHECK(str_repr("\U00031350") == "'\\U00031350'");
  CHECK(str_repr("\U0001e030") == "'\\U0001e030'");
}

TEST_CASE("py_repr: printable non-ASCII is copied", "[cache][py_repr]") {
  CHECK(str_repr("😀") == "'😀'");
  CHECK(str_repr("中文") == "'中文'");
  CHECK(str_repr("e\u0301") == "'e\u0301'");       // a combining mark is printable
  CHECK(str_repr("\U00030000") == "'\U00030000'"); // CJK extension G, Unicode 13
  CHECK(str_repr("a\u200bb😀'") == "\"a\\u200bb😀'\"");
}

TEST_CASE("py_repr: float", "[cache][py_repr]") {
  CHECK(float_repr(0.1) == "0.1");
  CHECK(float_repr(1e16) == "1e+16");
  CHECK(float_repr(1e15) == "1000000000000000.0");
  CHECK(float_repr(1e-5) == "1e-05");
  CHECK(float_repr(1e-7) == "1e-07");
  CHECK(float_repr(0.0001) == "0.0001");
  CHECK(float_repr(0.00012345) == "0.00012345");
  CHECK(float_repr(0.001) == "0.001");
  CHECK(float_repr(1e22) == "1e+22");
  CHECK(float_repr(1e100) == "1e+100");
  CHECK(float_repr(1.5e300) == "1.5e+300");
  CHECK(float_repr(123e-20) == "1.23e-18");
  CHECK(float_repr(5e-324) == "5e-324");
  CHECK(float_repr(2.2250738585072014e-308) == "2.2250738585072014e-308");
  CHECK(float_repr(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(float_repr(0.0) == "0.0");
  CHECK(float_repr(-0.0) == "-0.0");
  CHECK(float_repr(1.0) == "1.0");
  CHECK(float_repr(-1.5) == "-1.5");
  CHECK(float_repr(2.5) == "2.5");
  CHECK(float_repr(100.0) == "100.0");
  CHECK(float_repr(1.0 / 3.0) == "0.3333333333333333");
  CHECK(float_repr(123456789.123) == "123456789.123");
  CHECK(float_repr(1234567890123456.0) == "1234567890123456.0");
  CHECK(float_repr(9999999999999998.0) == "9999999999999998.0");
  CHECK(float_repr(12345678901234567.0) == "1.2345678901234568e+16");
  CHECK(float_repr(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(float_repr(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(float_repr(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(float_repr(-std::numeric_limits<double>::quiet_NaN()) == "nan"); // sign of nan ignored
}

TEST_CASE("py_repr: scalars", "[cache][py_repr]") {
  CHECK(py_repr(PyConstant::none()) == "None");
  CHECK(py_repr(PyConstant::boolean(true)) == "True");
  CHECK(py_repr(PyConstant::boolean(false)) == "False");
  CHECK(py_repr(i(0)) == "0");
  CHECK(py_repr(i(-42)) == "-42");
  CHECK(py_repr(i(std::numeric_limits<std::int64_t>::min())) == "-9223372036854775808");
  CHECK(py_repr(i(std::numeric_limits<std::int64_t>::max())) == "9223372036854775807");
  CHECK(py_repr(PyConstant::floating(2.0)) == "2.0");
  CHECK(py_repr(s("it's")) == "\"it's\"");
}

TEST_CASE("py_repr: containers", "[cache][py_repr]") {
  CHECK(py_repr(PyConstant::tuple({})) == "()");
  CHECK(py_repr(PyConstant::tuple({i(1)})) == "(1,)");
  CHECK(py_repr(PyConstant::tuple({i(1), i(2)})) == "(1, 2)");
  CHECK(py_repr(PyConstant::list({})) == "[]");
  CHECK(py_repr(PyConstant::list({i(1)})) == "[1]");
  CHECK(py_repr(PyConstant::list({i(1), i(2)})) == "[1, 2]");
  CHECK(py_repr(PyConstant::make_dict({})) == "{}");
  CHECK(py_repr(PyConstant::make_dict({{"a", i(1)}, {"b", PyConstant::tuple({i(2)})}})) == "{'a': 1, 'b': (2,)}");
  // Dicts keep document order; keys use the str repr.
  CHECK(py_repr(PyConstant::make_dict({{"z", i(1)}, {"it's", i(2)}})) == "{'z': 1, \"it's\": 2}");
  CHECK(py_repr(PyConstant::tuple({PyConstant::tuple({})})) == "((),)");

  // The shape the cache hashes: a sorted list of (name, component) pairs.
  auto key = PyConstant::list({
      PyConstant::tuple({s("a"), PyConstant::make_dict({{"x", PyConstant::list({i(1), PyConstant::floating(2.0),
                                                                                PyConstant::none()})}})}),
      PyConstant::tuple({s("b"), PyConstant::tuple({PyConstant::tuple({})})}),
      PyConstant::tuple({s("c"), PyConstant::list({PyConstant::boolean(true), PyConstant::boolean(false), s("q'\"")})}),
  });
  CHECK(py_repr(key) == "[('a', {'x': [1, 2.0, None]}), ('b', ((),)), ('c', [True, False, 'q\\'\"'])]");

  // append_py_repr appends rather than overwrites.
  std::string out = "key=";
  nkicc::append_py_repr(out, PyConstant::tuple({i(1)}));
  CHECK(out == "key=(1,)");
}

TEST_CASE("py_constant: hashable and type_name", "[support][py_constant]") {
  CHECK(PyConstant::none().hashable());
  CHECK(i(1).hashable());
  CHECK(s("x").hashable());
  CHECK(PyConstant::tuple({}).hashable());
  CHECK(PyConstant::tuple({i(1), PyConstant::tuple({s("x")})}).hashable());
  CHECK_FALSE(PyConstant::list({}).hashable());
  CHECK_FALSE(PyConstant::make_dict({}).hashable());
  CHECK_FALSE(PyConstant::tuple({i(1), PyConstant::tuple({PyConstant::list({})})}).hashable());

  CHECK(std::string(PyConstant::none().type_name()) == "NoneType");
  CHECK(std::string(PyConstant::boolean(true).type_name()) == "bool");
  CHECK(std::string(i(1).type_name()) == "int");
  CHECK(std::string(PyConstant::floating(1).type_name()) == "float");
  CHECK(std::string(s("").type_name()) == "str");
  CHECK(std::string(PyConstant::tuple({}).type_name()) == "tuple");
  CHECK(std::string(PyConstant::list({}).type_name()) == "list");
  CHECK(std::string(PyConstant::make_dict({}).type_name()) == "dict");
}

TEST_CASE("py_is_printable", "[cache][py_repr]") {
  using nkicc::py_is_printable;
  CHECK(py_is_printable(U' '));
  CHECK(py_is_printable(U'~'));
  CHECK(py_is_printable(0xa1));
  CHECK(py_is_printable(0x377));
  CHECK(py_is_printable(0x4e00));
  CHECK(py_is_printable(0xfffd));
  CHECK(py_is_printable(0x1f600));
  CHECK(py_is_printable(0xe0100)); // variation selector: Mn, printable
  CHECK(py_is_printable(0x30000));
  CHECK(py_is_printable(0x3134a));
  CHECK_FALSE(py_is_printable(0x00));
  CHECK_FALSE(py_is_printable(U'\t'));
  CHECK_FALSE(py_is_printable(0x7f));
  CHECK_FALSE(py_is_printable(0xa0));
  CHECK_FALSE(py_is_printable(0xad));
  CHECK_FALSE(py_is_printable(0x378));
  CHECK_FALSE(py_is_printable(0x200b));
  CHECK_FALSE(py_is_printable(0x2028));
  CHECK_FALSE(py_is_printable(0x3000));
  CHECK_FALSE(py_is_printable(0xd800));
  CHECK_FALSE(py_is_printable(0xe000));
  CHECK_FALSE(py_is_printable(0xfffe));
  CHECK_FALSE(py_is_printable(0x2fffd));
  CHECK_FALSE(py_is_printable(0x3134b));
  CHECK_FALSE(py_is_printable(0xe0001));
  CHECK_FALSE(py_is_printable(0x10ffff));
  CHECK_FALSE(py_is_printable(0x110000));
}

// ---- The generated cases (scripts/gen_py_repr_cases.py) --------------------------------------

namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

void fnv1a64(std::uint64_t &hash, std::string_view bytes) {
  for (unsigned char b : bytes)
    hash = (hash ^ b) * kFnvPrime;
}

std::string hex64(std::uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, value);
  return buf;
}

std::string utf8_encode(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return out;
}

struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

// Mirrors float_from() in the generator.
double float_from(const std::string &mode, std::uint64_t r) {
  static const std::vector<double> pow10 = [] {
    std::vector<double> p{1.0};
    for (int k = 1; k < 23; ++k)
      p.push_back(p.back() * 10.0); // exact up to 1e22
    return p;
  }();
  if (mode == "bits")
    return std::bit_cast<double>(r);
  if (mode == "fixed") {
    std::uint64_t exponent = 1023 - 17 + (r >> 52) % 75;
    return std::bit_cast<double>((r & ((1ULL << 63) | ((1ULL << 52) - 1))) | (exponent << 52));
  }
  if (mode == "short")
    return static_cast<double>(r % 1000000) / pow10[(r >> 32) % 23];
  if (mode == "scaled")
    return static_cast<double>(r % 1000000) * pow10[(r >> 32) % 23];
  FAIL("unknown float mode " << mode);
  return 0;
}

PyConstant from_json(const rapidjson::Value &v) {
  if (v.IsNull())
    return PyConstant::none();
  if (v.IsBool())
    return PyConstant::boolean(v.GetBool());
  if (v.IsInt64())
    return PyConstant::integer(v.GetInt64());
  if (v.IsString())
    return PyConstant::str(std::string(v.GetString(), v.GetStringLength()));
  if (v.IsArray()) {
    std::vector<PyConstant> items;
    for (const auto &item : v.GetArray())
      items.push_back(from_json(item));
    return PyConstant::list(std::move(items));
  }
  if (v.IsObject()) {
    if (v.MemberCount() == 1) {
      const auto &m = *v.MemberBegin();
      std::string_view name(m.name.GetString(), m.name.GetStringLength());
      if (name == "tuple" && m.value.IsArray())
        return PyConstant::tuple(from_json(m.value).items);
      if (name == "float_bits" && m.value.IsString())
        return PyConstant::floating(std::bit_cast<double>(std::stoull(m.value.GetString(), nullptr, 16)));
    }
    std::vector<std::pair<std::string, PyConstant>> entries;
    for (const auto &m : v.GetObject())
      entries.emplace_back(std::string(m.name.GetString(), m.name.GetStringLength()), from_json(m.value));
    return PyConstant::make_dict(std::move(entries));
  }
  FAIL("unexpected JSON value (a plain JSON number that is not an int64?)");
  return {};
}

std::vector<std::string> read_case_lines() {
  std::ifstream in(NKICC_SOURCE_DIR "/test/unit/data/py_repr_cases.txt", std::ios::binary);
  REQUIRE(in);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(std::move(line));
  REQUIRE(lines.size() > 1000);
  return lines;
}

std::vector<std::string> split_fields(const std::string &line) {
  std::istringstream fields(line);
  std::vector<std::string> out;
  for (std::string f; fields >> f;)
    out.push_back(f);
  return out;
}

} // namespace

TEST_CASE("py_repr: generated value cases match CPython", "[cache][py_repr][data]") {
  int cases = 0;
  int failures = 0;
  for (const std::string &line : read_case_lines()) {
    if (line.starts_with("#"))
      continue;
    auto tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    std::string json = line.substr(0, tab);
    std::string expected = line.substr(tab + 1);
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    INFO("case: " << json);
    REQUIRE_FALSE(doc.HasParseError());
    std::string got = py_repr(from_json(doc));
    ++cases;
    if (got != expected && ++failures <= 20)
      CHECK(got == expected);
  }
  CHECK(failures == 0);
  CHECK(cases >= 2000);
}

TEST_CASE("py_repr: every code point matches CPython", "[cache][py_repr][data]") {
  int blocks = 0;
  for (const std::string &line : read_case_lines()) {
    if (!line.starts_with("#!chars "))
      continue;
    auto f = split_fields(line);
    REQUIRE(f.size() == 4);
    char32_t first = static_cast<char32_t>(std::stoul(f[1], nullptr, 16));
    char32_t end = static_cast<char32_t>(std::stoul(f[2], nullptr, 16));
    std::uint64_t hash = kFnvOffset;
    std::string out;
    for (char32_t cp = first; cp < end; ++cp) {
      if (cp >= 0xd800 && cp < 0xe000)
        continue;
      out.clear();
      nkicc::append_py_str_repr(out, utf8_encode(cp));
      out += '\n';
      fnv1a64(hash, out);
    }
    INFO("code points " << f[1] << ".." << f[2]);
    CHECK(hex64(hash) == f[3]);
    ++blocks;
  }
  CHECK(blocks == 0x110);
}

TEST_CASE("py_repr: pseudo-random floats match CPython", "[cache][py_repr][data]") {
  int runs = 0;
  for (const std::string &line : read_case_lines()) {
    if (!line.starts_with("#!floats "))
      continue;
    auto f = split_fields(line);
    REQUIRE(f.size() == 5);
    const std::string &mode = f[1];
    SplitMix64 gen{std::stoull(f[2])};
    long count = std::stol(f[3]);
    std::uint64_t hash = kFnvOffset;
    std::string out;
    for (long k = 0; k < count; ++k) {
      out.clear();
      nkicc::append_py_float_repr(out, float_from(mode, gen.next()));
      out += '\n';
      fnv1a64(hash, out);
    }
    INFO("float run " << line);
    CHECK(hex64(hash) == f[4]);
    ++runs;
  }
  CHECK(runs == 4);
}
