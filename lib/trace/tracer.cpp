// Tracing external calls (SPEC §3-§5): bind the call's arguments, re-execute the kernel body
// with the NKI runtime recording IR, check and allocate the result, and memoize it in the
// kernel's specialization cache (seed 001 §5).
#include "nkicc/trace/tracer.h"

#include "nki/objects.h"
#include "nki/runtime.h"
#include "nkicc/cache/cache_key.h"
#include "nkicc/cache/py_repr.h"
#include "nkicc/support/file_io.h"
#include "nkicc/trace/module_loader.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <unordered_map>

namespace nkicc::trace {

using nki::JitKernel;
using nki::KernelBuilder;
using nki::NkiRuntime;
using nki::shape_text;
using nki::TensorRef;

namespace {

/// A named reference's value (PyConstant::Kind::Ref), resolved where the call's kernel lives.
using RefResolver = std::function<Value(const PyConstant &)>;

Value to_value(const PyConstant &c, const RefResolver &resolve) {
  switch (c.kind) {
  case PyConstant::Kind::None:
    return Value::none();
  case PyConstant::Kind::Bool:
    return Value::boolean(c.b);
  case PyConstant::Kind::Int:
    return Value::integer(c.i);
  case PyConstant::Kind::Float:
    return Value::floating(c.f);
  case PyConstant::Kind::Str:
    return Value::str(c.s);
  case PyConstant::Kind::Tuple:
  case PyConstant::Kind::List: {
    std::vector<Value> items;
    for (const PyConstant &i : c.items)
      items.push_back(to_value(i, resolve));
    return c.kind == PyConstant::Kind::Tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
  }
  case PyConstant::Kind::Dict: {
    std::vector<std::pair<Value, Value>> entries;
    for (const auto &[k, v] : c.dict)
      entries.emplace_back(Value::str(k), to_value(v, resolve));
    return Value::dict(std::move(entries));
  }
  case PyConstant::Kind::Ref:
    if (!resolve)
      raise_error("internal", fmt::format("nkicc bug: the named value '{}' has no module to resolve it in", c.s));
    return resolve(c);
  }
  return Value::none();
}

/// The kernel's parameter names in positional order (posonly + regular).
std::vector<std::string> positional_names(const python::FunctionDefStmt &def) {
  std::vector<std::string> names;
  for (const python::Arg *a : def.args->posonlyargs)
    names.emplace_back(a->name);
  for (const python::Arg *a : def.args->args)
    names.emplace_back(a->name);
  return names;
}

SourceLoc parameter_loc(const python::FunctionDefStmt &def, std::string_view name) {
  const python::Arguments &a = *def.args;
  for (auto list : {a.posonlyargs, a.args, a.kwonlyargs})
    for (const python::Arg *arg : list)
      if (arg->name == name)
        return arg->begin();
  return def.begin();
}

/// Drops internal tiles no instruction touches (a matmul result folded into `psum[...] +=`, a
/// tile created and never used) and renumbers the rest, so the IR lists only real tensors.
void drop_unused_tiles(ir::Function &fn) {
  std::vector<bool> used(fn.tensors.size(), false);
  for (const ir::Instruction &inst : fn.instructions)
    for (const ir::Operand &op : std::as_const(fn).operands(inst))
      used[op.tensor] = true;
  for (const ir::TensorView &v : fn.views) // a view's base holds its bytes
    if (used[v.tensor])
      used[v.base] = true;
  // Compacted in place: a second tensor list would double the peak memory of a large trace.
  std::vector<ir::TensorId> remap(fn.tensors.size(), ir::kNoTensor);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < fn.tensors.size(); ++i) {
    const ir::Tensor &t = fn.tensors[i];
    bool keep = used[i] || t.role != ir::TensorRole::Internal ||
                t.memory == ir::Memory::SharedHbm; // HBM outputs may be returned unwritten
    if (keep) {
      remap[i] = static_cast<ir::TensorId>(kept);
      if (kept != i)
        fn.tensors[kept] = std::move(fn.tensors[i]);
      ++kept;
    }
  }
  fn.tensors.truncate(kept);
  for (const ir::Instruction &inst : fn.instructions)
    for (ir::Operand &op : fn.operands(inst))
      op.tensor = remap[op.tensor];
  for (ir::BlockTensor &b : fn.block_tensors)
    for (ir::TensorId &id : b.blocks)
      if (id != ir::kNoTensor)
        id = used[id] ? remap[id] : ir::kNoTensor;
  for (ir::ConstantData &c : fn.constants) // a constant is shared HBM: always kept
    c.tensor = remap[c.tensor];
  std::vector<ir::TensorView> views;
  for (const ir::TensorView &v : fn.views)
    if (remap[v.tensor] != ir::kNoTensor)
      views.push_back({remap[v.tensor], remap[v.base]});
  fn.views = std::move(views);
}

/// A kernel may return its HBM tensor through a reshape (`return out.reshape(shape)`): a view
/// of the whole tensor, contiguous from its start, is that tensor with the view's shape, so the
/// tensor takes it. Other views keep the tensor's own shape.
void adopt_whole_view_shape(ir::Tensor &tensor, const TensorRef &view) {
  const ir::AccessPattern &ap = view.ap;
  if (ap.offset != 0 || std::any_of(ap.program_offset.begin(), ap.program_offset.end(), [](auto o) { return o; }))
    return;
  std::int64_t step = 1;
  for (std::size_t i = ap.pattern.size(); i-- > 0;) {
    if (ap.pattern[i].first != step && ap.pattern[i].second != 1)
      return;
    step *= ap.pattern[i].second;
  }
  std::int64_t elements = 1;
  for (std::int64_t d : tensor.shape)
    elements *= d;
  if (step == elements)
    tensor.shape = view.shape();
}

} // namespace

