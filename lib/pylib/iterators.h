// Python's lazy iterators as values: what enumerate(), zip(), map(), filter(), reversed(),
// iter() and itertools return. One IteratorObject wraps any Iterator; iter(it) is it, and
// next() advances it.
#pragma once

#include "common.h"

#include <functional>

namespace nkicc::trace::pylib {

class IteratorObject : public Object, public std::enable_shared_from_this<IteratorObject> {
public:
  IteratorObject(std::string type, std::unique_ptr<Iterator> inner)
      : type_(std::move(type)), inner_(std::move(inner)) {}
  std::string_view type_name() const override { return type_; }
  std::unique_ptr<Iterator> iterate(Interpreter &) override;
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  /// The next item, or false once exhausted (and ever after).
  bool next(Value &out);

private:
  std::string type_;
  std::unique_ptr<Iterator> inner_; ///< null once exhausted
};

/// An Iterator from a function that sets its argument and returns true, or returns false at
/// the end.
class FunctionIterator : public Iterator {
public:
  explicit FunctionIterator(std::function<bool(Value &)> next) : next_(std::move(next)) {}
  bool next(Value &out) override { return next_(out); }

private:
  std::function<bool(Value &)> next_;
};

/// The iterator value `type` (`enumerate`, `itertools.product`) over `inner`.
Value make_iterator(std::string type, std::unique_ptr<Iterator> inner);
/// An iterator value whose items come from a function (see FunctionIterator).
Value make_iterator(std::string type, std::function<bool(Value &)> next);

/// Binds enumerate, zip, map, filter, reversed, iter and next.
void install_iterator_builtins(Scope &builtins);

} // namespace nkicc::trace::pylib
