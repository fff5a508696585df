// The ndarray object's Python surface: attributes and methods (`a.shape`, `a.max()`,
// `a.tolist()`, `a.reshape(...)`), indexing and slicing as views, the operators, iteration.
#include "numpy_values.h"

#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "unmodelled.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nkicc::trace {

using python::BinOpKind;
using python::CmpOpKind;
using python::UnaryOpKind;
using namespace numpy;
using K = Value::Kind;

namespace {

std::shared_ptr<HostArray> self_of(const HostArray &a) {
  return std::const_pointer_cast<HostArray>(a.shared_from_this());
}

Value array_value(std::shared_ptr<HostArray> a) { return Value::object(std::move(a)); }

/// An array indexed by a key of ints, slices, None and Ellipsis: a view (NumPy's basic
/// indexing).
std::shared_ptr<HostArray> view(const std::shared_ptr<HostArray> &a, const Value &key) {
  std::vector<Value> parts = key.kind == K::Tuple ? key.seq().items : std::vector<Value>{key};
  std::size_t consumed = 0, ellipses = 0;
  for (const Value &p : parts) {
    if (p.kind == K::Ellipsis)
      ++ellipses;
    else if (!p.is_none())
      ++consumed;
  }
  if (ellipses > 1)
    raise_python("IndexError", "an index can only have a single ellipsis ('...')");
  std::size_t ndim = a->shape.size();
  if (consumed > ndim)
    raise_python("IndexError", "too many indices for array: array is " + std::to_string(ndim) +
                                   "-dimensional, but " + std::to_string(consumed) + " were indexed");
  auto out = std::make_shared<HostArray>();
  out->type = a->type;
  out->buffer = a->buffer;
  out->offset = a->offset;
  std::size_t axis = 0;
  auto keep_rest = [&](std::size_t upto) {
    for (; axis < upto; ++axis) {
      out->shape.push_back(a->shape[axis]);
      out->strides.push_back(a->strides[axis]);
    }
  };
  std::size_t remaining_consumed = consumed;
  for (const Value &p : parts) {
    if (p.kind == K::Ellipsis) {
      keep_rest(ndim - remaining_consumed);
      continue;
    }
    if (p.is_none()) {
      out->shape.push_back(1);
      out->strides.push_back(0);
      continue;
    }
    std::int64_t n = a->shape[axis], stride = a->strides[axis];
    if (p.kind == K::Slice) {
      const SliceData &s = p.slice_data();
      std::int64_t step = s.step.is_none() ? 1 : index_of(s.step, "slice");
      if (step == 0)
        raise_python("ValueError", "slice step cannot be zero");
      std::int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
      auto adjust = [&](const Value &v, std::int64_t dflt) {
        if (v.is_none())
          return dflt;
        std::int64_t x = index_of(v, "slice");
        if (x < 0) {
          x = x < -n ? lower : x + n;
          x = std::max(x, lower);
        } else {
          x = std::min(x, upper);
        }
        return x;
      };
      std::int64_t start = adjust(s.lower, step < 0 ? upper : lower);
      std::int64_t stop = adjust(s.upper, step < 0 ? lower : upper);
      std::int64_t count = 0;
      if (step > 0 && stop > start)
        count = (stop - start - 1) / step + 1;
      else if (step < 0 && start > stop)
        count = (start - stop - 1) / (-step) + 1;
      if (count > 0)
        out->offset += start * stride;
      out->shape.push_back(count);
      out->strides.push_back(stride * step);
    } else if (std::optional<Value> i = pylib::as_python_number(p); i && pylib::is_intlike(*i)) {
      std::int64_t k = pylib::int_of(*i);
      if (k < -n || k >= n)
        raise_python("IndexError", "index " + std::to_string(k) + " is out of bounds for axis " +
                                       std::to_string(axis) + " with size " + std::to_string(n));
      out->offset += (k < 0 ? k + n : k) * stride;
    } else if (p.kind == K::List || p.as<HostArray>()) {
      pylib::raise_unmodelled("np.ndarray indexing", "by integer or boolean arrays");
    } else {
      raise_python("IndexError", "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                                 "boolean arrays are valid indices");
    }
    ++axis;
    --remaining_consumed;
  }
  keep_rest(ndim);
  return out;
}

/// Writes a value into every element of a view, broadcasting it (NumPy's unsafe casting for
/// assignment: floats stored into ints are truncated).
void assign(Interpreter &interp, HostArray &dst, const Value &value) {
  std::optional<Arg> v = as_arg(interp, value);
  if (!v)
    raise_python("TypeError", "could not convert '" + std::string(trace::type_name(value)) + "' to an array element");
  if (!v->array || v->array->shape.empty()) {
    Scalar s = v->array ? get_element(*v->array, 0) : v->operand.value;
    for (std::int64_t k = 0, n = dst.size(); k < n; ++k)
      set_element(dst, k, s);
    return;
  }
  std::vector<std::int64_t> shape = broadcast_shapes(dst.shape, v->array->shape);
  if (shape != dst.shape)
    raise_python("ValueError", "could not broadcast input array into the destination's shape");
  // Copy the source first: it may be a view of the destination.
  auto src = astype(&interp, *v->array, v->array->type);
  std::size_t skip = dst.shape.size() - src->shape.size();
  for (std::int64_t k = 0, n = dst.size(); k < n; ++k) {
    // The source element under broadcasting: drop leading axes, clamp size-1 axes.
    std::int64_t rem = k, sk = 0, mult = 1;
    for (std::size_t d = dst.shape.size(); d-- > skip;) {
      std::int64_t i = rem % dst.shape[d];
      rem /= dst.shape[d];
      std::int64_t sd = src->shape[d - skip];
      sk += (sd == 1 ? 0 : i) * mult;
      mult *= sd;
    }
    set_element(dst, k, get_element(*src, sk));
  }
}

} // namespace

std::optional<Value> HostArray::get_attr(Interpreter &interp, std::string_view name) {
  auto self = self_of(*this);
  if (name == "shape") {
    std::vector<Value> dims;
    for (std::int64_t d : shape)
      dims.push_back(Value::integer(d));
    return Value::tuple(std::move(dims));
  }
  if (name == "ndim")
    return Value::integer(static_cast<std::int64_t>(shape.size()));
  if (name == "size")
    return Value::integer(size());
  if (name == "dtype")
    return dtype_value(type);
  if (name == "itemsize")
    return Value::integer(static_cast<std::int64_t>(item_size()));
  if (name == "nbytes")
    return Value::integer(size() * static_cast<std::int64_t>(item_size()));
  if (name == "strides") {
    std::vector<Value> s;
    for (std::int64_t x : strides)
      s.push_back(Value::integer(x));
    return Value::tuple(std::move(s));
  }
  if (name == "T")
    return array_value(transpose(self, {}));
  if (name == "real")
    return Value::object(self);
  auto method = [&](std::string n, std::function<Value(Interpreter &, CallArgs &)> impl) {
    return Value::object(std::make_shared<BuiltinFunction>(std::move(n), std::move(impl)));
  };
  Arg me{{type, shape.empty(), shape.empty() ? get_element(*this, 0) : Scalar()}, self};
  // Reductions: a.sum(axis=None, dtype=None, keepdims=False) and friends.
  static const std::pair<std::string_view, Reduction> reductions[] = {
      {"sum", Reduction::Sum},       {"prod", Reduction::Prod}, {"max", Reduction::Max},
      {"min", Reduction::Min},       {"mean", Reduction::Mean}, {"all", Reduction::All},
      {"any", Reduction::Any},       {"argmax", Reduction::ArgMax}, {"argmin", Reduction::ArgMin},
  };
  for (const auto &[n, r] : reductions)
    if (n == name) {
      Reduction red = r;
      std::string fn(n);
      return method(fn, [me, red, fn](Interpreter &i, CallArgs &a) {
        pylib::BoundArgs b(fn, a, {"axis", "dtype", "out", "keepdims"}, 0);
        if (b.has(2) && !b.get(2)->is_none())
          pylib::raise_unmodelled("np.ndarray." + fn, "with out=");
        std::optional<NpType> dt = b.has(1) ? dtype_arg(*b.get(1)) : std::nullopt;
        bool keep = b.has(3) && i.truthy(*b.get(3));
        return reduce(i, red, me, b.get(0), keep, dt);
      });
    }
  if (name == "reshape")
    return method("reshape", [self](Interpreter &i, CallArgs &a) {
      if (a.positional.empty())
        raise_python("TypeError", "reshape() takes exactly 1 argument (0 given)");
      Value dims = a.positional.size() == 1 ? a.positional[0] : Value::tuple(a.positional);
      return array_value(reshape(i, self, shape_arg(i, dims, "reshape")));
    });
  if (name == "transpose")
    return method("transpose", [self](Interpreter &i, CallArgs &a) {
      std::vector<std::int64_t> axes;
      if (a.positional.size() == 1 && !a.positional[0].is_none())
        axes = shape_arg(i, a.positional[0], "transpose");
      else if (a.positional.size() > 1)
        axes = shape_arg(i, Value::tuple(a.positional), "transpose");
      return array_value(transpose(self, axes));
    });
  if (name == "swapaxes")
    return method("swapaxes", [self](Interpreter &, CallArgs &a) {
      pylib::arity("swapaxes", a, 2, 2);
      std::vector<std::int64_t> axes(self->shape.size());
      std::iota(axes.begin(), axes.end(), 0);
      auto nd = static_cast<std::int64_t>(axes.size());
      std::int64_t x = index_of(a.positional[0], "axis"), y = index_of(a.positional[1], "axis");
      if (x < 0)
        x += nd;
      if (y < 0)
        y += nd;
      if (x < 0 || y < 0 || x >= nd || y >= nd)
        raise_error("AxisError", "axis is out of bounds for array of dimension " + std::to_string(nd));
      std::swap(axes[static_cast<std::size_t>(x)], axes[static_cast<std::size_t>(y)]);
      return array_value(transpose(self, axes));
    });
  if (name == "astype")
    return method("astype", [self](Interpreter &i, CallArgs &a) {
      if (a.positional.empty())
        raise_python("TypeError", "astype() missing required argument 'dtype' (pos 1)");
      std::optional<NpType> t = dtype_arg(a.positional[0]);
      return array_value(astype(&i, *self, t.value_or(NpType::Float64)));
    });
  if (name == "copy" || name == "flatten" || name == "ravel")
    return method(std::string(name), [self, flat = name != "copy"](Interpreter &i, CallArgs &) {
      auto c = astype(&i, *self, self->type);
      return array_value(flat ? reshape(i, c, {c->size()}) : c);
    });
  if (name == "tolist")
    return method("tolist", [self](Interpreter &, CallArgs &a) {
      pylib::arity("tolist", a, 0, 0);
      return to_list(*self);
    });
  if (name == "item")
    return method("item", [self](Interpreter &i, CallArgs &a) {
      if (a.positional.empty()) {
        if (self->size() != 1)
          raise_python("ValueError", "can only convert an array of size 1 to a Python scalar");
        return python_value(get_element(*self, 0));
      }
      Value key = a.positional.size() == 1 ? a.positional[0] : Value::tuple(a.positional);
      if (a.positional.size() == 1 && pylib::is_intlike(key)) {
        std::int64_t k = pylib::int_of(key), n = self->size();
        if (k < -n || k >= n)
          raise_python("IndexError", "index " + std::to_string(k) + " is out of bounds for size " + std::to_string(n));
        return python_value(get_element(*self, k < 0 ? k + n : k));
      }
      Value v = self->get_item(i, key);
      std::optional<Value> n = pylib::as_python_number(v);
      return n ? *n : v;
    });
  if (name == "fill")
    return method("fill", [self](Interpreter &i, CallArgs &a) {
      pylib::arity("fill", a, 1, 1);
      assign(i, *self, a.positional[0]);
      return Value::none();
    });
  if (name == "squeeze")
    return method("squeeze", [self](Interpreter &, CallArgs &) {
      auto out = std::make_shared<HostArray>(*self);
      out->shape.clear();
      out->strides.clear();
      for (std::size_t d = 0; d < self->shape.size(); ++d)
        if (self->shape[d] != 1) {
          out->shape.push_back(self->shape[d]);
          out->strides.push_back(self->strides[d]);
        }
      return array_value(out);
    });
  if (name == "cumsum")
    return method("cumsum", [self](Interpreter &i, CallArgs &a) {
      pylib::BoundArgs b("cumsum", a, {"axis"}, 0);
      if (b.has(0) && !b.get(0)->is_none() && self->shape.size() > 1)
        pylib::raise_unmodelled("np.ndarray.cumsum", "along an axis of a multi-dimensional array");
      NpType t = is_bool(self->type) || (is_signed_int(self->type) && self->type != NpType::Int64) ? NpType::Int64
                 : is_unsigned_int(self->type) && self->type != NpType::UInt64                     ? NpType::UInt64
                                                                                                   : self->type;
      auto out = new_array(&i, t, {self->size()});
      Scalar total = Scalar::of_int(t, 0);
      for (std::int64_t k = 0; k < self->size(); ++k) {
        total = apply(Binary::Add, total, get_element(*self, k).cast(t), t);
        set_element(*out, k, total);
      }
      return array_value(out);
    });
  if (name == "clip")
    return method("clip", [me](Interpreter &i, CallArgs &a) {
      pylib::BoundArgs b("clip", a, {"min", "max"}, 0);
      Value out = Value::object(me.array);
      if (b.has(0) && !b.get(0)->is_none())
        out = apply_binary(i, Binary::Maximum, *as_arg(i, out), *as_arg(i, *b.get(0)));
      if (b.has(1) && !b.get(1)->is_none())
        out = apply_binary(i, Binary::Minimum, *as_arg(i, out), *as_arg(i, *b.get(1)));
      return out;
    });
  if (name == "dot")
    return method("dot", [self](Interpreter &i, CallArgs &a) {
      pylib::arity("dot", a, 1, 1);
      return i.binary_op(BinOpKind::MatMult, Value::object(self), a.positional[0]);
    });
  return pylib::unmodelled_attribute(interp, "ndarray", name);
}

Value HostArray::get_item(Interpreter &, const Value &key) {
  auto v = view(self_of(*this), key);
  if (v->shape.empty())
    return scalar_value(get_element(*v, 0));
  return array_value(v);
}

void HostArray::set_item(Interpreter &interp, const Value &key, const Value &value) {
  auto v = view(self_of(*this), key);
  assign(interp, *v, value);
}

namespace {
/// The 2-D product of host arrays (np.matmul's common cases: 1-D and 2-D operands).
Value matmul(Interpreter &interp, const Arg &x, const Arg &y) {
  if (!x.array || !y.array || x.array->shape.empty() || y.array->shape.empty())
    raise_python("ValueError", "matmul: Input operand does not have enough dimensions (has 0, gufunc core with "
                               "signature (n?,k),(k,m?)->(n?,m?) requires 1)");
  auto a = x.array, b = y.array;
  if (a->shape.size() > 2 || b->shape.size() > 2)
    pylib::raise_unmodelled("np.matmul", "of arrays with more than two dimensions");
  std::int64_t n = a->shape.size() == 2 ? a->shape[0] : 1, k = a->shape.back();
  std::int64_t kb = b->shape[0], m = b->shape.size() == 2 ? b->shape[1] : 1;
  if (k != kb)
    raise_python("ValueError", "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                               "(n?,k),(k,m?)->(n?,m?) (size " + std::to_string(kb) + " is different from " +
                                   std::to_string(k) + ")");
  NpType t = promote_types(a->type, b->type);
  std::vector<std::int64_t> shape;
  if (a->shape.size() == 2)
    shape.push_back(n);
  if (b->shape.size() == 2)
    shape.push_back(m);
  auto out = new_array(&interp, t, shape);
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = 0; c < m; ++c) {
      Scalar acc = Scalar::of_int(t, 0);
      for (std::int64_t j = 0; j < k; ++j) {
        Scalar p = apply(Binary::Multiply, get_element(*a, r * k + j).cast(t), get_element(*b, j * m + c).cast(t), t);
        acc = apply(Binary::Add, acc, p, t);
      }
      set_element(*out, r * m + c, acc);
    }
  if (shape.empty())
    return scalar_value(get_element(*out, 0));
  return Value::object(out);
}
} // namespace

std::optional<Value> HostArray::binary_op(Interpreter &interp, BinOpKind op, const Value &other, bool reflected) {
  std::optional<Arg> o = as_arg(interp, other);
  if (!o)
    return std::nullopt;
  auto self = self_of(*this);
  Arg me{{type, shape.empty(), shape.empty() ? get_element(*this, 0) : Scalar()}, self};
  if (op == BinOpKind::MatMult)
    return reflected ? matmul(interp, *o, me) : matmul(interp, me, *o);
  std::optional<Binary> b = binary_of(op);
  if (!b)
    return std::nullopt;
  return reflected ? apply_binary(interp, *b, *o, me) : apply_binary(interp, *b, me, *o);
}

std::optional<Value> HostArray::inplace_op(Interpreter &interp, BinOpKind op, const Value &other) {
  std::optional<Value> result = binary_op(interp, op, other, false);
  if (!result)
    return std::nullopt;
  // In place, under NumPy's same_kind rule: a float result does not go into an int array.
  std::optional<Arg> r = as_arg(interp, *result);
  NpType rt = r->operand.type;
  auto kind_rank = [](NpType t) { return is_bool(t) ? 0 : is_integer(t) ? 1 : 2; };
  if (kind_rank(rt) > kind_rank(type))
    raise_error("UFuncTypeError", "Cannot cast ufunc '" + std::string(binary_name(*binary_of(op))) +
                                      "' output from dtype('" + std::string(numpy::type_name(rt)) + "') to dtype('" +
                                      std::string(numpy::type_name(type)) + "') with casting rule 'same_kind'");
  assign(interp, *this, *result);
  return Value::object(self_of(*this));
}

std::optional<Value> HostArray::unary_op(Interpreter &interp, UnaryOpKind op) {
  Arg me{{type, shape.empty(), shape.empty() ? get_element(*this, 0) : Scalar()}, self_of(*this)};
  switch (op) {
  case UnaryOpKind::USub:
    return apply_unary(interp, Unary::Negative, me);
  case UnaryOpKind::UAdd:
    return apply_unary(interp, Unary::Positive, me);
  case UnaryOpKind::Invert:
    return apply_unary(interp, Unary::Invert, me);
  default:
    return std::nullopt;
  }
}

std::optional<Value> HostArray::compare(Interpreter &interp, CmpOpKind op, const Value &other, bool reflected) {
  std::optional<Binary> b = binary_of(op);
  std::optional<Arg> o = as_arg(interp, other);
  if (!b || !o)
    return std::nullopt;
  Arg me{{type, shape.empty(), shape.empty() ? get_element(*this, 0) : Scalar()}, self_of(*this)};
  return reflected ? apply_binary(interp, *b, *o, me) : apply_binary(interp, *b, me, *o);
}

bool HostArray::truthy(Interpreter &) {
  std::int64_t n = size();
  if (n == 1)
    return get_element(*this, 0).truthy();
  if (n == 0)
    return false; // NumPy 1.24 warns that this is deprecated
  raise_python("ValueError",
               "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
}

std::optional<std::int64_t> HostArray::length(Interpreter &) {
  if (shape.empty())
    raise_python("TypeError", "len() of unsized object");
  return shape[0];
}

std::unique_ptr<Iterator> HostArray::iterate(Interpreter &interp) {
  if (shape.empty())
    raise_python("TypeError", "iteration over a 0-d array");
  struct It : Iterator {
    std::shared_ptr<HostArray> a;
    Interpreter *interp;
    std::int64_t k = 0;
    bool next(Value &out) override {
      if (k >= a->shape[0])
        return false;
      out = a->get_item(*interp, Value::integer(k++));
      return true;
    }
  };
  auto it = std::make_unique<It>();
  it->a = self_of(*this);
  it->interp = &interp;
  return it;
}

std::optional<bool> HostArray::contains(Interpreter &interp, const Value &item) {
  Value eq = interp.compare(CmpOpKind::Eq, Value::object(self_of(*this)), item);
  std::optional<Arg> e = as_arg(interp, eq);
  if (!e)
    return false;
  Value any = reduce(interp, Reduction::Any, *e, nullptr, false);
  return interp.truthy(any);
}

std::string HostArray::repr() const { return array_repr(*this); }
std::string HostArray::to_str() const { return array_str(*this); }

} // namespace nkicc::trace
