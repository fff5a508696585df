#include "nkicc/cache/persistent_key.h"

#include "nkicc/support/sha256.h"
#include "nkicc/version.h"

#include <catch2/catch.hpp>

#include <set>

using namespace nkicc;

namespace {

std::vector<KeyFile> files(std::string contents = "def k(): pass\n") {
  return {{"kernels/k.py", "/src/kernels/k.py", sha256_hex(contents)}};
}

KeyContext ctx(std::string target, bool fallback = false, std::uint64_t max_instructions = 10'000'000) {
  return {std::move(target), fallback, max_instructions};
}

const KeyComponent *find(const PersistentKey &k, std::string_view name) {
  for (const KeyComponent &c : k.components)
    if (c.name == name)
      return &c;
  return nullptr;
}

} // namespace

TEST_CASE("an external key holds every component, each with its digest", "[cache]") {
  PersistentKey k = external_persistent_key("mm", "(((128, 512), 'bfloat16'),)", ctx("trn2"), files());
  std::vector<std::string> names;
  for (const KeyComponent &c : k.components)
    names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"format", "nkicc_version", "nkicc_build", "target", "limits", "kind",
                                          "kernel", "call", "file kernels/k.py"});
  CHECK(find(k, "target")->value == "trn2");
  CHECK(find(k, "limits")->value == "max_instructions=10000000");
  CHECK(k.kernel == "mm");
  CHECK(find(k, "format")->value == "1");
  CHECK(find(k, "nkicc_version")->value == NKICC_VERSION_STRING);
  CHECK(find(k, "call")->value == "mm:(((128, 512), 'bfloat16'),)");
  CHECK(find(k, "call")->digest == sha256_hex("mm:(((128, 512), 'bfloat16'),)"));
  CHECK(find(k, "file kernels/k.py")->value == "/src/kernels/k.py");
  CHECK(find(k, "file kernels/k.py")->digest == sha256_hex("def k(): pass\n"));
  CHECK(k.key == persistent_key_of(k.components));
  CHECK(k.key.size() == 64);
  // The same inputs give the same key.
  CHECK(external_persistent_key("mm", "(((128, 512), 'bfloat16'),)", ctx("trn2"), files()).key == k.key);
}

TEST_CASE("the build identity is this executable's build-id", "[cache]") {
  const std::string &id = nkicc_build_identity();
  // CMake links every libnkicc binary with --build-id=sha1: 40 hex digits.
  REQUIRE(id.starts_with("gnu-build-id:"));
  CHECK(id.size() == 13 + 40);
  CHECK(&nkicc_build_identity() == &id);
}

TEST_CASE("every component changes the key", "[cache]") {
  std::set<std::string> keys;
  std::string base = external_persistent_key("mm", "key", ctx("trn2"), files()).key;
  keys.insert(base);
  keys.insert(external_persistent_key("mm2", "key", ctx("trn2"), files()).key);
  keys.insert(external_persistent_key("mm", "key2", ctx("trn2"), files()).key);
  keys.insert(external_persistent_key("mm", "key", ctx("trn1"), files()).key);
  keys.insert(external_persistent_key("mm", "key", ctx("trn2"), files("def k(): return 1\n")).key);
  keys.insert(external_persistent_key("mm", "key", ctx("trn2"), {}).key);
  keys.insert(external_persistent_key("mm", "key", ctx("trn2", true), files()).key);
  keys.insert(external_persistent_key("mm", "key", ctx("trn2", false, 100), files()).key);
  std::vector<KeyFile> inline_source = files();
  inline_source[0].path.clear();
  keys.insert(external_persistent_key("mm", "key", ctx("trn2"), inline_source).key);
  std::vector<KeyFile> renamed = files();
  renamed[0].name = "kernels/other.py";
  keys.insert(external_persistent_key("mm", "key", ctx("trn2"), renamed).key);
  // Where the file lives does not matter, only its name in the description and its contents.
  std::vector<KeyFile> moved = files();
  moved[0].path = "/elsewhere/kernels/k.py";
  CHECK(external_persistent_key("mm", "key", ctx("trn2"), moved).key == base);
  CHECK(keys.size() == 10);
  PersistentKey inline_key = external_persistent_key("mm", "key", ctx("trn2"), inline_source);
  CHECK(inline_key.components.back().name == "source kernels/k.py");
  CHECK(inline_key.components.back().value == "inline");

  // The version and the build count through persistent_key_of: a changed digest of either
  // changes the key.
  PersistentKey k = external_persistent_key("mm", "key", ctx("trn2"), files());
  for (std::size_t i = 0; i < k.components.size(); ++i) {
    std::vector<KeyComponent> changed = k.components;
    changed[i].digest = sha256_hex("something else");
    INFO(changed[i].name);
    CHECK(persistent_key_of(changed) != k.key);
  }
}

