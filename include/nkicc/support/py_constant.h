// A Python constant as nkicc carries it from the description file to the cache keys, the
// specialization key and the backend_config: the values JSON can express, plus tuples, and
// named references (Ref) that the trace resolves in the kernel's module.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nkicc {

struct PyConstant {
  /// Ref: a value the kernel's module names, resolved when the call is traced: `s` is its dotted
  /// name (`NormType.NO_NORM`, `numpy.greater_equal`, `FlashConfig`); when `b` is set it is
  /// called with the `dict` entries as keyword arguments (a dataclass or namedtuple instance).
  /// Its repr, which keys the caches, is the name, or `Name(field=repr, ...)` in document order.
  enum class Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Ref };

  Kind kind = Kind::None;
  bool b = false;
  std::int64_t i = 0;
  double f = 0.0;
  std::string s;                                        ///< UTF-8 text for Str
  std::vector<PyConstant> items;                        ///< Tuple and List elements
  std::vector<std::pair<std::string, PyConstant>> dict; ///< Dict entries in document order

  static PyConstant none() { return {}; }
  static PyConstant boolean(bool v) {
    PyConstant c;
    c.kind = Kind::Bool;
    c.b = v;
    return c;
  }
  static PyConstant integer(std::int64_t v) {
    PyConstant c;
    c.kind = Kind::Int;
    c.i = v;
    return c;
  }
  static PyConstant floating(double v) {
    PyConstant c;
    c.kind = Kind::Float;
    c.f = v;
    return c;
  }
  static PyConstant str(std::string v) {
    PyConstant c;
    c.kind = Kind::Str;
    c.s = std::move(v);
    return c;
  }
  static PyConstant tuple(std::vector<PyConstant> v) {
    PyConstant c;
    c.kind = Kind::Tuple;
    c.items = std::move(v);
    return c;
  }
  static PyConstant list(std::vector<PyConstant> v) {
    PyConstant c;
    c.kind = Kind::List;
    c.items = std::move(v);
    return c;
  }
  static PyConstant make_dict(std::vector<std::pair<std::string, PyConstant>> v) {
    PyConstant c;
    c.kind = Kind::Dict;
    c.dict = std::move(v);
    return c;
  }

  static PyConstant ref(std::string name) {
    PyConstant c;
    c.kind = Kind::Ref;
    c.s = std::move(name);
    return c;
  }
  static PyConstant ref_call(std::string name, std::vector<std::pair<std::string, PyConstant>> fields) {
    PyConstant c = ref(std::move(name));
    c.b = true;
    c.dict = std::move(fields);
    return c;
  }

  /// Python's hashability: lists and dicts are not hashable, nor a tuple that holds one.
  bool hashable() const;
  /// Python's type name (`int`, `list`, `NoneType`, ...), for messages.
  const char *type_name() const;

  friend bool operator==(const PyConstant &, const PyConstant &) = default;
};

} // namespace nkicc
