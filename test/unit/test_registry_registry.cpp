#include "nkicc/registry/registry.h"

#include "nkicc/support/file_io.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

using namespace nkicc;

namespace {

const std::string kShipped = std::string(NKICC_SOURCE_DIR) + "/share/nkicc/kernels";

/// A folder under /tmp that is removed with everything in it when the test ends.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/nkicc-unit-registry-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  void write(const std::string &name, const std::string &text) const {
    std::string error;
    REQUIRE(write_file_atomically(path + "/" + name, text, error));
  }
};

struct Loaded {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  Registry registry;
  bool ok = false;

  explicit Loaded(const std::vector<std::string> &folders) { ok = registry.load(folders, sm, diags); }

  /// Every diagnostic as `line:col message`, in the order reported.
  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const Diagnostic &d : diags.diagnostics()) {
      if (!d.loc.valid()) {
        out.push_back(d.path + ": " + d.message);
        continue;
      }
      auto lc = sm.line_col(d.loc);
      out.push_back(std::to_string(lc.line) + ":" + std::to_string(lc.column) + " " + d.message);
    }
    return out;
  }
};

/// The errors of a registry.json with this text, in a folder that also holds `k.py`.
std::vector<std::string> errors_of(const std::string &json) {
  TempDir dir;
  dir.write("k.py", "def k(x):\n    return x\n");
  dir.write("registry.json", json);
  Loaded l({dir.path});
  CHECK_FALSE(l.ok);
  // The JSON reader's own errors (syntax, duplicate keys) are registry-json errors.
  for (const Diagnostic &d : l.diags.diagnostics()) {
    bool from_reader = d.message.rfind("duplicate key", 0) == 0 || d.message.rfind("unexpected", 0) == 0;
    CHECK(d.id == (from_reader ? "registry-json" : "registry"));
  }
  return l.errors();
}

/// The errors of a registry whose only entry, `k`, is `entry` written on line 2.
std::vector<std::string> entry_errors(const std::string &entry) {
  return errors_of("{\"nkicc_registry\": 1, \"kernels\": {\"k\":\n" + entry + "\n}}\n");
}

using Strings = std::vector<std::string>;

} // namespace