struct Tracer::Impl {
  SourceManager &sources;
  const Manifest &manifest;
  const std::vector<python::Module> &modules;
  ResolvedTarget target;
  TraceOptions options;
  DiagnosticEngine &diags;

  NkiRuntime runtime;
  FileModuleLoader loader;
  std::unique_ptr<Interpreter> interp;
  std::vector<std::shared_ptr<ModuleObject>> module_objects;
  bool loaded = false;

  struct KernelCache {
    std::map<std::string, std::unique_ptr<KernelTrace>> entries; // key repr -> result
    std::uint64_t hits = 0, misses = 0;
  };
  std::map<std::string, KernelCache> caches;

  Impl(SourceManager &s, const Manifest &m, const std::vector<python::Module> &mods, const ResolvedTarget &t,
       TraceOptions o, DiagnosticEngine &d)
      : sources(s), manifest(m), modules(mods), target(t), options(std::move(o)), diags(d),
        loader(s, d, description_dir(s, m)) {
    InterpreterLimits limits;
    // Enough steps for any kernel that fits the instruction budget, few enough that an endless
    // loop ends within seconds.
    limits.max_steps =
        options.max_steps != 0 ? options.max_steps : std::max<std::uint64_t>(10'000'000, 10 * options.max_instructions);
    limits.max_trace_time = options.max_trace_time;
    interp = std::make_unique<Interpreter>(
        sources, limits, [this](Interpreter &, std::string_view name) { return runtime.resolve(name); });
    if (options.print_handler)
      interp->set_print_handler(options.print_handler);
    // Imports between kernel files find the listed sources by their paths (inline code by its
    // name under the description's folder), so that each runs once, as one module object.
    interp->set_module_loader(&loader);
    for (std::size_t i = 0; i < modules.size() && i < m.sources.size(); ++i) {
      const KernelSource &src = m.sources[i];
      bool on_disk = !src.resolved_path.empty();
      loader.add_source(on_disk ? src.resolved_path : join_path(parent_dir(sources.name(m.file)), src.name), modules[i],
                        on_disk);
    }
  }

  static std::string description_dir(const SourceManager &s, const Manifest &m) {
    std::string_view name = s.name(m.file);
    return name == "<stdin>" ? std::string() : parent_dir(name);
  }

  void report(const TraceError &e, const Call *call) {
    Diagnostic d;
    // An error raised before the kernel body runs (binding the call's arguments) concerns the
    // call in the description file.
    d.loc = e.loc.valid() || !call ? e.loc : call->loc;
    d.message = e.message;
    d.id = e.id;
    for (const auto &[loc, text] : e.notes) {
      Diagnostic n;
      n.severity = Severity::Note;
      n.loc = loc;
      n.message = text;
      d.notes.push_back(std::move(n));
    }
    if (call) {
      Diagnostic n;
      n.severity = Severity::Note;
      n.loc = call->loc;
      n.message =
          call->is_external()
              ? fmt::format("while tracing call {} of kernel '{}'", call->index, call->external().kernel)
              : fmt::format("while tracing call {} of internal kernel '{}'", call->index, call->internal().internal);
      d.notes.push_back(std::move(n));
    }
    diags.report(std::move(d));
  }

  bool load_modules() {
    bool ok = true;
    for (std::size_t i = 0; i < modules.size(); ++i) {
      try {
        // `__name__` is the module's name (the file's stem, or its dotted path under the
        // description's folder), never "__main__": host code under the guard never runs.
        module_objects.push_back(loader.run_source(*interp, i));
      } catch (const TraceError &e) {
        report(e, nullptr);
        module_objects.push_back(nullptr);
        ok = false;
      }
    }
    loaded = ok;
    return ok;
  }

  /// The module that defines the kernel, its definition and the callable bound to its name.
  struct KernelRef {
    const python::FunctionDefStmt *def = nullptr;
    Value callable;
    bool force_auto_alloc = false;  ///< `@nki.compiler.force_auto_alloc`
    ModuleObject *module = nullptr; ///< where the call's named values resolve: the kernel's own module
  };
  std::optional<KernelRef> find_kernel(const ExternalCall &call) {
    for (std::size_t i = 0; i < modules.size(); ++i) {
      const python::FunctionDefStmt *def = modules[i].function(call.kernel);
      if (!def || !module_objects[i])
        continue;
      Value *v = module_objects[i]->globals().find_local(call.kernel);
      if (!v || (!v->as<JitKernel>() && !v->as<FunctionObject>())) {
        diags.error(call.kernel_loc, fmt::format("'{}' is no longer a function after the module ran", call.kernel),
                    "manifest");
        return std::nullopt;
      }
      Value fn = v->as<JitKernel>() ? v->as<JitKernel>()->function : *v;
      return KernelRef{def, fn, v->as<JitKernel>() && v->as<JitKernel>()->force_auto_alloc, module_objects[i].get()};
    }
    // A kernel a source imports from another kernel file: its definition is the function's.
    for (std::size_t i = 0; i < modules.size(); ++i) {
      if (!module_objects[i])
        continue;
      Value *v = module_objects[i]->globals().find_local(call.kernel);
      if (!v)
        continue;
      Value fn = v->as<JitKernel>() ? v->as<JitKernel>()->function : *v;
      if (auto *f = fn.as<FunctionObject>(); f && f->def)
        return KernelRef{f->def, fn, false, f->module ? f->module.get() : module_objects[i].get()};
      diags.error(call.kernel_loc, fmt::format("'{}' is no longer a function after the module ran", call.kernel),
                  "manifest");
      return std::nullopt;
    }
    diags.internal_error(fmt::format("kernel '{}' was resolved but not found", call.kernel));
    return std::nullopt;
  }

