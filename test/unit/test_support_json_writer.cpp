#include "nkicc/support/json_writer.h"

#include <catch2/catch.hpp>

#include <limits>

using namespace nkicc;

namespace {
std::string dumps(const PyConstant &v) {
  std::string out;
  append_python_json(out, v);
  return out;
}
} // namespace

TEST_CASE("append_python_json matches json.dumps defaults", "[support]") {
  // Expected strings are CPython 3.11's json.dumps output.
  CHECK(dumps(PyConstant::make_dict({{"a", PyConstant::integer(1)},
                                     {"b", PyConstant::list({PyConstant::boolean(true), PyConstant::none()})}})) ==
        R"({"a": 1, "b": [true, null]})");
  CHECK(dumps(PyConstant::str("é\"\\\n\x7f\U0001F600")) == R"("\u00e9\"\\\n\u007f\ud83d\ude00")");
  CHECK(dumps(PyConstant::str(std::string("\x01\b\f", 3))) == R"("\u0001\b\f")");
  CHECK(dumps(PyConstant::floating(1e-5)) == "1e-05");
  CHECK(dumps(PyConstant::floating(1.0)) == "1.0");
  CHECK(dumps(PyConstant::floating(std::numeric_limits<double>::infinity())) == "Infinity");
  CHECK(dumps(PyConstant::floating(-std::numeric_limits<double>::infinity())) == "-Infinity");
  CHECK(dumps(PyConstant::floating(std::numeric_limits<double>::quiet_NaN())) == "NaN");
  CHECK(dumps(PyConstant::tuple({PyConstant::integer(5)})) == "[5]");
  CHECK(dumps(PyConstant::make_dict({})) == "{}");
}

TEST_CASE("to_pretty_json is the canonical pretty form", "[support]") {
  PyConstant v = PyConstant::make_dict({
      {"shape", PyConstant::list({PyConstant::integer(1), PyConstant::integer(2)})},
      {"t", PyConstant::tuple({})},
      {"nested", PyConstant::list({PyConstant::make_dict({{"é", PyConstant::none()}})})},
      {"empty", PyConstant::make_dict({})},
  });
  CHECK(to_pretty_json(v) == "{\n"
                             "  \"shape\": [1, 2],\n"
                             "  \"t\": {\"tuple\": []},\n"
                             "  \"nested\": [\n"
                             "    {\n"
                             "      \"é\": null\n"
                             "    }\n"
                             "  ],\n"
                             "  \"empty\": {}\n"
                             "}");
}
