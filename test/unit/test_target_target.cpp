#include "nkicc/target/target.h"

#include <catch2/catch.hpp>

using namespace nkicc;

TEST_CASE("the per-target table of SPEC §5", "[target]") {
  const TargetInfo *trn2 = find_target("trn2");
  REQUIRE(trn2);
  CHECK(trn2->class_name == "Trn2");
  CHECK(trn2->num_neuroncores_per_sengine == 2);
  CHECK(trn2->sbuf_bytes_per_partition == 212984);
  CHECK(trn2->psum_bytes_per_partition == 16384);
  CHECK(find_target("gen3") == trn2);
  CHECK(find_target("trn1")->num_neuroncores_per_sengine == 1);
  CHECK(find_target("trn3")->sbuf_bytes_per_partition == 245752);
  CHECK(find_target("inf2")->class_name == "Inf2");
  CHECK_FALSE(find_target("trn1")->multi_core_spmd);
  CHECK(find_target("trn3")->multi_core_spmd);
  CHECK(find_target("trn4") == nullptr);
}

TEST_CASE("DMI product names map to their instance family", "[target]") {
  CHECK(target_from_product_name("trn1.32xlarge") == find_target("trn1"));
  CHECK(target_from_product_name("trn1n.32xlarge") == find_target("trn1"));
  CHECK(target_from_product_name("trn2.48xlarge") == find_target("trn2"));
  CHECK(target_from_product_name("inf2.xlarge") == find_target("inf2"));
  CHECK(target_from_product_name("m5.large") == nullptr);
  CHECK(target_from_product_name("") == nullptr);
}

TEST_CASE("resolution order: flag, file, env, DMI, fallback", "[target]") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  TargetInputs in;
  in.dmi_path = "/nonexistent/product_name";
  in.env_override = "trn3";
  in.file_value = "inf2";
  in.flag = "trn2";
  CHECK(resolve_target(in, diags)->info == find_target("trn2"));
  in.flag.reset();
  CHECK(resolve_target(in, diags)->source == TargetSource::File);
  in.file_value.reset();
  CHECK(resolve_target(in, diags)->info == find_target("trn3"));
  in.env_override.reset();
  auto fallback = resolve_target(in, diags);
  REQUIRE(fallback);
  CHECK(fallback->is_fallback);
  CHECK(fallback->info == find_target("trn1"));
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(diags.diagnostics()[0].message == "Unable to read MLA target. Assuming cross compile to trn1.");
  CHECK_FALSE(diags.has_errors());
  in.env_override = "trn9";
  CHECK_FALSE(resolve_target(in, diags));
  CHECK(diags.has_errors());
}
