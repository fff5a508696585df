#include "nkicc/hlo/hlo.h"

#include "nkicc/bir/bir.h"
#include "nkicc/manifest/manifest.h"
#include "nkicc/python/parser.h"
#include "nkicc/support/diagnostics.h"
#include "nkicc/target/target.h"
#include "nkicc/trace/tracer.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace nkicc;
using namespace nkicc::hlo;

namespace {

/// Runs a real trace of a description file (the driver's pipeline up to BIR) and keeps
/// everything alive so that HloCalls can point into it.
class TracedRun {
public:
  explicit TracedRun(const std::string &manifest_json) : diags_(sources_) {
    FileId file = sources_.add_buffer("test.json", manifest_json);
    ManifestLoadOptions load;
    load.default_name = "test";
    manifest_ = load_manifest(sources_, file, load, diags_);
    REQUIRE(manifest_);
    for (const KernelSource &src : manifest_->sources) {
      auto m = python::parse_module(sources_, src.file, diags_);
      REQUIRE(m);
      modules_.push_back(std::move(*m));
    }
    TargetInputs inputs;
    inputs.file_value = manifest_->target;
    inputs.dmi_path = "/nonexistent/nkicc-test/product_name";
    auto target = resolve_target(inputs, diags_);
    REQUIRE(target);
    target_ = *target;
    tracer_ = std::make_unique<trace::Tracer>(sources_, *manifest_, modules_, target_, trace::TraceOptions{}, diags_);
    REQUIRE(tracer_->load_modules());
    for (const Call &call : manifest_->calls) {
      const trace::KernelTrace *t = tracer_->trace_call(call);
      if (!t) {
        std::string text;
        for (const Diagnostic &d : diags_.diagnostics())
          text += d.message + "\n";
        FAIL(text);
      }
      blobs_.push_back(std::make_unique<std::string>(bir::write_kernel(t->function, target_.info->name, sources_)));
      const ExternalCall &e = call.external();
      HloCall h;
      h.func_name = e.kernel;
      h.grid = e.grid;
      h.opts = e.opts;
      h.trace = t;
      h.bir_blob = *blobs_.back();
      h.platform_target = target_.info->name;
      h.platform_target_is_fallback = target_.is_fallback;
      auto add = [&](const Argument &a) {
        if (a.is_tensor())
          h.operands.push_back({a.tensor().shape, a.tensor().dtype, a.tensor().name});
      };
      for (const Argument &a : e.args)
        add(a);
      for (const auto &kw : e.kwargs)
        add(kw.second);
      calls.push_back(std::move(h));
    }
  }

  std::vector<HloCall> calls;

private:
  SourceManager sources_;
  DiagnosticEngine diags_;
  std::optional<Manifest> manifest_;
  std::vector<python::Module> modules_;
  ResolvedTarget target_;
  std::unique_ptr<trace::Tracer> tracer_;
  std::vector<std::unique_ptr<std::string>> blobs_;
};

std::string json_quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out + "\"";
}

/// A description file with the kernels below as one inline source.
std::string manifest(const std::string &calls) {
  static const std::string source = R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def add_kernel(a_input, b_input):
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    ix = nl.program_id(0) * 128 + nl.arange(128)[:, None]
    iy = nl.arange(512)[None, :]
    c_tile = nl.load(a_input[ix, iy]) + nl.load(b_input[ix, iy])
    nl.store(c_output[ix, iy], value=c_tile)
    return c_output

@nki.jit
def inplace_kernel(a_input, out, scale=2.0):
    t = nl.load(a_input[nl.arange(128)[:, None], nl.arange(512)[None, :]])
    nl.store(out[nl.arange(128)[:, None], nl.arange(512)[None, :]], value=t * scale)
    return out

@nki.jit
def pair_kernel(a_input, b_input):
    x = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    y = nl.ndarray(b_input.shape, dtype=b_input.dtype, buffer=nl.shared_hbm)
    i = nl.arange(128)[:, None]
    j = nl.arange(512)[None, :]
    nl.store(x[i, j], value=nl.load(a_input[i, j]))
    nl.store(y[i, j], value=nl.load(b_input[i, j]))
    return x, y

@nki.jit
def none_kernel(a_input):
    t = nl.load(a_input[nl.arange(128)[:, None], nl.arange(512)[None, :]])
    nl.store(a_input[nl.arange(128)[:, None], nl.arange(512)[None, :]], value=t)
)";
  return R"({"nkicc": 1, "name": "hlo_test", "target": "trn2", "sources": [{"name": "k.py", "code": )" +
         json_quote(source) + R"(}], "calls": [)" + calls + "]}";
}

