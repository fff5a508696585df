#include "nkicc/manifest/kernel_file_call.h"

#include <catch2/catch.hpp>

using namespace nkicc;

namespace {

KernelFileCall call_with(std::vector<std::string> args) {
  KernelFileCall c;
  c.source_path = "k.py";
  c.kernel = "k";
  c.args = std::move(args);
  return c;
}

/// The items of the description's args array, each line's indentation dropped.
std::string args_of(std::vector<std::string> args) {
  std::string error;
  auto text = kernel_file_description(call_with(std::move(args)), error);
  INFO(error);
  REQUIRE(text);
  std::size_t start = text->find("\"args\": [") + 9;
  std::size_t end = text->rfind("]}\n]}\n");
  std::string items = text->substr(start, end - start), out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i] == '\n') {
      out += ' ';
      while (i + 1 < items.size() && items[i + 1] == ' ')
        ++i;
      continue;
    }
    out += items[i];
  }
  return out;
}

std::string error_of(KernelFileCall call) {
  std::string error;
  auto text = kernel_file_description(call, error);
  CHECK_FALSE(text);
  return error;
}

} // namespace

TEST_CASE("the description names the kernel file and the call", "[kernel-file]") {
  KernelFileCall c = call_with({"bfloat16[4096, 4096]", "1e-5"});
  c.kwargs = {"eps=1e-6", "mode='tanh'"};
  c.grid = "2,4";
  c.nc = "2";
  c.opts = {"fast=True"};
  std::string error;
  auto text = kernel_file_description(c, error);
  REQUIRE(text);
  CHECK(*text == "{\"nkicc\": 1,\n"
                 " \"sources\": [{\"path\": \"k.py\"}],\n"
                 " \"calls\": [\n"
                 "  {\"kernel\": \"k\",\n"
                 "   \"args\": [\n"
                 "     {\"shape\": [4096, 4096], \"dtype\": \"bfloat16\"},\n"
                 "     1e-05],\n"
                 "   \"kwargs\": {\n"
                 "     \"eps\": 1e-06,\n"
                 "     \"mode\": \"tanh\"},\n"
                 "   \"grid\": [2, 4],\n"
                 "   \"nc\": 2,\n"
                 "   \"opts\": {\n"
                 "     \"fast\": true}}\n"
                 "]}\n");
}

TEST_CASE("constants are read as Python writes them", "[kernel-file]") {
  CHECK(args_of({"3", "-7", "+2"}) == " 3, -7, 2");
  CHECK(args_of({"0.5", "2.", "1E3"}) == " 0.5, 2.0, 1000.0");
  CHECK(args_of({"True", "False", "None", "true", "null"}) == " true, false, null, true, null");
  CHECK(args_of({"'a b'", "\"it's\"", "'\\n'"}) == " \"a b\", \"it's\", \"\\n\"");
  CHECK(args_of({"(1, 2)", "(1,)", "()", "(3)", "[1, (2, 'x')]"}) ==
        " {\"tuple\": [1, 2]}, {\"tuple\": [1]}, {\"tuple\": []}, 3, [1, {\"tuple\": [2, \"x\"]}]");
  CHECK(args_of({"float8_e4m3[128]", "bool_[1,2]"}) ==
        " {\"shape\": [128], \"dtype\": \"float8_e4m3\"}, {\"shape\": [1, 2], \"dtype\": \"bool\"}");
}

TEST_CASE("a value that cannot be read names the option and says why", "[kernel-file]") {
  CHECK(error_of(call_with({"bfloat61[3]"})) == "--arg 'bfloat61[3]': unknown dtype 'bfloat61'; did you mean 'bfloat16'?");
  CHECK(error_of(call_with({"float32[3,x]"})) ==
        "--arg 'float32[3,x]': a dimension must be a positive integer, found 'x'");
  CHECK(error_of(call_with({"float32[0]"})) == "--arg 'float32[0]': a dimension must be a positive integer, found '0'");
  CHECK(error_of(call_with({"float32[]"})) == "--arg 'float32[]': a tensor must have at least one dimension");
  CHECK(error_of(call_with({"float32"})) == "--arg 'float32': a tensor needs its shape: float32[D0,D1,...]");
  CHECK(error_of(call_with({"tanh"})) ==
        "--arg 'tanh': unknown value 'tanh'; a string needs quotes ('tanh'), a tensor is DTYPE[D0,D1,...]");
  CHECK(error_of(call_with({"99999999999999999999"})) ==
        "--arg '99999999999999999999': an integer must fit in 64 bits (int64)");
  CHECK(error_of(call_with({"1e999"})) == "--arg '1e999': the float is out of the double range");
  CHECK(error_of(call_with({"'open"})) == "--arg ''open': unterminated string");
  CHECK(error_of(call_with({"(1, 2"})) == "--arg '(1, 2': expected ',' or ')'");
  CHECK(error_of(call_with({"1 2"})) == "--arg '1 2': unexpected '2' after the value");
  CHECK(error_of(call_with({std::string(40, '(')})) == "--arg '" + std::string(40, '(') +
                                                            "': nested deeper than 32 levels");
}

TEST_CASE("keyword arguments, options and the grid are checked", "[kernel-file]") {
  KernelFileCall c = call_with({});
  c.kwargs = {"eps"};
  CHECK(error_of(c) == "--kwarg 'eps': expected NAME=VALUE");
  c.kwargs = {"2x=1"};
  CHECK(error_of(c) == "--kwarg '2x=1': '2x' is not a Python identifier");
  c.kwargs = {"a=1", "a=2"};
  CHECK(error_of(c) == "--kwarg 'a=2': 'a' is given twice");
  c.kwargs = {};
  c.opts = {"tile=(1, 2)"};
  CHECK(error_of(c) ==
        "--opt '(1, 2)': a compile option must be a scalar (a number, True, False, None or a quoted string)");
  c.opts = {"t=float32[2]"};
  CHECK(error_of(c) == "--opt 'float32[2]': a tensor is only an argument (--arg, --kwarg), not a compile option");
  c.opts = {};
  c.grid = "2,,4";
  CHECK(error_of(c) == "--grid '2,,4': a grid dimension must be a positive integer, found ''");
  c.grid = "1,1,1,1";
  CHECK(error_of(c) == "--grid '1,1,1,1': an SPMD grid has 1 to 3 dimensions, found 4");
  c.grid = "";
  c.nc = "2";
  CHECK(error_of(c) == "--nc spreads the first grid dimension over physical cores and needs --grid");
  c.grid = "4";
  c.nc = "zero";
  CHECK(error_of(c) == "--nc 'zero': expected a positive number of cores");
  c.nc = "";
  c.kernel = "";
  CHECK(error_of(c) == "--kernel: the kernel name must not be empty");
}
