// The process-wide table of distinct shapes behind ir::TensorShape.
#include "nkicc/ir/tensor_shape.h"

#include "nkicc/support/recent_interned.h"

#include <xxhash.h>

#include <deque>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace nkicc::ir {

namespace {

/// A shape's dimensions as bytes: the table's key.
std::string_view bytes_of(const Shape &shape) {
  return {reinterpret_cast<const char *>(shape.data()), shape.size() * sizeof(std::int64_t)};
}

struct BytesHash {
  std::size_t operator()(std::string_view bytes) const { return XXH3_64bits(bytes.data(), bytes.size()); }
};

class ShapeTable {
public:
  const Shape *intern(const Shape &shape) {
    std::lock_guard lock(mutex_);
    if (auto it = shapes_.find(bytes_of(shape)); it != shapes_.end())
      return it->second;
    const Shape &kept = kept_.emplace_back(shape); // a deque never moves its elements
    shapes_.emplace(bytes_of(kept), &kept);
    return &kept;
  }

private:
  std::mutex mutex_;
  std::deque<Shape> kept_;
  std::unordered_map<std::string_view, const Shape *, BytesHash> shapes_; ///< keys view kept_'s dimensions
};

ShapeTable &table() {
  static ShapeTable *t = new ShapeTable; // never destroyed: shapes may outlive static destructors
  return *t;
}

/// The shapes this thread interned last, by their dimensions' bytes (which the table keeps).
thread_local RecentInterned<std::string_view, const Shape *> recent;

} // namespace

const Shape *TensorShape::intern(const Shape &shape) {
  if (const Shape *const *s = recent.find(bytes_of(shape)))
    return *s;
  const Shape *s = table().intern(shape);
  recent.add(bytes_of(*s), s);
  return s;
}

} // namespace nkicc::ir