  const KernelTrace *trace_call(const Call &call, bool *hit) {
    const ExternalCall &e = call.external();
    // SPEC §5: a grid spanning several physical cores needs a target that has them.
    if (e.nc > 1 && !target.info->multi_core_spmd) {
      diags.error(e.nc_loc,
                  fmt::format("SPMD grid spans {} physical cores, but {} has no multi-core SPMD (it needs trn2 or "
                              "trn3)",
                              e.nc, target.info->name),
                  "err_multi_cores_spmd_not_supported");
      return nullptr;
    }
    auto kernel = find_kernel(e);
    if (!kernel)
      return nullptr;
    std::vector<std::string> names = positional_names(*kernel->def);
    auto key = specialization_key(e, names, target.is_fallback, diags);
    if (!key)
      return nullptr;
    std::string key_text = py_repr(*key);
    KernelCache &cache = caches[e.kernel];
    if (options.use_cache) {
      auto it = cache.entries.find(key_text);
      if (it != cache.entries.end()) {
        ++cache.hits;
        if (hit)
          *hit = true;
        return it->second.get();
      }
    }
    ++cache.misses;
    std::unique_ptr<KernelTrace> result;
    if (options.find_specialization)
      result = options.find_specialization(call, key_text);
    if (!result)
      result = run(call, e, *kernel, names);
    if (!result)
      return nullptr;
    result->specialization_key = key_text;
    KernelTrace *raw = result.get();
    if (options.use_cache)
      cache.entries[key_text] = std::move(result);
    else
      uncached.push_back(std::move(result));
    return raw;
  }
  std::vector<std::unique_ptr<KernelTrace>> uncached;

  std::unique_ptr<KernelTrace> run(const Call &call, const ExternalCall &e, const KernelRef &kernel,
                                   const std::vector<std::string> &names) {
    KernelBuilder kb(*interp, *target.info, e.grid, options.max_instructions);
    kb.fn.name = e.kernel;
    kb.force_auto_alloc = kernel.force_auto_alloc;
    auto result = std::make_unique<KernelTrace>();
    result->grid = e.grid;
    result->platform_target_is_fallback = target.is_fallback;
    runtime.current = &kb;
    struct Reset {
      NkiRuntime &rt;
      ~Reset() { rt.current = nullptr; }
    } reset{runtime};
    Interpreter::KernelTraceScope tracing{*interp};

    try {
      CallArgs args;
      args.loc = call.loc;
      std::vector<ir::TensorId> inputs; // tensor arguments, in argument order
      auto bind = [&](const Argument &arg, const std::string &name) {
        if (!arg.is_tensor()) {
          result->constant_values.emplace_back(name, arg.constant());
          return to_value(arg.constant(), [&](const PyConstant &ref) {
            return resolve_name(
                *kernel.module, kernel.module->name(), ref.s, ref.b ? &ref.dict : nullptr, call.loc, arg.loc,
                fmt::format("argument '{}' of kernel '{}' names '{}'", name, e.kernel, ref.s), "manifest",
                fmt::format("while building argument '{}' of kernel '{}' from '{}'", name, e.kernel, ref.s));
          });
        }
        const TensorSpec &t = arg.tensor();
        ir::TensorId id = kb.new_tensor(name, ir::TensorRole::Input, ir::Memory::SharedHbm, t.shape, t.dtype, false);
        // An input is located at its parameter in the kernel's signature.
        kb.fn.tensors[id].loc = parameter_loc(*kernel.def, name);
        inputs.push_back(id);
        kb.fn.input_names.push_back(name);
        return Value::object(kb.full_view(id));
      };
      for (std::size_t i = 0; i < e.args.size(); ++i)
        args.positional.push_back(bind(e.args[i], i < names.size() ? names[i] : fmt::format("arg{}", i)));
      for (const auto &[name, arg] : e.kwargs)
        args.keywords.emplace_back(name, bind(arg, name));

      kb.kernel_call_depth = 0; // the interpreter's depth inside the kernel's own body
      Value ret = interp->call(kernel.callable, args);
      collect_returns(kb, ret, inputs, *result, e.kernel, kernel.def->begin());
    } catch (const TraceError &err) {
      report(err, &call);
      return nullptr;
    }

    if (!finish(call, kb, *result))
      return nullptr;
    return result;
  }

