#include "nkicc/hlo/hlo.h"

#include <catch2/catch.hpp>

using namespace nkicc;
using namespace nkicc::hlo;

TEST_CASE("HLO custom-calls are found with their target and backend_config", "[hlo]") {
  std::string text = "HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n"
                     "\n"
                     "ENTRY %main (p0: f32[4]) -> f32[4] {\n"
                     "  %p0 = f32[4]{0} parameter(0)\n"
                     "  %custom-call.1 = f32[4]{0} custom-call(f32[4]{0} %p0), custom_call_target=\"AwsNeuronNkiKernel\", "
                     "backend_config=\"QUJD\"\n"
                     "  ROOT %cc.2 = f32[4]{0} custom-call(f32[4]{0} %custom-call.1), custom_call_target=\"Other\", "
                     "metadata={op_name=\"x\"}, backend_config=\"{\\\"a\\\": 1}\"\n"
                     "}\n";
  auto sites = find_custom_calls(text);
  REQUIRE(sites.size() == 2);
  CHECK(sites[0].name == "%custom-call.1");
  CHECK(sites[0].target == "AwsNeuronNkiKernel");
  CHECK(sites[0].has_config);
  CHECK(sites[0].config == "QUJD");
  CHECK(text.substr(sites[0].config_offset, 4) == "QUJD");
  CHECK(sites[1].name == "%cc.2");
  CHECK(sites[1].target == "Other");
  CHECK(sites[1].config == "{\\\"a\\\": 1}");
  CHECK(is_nki_custom_call_target("AwsNeuronCustomNativeKernel"));
  CHECK_FALSE(is_nki_custom_call_target("Other"));
}

TEST_CASE("StableHLO custom_call ops are found in generic and pretty form", "[hlo]") {
  std::string text = "module @m {\n"
                     "  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "    %0 = \"stablehlo.custom_call\"(%arg0) {api_version = 2 : i32, backend_config = \"QUJD\", "
                     "call_target_name = \"AwsNeuronCustomNativeKernel\", has_side_effect = false} : (tensor<4xf32>) -> "
                     "tensor<4xf32>\n"
                     "    %1 = stablehlo.custom_call @AwsNeuronNkiKernel(%0) {backend_config = \"REVG\"} : "
                     "(tensor<4xf32>) -> tensor<4xf32>\n"
                     "    \"stablehlo.custom_call\"(%1) {call_target_name = \"effect\"} : (tensor<4xf32>) -> ()\n"
                     "    \"func.return\"(%1) : (tensor<4xf32>) -> ()\n"
                     "  }\n"
                     "}\n";
  auto sites = find_custom_calls(text);
  REQUIRE(sites.size() == 3);
  CHECK(sites[0].name == "%0");
  CHECK(sites[0].target == "AwsNeuronCustomNativeKernel");
  CHECK(sites[0].config == "QUJD");
  CHECK(sites[1].name == "%1");
  CHECK(sites[1].target == "AwsNeuronNkiKernel");
  CHECK(sites[1].config == "REVG");
  CHECK(sites[2].name.empty());
  CHECK(sites[2].target == "effect");
  CHECK_FALSE(sites[2].has_config);
}

TEST_CASE("text without custom-calls has no sites", "[hlo]") {
  CHECK(find_custom_calls("").empty());
  CHECK(find_custom_calls("{\"nkicc\": 1}").empty());
  CHECK(find_custom_calls("  %x = f32[] custom_call_target=\"AwsNeuronNkiKernel\"\n").empty());
}
