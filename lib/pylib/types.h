// The built-in types as values: `int`, `str`, `dict`, `set`, collections' `deque`, ... each a
// LibraryType that isinstance() takes and whose call builds an instance.
#pragma once

#include "common.h"

namespace nkicc::trace::pylib {

/// A built-in type: TypeObject's isinstance() rules, a constructor, and its class attributes
/// (`dict.fromkeys`, unbound methods such as `str.join(sep, items)`).
class LibraryType : public TypeObject {
public:
  LibraryType(std::string type_name, Value::Kind kind, BuiltinFunction::Impl impl) : impl_(std::move(impl)) {
    name = std::move(type_name);
    instance_kind = kind;
  }
  Value call(Interpreter &interp, CallArgs &args) override;
  std::optional<Value> get_attr(Interpreter &interp, std::string_view attr) override;

private:
  BuiltinFunction::Impl impl_;
};

/// A type for isinstance() only (`type(tile)`).
std::shared_ptr<TypeObject> make_type(std::string name, Value::Kind kind);
/// Binds int, float, bool, str, tuple, list, dict, slice, range, set, frozenset, object, type.
void install_types(Scope &builtins);

} // namespace nkicc::trace::pylib