  std::map<FileId, std::shared_ptr<ModuleObject>> registry_modules;

  const python::Module *load_registry_entry(const RegistryEntry &entry, const std::vector<FileId> &texts) {
    std::vector<FileModuleLoader::EntryFile> files;
    for (std::size_t i = 0; i < entry.files.size() && i < texts.size(); ++i) {
      const std::string &path = entry.files[i];
      const std::string &rel = i < entry.file_names.size() ? entry.file_names[i] : file_stem(path) + ".py";
      // The folder the entry's name of the file is relative to: where its imports start.
      std::string root = path.size() > rel.size() && path.ends_with("/" + rel)
                             ? path.substr(0, path.size() - rel.size() - 1)
                             : (path == rel ? std::string() : parent_dir(path));
      std::string name = i == 0 ? entry.module : FileModuleLoader::module_name_under("", rel);
      files.push_back({path, texts[i], name.empty() ? file_stem(path) : name, root});
    }
    loader.add_entry_files(files);
    try {
      const python::Module *ast = nullptr;
      std::shared_ptr<ModuleObject> m = loader.run_entry_file(*interp, entry.files.at(0), ast);
      if (!m || !ast)
        return nullptr;
      registry_modules[ast->file] = std::move(m);
      return ast;
    } catch (const TraceError &e) {
      report(e, nullptr);
      return nullptr;
    }
  }

  std::shared_ptr<KernelTrace> trace_internal(const Call &call, const RegistryEntry &entry,
                                              const python::Module &source) {
    const InternalCall &c = call.internal();
    auto module = registry_modules.find(source.file);
    const python::FunctionDefStmt *def = source.function(entry.entry);
    Value *fn = module != registry_modules.end() ? module->second->globals().find_local(entry.entry) : nullptr;
    if (!def || !fn || (!fn->as<JitKernel>() && !fn->as<FunctionObject>())) {
      // The registry's mistake: located at its "entry" value, with the call that needed it.
      Diagnostic d;
      d.loc = entry.entry_loc.valid() ? entry.entry_loc : c.internal_loc;
      d.message = fmt::format("registry kernel '{}' names entry '{}', which '{}' does not define", entry.func_name,
                              entry.entry, sources.name(source.file));
      std::vector<std::string> defined;
      for (const python::FunctionDefStmt *f : source.functions)
        defined.emplace_back(f->name);
      d.message = with_did_you_mean(std::move(d.message), entry.entry, defined);
      d.id = "registry";
      if (entry.entry_loc.valid()) {
        Diagnostic n;
        n.severity = Severity::Note;
        n.loc = c.internal_loc;
        n.message = fmt::format("needed by call {} of internal kernel '{}'", call.index, entry.func_name);
        d.notes.push_back(std::move(n));
      }
      diags.report(std::move(d));
      return nullptr;
    }
    Value callable = fn->as<JitKernel>() ? fn->as<JitKernel>()->function : *fn;
    std::vector<std::string> names = positional_names(*def);

    KernelBuilder kb(*interp, *target.info, {}, options.max_instructions);
    kb.fn.name = c.kernel_name;
    auto result = std::make_shared<KernelTrace>();
    result->platform_target_is_fallback = target.is_fallback;
    runtime.current = &kb;
    struct Reset {
      NkiRuntime &rt;
      ~Reset() { rt.current = nullptr; }
    } reset{runtime};
    Interpreter::KernelTraceScope tracing{*interp};
    try {
      InternalBinding binding;
      binding.written.resize(c.results.size());
      Marshal m{call, entry, *module->second, *def, kb, binding, *result};
      CallArgs args;
      args.loc = call.loc;
      for (std::size_t i = 0; i < entry.args.size(); ++i) {
        std::string name = i < names.size() ? names[i] : fmt::format("arg{}", i);
        auto v = marshal(m, entry.args[i], name);
        if (!v)
          raise_error("registry", fmt::format("internal call has no attr '{}' for positional argument '{}' of "
                                              "registry kernel '{}'",
                                              entry.args[i].attr, name, entry.func_name));
        args.positional.push_back(std::move(*v));
      }
      for (const auto &[name, arg] : entry.kwargs)
        if (auto v = marshal(m, arg, name))
          args.keywords.emplace_back(name, std::move(*v));
      kb.kernel_call_depth = 0;
      Value ret = interp->call(callable, args);
      collect_internal_results(kb, ret, binding, *result, c, entry.func_name, def->begin());
    } catch (const TraceError &err) {
      TraceError located = err;
      if (!located.loc.valid())
        located.loc = c.internal_loc;
      report(located, &call);
      return nullptr;
    }
    if (!finish(call, kb, *result))
      return nullptr;
    return result;
  }

  /// The tensors an internal call's arguments created: operands (inputs, in argument order) and
  /// the output tensor passed for each result ({"result": i}), if any.
  struct InternalBinding {
    std::vector<ir::TensorId> inputs;
    std::vector<std::optional<ir::TensorId>> written;
  };

  /// What marshalling one internal call's arguments works on.
  struct Marshal {
    const Call &call;
    const RegistryEntry &entry;
    ModuleObject &module;
    const python::FunctionDefStmt &def;
    KernelBuilder &kb;
    InternalBinding &binding;
    KernelTrace &result;
  };

