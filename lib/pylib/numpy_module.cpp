// The `numpy` module on host values: dtypes and constants, array creation, the ufuncs and their
// `.reduce`, reductions, shape functions. Each function given a tile (any value host NumPy
// does not know) calls the NKI op lib/nki registered under its name (set_tile_function).
#include "numpy_values.h"

#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "stdlib.h"
#include "unmodelled.h"

#include <cmath>

namespace nkicc::trace {

using namespace numpy;
using K = Value::Kind;

namespace numpy {

namespace {

bool any_tile(const CallArgs &args) {
  for (const Value &v : args.positional)
    if (!is_host_value(v))
      return true;
  for (const auto &[k, v] : args.keywords)
    if (!is_host_value(v))
      return true;
  return false;
}

/// Host code computing with what nkicc does not model (`np.allclose(out, expected)` on a kernel
/// launched from a file's test code) gets a placeholder, as the placeholder's own operators
/// give; nullopt when no argument is one, or during a kernel's trace.
std::optional<Value> placeholder_result(const Interpreter &interp, const CallArgs &args) {
  if (interp.tracing_kernel())
    return std::nullopt;
  for (const Value &v : args.positional)
    if (auto *p = v.as<OpaqueObject>())
      return p->derive(p->path());
  for (const auto &[k, v] : args.keywords)
    if (auto *p = v.as<OpaqueObject>())
      return p->derive(p->path());
  return std::nullopt;
}

/// A NumPy function: host NumPy on host values, the NKI op on tiles.
class NumpyFunction : public BuiltinFunction {
public:
  NumpyFunction(std::string name, Impl host) : BuiltinFunction(name, {}), host_(std::move(host)) {}
  Value call(Interpreter &interp, CallArgs &args) override {
    if (std::optional<Value> p = placeholder_result(interp, args))
      return *p;
    if (any_tile(args)) {
      if (!tile.is_none())
        return interp.call(tile, args);
      pylib::raise_unmodelled("np." + name(), "on tiles");
    }
    if (!host_)
      pylib::raise_unmodelled("np." + name(), "on host values");
    return host_(interp, args);
  }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view attr) override {
    if (attr == "__name__")
      return Value::str(name());
    if (reduce_)
      if (attr == "reduce") {
        Impl r = reduce_;
        Value t = tile;
        std::string n = name();
        return Value::object(std::make_shared<BuiltinFunction>(n + ".reduce", [r, t, n](Interpreter &i, CallArgs &a) {
          if (std::optional<Value> p = placeholder_result(i, a))
            return *p;
          if (any_tile(a))
            pylib::raise_unmodelled("np." + n + ".reduce", "on tiles");
          return r(i, a);
        }));
      }
    if (attr == "reduce" || attr == "accumulate" || attr == "outer" || attr == "at" || attr == "reduceat")
      return pylib::unmodelled_value("np." + name() + "." + std::string(attr));
    if (!tile.is_none())
      return interp.find_attr(tile, attr);
    return std::nullopt;
  }
  Value tile; ///< the NKI op (None: none)
  Impl reduce_;

private:
  Impl host_;
};

Arg arg_of(Interpreter &interp, const Value &v, std::string_view function) {
  std::optional<Arg> a = as_arg(interp, v);
  if (!a)
    raise_python("TypeError", "np." + std::string(function) + "() got an argument of type '" +
                                  std::string(trace::type_name(v)) + "', which nkicc's host NumPy does not take");
  return *a;
}

std::shared_ptr<HostArray> array_of(Interpreter &interp, const Value &v, std::string_view function) {
  Arg a = arg_of(interp, v, function);
  if (a.array)
    return a.array;
  auto out = new_array(&interp, a.operand.type, {});
  set_element(*out, 0, a.operand.value);
  return out;
}

void no_out(const pylib::BoundArgs &b, std::size_t k, const std::string &fn) {
  if (b.has(k) && !b.get(k)->is_none())
    pylib::raise_unmodelled("np." + fn, "with out=");
}

bool flag(Interpreter &interp, const Value *v) { return v && interp.truthy(*v); }

Value reduction(Interpreter &interp, CallArgs &args, Reduction r, const std::string &fn) {
  pylib::BoundArgs b(fn, args, {"a", "axis", "dtype", "out", "keepdims"}, 1);
  no_out(b, 3, fn);
  std::optional<NpType> dt = b.has(2) ? dtype_arg(*b.get(2)) : std::nullopt;
  return reduce(interp, r, arg_of(interp, *b.get(0), fn), b.get(1), flag(interp, b.get(4)), dt);
}

std::shared_ptr<HostArray> filled(Interpreter &interp, std::vector<std::int64_t> shape, NpType t, const Scalar &v) {
  auto a = new_array(&interp, t, std::move(shape));
  for (std::int64_t k = 0, n = a->size(); k < n; ++k)
    set_element(*a, k, v);
  return a;
}

/// np.zeros / ones / empty / full, and their *_like forms.
Value creation(Interpreter &interp, CallArgs &args, const std::string &fn, bool like, int value) {
  pylib::BoundArgs b = value == 2
                           ? pylib::BoundArgs(fn, args, {like ? "a" : "shape", "fill_value", "dtype", "order"}, 2)
                           : pylib::BoundArgs(fn, args, {like ? "a" : "shape", "dtype", "order"}, 1);
  std::size_t dtype_at = value == 2 ? 2 : 1;
  std::optional<NpType> dt = b.has(dtype_at) ? dtype_arg(*b.get(dtype_at)) : std::nullopt;
  std::vector<std::int64_t> shape;
  NpType t = NpType::Float64;
  if (like) {
    auto a = array_of(interp, *b.get(0), fn);
    shape = a->shape;
    t = a->type;
  } else {
    shape = shape_arg(interp, *b.get(0), fn);
  }
  Scalar v = Scalar::of_int(NpType::Int64, value == 1 ? 1 : 0);
  if (value == 2) {
    Arg f = arg_of(interp, *b.get(1), fn);
    if (f.array && !f.array->shape.empty())
      pylib::raise_unmodelled("np." + fn, "with an array fill value");
    v = f.array ? get_element(*f.array, 0) : f.operand.value;
    if (!like)
      t = v.type;
  }
  if (dt)
    t = *dt;
  return Value::object(filled(interp, shape, t, v.cast(t)));
}

Value arange(Interpreter &interp, CallArgs &args) {
  pylib::BoundArgs b("arange", args, {"start", "stop", "step", "dtype"}, 0);
  if (!b.has(0))
    raise_python("TypeError", "arange() missing required argument 'start' (pos 1)");
  std::vector<Arg> bounds;
  for (std::size_t k = 0; k < 3; ++k)
    if (b.has(k) && !b.get(k)->is_none())
      bounds.push_back(arg_of(interp, *b.get(k), "arange"));
  Arg zero{{NpType::Int64, true, Scalar::of_int(NpType::Int64, 0)}, nullptr};
  Arg one{{NpType::Int64, true, Scalar::of_int(NpType::Int64, 1)}, nullptr};
  Arg start = bounds.size() == 1 ? zero : bounds[0];
  Arg stop = bounds.size() == 1 ? bounds[0] : bounds[1];
  Arg step = bounds.size() == 3 ? bounds[2] : one;
  NpType t = promote_types(promote_types(start.operand.type, stop.operand.type), step.operand.type);
  if (is_bool(t))
    t = NpType::Int64;
  std::optional<NpType> dt = b.has(3) ? dtype_arg(*b.get(3)) : std::nullopt;
  double s0 = start.operand.value.as_double(), s1 = stop.operand.value.as_double(), st = step.operand.value.as_double();
  if (st == 0)
    raise_python("ZeroDivisionError", "division by zero");
  std::int64_t n;
  if (is_integer(t)) {
    std::int64_t a = start.operand.value.i, z = stop.operand.value.i, d = step.operand.value.i;
    n = d > 0 ? (z > a ? (z - a + d - 1) / d : 0) : (a > z ? (a - z - d - 1) / (-d) : 0);
  } else {
    double len = std::ceil((s1 - s0) / st);
    if (!std::isfinite(len))
      raise_python("ValueError", "arange: cannot compute length");
    n = len > 0 ? static_cast<std::int64_t>(len) : 0;
  }
  NpType out_t = dt.value_or(t);
  auto a = new_array(&interp, out_t, {n});
  for (std::int64_t k = 0; k < n; ++k) {
    if (is_integer(t))
      set_element(*a, k, Scalar::of_int(NpType::Int64, start.operand.value.i + k * step.operand.value.i));
    else
      set_element(*a, k, Scalar::of_double(NpType::Float64, s0 + static_cast<double>(k) * st));
  }
  return Value::object(a);
}

Value linspace(Interpreter &interp, CallArgs &args) {
  pylib::BoundArgs b("linspace", args, {"start", "stop", "num", "endpoint", "retstep", "dtype", "axis"}, 2);
  double start = pylib::to_double(*b.get(0)), stop = pylib::to_double(*b.get(1));
  std::int64_t num = b.has(2) ? index_of(*b.get(2), "num") : 50;
  if (num < 0)
    raise_python("ValueError", "Number of samples, " + std::to_string(num) + ", must be non-negative.");
  bool endpoint = !b.has(3) || interp.truthy(*b.get(3));
  std::int64_t div = endpoint ? num - 1 : num;
  double step = div > 0 ? (stop - start) / static_cast<double>(div) : NAN;
  std::optional<NpType> dt = b.has(5) ? dtype_arg(*b.get(5)) : std::nullopt;
  auto a = new_array(&interp, dt.value_or(NpType::Float64), {num});
  for (std::int64_t k = 0; k < num; ++k)
    set_element(*a, k, Scalar::of_double(NpType::Float64, div > 0 ? static_cast<double>(k) * step + start : start));
  if (endpoint && num > 1)
    set_element(*a, num - 1, Scalar::of_double(NpType::Float64, stop));
  if (flag(interp, b.get(4)))
    return Value::tuple({Value::object(a), Value::floating(step)});
  return Value::object(a);
}

Value eye(Interpreter &interp, CallArgs &args, bool identity) {
  std::string fn = identity ? "identity" : "eye";
  pylib::BoundArgs b = identity ? pylib::BoundArgs(fn, args, {"n", "dtype"}, 1)
                                : pylib::BoundArgs(fn, args, {"N", "M", "k", "dtype"}, 1);
  std::int64_t n = index_of(*b.get(0), fn);
  std::int64_t m = !identity && b.has(1) && !b.get(1)->is_none() ? index_of(*b.get(1), fn) : n;
  std::int64_t k = !identity && b.has(2) ? index_of(*b.get(2), fn) : 0;
  std::size_t dtype_at = identity ? 1 : 3;
  NpType t = b.has(dtype_at) ? dtype_arg(*b.get(dtype_at)).value_or(NpType::Float64) : NpType::Float64;
  auto a = new_array(&interp, t, {n, m});
  for (std::int64_t r = 0; r < n; ++r)
    if (r + k >= 0 && r + k < m)
      set_element(*a, r * m + r + k, Scalar::of_int(NpType::Int64, 1));
  return Value::object(a);
}

Value concatenate(Interpreter &interp, CallArgs &args, bool stack) {
  std::string fn = stack ? "stack" : "concatenate";
  pylib::BoundArgs b(fn, args, {"arrays", "axis", "out", "dtype"}, 1);
  no_out(b, 2, fn);
  std::vector<std::shared_ptr<HostArray>> parts;
  for (const Value &v : interp.to_list(*b.get(0)))
    parts.push_back(array_of(interp, v, fn));
  if (parts.empty())
    raise_python("ValueError", "need at least one array to " + std::string(stack ? "stack" : "concatenate"));
  std::int64_t axis = b.has(1) && !b.get(1)->is_none() ? index_of(*b.get(1), fn) : 0;
  if (stack) {
    for (const auto &p : parts)
      if (p->shape != parts[0]->shape)
        raise_python("ValueError", "all input arrays must have the same shape");
    for (auto &p : parts) {
      std::int64_t nd = static_cast<std::int64_t>(p->shape.size()) + 1;
      std::int64_t ax = axis < 0 ? axis + nd : axis;
      if (ax < 0 || ax >= nd)
        raise_error("AxisError",
                    "axis " + std::to_string(axis) + " is out of bounds for array of dimension " + std::to_string(nd));
      std::vector<std::int64_t> shape = p->shape;
      shape.insert(shape.begin() + ax, 1);
      p = reshape(interp, p, shape);
    }
    axis = axis < 0 ? axis + static_cast<std::int64_t>(parts[0]->shape.size()) : axis;
  }
  std::size_t nd = parts[0]->shape.size();
  if (nd == 0)
    raise_python("ValueError", "zero-dimensional arrays cannot be concatenated");
  std::int64_t ax = axis < 0 ? axis + static_cast<std::int64_t>(nd) : axis;
  if (ax < 0 || ax >= static_cast<std::int64_t>(nd))
    raise_error("AxisError",
                "axis " + std::to_string(axis) + " is out of bounds for array of dimension " + std::to_string(nd));
  NpType t = parts[0]->type;
  std::vector<std::int64_t> shape = parts[0]->shape;
  shape[static_cast<std::size_t>(ax)] = 0;
  for (const auto &p : parts) {
    if (p->shape.size() != nd)
      raise_python("ValueError", "all the input array dimensions except for the concatenation axis must match exactly");
    for (std::size_t d = 0; d < nd; ++d)
      if (d != static_cast<std::size_t>(ax) && p->shape[d] != parts[0]->shape[d])
        raise_python("ValueError",
                     "all the input array dimensions except for the concatenation axis must match exactly, but along "
                     "dimension " +
                         std::to_string(d) + ", the array at index 0 has size " + std::to_string(parts[0]->shape[d]) +
                         " and the array at index 1 has size " + std::to_string(p->shape[d]));
    shape[static_cast<std::size_t>(ax)] += p->shape[static_cast<std::size_t>(ax)];
    t = promote_types(t, p->type);
  }
  if (b.has(3) && !b.get(3)->is_none())
    t = *dtype_arg(*b.get(3));
  auto out = new_array(&interp, t, shape);
  // Copy part by part: the output index along the axis advances by each part's extent.
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < static_cast<std::size_t>(ax); ++d)
    outer *= shape[d];
  for (std::size_t d = static_cast<std::size_t>(ax) + 1; d < nd; ++d)
    inner *= shape[d];
  std::int64_t at = 0, total = shape[static_cast<std::size_t>(ax)];
  for (const auto &p : parts) {
    std::int64_t len = p->shape[static_cast<std::size_t>(ax)];
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t l = 0; l < len; ++l)
        for (std::int64_t i = 0; i < inner; ++i)
          set_element(*out, (o * total + at + l) * inner + i, get_element(*p, (o * len + l) * inner + i));
    at += len;
  }
  return Value::object(out);
}

