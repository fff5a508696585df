// `import` and `from ... import`: the modules an import statement binds, as Python binds them.
// Modules come from the resolver (NKI's modules), then `math`; a module nkicc does not know is
// a placeholder (OpaqueObject), so host code at module level is harmless.
#include "nkicc/trace/interpreter.h"

namespace nkicc::trace {

Value Interpreter::import_name(std::string_view dotted_name, bool has_asname) {
  std::string dotted(dotted_name);
  if (has_asname) {
    std::shared_ptr<Object> m = import_module(dotted);
    return Value::object(m ? m : std::make_shared<OpaqueObject>(dotted));
  }
  // `import a.b.c` binds `a`, and makes `a.b` and `a.b.c` reachable as attributes. When the
  // resolver knows `a.b.c` but not `a.b`, the intermediate is an empty module (a namespace
  // package); when it does not know `a.b.c`, the unknown part is a placeholder.
  bool known = import_module(dotted) != nullptr;
  auto module_for = [&](const std::string &prefix) -> std::shared_ptr<Object> {
    if (std::shared_ptr<Object> m = import_module(prefix))
      return m;
    if (!known)
      return nullptr;
    auto ns = std::make_shared<ModuleObject>(prefix);
    modules_.emplace(prefix, ns);
    return ns;
  };
  std::string root = dotted.substr(0, dotted.find('.'));
  std::shared_ptr<Object> top = module_for(root);
  if (!top)
    top = std::make_shared<OpaqueObject>(root);
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
      child =
          existing && existing->object() ? existing->object()->shared_self() : std::make_shared<OpaqueObject>(prefix);
    }
    parent = child;
  }
  return Value::object(top);
}

std::shared_ptr<Object> Interpreter::import_from_module(std::uint32_t level, std::string_view module) {
  return level ? nullptr : import_module(module);
}

Value Interpreter::import_from(const std::shared_ptr<Object> &m, std::uint32_t level, std::string_view module_name,
                               std::string_view name, SourceLoc loc) {
  std::string dotted = std::string(level, '.') + std::string(module_name);
  std::string full = dotted + (dotted.empty() || dotted.back() == '.' ? "" : ".") + std::string(name);
  if (!m)
    return Value::object(std::make_shared<OpaqueObject>(full));
  std::optional<Value> v = m->get_attr(*this, name);
  if (!v)
    if (std::shared_ptr<Object> sub = import_module(full))
      v = Value::object(sub);
  if (!v)
    raise_python("ImportError",
                 "cannot import name '" + std::string(name) + "' from '" + dotted + "' (unknown location)", loc);
  return std::move(*v);
}

} // namespace nkicc::trace