const std::string kAddCall = R"({"kernel": "add_kernel", "grid": [2],
  "args": [{"shape": [256, 512], "dtype": "float32", "name": "a"}, {"shape": [256, 512], "dtype": "float32"}]})";
const std::string kInplaceCall = R"({"kernel": "inplace_kernel", "opts": {"opt_level": 2},
  "args": [{"shape": [128, 512], "dtype": "bfloat16"}, {"shape": [128, 512], "dtype": "bfloat16"}],
  "kwargs": {"scale": 0.5}})";
const std::string kPairCall = R"({"kernel": "pair_kernel",
  "args": [{"shape": [128, 512], "dtype": "float32"}, {"shape": [128, 512], "dtype": "int8"}]})";
const std::string kNoneCall = R"({"kernel": "none_kernel", "args": [{"shape": [128, 512], "dtype": "float16"}]})";

/// The part of an HLO module with every backend_config elided, for exact comparisons.
std::string elide_configs(std::string text) {
  std::string out;
  std::size_t pos = 0;
  const std::string open = "backend_config=\"";
  for (;;) {
    std::size_t at = text.find(open, pos);
    if (at == std::string::npos)
      break;
    std::size_t end = text.find('"', at + open.size());
    out += text.substr(pos, at + open.size() - pos) + "...";
    pos = end;
  }
  out += text.substr(pos);
  // The StableHLO spelling.
  std::string result;
  const std::string open2 = "backend_config = \"";
  pos = 0;
  for (;;) {
    std::size_t at = out.find(open2, pos);
    if (at == std::string::npos)
      break;
    std::size_t end = out.find('"', at + open2.size());
    result += out.substr(pos, at + open2.size() - pos) + "...";
    pos = end;
  }
  return result + out.substr(pos);
}

std::string hlo_text(const std::vector<HloCall> &calls, HloFlavor flavor = HloFlavor::Jax) {
  std::string error;
  auto text = hlo_module_text("hlo_test", calls, flavor, error);
  INFO(error);
  REQUIRE(text);
  return *text;
}

std::string shlo(const std::vector<HloCall> &calls, HloFlavor flavor = HloFlavor::Jax) {
  std::string error;
  auto text = stablehlo_text("hlo_test", calls, flavor, error);
  INFO(error);
  REQUIRE(text);
  return *text;
}

bool have_python() { return std::system("python3 -c 'pass' >/dev/null 2>&1") == 0; }

std::string temp_path(const std::string &name) {
  return (std::filesystem::temp_directory_path() / fmt::format("nkicc-hlo-{}-{}", name, static_cast<long>(::getpid())))
      .string();
}

