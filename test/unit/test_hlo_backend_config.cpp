#include "nkicc/hlo/hlo.h"

#include "nkicc/bir/bir.h"
#include "nkicc/support/source_manager.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace nkicc;
using namespace nkicc::hlo;

namespace {

/// A hand-built specialization: a matmul-like kernel with constants, returning one tensor.
struct Fixture {
  SourceManager sources;
  trace::KernelTrace trace;
  std::string blob;
  HloCall call;

  Fixture() {
    ir::Function &fn = trace.function;
    fn.name = "k\u00e9rnel";
    fn.matmul_mac_count = 1 << 20;
    ir::Tensor a;
    a.name = "a";
    a.role = ir::TensorRole::Input;
    a.memory = ir::Memory::SharedHbm;
    a.shape = {128, 512};
    ir::Tensor out = a;
    out.name = "out";
    out.role = ir::TensorRole::Output;
    fn.tensors = {a, out};
    fn.input_names = {"a"};
    fn.output_names = {"out"};
    trace.returns = {{"out", {128, 512}, DType::BFloat16}};
    trace.constant_values = {{"scale", PyConstant::floating(0.1)},
                             {"tag", PyConstant::str("caf\u00e9 \"\xf0\x9f\x98\x80\"\n")},
                             {"dims", PyConstant::tuple({PyConstant::integer(1), PyConstant::none()})},
                             {"big", PyConstant::floating(1e22)},
                             {"inf", PyConstant::floating(INFINITY)}};
    blob = bir::write_kernel(fn, "trn2", sources);
    call.func_name = "k\u00e9rnel";
    call.grid = {2, 1};
    call.opts = {{"opt_level", PyConstant::integer(2)}, {"fast", PyConstant::boolean(true)}};
    call.trace = &trace;
    call.bir_blob = blob;
    call.platform_target = "trn2";
    call.platform_target_is_fallback = true;
    call.operands = {{{128, 512}, DType::Float32, "a"}};
  }
};

bool have_python() { return std::system("python3 -c 'pass' >/dev/null 2>&1") == 0; }

std::string temp_path(const std::string &name) {
  return (std::filesystem::temp_directory_path() / fmt::format("nkicc-hlo-{}-{}", name, static_cast<long>(::getpid())))
      .string();
}

std::string read_text(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

} // namespace

TEST_CASE("base64 is the standard alphabet with padding", "[hlo]") {
  // RFC 4648 §10.
  const std::vector<std::pair<std::string, std::string>> vectors = {{"", ""},
                                                                    {"f", "Zg=="},
                                                                    {"fo", "Zm8="},
                                                                    {"foo", "Zm9v"},
                                                                    {"foob", "Zm9vYg=="},
                                                                    {"fooba", "Zm9vYmE="},
                                                                    {"foobar", "Zm9vYmFy"},
                                                                    {"\xff\xfe\x3e", "//4+"}};
  for (const auto &[plain, encoded] : vectors) {
    CHECK(base64_encode(plain) == encoded);
    CHECK(base64_decode(encoded) == plain);
  }
  for (std::string bad : {"Zg=", "Zg", "Z===", "Zm9v\n", "Zm-v", "Zh==", "Zm9=Zm9v", "=m9v"})
    CHECK_FALSE(base64_decode(bad));
}

TEST_CASE("backend_config JSON is json.dumps of the fourteen keys", "[hlo]") {
  Fixture f;
  std::string json = backend_config_json(f.call);
  std::string ir = base64_encode(f.blob);
  CHECK(json ==
        "{\"kernel_version\": 1, \"func_name\": \"k\\u00e9rnel\", \"grid\": [2, 1], \"has_collectives\": "
        "false, \"matmul_mac_count\": 1048576, \"platform_target\": \"trn2\", "
        "\"platform_target_is_fallback\": true, \"opts\": {\"opt_level\": 2, \"fast\": true}, "
        "\"serialize_dims\": {\"inputs\": [[128, 512]], \"outputs\": [[128, 512]]}, "
        "\"serialize_ir_string\": \"" +
            ir +
            "\", \"tiled\": true, \"constant_values\": {\"scale\": 0.1, "
            "\"tag\": \"caf\\u00e9 \\\"\\ud83d\\ude00\\\"\\n\", \"dims\": [1, null], \"big\": 1e+22, \"inf\": "
            "Infinity}, \"kernel_return\": [{\"name\": \"out\", \"shape\": [128, 512], \"dtype\": \"bfloat16\"}], "
            "\"result_is_sequence\": false}");
  CHECK(backend_config(f.call) == base64_encode(json));

  f.call.grid = {1, 1};
  CHECK(backend_config_json(f.call).find("\"tiled\": false") != std::string::npos);
  f.call.grid = {};
  CHECK(backend_config_json(f.call).find("\"grid\": [], ") != std::string::npos);
  CHECK(backend_config_json(f.call).find("\"tiled\": false") != std::string::npos);
}

TEST_CASE("Python decodes and re-encodes the backend_config to the same bytes", "[hlo]") {
  if (!have_python()) {
    WARN("python3 not found: skipping the json.dumps comparison");
    return;
  }
  Fixture f;
  std::string in = temp_path("bc.b64"), out = temp_path("bc.json");
  {
    std::ofstream o(in, std::ios::binary);
    o << backend_config(f.call);
  }
  std::string script = "import base64, json, sys; raw = base64.b64decode(open(sys.argv[1]).read(), validate=True); "
                       "cfg = json.loads(raw); open(sys.argv[2], 'w').write(json.dumps(cfg)); "
                       "sys.exit(0 if base64.b64encode(json.dumps(cfg).encode()).decode() == open(sys.argv[1]).read() "
                       "and list(cfg)[0] == 'kernel_version' else 1)";
  int rc = std::system(fmt::format("python3 -c \"{}\" {} {}", script, in, out).c_str());
  CHECK(read_text(out) == backend_config_json(f.call));
  CHECK(rc == 0);
  std::filesystem::remove(in);
  std::filesystem::remove(out);
}

TEST_CASE("decode_config prints the JSON and the embedded kernel", "[hlo]") {
  Fixture f;
  std::string error;
  auto text = decode_config("\n " + backend_config(f.call) + "\n", error);
  INFO(error);
  REQUIRE(text);
  std::string kernel_error;
  auto kernel = bir::kernel_to_text(f.blob, kernel_error);
  REQUIRE(kernel);
  CHECK(text->rfind("{\n  \"kernel_version\": 1,\n  \"func_name\": \"k\u00e9rnel\",\n  \"grid\": [2, 1],\n", 0) == 0);
  CHECK(text->find("\n  \"result_is_sequence\": false\n}\n\n" + *kernel) != std::string::npos);
}

TEST_CASE("decode_config rejects malformed input with a clear error", "[hlo]") {
  Fixture f;
  auto err = [](std::string_view input) {
    std::string error;
    CHECK_FALSE(decode_config(input, error));
    return error;
  };
  CHECK(err("") == "empty backend_config");
  CHECK(err("eyJ") == "malformed backend_config: not standard base64 with padding");
  CHECK(err(base64_encode("{\"kernel_version\": 1,")) ==
        "malformed backend_config: invalid JSON at byte 21: Missing a name for object member.");
  CHECK(err(base64_encode("[1]")) == "malformed backend_config: the JSON is not an object");
  CHECK(err(base64_encode(std::string(1'000'000, '['))).rfind("malformed backend_config: invalid JSON", 0) == 0);

  std::string json = backend_config_json(f.call);
  std::string no_key = json;
  no_key.replace(no_key.find("\"tiled\""), 7, "\"tilde\"");
  CHECK(err(base64_encode(no_key)) == "malformed backend_config: no 'tiled' key");

  std::string ir = base64_encode(f.blob);
  std::string not_string = json;
  not_string.replace(not_string.find('"' + ir + '"'), ir.size() + 2, "7");
  CHECK(err(base64_encode(not_string)) == "malformed backend_config: 'serialize_ir_string' is not a string");

  std::string bad_ir = json;
  bad_ir.replace(bad_ir.find(ir), ir.size(), "!!!!");
  CHECK(err(base64_encode(bad_ir)) ==
        "malformed backend_config: 'serialize_ir_string' is not standard base64 with padding");

  std::string corrupt = json;
  corrupt.replace(corrupt.find(ir), ir.size(), base64_encode(f.blob.substr(0, f.blob.size() / 2)));
  CHECK(err(base64_encode(corrupt)).rfind("backend_config's serialize_ir_string: ", 0) == 0);

  std::string deep = "{\"kernel_version\": " + std::string(100, '[') + std::string(100, ']') + json.substr(20);
  CHECK(err(base64_encode(deep)) == "malformed backend_config: JSON nested deeper than 64 levels");
}
