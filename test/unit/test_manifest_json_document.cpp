#include "nkicc/manifest/json_document.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace nkicc;

namespace {
struct Parsed {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::optional<JsonDocument> doc;
  const JsonValue *value = nullptr;
  explicit Parsed(std::string text, std::size_t max_depth = 256) {
    auto f = sm.add_buffer("t.json", std::move(text));
    JsonParseOptions opt;
    opt.max_depth = max_depth;
    doc = parse_json(sm, f, diags, opt);
    if (doc)
      value = &doc->root();
  }
  std::string first_error() const {
    if (diags.diagnostics().empty())
      return "";
    const auto &d = diags.diagnostics()[0];
    auto lc = sm.line_col(d.loc);
    return std::to_string(lc.line) + ":" + std::to_string(lc.column) + " " + d.message;
  }
};
} // namespace

TEST_CASE("every value records where it starts", "[manifest]") {
  Parsed p("{\"a\": [1, \"x\", {\"b\": null}],\n \"c\": true}");
  REQUIRE(p.value);
  const JsonValue &root = *p.value;
  CHECK(root.loc().offset == 0);
  const JsonValue *a = root.find("a");
  REQUIRE(a);
  CHECK(a->loc().offset == 6);
  CHECK(a->items()[0].loc().offset == 7);
  CHECK(a->items()[1].loc().offset == 10);
  CHECK(a->items()[2].loc().offset == 15);
  CHECK(a->items()[2].members()[0].key.loc().offset == 16);
  CHECK(root.members()[1].key.loc().offset == 30);
  CHECK(root.find("c")->loc().offset == 35);
}

TEST_CASE("numbers keep their literal text", "[manifest]") {
  Parsed p("[1, -0, 1.5e3, 123456789012345678901234567890]");
  REQUIRE(p.value);
  CHECK(p.value->items()[0].text() == "1");
  CHECK(p.value->items()[1].text() == "-0");
  CHECK(p.value->items()[2].text() == "1.5e3");
  CHECK_FALSE(p.value->items()[2].is_integer_literal());
  CHECK(p.value->items()[3].is_integer_literal());
}

TEST_CASE("syntax errors are located", "[manifest]") {
  CHECK(Parsed("{\"a\": {}}").first_error().empty());
  CHECK(Parsed("{\"a\": 1, 2}").first_error() == "1:10 expected a string key in object");
  CHECK(Parsed("{\"a\" 1}").first_error() == "1:6 expected ':' after object key");
  CHECK(Parsed("[1 2]").first_error() == "1:4 expected ',' or ']' in array");
  CHECK(Parsed("").first_error() == "1:1 expected a JSON value, found the end of the file");
  CHECK(Parsed("{} x").first_error() == "1:4 unexpected text after the JSON value");
  CHECK(Parsed(std::string("{}\0x", 4)).first_error() == "1:3 unexpected NUL byte (binary file?)");
  CHECK(Parsed("\"abc").first_error() == "1:5 unexpected end of file: unterminated string");
  CHECK(Parsed("1e400").first_error() ==
        "1:1 number 1e400 is out of the range of a 64-bit float (JSON has no infinity)");
}

TEST_CASE("comments and trailing commas get their own message", "[manifest]") {
  CHECK(Parsed("{\"a\": 1, // note\n}").first_error() == "1:10 JSON does not allow comments");
  CHECK(Parsed("/* header */ {}").first_error() == "1:1 JSON does not allow comments");
  CHECK(Parsed("[1 # note\n]").first_error() == "1:4 JSON does not allow comments");
  CHECK(Parsed("{} // end").first_error() == "1:4 JSON does not allow comments");
  // At the comma, not at the bracket after it.
  CHECK(Parsed("{\"a\": 1,}").first_error() == "1:8 trailing comma before '}': JSON does not allow one");
  CHECK(Parsed("[1, 2,\n  ]").first_error() == "1:6 trailing comma before ']': JSON does not allow one");
  // A lone '/' is no comment.
  CHECK(Parsed("[1 / 2]").first_error() == "1:4 expected ',' or ']' in array");
}

TEST_CASE("a file cut short says so and what was expected", "[manifest]") {
  CHECK(Parsed("{").first_error() == "1:2 unexpected end of file: expected a string key in object");
  CHECK(Parsed("{\"a\"").first_error() == "1:5 unexpected end of file: expected ':' after object key");
  CHECK(Parsed("{\"a\":").first_error() == "1:6 unexpected end of file: expected a JSON value");
  CHECK(Parsed("[1").first_error() == "1:3 unexpected end of file: expected ',' or ']' in array");
  CHECK(Parsed("[1.").first_error() == "1:4 unexpected end of file: expected a digit after the decimal point");
  CHECK(Parsed("  ").first_error() == "1:3 expected a JSON value, found the end of the file");
}