void write_text(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::string read_text(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Runs scripts/hlo_check.py on a module; returns its exit status and puts its stderr in `why`.
int hlo_check(const std::string &module, std::string &why) {
  std::string in = temp_path("check.hlo"), err = temp_path("check.err");
  write_text(in, module);
  int rc =
      std::system(fmt::format("python3 {}/scripts/hlo_check.py {} 2>{} >/dev/null", NKICC_SOURCE_DIR, in, err).c_str());
  why = read_text(err);
  std::filesystem::remove(in);
  std::filesystem::remove(err);
  return rc;
}

/// Python's `json.dumps(json.loads(base64.b64decode(cfg)))` must give back the exact bytes.
void require_python_round_trip(const std::string &config) {
  std::string in = temp_path("cfg.b64"), out = temp_path("cfg.json");
  write_text(in, config);
  std::string script = "import base64, json, sys; raw = base64.b64decode(open(sys.argv[1]).read(), validate=True); "
                       "s = json.dumps(json.loads(raw)); open(sys.argv[2], 'w').write(s); "
                       "sys.exit(0 if s.encode() == raw else 1)";
  int rc = std::system(fmt::format("python3 -c \"{}\" {} {}", script, in, out).c_str());
  std::string python = read_text(out);
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  CHECK(python == *base64_decode(config));
  CHECK(rc == 0);
}

const std::string kMlirOpt = "/usr/lib/llvm-19/bin/mlir-opt";

} // namespace

TEST_CASE("a single traced call is the ROOT custom-call", "[hlo]") {
  TracedRun run(manifest(kAddCall));
  std::string text = hlo_text(run.calls);
  CHECK(elide_configs(text) ==
        "HloModule hlo_test, entry_computation_layout={(f32[256,512]{1,0}, f32[256,512]{1,0})->f32[256,512]{1,0}}\n"
        "\n"
        "ENTRY %main (a.1: f32[256,512], p1.2: f32[256,512]) -> f32[256,512] {\n"
        "  %a.1 = f32[256,512]{1,0} parameter(0)\n"
        "  %p1.2 = f32[256,512]{1,0} parameter(1)\n"
        "  ROOT %custom-call.3 = f32[256,512]{1,0} custom-call(f32[256,512]{1,0} %a.1, f32[256,512]{1,0} %p1.2), "
        "custom_call_target=\"AwsNeuronCustomNativeKernel\", api_version=API_VERSION_STATUS_RETURNING, "
        "metadata={op_type=\"xla___op_NkiKernelCallImpl\" op_name=\"xla___op_NkiKernelCallImpl\"}, "
        "backend_config=\"...\"\n"
        "}\n");
  CHECK(text.find(backend_config(run.calls[0])) != std::string::npos);

  std::string torch = hlo_text(run.calls, HloFlavor::TorchXla);
  CHECK(torch.find("custom_call_target=\"AwsNeuronNkiKernel\", metadata=") != std::string::npos);
  CHECK(torch.find("api_version") == std::string::npos);
}

TEST_CASE("in-place outputs alias their operand", "[hlo]") {
  TracedRun run(manifest(kInplaceCall));
  REQUIRE(run.calls[0].trace->aliases.size() == 1);
  std::string text = elide_configs(hlo_text(run.calls));
  CHECK(text.find("ROOT %custom-call.3 = bf16[128,512]{1,0} custom-call(bf16[128,512]{1,0} %p0.1, bf16[128,512]{1,0} "
                  "%p1.2), custom_call_target=\"AwsNeuronCustomNativeKernel\", "
                  "output_to_operand_aliasing={{}: (1, {})}, api_version=API_VERSION_STATUS_RETURNING, metadata=") !=
        std::string::npos);
  std::string s = elide_configs(shlo(run.calls));
  CHECK(s == "module @hlo_test {\n"
             "  func.func @main(%arg0: tensor<128x512xbf16>, %arg1: tensor<128x512xbf16>) -> tensor<128x512xbf16> {\n"
             "    %0 = \"stablehlo.custom_call\"(%arg0, %arg1) {api_version = 2 : i32, backend_config = \"...\", "
             "call_target_name = \"AwsNeuronCustomNativeKernel\", has_side_effect = false, output_operand_aliases = "
             "[#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = "
             "[]>]} : (tensor<128x512xbf16>, tensor<128x512xbf16>) -> tensor<128x512xbf16>\n"
             "    \"func.return\"(%0) : (tensor<128x512xbf16>) -> ()\n"
             "  }\n"
             "}\n");
}

TEST_CASE("several calls: tuple results, get-tuple-element, None results", "[hlo]") {
  TracedRun run(manifest(kAddCall + "," + kPairCall + "," + kNoneCall + "," + kInplaceCall));
  std::string text = elide_configs(hlo_text(run.calls, HloFlavor::TorchXla));
  const std::string m = "metadata={op_type=\"xla___op_NkiKernelCallImpl\" op_name=\"xla___op_NkiKernelCallImpl\"}";
  CHECK(text ==
        "HloModule hlo_test, entry_computation_layout={(f32[256,512]{1,0}, f32[256,512]{1,0}, f32[128,512]{1,0}, "
        "s8[128,512]{1,0}, f16[128,512]{1,0}, bf16[128,512]{1,0}, bf16[128,512]{1,0})->(f32[256,512]{1,0}, "
        "f32[128,512]{1,0}, s8[128,512]{1,0}, bf16[128,512]{1,0})}\n"
        "\n"
        "ENTRY %main (a.1: f32[256,512], p1.2: f32[256,512], p2.3: f32[128,512], p3.4: s8[128,512], p4.5: "
        "f16[128,512], p5.6: bf16[128,512], p6.7: bf16[128,512]) -> (f32[256,512], f32[128,512], s8[128,512], "
        "bf16[128,512]) {\n"
        "  %a.1 = f32[256,512]{1,0} parameter(0)\n"
        "  %p1.2 = f32[256,512]{1,0} parameter(1)\n"
        "  %p2.3 = f32[128,512]{1,0} parameter(2)\n"
        "  %p3.4 = s8[128,512]{1,0} parameter(3)\n"
        "  %p4.5 = f16[128,512]{1,0} parameter(4)\n"
        "  %p5.6 = bf16[128,512]{1,0} parameter(5)\n"
        "  %p6.7 = bf16[128,512]{1,0} parameter(6)\n"
        "  %custom-call.8 = f32[256,512]{1,0} custom-call(f32[256,512]{1,0} %a.1, f32[256,512]{1,0} %p1.2), "
        "custom_call_target=\"AwsNeuronNkiKernel\", " +
            m +
            ", backend_config=\"...\"\n"
            "  %custom-call.9 = (f32[128,512]{1,0}, s8[128,512]{1,0}) custom-call(f32[128,512]{1,0} %p2.3, "
            "s8[128,512]{1,0} %p3.4), custom_call_target=\"AwsNeuronNkiKernel\", " +
            m +
            ", backend_config=\"...\"\n"
            "  %get-tuple-element.10 = f32[128,512]{1,0} get-tuple-element((f32[128,512]{1,0}, s8[128,512]{1,0}) "
            "%custom-call.9), index=0\n"
            "  %get-tuple-element.11 = s8[128,512]{1,0} get-tuple-element((f32[128,512]{1,0}, s8[128,512]{1,0}) "
            "%custom-call.9), index=1\n"
            "  %custom-call.12 = () custom-call(f16[128,512]{1,0} %p4.5), custom_call_target=\"AwsNeuronNkiKernel\", "
            "custom_call_has_side_effect=true, " +
            m +
            ", backend_config=\"...\"\n"
            "  %custom-call.13 = bf16[128,512]{1,0} custom-call(bf16[128,512]{1,0} %p5.6, bf16[128,512]{1,0} %p6.7), "
            "custom_call_target=\"AwsNeuronNkiKernel\", output_to_operand_aliasing={{}: (1, {})}, " +
            m +
            ", backend_config=\"...\"\n"
            "  ROOT %tuple.14 = (f32[256,512]{1,0}, f32[128,512]{1,0}, s8[128,512]{1,0}, bf16[128,512]{1,0}) "
            "tuple(f32[256,512]{1,0} %custom-call.8, f32[128,512]{1,0} %get-tuple-element.10, s8[128,512]{1,0} "
            "%get-tuple-element.11, bf16[128,512]{1,0} %custom-call.13)\n"
            "}\n");

  std::string s = elide_configs(shlo(run.calls, HloFlavor::TorchXla));
  CHECK(s.find("func.func @main(%arg0: tensor<256x512xf32>, %arg1: tensor<256x512xf32>, %arg2: tensor<128x512xf32>, "
               "%arg3: tensor<128x512xi8>, %arg4: tensor<128x512xf16>, %arg5: tensor<128x512xbf16>, %arg6: "
               "tensor<128x512xbf16>) -> (tensor<256x512xf32>, tensor<128x512xf32>, tensor<128x512xi8>, "
               "tensor<128x512xbf16>) {\n") != std::string::npos);
  CHECK(s.find("    %1:2 = \"stablehlo.custom_call\"(%arg2, %arg3) {api_version = 2 : i32, backend_config = \"...\", "
               "call_target_name = \"AwsNeuronNkiKernel\", has_side_effect = false} : (tensor<128x512xf32>, "
               "tensor<128x512xi8>) -> (tensor<128x512xf32>, tensor<128x512xi8>)\n") != std::string::npos);
  CHECK(s.find("    \"stablehlo.custom_call\"(%arg4) {api_version = 2 : i32, backend_config = \"...\", "
               "call_target_name = \"AwsNeuronNkiKernel\", has_side_effect = true} : (tensor<128x512xf16>) -> ()\n") !=
        std::string::npos);
  CHECK(s.find("    \"func.return\"(%0, %1#0, %1#1, %2) : (tensor<256x512xf32>, tensor<128x512xf32>, "
               "tensor<128x512xi8>, tensor<128x512xbf16>) -> ()\n") != std::string::npos);
}

TEST_CASE("a tuple-returning call alone is a tuple-shaped ROOT", "[hlo]") {
  TracedRun run(manifest(kPairCall));
  std::string text = elide_configs(hlo_text(run.calls));
  CHECK(text.find("->(f32[128,512]{1,0}, s8[128,512]{1,0})}\n") != std::string::npos);
  CHECK(text.find("  ROOT %custom-call.3 = (f32[128,512]{1,0}, s8[128,512]{1,0}) custom-call(") != std::string::npos);
  CHECK(text.find("get-tuple-element") == std::string::npos);
}

TEST_CASE("no calls: an empty tuple ROOT", "[hlo]") {
  std::string text = hlo_text({});
  CHECK(text == "HloModule hlo_test, entry_computation_layout={()->()}\n\nENTRY %main () -> () {\n"
                "  ROOT %tuple.1 = () tuple()\n}\n");
  CHECK(shlo({}) == "module @hlo_test {\n  func.func @main() {\n    \"func.return\"() : () -> ()\n  }\n}\n");
}

namespace {

/// A hand-built call: operands `in`, returns `out`, the given aliases.
struct HandCall {
  trace::KernelTrace trace;
  HloCall call;
  HandCall(std::vector<HloOperand> in, std::vector<trace::ReturnedTensor> out,
           std::vector<std::pair<std::size_t, std::size_t>> aliases, bool sequence = false) {
    trace.returns = std::move(out);
    trace.aliases = std::move(aliases);
    trace.result_is_sequence = sequence;
    call.func_name = "k";
    call.trace = &trace;
    call.platform_target = "trn2";
    call.operands = std::move(in);
  }
};

std::string alias_error(const HandCall &h) {
  std::string error, error2;
  CHECK_FALSE(hlo_module_text("m", {h.call}, HloFlavor::Jax, error));
  CHECK_FALSE(stablehlo_text("m", {h.call}, HloFlavor::Jax, error2));
  CHECK(error == error2);
  return error;
}

} // namespace

TEST_CASE("aliases are checked before printing", "[hlo]") {
  HloOperand f{{128, 512}, DType::Float32, ""};
  HloOperand b{{128, 512}, DType::BFloat16, ""};
  trace::ReturnedTensor rf{"out", {128, 512}, DType::Float32};
  trace::ReturnedTensor rwide{"out", {128, 1024}, DType::Float32};

  CHECK(alias_error(HandCall({f}, {rf}, {{1, 0}})) ==
        "call 0 ('k'): output 0 aliases operand 1, but the call has 1 tensor operand");
  CHECK(alias_error(HandCall({f}, {rf}, {{0, 1}})) ==
        "call 0 ('k'): operand 0 aliases output 1, but the kernel returns 1 tensor");
  CHECK(alias_error(HandCall({f}, {rwide}, {{0, 0}})) ==
        "call 0 ('k'): output 0 (f32[128,1024]) aliases operand 0 (f32[128,512]): an aliased output must have the "
        "operand's shape and dtype");
  CHECK(alias_error(HandCall({b}, {rf}, {{0, 0}})) ==
        "call 0 ('k'): output 0 (f32[128,512]) aliases operand 0 (bf16[128,512]): an aliased output must have the "
        "operand's shape and dtype");
  CHECK(alias_error(HandCall({f, f}, {rf}, {{0, 0}, {1, 0}})) ==
        "call 0 ('k'): output 0 aliases more than one operand");
  CHECK(alias_error(HandCall({f}, {rf, rf}, {{0, 0}, {0, 1}}, true)) ==
        "call 0 ('k'): operand 0 is aliased by more than one output");

  HandCall good({f, f}, {rf, rf}, {{1, 1}, {0, 0}}, true);
  std::string error;
  CHECK(check_aliases(good.call, error));
  auto text = hlo_module_text("m", {good.call}, HloFlavor::Jax, error);
  REQUIRE(text);
  CHECK(text->find("output_to_operand_aliasing={{0}: (0, {}), {1}: (1, {})}, api_version") != std::string::npos);
}

TEST_CASE("names, dtypes and collectives", "[hlo]") {
  HandCall h({{{4}, DType::Bool, "f32"}, {{2, 3, 4}, DType::Float8E4M3FN, "x y"}, {{8}, DType::UInt16, "0abc"}},
             {{"o", {2, 3, 4}, DType::Float8E5M2}}, {});
  h.trace.function.has_collectives = true;
  std::string error;
  auto text = hlo_module_text("my module!", {h.call}, HloFlavor::Jax, error);
  REQUIRE(text);
  CHECK(text->rfind("HloModule my_module_, entry_computation_layout={(pred[4]{0}, f8e4m3fn[2,3,4]{2,1,0}, "
                    "u16[8]{0})->f8e5m2[2,3,4]{2,1,0}}\n",
                    0) == 0);
  CHECK(text->find("ENTRY %main (f32_.1: pred[4], x_y.2: f8e4m3fn[2,3,4], _0abc.3: u16[8]) -> f8e5m2[2,3,4] {") !=
        std::string::npos);
  CHECK(
      text->find("api_version=API_VERSION_STATUS_RETURNING, frontend_attributes={has_collectives=\"1\"}, metadata=") !=
      std::string::npos);
  auto s = stablehlo_text("my module!", {h.call}, HloFlavor::Jax, error);
  REQUIRE(s);
  CHECK(s->rfind("module @\"my module!\" {\n  func.func @main(%arg0: tensor<4xi1>, %arg1: tensor<2x3x4xf8E4M3FN>, "
                 "%arg2: tensor<8xui16>) -> tensor<2x3x4xf8E5M2> {\n",
                 0) == 0);
  CHECK(s->find("has_side_effect = false, mhlo.frontend_attributes = {has_collectives = \"1\"}} :") !=
        std::string::npos);
}

TEST_CASE("every emitted module passes scripts/hlo_check.py", "[hlo]") {
  if (!have_python()) {
    WARN("python3 not found: skipping the HLO grammar checker");
    return;
  }
  TracedRun run(manifest(kAddCall + "," + kPairCall + "," + kNoneCall + "," + kInplaceCall));
  std::vector<std::vector<HloCall>> modules = {{},       {run.calls[0]}, {run.calls[1]}, {run.calls[2]}, {run.calls[3]},
                                               run.calls};
  for (const auto &calls : modules)
    for (HloFlavor flavor : {HloFlavor::Jax, HloFlavor::TorchXla}) {
      std::string why;
      std::string text = hlo_text(calls, flavor);
      INFO(text);
      CHECK(hlo_check(text, why) == 0);
      CHECK(why == "");
    }
}

TEST_CASE("scripts/hlo_check.py rejects the reference's pitfalls", "[hlo]") {
  if (!have_python()) {
    WARN("python3 not found: skipping the HLO grammar checker");
    return;
  }
  TracedRun run(manifest(kAddCall + "," + kInplaceCall));
  std::string good = hlo_text(run.calls);
  std::string why;
  REQUIRE(hlo_check(good, why) == 0);

  struct Bad {
    std::string from, to, message;
  };
  const std::vector<Bad> bad = {
      {"custom_call_target=\"AwsNeuronCustomNativeKernel\"", "custom_call_target = \"AwsNeuronCustomNativeKernel\"",
       "attribute name"},
      {"api_version=API_VERSION_STATUS_RETURNING", "api_version=API_VERSION_UNSPECIFIED", "API_VERSION_UNSPECIFIED"},
      {"parameter(1)", "parameter(2)", "parameter numbers"},
      {"%a.1 = f32[256,512]{1,0} parameter(0)", "%a.1 = f32[256,512]{0} parameter(0)", "layout"},
      {"%a.1 = f32[256,512]{1,0} parameter(0)", "%a.1 = f32[256,512]{1,1} parameter(0)", "permutation"},
      {"output_to_operand_aliasing={{}: (1, {})}", "output_to_operand_aliasing={{}: (2, {})}", "operand index"},
      {"output_to_operand_aliasing={{}: (1, {})}", "output_to_operand_aliasing={{0}: (1, {})}", "output index"},
      {"output_to_operand_aliasing={{}: (1, {})}", "output_to_operand_aliasing={{}: (1, {}), {}: (0, {})}",
       "aliased twice"},
      {"ENTRY %main (a.1: ", "ENTRY %main (%a.1: ", "parameter name"},
      {"  %p1.2 = ", "  %f32 = ", "reserved"},
      {"  %p1.2 = f32", "  %p1.2=f32", "' = '"},
      {", api_version=API_VERSION_STATUS_RETURNING, metadata=",
       ", frontend_attributes={x=\"y\"}, api_version=API_VERSION_STATUS_RETURNING, metadata=", "order"},
      {"op_type=\"xla___op_NkiKernelCallImpl\"", "op_type=\"xla\n\"", "escaped"},
      {"\n}\n", "\n", "unbalanced"},
  };
  // An alias between different shapes (the reference's module with an f32[128,512] operand 0).
  const std::string mismatch =
      "HloModule m, entry_computation_layout={(f32[128,512]{1,0}, f32[256,512]{1,0})->f32[256,512]{1,0}}\n\n"
      "ENTRY %main (p0.1: f32[128,512], p1.2: f32[256,512]) -> f32[256,512] {\n"
      "  %p0.1 = f32[128,512]{1,0} parameter(0)\n"
      "  %p1.2 = f32[256,512]{1,0} parameter(1)\n"
      "  ROOT %custom-call.3 = f32[256,512]{1,0} custom-call(f32[128,512]{1,0} %p0.1, f32[256,512]{1,0} %p1.2), "
      "custom_call_target=\"AwsNeuronCustomNativeKernel\", output_to_operand_aliasing={{}: (1, {})}, "
      "api_version=API_VERSION_STATUS_RETURNING, backend_config=\"eyJ9\"\n"
      "}\n";
  CHECK(hlo_check(mismatch, why) == 0);
  std::string bad_shape = mismatch;
  bad_shape.replace(bad_shape.find("(1, {})"), 7, "(0, {})");
  CHECK(hlo_check(bad_shape, why) != 0);
  CHECK(why.find("output shape f32[256,512]{1,0} and operand 0 shape f32[128,512]{1,0} must be identical") !=
        std::string::npos);

  for (const Bad &b : bad) {
    std::string text = good;
    std::size_t at = text.find(b.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, b.from.size(), b.to);
    INFO(b.to);
    CHECK(hlo_check(text, why) != 0);
    INFO(why);
    CHECK(why.find(b.message) != std::string::npos);
  }
}

TEST_CASE("StableHLO parses with mlir-opt --allow-unregistered-dialect", "[hlo]") {
  if (!std::filesystem::exists(kMlirOpt)) {
    WARN("mlir-opt (Debian mlir-19-tools) not found: skipping the StableHLO parse check");
    return;
  }
  TracedRun run(manifest(kAddCall + "," + kPairCall + "," + kNoneCall + "," + kInplaceCall));
  HandCall exotic({{{4}, DType::Bool, ""}, {{2, 3, 4}, DType::Float8E4M3, ""}, {{8}, DType::UInt32, ""}},
                  {{"o", {2, 3, 4}, DType::Float8E4M3}, {"p", {4}, DType::Bool}}, {{1, 0}, {0, 1}}, true);
  exotic.trace.function.has_collectives = true;
  std::vector<std::vector<HloCall>> modules = {{},        {run.calls[0]}, {run.calls[1]}, {run.calls[2]},
                                               run.calls, {exotic.call}};
  std::string in = temp_path("shlo.mlir"), err = temp_path("shlo.err");
  for (const auto &calls : modules)
    for (HloFlavor flavor : {HloFlavor::Jax, HloFlavor::TorchXla}) {
      std::string text = shlo(calls, flavor);
      write_text(in, text);
      int rc =
          std::system(fmt::format("{} --allow-unregistered-dialect {} >/dev/null 2>{}", kMlirOpt, in, err).c_str());
      INFO(text);
      INFO(read_text(err));
      CHECK(rc == 0);
    }
  // And the checker is real: a broken module fails.
  write_text(in, "module @m {\n  func.func @main() {\n    \"func.return\"(%0) : (tensor<2xf32>) -> ()\n  }\n}\n");
  CHECK(std::system(fmt::format("{} --allow-unregistered-dialect {} >/dev/null 2>&1", kMlirOpt, in).c_str()) != 0);
  std::filesystem::remove(in);
  std::filesystem::remove(err);
}

TEST_CASE("every traced call's backend_config survives Python's json round trip and decode_config", "[hlo]") {
  TracedRun run(manifest(kAddCall + "," + kPairCall + "," + kNoneCall + "," + kInplaceCall));
  for (const HloCall &call : run.calls) {
    std::string config = backend_config(call);
    std::string error;
    auto decoded = decode_config(config, error);
    INFO(error);
    REQUIRE(decoded);
    std::string kernel_error;
    auto kernel_text = bir::kernel_to_text(call.bir_blob, kernel_error);
    REQUIRE(kernel_text);
    CHECK(decoded->find(*kernel_text) != std::string::npos);
    if (have_python())
      require_python_round_trip(config);
  }
  if (!have_python())
    WARN("python3 not found: skipping the json.dumps comparison");
}
