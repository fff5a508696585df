// The math module, every function of CPython 3.11's, with its domain and range errors in
// CPython's words ("math domain error", "math range error"). Ints are nkicc's int64, so the
// integer functions (factorial, comb, perm, lcm) raise OverflowError where CPython would grow
// a big integer.
#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "stdlib.h"

#include <cfloat>
#include <cmath>
#include <numeric>

namespace nkicc::trace::pylib {

namespace {

using python::BinOpKind;

[[noreturn]] void domain_error() { raise_python("ValueError", "math domain error"); }
[[noreturn]] void range_error() { raise_python("OverflowError", "math range error"); }

/// libm's result checked as CPython's math_1 checks it: NaN out of a non-NaN argument is a
/// domain error, infinity out of a finite one a range error (unless `can_overflow` is false,
/// then it is a domain error, as for log(0)).
double checked(double x, double r, bool can_overflow = true) {
  if (std::isnan(r) && !std::isnan(x))
    domain_error();
  if (std::isinf(r) && std::isfinite(x)) {
    if (can_overflow)
      range_error();
    domain_error();
  }
  return r;
}

std::int64_t int_arg(const Value &v) {
  if (v.kind == K::Float)
    raise_python("TypeError", "'float' object cannot be interpreted as an integer");
  return index_arg(v);
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out;
  if (__builtin_mul_overflow(a, b, &out))
    int_overflow();
  return out;
}

/// Shewchuk's exact summation, as CPython's math.fsum (msum).
double fsum(Interpreter &interp, const Value &iterable) {
  std::vector<double> partials;
  double special = 0.0, inf_sum = 0.0;
  bool have_special = false;
  std::unique_ptr<Iterator> it = interp.iterate(iterable);
  Value item;
  while (it->next(item)) {
    double x = to_double(item);
    double xsave = x;
    std::size_t i = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y))
        std::swap(x, y);
      double hi = x + y, lo = y - (hi - x);
      if (lo != 0.0)
        partials[i++] = lo;
      x = hi;
    }
    partials.resize(i);
    if (x != 0.0) {
      if (!std::isfinite(x)) {
        // a nonfinite x could arise either from an infinite or NaN input, or from overflow
        if (std::isfinite(xsave))
          raise_python("OverflowError", "intermediate overflow in fsum");
        if (std::isinf(xsave))
          inf_sum += xsave;
        special += xsave;
        have_special = true;
        partials.clear();
      } else {
        partials.push_back(x);
      }
    }
  }
  if (have_special) {
    if (std::isnan(inf_sum))
      raise_python("ValueError", "-inf + inf in fsum");
    return special;
  }
  double hi = 0.0;
  if (!partials.empty()) {
    std::size_t n = partials.size();
    hi = partials[--n];
    double lo = 0.0;
    while (n > 0) {
      double x = hi, y = partials[--n];
      hi = x + y;
      double yr = hi - x;
      lo = y - yr;
      if (lo != 0.0)
        break;
    }
    // Round half-even correctly: make the correction when the sum of the remaining partials
    // has the same sign as lo.
    if (n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0))) {
      double y = lo * 2.0, x = hi + y, yr = x - hi;
      if (y == yr)
        hi = x;
    }
  }
  return hi;
}

/// The Euclidean norm of a vector, scaled so that it neither overflows nor underflows.
double vector_norm(const std::vector<double> &v) {
  double max = 0.0;
  bool found_nan = false;
  for (double x : v) {
    x = std::fabs(x);
    found_nan = found_nan || std::isnan(x);
    if (x > max)
      max = x;
  }
  if (std::isinf(max))
    return max;
  if (found_nan)
    return NAN;
  if (max == 0.0 || v.size() <= 1)
    return max;
  long double sum = 0.0L;
  for (double x : v) {
    long double s = static_cast<long double>(x) / max;
    sum += s * s;
  }
  return static_cast<double>(std::sqrt(sum) * max);
}