Value where(Interpreter &interp, CallArgs &args) {
  if (args.positional.size() == 1)
    pylib::raise_unmodelled("np.where", "with one argument");
  pylib::arity("where", args, 3, 3);
  Arg c = arg_of(interp, args.positional[0], "where"), x = arg_of(interp, args.positional[1], "where"),
      y = arg_of(interp, args.positional[2], "where");
  NpType t = result_type({x.operand, y.operand});
  auto shape_of = [](const Arg &a) { return a.array ? a.array->shape : std::vector<std::int64_t>{}; };
  std::vector<std::int64_t> shape = broadcast_shapes(broadcast_shapes(shape_of(c), shape_of(x)), shape_of(y));
  auto pick = [&](const Arg &a, std::int64_t k) {
    if (!a.array)
      return a.operand.value;
    // index k of the broadcast shape, mapped into the operand
    std::int64_t rem = k, idx = 0, mult = 1;
    std::size_t skip = shape.size() - a.array->shape.size();
    for (std::size_t d = shape.size(); d-- > skip;) {
      std::int64_t i = rem % shape[d];
      rem /= shape[d];
      std::int64_t n = a.array->shape[d - skip];
      idx += (n == 1 ? 0 : i) * mult;
      mult *= n;
    }
    return get_element(*a.array, idx);
  };
  auto out = new_array(&interp, t, shape);
  for (std::int64_t k = 0, n = out->size(); k < n; ++k)
    set_element(*out, k, (pick(c, k).truthy() ? pick(x, k) : pick(y, k)).cast(t));
  if (shape.empty())
    return scalar_value(get_element(*out, 0));
  return Value::object(out);
}

