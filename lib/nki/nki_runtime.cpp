// NKI's module objects (legacy `neuronxcc.nki.*` and new `nki.*` import names, `numpy`),
// `@nki.jit`, and the KernelBuilder that collects a trace's IR.
#include "nki.h"
#include "nki_ops.h"

#include <fmt/format.h>

namespace nkicc::trace {

// ---- the kernel builder -------------------------------------------------------------------

KernelBuilder::KernelBuilder(Interpreter &interp_, const TargetInfo &target_, std::vector<std::int64_t> grid_,
                             std::uint64_t max_instructions_)
    : interp(interp_), target(target_), grid(std::move(grid_)), max_instructions(max_instructions_) {}

ir::TensorId KernelBuilder::new_tensor(std::string name, ir::TensorRole role, ir::Memory memory, ir::Shape shape,
                                       DType dtype, bool auto_name_flag) {
  ir::Tensor t;
  t.name = std::move(name);
  t.role = role;
  t.memory = memory;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.loc = interp.current_loc();
  fn.tensors.push_back(std::move(t));
  auto_named.push_back(auto_name_flag);
  last_writer.push_back(-1);
  return static_cast<ir::TensorId>(fn.tensors.size() - 1);
}

std::shared_ptr<TensorRef> KernelBuilder::full_view(ir::TensorId id) {
  auto ref = std::make_shared<TensorRef>();
  ref->builder = this;
  ref->ap.tensor = id;
  const ir::Shape &shape = fn.tensors[id].shape;
  ref->ap.pattern.resize(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    ref->ap.pattern[i] = {step, shape[i]};
    step = checked_mul(step, shape[i]);
  }
  return ref;
}

void KernelBuilder::emit(ir::Opcode opcode, ir::Engine engine, std::span<const ir::AccessPattern> dst,
                         std::span<const ir::AccessPattern> src, const ir::AttrList &attrs) {
  if (fn.instructions.size() >= max_instructions)
    raise_error("max-instructions",
                fmt::format("the trace emits more than {} instructions; raise --max-instructions if the kernel really "
                            "is this large",
                            max_instructions));
  ir::Instruction inst;
  inst.opcode = opcode;
  inst.engine = engine;
  inst.loop_kind = interp.current_loop_kind();
  inst.loc = interp.current_loc();
  for (const ir::AccessPattern &ap : dst)
    last_writer[ap.tensor] = static_cast<std::int64_t>(fn.instructions.size());
  if (opcode == ir::Opcode::Collective)
    fn.has_collectives = true;
  fn.append(inst, dst, src, attrs);
}

std::string KernelBuilder::auto_name(std::string_view stem) {
  // Unique numbering happens once the trace is done (the tracer's number_tile_names).
  return std::string(stem);
}

void KernelBuilder::rename(ir::TensorId id, std::string_view name) {
  fn.tensors[id].name = std::string(name);
  auto_named[id] = false;
}

// ---- jit kernels --------------------------------------------------------------------------

namespace {

/// lib: what launching a kernel from host code gives (`out = kernel(a)` at module level, in test
/// code): nothing nkicc computes. Harmless at module level; a kernel that uses it says so.
class HostLaunchResult : public Object {
public:
  explicit HostLaunchResult(std::string kernel) : kernel_(std::move(kernel)) {}
  std::string_view type_name() const override { return "HostLaunchResult"; }
  std::string repr() const override { return "<result of a host launch of kernel '" + kernel_ + "'>"; }
  Value call(Interpreter &interp, CallArgs &) override { return use(interp); }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view) override { return use(interp); }
  Value get_item(Interpreter &interp, const Value &) override { return use(interp); }
  std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind, const Value &, bool) override {
    return use(interp);
  }
  bool truthy(Interpreter &interp) override {
    use(interp);
    return true;
  }

private:
  Value use(Interpreter &interp) {
    if (interp.in_function())
      raise_error("unmodelled", fmt::format("nkicc does not model the result of launching kernel '{}' from host "
                                            "code: it traces only the description's calls",
                                            kernel_));
    return Value::object(std::make_shared<HostLaunchResult>(kernel_));
  }
  std::string kernel_;
};

std::string kernel_name(const Value &function) {
  if (auto *f = function.as<FunctionObject>())
    return std::string(f->name);
  return "kernel";
}

/// `kernel[2, 4]`: from inside another kernel NKI forbids a nested kernel its own grid; from host
/// code the launch is inert.
class GridLaunch : public Object {
public:
  GridLaunch(const NkiRuntime *rt, std::string kernel) : rt_(rt), kernel_(std::move(kernel)) {}
  std::string_view type_name() const override { return "GridLaunch"; }
  Value call(Interpreter &, CallArgs &) override {
    if (rt_ && !rt_->current)
      return Value::object(std::make_shared<HostLaunchResult>(kernel_));
    raise_error("err_nested_kernel_with_spmd_grid",
                "a kernel called from another kernel may not carry its own SPMD grid");
  }
  std::string repr() const override { return "<nki kernel launch>"; }

private:
  const NkiRuntime *rt_;
  std::string kernel_;
};