TEST_CASE("a string fault names the byte that caused it", "[manifest]") {
  CHECK(Parsed("[\"a\tb\"]").first_error() == "1:4 unescaped control character U+0009 in string; write it as \\t");
  CHECK(Parsed("[\"a\fb\"]").first_error() == "1:4 unescaped control character U+000C in string; write it as \\f");
  CHECK(Parsed("[\"a\x01\"]").first_error() == "1:4 unescaped control character U+0001 in string; write it as \\u0001");
  CHECK(Parsed("[\"ab\n\"]").first_error() ==
        "1:5 unterminated string: a JSON string cannot span lines (write a line break as \\n)");
  CHECK(Parsed("[\"ab\r\n\"]").first_error() ==
        "1:5 unterminated string: a JSON string cannot span lines (write a line break as \\n)");
  CHECK(Parsed(std::string("[\"a\0\"]", 6)).first_error() == "1:4 unexpected NUL byte (binary file?)");
  CHECK(Parsed("[\"a\\qb\"]").first_error() == "1:4 invalid escape sequence in string");
  CHECK(Parsed("[\"a\xff\"]").first_error() == "1:4 invalid UTF-8 in string (byte 0xFF)");
}

TEST_CASE("a NUL byte or a byte order mark is named wherever it stops the reader", "[manifest]") {
  CHECK(Parsed(std::string("\0{}", 3)).first_error() == "1:1 unexpected NUL byte (binary file?)");
  CHECK(Parsed(std::string("[1,\0]", 5)).first_error() == "1:4 unexpected NUL byte (binary file?)");
  CHECK(Parsed(std::string("{\"a\"\0:1}", 8)).first_error() == "1:5 unexpected NUL byte (binary file?)");
  CHECK(Parsed("\xEF\xBB\xBF{}").first_error() ==
        "1:1 the file starts with a UTF-8 byte order mark; JSON does not allow one");
}

TEST_CASE("numbers beyond int64 or double are named as such", "[manifest]") {
  CHECK(Parsed("[" + std::string(400, '9') + "]").first_error() ==
        "1:2 integer " + std::string(32, '9') + "... does not fit in 64 bits");
  CHECK(Parsed("[-2.5e999]").first_error() ==
        "1:2 number -2.5e999 is out of the range of a 64-bit float (JSON has no infinity)");
  CHECK(number_out_of_range_message("9223372036854775808") == "integer 9223372036854775808 does not fit in 64 bits");
  CHECK(number_out_of_range_message("9e308") ==
        "number 9e308 is out of the range of a 64-bit float (JSON has no infinity)");
}

TEST_CASE("duplicate keys are an error at the second key", "[manifest]") {
  CHECK(Parsed("{\"a\": 1, \"a\": 2}").first_error() == "1:10 duplicate key 'a' in object");
  CHECK(Parsed("{\"a\\n\\u001b\": 1, \"a\\n\\u001b\": 2}").first_error() == "1:18 duplicate key 'a\\n\\x1b' in object");
}

TEST_CASE("a lone surrogate escape is rejected", "[manifest]") {
  CHECK(Parsed(R"(["\udc00"])").first_error() ==
        "1:2 string contains a lone surrogate \\udc00, which is not valid Unicode text");
  Parsed ok(R"(["\ud83d\ude00"])");
  REQUIRE(ok.value);
  CHECK(ok.value->items()[0].text() == "\U0001F600");
}

TEST_CASE("nesting deeper than the limit is an error, not a stack overflow", "[manifest]") {
  CHECK(Parsed(std::string(1'000'000, '['), 256).first_error() == "1:257 JSON nesting is deeper than 256 levels");
  Parsed shallow("[[[1]]]", 3);
  CHECK(shallow.value);
}

TEST_CASE("a value is a compact node", "[manifest]") {
  static_assert(sizeof(JsonValue) <= 24);
  static_assert(sizeof(JsonMember) == 2 * sizeof(JsonValue));
}