TEST_CASE("the shipped registry holds the four kernels and how their arguments marshal", "[registry]") {
  Loaded l({kShipped});
  INFO(Catch::Detail::stringify(l.errors()));
  REQUIRE(l.ok);
  CHECK(l.registry.files() == Strings{kShipped + "/registry.json"});
  CHECK(l.registry.names() == Strings{"blockwise_mm", "conv2d_pbp_0f1b_0i1o_01fb_experimental_1",
                                      "resize_nearest_fixed_dma_kernel", "tiled_dve_transpose_10"});
  using K = RegistryArg::Kind;

  // The public kernels' conventions: file names, entry points and parameters.
  const RegistryEntry *t = l.registry.find("tiled_dve_transpose_10");
  REQUIRE(t);
  CHECK(t->func_name == "tiled_dve_transpose_10");
  CHECK(t->source == kShipped + "/transpose.py");
  CHECK(t->module == "transpose");
  CHECK(t->files == Strings{kShipped + "/transpose.py", kShipped + "/common.py"});
  CHECK(t->file_names == Strings{"transpose.py", "common.py"});
  CHECK(t->folder == kShipped);
  CHECK(t->entry == "tiled_dve_transpose_10");
  CHECK(t->results == 1);
  REQUIRE(t->args.size() == 1);
  CHECK((t->args[0].kind == K::Operand && t->args[0].index == 0));
  REQUIRE(t->kwargs.size() == 1);
  CHECK(t->kwargs[0].first == "permutation");
  CHECK((t->kwargs[0].second.kind == K::Attr && t->kwargs[0].second.attr == "permutation"));
  CHECK(t->kwargs[0].second.value == PyConstant::tuple({PyConstant::integer(1), PyConstant::integer(0)}));

  const RegistryEntry *mm = l.registry.find("blockwise_mm");
  REQUIRE(mm);
  CHECK(mm->source == kShipped + "/blockwise_mm.py");
  CHECK(mm->files == Strings{kShipped + "/blockwise_mm.py", kShipped + "/common.py"});
  CHECK(mm->entry == "blockwise_mm");
  REQUIRE(mm->args.size() == 8);
  for (std::size_t i : {0, 1, 2, 3})
    CHECK((mm->args[i].kind == K::Operand && mm->args[i].index == i));
  CHECK((mm->args[4].kind == K::Attr && mm->args[4].attr == "block_size" && !mm->args[4].value));
  CHECK((mm->args[5].kind == K::Operand && mm->args[5].index == 4));
  CHECK((mm->args[6].kind == K::Operand && mm->args[6].index == 5));
  CHECK((mm->args[7].kind == K::Result && mm->args[7].index == 0));
  CHECK(mm->kwargs.empty());

  const RegistryEntry *rs = l.registry.find("resize_nearest_fixed_dma_kernel");
  REQUIRE(rs);
  CHECK(rs->source == kShipped + "/vision.py");
  CHECK(rs->files == Strings{kShipped + "/vision.py"});
  CHECK(rs->entry == "resize_nearest_fixed_dma_kernel");
  REQUIRE(rs->args.size() == 2);
  CHECK((rs->args[0].kind == K::Operand && rs->args[0].index == 0));
  CHECK((rs->args[1].kind == K::ResultShape && rs->args[1].index == 0));
  CHECK(rs->kwargs.empty());

  const RegistryEntry *cv = l.registry.find("conv2d_pbp_0f1b_0i1o_01fb_experimental_1");
  REQUIRE(cv);
  CHECK(cv->source == kShipped + "/conv.py");
  CHECK(cv->files == Strings{kShipped + "/conv.py", kShipped + "/common.py", kShipped + "/transpose.py"});
  REQUIRE(cv->args.size() == 5);
  CHECK((cv->args[0].kind == K::Operand && cv->args[0].index == 0));
  CHECK((cv->args[1].kind == K::Operand && cv->args[1].index == 1));
  CHECK((cv->args[2].kind == K::Result && cv->args[2].index == 0));
  CHECK((cv->args[3].kind == K::Attr && cv->args[3].attr == "padding"));
  CHECK((cv->args[4].kind == K::Attr && cv->args[4].attr == "stride"));

  CHECK_FALSE(l.registry.find("tiled_dve_transpose"));
  // Locations point into the registry.json for the driver's notes.
  auto lc = l.sm.line_col(t->loc);
  CHECK(l.sm.line_text(t->loc.file, lc.line).find("\"tiled_dve_transpose_10\": {") != std::string_view::npos);
  CHECK(l.sm.contents(t->source_loc.file).substr(t->source_loc.offset, 14) == "\"transpose.py\"");
  CHECK(l.sm.contents(t->entry_loc.file).substr(t->entry_loc.offset, 24) == "\"tiled_dve_transpose_10\"");
}

TEST_CASE("the new argument forms: shapes, output parameters, dtypes and objects", "[registry]") {
  TempDir dir;
  dir.write("k.py", "def k(*a, **k):\n    pass\n");
  dir.write("registry.json", R"({"nkicc_registry": 1, "kernels": {"k": {
    "source": "k.py", "entry": "k", "results": 2,
    "args": [{"operand_shape": 1}, {"result": 1}, {"result_shape": 0}, {"dtype": "bfloat16"},
             {"object": "Mode.FAST"}, {"object": "Pair", "fields": {"a": true, "b": [1]}}, {"result": 0}]}}})");
  Loaded l({dir.path});
  INFO(Catch::Detail::stringify(l.errors()));
  REQUIRE(l.ok);
  const RegistryEntry *e = l.registry.find("k");
  REQUIRE(e);
  using K = RegistryArg::Kind;
  REQUIRE(e->args.size() == 7);
  CHECK((e->args[0].kind == K::OperandShape && e->args[0].index == 1));
  CHECK((e->args[1].kind == K::Result && e->args[1].index == 1));
  CHECK((e->args[2].kind == K::ResultShape && e->args[2].index == 0));
  CHECK((e->args[3].kind == K::DType && e->args[3].dtype == DType::BFloat16));
  CHECK((e->args[4].kind == K::Object && e->args[4].object == "Mode.FAST" && !e->args[4].fields));
  CHECK((e->args[5].kind == K::Object && e->args[5].object == "Pair"));
  REQUIRE(e->args[5].fields);
  CHECK(*e->args[5].fields == std::vector<std::pair<std::string, PyConstant>>{
                                  {"a", PyConstant::boolean(true)}, {"b", PyConstant::list({PyConstant::integer(1)})}});
  CHECK((e->args[6].kind == K::Result && e->args[6].index == 0));
  // The "object" value's location is where a trace-time error about it points.
  CHECK(l.sm.contents(e->args[4].value_loc.file).substr(e->args[4].value_loc.offset, 11) == "\"Mode.FAST\"");
  CHECK(e->canonical_text() == "func_name 'k'\nmodule 'k'\nfile 'k.py'\nentry 'k'\narg operand_shape 1\narg result 1\n"
                               "arg result_shape 0\narg dtype bfloat16\narg object 'Mode.FAST'\n"
                               "arg object 'Pair' fields {'a': True, 'b': [1]}\narg result 0\nresults 2\n");
}

