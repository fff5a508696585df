// NumPy scalars and dtypes: `np.float32(1.5)` with NumPy's arithmetic, `np.dtype(...)`,
// `np.finfo`/`np.iinfo`, and the conversions of Python values into NumPy operands.
#include "numpy_values.h"

#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "unmodelled.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace nkicc::trace {

using python::BinOpKind;
using python::CmpOpKind;
using python::UnaryOpKind;
using namespace numpy;
using K = Value::Kind;

namespace numpy {

// ---- scalars ---------------------------------------------------------------------------------

std::string_view NumpyScalar::type_name() const {
  static const std::string names[] = {"numpy.bool_",   "numpy.int8",     "numpy.int16",   "numpy.int32",
                                      "numpy.int64",   "numpy.uint8",    "numpy.uint16",  "numpy.uint32",
                                      "numpy.uint64",  "numpy.float16",  "numpy.float32", "numpy.float64",
                                      "bfloat16",      "tfloat32",       "float8_e4m3",   "float8_e4m3fn",
                                      "float8_e5m2"};
  return names[static_cast<std::size_t>(value.type)];
}

Value scalar_value(const Scalar &s) { return Value::object(std::make_shared<NumpyScalar>(s)); }

Value python_value(const Scalar &s) {
  if (is_bool(s.type))
    return Value::boolean(s.i != 0);
  if (is_floating(s.type))
    return Value::floating(s.f);
  if (is_unsigned_int(s.type)) {
    if (s.u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      pylib::int_overflow();
    return Value::integer(static_cast<std::int64_t>(s.u));
  }
  return Value::integer(s.i);
}

std::string NumpyScalar::repr() const {
  if (is_bool(value.type))
    return value.i ? "True" : "False";
  if (is_floating(value.type))
    return float_repr(value.type, value.f);
  if (is_unsigned_int(value.type))
    return std::to_string(value.u);
  return std::to_string(value.i);
}

std::optional<std::int64_t> NumpyScalar::hash(Interpreter &interp) { return hash_value(&interp, python_value(value)); }

std::optional<Binary> binary_of(BinOpKind op) {
  switch (op) {
  case BinOpKind::Add:
    return Binary::Add;
  case BinOpKind::Sub:
    return Binary::Subtract;
  case BinOpKind::Mult:
    return Binary::Multiply;
  case BinOpKind::Div:
    return Binary::Divide;
  case BinOpKind::FloorDiv:
    return Binary::FloorDivide;
  case BinOpKind::Mod:
    return Binary::Remainder;
  case BinOpKind::Pow:
    return Binary::Power;
  case BinOpKind::LShift:
    return Binary::LeftShift;
  case BinOpKind::RShift:
    return Binary::RightShift;
  case BinOpKind::BitAnd:
    return Binary::BitAnd;
  case BinOpKind::BitOr:
    return Binary::BitOr;
  case BinOpKind::BitXor:
    return Binary::BitXor;
  default:
    return std::nullopt;
  }
}

std::optional<Binary> binary_of(CmpOpKind op) {
  switch (op) {
  case CmpOpKind::Eq:
    return Binary::Equal;
  case CmpOpKind::NotEq:
    return Binary::NotEqual;
  case CmpOpKind::Lt:
    return Binary::Less;
  case CmpOpKind::LtE:
    return Binary::LessEqual;
  case CmpOpKind::Gt:
    return Binary::Greater;
  case CmpOpKind::GtE:
    return Binary::GreaterEqual;
  default:
    return std::nullopt;
  }
}

std::optional<Value> NumpyScalar::binary_op(Interpreter &interp, BinOpKind op, const Value &other, bool reflected) {
  std::optional<Binary> b = binary_of(op);
  std::optional<Arg> o = as_arg(interp, other);
  if (!o) {
    // With a tile, the scalar is the Python number it stands for (NKI's scalar operand).
    if (other.kind == K::Object && !is_host_value(other)) {
      Value me = python_value(value);
      return reflected ? interp.binary_op(op, other, me) : interp.binary_op(op, me, other);
    }
    return std::nullopt;
  }
  if (!b)
    return std::nullopt;
  Arg self{{value.type, true, value}, nullptr};
  return reflected ? apply_binary(interp, *b, *o, self) : apply_binary(interp, *b, self, *o);
}

std::optional<Value> NumpyScalar::unary_op(Interpreter &interp, UnaryOpKind op) {
  Arg self{{value.type, true, value}, nullptr};
  switch (op) {
  case UnaryOpKind::USub:
    return apply_unary(interp, Unary::Negative, self);
  case UnaryOpKind::UAdd:
    return apply_unary(interp, Unary::Positive, self);
  case UnaryOpKind::Invert:
    return apply_unary(interp, Unary::Invert, self);
  default:
    return std::nullopt;
  }
}

std::optional<Value> NumpyScalar::compare(Interpreter &interp, CmpOpKind op, const Value &other, bool reflected) {
  std::optional<Binary> b = binary_of(op);
  if (!b)
    return std::nullopt;
  std::optional<Arg> o = as_arg(interp, other);
  if (!o) {
    if (other.kind == K::Object && !is_host_value(other)) {
      Value me = python_value(value);
      return reflected ? interp.compare(op, other, me) : interp.compare(op, me, other);
    }
    return std::nullopt;
  }
  Arg self{{value.type, true, value}, nullptr};
  // `a op b` reflected is `b op' a`; comparing in the original order keeps the operator.
  return reflected ? apply_binary(interp, *b, *o, self) : apply_binary(interp, *b, self, *o);
}

std::optional<Value> NumpyScalar::get_attr(Interpreter &interp, std::string_view name) {
  Scalar v = value;
  auto method = [&](std::string n, BuiltinFunction::Impl impl) {
    return Value::object(std::make_shared<BuiltinFunction>(std::move(n), std::move(impl)));
  };
  if (name == "dtype")
    return dtype_value(v.type);
  if (name == "itemsize" || name == "nbytes")
    return Value::integer(static_cast<std::int64_t>(item_size(v.type)));
  if (name == "shape")
    return Value::tuple({});
  if (name == "ndim")
    return Value::integer(0);
  if (name == "size")
    return Value::integer(1);
  if (name == "real" || name == "T")
    return scalar_value(v);
  if (name == "imag")
    return scalar_value(Scalar::of_int(v.type, 0));
  if (name == "item" || name == "tolist" || name == "__float__" || name == "__int__" || name == "__index__") {
    std::string n(name);
    return method(n, [v, n](Interpreter &, CallArgs &a) {
      pylib::arity(n, a, 0, n == "item" ? 1 : 0);
      Value out = python_value(v);
      if (n == "__float__")
        return Value::floating(v.as_double());
      if ((n == "__int__" || n == "__index__") && out.kind == K::Float) {
        if (n == "__index__")
          raise_python("TypeError", "'" + std::string(numpy::type_name(v.type)) + "' object cannot be interpreted as an integer");
        return Value::integer(pylib::float_to_int(std::trunc(out.f)));
      }
      return out;
    });
  }
  if (name == "astype")
    return method("astype", [v](Interpreter &, CallArgs &a) {
      if (a.positional.empty())
        raise_python("TypeError", "astype() missing required argument 'dtype' (pos 1)");
      std::optional<NpType> t = dtype_arg(a.positional[0]);
      return scalar_value(t ? v.cast(*t) : v);
    });
  if (name == "is_integer" && is_floating(v.type))
    return method("is_integer", [v](Interpreter &, CallArgs &a) {
      pylib::arity("is_integer", a, 0, 0);
      return Value::boolean(std::isfinite(v.f) && v.f == std::floor(v.f));
    });
  if (name == "__format__")
    return method("__format__", [v](Interpreter &i, CallArgs &a) {
      pylib::arity("__format__", a, 1, 1);
      if (a.positional[0].kind != K::Str)
        raise_python("TypeError", "format spec must be a str");
      // NumPy formats its scalars as the Python numbers they hold.
      return Value::str(i.format(python_value(v), a.positional[0].str_text()));
    });
  if (name == "__round__")
    return method("__round__", [v](Interpreter &i, CallArgs &a) {
      pylib::arity("__round__", a, 0, 1);
      Value *round = i.builtins().find_local("round");
      CallArgs r;
      r.positional.push_back(python_value(v));
      if (a.positional.empty() || a.positional[0].is_none())
        return i.call(*round, r); // round(np.float32(2.5)) is the int 2
      r.positional.push_back(a.positional[0]);
      Value out = i.call(*round, r);
      return scalar_value(is_floating(v.type) ? Scalar::of_double(v.type, pylib::to_double(out)) : v);
    });
  if (name == "__getitem__")
    return std::nullopt;
  return pylib::unmodelled_attribute(interp, "numpy_scalar", name);
}

// ---- arguments ---------------------------------------------------------------------------------

Value dtype_value(NpType t, bool scalar_type) { return Value::object(std::make_shared<DTypeObject>(t, scalar_type)); }

std::optional<NpType> dtype_arg(const Value &v) {
  if (v.is_none())
    return std::nullopt;
  if (auto *d = v.as<DTypeObject>())
    return d->np_type;
  if (auto *t = v.as<TypeObject>()) {
    if (t->name == "float")
      return NpType::Float64;
    if (t->name == "int")
      return NpType::Int64;
    if (t->name == "bool")
      return NpType::Bool;
  }
  if (v.kind == K::Str)
    if (std::optional<NpType> t = parse_type(v.str_text()))
      return t;
  if (v.kind == K::Str)
    raise_python("TypeError", "data type " + repr(v) + " not understood");
  raise_python("TypeError", "Cannot interpret '" + repr(v) + "' as a data type");
}

bool is_host_value(const Value &v) {
  switch (v.kind) {
  case K::Tuple:
  case K::List:
    for (const Value &item : v.seq().items)
      if (!is_host_value(item))
        return false;
    return true;
  case K::Dict:
    for (const auto &[k, item] : v.dict_data().items())
      if (!is_host_value(item))
        return false;
    return true;
  case K::Object:
    return v.as<NumpyScalar>() || v.as<HostArray>() || v.as<DTypeObject>() || v.as<TypeObject>() ||
           v.as<OpaqueObject>();
  default:
    return true;
  }
}

std::optional<Arg> as_arg(Interpreter &interp, const Value &v) {
  switch (v.kind) {
  case K::Bool:
    return Arg{{NpType::Bool, true, Scalar::of_int(NpType::Bool, v.b)}, nullptr};
  case K::Int:
    return Arg{{NpType::Int64, true, Scalar::of_int(NpType::Int64, v.i)}, nullptr};
  case K::Float:
    return Arg{{NpType::Float64, true, Scalar::of_double(NpType::Float64, v.f)}, nullptr};
  case K::Tuple:
  case K::List: {
    if (!is_host_value(v))
      return std::nullopt;
    std::shared_ptr<HostArray> a = to_array(interp, v, std::nullopt);
    return Arg{{a->type, false, Scalar()}, a};
  }
  case K::Object: {
    if (auto *s = v.as<NumpyScalar>())
      return Arg{{s->value.type, true, s->value}, nullptr};
    if (v.as<HostArray>()) {
      auto a = v.shared_as<HostArray>();
      Scalar zero_d = a->shape.empty() ? get_element(*a, 0) : Scalar();
      return Arg{{a->type, a->shape.empty(), zero_d}, a};
    }
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

} // namespace numpy

std::optional<DType> DTypeObject::nki_dtype() const { return to_nki(np_type); }

Value make_dtype_value(DType dtype, bool scalar_type) { return numpy::dtype_value(from_nki(dtype), scalar_type); }

std::optional<Value> host_number(const Value &v) {
  if (auto *s = v.as<NumpyScalar>())
    return python_value(s->value);
  if (auto *a = v.as<HostArray>(); a && a->size() == 1)
    return python_value(get_element(*a, 0));
  return std::nullopt;
}

std::optional<Value> index_number(const Value &v) {
  if (auto *s = v.as<NumpyScalar>(); s && (is_integer(s->value.type) || is_bool(s->value.type)))
    return python_value(s->value);
  return std::nullopt;
}

std::optional<Value> pylib::as_python_number(const Value &v) {
  if (v.kind == K::Int || v.kind == K::Bool || v.kind == K::Float)
    return v;
  return host_number(v);
}

std::string DTypeObject::repr() const {
  if (scalar_type) {
    if (np_type == NpType::Bool)
      return "<class 'numpy.bool_'>";
    if (np_type > NpType::Float64)
      return "<class '" + std::string(numpy::type_name(np_type)) + "'>";
    return "<class 'numpy." + std::string(numpy::type_name(np_type)) + "'>";
  }
  return "dtype('" + std::string(numpy::type_name(np_type)) + "')";
}

std::string DTypeObject::to_str() const { return scalar_type ? repr() : std::string(numpy::type_name(np_type)); }

std::optional<std::int64_t> DTypeObject::hash(Interpreter &interp) {
  return hash_value(&interp, Value::str(std::string(numpy::type_name(np_type))));
}

std::optional<Value> DTypeObject::compare(Interpreter &, CmpOpKind op, const Value &other, bool) {
  if (op != CmpOpKind::Eq && op != CmpOpKind::NotEq)
    return std::nullopt;
  bool same = false;
  if (auto *d = other.as<DTypeObject>())
    same = d->np_type == np_type;
  else if (other.kind == K::Str)
    same = parse_type(other.str_text()) == std::optional<NpType>(np_type);
  else if (auto *t = other.as<TypeObject>())
    same = (t->name == "float" && np_type == NpType::Float64) || (t->name == "int" && np_type == NpType::Int64) ||
           (t->name == "bool" && np_type == NpType::Bool);
  return Value::boolean(op == CmpOpKind::Eq ? same : !same);
}

std::optional<Value> DTypeObject::get_attr(Interpreter &interp, std::string_view name) {
  std::string tname(numpy::type_name(np_type));
  if (name == "itemsize" || name == "alignment")
    return Value::integer(static_cast<std::int64_t>(item_size(np_type)));
  if (name == "name" || name == "__name__")
    return Value::str(scalar_type && np_type == NpType::Bool ? "bool_" : tname);
  if (name == "kind")
    return Value::str(std::string(1, kind_char(np_type)));
  if (name == "char")
    return Value::str(std::string(1, type_char(np_type)));
  if (name == "str") {
    char order = item_size(np_type) == 1 ? '|' : '<';
    return Value::str(std::string(1, order) + kind_char(np_type) + std::to_string(item_size(np_type)));
  }
  if (name == "byteorder")
    return Value::str(item_size(np_type) == 1 ? "|" : "=");
  if (name == "type")
    return numpy::dtype_value(np_type, true);
  if (name == "shape")
    return Value::tuple({});
  if (name == "ndim")
    return Value::integer(0);
  if (name == "base")
    return numpy::dtype_value(np_type, false);
  if (name == "names" || name == "fields" || name == "subdtype")
    return Value::none();
  if (name == "isbuiltin")
    return Value::integer(1);
  // `nl.fp32.min` / `.max`: NKI's dtypes answer with finfo's and iinfo's bounds.
  if (name == "min" || name == "max") {
    Value info = is_integer(np_type) || is_bool(np_type) ? numpy::iinfo(np_type) : numpy::finfo(np_type);
    Value bound = interp.get_attr(info, name);
    if (std::optional<Value> n = host_number(bound))
      return *n;
    return bound;
  }
  return pylib::unmodelled_attribute(interp, "dtype", name);
}

Value DTypeObject::call(Interpreter &interp, CallArgs &args) {
  if (!scalar_type)
    raise_python("TypeError", "'numpy.dtype[" + std::string(numpy::type_name(np_type)) + "]' object is not callable");
  pylib::no_keywords(numpy::type_name(np_type), args);
  pylib::arity(numpy::type_name(np_type), args, 0, 1);
  if (args.positional.empty())
    return scalar_value(Scalar::of_int(np_type, 0));
  const Value &v = args.positional[0];
  if (v.kind == K::Str) {
    // np.float32("1.5"), np.int32("7"): through Python's float() and int().
    Value *conv = interp.builtins().find_local(is_integer(np_type) ? "int" : is_bool(np_type) ? "bool" : "float");
    CallArgs c;
    c.positional.push_back(v);
    Value n = interp.call(*conv, c);
    std::optional<Arg> a = as_arg(interp, n);
    return scalar_value(a->operand.value.cast(np_type));
  }
  std::optional<Arg> a = as_arg(interp, v);
  if (!a) {
    if (std::optional<Value> n = pylib::as_python_number(v))
      a = as_arg(interp, *n);
    if (!a)
      raise_python("TypeError", std::string(numpy::type_name(np_type)) + "() argument must be a string or a number, "
                                                                        "not '" + std::string(trace::type_name(v)) +
                                    "'");
  }
  if (a->array && !a->array->shape.empty())
    return Value::object(astype(&interp, *a->array, np_type)); // np.float32([1, 2]) is an array
  Scalar s = a->array ? get_element(*a->array, 0) : a->operand.value;
  return scalar_value(s.cast(np_type));
}

// ---- finfo / iinfo ------------------------------------------------------------------------------

namespace numpy {

namespace {
class InfoObject : public Object {
public:
  InfoObject(std::string kind, std::string text, std::vector<std::pair<std::string, Value>> attrs)
      : kind_(std::move(kind)), text_(std::move(text)), attrs_(std::move(attrs)) {}
  std::string_view type_name() const override { return kind_; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override {
    for (const auto &[n, v] : attrs_)
      if (n == name)
        return v;
    return pylib::unmodelled_attribute(interp, kind_, name);
  }
  std::string repr() const override { return text_; }

private:
  std::string kind_, text_;
  std::vector<std::pair<std::string, Value>> attrs_;
};
} // namespace

Value finfo(NpType t) {
  if (!is_floating(t))
    raise_python("ValueError", "data type <class 'numpy." + std::string(type_name(t)) + "'> not inexact");
  struct Params {
    int bits, mant, precision;
    double max, tiny, eps, resolution, subnormal;
  };
  Params p{};
  switch (t) {
  case NpType::Float16:
    p = {16, 10, 3, 65504.0, 6.103515625e-05, 0.0009765625, 1e-3, 5.960464477539063e-08};
    break;
  case NpType::Float32:
  case NpType::TFloat32:
    p = {32, 23, 6, 3.4028234663852886e38, 1.1754943508222875e-38, 1.1920928955078125e-07, 1e-6, 1.401298464324817e-45};
    break;
  case NpType::BFloat16:
    p = {16, 7, 2, 3.3895313892515355e38, 1.1754943508222875e-38, 0.0078125, 1e-2, 9.183549615799121e-41};
    break;
  case NpType::Float64:
    p = {64, 52, 15, 1.7976931348623157e308, 2.2250738585072014e-308, 2.220446049250313e-16, 1e-15, 5e-324};
    break;
  default:
    pylib::raise_unmodelled("np.finfo", "for " + std::string(type_name(t)));
  }
  auto s = [t](double x) { return scalar_value(Scalar::of_double(t, x)); };
  std::string text = "finfo(resolution=" + float_repr(t, p.resolution) + ", min=" + float_repr(t, -p.max) +
                     ", max=" + float_repr(t, p.max) + ", dtype=" + std::string(type_name(t)) + ")";
  if (t == NpType::Float16) // NumPy prints float16's bounds in scientific notation
    text = "finfo(resolution=0.001, min=-6.55040e+04, max=6.55040e+04, dtype=float16)";
  return Value::object(std::make_shared<InfoObject>(
      "finfo", text,
      std::vector<std::pair<std::string, Value>>{{"min", s(-p.max)},
                                                 {"max", s(p.max)},
                                                 {"eps", s(p.eps)},
                                                 {"epsneg", s(p.eps / 2)},
                                                 {"tiny", s(p.tiny)},
                                                 {"smallest_normal", s(p.tiny)},
                                                 {"smallest_subnormal", s(p.subnormal)},
                                                 {"resolution", s(p.resolution)},
                                                 {"bits", Value::integer(p.bits)},
                                                 {"nmant", Value::integer(p.mant)},
                                                 {"precision", Value::integer(p.precision)},
                                                 {"dtype", dtype_value(t)}}));
}

Value iinfo(NpType t) {
  if (!is_integer(t))
    raise_python("ValueError", "Invalid integer data type '" + std::string(1, kind_char(t)) + "'.");
  if (t == NpType::UInt64)
    pylib::raise_unmodelled("np.iinfo(np.uint64)", "(its max needs a big integer)");
  std::int64_t bits = static_cast<std::int64_t>(item_size(t) * 8);
  Value lo, hi;
  if (is_unsigned_int(t)) {
    lo = Value::integer(0);
    hi = Value::integer(static_cast<std::int64_t>((std::uint64_t{1} << bits) - 1));
  } else {
    lo = Value::integer(bits == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (bits - 1)));
    hi = Value::integer(bits == 64 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << (bits - 1)) - 1);
  }
  std::string text = "iinfo(min=" + repr(lo) + ", max=" + repr(hi) + ", dtype=" + std::string(type_name(t)) + ")";
  return Value::object(std::make_shared<InfoObject>(
      "iinfo", text,
      std::vector<std::pair<std::string, Value>>{{"min", lo},
                                                 {"max", hi},
                                                 {"bits", Value::integer(bits)},
                                                 {"dtype", dtype_value(t)},
                                                 {"kind", Value::str(std::string(1, kind_char(t)))}}));
}

} // namespace numpy

} // namespace nkicc::trace
