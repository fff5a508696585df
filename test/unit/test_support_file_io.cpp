#include "nkicc/support/file_io.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <dirent.h>
#include <unistd.h>

using namespace nkicc;

TEST_CASE("path helpers", "[support]") {
  CHECK(parent_dir("a/b/c.json") == "a/b");
  CHECK(parent_dir("c.json").empty());
  CHECK(parent_dir("/c.json") == "/");
  CHECK(file_stem("a/b/kernel.json") == "kernel");
  CHECK(file_stem("noext") == "noext");
  CHECK(file_stem(".hidden") == ".hidden");
  CHECK(join_path("a", "b.py") == "a/b.py");
  CHECK(join_path("a/", "b.py") == "a/b.py");
  CHECK(join_path("", "b.py") == "b.py");
  CHECK(join_path("a", "/abs.py") == "/abs.py");
}

TEST_CASE("atomic writes replace the file and leave no temporary behind", "[support]") {
  char tmpl[] = "/tmp/nkicc-unit-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string path = dir + "/out.txt";
  std::string error;
  REQUIRE(write_file_atomically(path, "first", error));
  REQUIRE(write_file_atomically(path, "second", error));
  auto text = read_file(path, error);
  REQUIRE(text);
  CHECK(*text == "second");
  // A folder that does not exist: an error, nothing written.
  CHECK_FALSE(write_file_atomically(dir + "/missing/out.txt", "x", error));
  CHECK(error.find("cannot create a temporary file") != std::string::npos);
  int entries = 0;
  DIR *d = ::opendir(dir.c_str());
  while (dirent *e = ::readdir(d))
    entries += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
  ::closedir(d);
  CHECK(entries == 1);
  CHECK_FALSE(read_file(dir, error));
  CHECK(error == "is a directory");
  CHECK_FALSE(read_file(dir + "/none", error));
  CHECK(error == "no such file or directory");
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("same_file compares files, not spellings", "[support]") {
  char tmpl[] = "/tmp/nkicc-unit-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string error;
  REQUIRE(write_file_atomically(dir + "/a.json", "{}", error));
  REQUIRE(::symlink((dir + "/a.json").c_str(), (dir + "/link.json").c_str()) == 0);
  CHECK(same_file(dir + "/a.json", dir + "/a.json"));
  CHECK(same_file(dir + "/a.json", dir + "/./a.json"));
  CHECK(same_file(dir + "/link.json", dir + "/a.json"));
  CHECK_FALSE(same_file(dir + "/a.json", dir + "/b.json"));
  // Neither exists: the normalized paths decide.
  CHECK(same_file(dir + "/x/../b.json", dir + "/b.json"));
  CHECK_FALSE(same_file(dir + "/b.json", dir + "/c.json"));
  CHECK_FALSE(same_file("-", "-"));
  ::unlink((dir + "/link.json").c_str());
  ::unlink((dir + "/a.json").c_str());
  ::rmdir(dir.c_str());
}