std::shared_ptr<BuiltinFunction> decorator(const std::string &name, const NkiRuntime *rt) {
  // `@nki.jit`, `@nki.jit()` and `@nki.jit(mode=...)`: each hands back a JitKernel around the
  // function; a kernel jitted twice (`nki.jit(nki.jit(f))`) stays the same kernel.
  return std::make_shared<BuiltinFunction>(name, [name, rt](Interpreter &interp, CallArgs &args) -> Value {
    if (args.positional.size() == 1 && args.positional[0].as<JitKernel>())
      return args.positional[0];
    if (args.positional.size() == 1 && args.positional[0].as<FunctionObject>()) {
      auto k = std::make_shared<JitKernel>();
      k->function = args.positional[0];
      k->runtime = rt;
      return Value::object(k);
    }
    if (!args.positional.empty())
      raise_error("TypeError", fmt::format("nki.{}() takes a kernel function", name));
    (void)interp;
    return Value::object(decorator(name, rt));
  });
}

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

Value JitKernel::call(Interpreter &interp, CallArgs &args) {
  // From host code (no trace in progress) a launch computes nothing nkicc sees.
  if (runtime && !runtime->current)
    return Value::object(std::make_shared<HostLaunchResult>(kernel_name(function)));
  return interp.call(function, args);
}

Value JitKernel::get_item(Interpreter &, const Value &) {
  return Value::object(std::make_shared<GridLaunch>(runtime, kernel_name(function)));
}

// ---- modules ------------------------------------------------------------------------------

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
  std::shared_ptr<ModuleObject> np = make_numpy_module(nullptr);

  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::TFloat32, DType::Float8E4M3,
                  DType::Float8E4M3FN, DType::Float8E5M2, DType::Int8, DType::Int16, DType::Int32, DType::UInt8,
                  DType::UInt16, DType::UInt32, DType::Bool}) {
    std::string name(dtype_name(d));
    nl->globals().set(name == "bool" ? "bool_" : name, *np->globals().find_local(name == "bool" ? "bool_" : name));
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

  // nl.mgrid[0:128, 0:512] gives index tiles `.p` (axis 0) and `.x` (axis 1); it also unpacks
  // (`ip, if_ = nl.mgrid[...]`) and indexes (`grid[0]`) as the tuple of its index tiles.
  class MGridResult : public Object {
  public:
    std::string_view type_name() const override { return "mgrid"; }
    std::optional<Value> get_attr(Interpreter &, std::string_view name) override {
      static const std::string_view names[] = {"p", "x", "y", "z"};
      for (std::size_t i = 0; i < items.size() && i < 4; ++i)
        if (names[i] == name)
          return items[i];
      return std::nullopt;
    }
    Value get_item(Interpreter &, const Value &key) override {
      if (key.kind != Value::Kind::Int)
        raise_python("TypeError", "mgrid indices must be integers, not " + std::string(nkicc::trace::type_name(key)));
      std::int64_t n = static_cast<std::int64_t>(items.size()), i = key.i < 0 ? key.i + n : key.i;
      if (i < 0 || i >= n)
        raise_python("IndexError", "mgrid index out of range");
      return items[static_cast<std::size_t>(i)];
    }
    std::unique_ptr<Iterator> iterate(Interpreter &) override {
      struct It : Iterator {
        std::vector<Value> items;
        std::size_t k = 0;
        bool next(Value &out) override {
          if (k >= items.size())
            return false;
          out = items[k++];
          return true;
        }
      };
      auto it = std::make_unique<It>();
      it->items = items;
      return it;
    }
    std::vector<Value> items;
  };
  class MGrid : public Object {
  public:
    std::string_view type_name() const override { return "mgrid"; }
    Value get_item(Interpreter &, const Value &key) override {
      std::vector<Value> parts = key.kind == Value::Kind::Tuple ? key.seq().items : std::vector<Value>{key};
      auto grid = std::make_shared<MGridResult>();
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].kind != Value::Kind::Slice)
          raise_error("TypeError", "nl.mgrid takes slices: nl.mgrid[0:128, 0:512]");
        const SliceData &s = parts[i].slice_data();
        std::int64_t lo = s.lower.is_none() ? 0 : s.lower.i, hi = s.upper.is_none() ? 0 : s.upper.i;
        std::int64_t st = s.step.is_none() ? 1 : s.step.i;
        if (s.upper.kind != Value::Kind::Int || (!s.lower.is_none() && s.lower.kind != Value::Kind::Int) || st <= 0 ||
            hi <= lo)
          raise_error("ValueError", "nl.mgrid needs non-empty integer slices");
        auto ix = std::make_shared<IndexObject>();
        ix->start.constant = lo;
        ix->step = st;
        ix->count = (hi - lo + st - 1) / st;
        ix->rank = static_cast<int>(parts.size());
        ix->axis = static_cast<int>(i);
        grid->items.push_back(Value::object(ix));
      }
      return Value::object(grid);
    }
  };
  nl->globals().set("mgrid", Value::object(std::make_shared<MGrid>()));

  add_language_functions(*this, *nl);
  add_isa_functions(*this, *nisa);
  add_numpy_functions(*this, *np, *nl);

  for (const char *d : {"jit", "baremetal", "benchmark", "profile", "simulate_kernel", "trace"})
    nki->globals().set(d, Value::object(decorator(d, this)));
  nki->globals().set("language", Value::object(nl));
  nki->globals().set("isa", Value::object(nisa));
  nki->globals().set("typing", Value::object(typing));
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
  modules_["numpy"] = np;
}

} // namespace nkicc::trace