TEST_CASE("an entry's files: its modules and a package's .py files, each once", "[registry]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path + "/pkg/sub");
  dir.write("pkg/__init__.py", "");
  dir.write("pkg/sub/vision.py", "def k(x):\n    return x\n");
  dir.write("pkg/helpers.py", "");
  dir.write("pkg/notes.txt", "");
  dir.write("common.py", "");
  dir.write("registry.json", R"({"nkicc_registry": 1, "kernels": {"k": {
    "source": "pkg/sub/vision.py", "modules": ["common.py", "pkg/helpers.py"], "package": "pkg/", "entry": "k"}}})");
  Loaded l({dir.path});
  INFO(Catch::Detail::stringify(l.errors()));
  REQUIRE(l.ok);
  const RegistryEntry *e = l.registry.find("k");
  REQUIRE(e);
  CHECK(e->module == "pkg.sub.vision");
  CHECK(e->package == dir.path + "/pkg/");
  CHECK(e->file_names == Strings{"pkg/sub/vision.py", "common.py", "pkg/helpers.py", "pkg/__init__.py"});
  CHECK(e->files.size() == 4);
  // A package's __init__.py runs as the package.
  dir.write("registry.json", R"({"nkicc_registry": 1, "kernels": {"k": {
    "source": "pkg/__init__.py", "package": "pkg", "entry": "k"}}})");
  Loaded i({dir.path});
  REQUIRE(i.ok);
  CHECK(i.registry.find("k")->module == "pkg");
}

TEST_CASE("an entry's files are looked up along the search path up to its own folder", "[registry]") {
  TempDir first, second, own;
  own.write("k.py", "");
  own.write("common.py", "");
  first.write("common.py", "");
  second.write("k.py", "");
  own.write("registry.json", R"({"nkicc_registry": 1, "kernels": {"k": {"source": "k.py", "modules": ["common.py"],
    "entry": "k"}}})");
  // The earlier folders' files win; a folder after the entry's own is never searched.
  Loaded l({first.path, second.path, own.path});
  INFO(Catch::Detail::stringify(l.errors()));
  REQUIRE(l.ok);
  CHECK(l.registry.find("k")->files == Strings{second.path + "/k.py", first.path + "/common.py"});
  CHECK(l.registry.find("k")->folder == own.path);
  Loaded m({own.path, first.path});
  REQUIRE(m.ok);
  CHECK(m.registry.find("k")->files == Strings{own.path + "/k.py", own.path + "/common.py"});
}

