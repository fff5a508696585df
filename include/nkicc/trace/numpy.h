// Host NumPy (lib/pylib/numpy_*.cpp): NumPy applied to Python values, as real NKI runs it at
// trace time. NumPy applied to a tile is the NKI op of the same name (lib/nki registers it with
// set_tile_function); on numbers, tuples and host arrays it is NumPy, with NumPy 1.24's type
// promotion, float32 rounding and integer wrap-around.
#pragma once

#include "nkicc/support/dtype.h"
#include "nkicc/trace/interpreter.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nkicc::trace {

namespace numpy {
enum class NpType : std::uint8_t;
}

/// A NumPy dtype: `np.float32` (the scalar type, callable: `np.float32(1.5)`) or
/// `np.dtype('float32')` / `tile.dtype` (a dtype instance). The two compare equal, as in NumPy.
/// NKI ops take either as `dtype=`.
class DTypeObject final : public Object {
public:
  DTypeObject(numpy::NpType type, bool is_scalar_type) : np_type(type), scalar_type(is_scalar_type) {}
  std::string_view type_name() const override { return scalar_type ? "type" : "dtype"; }
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  Value call(Interpreter &interp, CallArgs &args) override;
  bool is_callable() const override { return scalar_type; }
  std::optional<std::int64_t> hash(Interpreter &interp) override;
  std::string repr() const override;
  std::string to_str() const override;
  /// The NKI dtype it names; nullopt for NumPy-only types (float64, int64, uint64).
  std::optional<DType> nki_dtype() const;

  numpy::NpType np_type;
  bool scalar_type;
};

/// The dtype object of an NKI dtype: the scalar type (`nl.float32`) or a dtype instance
/// (`tile.dtype`).
Value make_dtype_value(DType dtype, bool scalar_type);

/// A host NumPy array: elements of one dtype in a byte buffer, with a shape and byte strides,
/// so that indexing and slicing give views of the same buffer, as in NumPy.
/// `nl.shared_constant` takes one (contiguous_bytes() gives its elements in C order).
class HostArray final : public Object, public std::enable_shared_from_this<HostArray> {
public:
  numpy::NpType type;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;                  ///< bytes between neighbours along each axis
  std::shared_ptr<std::vector<unsigned char>> buffer; ///< shared by every view
  std::int64_t offset = 0;                            ///< byte offset of element 0

  std::int64_t size() const;
  std::size_t item_size() const;
  bool is_contiguous() const;
  /// The elements in C order, packed.
  std::vector<unsigned char> contiguous_bytes() const;
  /// Element k in C order, as a double.
  double element_double(std::int64_t k) const;
  /// The NKI dtype of the elements; nullopt for NumPy-only types (float64, int64, uint64).
  std::optional<DType> nki_dtype() const;

  std::string_view type_name() const override { return "numpy.ndarray"; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  Value get_item(Interpreter &interp, const Value &key) override;
  void set_item(Interpreter &interp, const Value &key, const Value &value) override;
  std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind op, const Value &other,
                                 bool reflected) override;
  std::optional<Value> unary_op(Interpreter &interp, python::UnaryOpKind op) override;
  std::optional<Value> inplace_op(Interpreter &interp, python::BinOpKind op, const Value &other) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &interp) override;
  std::unique_ptr<Iterator> iterate(Interpreter &interp) override;
  std::optional<std::int64_t> length(Interpreter &interp) override;
  std::optional<std::int64_t> hash(Interpreter &) override { return std::nullopt; }
  std::optional<bool> contains(Interpreter &interp, const Value &item) override;
  std::string repr() const override;
  std::string to_str() const override;
};

/// The Python number a NumPy scalar (or a one-element host array) stands for (np.float32(1.5)
/// is 1.5): for the NKI layer's scalar operands; nullopt for anything else.
std::optional<Value> host_number(const Value &v);

/// The `numpy` module: host NumPy's functions, dtypes and constants. A function given a value
/// NumPy does not know (a tile) calls the tile implementation set with set_tile_function, or
/// says nkicc does not model it on tiles.
std::shared_ptr<ModuleObject> make_numpy_module(Interpreter *interp);
/// NumPy function `name` applied to a tile calls `impl` (lib/nki's nl function); a NumPy name
/// nkicc does not compute on host values becomes `impl` itself (np.matmul).
void set_tile_function(ModuleObject &numpy_module, std::string_view name, Value impl);

} // namespace nkicc::trace
