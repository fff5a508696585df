// `import` and `from ... import`: the values an import statement binds, as Python binds them.
// Module resolution (sys.modules, the resolver's NKI modules, the standard library, kernel files
// and packages) is Interpreter::import_module (module_loader.cpp); a module nkicc does not find
// is a placeholder that says where nkicc looked, so host code at module level is harmless.
#include "nkicc/trace/interpreter.h"

namespace nkicc::trace {

namespace {
/// Makes `importer` the module import_module() resolves relative names and kernel files from,
/// for the duration of one import statement.
class ImporterScope {
public:
  ImporterScope(ModuleObject *&slot, ModuleObject *importer) : slot_(slot), saved_(slot) {
    if (importer)
      slot_ = importer;
  }
  ~ImporterScope() { slot_ = saved_; }
  ImporterScope(const ImporterScope &) = delete;
  ImporterScope &operator=(const ImporterScope &) = delete;

private:
  ModuleObject *&slot_;
  ModuleObject *saved_;
};
} // namespace

Value Interpreter::import_name(std::string_view dotted_name, bool has_asname, ModuleObject *importer, SourceLoc loc) {
  ImporterScope scope(importer_, importer);
  std::string dotted(dotted_name);
  if (has_asname) {
    std::shared_ptr<Object> m = import_module(dotted, 0, loc);
    return m ? Value::object(m) : unresolved_module(dotted);
  }
  // `import a.b.c` binds `a`, and makes `a.b` and `a.b.c` reachable as attributes. When the
  // resolver knows `a.b.c` but not `a.b`, the intermediate is an empty module (a namespace
  // package); when it does not know `a.b.c`, the unknown part is a placeholder.
  bool known = import_module(dotted, 0, loc) != nullptr;
  auto module_for = [&](const std::string &prefix) -> std::shared_ptr<Object> {
    if (std::shared_ptr<Object> m = import_module(prefix, 0, loc))
      return m;
    if (!known)
      return nullptr;
    auto ns = std::make_shared<ModuleObject>(prefix);
    modules_.emplace(prefix, ns);
    return ns;
  };
  auto placeholder = [&](const std::string &name) { return unresolved_module(name).object()->shared_self(); };
  std::string root = dotted.substr(0, dotted.find('.'));
  std::shared_ptr<Object> top = module_for(root);
  if (!top)
    top = placeholder(root);
  std::shared_ptr<Object> parent = top;
  for (std::size_t at = root.size(); at < dotted.size();) {
    std::size_t next = dotted.find('.', at + 1);
    if (next == std::string::npos)
      next = dotted.size();
    std::string part = dotted.substr(at + 1, next - at - 1);
    std::string prefix = dotted.substr(0, next);
    at = next;
    auto *pm = dynamic_cast<ModuleObject *>(parent.get());
    std::shared_ptr<Object> child = module_for(prefix);
    if (child) {
      if (pm && !pm->globals().find_local(part))
        pm->globals().set(part, Value::object(child));
    } else {
      std::optional<Value> existing = pm ? pm->get_attr(*this, part) : std::nullopt;
      child = existing && existing->object() ? existing->object()->shared_self() : placeholder(prefix);
    }
    parent = child;
  }
  return Value::object(top);
}

std::shared_ptr<Object> Interpreter::import_from_module(std::uint32_t level, std::string_view module,
                                                        ModuleObject *importer, SourceLoc loc) {
  // `from ..a import b` resolves by the importing module's __package__ (import_module).
  ImporterScope scope(importer_, importer);
  return import_module(module, static_cast<int>(level), loc);
}

Value Interpreter::import_from(const std::shared_ptr<Object> &m, std::uint32_t level, std::string_view module_name,
                               std::string_view name, SourceLoc loc, ModuleObject *importer) {
  ImporterScope scope(importer_, importer);
  auto *module = dynamic_cast<ModuleObject *>(m.get());
  std::string dotted = module ? module->name() : std::string(level, '.') + std::string(module_name);
  std::string full = dotted + (dotted.empty() || dotted.back() == '.' ? "" : ".") + std::string(name);
  if (!m)
    return unresolved_module(full);
  std::optional<Value> v = m->get_attr(*this, name);
  if (!v && module)
    if (std::shared_ptr<Object> sub = import_module(full, 0, loc))
      v = Value::object(sub);
  if (!v)
    raise_cannot_import(*m, dotted, name, loc);
  return std::move(*v);
}

} // namespace nkicc::trace