TEST_CASE("every argument form, with defaults and constants", "[registry]") {
  TempDir dir;
  dir.write("k.py", "def k(a, b, c, d, e, f):\n    pass\n");
  dir.write("registry.json", R"({"nkicc_registry": 1, "kernels": {"k": {
    "source": "k.py", "entry": "k",
    "args": [{"operand": 2}, {"result_dim": [1, 3]}, {"attr": "a", "default": {"tuple": [1, 2]}},
             {"const": [1.5, null, "s", true]}],
    "kwargs": {"e": {"const": {"x": 1}}, "f": {"attr": "f"}},
    "results": 2}}})");
  Loaded l({dir.path});
  INFO(Catch::Detail::stringify(l.errors()));
  REQUIRE(l.ok);
  const RegistryEntry *e = l.registry.find("k");
  REQUIRE(e);
  CHECK(e->results == 2);
  using K = RegistryArg::Kind;
  REQUIRE(e->args.size() == 4);
  CHECK((e->args[0].kind == K::Operand && e->args[0].index == 2));
  CHECK((e->args[1].kind == K::ResultDim && e->args[1].index == 1 && e->args[1].dim == 3));
  CHECK((e->args[2].kind == K::Attr && e->args[2].attr == "a"));
  CHECK(e->args[2].value == PyConstant::tuple({PyConstant::integer(1), PyConstant::integer(2)}));
  CHECK(e->args[3].kind == K::Const);
  CHECK(e->args[3].value == PyConstant::list({PyConstant::floating(1.5), PyConstant::none(), PyConstant::str("s"),
                                              PyConstant::boolean(true)}));
  REQUIRE(e->kwargs.size() == 2);
  CHECK(e->kwargs[0].first == "e");
  CHECK(e->kwargs[0].second.value == PyConstant::make_dict({{"x", PyConstant::integer(1)}}));
  CHECK(e->kwargs[1].first == "f");
  CHECK_FALSE(e->kwargs[1].second.value);
  // Omitted fields take their defaults.
  dir.write("registry.json", R"({"nkicc_registry": 1, "kernels": {"k": {"source": "k.py", "entry": "k"}}})");
  Loaded m({dir.path});
  REQUIRE(m.ok);
  CHECK(m.registry.find("k")->args.empty());
  CHECK(m.registry.find("k")->kwargs.empty());
  CHECK(m.registry.find("k")->results == 1);
}

TEST_CASE("an earlier folder's func_name wins; the rest come from later folders", "[registry]") {
  TempDir dir;
  dir.write("mine.py", "def my_transpose(x, tile=32):\n    return x\n");
  dir.write("registry.json", R"({"nkicc_registry": 1, "kernels": {
    "tiled_dve_transpose_10": {"source": "mine.py", "entry": "my_transpose", "args": [{"operand": 0}]},
    "only_mine": {"source": "mine.py", "entry": "my_transpose"}}})");
  Loaded l({dir.path, kShipped});
  INFO(Catch::Detail::stringify(l.errors()));
  REQUIRE(l.ok);
  CHECK(l.registry.files() == Strings{dir.path + "/registry.json", kShipped + "/registry.json"});
  const RegistryEntry *t = l.registry.find("tiled_dve_transpose_10");
  REQUIRE(t);
  CHECK(t->source == dir.path + "/mine.py");
  CHECK(t->entry == "my_transpose");
  CHECK(t->kwargs.empty());
  CHECK(l.sm.name(t->loc.file) == dir.path + "/registry.json");
  REQUIRE(l.registry.find("blockwise_mm"));
  CHECK(l.registry.find("blockwise_mm")->source == kShipped + "/blockwise_mm.py");
  CHECK(l.registry.names() == Strings{"blockwise_mm", "conv2d_pbp_0f1b_0i1o_01fb_experimental_1", "only_mine",
                                      "resize_nearest_fixed_dma_kernel", "tiled_dve_transpose_10"});

  // In the other order the shipped entry wins.
  Loaded r({kShipped, dir.path});
  REQUIRE(r.ok);
  CHECK(r.registry.find("tiled_dve_transpose_10")->source == kShipped + "/transpose.py");
  CHECK(r.registry.find("only_mine")->source == dir.path + "/mine.py");
}

TEST_CASE("a folder without registry.json is skipped; a folder given twice is read once", "[registry]") {
  TempDir empty;
  Loaded l({empty.path, empty.path + "/does-not-exist", kShipped, kShipped + "/"});
  INFO(Catch::Detail::stringify(l.errors()));
  REQUIRE(l.ok);
  CHECK(l.diags.diagnostics().empty());
  CHECK(l.registry.files() == Strings{kShipped + "/registry.json"});
  CHECK(l.registry.names().size() == 4);

  Loaded none({empty.path});
  CHECK(none.ok);
  CHECK(none.registry.names().empty());
  CHECK(none.registry.files().empty());
}

TEST_CASE("a registry.json that cannot be read is an I/O error", "[registry]") {
  TempDir dir;
  std::filesystem::create_directory(dir.path + "/registry.json");
  Loaded l({dir.path});
  CHECK_FALSE(l.ok);
  CHECK(l.errors() == Strings{dir.path + "/registry.json: cannot read internal-kernel registry: is a directory"});
  CHECK(l.diags.exit_code() == 3);
}