std::vector<double> coordinates(Interpreter &interp, const Value &v, std::string_view what) {
  if (v.kind != K::Tuple && v.kind != K::List)
    raise_python("TypeError", "dist(): argument " + std::string(what) + " must be tuple, not " + tn(v));
  std::vector<double> out;
  for (const Value &x : interp.to_list(v))
    out.push_back(to_double(x));
  return out;
}

} // namespace

std::shared_ptr<ModuleObject> make_math_module(Interpreter &) {
  auto m = make_library_module("math", "math");
  auto fn = [&](std::string name, BuiltinFunction::Impl impl) { define_function(*m, std::move(name), std::move(impl)); };
  // One-argument functions on floats: libm's, checked as CPython checks them.
  struct Unary {
    const char *name;
    double (*f)(double);
    bool can_overflow;
  };
  static const Unary unary[] = {
      {"sqrt", [](double x) { return std::sqrt(x); }, true},
      {"exp", [](double x) { return std::exp(x); }, true},
      {"exp2", [](double x) { return std::exp2(x); }, true},
      {"expm1", [](double x) { return std::expm1(x); }, true},
      {"cbrt", [](double x) { return std::cbrt(x); }, true},
      {"sin", [](double x) { return std::sin(x); }, true},
      {"cos", [](double x) { return std::cos(x); }, true},
      {"tan", [](double x) { return std::tan(x); }, true},
      {"asin", [](double x) { return std::asin(x); }, true},
      {"acos", [](double x) { return std::acos(x); }, true},
      {"atan", [](double x) { return std::atan(x); }, true},
      {"sinh", [](double x) { return std::sinh(x); }, true},
      {"cosh", [](double x) { return std::cosh(x); }, true},
      {"tanh", [](double x) { return std::tanh(x); }, true},
      {"asinh", [](double x) { return std::asinh(x); }, true},
      {"acosh", [](double x) { return std::acosh(x); }, true},
      {"atanh", [](double x) { return std::fabs(x) >= 1.0 ? NAN : std::atanh(x); }, true},
      {"fabs", [](double x) { return std::fabs(x); }, true},
      {"erf", [](double x) { return std::erf(x); }, true},
      {"erfc", [](double x) { return std::erfc(x); }, true},
      {"log1p", [](double x) { return x <= -1.0 ? NAN : std::log1p(x); }, false},
      {"degrees", [](double x) { return x * (180.0 / 3.141592653589793); }, true},
      {"radians", [](double x) { return x * (3.141592653589793 / 180.0); }, true},
  };
  for (const Unary &u : unary) {
    std::string name = u.name;
    fn(name, [name, u](Interpreter &, CallArgs &a) {
      no_keywords(name, a);
      arity(name, a, 1, 1);
      double x = to_double(a.positional[0]);
      if ((name == "sin" || name == "cos" || name == "tan") && std::isinf(x))
        domain_error();
      return Value::floating(checked(x, u.f(x), u.can_overflow));
    });
  }
  fn("gamma", [](Interpreter &, CallArgs &a) {
    arity("gamma", a, 1, 1);
    double x = to_double(a.positional[0]);
    if ((x <= 0.0 && x == std::floor(x)) || x == -INFINITY)
      domain_error();
    return Value::floating(checked(x, std::tgamma(x)));
  });
  fn("lgamma", [](Interpreter &, CallArgs &a) {
    arity("lgamma", a, 1, 1);
    double x = to_double(a.positional[0]);
    if (x <= 0.0 && x == std::floor(x) && std::isfinite(x))
      domain_error();
    return Value::floating(checked(x, std::lgamma(x)));
  });
  // Logarithms: of a non-positive number a domain error, never -inf.
  auto logarithm = [&](std::string name, double (*f)(double)) {
    fn(name, [name, f](Interpreter &, CallArgs &a) {
      no_keywords(name, a);
      arity(name, a, 1, 1);
      double x = to_double(a.positional[0]);
      if (!(x > 0) && !std::isnan(x))
        domain_error();
      return Value::floating(f(x));
    });
  };
  logarithm("log2", [](double x) { return std::log2(x); });
  logarithm("log10", [](double x) { return std::log10(x); });
  fn("log", [](Interpreter &, CallArgs &a) {
    no_keywords("log", a);
    arity("log", a, 1, 2);
    double x = to_double(a.positional[0]);
    if (!(x > 0) && !std::isnan(x))
      domain_error();
    if (a.positional.size() == 1)
      return Value::floating(std::log(x));
    double b = to_double(a.positional[1]);
    if (!(b > 0) && !std::isnan(b))
      domain_error();
    double lb = std::log(b);
    if (lb == 0.0)
      raise_python("ZeroDivisionError", "float division by zero");
    return Value::floating(std::log(x) / lb);
  });
  // Rounding to int: an int stays itself.
  auto rounding = [&](std::string name, double (*f)(double)) {
    fn(name, [name, f](Interpreter &, CallArgs &a) {
      no_keywords(name, a);
      arity(name, a, 1, 1);
      const Value &v = a.positional[0];
      if (is_intlike(v))
        return Value::integer(int_of(v));
      return Value::integer(float_to_int(f(to_double(v))));
    });
  };
  rounding("ceil", [](double x) { return std::ceil(x); });
  rounding("floor", [](double x) { return std::floor(x); });
  rounding("trunc", [](double x) { return std::trunc(x); });
  // Two floats.
  auto binary = [&](std::string name, double (*f)(double, double)) {
    fn(name, [name, f](Interpreter &, CallArgs &a) {
      no_keywords(name, a);
      arity(name, a, 2, 2);
      double x = to_double(a.positional[0]), y = to_double(a.positional[1]);
      double r = f(x, y);
      if (std::isnan(r) && !std::isnan(x) && !std::isnan(y))
        domain_error();
      if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
        range_error();
      return Value::floating(r);
    });
  };
  binary("atan2", [](double y, double x) { return std::atan2(y, x); });
  binary("copysign", [](double x, double y) { return std::copysign(x, y); });
  binary("fmod", [](double x, double y) { return std::isinf(y) && std::isfinite(x) ? x : std::fmod(x, y); });
  binary("remainder", [](double x, double y) { return std::remainder(x, y); });
  binary("nextafter", [](double x, double y) { return std::nextafter(x, y); });
  fn("pow", [](Interpreter &, CallArgs &a) {
    no_keywords("pow", a);
    arity("pow", a, 2, 2);
    double x = to_double(a.positional[0]), y = to_double(a.positional[1]);
    if ((x == 0.0 && y < 0.0 && std::isfinite(y)) ||
        (x < 0.0 && std::isfinite(x) && std::isfinite(y) && y != std::floor(y)))
      domain_error();
    double r = std::pow(x, y);
    if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
      range_error();
    return Value::floating(r);
  });
  fn("ldexp", [](Interpreter &, CallArgs &a) {
    arity("ldexp", a, 2, 2);
    double x = to_double(a.positional[0]);
    if (!is_intlike(a.positional[1]))
      raise_python("TypeError", "Expected an int as second argument to ldexp.");
    std::int64_t e = int_of(a.positional[1]);
    e = std::clamp<std::int64_t>(e, -100000, 100000);
    double r = std::ldexp(x, static_cast<int>(e));
    if (std::isinf(r) && std::isfinite(x))
      range_error();
    return Value::floating(r);
  });
  fn("frexp", [](Interpreter &, CallArgs &a) {
    arity("frexp", a, 1, 1);
    double x = to_double(a.positional[0]);
    int e = 0;
    double mant = std::isfinite(x) ? std::frexp(x, &e) : x;
    return Value::tuple({Value::floating(mant), Value::integer(e)});
  });
  fn("modf", [](Interpreter &, CallArgs &a) {
    arity("modf", a, 1, 1);
    double x = to_double(a.positional[0]);
    if (std::isinf(x))
      return Value::tuple({Value::floating(std::copysign(0.0, x)), Value::floating(x)});
    double ip = 0.0;
    double fp = std::modf(x, &ip);
    return Value::tuple({Value::floating(fp), Value::floating(ip)});
  });
  fn("ulp", [](Interpreter &, CallArgs &a) {
    arity("ulp", a, 1, 1);
    double x = std::fabs(to_double(a.positional[0]));
    if (std::isnan(x) || std::isinf(x))
      return Value::floating(x);
    double next = std::nextafter(x, INFINITY);
    if (std::isinf(next))
      return Value::floating(x - std::nextafter(x, -INFINITY));
    return Value::floating(next - x);
  });
  fn("isqrt", [](Interpreter &, CallArgs &a) {
    no_keywords("isqrt", a);
    arity("isqrt", a, 1, 1);
    std::int64_t n = int_arg(a.positional[0]);
    if (n < 0)
      raise_python("ValueError", "isqrt() argument must be nonnegative");
    auto r = static_cast<std::int64_t>(std::sqrt(static_cast<double>(n)));
    while (r > 0 && r > n / r)
      --r;
    while ((r + 1) <= n / (r + 1))
      ++r;
    return Value::integer(r);
  });
  fn("factorial", [](Interpreter &, CallArgs &a) {
    arity("factorial", a, 1, 1);
    std::int64_t n = int_arg(a.positional[0]);
    if (n < 0)
      raise_python("ValueError", "factorial() not defined for negative values");
    std::int64_t r = 1;
    for (std::int64_t k = 2; k <= n; ++k)
      r = checked_mul(r, k);
    return Value::integer(r);
  });
  fn("comb", [](Interpreter &, CallArgs &a) {
    arity("comb", a, 2, 2);
    std::int64_t n = int_arg(a.positional[0]), k = int_arg(a.positional[1]);
    if (n < 0)
      raise_python("ValueError", "n must be a non-negative integer");
    if (k < 0)
      raise_python("ValueError", "k must be a non-negative integer");
    if (k > n)
      return Value::integer(0);
    k = std::min(k, n - k);
    // C(n, i+1) = C(n, i) * (n - i) / (i + 1), exact at every step; 128 bits for the product.
    __extension__ typedef unsigned __int128 U128;
    U128 r = 1;
    for (std::int64_t i = 0; i < k; ++i) {
      r = r * static_cast<U128>(n - i) / static_cast<U128>(i + 1);
      if (r > static_cast<U128>(INT64_MAX))
        int_overflow();
    }
    return Value::integer(static_cast<std::int64_t>(r));
  });
  fn("perm", [](Interpreter &, CallArgs &a) {
    arity("perm", a, 1, 2);
    std::int64_t n = int_arg(a.positional[0]);
    std::int64_t k = a.positional.size() > 1 && !a.positional[1].is_none() ? int_arg(a.positional[1]) : n;
    if (n < 0)
      raise_python("ValueError", "n must be a non-negative integer");
    if (k < 0)
      raise_python("ValueError", "k must be a non-negative integer");
    if (k > n)
      return Value::integer(0);
    std::int64_t r = 1;
    for (std::int64_t i = 0; i < k; ++i)
      r = checked_mul(r, n - i);
    return Value::integer(r);
  });
  auto gcd_of = [](const CallArgs &a) {
    std::uint64_t g = 0;
    for (const Value &v : a.positional) {
      std::int64_t x = int_arg(v);
      g = std::gcd(g, x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x));
    }
    if (g > static_cast<std::uint64_t>(INT64_MAX))
      int_overflow();
    return static_cast<std::int64_t>(g);
  };
  fn("gcd", [gcd_of](Interpreter &, CallArgs &a) {
    no_keywords("gcd", a);
    return Value::integer(gcd_of(a));
  });
  fn("lcm", [](Interpreter &, CallArgs &a) {
    no_keywords("lcm", a);
    std::int64_t l = a.positional.empty() ? 1 : 1;
    for (const Value &v : a.positional) {
      std::int64_t x = int_arg(v);
      if (x == 0 || l == 0) {
        l = 0;
        continue;
      }
      if (x == INT64_MIN)
        int_overflow();
      x = x < 0 ? -x : x;
      l = checked_mul(l / std::gcd(l, x), x);
    }
    return Value::integer(l);
  });
  fn("prod", [](Interpreter &interp, CallArgs &a) {
    BoundArgs b("prod", a, {"iterable", "start"}, 1);
    Value total = b.has(1) ? *b.get(1) : Value::integer(1);
    std::unique_ptr<Iterator> it = interp.iterate(*b.get(0));
    Value v;
    while (it->next(v))
      total = interp.binary_op(BinOpKind::Mult, total, v);
    return total;
  });
  fn("fsum", [](Interpreter &interp, CallArgs &a) {
    arity("fsum", a, 1, 1);
    return Value::floating(fsum(interp, a.positional[0]));
  });
  fn("hypot", [](Interpreter &, CallArgs &a) {
    no_keywords("hypot", a);
    std::vector<double> v;
    for (const Value &x : a.positional)
      v.push_back(to_double(x));
    if (v.size() == 2)
      return Value::floating(std::hypot(v[0], v[1]));
    return Value::floating(vector_norm(v));
  });
  fn("dist", [](Interpreter &interp, CallArgs &a) {
    arity("dist", a, 2, 2);
    std::vector<double> p = coordinates(interp, a.positional[0], "1"), q = coordinates(interp, a.positional[1], "2");
    if (p.size() != q.size())
      raise_python("ValueError", "both points must have the same number of dimensions");
    std::vector<double> d;
    for (std::size_t k = 0; k < p.size(); ++k)
      d.push_back(p[k] - q[k]);
    return Value::floating(d.size() == 2 ? std::hypot(d[0], d[1]) : vector_norm(d));
  });
  fn("isclose", [](Interpreter &, CallArgs &a) {
    if (a.positional.size() != 2)
      raise_python("TypeError", "isclose() takes exactly 2 positional arguments (" +
                                    std::to_string(a.positional.size()) + " given)");
    double x = to_double(a.positional[0]), y = to_double(a.positional[1]);
    double rel = 1e-09, abs_tol = 0.0;
    for (const auto &[k, v] : a.keywords) {
      if (k == "rel_tol")
        rel = to_double(v);
      else if (k == "abs_tol")
        abs_tol = to_double(v);
      else
        raise_python("TypeError", "isclose() got an unexpected keyword argument '" + k + "'");
    }
    if (rel < 0.0 || abs_tol < 0.0)
      raise_python("ValueError", "tolerances must be non-negative");
    if (x == y)
      return Value::boolean(true);
    if (std::isinf(x) || std::isinf(y))
      return Value::boolean(false);
    double diff = std::fabs(y - x);
    return Value::boolean((diff <= std::fabs(rel * y)) || (diff <= std::fabs(rel * x)) || (diff <= abs_tol));
  });
  auto predicate = [&](std::string name, bool (*f)(double)) {
    fn(name, [name, f](Interpreter &, CallArgs &a) {
      arity(name, a, 1, 1);
      return Value::boolean(f(to_double(a.positional[0])));
    });
  };
  predicate("isnan", [](double x) { return std::isnan(x); });
  predicate("isinf", [](double x) { return std::isinf(x); });
  predicate("isfinite", [](double x) { return std::isfinite(x); });
  Scope &g = m->globals();
  g.set("inf", Value::floating(INFINITY));
  g.set("nan", Value::floating(NAN));
  g.set("pi", Value::floating(3.141592653589793));
  g.set("e", Value::floating(2.718281828459045));
  g.set("tau", Value::floating(6.283185307179586));
  return m;
}

} // namespace nkicc::trace::pylib