  static Value shape_tuple(const std::vector<std::int64_t> &shape) {
    std::vector<Value> dims;
    dims.reserve(shape.size());
    for (std::int64_t d : shape)
      dims.push_back(Value::integer(d));
    return Value::tuple(std::move(dims));
  }

  /// A registry argument's value for this call (seed 000 _resolve_kernel_config): operands become
  /// the kernel's HBM tensors (their access shapes), results output tensors it writes, the rest
  /// constants. nullopt: an attr the op does not have and no default (the parameter is not passed).
  std::optional<Value> marshal(Marshal &m, const RegistryArg &arg, const std::string &name) {
    const InternalCall &c = m.call.internal();
    const std::string &kernel = m.entry.func_name;
    auto operand = [&]() -> const TensorSpec & {
      if (arg.index >= c.operands.size())
        raise_error("registry", fmt::format("registry kernel '{}' takes operand {}, but the op has {}", kernel,
                                            arg.index, c.operands.size()));
      return c.operands[arg.index];
    };
    auto op_result = [&]() -> const TensorSpec & {
      if (arg.index >= c.results.size())
        raise_error("registry", fmt::format("registry kernel '{}' takes result {}, but the op has {} result{}", kernel,
                                            arg.index, c.results.size(), c.results.size() == 1 ? "" : "s"));
      return c.results[arg.index];
    };
    auto constant = [&](const PyConstant &v) {
      m.result.constant_values.emplace_back(name, v);
      return to_value(v, [&](const PyConstant &ref) {
        return resolve_name(
            m.module, m.entry.module, ref.s, ref.b ? &ref.dict : nullptr, m.call.loc, arg.value_loc,
            fmt::format("registry kernel '{}' passes '{}' as '{}'", m.entry.func_name, ref.s, name), "registry",
            fmt::format("while building registry argument '{}' of '{}' from '{}'", name, m.entry.func_name, ref.s));
      });
    };
    switch (arg.kind) {
    case RegistryArg::Kind::Operand: {
      const TensorSpec &t = operand();
      ir::TensorId id =
          m.kb.new_tensor(name, ir::TensorRole::Input, ir::Memory::SharedHbm, t.access_shape, t.dtype, false);
      m.kb.fn.tensors[id].loc = parameter_loc(m.def, name);
      m.binding.inputs.push_back(id);
      m.kb.fn.input_names.push_back(name);
      return Value::object(m.kb.full_view(id));
    }
    case RegistryArg::Kind::OperandShape:
      return shape_tuple(operand().access_shape);
    case RegistryArg::Kind::Result: {
      // An output parameter (pass-by-reference, seed 001 §3): the kernel writes the op's result
      // into it, in shared or private HBM as the op's result says.
      const TensorSpec &t = op_result();
      ir::Memory memory = t.memory == "private_hbm" ? ir::Memory::PrivateHbm : ir::Memory::SharedHbm;
      ir::TensorId id = m.kb.new_tensor(name, ir::TensorRole::Output, memory, t.access_shape, t.dtype, false);
      m.kb.fn.tensors[id].loc = parameter_loc(m.def, name);
      m.binding.written[arg.index] = id;
      return Value::object(m.kb.full_view(id));
    }
    case RegistryArg::Kind::ResultShape:
      return shape_tuple(op_result().access_shape);
    case RegistryArg::Kind::ResultDim: {
      if (arg.index >= c.results.size() || arg.dim >= c.results[arg.index].access_shape.size())
        raise_error("registry", fmt::format("registry kernel '{}' reads dimension {} of result {}, which the op "
                                            "does not have",
                                            kernel, arg.dim, arg.index));
      return Value::integer(c.results[arg.index].access_shape[arg.dim]);
    }
    case RegistryArg::Kind::Attr:
      for (const auto &[k, v] : c.attrs.dict)
        if (k == arg.attr)
          return constant(v);
      if (arg.value)
        return constant(*arg.value);
      return std::nullopt;
    case RegistryArg::Kind::Const:
      return constant(*arg.value);
    case RegistryArg::Kind::DType: {
      std::string dname(dtype_name(arg.dtype));
      auto nl = std::dynamic_pointer_cast<ModuleObject>(runtime.resolve("neuronxcc.nki.language"));
      Value *v = nl ? nl->globals().find_local(dname == "bool" ? "bool_" : dname) : nullptr;
      if (!v)
        raise_error("internal", fmt::format("nkicc bug: no nl.{} for a registry dtype argument", dname));
      m.result.constant_values.emplace_back(name, PyConstant::str(dname));
      return *v;
    }
    case RegistryArg::Kind::Object:
      return object_argument(m, arg, name);
    }
    return std::nullopt;
  }