TEST_CASE("registry errors: the document and its version", "[registry]") {
  CHECK(errors_of("[]") == Strings{"1:1 a registry must be a JSON object, not an array"});
  CHECK(errors_of("{}") == Strings{"1:1 missing required field 'nkicc_registry' (the registry format version, 1)",
                                   "1:1 missing required field 'kernels' (an object of kernel entries by func_name)"});
  CHECK(errors_of(R"({"nkicc_registry": 2, "kernels": {}})") ==
        Strings{"1:20 /nkicc_registry: unsupported registry version 2; this nkicc reads version 1"});
  CHECK(errors_of(R"({"nkicc_registry": "1", "kernels": {}})") ==
        Strings{"1:20 /nkicc_registry: expected an integer, found a string"});
  CHECK(errors_of(R"({"nkicc_registry": 1.0, "kernels": {}})") ==
        Strings{"1:20 /nkicc_registry: expected an integer, found a fractional number"});
  // Sorted into document order: the missing field is reported at the object's start.
  CHECK(errors_of(R"({"nkicc_registry": 1, "kernel": {}})") ==
        Strings{"1:1 missing required field 'kernels' (an object of kernel entries by func_name)",
                "1:23 unknown field 'kernel'; did you mean 'kernels'? (accepted: 'nkicc_registry', 'kernels')"});
  CHECK(errors_of(R"({"nkicc_registry": 1, "kernels": []})") ==
        Strings{"1:34 /kernels: expected an object of kernel entries by func_name, found an array"});
  // The JSON reader finds duplicate keys, func_names included.
  CHECK(errors_of("{\"nkicc_registry\": 1, \"kernels\": {\"k\": {}, \"k\": {}}}") ==
        Strings{"1:44 duplicate key 'k' in object"});
  CHECK(errors_of("{\"nkicc_registry\": 1,") ==
        Strings{"1:22 unexpected end of file: expected a string key in object"});
}

TEST_CASE("registry errors: func_names and entries", "[registry]") {
  CHECK(errors_of(R"({"nkicc_registry": 1, "kernels": {"": {"source": "k.py", "entry": "k"}}})") ==
        Strings{"1:35 /kernels/: a func_name must not be empty"});
  // A func_name in the pointer is escaped for the terminal, then for RFC 6901.
  CHECK(errors_of("{\"nkicc_registry\": 1, \"kernels\": {\"a/b~\\u001b\": \"x\"}}") ==
        Strings{"1:49 /kernels/a~1b~0\\x1b: expected a kernel entry object, found a string"});
  CHECK(entry_errors(R"("x")") == Strings{"2:1 /kernels/k: expected a kernel entry object, found a string"});
  CHECK(entry_errors("{}") ==
        Strings{"2:1 /kernels/k: a kernel entry needs a 'source' (its NKI file, relative to the registry's folder)",
                "2:1 /kernels/k: a kernel entry needs an 'entry' (the function to call in its source)"});
  CHECK(entry_errors(R"({"sorce": "k.py", "entry": "k"})") ==
        Strings{"2:1 /kernels/k: a kernel entry needs a 'source' (its NKI file, relative to the registry's folder)",
                "2:2 /kernels/k: unknown field 'sorce'; did you mean 'source'? "
                "(accepted: 'source', 'modules', 'package', 'entry', 'args', 'kwargs', 'results')"});
  CHECK(entry_errors(R"({"source": 1, "entry": "k"})") ==
        Strings{"2:12 /kernels/k/source: expected a string, found a number"});
  CHECK(entry_errors(R"({"source": "", "entry": "k"})") ==
        Strings{"2:12 /kernels/k/source: a source path must not be empty"});
  CHECK(entry_errors(R"({"source": "k.py", "entry": "k-1"})") ==
        Strings{"2:29 /kernels/k/entry: entry 'k-1' is not a Python function name"});
  CHECK(entry_errors(R"({"source": "k.py", "entry": ""})") ==
        Strings{"2:29 /kernels/k/entry: an entry function name must not be empty"});
  CHECK(entry_errors(R"({"source": "k.py", "entry": ["k"]})") ==
        Strings{"2:29 /kernels/k/entry: expected a string, found an array"});
  // The fields below follow a common start: {"source": "k.py", "entry": "k", (33 columns).
  CHECK(entry_errors(R"({"source": "k.py", "entry": "k", "results": 0})") ==
        Strings{"2:45 /kernels/k/results: the result count must be positive, found 0"});
  CHECK(entry_errors(R"({"source": "k.py", "entry": "k", "results": -1})") ==
        Strings{"2:45 /kernels/k/results: the result count must be positive, found -1"});
  CHECK(entry_errors(R"({"source": "k.py", "entry": "k", "results": "1"})") ==
        Strings{"2:45 /kernels/k/results: expected an integer, found a string"});
}