Value round_values(Interpreter &interp, CallArgs &args) {
  pylib::BoundArgs b("round", args, {"a", "decimals", "out"}, 1);
  no_out(b, 2, "round");
  std::int64_t decimals = b.has(1) ? index_of(*b.get(1), "decimals") : 0;
  Arg a = arg_of(interp, *b.get(0), "round");
  if (decimals == 0 || is_integer(a.operand.type))
    return apply_unary(interp, Unary::Rint, a,
                       is_floating(a.operand.type) ? std::nullopt : std::optional(a.operand.type));
  // NumPy: rint(x * 10**d) / 10**d, in the array's type.
  Arg scale{{NpType::Float64, true, Scalar::of_double(NpType::Float64, std::pow(10.0, static_cast<double>(decimals)))},
            nullptr};
  Value scaled = apply_binary(interp, Binary::Multiply, a, scale, a.operand.type);
  Value rounded = apply_unary(interp, Unary::Rint, arg_of(interp, scaled, "round"));
  return apply_binary(interp, Binary::Divide, arg_of(interp, rounded, "round"), scale, a.operand.type);
}

Value isclose(Interpreter &interp, const Value &a, const Value &b, double rtol, double atol, bool equal_nan) {
  Arg x = arg_of(interp, a, "isclose"), y = arg_of(interp, b, "isclose");
  Value diff = apply_unary(interp, Unary::Absolute,
                           arg_of(interp, apply_binary(interp, Binary::Subtract, x, y, NpType::Float64), "isclose"));
  Value tol = apply_binary(
      interp, Binary::Add, Arg{{NpType::Float64, true, Scalar::of_double(NpType::Float64, atol)}, nullptr},
      arg_of(interp,
             apply_binary(interp, Binary::Multiply,
                          Arg{{NpType::Float64, true, Scalar::of_double(NpType::Float64, rtol)}, nullptr},
                          arg_of(interp, apply_unary(interp, Unary::Absolute, y, NpType::Float64), "isclose")),
             "isclose"));
  Value close =
      apply_binary(interp, Binary::LessEqual, arg_of(interp, diff, "isclose"), arg_of(interp, tol, "isclose"));
  // Equal infinities are close; NaNs only with equal_nan.
  Value same = apply_binary(interp, Binary::Equal, x, y, NpType::Float64);
  close = apply_binary(interp, Binary::LogicalOr, arg_of(interp, close, "isclose"), arg_of(interp, same, "isclose"));
  if (equal_nan) {
    Value both_nan = apply_binary(interp, Binary::LogicalAnd,
                                  arg_of(interp, apply_unary(interp, Unary::IsNan, x, NpType::Float64), "isclose"),
                                  arg_of(interp, apply_unary(interp, Unary::IsNan, y, NpType::Float64), "isclose"));
    close =
        apply_binary(interp, Binary::LogicalOr, arg_of(interp, close, "isclose"), arg_of(interp, both_nan, "isclose"));
  }
  return close;
}

} // namespace

} // namespace numpy