TEST_CASE("strings are decoded, with or without escapes", "[manifest]") {
  Parsed p(R"({"plain": "abc", "esc\"aped": "a\\b\nc", "": "", "u": "\u00e9x", "nested": [[], {}, ["q"]]})");
  REQUIRE(p.value);
  const JsonValue &root = *p.value;
  REQUIRE(root.members().size() == 5);
  CHECK(root.members()[0].key.text() == "plain");
  CHECK(root.members()[0].value.text() == "abc");
  CHECK(root.members()[1].key.text() == "esc\"aped");
  CHECK(root.members()[1].value.text() == "a\\b\nc");
  CHECK(root.find("esc\"aped") == &root.members()[1].value);
  CHECK(root.members()[2].key.text().empty());
  CHECK(root.find("")->text().empty());
  CHECK(root.find("u")->text() == "\xC3\xA9x");
  const JsonValue *nested = root.find("nested");
  REQUIRE(nested);
  REQUIRE(nested->items().size() == 3);
  CHECK(nested->items()[0].kind() == JsonValue::Kind::Array);
  CHECK(nested->items()[0].items().empty());
  CHECK(nested->items()[1].kind() == JsonValue::Kind::Object);
  CHECK(nested->items()[1].members().empty());
  CHECK(nested->items()[2].items()[0].text() == "q");
  CHECK(nested->items()[2].items()[0].loc().offset == 85);
  CHECK(root.find("missing") == nullptr);
  CHECK(nested->find("plain") == nullptr);
}

TEST_CASE("a large object still refuses a duplicate key", "[manifest]") {
  std::string text = "{";
  for (int i = 0; i < 40; ++i)
    text += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  Parsed ok(text + "\"last\": true}");
  REQUIRE(ok.value);
  CHECK(ok.value->members().size() == 41);
  CHECK(ok.value->find("k39")->text() == "39");
  CHECK(ok.value->find("last")->boolean());
  CHECK(Parsed(text + "\"k\\u0031\": 0}").first_error().ends_with("duplicate key 'k1' in object"));
}

TEST_CASE("the document outlives the parse and can be moved", "[manifest]") {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  auto f = sm.add_buffer("t.json", R"({"a": ["x\ty", 2, {"b": [true, null]}]})");
  std::optional<JsonDocument> doc = parse_json(sm, f, diags);
  REQUIRE(doc);
  JsonDocument moved = std::move(*doc);
  doc.reset();
  const JsonValue *a = moved.root().find("a");
  REQUIRE(a);
  CHECK(a->items()[0].text() == "x\ty");
  CHECK(a->items()[1].text() == "2");
  const JsonValue *b = a->items()[2].find("b");
  REQUIRE(b);
  CHECK(b->items()[0].kind() == JsonValue::Kind::Bool);
  CHECK(b->items()[0].boolean());
  CHECK(b->items()[1].kind() == JsonValue::Kind::Null);
}

namespace {

/// A value as text with every position it holds, to compare a streamed item with the same item
/// of a whole parse.
std::string describe(const JsonValue &v) {
  std::string out = std::to_string(v.loc().offset) + ":" + std::to_string(static_cast<int>(v.kind()));
  if (v.kind() == JsonValue::Kind::String || v.kind() == JsonValue::Kind::Number)
    out += "=" + std::string(v.text());
  for (const JsonValue &item : v.items())
    out += " [" + describe(item) + "]";
  for (const JsonMember &m : v.members())
    out += " {" + describe(m.key) + " " + describe(m.value) + "}";
  return out;
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::string &text) {
    char name[] = "/tmp/nkicc-json-stream-XXXXXX";
    int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fd);
    path = name;
  }
  ~TempFile() { ::unlink(path.c_str()); }
};

} // namespace

