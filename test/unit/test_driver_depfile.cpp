#include "nkicc/driver/depfile.h"

#include <catch2/catch.hpp>

using namespace nkicc;

TEST_CASE("paths are normalized lexically, relative ones stay relative", "[depfile]") {
  CHECK(normalize_path("desc/../kernels/x.py") == "kernels/x.py");
  CHECK(normalize_path("./k.json") == "k.json");
  CHECK(normalize_path("a/./b//c.py") == "a/b/c.py");
  CHECK(normalize_path("../up/x.py") == "../up/x.py");
  CHECK(normalize_path("/abs/dir/../x.py") == "/abs/x.py");
  CHECK(normalize_path("a/..") == ".");
  CHECK(normalize_path("") == "");
}

TEST_CASE("make's special characters are escaped", "[depfile]") {
  CHECK(make_escape("my kernel.py") == "my\\ kernel.py");
  CHECK(make_escape("a#b:c$d\\e") == "a\\#b\\:c$$d\\\\e");
}

TEST_CASE("a rule lists each prerequisite once, normalized", "[depfile]") {
  DepfileRule rule;
  rule.targets = {"out.bir"};
  rule.prerequisites = {"k.json", "desc/../kernels/a b.py", "kernels/a b.py", "./k.json"};
  CHECK(depfile_text(rule) == "out.bir: \\\n  k.json \\\n  kernels/a\\ b.py\n");
}

TEST_CASE("phony rules cover every prerequisite but the main file", "[depfile]") {
  DepfileRule rule;
  rule.targets = {"obj/$(NAME).bir", "stamp"};
  rule.prerequisites = {"./k.json", "kernels/a.py", "registry/registry.json"};
  rule.main_file = "k.json";
  rule.phony = true;
  CHECK(depfile_text(rule) == "obj/$(NAME).bir stamp: \\\n  k.json \\\n  kernels/a.py \\\n  registry/registry.json\n"
                              "\nkernels/a.py:\n\nregistry/registry.json:\n");
}

TEST_CASE("a rule without prerequisites is still a rule", "[depfile]") {
  DepfileRule rule;
  rule.targets = {"out"};
  rule.phony = true;
  CHECK(depfile_text(rule) == "out:\n");
}
