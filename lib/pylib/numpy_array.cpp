// Host arrays: creation from Python values, element access through strides (views share their
// buffer, as in NumPy), broadcasting ufuncs, reductions with NumPy's pairwise float summation,
// reshape and transpose.
#include "numpy_values.h"

#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "unmodelled.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace nkicc::trace {

using python::BinOpKind;
using namespace numpy;
using K = Value::Kind;

// ---- HostArray basics --------------------------------------------------------------------------

std::int64_t HostArray::size() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape)
    n *= d;
  return n;
}
std::size_t HostArray::item_size() const { return numpy::item_size(type); }
std::optional<DType> HostArray::nki_dtype() const { return to_nki(type); }

bool HostArray::is_contiguous() const {
  std::int64_t expected = static_cast<std::int64_t>(item_size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && strides[k] != expected)
      return false;
    expected *= shape[k];
  }
  return true;
}

std::vector<unsigned char> HostArray::contiguous_bytes() const {
  std::int64_t n = size();
  std::size_t w = item_size();
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * w);
  if (is_contiguous()) {
    std::copy_n(buffer->data() + offset, out.size(), out.data());
    return out;
  }
  for (std::int64_t k = 0; k < n; ++k)
    std::copy_n(buffer->data() + element_offset(*this, k), w, out.data() + static_cast<std::size_t>(k) * w);
  return out;
}

double HostArray::element_double(std::int64_t k) const { return get_element(*this, k).as_double(); }

namespace numpy {

std::int64_t element_offset(const HostArray &a, std::int64_t k) {
  std::int64_t off = a.offset;
  for (std::size_t d = a.shape.size(); d-- > 0;) {
    std::int64_t n = a.shape[d];
    if (n == 0)
      return off;
    off += (k % n) * a.strides[d];
    k /= n;
  }
  return off;
}

Scalar get_element(const HostArray &a, std::int64_t k) { return load(a.type, a.buffer->data() + element_offset(a, k)); }
void set_element(HostArray &a, std::int64_t k, const Scalar &s) {
  store(a.type, s.cast(a.type), a.buffer->data() + element_offset(a, k));
}

namespace {
std::vector<std::int64_t> c_strides(const std::vector<std::int64_t> &shape, std::size_t item) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = static_cast<std::int64_t>(item);
  for (std::size_t k = shape.size(); k-- > 0;) {
    strides[k] = s;
    s *= std::max<std::int64_t>(shape[k], 1);
  }
  return strides;
}

std::string shape_text(const std::vector<std::int64_t> &shape) {
  std::string out = "(";
  for (std::size_t k = 0; k < shape.size(); ++k)
    out += (k ? ", " : "") + std::to_string(shape[k]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

std::shared_ptr<HostArray> as_array(Interpreter *interp, const Arg &a) {
  if (a.array)
    return a.array;
  auto out = new_array(interp, a.operand.type, {});
  set_element(*out, 0, a.operand.value);
  return out;
}
} // namespace

std::shared_ptr<HostArray> new_array(Interpreter *interp, NpType type, std::vector<std::int64_t> shape) {
  if (!computes(type) && type != NpType::TFloat32 && type != NpType::Float8E4M3 && type != NpType::Float8E4M3FN &&
      type != NpType::Float8E5M2)
    pylib::raise_unmodelled("np.ndarray", "of " + std::string(type_name(type)));
  std::uint64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0)
      raise_python("ValueError", "negative dimensions are not allowed");
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(d))
      raise_python("ValueError", "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
                                 "possible size.");
    n *= static_cast<std::uint64_t>(d);
  }
  if (interp)
    interp->check_length(n);
  auto a = std::make_shared<HostArray>();
  a->type = type;
  a->strides = c_strides(shape, item_size(type));
  a->shape = std::move(shape);
  a->buffer = std::make_shared<std::vector<unsigned char>>(static_cast<std::size_t>(n) * item_size(type), 0);
  return a;
}

std::vector<std::int64_t> shape_arg(Interpreter &interp, const Value &v, std::string_view function) {
  std::vector<std::int64_t> shape;
  if (v.kind == K::Tuple || v.kind == K::List) {
    for (const Value &d : v.seq().items)
      shape.push_back(index_of(d, function));
  } else if (v.as<HostArray>()) {
    for (const Value &d : interp.to_list(to_list(*v.as<HostArray>())))
      shape.push_back(index_of(d, function));
  } else {
    shape.push_back(index_of(v, function));
  }
  return shape;
}

