#include "nkicc/support/py_constant.h"

#include <algorithm>

namespace nkicc {

bool PyConstant::hashable() const {
  switch (kind) {
  case Kind::List:
  case Kind::Dict:
    return false;
  case Kind::Tuple:
    return std::all_of(items.begin(), items.end(), [](const PyConstant &c) { return c.hashable(); });
  case Kind::Ref: // an enum member, a function, a frozen instance of hashable fields
    return std::all_of(dict.begin(), dict.end(), [](const auto &field) { return field.second.hashable(); });
  case Kind::None:
  case Kind::Bool:
  case Kind::Int:
  case Kind::Float:
  case Kind::Str:
    return true;
  }
  return true;
}

const char *PyConstant::type_name() const {
  switch (kind) {
  case Kind::None:
    return "NoneType";
  case Kind::Bool:
    return "bool";
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::Str:
    return "str";
  case Kind::Tuple:
    return "tuple";
  case Kind::List:
    return "list";
  case Kind::Dict:
    return "dict";
  case Kind::Ref:
    return "object";
  }
  return "object";
}

} // namespace nkicc