TEST_CASE("a streamed parse hands over each item of the split array with the whole parse's positions", "[manifest]") {
  // Items that straddle the stream's 32 KiB window: escapes, long strings, white space between
  // tokens, a string longer than the window, and members after the split array.
  std::string text = "{\"version\": 1,\n  \"calls\" : [";
  for (int i = 0; i < 3000; ++i) {
    if (i)
      text += i % 7 ? ", " : ",\n    ";
    // Raw UTF-8 too (two-, three- and four-byte sequences), which the window cuts somewhere.
    text += "{\"k\": \"kernel_" + std::to_string(i) +
            "\", \"esc\": \"a\\nb\\u00e9\", \"raw\": \"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\", \"n\": [" +
            std::to_string(i) + ", -1.5e3]}";
    if (i == 1500)
      text += ", \"" + std::string(100000, 'x') + "\"";
  }
  text += "]  ,\n \"name\": \"after\"}\n";
  REQUIRE(text.size() > 4 * 32 * 1024);

  Parsed whole(text);
  REQUIRE(whole.value);
  std::vector<std::string> expected;
  for (const JsonValue &item : whole.value->find("calls")->items())
    expected.push_back(describe(item));

  TempFile file(text);
  SourceManager sm;
  FileId id = sm.add_lazy_file(file.path);
  DiagnosticEngine diags(sm);
  std::vector<std::string> streamed;
  std::function<bool(const JsonValue &)> on_item = [&](const JsonValue &item) {
    streamed.push_back(describe(item));
    return true;
  };
  auto result = parse_json_stream(file.path, id, diags, "calls", on_item);
  REQUIRE(result);
  CHECK(diags.diagnostics().empty());
  CHECK(result->items == expected.size());
  CHECK(result->size == text.size());
  REQUIRE(streamed.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    CHECK(streamed[i] == expected[i]);
  // The rest of the document is kept, the split array empty.
  const JsonValue &root = result->document.root();
  CHECK(root.find("calls")->items().empty());
  CHECK(root.find("calls")->loc().offset == whole.value->find("calls")->loc().offset);
  CHECK(root.find("name")->text() == "after");
  CHECK(root.find("name")->loc().offset == whole.value->find("name")->loc().offset);
  // A lazily registered file is read when a position in it is shown.
  CHECK(sm.line_col({id, root.find("name")->loc().offset}).line ==
        whole.sm.line_col(whole.value->find("name")->loc()).line);
}

TEST_CASE("a streamed parse stops at what the whole parse would report", "[manifest]") {
  std::function<bool(const JsonValue &)> keep_going = [](const JsonValue &) { return true; };
  auto streams = [&](const std::string &text) {
    TempFile file(text);
    SourceManager sm;
    DiagnosticEngine diags(sm);
    return parse_json_stream(file.path, sm.add_lazy_file(file.path), diags, "calls", keep_going).has_value();
  };
  CHECK(streams("{\"calls\": [1, 2]} \n"));
  CHECK_FALSE(streams("{\"calls\": [1, 2,]}"));                // a syntax error
  CHECK_FALSE(streams("{\"calls\": [1, 2]} x"));               // text after the value
  CHECK_FALSE(streams(std::string("{\"calls\": []}\0 ", 15))); // a NUL byte after it
  CHECK_FALSE(streams("{\"calls\": [], \"calls\": []}"));      // a duplicate key
  CHECK_FALSE(streams("{\"calls\": [1, 2"));                   // the end of the file
  CHECK_FALSE(streams("{\"calls\": [\"\xFF\"]}"));             // bytes that are not UTF-8
  CHECK_FALSE(streams("{\"calls\": [\"\xC3\"]}"));             // a cut sequence
  CHECK_FALSE(streams("{\"calls\": []}\xC3"));                 // one cut by the end of the file
  std::function<bool(const JsonValue &)> stop = [](const JsonValue &v) { return v.text() != "2"; };
  TempFile file("{\"calls\": [1, 2, 3]}");
  SourceManager sm;
  DiagnosticEngine diags(sm);
  CHECK_FALSE(parse_json_stream(file.path, sm.add_lazy_file(file.path), diags, "calls", stop));
  CHECK_FALSE(parse_json_stream("/nonexistent/nkicc.json", sm.add_lazy_file("/nonexistent/nkicc.json"), diags, "calls",
                                keep_going));
}

namespace {

/// Parses `text` whole and as a file stream split at "calls", and checks that every item the
/// stream hands over is the whole parse's, positions included.
void check_streamed_as_whole(const std::string &text) {
  Parsed whole(text);
  REQUIRE(whole.value);
  std::vector<std::string> expected;
  for (const JsonValue &item : whole.value->find("calls")->items())
    expected.push_back(describe(item));
  TempFile file(text);
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::vector<std::string> streamed;
  std::function<bool(const JsonValue &)> on_item = [&](const JsonValue &item) {
    streamed.push_back(describe(item));
    return true;
  };
  REQUIRE(parse_json_stream(file.path, sm.add_lazy_file(file.path), diags, "calls", on_item));
  REQUIRE(streamed.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    CHECK(streamed[i] == expected[i]);
}

/// Checks that the whole parse of `text` fails with a message and the stream fails too; when
/// the stream reports (what the builder finds), it reports the whole parse's first error.
void check_stream_fails_as_whole(const std::string &text) {
  Parsed whole(text);
  CHECK_FALSE(whole.value);
  CHECK_FALSE(whole.first_error().empty());
  TempFile file(text);
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::function<bool(const JsonValue &)> keep_going = [](const JsonValue &) { return true; };
  CHECK_FALSE(parse_json_stream(file.path, sm.add_lazy_file(file.path), diags, "calls", keep_going));
  if (!diags.diagnostics().empty()) {
    const auto &d = diags.diagnostics()[0];
    auto lc = sm.line_col(d.loc);
    CHECK(std::to_string(lc.line) + ":" + std::to_string(lc.column) + " " + d.message == whole.first_error());
  }
}

} // namespace

TEST_CASE("a streamed parse decodes every escape as the whole parse does, wherever the window cuts it", "[manifest]") {
  // Each escape RapidJSON knows, code points at every UTF-8 length boundary, a surrogate pair,
  // a lone low surrogate (which the builder refuses), and the escapes nkicc's string scan leaves
  // to RapidJSON; repeated with growing padding so that the file window cuts each of them at
  // every byte.
  const std::string escapes =
      R"(\"\\\/\b\f\n\r\t\u0000\u0001\u001f\u007F\u0080\u07ff\u0800\uFFFF\ud800\udc00\udbff\udfff)";
  std::string text = "{\"calls\": [";
  for (int pad = 0; pad < 64; ++pad) {
    for (int copy = 0; copy < 40; ++copy) {
      if (pad || copy)
        text += ", ";
      text +=
          "[\"" + std::string(static_cast<std::size_t>(pad + 37 * copy), 'p') + escapes + "\", \"" + escapes + "x\"]";
    }
  }
  text += "]}";
  REQUIRE(text.size() > 3 * 32 * 1024);
  CHECK(Parsed(text).value->find("calls")->items()[0].items()[1].text() ==
        std::string(
            "\"\\/\b\f\n\r\t\0\x01\x1f\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbfx",
            31));
  check_streamed_as_whole(text);
}

TEST_CASE("a streamed parse fails on a faulty escape as the whole parse does", "[manifest]") {
  // The stream reports only what the builder finds (here the lone surrogate); a syntax error
  // makes it fail, and the caller reads the file whole for the message.
  for (std::string bad :
       {R"(\x)", R"(\u12G4)", R"(\u12)", R"(\ud800x)", R"(\ud800\u0041)", R"(\ud800\n)", R"(\udc00)", "\x01", R"(\)"}) {
    // Far enough in that the window holds it whole, and cut by the window's end.
    for (std::size_t at : {std::size_t{100}, std::size_t{32 * 1024 - 3}}) {
      CAPTURE(bad, at);
      check_stream_fails_as_whole("{\"calls\": [\"" + std::string(at, 'p') + bad + "\"]}");
    }
  }
}

TEST_CASE("a streamed parse reads every number as the whole parse does, wherever the window cuts it", "[manifest]") {
  // Numbers nkicc's window scan hands over itself and numbers it leaves to RapidJSON (a
  // three-digit exponent, an integer part past 300 digits), cut by the window at every byte.
  const std::string numbers = "0, -0, 7, -123, 1.5, -0.25e-3, 1E+5, 2e-07, 1e99, 1e100, 1.0e-300, "
                              "123456789012345678901234567890, 0.1000000000000000000000001, " +
                              std::string(301, '9') + ", -" + std::string(300, '8') + ".5";
  std::string text = "{\"calls\": [";
  for (int pad = 0; pad < 48; ++pad) {
    for (int copy = 0; copy < 12; ++copy) {
      if (pad || copy)
        text += ",";
      text += std::string(static_cast<std::size_t>(pad + 41 * copy), ' ') + "[" + numbers + "]";
    }
  }
  text += "]}";
  REQUIRE(text.size() > 3 * 32 * 1024);
  CHECK(Parsed(text).value->find("calls")->items()[0].items()[5].text() == "-0.25e-3");
  check_streamed_as_whole(text);
}

TEST_CASE("a streamed parse fails on a faulty number as the whole parse does", "[manifest]") {
  for (const std::string &bad :
       std::vector<std::string>{"1.", "1.e5", "1e", "1e+", "-", "-a", ".5", "01", "1e999", std::string(400, '7')}) {
    for (std::size_t at : {std::size_t{100}, std::size_t{32 * 1024 - 2}}) {
      CAPTURE(bad, at);
      check_stream_fails_as_whole("{\"calls\": [" + std::string(at, ' ') + bad + "]}");
    }
  }
}