TEST_CASE("registry errors: positional arguments", "[registry]") {
  auto args = [](const std::string &text) {
    return entry_errors(R"({"source": "k.py", "entry": "k", "args": )" + text + "}");
  };
  const std::string forms =
      "({\"operand\": i}, {\"result\": i}, {\"attr\": name}, {\"const\": value}, ...; see docs/registry.md)";
  CHECK(args("{}") == Strings{"2:42 /kernels/k/args: expected an array of arguments, found an object"});
  CHECK(args("[1]") == Strings{"2:43 /kernels/k/args/0: expected an argument " + forms + ", found a number"});
  CHECK(args("[{}]") ==
        Strings{"2:43 /kernels/k/args/0: an argument needs one of 'operand', 'operand_shape', 'result', "
                "'result_shape', 'result_dim', 'attr', 'const', 'dtype', 'object'"});
  CHECK(args(R"([{"operan": 0}])") == Strings{"2:44 /kernels/k/args/0: unknown field 'operan'; did you mean 'operand'? "
                                              "(accepted: 'operand', 'operand_shape', 'result', 'result_shape', 'result_dim', 'attr', 'const', "
                "'dtype', 'object', 'default', 'fields')"});
  CHECK(args(R"([{"operand": 0, "attr": "a"}])") ==
        Strings{"2:58 /kernels/k/args/0: an argument has one form, found both 'operand' and 'attr'"});
  CHECK(args(R"([{"operand": 0, "default": 1}])") ==
        Strings{"2:69 /kernels/k/args/0/default: 'default' is only for an 'attr' argument"});
  CHECK(args(R"([{"operand": -1}])") ==
        Strings{"2:55 /kernels/k/args/0/operand: an operand index must not be negative, found -1"});
  CHECK(args(R"([{"operand": 1.5}])") ==
        Strings{"2:55 /kernels/k/args/0/operand: expected an integer, found a fractional number"});
  CHECK(args(R"([{"operand": 99999999999999999999}])") ==
        Strings{"2:55 /kernels/k/args/0/operand: integer 99999999999999999999 does not fit in 64 bits"});
  CHECK(args(R"([{"result_dim": 1}])") ==
        Strings{"2:58 /kernels/k/args/0/result_dim: expected [result index, dimension] (an array of two integers), "
                "found a number"});
  CHECK(args(R"([{"result_dim": [0, 1, 2]}])") ==
        Strings{"2:58 /kernels/k/args/0/result_dim: expected [result index, dimension], found 3 items"});
  CHECK(args(R"([{"result_dim": [0]}])") ==
        Strings{"2:58 /kernels/k/args/0/result_dim: expected [result index, dimension], found 1 item"});
  CHECK(args(R"([{"result_dim": [-1, 0]}])") ==
        Strings{"2:59 /kernels/k/args/0/result_dim/0: a result index must not be negative, found -1"});
  CHECK(args(R"([{"result_dim": [0, -2]}])") ==
        Strings{"2:62 /kernels/k/args/0/result_dim/1: a dimension must not be negative, found -2"});
  CHECK(args(R"([{"result_dim": [1, 0]}])") ==
        Strings{"2:59 /kernels/k/args/0/result_dim/0: result index 1 is out of range: the entry produces 1 result"});
  CHECK(entry_errors(R"({"source": "k.py", "entry": "k", "results": 2, "args": [{"result_dim": [2, 0]}]})") ==
        Strings{"2:73 /kernels/k/args/0/result_dim/0: result index 2 is out of range: the entry produces 2 results"});
  CHECK(args(R"([{"attr": ""}])") == Strings{"2:52 /kernels/k/args/0/attr: an attribute name must not be empty"});
  CHECK(args(R"([{"attr": 3}])") == Strings{"2:52 /kernels/k/args/0/attr: expected a string, found a number"});
  CHECK(args(R"([{"attr": "a", "default": {"tuple": 1}}])") ==
        Strings{"2:78 /kernels/k/args/0/default/tuple: expected an array of tuple items, found a number"});
  CHECK(args(R"([{"const": [1, 9e308]}])") ==
        Strings{"2:57 /kernels/k/args/0/const/1: number 9e308 is out of the range of a 64-bit float (JSON has no "
                "infinity)"});
  // Each argument is checked: both errors are reported, in order.
  CHECK(args(R"([{"operand": -1}, {"const": 1, "default": 2}])") ==
        Strings{"2:55 /kernels/k/args/0/operand: an operand index must not be negative, found -1",
                "2:84 /kernels/k/args/1/default: 'default' is only for an 'attr' argument"});
}