  /// `A.B.C` in `module`: `A` of its globals (or, when it defines none, the module `A` imports
  /// as, such as `numpy`), then its attributes; with `fields`, then a call with them as keyword
  /// arguments (an enum member, a function, a dataclass or namedtuple instance). Messages start
  /// with `who` ("registry kernel 'k' passes 'A.B' as 'x'") and are located at `loc`.
  Value resolve_name(ModuleObject &module, std::string_view module_name, std::string_view path,
                     const std::vector<std::pair<std::string, PyConstant>> *fields, SourceLoc call_loc, SourceLoc loc,
                     const std::string &who, std::string_view kind, const std::string &note) {
    std::size_t dot = path.find('.');
    std::string head(path.substr(0, dot));
    std::optional<Value> found;
    if (Value *g = module.globals().find_local(head))
      found = *g;
    else if (std::shared_ptr<Object> imported = interp->import_module(head, 0, loc))
      found = Value::object(std::move(imported));
    if (!found) {
      std::vector<std::string> defined;
      for (const Scope::Entry &e : module.globals().entries())
        if (e.bound)
          defined.emplace_back(e.name());
      raise_error(
          std::string(kind),
          with_did_you_mean(fmt::format("{}, but module '{}' defines no '{}'", who, module_name, head), head, defined),
          loc);
    }
    Value v = std::move(*found);
    std::string reached = head;
    while (dot != std::string_view::npos) {
      std::size_t next = path.find('.', dot + 1);
      std::string attr(path.substr(dot + 1, next == std::string_view::npos ? std::string_view::npos : next - dot - 1));
      std::optional<Value> a = interp->find_attr(v, attr);
      if (!a)
        raise_error(std::string(kind),
                    fmt::format("{}, but '{}' (a '{}') has no attribute '{}'", who, reached, type_name(v), attr), loc);
      v = std::move(*a);
      reached += "." + attr;
      dot = next;
    }
    if (fields) {
      CallArgs args;
      args.loc = call_loc;
      for (const auto &[field, value] : *fields)
        args.keywords.emplace_back(field, to_value(value, [&](const PyConstant &ref) {
                                     return resolve_name(module, module_name, ref.s, ref.b ? &ref.dict : nullptr,
                                                         call_loc, loc, who, kind, note);
                                   }));
      try {
        v = interp->call(v, args);
      } catch (TraceError &e) {
        e.notes.emplace_back(loc, note);
        throw;
      }
    }
    return v;
  }

  /// {"object": "A.B.C", "fields"?: {...}}: resolve_name() in the kernel's module. Errors are
  /// located at the registry's "object" value.
  Value object_argument(Marshal &m, const RegistryArg &arg, const std::string &name) {
    std::string who = fmt::format("registry kernel '{}' passes '{}' as '{}'", m.entry.func_name, arg.object, name);
    Value v = resolve_name(
        m.module, m.entry.module, arg.object, arg.fields ? &*arg.fields : nullptr, m.call.loc, arg.value_loc, who,
        "registry",
        fmt::format("while building registry argument '{}' of '{}' from '{}'", name, m.entry.func_name, arg.object));
    m.result.constant_values.emplace_back(name, constant_of(v, arg.object));
    return v;
  }

  static std::string with_did_you_mean(std::string message, std::string_view word,
                                       const std::vector<std::string> &candidates) {
    std::string best = closest_match(word, candidates);
    if (!best.empty())
      message += fmt::format("; did you mean '{}'?", best);
    return message;
  }

  /// A built argument as backend_config's constant_values records it: plain values as they are,
  /// anything else (an enum member, a class instance) by the registry's spelling of it.
  static PyConstant constant_of(const Value &v, const std::string &spelling) {
    switch (v.kind) {
    case Value::Kind::None:
      return PyConstant::none();
    case Value::Kind::Bool:
      return PyConstant::boolean(v.b);
    case Value::Kind::Int:
      return PyConstant::integer(v.i);
    case Value::Kind::Float:
      return PyConstant::floating(v.f);
    case Value::Kind::Str:
      return PyConstant::str(std::string(v.str_text()));
    default:
      break;
    }
    if (auto *d = v.as<DTypeObject>())
      if (std::optional<DType> nd = d->nki_dtype())
        return PyConstant::str(std::string(dtype_name(*nd)));
    return PyConstant::str(spelling);
  }