TEST_CASE("component names and digests are delimited", "[cache]") {
  // Moving bytes between a name and a digest must not give the same key (ccache's `-I -O2`).
  std::vector<KeyComponent> a = {{"ab", "", "c"}}, b = {{"a", "", "bc"}};
  CHECK(persistent_key_of(a) != persistent_key_of(b));
  std::vector<KeyComponent> one = {{"x", "", "1"}, {"y", "", "2"}}, swapped = {{"y", "", "2"}, {"x", "", "1"}};
  CHECK(persistent_key_of(one) != persistent_key_of(swapped));
}

TEST_CASE("an internal key holds the per-run key and the registry entry", "[cache]") {
  InternalCall call;
  call.internal = "tiled_dve_transpose_10";
  call.kernel_name = "transpose";
  RegistryEntry entry;
  entry.func_name = "tiled_dve_transpose_10";
  entry.source = "/usr/share/nkicc/kernels/tiled_dve_transpose.py";
  // As the registry's checker fills them: the module name and the files by their names only.
  entry.module = "tiled_dve_transpose";
  entry.file_names = {"tiled_dve_transpose.py", "common.py"};
  entry.entry = "transpose_kernel";
  RegistryArg operand;
  entry.args.push_back(operand);
  RegistryArg attr;
  attr.kind = RegistryArg::Kind::Attr;
  attr.attr = "tile";
  attr.value = PyConstant::integer(32);
  entry.kwargs.emplace_back("tile", attr);
  CHECK(registry_entry_text(entry) == "func_name 'tiled_dve_transpose_10'\nmodule 'tiled_dve_transpose'\n"
                                      "file 'tiled_dve_transpose.py'\nfile 'common.py'\nentry 'transpose_kernel'\narg operand 0\nkwarg 'tile' attr 'tile' default 32\n"
                                      "results 1\n");
  PersistentKey k = internal_persistent_key(call, std::string(64, '5'), entry, ctx("trn2"), files());
  CHECK(k.kernel == "tiled_dve_transpose_10");
  CHECK(find(k, "kind")->value == "internal");
  CHECK(find(k, "call")->value == std::string(64, '5'));
  REQUIRE(find(k, "registry_entry"));
  // Another install folder keys the same; another default does not.
  RegistryEntry moved = entry;
  moved.source = "/opt/nkicc/share/nkicc/kernels/tiled_dve_transpose.py";
  CHECK(internal_persistent_key(call, std::string(64, '5'), moved, ctx("trn2"), files()).key == k.key);
  RegistryEntry other = entry;
  other.kwargs[0].second.value = PyConstant::integer(64);
  CHECK(internal_persistent_key(call, std::string(64, '5'), other, ctx("trn2"), files()).key != k.key);
}

TEST_CASE("differing components name what changed", "[cache]") {
  std::vector<std::pair<std::string, std::string>> a = {{"format", "1"}, {"call", "x"}, {"file a.py", "d1"}};
  std::vector<std::pair<std::string, std::string>> b = {{"format", "1"}, {"call", "y"}, {"file b.py", "d1"}};
  CHECK(differing_components(a, b) == std::vector<std::string>{"call", "file a.py", "file b.py"});
  CHECK(differing_components(a, a).empty());
}
