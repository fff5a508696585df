// A Python constant as nkicc carries it from the description file to the cache keys, the
// specialization key and the backend_config: the values JSON can express, plus tuples.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nkicc {

struct PyConstant {
  enum class Kind { None, Bool, Int, Float, Str, Tuple, List, Dict };

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

  /// Python's hashability: lists and dicts are not hashable, nor a tuple that holds one.
  bool hashable() const;
  /// Python's type name (`int`, `list`, `NoneType`, ...), for messages.
  const char *type_name() const;

  friend bool operator==(const PyConstant &, const PyConstant &) = default;
};

} // namespace nkicc