  /// An internal kernel's results (SPEC §7, issue 12): each op result is either an output
  /// parameter the kernel wrote or one of the tensors it returns (None, one tensor, or a tuple),
  /// the returned ones filling the results not passed as parameters, in order. Unlike an
  /// external kernel's, they may live in private HBM (seed 001: the internal, materialized node
  /// arrives with private_hbm); on-chip tiles are refused.
  void collect_internal_results(KernelBuilder &kb, const Value &ret, const InternalBinding &binding,
                                KernelTrace &result, const InternalCall &c, const std::string &kernel,
                                SourceLoc def_loc) {
    std::vector<Value> items;
    bool sequence = ret.kind == Value::Kind::Tuple || ret.kind == Value::Kind::List;
    if (sequence)
      items = ret.seq().items;
    else if (!ret.is_none())
      items.push_back(ret);
    std::size_t n = c.results.size();
    std::vector<std::optional<ir::TensorId>> produced = binding.written;
    auto written = static_cast<std::size_t>(
        std::count_if(produced.begin(), produced.end(), [](const auto &t) { return t.has_value(); }));
    std::size_t next = 0;     // the next result not passed as a parameter
    std::size_t returned = 0; // returned tensors that are not output parameters
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto *t = items[i].as<TensorRef>();
      if (!t)
        raise_error(
            "TypeError",
            fmt::format("kernel '{}' must return tensors, but return value {} is '{}'", kernel, i, type_name(items[i])),
            interp->last_return_loc().valid() ? interp->last_return_loc() : def_loc);
      ir::Tensor &tensor = kb.fn.tensors[t->ap.tensor];
      if (tensor.memory != ir::Memory::SharedHbm && tensor.memory != ir::Memory::PrivateHbm)
        raise_error("registry",
                    fmt::format("registry kernel '{}' returns '{}' in {}: an internal kernel's results must be in HBM "
                                "(nl.shared_hbm or nl.private_hbm)",
                                kernel, tensor.name, ir::memory_name(tensor.memory)),
                    tensor.loc.valid() ? tensor.loc : def_loc);
      if (std::find(binding.written.begin(), binding.written.end(), t->ap.tensor) != binding.written.end())
        continue; // an output parameter handed back: already its result
      adopt_whole_view_shape(tensor, *t);
      ++returned;
      while (next < n && produced[next])
        ++next;
      if (next < n) {
        const TensorSpec &want = c.results[next];
        if (tensor.shape.to_vector() != want.access_shape || tensor.dtype != want.dtype)
          raise_error("registry", fmt::format("registry kernel '{}' returns {} {} as result {}, but the op's result "
                                              "is {} {}",
                                              kernel, shape_text(tensor.shape.to_vector()), dtype_name(tensor.dtype),
                                              next, shape_text(want.access_shape), dtype_name(want.dtype)));
        if (!want.memory.empty() && want.memory != ir::memory_name(tensor.memory))
          raise_error("registry", fmt::format("registry kernel '{}' returns result {} in {}, but the op's result is "
                                              "in {}",
                                              kernel, next, ir::memory_name(tensor.memory), want.memory));
        produced[next++] = t->ap.tensor;
      }
    }
    if (returned + written != n) {
      if (written == 0)
        raise_error("registry", fmt::format("registry kernel '{}' returns {} tensor{}, but the op has {} result{}",
                                            kernel, returned, returned == 1 ? "" : "s", n, n == 1 ? "" : "s"));
      raise_error("registry",
                  fmt::format("registry kernel '{}' returns {} tensor{}, but the op has {} result{} and {} of them {} "
                              "passed as output parameter{}",
                              kernel, returned, returned == 1 ? "" : "s", n, n == 1 ? "" : "s", written,
                              written == 1 ? "is" : "are", written == 1 ? "" : "s"));
    }
    for (ir::TensorId id : binding.inputs)
      if (kb.fn.tensors[id].memory != ir::Memory::SharedHbm)
        raise_error("err_shared_hbm_guard", "The input and output tensor of a NKI kernel must be in shared_hbm address "
                                            "space");
    result.result_is_sequence = sequence || n != 1;
    for (std::size_t i = 0; i < n; ++i) {
      ir::Tensor &tensor = kb.fn.tensors[*produced[i]];
      auto in = std::find(binding.inputs.begin(), binding.inputs.end(), *produced[i]);
      if (in != binding.inputs.end())
        result.aliases.emplace_back(static_cast<std::size_t>(in - binding.inputs.begin()), i);
      else
        tensor.role = ir::TensorRole::Output;
      kb.fn.output_names.push_back(tensor.name);
      result.returns.push_back({tensor.name, tensor.shape.to_vector(), tensor.dtype});
    }
  }

  /// Drops unused tiles and allocates SBUF/PSUM; false (reported) when a tile does not fit.
  bool finish(const Call &call, KernelBuilder &kb, KernelTrace &result) {
    // Only emitting instructions reads these, and the kernel has returned: their memory goes
    // before the allocation and the layout check make the trace's peak.
    kb.last_writer.clear();
    kb.created_at.clear();
    drop_unused_tiles(kb.fn);
    ir::number_tensor_names(kb.fn);
    if (auto failure =
            ir::allocate_on_chip(kb.fn, target.info->sbuf_bytes_per_partition, target.info->psum_bytes_per_partition)) {
      const ir::Tensor &t = kb.fn.tensors[failure->tensor];
      TraceError err;
      err.loc = t.loc;
      err.id = failure->memory == ir::Memory::Psum ? "err_psum_allocation" : "err_sbuf_allocation";
      if (failure->overlaps != ir::kNoTensor) {
        // Two tiles the kernel placed itself (NKI's direct allocation guide, "Lifetime Conflicts").
        const ir::Tensor &u = kb.fn.tensors[failure->overlaps];
        err.id = "err_allocation_lifetime_conflict";
        err.message = fmt::format(
            "tiles '{}' and '{}' are allocated on overlapping {} addresses (partitions [{}, {}) bytes [{}, {}) and "
            "partitions [{}, {}) bytes [{}, {})) while both are alive",
            u.name, t.name, failure->memory == ir::Memory::Psum ? "PSUM" : "SBUF", u.partition_start,
            u.partition_start + (u.shape.empty() ? 0 : u.shape[0]), u.byte_offset,
            u.byte_offset + u.bytes_per_partition(), t.partition_start,
            t.partition_start + (t.shape.empty() ? 0 : t.shape[0]), t.byte_offset,
            t.byte_offset + t.bytes_per_partition());
        err.notes.emplace_back(u.loc, fmt::format("'{}' is allocated here", u.name));
        report(err, &call);
        return false;
      }
      if (t.user_placed) {
        err.message =
            fmt::format("{} allocation of tile '{}' {} of {} at bytes [{}, {}) exceeds the {} bytes of a "
                        "partition",
                        failure->memory == ir::Memory::Psum ? "PSUM" : "SBUF", t.name, shape_text(t.shape),
                        dtype_name(t.dtype), failure->in_use, failure->in_use + failure->needed, failure->capacity);
        report(err, &call);
        return false;
      }
      err.message = fmt::format("{} allocation failed: tile '{}' {} of {} needs {} bytes per partition, but {} of the "
                                "{} bytes are in use by live tiles",
                                failure->memory == ir::Memory::Psum ? "PSUM" : "SBUF", t.name, shape_text(t.shape),
                                dtype_name(t.dtype), failure->needed, failure->in_use, failure->capacity);
      report(err, &call);
      return false;
    }
    // A layout that runs past a tile is nkicc's bug, never the kernel's: stop before emitting it.
    if (auto bad = ir::check_layout(kb.fn, kb.grid, target.info->sbuf_bytes_per_partition,
                                    target.info->psum_bytes_per_partition)) {
      std::string where = bad->instruction == ir::kNoInstruction
                              ? std::string("the allocation")
                              : fmt::format("instruction {} ({})", bad->instruction,
                                            ir::opcode_name(kb.fn.instructions[bad->instruction].opcode));
      diags.internal_error(fmt::format("layout check failed for call {} of kernel '{}' at {}: {}", call.index,
                                       kb.fn.name, where, bad->message));
      return false;
    }
    result.function = std::move(kb.fn);
    return true;
  }

  /// The kernel's return: one tensor, a tuple/list of tensors, or None. Each must live in
  /// shared_hbm (the insert_nki_kernel guard, seed 001 §2.4); one that is an input is an
  /// in-place output and yields an operand-output alias.
  void collect_returns(KernelBuilder &kb, const Value &ret, const std::vector<ir::TensorId> &inputs,
                       KernelTrace &result, const std::string &kernel, SourceLoc def_loc) {
    std::vector<Value> items;
    if (ret.kind == Value::Kind::Tuple || ret.kind == Value::Kind::List) {
      items = ret.seq().items;
      result.result_is_sequence = true;
    } else if (!ret.is_none()) {
      items.push_back(ret);
    }
    for (ir::TensorId id : inputs)
      if (kb.fn.tensors[id].memory != ir::Memory::SharedHbm)
        raise_error("err_shared_hbm_guard", "The input and output tensor of a NKI kernel must be in shared_hbm address "
                                            "space");
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto *t = items[i].as<TensorRef>();
      if (!t)
        raise_error(
            "TypeError",
            fmt::format("kernel '{}' must return tensors, but return value {} is '{}'", kernel, i, type_name(items[i])),
            interp->last_return_loc().valid() ? interp->last_return_loc() : def_loc);
      ir::Tensor &tensor = kb.fn.tensors[t->ap.tensor];
      adopt_whole_view_shape(tensor, *t);
      // Located where the kernel created the tensor it returns. Without the guard (`nkicc
      // simulate`), a private-HBM output is what nki.simulate_kernel accepts; on-chip never is.
      if (tensor.memory == ir::Memory::PrivateHbm && !options.shared_hbm_guard)
        result.private_hbm_output = true;
      else if (tensor.memory != ir::Memory::SharedHbm)
        raise_error("err_shared_hbm_guard",
                    "The input and output tensor of a NKI kernel must be in shared_hbm address space",
                    tensor.loc.valid() ? tensor.loc : def_loc);
      auto in = std::find(inputs.begin(), inputs.end(), t->ap.tensor);
      if (in != inputs.end())
        result.aliases.emplace_back(static_cast<std::size_t>(in - inputs.begin()), i);
      else
        tensor.role = ir::TensorRole::Output;
      kb.fn.output_names.push_back(tensor.name);
      result.returns.push_back({tensor.name, tensor.shape.to_vector(), tensor.dtype});
    }
  }
};

