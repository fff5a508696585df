// The standard-library modules nkicc models (math, functools, operator, itertools,
// collections, ...) and the helpers that build them: one make_*_module per module, listed in
// stdlib.cpp's table.
#pragma once

#include "common.h"

#include <memory>
#include <string>
#include <string_view>

namespace nkicc::trace::pylib {

/// Binds a built-in function `name` in a module.
void define_function(ModuleObject &module, std::string name, BuiltinFunction::Impl impl);
/// A built-in type (isinstance() takes it) that builds its instances with `impl`. `kind` is its
/// instances' Value kind (Object for deque, Dict for OrderedDict).
Value library_type(std::string name, Value::Kind kind, BuiltinFunction::Impl impl);

/// A standard-library module nkicc models, made on first import; null for any other name.
std::shared_ptr<ModuleObject> make_stdlib_module(Interpreter &interp, std::string_view name);

std::shared_ptr<ModuleObject> make_math_module(Interpreter &interp);
std::shared_ptr<ModuleObject> make_functools_module(Interpreter &interp);
std::shared_ptr<ModuleObject> make_operator_module(Interpreter &interp);
std::shared_ptr<ModuleObject> make_itertools_module(Interpreter &interp);

} // namespace nkicc::trace::pylib
