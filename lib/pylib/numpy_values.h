// Host NumPy's values: NumPy scalars (`np.float32(1.5)`), and the conversions between Python
// values, scalars and host arrays that every NumPy function shares (lib/pylib/numpy_*.cpp).
#pragma once

#include "common.h"
#include "numpy_ops.h"
#include "numpy_types.h"

#include "nkicc/trace/numpy.h"

#include <functional>

namespace nkicc::trace::numpy {

/// A NumPy scalar: one element of a type, with NumPy's arithmetic.
class NumpyScalar final : public Object {
public:
  explicit NumpyScalar(Scalar v) : value(v) {}
  std::string_view type_name() const override;
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind op, const Value &other,
                                 bool reflected) override;
  std::optional<Value> unary_op(Interpreter &interp, python::UnaryOpKind op) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override { return value.truthy(); }
  std::optional<std::int64_t> hash(Interpreter &interp) override;
  std::string repr() const override;
  Scalar value;
};

Value scalar_value(const Scalar &s);
/// A NumPy scalar's Python value (`.item()`): bool, int or float.
Value python_value(const Scalar &s);
/// An element type for `dtype=` (a dtype, `float`, `int`, `bool`, a name); nullopt for None.
std::optional<NpType> dtype_arg(const Value &v);
/// The Value of a dtype (a dtype instance, as `a.dtype` gives).
Value dtype_value(NpType t, bool scalar_type = false);

/// One argument of a NumPy function: a Python number or NumPy scalar (`scalar`, with its value)
/// or an array (a host array, or a list or tuple made into one).
struct Arg {
  Operand operand;
  std::shared_ptr<HostArray> array; ///< null for a scalar
};
/// A value NumPy computes with: numbers, NumPy scalars, host arrays, nested lists and tuples of
/// them; nullopt for anything else (a tile, a string).
std::optional<Arg> as_arg(Interpreter &interp, const Value &v);
/// Whether a value is one host NumPy knows (not a tile): numbers, None, strings, dtypes,
/// NumPy scalars and arrays, and containers of them.
bool is_host_value(const Value &v);

/// A new array of a type and shape, zero-filled; MemoryError past nkicc's sequence limit.
std::shared_ptr<HostArray> new_array(Interpreter *interp, NpType type, std::vector<std::int64_t> shape);
/// np.array(v, dtype): nested lists and tuples, scalars, arrays (copied).
std::shared_ptr<HostArray> to_array(Interpreter &interp, const Value &v, std::optional<NpType> dtype);
/// Element k (C order) of an array, and storing one.
Scalar get_element(const HostArray &a, std::int64_t k);
void set_element(HostArray &a, std::int64_t k, const Scalar &s);
/// The byte offset of element k (C order) of a view.
std::int64_t element_offset(const HostArray &a, std::int64_t k);

/// A ufunc over arguments with broadcasting: a NumPy scalar when every argument is a scalar
/// (or 0-d), else an array. `out_type` overrides the result type (dtype=).
Value apply_binary(Interpreter &interp, Binary op, const Arg &a, const Arg &b, std::optional<NpType> dtype = {});
Value apply_unary(Interpreter &interp, Unary op, const Arg &a, std::optional<NpType> dtype = {});
/// The python operator's ufunc, or nullopt (`@` and the others NumPy has no ufunc for).
std::optional<Binary> binary_of(python::BinOpKind op);
std::optional<Binary> binary_of(python::CmpOpKind op);

/// Broadcast shape of two shapes, or ValueError in NumPy's words.
std::vector<std::int64_t> broadcast_shapes(const std::vector<std::int64_t> &a, const std::vector<std::int64_t> &b);

/// Reductions (np.sum, a.max(), ...) along `axis` (null: every axis), with keepdims.
enum class Reduction { Sum, Prod, Max, Min, Mean, All, Any, ArgMax, ArgMin };
Value reduce(Interpreter &interp, Reduction r, const Arg &a, const Value *axis, bool keepdims,
             std::optional<NpType> dtype = {});

/// a.reshape(shape) (-1 inferred): a view when the array is contiguous, else a copy.
std::shared_ptr<HostArray> reshape(Interpreter &interp, const std::shared_ptr<HostArray> &a,
                                   std::vector<std::int64_t> shape);
/// a.transpose(axes) (empty: reversed): a view.
std::shared_ptr<HostArray> transpose(const std::shared_ptr<HostArray> &a, std::vector<std::int64_t> axes);
/// a.astype(t): a copy with every element converted.
std::shared_ptr<HostArray> astype(Interpreter *interp, const HostArray &a, NpType t);
/// a.tolist(): nested lists of Python numbers.
Value to_list(const HostArray &a);
/// An integer argument (a Python int or a NumPy integer), TypeError otherwise.
std::int64_t index_of(const Value &v, std::string_view what);
/// A shape argument: an int or a sequence of ints.
std::vector<std::int64_t> shape_arg(Interpreter &interp, const Value &v, std::string_view function);

/// repr() of an array as NumPy 1.24 prints it (`array([0.  , 0.25], dtype=float32)`), and str().
std::string array_repr(const HostArray &a);
std::string array_str(const HostArray &a);

/// The `np.finfo` and `np.iinfo` objects.
Value finfo(NpType t);
Value iinfo(NpType t);

} // namespace nkicc::trace::numpy