Tracer::Tracer(SourceManager &sources, const Manifest &manifest, const std::vector<python::Module> &modules,
               const ResolvedTarget &target, TraceOptions options, DiagnosticEngine &diags)
    : impl_(std::make_unique<Impl>(sources, manifest, modules, target, std::move(options), diags)) {}

Tracer::~Tracer() = default;

bool Tracer::load_modules() { return impl_->load_modules(); }

const KernelTrace *Tracer::trace_call(const Call &call, bool *hit) {
  if (hit)
    *hit = false;
  return impl_->trace_call(call, hit);
}

void Tracer::count_hit(const std::string &kernel) { ++impl_->caches[kernel].hits; }

const python::Module *Tracer::load_registry_entry(const RegistryEntry &entry, const std::vector<FileId> &texts) {
  return impl_->load_registry_entry(entry, texts);
}

std::shared_ptr<KernelTrace> Tracer::trace_internal(const Call &call, const RegistryEntry &entry,
                                                    const python::Module &source) {
  return impl_->trace_internal(call, entry, source);
}

const std::vector<std::string> &Tracer::imported_files() const { return impl_->loader.files_read(); }

std::vector<SpecializationStats> Tracer::stats() const {
  std::vector<SpecializationStats> out;
  for (const auto &[name, cache] : impl_->caches)
    out.push_back({name, cache.hits, cache.misses, cache.entries.size()});
  return out;
}

} // namespace nkicc::trace
