#include "nkicc/manifest/description_stream.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace nkicc;

namespace {

const char *const kCall = R"({"internal": "k", "operands": [{"shape": [8, 8], "dtype": "float32"}]})";

std::string description(int calls, const char *shape = "[8, 8]") {
  std::string call = kCall;
  call.replace(call.find("[8, 8]"), 6, shape);
  std::string text = R"({"nkicc": 1, "calls": [)";
  for (int i = 0; i < calls; ++i)
    text += (i ? ",\n  " : "\n  ") + call;
  return text + "\n]}\n";
}

struct TempDescription {
  std::string path;
  TempDescription() {
    char name[] = "/tmp/nkicc-description-XXXXXX";
    int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = name;
  }
  ~TempDescription() { ::unlink(path.c_str()); }
  void write(const std::string &text) const { std::ofstream(path, std::ios::binary | std::ios::trunc) << text; }
};

} // namespace

TEST_CASE("the second pass hands each call over in order", "[manifest]") {
  TempDescription file;
  file.write(description(3));
  SourceManager sm;
  DiagnosticEngine diags(sm);
  FileId id = sm.add_lazy_file(file.path);
  auto scan = scan_description(sm, id, file.path, {}, diags);
  REQUIRE(scan);
  CHECK(scan->call_count == 3);
  CHECK(scan->internals == std::vector<std::string>{"k"});
  CHECK(scan->kernels.empty());
  std::vector<std::size_t> seen;
  CHECK(stream_calls(sm, id, file.path, {}, *scan, diags, [&](const Call &c) { seen.push_back(c.index); }));
  CHECK(seen == std::vector<std::size_t>{0, 1, 2});
  CHECK(diags.diagnostics().empty());
}

TEST_CASE("a description changed between the two passes is an error, not a mixed run", "[manifest]") {
  TempDescription file;
  file.write(description(3));
  SourceManager sm;
  DiagnosticEngine diags(sm);
  FileId id = sm.add_lazy_file(file.path);
  auto scan = scan_description(sm, id, file.path, {}, diags);
  REQUIRE(scan);
  auto changed = [&](const std::string &text) {
    file.write(text);
    DiagnosticEngine d(sm);
    bool ok = stream_calls(sm, id, file.path, {}, *scan, d, [](const Call &) {});
    REQUIRE(d.diagnostics().size() == (ok ? 0u : 1u));
    if (!ok) {
      CHECK(d.diagnostics()[0].path == file.path);
      CHECK(d.diagnostics()[0].message == "the kernel description changed while nkicc was reading it; run nkicc again");
      CHECK(d.exit_code() != 0);
    }
    return ok;
  };
  CHECK(changed(description(3)));                        // the same bytes
  CHECK_FALSE(changed(description(3, "[8, 9]")));        // the same calls, other values
  CHECK_FALSE(changed(description(4)));                  // one call more
  CHECK_FALSE(changed(description(2)));                  // one call fewer
  CHECK_FALSE(changed("{\"nkicc\": 1, \"calls\": [\n")); // cut short
  CHECK_FALSE(changed(description(3) + " "));            // one byte more, after the value
}

TEST_CASE("a first pass that finds a problem says so, for the whole read to report it", "[manifest]") {
  TempDescription file;
  SourceManager sm;
  auto scans = [&](const std::string &text) {
    file.write(text);
    DiagnosticEngine diags(sm);
    return scan_description(sm, sm.add_lazy_file(file.path), file.path, {}, diags).has_value();
  };
  CHECK(scans(description(2)));
  CHECK_FALSE(scans(R"({"nkicc": 1, "calls": [{"internal": "k", "operands": [{"shpe": [8]}]}]})"));
  CHECK_FALSE(scans(R"({"nkicc": 2, "calls": []})"));
  CHECK_FALSE(scans(R"({"calls": []})"));
  CHECK_FALSE(scans(R"({"nkicc": 1, "calls": {}})"));
}