std::int64_t index_of(const Value &v, std::string_view) {
  if (std::optional<Value> n = pylib::as_python_number(v); n && pylib::is_intlike(*n))
    return pylib::int_of(*n);
  raise_python("TypeError", "'" + std::string(trace::type_name(v)) + "' object cannot be interpreted as an integer");
}

// ---- np.array ------------------------------------------------------------------------------------

namespace {
/// Discovers the shape and element type of nested lists (NumPy's array coercion).
void discover(const Value &v, std::size_t depth, std::vector<std::int64_t> &shape, bool &ragged,
              std::optional<NpType> &type) {
  auto merge_type = [&](NpType t) { type = type ? promote_types(*type, t) : t; };
  auto at_leaf = [&](std::size_t leaf_depth) {
    if (shape.size() < leaf_depth)
      ragged = true;
    else if (shape.size() > leaf_depth && depth == leaf_depth)
      ragged = true;
  };
  if (v.kind == K::Tuple || v.kind == K::List) {
    const auto &items = v.seq().items;
    // (Appended with insert, not push_back: GCC 12 warns falsely, with the profile-guided
    // build's inlining, that push_back's reallocation writes past an empty vector's storage.)
    if (shape.size() == depth)
      shape.insert(shape.end(), static_cast<std::int64_t>(items.size()));
    else if (shape[depth] != static_cast<std::int64_t>(items.size()))
      ragged = true;
    for (const Value &item : items)
      discover(item, depth + 1, shape, ragged, type);
    return;
  }
  if (auto *a = v.as<HostArray>()) {
    if (shape.size() == depth)
      shape.insert(shape.end(), a->shape.begin(), a->shape.end());
    else if (!std::equal(a->shape.begin(), a->shape.end(), shape.begin() + static_cast<std::ptrdiff_t>(depth),
                         shape.end()))
      ragged = true;
    merge_type(a->type);
    return;
  }
  at_leaf(depth);
  if (v.kind == K::Bool)
    merge_type(NpType::Bool);
  else if (v.kind == K::Int)
    merge_type(NpType::Int64);
  else if (v.kind == K::Float)
    merge_type(NpType::Float64);
  else if (auto *s = v.as<NumpyScalar>())
    merge_type(s->value.type);
  else if (v.kind == K::Str)
    pylib::raise_unmodelled("np.array", "of strings");
  else
    pylib::raise_unmodelled("np.array", "of '" + std::string(trace::type_name(v)) + "' objects");
}

void fill(HostArray &a, const Value &v, std::int64_t &k) {
  if (v.kind == K::Tuple || v.kind == K::List) {
    for (const Value &item : v.seq().items)
      fill(a, item, k);
    return;
  }
  if (auto *src = v.as<HostArray>()) {
    for (std::int64_t j = 0; j < src->size(); ++j)
      set_element(a, k++, get_element(*src, j));
    return;
  }
  if (v.kind == K::Bool)
    set_element(a, k++, Scalar::of_int(NpType::Bool, v.b));
  else if (v.kind == K::Int)
    set_element(a, k++, Scalar::of_int(NpType::Int64, v.i));
  else if (v.kind == K::Float)
    set_element(a, k++, Scalar::of_double(NpType::Float64, v.f));
  else if (auto *s = v.as<NumpyScalar>())
    set_element(a, k++, s->value);
}
} // namespace

std::shared_ptr<HostArray> to_array(Interpreter &interp, const Value &v, std::optional<NpType> dtype) {
  if (auto *a = v.as<HostArray>())
    return astype(&interp, *a, dtype.value_or(a->type));
  std::vector<std::int64_t> shape;
  bool ragged = false;
  std::optional<NpType> type;
  discover(v, 0, shape, ragged, type);
  if (ragged)
    raise_python("ValueError", "setting an array element with a sequence. The requested array has an inhomogeneous "
                               "shape after " +
                                   std::to_string(shape.size()) + " dimensions. The detected shape was " +
                                   shape_text(shape) + " + inhomogeneous part.");
  auto out = new_array(&interp, dtype.value_or(type.value_or(NpType::Float64)), shape);
  std::int64_t k = 0;
  fill(*out, v, k);
  return out;
}