std::shared_ptr<ModuleObject> make_numpy_module(Interpreter *) {
  auto m = make_library_module("numpy", "numpy");
  Scope &g = m->globals();
  auto fn = [&](const std::string &name, BuiltinFunction::Impl impl) -> NumpyFunction & {
    auto f = std::make_shared<NumpyFunction>(name, std::move(impl));
    g.set(name, Value::object(f));
    return *f;
  };
  // Dtypes: the scalar types (np.float32 builds a scalar, and names the dtype).
  for (NpType t :
       {NpType::Bool,         NpType::Int8,       NpType::Int16,        NpType::Int32,          NpType::Int64,
        NpType::UInt8,        NpType::UInt16,     NpType::UInt32,       NpType::UInt64,         NpType::Float16,
        NpType::Float32,      NpType::Float64,    NpType::BFloat16,     NpType::TFloat32,       NpType::Float8E4M3,
        NpType::Float8E4M3FN, NpType::Float8E5M2, NpType::Float8E5M2X4, NpType::Float8E4M3FNX4, NpType::Float4E2M1FNX4,
        NpType::Float8E8M0FNU})
    g.set(t == NpType::Bool ? "bool_" : std::string(type_name(t)), dtype_value(t, true));
  // NKI puts its own dtypes (bfloat16, float8_*) beside NumPy's; and the long-standing aliases.
  for (auto [alias, t] : {std::pair{"bool", NpType::Bool},
                          {"bool8", NpType::Bool},
                          {"int_", NpType::Int64},
                          {"intc", NpType::Int32},
                          {"intp", NpType::Int64},
                          {"uint", NpType::UInt64},
                          {"uintc", NpType::UInt32},
                          {"uintp", NpType::UInt64},
                          {"byte", NpType::Int8},
                          {"ubyte", NpType::UInt8},
                          {"short", NpType::Int16},
                          {"ushort", NpType::UInt16},
                          {"longlong", NpType::Int64},
                          {"ulonglong", NpType::UInt64},
                          {"half", NpType::Float16},
                          {"single", NpType::Float32},
                          {"double", NpType::Float64},
                          {"float_", NpType::Float64}})
    g.set(alias, dtype_value(t, true));
  g.set("pi", Value::floating(3.141592653589793));
  g.set("e", Value::floating(2.718281828459045));
  g.set("euler_gamma", Value::floating(0.5772156649015329));
  for (const char *n : {"inf", "Inf", "Infinity", "PINF", "infty"})
    g.set(n, Value::floating(INFINITY));
  g.set("NINF", Value::floating(-INFINITY));
  for (const char *n : {"nan", "NaN", "NAN"})
    g.set(n, Value::floating(NAN));
  g.set("newaxis", Value::none());

  // dtype utilities
  pylib::define_function(*m, "dtype", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("dtype", a, {"dtype", "align", "copy"}, 1);
    if (auto *arr = b.get(0)->as<HostArray>())
      return dtype_value(arr->type);
    (void)i;
    std::optional<NpType> t = dtype_arg(*b.get(0));
    return dtype_value(t.value_or(NpType::Float64));
  });
  auto type_of = [](Interpreter &i, const Value &v) -> NpType {
    if (std::optional<Arg> a = as_arg(i, v))
      return a->operand.type;
    return dtype_arg(v).value_or(NpType::Float64);
  };
  pylib::define_function(*m, "finfo", [type_of](Interpreter &i, CallArgs &a) {
    pylib::arity("finfo", a, 1, 1);
    return finfo(type_of(i, a.positional[0]));
  });
  pylib::define_function(*m, "iinfo", [type_of](Interpreter &i, CallArgs &a) {
    pylib::arity("iinfo", a, 1, 1);
    return iinfo(type_of(i, a.positional[0]));
  });
  pylib::define_function(*m, "promote_types", [](Interpreter &, CallArgs &a) {
    pylib::arity("promote_types", a, 2, 2);
    return dtype_value(promote_types(dtype_arg(a.positional[0]).value_or(NpType::Float64),
                                     dtype_arg(a.positional[1]).value_or(NpType::Float64)));
  });
  pylib::define_function(*m, "result_type", [](Interpreter &i, CallArgs &a) {
    if (a.positional.empty())
      raise_python("ValueError", "at least one array or dtype is required");
    std::vector<Operand> ops;
    for (const Value &v : a.positional) {
      if (std::optional<Arg> x = as_arg(i, v))
        ops.push_back(x->operand);
      else
        ops.push_back({dtype_arg(v).value_or(NpType::Float64), false, Scalar()});
    }
    return dtype_value(result_type(ops));
  });

  // Array creation.
  auto array_fn = [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("array", a, {"object", "dtype", "copy", "order", "subok", "ndmin", "like"}, 1);
    std::optional<NpType> dt = b.has(1) ? dtype_arg(*b.get(1)) : std::nullopt;
    return Value::object(to_array(i, *b.get(0), dt));
  };
  fn("array", array_fn);
  fn("asarray", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("asarray", a, {"a", "dtype", "order", "like"}, 1);
    std::optional<NpType> dt = b.has(1) ? dtype_arg(*b.get(1)) : std::nullopt;
    if (auto *arr = b.get(0)->as<HostArray>(); arr && (!dt || *dt == arr->type))
      return *b.get(0);
    return Value::object(to_array(i, *b.get(0), dt));
  });
  fn("ascontiguousarray", array_fn);
  fn("copy", [](Interpreter &i, CallArgs &a) {
    pylib::arity("copy", a, 1, 1);
    return Value::object(to_array(i, a.positional[0], std::nullopt));
  });
  fn("zeros", [](Interpreter &i, CallArgs &a) { return creation(i, a, "zeros", false, 0); });
  fn("empty", [](Interpreter &i, CallArgs &a) { return creation(i, a, "empty", false, 0); });
  fn("ones", [](Interpreter &i, CallArgs &a) { return creation(i, a, "ones", false, 1); });
  fn("full", [](Interpreter &i, CallArgs &a) { return creation(i, a, "full", false, 2); });
  fn("zeros_like", [](Interpreter &i, CallArgs &a) { return creation(i, a, "zeros_like", true, 0); });
  fn("empty_like", [](Interpreter &i, CallArgs &a) { return creation(i, a, "empty_like", true, 0); });
  fn("ones_like", [](Interpreter &i, CallArgs &a) { return creation(i, a, "ones_like", true, 1); });
  fn("full_like", [](Interpreter &i, CallArgs &a) { return creation(i, a, "full_like", true, 2); });
  fn("arange", arange);
  fn("linspace", linspace);
  fn("identity", [](Interpreter &i, CallArgs &a) { return eye(i, a, true); });
  fn("eye", [](Interpreter &i, CallArgs &a) { return eye(i, a, false); });

  // Universal functions: a NumPy scalar out of scalars, an array out of arrays.
  for (Binary op :
       {Binary::Add,        Binary::Subtract,     Binary::Multiply,   Binary::Divide,    Binary::FloorDivide,
        Binary::Remainder,  Binary::Power,        Binary::Maximum,    Binary::Minimum,   Binary::Fmax,
        Binary::Fmin,       Binary::BitAnd,       Binary::BitOr,      Binary::BitXor,    Binary::LeftShift,
        Binary::RightShift, Binary::Equal,        Binary::NotEqual,   Binary::Less,      Binary::LessEqual,
        Binary::Greater,    Binary::GreaterEqual, Binary::LogicalAnd, Binary::LogicalOr, Binary::LogicalXor,
        Binary::Arctan2,    Binary::Hypot,        Binary::Copysign,   Binary::Fmod}) {
    std::string name(binary_name(op));
    auto impl = [op, name](Interpreter &i, CallArgs &a) {
      pylib::BoundArgs b(name, a, {"x1", "x2", "out", "dtype"}, 2);
      no_out(b, 2, name);
      std::optional<NpType> dt = b.has(3) ? dtype_arg(*b.get(3)) : std::nullopt;
      return apply_binary(i, op, arg_of(i, *b.get(0), name), arg_of(i, *b.get(1), name), dt);
    };
    NumpyFunction &f = fn(name, impl);
    // ufunc.reduce: along axis 0 by default (np.add.reduce is np.sum(axis=0)).
    std::optional<Reduction> red = op == Binary::Add          ? std::optional(Reduction::Sum)
                                   : op == Binary::Multiply   ? std::optional(Reduction::Prod)
                                   : op == Binary::Maximum    ? std::optional(Reduction::Max)
                                   : op == Binary::Minimum    ? std::optional(Reduction::Min)
                                   : op == Binary::LogicalAnd ? std::optional(Reduction::All)
                                   : op == Binary::LogicalOr  ? std::optional(Reduction::Any)
                                                              : std::nullopt;
    if (red)
      f.reduce_ = [r = *red, name](Interpreter &i, CallArgs &a) {
        pylib::BoundArgs b(name + ".reduce", a, {"array", "axis", "dtype", "out", "keepdims"}, 1);
        no_out(b, 3, name + ".reduce");
        Value zero = Value::integer(0);
        const Value *axis = b.has(1) ? b.get(1) : &zero;
        std::optional<NpType> dt = b.has(2) ? dtype_arg(*b.get(2)) : std::nullopt;
        return reduce(i, r, arg_of(i, *b.get(0), name), axis, flag(i, b.get(4)), dt);
      };
  }
  for (Unary op :
       {Unary::Negative, Unary::Positive,   Unary::Absolute, Unary::Invert,  Unary::LogicalNot, Unary::Sign,
        Unary::Square,   Unary::Reciprocal, Unary::Sqrt,     Unary::Cbrt,    Unary::Exp,        Unary::Exp2,
        Unary::Expm1,    Unary::Log,        Unary::Log2,     Unary::Log10,   Unary::Log1p,      Unary::Sin,
        Unary::Cos,      Unary::Tan,        Unary::Arcsin,   Unary::Arccos,  Unary::Arctan,     Unary::Sinh,
        Unary::Cosh,     Unary::Tanh,       Unary::Arcsinh,  Unary::Arccosh, Unary::Arctanh,    Unary::Ceil,
        Unary::Floor,    Unary::Trunc,      Unary::Rint,     Unary::IsNan,   Unary::IsInf,      Unary::IsFinite,
        Unary::Signbit,  Unary::Degrees,    Unary::Radians}) {
    std::string name(unary_name(op));
    fn(name, [op, name](Interpreter &i, CallArgs &a) {
      pylib::BoundArgs b(name, a, {"x", "out", "dtype"}, 1);
      no_out(b, 1, name);
      std::optional<NpType> dt = b.has(2) ? dtype_arg(*b.get(2)) : std::nullopt;
      return apply_unary(i, op, arg_of(i, *b.get(0), name), dt);
    });
  }
  // The other names of the same ufuncs.
  for (auto [alias, name] : {std::pair{"true_divide", "divide"},
                             {"mod", "remainder"},
                             {"bitwise_not", "invert"},
                             {"abs", "absolute"},
                             {"deg2rad", "radians"},
                             {"rad2deg", "degrees"},
                             {"fix", "trunc"}})
    g.set(alias, *g.find_local(name));

  // Reductions.
  for (auto [name, r] : {std::pair{"sum", Reduction::Sum},
                         {"prod", Reduction::Prod},
                         {"max", Reduction::Max},
                         {"amax", Reduction::Max},
                         {"min", Reduction::Min},
                         {"amin", Reduction::Min},
                         {"mean", Reduction::Mean},
                         {"all", Reduction::All},
                         {"any", Reduction::Any},
                         {"argmax", Reduction::ArgMax},
                         {"argmin", Reduction::ArgMin}}) {
    std::string n = name;
    Reduction red = r;
    fn(n, [n, red](Interpreter &i, CallArgs &a) { return reduction(i, a, red, n); });
  }
  fn("cumsum", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("cumsum", a, {"a", "axis", "dtype", "out"}, 1);
    auto arr = array_of(i, *b.get(0), "cumsum");
    CallArgs rest;
    if (b.has(1))
      rest.positional.push_back(*b.get(1));
    return i.call(*arr->get_attr(i, "cumsum"), rest);
  });

  // Shapes.
  fn("reshape", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("reshape", a, {"a", "newshape", "order"}, 2);
    return Value::object(reshape(i, array_of(i, *b.get(0), "reshape"), shape_arg(i, *b.get(1), "reshape")));
  });
  fn("transpose", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("transpose", a, {"a", "axes"}, 1);
    std::vector<std::int64_t> axes;
    if (b.has(1) && !b.get(1)->is_none())
      axes = shape_arg(i, *b.get(1), "transpose");
    return Value::object(transpose(array_of(i, *b.get(0), "transpose"), axes));
  });
  fn("ravel", [](Interpreter &i, CallArgs &a) {
    pylib::arity("ravel", a, 1, 1);
    auto arr = array_of(i, a.positional[0], "ravel");
    return Value::object(reshape(i, arr, {arr->size()}));
  });
  fn("expand_dims", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("expand_dims", a, {"a", "axis"}, 2);
    auto arr = array_of(i, *b.get(0), "expand_dims");
    std::vector<std::int64_t> shape = arr->shape;
    std::int64_t nd = static_cast<std::int64_t>(shape.size()) + 1, ax = index_of(*b.get(1), "axis");
    if (ax < -nd || ax >= nd)
      raise_error("AxisError",
                  "axis " + std::to_string(ax) + " is out of bounds for array of dimension " + std::to_string(nd));
    shape.insert(shape.begin() + (ax < 0 ? ax + nd : ax), 1);
    return Value::object(reshape(i, arr, shape));
  });
  fn("squeeze", [](Interpreter &i, CallArgs &a) {
    pylib::arity("squeeze", a, 1, 1);
    auto arr = array_of(i, a.positional[0], "squeeze");
    CallArgs none;
    return i.call(*arr->get_attr(i, "squeeze"), none);
  });
  fn("concatenate", [](Interpreter &i, CallArgs &a) { return concatenate(i, a, false); });
  fn("stack", [](Interpreter &i, CallArgs &a) { return concatenate(i, a, true); });
  fn("broadcast_to", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("broadcast_to", a, {"array", "shape", "subok"}, 2);
    auto arr = array_of(i, *b.get(0), "broadcast_to");
    std::vector<std::int64_t> shape = shape_arg(i, *b.get(1), "broadcast_to");
    if (broadcast_shapes(arr->shape, shape) != shape)
      raise_python("ValueError", "operands could not be broadcast together with remapped shapes");
    auto out = new_array(&i, arr->type, shape);
    return apply_binary(
        i, Binary::Add, Arg{{arr->type, false, Scalar()}, out},
        Arg{{arr->type, arr->shape.empty(), arr->shape.empty() ? get_element(*arr, 0) : Scalar()}, arr});
  });
  fn("where", where);
  fn("clip", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("clip", a, {"a", "a_min", "a_max", "out"}, 3);
    no_out(b, 3, "clip");
    Value out = *b.get(0);
    if (!b.get(1)->is_none())
      out = apply_binary(i, Binary::Maximum, arg_of(i, out, "clip"), arg_of(i, *b.get(1), "clip"));
    if (!b.get(2)->is_none())
      out = apply_binary(i, Binary::Minimum, arg_of(i, out, "clip"), arg_of(i, *b.get(2), "clip"));
    return out;
  });
  fn("round", round_values);
  fn("around", round_values);
  fn("isclose", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("isclose", a, {"a", "b", "rtol", "atol", "equal_nan"}, 2);
    return isclose(i, *b.get(0), *b.get(1), b.has(2) ? pylib::to_double(*b.get(2)) : 1e-05,
                   b.has(3) ? pylib::to_double(*b.get(3)) : 1e-08, flag(i, b.get(4)));
  });
  fn("allclose", [](Interpreter &i, CallArgs &a) {
    pylib::BoundArgs b("allclose", a, {"a", "b", "rtol", "atol", "equal_nan"}, 2);
    Value close = isclose(i, *b.get(0), *b.get(1), b.has(2) ? pylib::to_double(*b.get(2)) : 1e-05,
                          b.has(3) ? pylib::to_double(*b.get(3)) : 1e-08, flag(i, b.get(4)));
    return Value::boolean(i.truthy(reduce(i, Reduction::All, arg_of(i, close, "allclose"), nullptr, false)));
  });
  fn("array_equal", [](Interpreter &i, CallArgs &a) {
    pylib::arity("array_equal", a, 2, 2);
    auto x = array_of(i, a.positional[0], "array_equal"), y = array_of(i, a.positional[1], "array_equal");
    if (x->shape != y->shape)
      return Value::boolean(false);
    Value eq = apply_binary(i, Binary::Equal, arg_of(i, a.positional[0], "array_equal"),
                            arg_of(i, a.positional[1], "array_equal"));
    return Value::boolean(i.truthy(reduce(i, Reduction::All, arg_of(i, eq, "array_equal"), nullptr, false)));
  });
  fn("matmul", [](Interpreter &i, CallArgs &a) {
    pylib::arity("matmul", a, 2, 2);
    return i.binary_op(python::BinOpKind::MatMult, Value::object(array_of(i, a.positional[0], "matmul")),
                       Value::object(array_of(i, a.positional[1], "matmul")));
  });
  g.set("dot", *g.find_local("matmul"));
  fn("ndim", [](Interpreter &i, CallArgs &a) {
    pylib::arity("ndim", a, 1, 1);
    return Value::integer(static_cast<std::int64_t>(array_of(i, a.positional[0], "ndim")->shape.size()));
  });
  fn("size", [](Interpreter &i, CallArgs &a) {
    pylib::arity("size", a, 1, 1);
    return Value::integer(array_of(i, a.positional[0], "size")->size());
  });
  fn("shape", [](Interpreter &i, CallArgs &a) {
    pylib::arity("shape", a, 1, 1);
    return *array_of(i, a.positional[0], "shape")->get_attr(i, "shape");
  });
  return m;
}

void set_tile_function(ModuleObject &numpy_module, std::string_view name, Value impl) {
  // Only the names NumPy has: a NumPy function with a host implementation gets the tile one
  // beside it; another real NumPy name (np.matmul on tiles only) becomes the NKI op.
  if (Value *v = numpy_module.globals().find_local(name))
    if (auto *f = v->as<NumpyFunction>()) {
      f->tile = std::move(impl);
      return;
    }
  if (pylib::real_names("numpy").has(name))
    numpy_module.globals().set(name, std::move(impl));
}

} // namespace nkicc::trace