TEST_CASE("registry errors: keyword arguments", "[registry]") {
  auto kwargs = [](const std::string &text) {
    return entry_errors(R"({"source": "k.py", "entry": "k", "kwargs": )" + text + "}");
  };
  CHECK(kwargs("[]") == Strings{"2:44 /kernels/k/kwargs: expected an object of keyword arguments, found an array"});
  CHECK(kwargs(R"({"a-b": {"operand": 0}})") ==
        Strings{"2:45 /kernels/k/kwargs/a-b: keyword 'a-b' is not a Python parameter name"});
  CHECK(kwargs(R"({"1x": {"operand": 0}})") ==
        Strings{"2:45 /kernels/k/kwargs/1x: keyword '1x' is not a Python parameter name"});
  CHECK(kwargs(R"({"t": {"atr": "t"}})") ==
        Strings{"2:51 /kernels/k/kwargs/t: unknown field 'atr'; did you mean 'attr'? "
                "(accepted: 'operand', 'operand_shape', 'result', 'result_shape', 'result_dim', 'attr', 'const', "
                "'dtype', 'object', 'default', 'fields')"});
  CHECK(kwargs(R"({"t": 5})") ==
        Strings{"2:50 /kernels/k/kwargs/t: expected an argument ({\"operand\": i}, {\"result\": i}, {\"attr\": "
                "name}, {\"const\": value}, ...; see docs/registry.md), found a number"});
  CHECK(kwargs(R"({"t": {"attr": "t"}, "t": {"attr": "u"}})") == Strings{"2:65 duplicate key 't' in object"});
}

TEST_CASE("a registry source that is not in the folder is an I/O error at its value", "[registry]") {
  TempDir dir;
  dir.write("registry.json", "{\"nkicc_registry\": 1, \"kernels\": {\n"
                             "\"a\": {\"source\": \"nope.py\", \"entry\": \"k\"},\n"
                             "\"b\": {\"source\": \".\", \"entry\": \"k\"}}}\n");
  Loaded l({dir.path});
  CHECK_FALSE(l.ok);
  CHECK(
      l.errors() ==
      Strings{"2:17 /kernels/a/source: cannot read kernel source '" + dir.path + "/nope.py': no such file or directory",
              "3:17 /kernels/b/source: cannot read kernel source '" + dir.path + "/.': is a directory"});
  for (const Diagnostic &d : l.diags.diagnostics()) {
    CHECK(d.error_class == ErrorClass::IO);
    CHECK(d.id == "registry");
  }
  CHECK(l.diags.exit_code() == 3);
  CHECK_FALSE(l.registry.find("a"));
}

TEST_CASE("every folder's errors are reported, and a broken file adds no entries", "[registry]") {
  TempDir first, second;
  first.write("k.py", "");
  second.write("k.py", "");
  first.write("registry.json", R"({"nkicc_registry": 1, "kernels": {"ok": {"source": "k.py", "entry": "k"},
"bad": {"source": "k.py", "entry": "k", "results": 0}}})");
  second.write("registry.json", R"({"nkicc_registry": 3, "kernels": {}})");
  Loaded l({first.path, second.path, kShipped});
  CHECK_FALSE(l.ok);
  CHECK(l.errors() == Strings{"2:52 /kernels/bad/results: the result count must be positive, found 0",
                              "1:20 /nkicc_registry: unsupported registry version 3; this nkicc reads version 1"});
  CHECK(l.sm.name(l.diags.diagnostics()[1].loc.file) == second.path + "/registry.json");
  CHECK(l.diags.exit_code() == 1);
  CHECK_FALSE(l.registry.find("ok"));
  CHECK(l.registry.find("blockwise_mm"));
  CHECK(l.registry.files() ==
        Strings{first.path + "/registry.json", second.path + "/registry.json", kShipped + "/registry.json"});
}