std::shared_ptr<HostArray> astype(Interpreter *interp, const HostArray &a, NpType t) {
  auto out = new_array(interp, t, a.shape);
  for (std::int64_t k = 0, n = a.size(); k < n; ++k)
    set_element(*out, k, get_element(a, k).cast(t));
  return out;
}

Value to_list(const HostArray &a) {
  if (a.shape.empty())
    return python_value(get_element(a, 0));
  std::function<Value(std::size_t, std::int64_t &)> build = [&](std::size_t dim, std::int64_t &k) -> Value {
    std::vector<Value> items;
    for (std::int64_t j = 0; j < a.shape[dim]; ++j) {
      if (dim + 1 == a.shape.size())
        items.push_back(python_value(get_element(a, k++)));
      else
        items.push_back(build(dim + 1, k));
    }
    return Value::list(std::move(items));
  };
  std::int64_t k = 0;
  return build(0, k);
}

// ---- broadcasting ufuncs -------------------------------------------------------------------------

std::vector<std::int64_t> broadcast_shapes(const std::vector<std::int64_t> &a, const std::vector<std::int64_t> &b) {
  std::size_t n = std::max(a.size(), b.size());
  std::vector<std::int64_t> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    std::int64_t x = k < n - a.size() ? 1 : a[k - (n - a.size())];
    std::int64_t y = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (x != y && x != 1 && y != 1)
      raise_python("ValueError",
                   "operands could not be broadcast together with shapes " + shape_text(a) + " " + shape_text(b) + " ");
    out[k] = x == 1 ? y : x;
  }
  return out;
}

namespace {
/// Walks an output shape in C order, keeping each operand's byte offset (0 strides where an
/// operand is broadcast).
class Walker {
public:
  Walker(const std::vector<std::int64_t> &shape, std::vector<const HostArray *> operands)
      : shape_(shape), index_(shape.size(), 0) {
    for (const HostArray *a : operands) {
      std::vector<std::int64_t> s(shape.size(), 0);
      if (a) {
        std::size_t skip = shape.size() - a->shape.size();
        for (std::size_t k = 0; k < a->shape.size(); ++k)
          s[skip + k] = a->shape[k] == 1 ? 0 : a->strides[k];
      }
      strides_.push_back(std::move(s));
      offsets_.push_back(a ? a->offset : 0);
    }
  }
  std::int64_t offset(std::size_t operand) const { return offsets_[operand]; }
  void next() {
    for (std::size_t d = shape_.size(); d-- > 0;) {
      for (std::size_t o = 0; o < offsets_.size(); ++o)
        offsets_[o] += strides_[o][d];
      if (++index_[d] < shape_[d])
        return;
      for (std::size_t o = 0; o < offsets_.size(); ++o)
        offsets_[o] -= strides_[o][d] * shape_[d];
      index_[d] = 0;
    }
  }

private:
  std::vector<std::int64_t> shape_, index_;
  std::vector<std::vector<std::int64_t>> strides_;
  std::vector<std::int64_t> offsets_;
};

bool is_scalar_arg(const Arg &a) { return !a.array || a.array->shape.empty(); }
Scalar scalar_of(const Arg &a) { return a.array ? get_element(*a.array, 0) : a.operand.value; }
} // namespace

Value apply_binary(Interpreter &interp, Binary op, const Arg &a, const Arg &b, std::optional<NpType> dtype) {
  NpType in = dtype ? *dtype : result_type({a.operand, b.operand});
  if (!computes(in))
    pylib::raise_unmodelled("np." + std::string(binary_name(op)), "on " + std::string(type_name(in)));
  NpType out = binary_output(op, in);
  if (is_scalar_arg(a) && is_scalar_arg(b))
    return scalar_value(apply(op, scalar_of(a).cast(in), scalar_of(b).cast(in), in));
  std::vector<std::int64_t> sa = a.array ? a.array->shape : std::vector<std::int64_t>{};
  std::vector<std::int64_t> sb = b.array ? b.array->shape : std::vector<std::int64_t>{};
  auto result = new_array(&interp, out, broadcast_shapes(sa, sb));
  Scalar ca = a.array ? Scalar() : a.operand.value.cast(in), cb = b.array ? Scalar() : b.operand.value.cast(in);
  Walker walk(result->shape, {a.array.get(), b.array.get()});
  for (std::int64_t k = 0, n = result->size(); k < n; ++k, walk.next()) {
    Scalar x = a.array ? load(a.array->type, a.array->buffer->data() + walk.offset(0)).cast(in) : ca;
    Scalar y = b.array ? load(b.array->type, b.array->buffer->data() + walk.offset(1)).cast(in) : cb;
    store(out, apply(op, x, y, in), result->buffer->data() + static_cast<std::size_t>(k) * result->item_size());
  }
  return Value::object(result);
}

