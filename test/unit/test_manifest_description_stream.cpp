#include "nkicc/manifest/description_stream.h"
#include "nkicc/manifest/manifest.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

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

namespace {

/// A call's index and every location it holds (UINT32_MAX for one not set), in a fixed order.
std::vector<std::uint32_t> placed(const Call &call) {
  std::vector<std::uint32_t> out{static_cast<std::uint32_t>(call.index)};
  auto at = [&](const SourceLoc &loc) { out.push_back(loc.valid() ? loc.offset : UINT32_MAX); };
  at(call.loc);
  if (call.is_external()) {
    const ExternalCall &e = call.external();
    at(e.kernel_loc);
    at(e.grid_loc);
    at(e.nc_loc);
    for (const Argument &a : e.args) {
      at(a.loc);
      if (a.is_tensor())
        at(a.tensor().loc);
    }
    for (const auto &[name, a] : e.kwargs) {
      at(a.loc);
      if (a.is_tensor())
        at(a.tensor().loc);
    }
  } else {
    const InternalCall &ic = call.internal();
    at(ic.internal_loc);
    for (const TensorSpec &t : ic.operands)
      at(t.loc);
    for (const TensorSpec &t : ic.results)
      at(t.loc);
  }
  return out;
}

/// Reads `text` in one pass and checks that every call it hands over is the call the whole read
/// checks at the same place (its index, its locations, its kernel's name); the read's figures.
ReadFigures read_once_as_whole(const std::string &text) {
  TempDescription file;
  file.write(text);
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::vector<std::vector<std::uint32_t>> streamed;
  std::vector<std::string> kernel_names;
  auto kernel_name = [](const Call &c) { return c.is_external() ? c.external().kernel : c.internal().kernel_name; };
  ReadFigures figures;
  FileId id = sm.add_lazy_file(file.path);
  CHECK(read_description_once(
      sm, id, file.path, {}, diags, [](Manifest &&) { return true; },
      [&](const Call &c) {
        streamed.push_back(placed(c));
        kernel_names.push_back(kernel_name(c));
        return true;
      },
      [](std::string) { return true; }, &figures));
  CHECK(diags.diagnostics().empty());
  auto manifest = load_manifest(sm, sm.add_buffer("whole.json", text), {}, diags);
  REQUIRE(manifest);
  REQUIRE(manifest->calls.size() == streamed.size());
  for (std::size_t i = 0; i < streamed.size(); ++i) {
    INFO("call " << i);
    CHECK(streamed[i] == placed(manifest->calls[i]));
    CHECK(kernel_names[i] == kernel_name(manifest->calls[i]));
  }
  return figures;
}

} // namespace

TEST_CASE("a call whose bytes repeat an earlier call's is that call again, at its own place", "[manifest]") {
  // Calls with strings that hold brackets, quotes and escapes; copies on other lines, behind
  // other white space, across the reader's 32 KiB chunks; and a call too long to be looked at.
  const std::string internal =
      R"({"internal": "k", "kernel_name": "a}]\"{[\\", "operands": [{"shape": [8, 8], "dtype": "float32"}], )"
      R"("results": [{"shape": [8, 8], "dtype": "float32", "memory": "private_hbm"}], "attrs": {"t": [1, {"u": "}"}]}})";
  const std::string external =
      R"({"kernel": "f", "args": [{"shape": [4, 4], "dtype": "bfloat16"}, 3, "s}{\"q"], )"
      R"("kwargs": {"x": {"shape": [2], "dtype": "int32"}, "y": [1, 2]}, "grid": [2, 2], "nc": 2})";
  const std::string long_call =
      R"({"internal": "k", "operands": [], "attrs": {"pad": ")" + std::string(20000, 'x') + R"("}})";
  std::string text =
      R"({"nkicc": 1, "calls": [)" + internal + ",\n  " + external + ",\n" + internal + ",\t" + long_call;
  std::size_t copies = 0;
  for (int i = 0; i < 300; ++i, ++copies)
    text += (i % 3 ? ", " : ",\n    ") + (i % 2 ? internal : external);
  text += ",\n" + long_call + "\n], \"name\": \"m\"}\n";
  ReadFigures figures = read_once_as_whole(text);
  CHECK(figures.calls == 4 + copies + 1);
  // Parsed: the first internal and external calls, and both long calls; the rest are repeats.
  CHECK(figures.repeats == figures.calls - 4);
}

TEST_CASE("a description of distinct calls is looked at less, and fully again once calls repeat", "[manifest]") {
  // 600 distinct calls, then 1,600 copies of the first: after 256 calls without a repeat, one
  // call in sixteen is looked at; the copies it finds bring the share of repeats back over one
  // in eight, and from there every call is looked at.
  auto call = [](int rows) {
    return fmt::format(R"({{"internal": "k", "operands": [{{"shape": [{}, 8], "dtype": "float32"}}]}})", rows);
  };
  std::string text = R"({"nkicc": 1, "calls": [)";
  for (int i = 0; i < 2200; ++i)
    text += (i ? ",\n" : "") + call(i < 600 ? i + 1 : 1);
  text += "]}";
  ReadFigures figures = read_once_as_whole(text);
  CHECK(figures.calls == 2200);
  CHECK(figures.repeats > 900);
  CHECK(figures.repeats < 1600 - 500);
}

TEST_CASE("the two-pass read hands over repeated calls at their own places too", "[manifest]") {
  const std::string a =
      R"({"internal": "k", "kernel_name": "x\"}", "operands": [{"shape": [8, 8], "dtype": "float32"}]})";
  const std::string b = R"({"kernel": "f", "args": [{"shape": [4, 4], "dtype": "bfloat16"}], "grid": [2]})";
  std::string text = R"({"nkicc": 1, "calls": [)" + a;
  for (int i = 0; i < 40; ++i)
    text += (i % 4 ? ", " : ",\n  ") + (i % 3 ? a : b);
  text += "]}";
  TempDescription file;
  file.write(text);
  SourceManager sm;
  DiagnosticEngine diags(sm);
  FileId id = sm.add_lazy_file(file.path);
  auto scan = scan_description(sm, id, file.path, {}, diags);
  REQUIRE(scan);
  CHECK(scan->call_count == 41);
  CHECK(scan->kernels == std::vector<std::string>{"f"});
  CHECK(scan->internals == std::vector<std::string>{"k"});
  std::vector<std::vector<std::uint32_t>> streamed;
  ReadFigures figures;
  CHECK(stream_calls(
      sm, id, file.path, {}, *scan, diags, [&](const Call &c) { streamed.push_back(placed(c)); }, &figures));
  CHECK(figures.calls == 41);
  CHECK(figures.repeats == 39);
  auto manifest = load_manifest(sm, sm.add_buffer("whole.json", text), {}, diags);
  REQUIRE(manifest);
  REQUIRE(manifest->calls.size() == streamed.size());
  for (std::size_t i = 0; i < streamed.size(); ++i)
    CHECK(streamed[i] == placed(manifest->calls[i]));
  CHECK(diags.diagnostics().empty());
}
