#include "nkicc/sim/npy.h"
#include "nkicc/sim/simulator.h"

#include <catch2/catch.hpp>

using namespace nkicc;
using namespace nkicc::sim;

TEST_CASE("write_npy: numpy's 1.0 layout, data 64-byte aligned", "[sim]") {
  std::vector<std::int64_t> shape = {2, 3};
  std::string data(24, '\0');
  std::string npy = write_npy("<f4", shape, data);
  CHECK(npy.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK((npy.size() - data.size()) % 64 == 0);
  std::string header = npy.substr(10, npy.size() - data.size() - 10);
  CHECK(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0) == 0);
  CHECK(header.back() == '\n');
  std::string error;
  auto parsed = parse_npy(npy, error);
  REQUIRE(parsed);
  CHECK(parsed->descr == "<f4");
  CHECK(parsed->shape == shape);
  CHECK(parsed->data.size() == 24);
  CHECK(npy_shape_text(std::vector<std::int64_t>{5}) == "(5,)");
  CHECK(npy_shape_text(std::vector<std::int64_t>{}) == "()");
}

TEST_CASE("parse_npy: versions 2.0 and 3.0, and the header forms numpy writes", "[sim]") {
  std::string header = "{'descr':'|u1','fortran_order':False,'shape':(4,)}   \n";
  std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
  std::uint32_t len = static_cast<std::uint32_t>(header.size());
  for (int i = 0; i < 4; ++i)
    v2 += static_cast<char>((len >> (8 * i)) & 0xff);
  v2 += header + "abcd";
  std::string error;
  auto parsed = parse_npy(v2, error);
  REQUIRE(parsed);
  CHECK(parsed->shape == std::vector<std::int64_t>{4});
  CHECK(parsed->data == "abcd");
  std::string v3 = v2;
  v3[6] = 3;
  CHECK(parse_npy(v3, error));
}

TEST_CASE("parse_npy: malformed files say what is wrong", "[sim]") {
  std::string error;
  CHECK_FALSE(parse_npy("hello", error));
  CHECK(error == "not a .npy file (no \\x93NUMPY magic)");
  std::string good = write_npy("<f4", std::vector<std::int64_t>{2}, std::string(8, '\0'));
  CHECK_FALSE(parse_npy(good.substr(0, good.size() - 1), error));
  CHECK(error == "it holds 7 bytes of data, but shape (2,) of '<f4' needs 8");
  CHECK_FALSE(parse_npy(good.substr(0, 20), error));
  CHECK(error == "truncated .npy file: it ends inside its header");
  std::string bad_version = good;
  bad_version[6] = 9;
  CHECK_FALSE(parse_npy(bad_version, error));
  CHECK(error == "unsupported .npy format version 9.0 (nkicc reads 1.0, 2.0 and 3.0)");
  std::string structured = write_npy("<f4", std::vector<std::int64_t>{2}, std::string(8, '\0'));
  structured.replace(structured.find("'<f4'"), 5, "[('a',");
  CHECK_FALSE(parse_npy(structured, error));
  CHECK(error == "its 'descr' is not a simple type string (structured arrays are not supported)");
}

TEST_CASE("array_from_npy: dtypes accepted per parameter, float32 rounded on load", "[sim]") {
  std::vector<std::int64_t> shape = {2};
  float f[2] = {1.0f + 0x1p-9f, -3.0f};
  std::string data(reinterpret_cast<const char *>(f), 8);
  std::string npy = write_npy("<f4", shape, data);
  std::string error;
  auto parsed = parse_npy(npy, error);
  REQUIRE(parsed);
  auto bf = array_from_npy(*parsed, shape, DType::BFloat16, error);
  REQUIRE(bf);
  CHECK(bf->values == std::vector<double>{1.0, -3.0});
  CHECK_FALSE(array_from_npy(*parsed, shape, DType::Int32, error));
  CHECK(error == "it holds '<f4' elements, but the parameter is int32[2]: expected '<i4'");
  CHECK_FALSE(array_from_npy(*parsed, std::vector<std::int64_t>{1, 2}, DType::Float32, error));
  CHECK(error == "it has shape [2], but the parameter is float32[1, 2]");
  // ml_dtypes' bfloat16 encoding round-trips through npy_from_array.
  HostArray a{{2}, DType::BFloat16, {0.5, -2.0}};
  std::string written = npy_from_array(a);
  auto back = parse_npy(written, error);
  REQUIRE(back);
  CHECK(back->descr == "<V2");
  auto values = array_from_npy(*back, shape, DType::BFloat16, error);
  REQUIRE(values);
  CHECK(values->values == a.values);
}

TEST_CASE("random_array: deterministic per seed, call and parameter", "[sim]") {
  std::vector<std::int64_t> shape = {4, 8};
  HostArray a = random_array(shape, DType::Float32, 1, 0, 0);
  CHECK(a.values == random_array(shape, DType::Float32, 1, 0, 0).values);
  CHECK(a.values != random_array(shape, DType::Float32, 2, 0, 0).values);
  CHECK(a.values != random_array(shape, DType::Float32, 1, 1, 0).values);
  CHECK(a.values != random_array(shape, DType::Float32, 1, 0, 1).values);
  for (double v : a.values)
    CHECK((v >= -1.0 && v < 1.0));
  for (double v : random_array(shape, DType::UInt8, 3, 0, 0).values)
    CHECK((v >= 0 && v < 16 && v == static_cast<int>(v)));
}