Value apply_unary(Interpreter &interp, Unary op, const Arg &a, std::optional<NpType> dtype) {
  NpType in = dtype ? *dtype : a.operand.type;
  if (!computes(in))
    pylib::raise_unmodelled("np." + std::string(unary_name(op)), "on " + std::string(type_name(in)));
  NpType out = unary_output(op, in);
  if (is_scalar_arg(a) && !a.array)
    return scalar_value(apply(op, a.operand.value.cast(in), in));
  if (a.array->shape.empty())
    return scalar_value(apply(op, get_element(*a.array, 0).cast(in), in));
  auto result = new_array(&interp, out, a.array->shape);
  for (std::int64_t k = 0, n = result->size(); k < n; ++k)
    set_element(*result, k, apply(op, get_element(*a.array, k).cast(in), in));
  return Value::object(result);
}

// ---- reductions -----------------------------------------------------------------------------------

namespace {

/// NumPy's pairwise summation (loops_utils.h.src): blocks of 8 partial sums up to 128
/// elements, halves beyond; in single precision for the 16- and 32-bit float types.
template <class T> T pairwise_sum(const double *a, std::size_t n) {
  if (n < 8) {
    T res = 0;
    for (std::size_t i = 0; i < n; ++i)
      res += static_cast<T>(a[i]);
    return res;
  }
  if (n <= 128) {
    T r[8];
    for (std::size_t j = 0; j < 8; ++j)
      r[j] = static_cast<T>(a[j]);
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (std::size_t j = 0; j < 8; ++j)
        r[j] += static_cast<T>(a[i + j]);
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i)
      res += static_cast<T>(a[i]);
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum<T>(a, n2) + pairwise_sum<T>(a + n2, n - n2);
}

double float_sum(const std::vector<double> &v, NpType t, bool pairwise) {
  bool single = t == NpType::Float16 || t == NpType::Float32 || t == NpType::BFloat16;
  if (pairwise)
    return single ? static_cast<double>(pairwise_sum<float>(v.data(), v.size()))
                  : pairwise_sum<double>(v.data(), v.size());
  if (single) {
    float s = 0;
    for (double x : v)
      s += static_cast<float>(x);
    return s;
  }
  double s = 0;
  for (double x : v)
    s += x;
  return s;
}

std::string_view reduction_name(Reduction r) {
  switch (r) {
  case Reduction::Max:
    return "maximum";
  case Reduction::Min:
    return "minimum";
  default:
    return "";
  }
}

} // namespace

