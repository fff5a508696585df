#include "nkicc/cache/cache_key.h"
#include "nkicc/support/sha256.h"

#include <catch2/catch.hpp>

using namespace nkicc;

namespace {

TensorSpec tensor(std::vector<std::int64_t> shape, DType dtype) {
  TensorSpec t;
  t.shape = shape;
  t.access_shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

} // namespace

TEST_CASE("internal_key_string is the text of the key components, written directly", "[cache]") {
  const TargetInfo &trn2 = *find_target("trn2");
  InternalCall call;
  call.internal = "tiled_dve_transpose_10";
  call.kernel_name = "tiled_dve_transpose_10";
  call.op = "Transpose";
  call.operands = {tensor({64, 32}, DType::BFloat16)};
  call.results = {tensor({32, 64}, DType::BFloat16)};
  call.attrs = PyConstant::make_dict({{"tile", PyConstant::integer(32)}});
  std::string text = internal_key_string(call, trn2);
  CHECK(text == key_components_string(internal_key_components(call, trn2)));
  CHECK(text == "[('attrs', {'tile': 32}), ('kernel_name', 'tiled_dve_transpose_10'), ('num_neuroncores', " +
                    std::to_string(trn2.num_neuroncores_per_sengine) +
                    "), ('operands', {'shapes': [(64, 32)], 'dtypes': ['bfloat16']}), ('results', {'shapes': "
                    "[(32, 64)], 'dtypes': ['bfloat16']}), ('target', '" +
                    std::string(trn2.class_name) + "')]");

  // One-element and empty shapes, several tensors, no tensors, quotes and non-ASCII in strings,
  // nested attrs, and the resize family's out_shape.
  call.kernel_name = "k'é\"\x01";
  call.operands = {tensor({7}, DType::Float32), tensor({}, DType::Int8), tensor({1, 2, 3}, DType::Float8E4M3)};
  call.results = {};
  call.attrs = PyConstant::make_dict({{"axes", PyConstant::tuple({PyConstant::integer(-1)})},
                                      {"scale", PyConstant::floating(0.5)},
                                      {"mode", PyConstant::str("nearest")},
                                      {"nested", PyConstant::list({PyConstant::none(), PyConstant::boolean(true)})}});
  CHECK(internal_key_string(call, trn2) == key_components_string(internal_key_components(call, trn2)));
  call.op = "ResizeNearest";
  call.results = {tensor({2, 128, 128}, DType::Float16)};
  CHECK(internal_key_string(call, trn2) == key_components_string(internal_key_components(call, trn2)));
  CHECK(internal_key_string(call, trn2).find("('out_shape', (2, 128, 128))") != std::string::npos);
  for (const char *name : {"trn1", "inf2"}) {
    const TargetInfo *target = find_target(name);
    REQUIRE(target);
    CHECK(internal_key_string(call, *target) == key_components_string(internal_key_components(call, *target)));
  }
}

TEST_CASE("the key's text and digest append to what a line already holds", "[cache]") {
  const TargetInfo &trn2 = *find_target("trn2");
  InternalCall call;
  call.kernel_name = "transpose";
  call.operands = {tensor({64, 32}, DType::BFloat16)};
  call.attrs = PyConstant::make_dict({{"tile", PyConstant::integer(32)}});
  std::string line = "components: ";
  append_internal_key_string(line, call, trn2);
  CHECK(line == "components: " + internal_key_string(call, trn2));
  // The digest of bytes inside the string it is appended to (nkicc key hashes the components it
  // just wrote), however large the string grows meanwhile.
  std::string out = "abc";
  append_sha256_hex(out, std::string_view(out));
  CHECK(out == "abcba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string big(1000, 'x');
  std::string expected = big + sha256_hex(big);
  big.shrink_to_fit();
  append_sha256_hex(big, std::string_view(big));
  CHECK(big == expected);
  CHECK(cache_key_of("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
