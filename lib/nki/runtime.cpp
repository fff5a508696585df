#include "runtime.h"

#include "allocation.h"
#include "index.h"
#include "objects.h"
#include "op_table.h"

#include <fmt/format.h>

namespace nkicc::nki {

namespace {

/// A module whose unknown attributes are opaque placeholders, for host-side NumPy code
/// (`np.random.random_sample(...)`) that kernels never use.
class HostModule : public ModuleObject {
public:
  using ModuleObject::ModuleObject;
  std::optional<Value> get_attr(Interpreter &interp, std::string_view attr) override {
    if (auto v = ModuleObject::get_attr(interp, attr))
      return v;
    return Value::object(std::make_shared<OpaqueObject>(name() + "." + std::string(attr)));
  }
};

} // namespace

NkiRuntime::NkiRuntime() { build_modules(); }

KernelBuilder &NkiRuntime::builder(std::string_view op) const {
  if (!current)
    raise_error("RuntimeError", fmt::format("NKI operation '{}' can only run inside a kernel being traced", op));
  return *current;
}

std::shared_ptr<Object> NkiRuntime::resolve(std::string_view dotted_name) {
  auto it = modules_.find(dotted_name);
  return it == modules_.end() ? nullptr : it->second;
}

void NkiRuntime::build_modules() {
  auto nl = std::make_shared<ModuleObject>("neuronxcc.nki.language");
  auto nisa = std::make_shared<ModuleObject>("neuronxcc.nki.isa");
  auto typing = std::make_shared<HostModule>("neuronxcc.nki.typing");
  auto nki = std::make_shared<ModuleObject>("neuronxcc.nki");
  auto neuronxcc = std::make_shared<ModuleObject>("neuronxcc");
  // lib: host NumPy (nkicc/trace/numpy.h); its dtype objects are NKI's too.
  std::shared_ptr<ModuleObject> np = trace::make_numpy_module(nullptr);

  for (DType d :
       {DType::Float32, DType::Float16, DType::BFloat16, DType::TFloat32, DType::Float8E4M3, DType::Float8E4M3FN,
        DType::Float8E5M2, DType::Int8, DType::Int16, DType::Int32, DType::UInt8, DType::UInt16, DType::UInt32,
        DType::Bool, DType::Float8E5M2X4, DType::Float8E4M3FNX4, DType::Float4E2M1FNX4, DType::Float8E8M0FNU}) {
    std::string name(dtype_name(d));
    name = name == "bool" ? "bool_" : name;
    nl->globals().set(name, *np->globals().find_local(name));
  }
  nl->globals().set("fp32", *nl->globals().find_local("float32"));
  nl->globals().set("bf16", *nl->globals().find_local("bfloat16"));
  nl->globals().set("fp16", *nl->globals().find_local("float16"));

  for (auto [name, memory] :
       {std::pair{"sbuf", ir::Memory::Sbuf}, std::pair{"psum", ir::Memory::Psum},
        std::pair{"shared_hbm", ir::Memory::SharedHbm}, std::pair{"private_hbm", ir::Memory::PrivateHbm},
        std::pair{"hbm", ir::Memory::PrivateHbm}})
    nl->globals().set(name, Value::object(std::make_shared<BufferObject>(memory)));

  // nl.tile_size: the hardware constants of reference/nki.md (SBUF size depends on the target).
  class TileSize : public Object {
  public:
    explicit TileSize(NkiRuntime &rt) : rt_(rt) {}
    std::string_view type_name() const override { return "tile_size"; }
    std::optional<Value> get_attr(Interpreter &, std::string_view name) override {
      static const std::pair<std::string_view, std::int64_t> kConstants[] = {
          {"pmax", 128},          {"gemm_stationary_fmax", 128}, {"gemm_moving_fmax", 512}, {"psum_fmax", 512},
          {"bn_stats_fmax", 512}, {"psum_min_align", 4},         {"sbuf_min_align", 1}};
      for (auto [n, v] : kConstants)
        if (n == name)
          return Value::integer(v);
      if (name == "total_available_sbuf_size")
        return Value::integer(rt_.builder("tile_size").target.sbuf_bytes_per_partition);
      return std::nullopt;
    }

  private:
    NkiRuntime &rt_;
  };
  nl->globals().set("tile_size", Value::object(std::make_shared<TileSize>(*this)));

  nl->globals().set("mgrid", make_mgrid());

  install_ops(*this, *nl, language_memory_ops());
  install_ops(*this, *nl, language_math_ops(), true);
  install_ops(*this, *nl, language_index_ops());
  install_ops(*this, *nisa, isa_ops(), true);
  install_ops(*this, *nisa, isa_reduce_ops(), true);
  install_ops(*this, *nisa, isa_select_ops(), true);
  install_ops(*this, *nisa, isa_mx_ops(), true);
  install_ops(*this, *nl, language_misc_ops());
  install_ops(*this, *nl, language_collective_ops());
  // nki.nccl: collectives across the ranks of replica groups; `collectives` is its submodule
  // of the same functions (`from neuronxcc.nki.nccl.collectives import collective_permute_implicit`).
  auto nccl = std::make_shared<ModuleObject>("neuronxcc.nki.nccl");
  install_ops(*this, *nccl, nccl_ops());
  auto nccl_collectives = std::make_shared<ModuleObject>("neuronxcc.nki.nccl.collectives");
  install_ops(*this, *nccl_collectives, nccl_ops());
  nccl->globals().set("collectives", Value::object(nccl_collectives));
  auto nl_constants = std::make_shared<ModuleObject>("neuronxcc.nki.language.constants");
  install_ops(*this, *nl_constants, language_constants_ops());
  nl->globals().set("constants", Value::object(nl_constants));
  // Engine selectors (`engine=nisa.vector_engine`).
  for (const char *e : {"tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine", "unknown_engine"})
    nisa->globals().set(e, Value::str(e));
  add_numpy_aliases(*np, *nl);
  // nisa.oob_mode, also importable from neuronxcc.nki.isa.constants as blockwise kernels do.
  auto oob_mode = std::make_shared<ModuleObject>("oob_mode");
  oob_mode->globals().set("error", Value::object(std::make_shared<OobModeObject>(false)));
  oob_mode->globals().set("skip", Value::object(std::make_shared<OobModeObject>(true)));
  nisa->globals().set("oob_mode", Value::object(oob_mode));
  auto dge_mode = std::make_shared<ModuleObject>("dge_mode");
  for (const char *m : {"unknown", "swdge", "hwdge", "none"})
    dge_mode->globals().set(m, Value::object(std::make_shared<DgeModeObject>(m)));
  nisa->globals().set("dge_mode", Value::object(dge_mode));
  auto perf_mode = std::make_shared<ModuleObject>("matmul_perf_mode");
  for (const char *m : {"none", "double_row"})
    perf_mode->globals().set(m, Value::object(std::make_shared<MatmulPerfModeObject>(m)));
  nisa->globals().set("matmul_perf_mode", Value::object(perf_mode));
  auto reduce_cmd = std::make_shared<ModuleObject>("reduce_cmd");
  for (const char *m : {"idle", "reset", "reduce", "reset_reduce", "load_reduce"})
    reduce_cmd->globals().set(m, Value::object(std::make_shared<ReduceCmdObject>(m)));
  nisa->globals().set("reduce_cmd", Value::object(reduce_cmd));
  // nisa.nc_version and nisa.get_nc_version(): the generation of the target the kernel is traced for.
  auto nc_version = std::make_shared<ModuleObject>("nc_version");
  std::array<Value, 3> generations;
  for (int gen = 2; gen <= 4; ++gen) {
    generations[static_cast<std::size_t>(gen - 2)] = Value::object(std::make_shared<NcVersionObject>(gen));
    nc_version->globals().set("gen" + std::to_string(gen), generations[static_cast<std::size_t>(gen - 2)]);
  }
  nisa->globals().set("nc_version", Value::object(nc_version));
  class GetNcVersion : public Object {
  public:
    GetNcVersion(NkiRuntime &rt, std::array<Value, 3> gens) : rt_(rt), gens_(std::move(gens)) {}
    std::string_view type_name() const override { return "function"; }
    std::string repr() const override { return "<function get_nc_version>"; }
    bool is_callable() const override { return true; }
    Value call(Interpreter &, CallArgs &args) override {
      if (!args.positional.empty() || !args.keywords.empty())
        raise_error("TypeError", fmt::format("get_nc_version() takes 0 arguments but {} were given",
                                             args.positional.size() + args.keywords.size()));
      int gen = rt_.builder("get_nc_version").target.nc_generation;
      return gens_[static_cast<std::size_t>(std::clamp(gen, 2, 4) - 2)];
    }

  private:
    NkiRuntime &rt_;
    std::array<Value, 3> gens_;
  };
  nisa->globals().set("get_nc_version", Value::object(std::make_shared<GetNcVersion>(*this, generations)));
  // nl.finfo / nl.iinfo: NumPy's, which know NKI's dtypes (nl.finfo(nl.bfloat16).min).
  for (const char *info : {"finfo", "iinfo"})
    if (Value *v = np->globals().find_local(info))
      nl->globals().set(info, *v);
  auto isa_constants = std::make_shared<ModuleObject>("neuronxcc.nki.isa.constants");
  isa_constants->globals().set("oob_mode", Value::object(oob_mode));
  isa_constants->globals().set("dge_mode", Value::object(dge_mode));
  isa_constants->globals().set("reduce_cmd", Value::object(reduce_cmd));
  nisa->globals().set("constants", Value::object(isa_constants));

  for (const char *d : {"jit", "baremetal", "benchmark", "profile", "simulate_kernel", "trace"})
    nki->globals().set(d, Value::object(jit_decorator(d, this)));
  nki->globals().set("language", Value::object(nl));
  nki->globals().set("isa", Value::object(nisa));
  nki->globals().set("typing", Value::object(typing));
  auto compiler = make_compiler_module("neuronxcc.nki.compiler");
  nki->globals().set("compiler", Value::object(compiler));
  nki->globals().set("nccl", Value::object(nccl));
  neuronxcc->globals().set("nki", Value::object(nki));

  modules_["neuronxcc"] = neuronxcc;
  modules_["neuronxcc.nki"] = nki;
  modules_["neuronxcc.nki.language"] = nl;
  modules_["neuronxcc.nki.isa"] = nisa;
  modules_["neuronxcc.nki.typing"] = typing;
  // The new `nki` package (reference/nki.md "Two API generations") under its own names.
  modules_["nki"] = nki;
  modules_["nki.language"] = nl;
  modules_["nki.isa"] = nisa;
  modules_["nki.typing"] = typing;
  modules_["neuronxcc.nki.language.constants"] = nl_constants;
  modules_["nki.language.constants"] = nl_constants;
  modules_["neuronxcc.nki.isa.constants"] = isa_constants;
  modules_["nki.isa.constants"] = isa_constants;
  modules_["neuronxcc.nki.compiler"] = compiler;
  modules_["nki.compiler"] = compiler;
  modules_["neuronxcc.nki.nccl"] = nccl;
  modules_["nki.nccl"] = nccl;
  modules_["neuronxcc.nki.nccl.collectives"] = nccl_collectives;
  modules_["nki.nccl.collectives"] = nccl_collectives;
  modules_["numpy"] = np;
}

} // namespace nkicc::nki