Value reduce(Interpreter &interp, Reduction r, const Arg &arg, const Value *axis, bool keepdims,
             std::optional<NpType> dtype) {
  std::shared_ptr<HostArray> a = as_array(&interp, arg);
  std::size_t ndim = a->shape.size();
  std::vector<bool> reduced(ndim, axis == nullptr || axis->is_none());
  if (axis && !axis->is_none()) {
    std::vector<Value> axes = axis->kind == K::Tuple ? axis->seq().items : std::vector<Value>{*axis};
    for (const Value &x : axes) {
      std::int64_t k = index_of(x, "axis");
      std::int64_t nd = static_cast<std::int64_t>(ndim);
      if (k < -nd || k >= nd)
        raise_error("AxisError",
                    "axis " + std::to_string(k) + " is out of bounds for array of dimension " + std::to_string(ndim));
      if (k < 0)
        k += nd;
      if (reduced[static_cast<std::size_t>(k)] && axis->kind == K::Tuple)
        raise_python("ValueError", "duplicate value in 'axis'");
      reduced[static_cast<std::size_t>(k)] = true;
    }
  }
  if ((r == Reduction::ArgMax || r == Reduction::ArgMin) && axis && !axis->is_none() && axis->kind == K::Tuple)
    raise_python("TypeError", "'tuple' object cannot be interpreted as an integer");
  // The result type: sums of small integers widen to int64 (uint64), means are float.
  NpType in = a->type, out = in;
  switch (r) {
  case Reduction::Sum:
  case Reduction::Prod:
    if (dtype)
      out = *dtype;
    else if (is_bool(in) || (is_signed_int(in) && in != NpType::Int64))
      out = NpType::Int64;
    else if (is_unsigned_int(in) && in != NpType::UInt64)
      out = NpType::UInt64;
    break;
  case Reduction::Mean:
    out = dtype ? *dtype : is_floating(in) ? in : NpType::Float64;
    break;
  case Reduction::All:
  case Reduction::Any:
    out = NpType::Bool;
    break;
  case Reduction::ArgMax:
  case Reduction::ArgMin:
    out = NpType::Int64;
    break;
  default:
    break;
  }
  if (!computes(out) || !computes(in))
    pylib::raise_unmodelled("np.ndarray reductions", "on " + std::string(type_name(in)));
  // Output positions: the kept axes; for each, the reduced elements in C order.
  std::vector<std::int64_t> out_shape, kept_shape;
  std::int64_t m = 1;
  for (std::size_t d = 0; d < ndim; ++d) {
    if (reduced[d]) {
      m *= a->shape[d];
      if (keepdims)
        out_shape.push_back(1);
    } else {
      out_shape.push_back(a->shape[d]);
      kept_shape.push_back(a->shape[d]);
    }
  }
  bool trailing = true; // the reduced axes are the innermost ones: NumPy sums them pairwise
  for (std::size_t d = 0, seen = 0; d < ndim; ++d) {
    if (reduced[d])
      seen = 1;
    else if (seen)
      trailing = false;
  }
  if (m == 0 && (r == Reduction::Max || r == Reduction::Min))
    raise_python("ValueError",
                 "zero-size array to reduction operation " + std::string(reduction_name(r)) + " which has no identity");
  if (m == 0 && (r == Reduction::ArgMax || r == Reduction::ArgMin))
    raise_python("ValueError", std::string("attempt to get ") + (r == Reduction::ArgMax ? "argmax" : "argmin") +
                                   " of an empty sequence");
  std::int64_t outputs = 1;
  for (std::int64_t d : kept_shape)
    outputs *= d;
  std::vector<Scalar> results;
  results.reserve(static_cast<std::size_t>(outputs));
  // Strides of the kept and reduced axes, to walk the elements.
  std::vector<std::int64_t> kshape, kstride, rshape, rstride;
  for (std::size_t d = 0; d < ndim; ++d)
    (reduced[d] ? rshape : kshape).push_back(a->shape[d]), (reduced[d] ? rstride : kstride).push_back(a->strides[d]);
  auto offset_of = [](std::int64_t k, const std::vector<std::int64_t> &shape, const std::vector<std::int64_t> &stride) {
    std::int64_t off = 0;
    for (std::size_t d = shape.size(); d-- > 0;) {
      off += (k % shape[d]) * stride[d];
      k /= shape[d];
    }
    return off;
  };
  std::vector<double> values;
  for (std::int64_t o = 0; o < outputs; ++o) {
    std::int64_t base = a->offset + offset_of(o, kshape, kstride);
    auto element = [&](std::int64_t j) { return load(in, a->buffer->data() + base + offset_of(j, rshape, rstride)); };
    Scalar res;
    switch (r) {
    case Reduction::Sum:
    case Reduction::Mean: {
      NpType acc = out;
      if (r == Reduction::Mean && out == NpType::Float16)
        acc = NpType::Float32; // NumPy averages float16 in float32
      if (is_floating(acc)) {
        values.clear();
        for (std::int64_t j = 0; j < m; ++j)
          values.push_back(element(j).cast(acc).f);
        double s = float_sum(values, acc, trailing);
        if (r == Reduction::Mean) {
          s = acc == NpType::Float64 ? s / static_cast<double>(m)
                                     : static_cast<double>(static_cast<float>(s) / static_cast<float>(m));
          if (m == 0)
            s = NAN;
        }
        res = Scalar::of_double(out, s);
      } else {
        Scalar total = Scalar::of_int(acc, 0);
        for (std::int64_t j = 0; j < m; ++j)
          total = apply(Binary::Add, total, element(j).cast(acc), acc);
        res = total;
      }
      break;
    }
    case Reduction::Prod: {
      Scalar total = Scalar::of_int(out, 1);
      for (std::int64_t j = 0; j < m; ++j)
        total = apply(Binary::Multiply, total, element(j).cast(out), out);
      res = total;
      break;
    }
    case Reduction::Max:
    case Reduction::Min: {
      Scalar best = element(0);
      for (std::int64_t j = 1; j < m; ++j)
        best = apply(r == Reduction::Max ? Binary::Maximum : Binary::Minimum, best, element(j), in);
      res = best;
      break;
    }
    case Reduction::All:
    case Reduction::Any: {
      bool all = true, any = false;
      for (std::int64_t j = 0; j < m; ++j) {
        bool t = element(j).truthy();
        all = all && t;
        any = any || t;
      }
      res = Scalar::of_int(NpType::Bool, r == Reduction::All ? all : any);
      break;
    }
    case Reduction::ArgMax:
    case Reduction::ArgMin: {
      std::int64_t best = 0;
      Scalar bv = element(0);
      bool nan = is_floating(in) && std::isnan(bv.f);
      for (std::int64_t j = 1; j < m && !nan; ++j) {
        Scalar v = element(j);
        if (is_floating(in) && std::isnan(v.f)) {
          best = j;
          break;
        }
        bool better = apply(r == Reduction::ArgMax ? Binary::Greater : Binary::Less, v, bv, in).truthy();
        if (better) {
          best = j;
          bv = v;
        }
      }
      res = Scalar::of_int(NpType::Int64, best);
      break;
    }
    }
    results.push_back(res);
  }
  if (out_shape.empty())
    return scalar_value(results[0]);
  auto result = new_array(&interp, out, out_shape);
  for (std::int64_t k = 0; k < outputs; ++k)
    set_element(*result, k, results[static_cast<std::size_t>(k)]);
  return Value::object(result);
}

