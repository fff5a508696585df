// The table of standard-library modules nkicc models, and the helpers that build them.
#include "stdlib.h"

#include "collections.h"
#include "types.h"

namespace nkicc::trace::pylib {

void define_function(ModuleObject &module, std::string name, BuiltinFunction::Impl impl) {
  module.globals().set(name, Value::object(std::make_shared<BuiltinFunction>(name, std::move(impl))));
}

std::shared_ptr<ModuleObject> make_stdlib_module(Interpreter &interp, std::string_view name) {
  using Factory = std::shared_ptr<ModuleObject> (*)(Interpreter &);
  static const std::pair<std::string_view, Factory> modules[] = {
      {"math", make_math_module},           {"functools", make_functools_module},
      {"operator", make_operator_module},   {"itertools", make_itertools_module},
      {"collections", make_collections_module},
  };
  for (const auto &[n, make] : modules)
    if (n == name)
      return make(interp);
  return nullptr;
}

} // namespace nkicc::trace::pylib
