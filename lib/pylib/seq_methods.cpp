// The methods of list and tuple, in CPython 3.11's words. Items compare by identity first
// (`x.index(x)` of a list that contains itself is 0), and a Python `==` on the way may change
// the list: every step re-reads its size.
#include "methods.h"

#include <algorithm>

namespace nkicc::trace {

using namespace pylib;

namespace {

std::vector<Value> &items_of(const Value &self) { return self.seq().items; }

/// index() and count()'s optional start/stop, as slice indices into [0, n].
std::pair<std::size_t, std::size_t> index_span(const CallArgs &args, std::size_t n) {
  auto adjust = [n](const Value &v) {
    std::int64_t x = index_arg(v);
    auto sn = static_cast<std::int64_t>(n);
    if (x < 0)
      x = std::max<std::int64_t>(0, x + sn);
    return static_cast<std::size_t>(std::min(x, sn));
  };
  std::size_t start = args.positional.size() > 1 ? adjust(args.positional[1]) : 0;
  std::size_t stop = args.positional.size() > 2 ? adjust(args.positional[2]) : n;
  return {start, stop};
}

Value seq_index(Interpreter &interp, const Value &self, CallArgs &args, bool list) {
  expect_args("index", args, 1, 3);
  Value hold = self;
  auto [start, stop] = index_span(args, items_of(hold).size());
  for (std::size_t k = start; k < stop && k < items_of(hold).size(); ++k) {
    Value item = items_of(hold)[k];
    if (items_equal(interp, item, args.positional[0]))
      return Value::integer(static_cast<std::int64_t>(k));
  }
  if (list)
    raise_python("ValueError", repr(args.positional[0]) + " is not in list");
  raise_python("ValueError", "tuple.index(x): x not in tuple");
}
Value seq_count(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("count", args, 1, 1);
  Value hold = self;
  std::int64_t n = 0;
  for (std::size_t k = 0; k < items_of(hold).size(); ++k) {
    Value item = items_of(hold)[k];
    n += items_equal(interp, item, args.positional[0]);
  }
  return Value::integer(n);
}

Value list_index(Interpreter &interp, const Value &self, CallArgs &args) { return seq_index(interp, self, args, true); }
Value tuple_index(Interpreter &interp, const Value &self, CallArgs &args) {
  return seq_index(interp, self, args, false);
}

Value list_append(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("list.append", args, 1, 1);
  auto &items = items_of(self);
  interp.check_length(items.size() + 1);
  items.push_back(args.positional[0]);
  return Value::none();
}
Value list_extend(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("list.extend", args, 1, 1);
  std::vector<Value> more = interp.to_list(args.positional[0]);
  auto &items = items_of(self);
  interp.check_length(items.size() + more.size());
  items.insert(items.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return Value::none();
}
Value list_pop(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("pop", args, 0, 1);
  auto &items = items_of(self);
  if (items.empty())
    raise_python("IndexError", "pop from empty list");
  auto n = static_cast<std::int64_t>(items.size());
  std::int64_t k = args.positional.empty() ? n - 1 : index_arg(args.positional[0]);
  if (k < 0)
    k += n;
  if (k < 0 || k >= n)
    raise_python("IndexError", "pop index out of range");
  Value out = std::move(items[static_cast<std::size_t>(k)]);
  items.erase(items.begin() + k);
  return out;
}
Value list_insert(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("insert", args, 2, 2);
  auto &items = items_of(self);
  auto n = static_cast<std::int64_t>(items.size());
  std::int64_t k = index_arg(args.positional[0]);
  if (k < 0)
    k = std::max<std::int64_t>(0, k + n);
  k = std::min(k, n);
  interp.check_length(items.size() + 1);
  items.insert(items.begin() + k, args.positional[1]);
  return Value::none();
}
Value list_clear(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("list.clear", args, 0, 0);
  std::vector<Value> old = std::move(items_of(self));
  items_of(self).clear();
  return Value::none();
}
Value list_copy(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("list.copy", args, 0, 0);
  return Value::list(items_of(self));
}
Value list_reverse(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("list.reverse", args, 0, 0);
  std::reverse(items_of(self).begin(), items_of(self).end());
  return Value::none();
}
Value list_remove(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("list.remove", args, 1, 1);
  Value hold = self;
  for (std::size_t k = 0; k < items_of(hold).size(); ++k) {
    Value item = items_of(hold)[k];
    if (items_equal(interp, item, args.positional[0])) {
      auto &items = items_of(hold);
      if (k < items.size())
        items.erase(items.begin() + static_cast<std::ptrdiff_t>(k));
      return Value::none();
    }
  }
  raise_python("ValueError", "list.remove(x): x not in list");
}
Value list_sort(Interpreter &interp, const Value &self, CallArgs &args) {
  if (!args.positional.empty())
    raise_python("TypeError", "sort() takes no positional arguments");
  const Value *key = nullptr, *rev = nullptr;
  for (const auto &[name, value] : args.keywords) {
    if (name == "key")
      key = &value;
    else if (name == "reverse")
      rev = &value;
    else
      raise_python("TypeError", "'" + name + "' is an invalid keyword argument for sort()");
  }
  bool reverse = rev && (rev->kind == K::Bool ? rev->b : index_arg(*rev) != 0);
  // The list looks empty while it is sorted, as in CPython; a key or `<` that changes it is
  // reported afterwards.
  std::vector<Value> items = std::move(items_of(self));
  items_of(self).clear();
  try {
    sort_values(interp, items, key && !key->is_none() ? key : nullptr, reverse);
  } catch (...) {
    if (items_of(self).empty())
      items_of(self) = std::move(items);
    throw;
  }
  bool modified = !items_of(self).empty();
  items_of(self) = std::move(items);
  if (modified)
    raise_python("ValueError", "list modified during sort");
  return Value::none();
}

} // namespace

namespace pylib {
std::span<const Method> list_methods() {
  static const Method methods[] = {
      {"append", list_append}, {"clear", list_clear},     {"copy", list_copy},     {"count", seq_count},
      {"extend", list_extend}, {"index", list_index},     {"insert", list_insert}, {"pop", list_pop},
      {"remove", list_remove}, {"reverse", list_reverse}, {"sort", list_sort},
  };
  return methods;
}
std::span<const Method> tuple_methods() {
  static const Method methods[] = {{"count", seq_count}, {"index", tuple_index}};
  return methods;
}
} // namespace pylib

} // namespace nkicc::trace