// ---- shape manipulation ------------------------------------------------------------------------

std::shared_ptr<HostArray> reshape(Interpreter &interp, const std::shared_ptr<HostArray> &a,
                                   std::vector<std::int64_t> shape) {
  std::int64_t known = 1, infer = -1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == -1) {
      if (infer >= 0)
        raise_python("ValueError", "can only specify one unknown dimension");
      infer = static_cast<std::int64_t>(k);
    } else if (shape[k] < 0) {
      raise_python("ValueError", "negative dimensions not allowed");
    } else {
      known *= shape[k];
    }
  }
  std::int64_t n = a->size();
  if (infer >= 0) {
    if (known == 0 || n % known != 0)
      raise_python("ValueError",
                   "cannot reshape array of size " + std::to_string(n) + " into shape " + shape_text(shape));
    shape[static_cast<std::size_t>(infer)] = n / known;
  } else if (known != n) {
    raise_python("ValueError",
                 "cannot reshape array of size " + std::to_string(n) + " into shape " + shape_text(shape));
  }
  std::shared_ptr<HostArray> src = a->is_contiguous() ? a : astype(&interp, *a, a->type);
  auto out = std::make_shared<HostArray>();
  out->type = src->type;
  out->strides = c_strides(shape, src->item_size());
  out->shape = std::move(shape);
  out->buffer = src->buffer;
  out->offset = src->offset;
  return out;
}

std::shared_ptr<HostArray> transpose(const std::shared_ptr<HostArray> &a, std::vector<std::int64_t> axes) {
  std::size_t n = a->shape.size();
  if (axes.empty())
    for (std::size_t k = n; k-- > 0;)
      axes.push_back(static_cast<std::int64_t>(k));
  if (axes.size() != n)
    raise_python("ValueError", "axes don't match array");
  auto out = std::make_shared<HostArray>(*a);
  std::vector<bool> seen(n, false);
  for (std::size_t k = 0; k < n; ++k) {
    std::int64_t ax = axes[k] < 0 ? axes[k] + static_cast<std::int64_t>(n) : axes[k];
    if (ax < 0 || ax >= static_cast<std::int64_t>(n))
      raise_error("AxisError",
                  "axis " + std::to_string(axes[k]) + " is out of bounds for array of dimension " + std::to_string(n));
    if (seen[static_cast<std::size_t>(ax)])
      raise_python("ValueError", "repeated axis in transpose");
    seen[static_cast<std::size_t>(ax)] = true;
    out->shape[k] = a->shape[static_cast<std::size_t>(ax)];
    out->strides[k] = a->strides[static_cast<std::size_t>(ax)];
  }
  return out;
}

} // namespace numpy

} // namespace nkicc::trace
