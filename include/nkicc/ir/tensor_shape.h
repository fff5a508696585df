// A tensor's shape in 8 bytes where a Shape takes 32: a trace holds one ir::Tensor per tile, up
// to millions, and its tiles have a handful of distinct shapes (the 400,000-instruction matmul of
// bench_interp has two). Each distinct shape is kept once per process and a TensorShape points
// at it, so two TensorShapes are the same shape exactly when they point at the same one. The
// shape itself is read through the pointer; setting one interns it.
#pragma once

#include "nkicc/ir/small_vector.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace nkicc::ir {

/// A shape or view extent; tiles have up to three dimensions inline, so making one allocates
/// nothing.
using Shape = SmallVector<std::int64_t, 3>;

class TensorShape {
public:
  /// The shape `()`.
  TensorShape() : shape_(intern({})) {}
  // Implicit, as the Shape it stands for.
  TensorShape(const Shape &shape) : shape_(intern(shape)) {}
  TensorShape(std::initializer_list<std::int64_t> dims) : shape_(intern(Shape(dims))) {}
  template <class Alloc> TensorShape(const std::vector<std::int64_t, Alloc> &dims) : shape_(intern(Shape(dims))) {}

  const Shape &get() const { return *shape_; }
  operator const Shape &() const { return *shape_; }

  std::size_t size() const { return shape_->size(); }
  bool empty() const { return shape_->empty(); }
  std::int64_t operator[](std::size_t i) const { return (*shape_)[i]; }
  std::int64_t front() const { return shape_->front(); }
  std::int64_t back() const { return shape_->back(); }
  const std::int64_t *data() const { return shape_->data(); }
  const std::int64_t *begin() const { return shape_->begin(); }
  const std::int64_t *end() const { return shape_->end(); }
  std::vector<std::int64_t> to_vector() const { return shape_->to_vector(); }

  friend bool operator==(const TensorShape &a, const TensorShape &b) { return a.shape_ == b.shape_; }
  friend bool operator==(const TensorShape &a, const Shape &b) { return *a.shape_ == b; }

private:
  /// The process's one copy of `shape`, made on first use.
  static const Shape *intern(const Shape &shape);
  const Shape *shape_;
};

} // namespace nkicc::ir
