// collections: deque (a double-ended queue with an optional maxlen) and the dict subclasses
// OrderedDict, defaultdict and Counter, in CPython 3.11's words.
#include "collections.h"

#include "nkicc/trace/pylib.h"
#include "stdlib.h"
#include "unmodelled.h"

#include <algorithm>
#include <deque>

namespace nkicc::trace {

using python::BinOpKind;
using python::CmpOpKind;
using namespace pylib;

Value dict_get_item(Interpreter &interp, const Value &dict, const Value &key) {
  DictData &d = dict.dict_data();
  if (Value *v = d.find(&interp, key))
    return *v;
  switch (d.flavor) {
  case DictData::Flavor::DefaultDict:
    if (!d.default_factory.is_none()) {
      // __missing__: the factory's value is stored, then returned.
      CallArgs none;
      Value made = interp.call(d.default_factory, none);
      d.set(&interp, key, made);
      return made;
    }
    break;
  case DictData::Flavor::Counter:
    return Value::integer(0);
  default:
    break;
  }
  raise_python("KeyError", repr(key));
}

namespace pylib {

namespace {

Value new_flavored(DictData::Flavor flavor) {
  auto d = make_ref<DictData>();
  d->flavor = flavor;
  return Value::dict(std::move(d));
}

/// Adds (or, with sign -1, subtracts) counts into a Counter: from a mapping its values, from
/// any other iterable one per item.
void count_into(Interpreter &interp, const Value &counter, const Value &source, std::int64_t sign) {
  DictData &d = counter.dict_data();
  auto add = [&](const Value &key, const Value &amount) {
    Value *current = d.find(&interp, key);
    Value base = current ? *current : Value::integer(0);
    Value delta = sign < 0 ? interp.unary_op(python::UnaryOpKind::USub, amount) : amount;
    d.set(&interp, key, interp.binary_op(BinOpKind::Add, base, delta));
  };
  if (source.kind == K::Dict) {
    std::vector<DictData::Item> items(source.dict_data().items().begin(), source.dict_data().items().end());
    for (const auto &[k, v] : items)
      add(k, v);
    return;
  }
  std::unique_ptr<Iterator> it = interp.iterate(source);
  Value item;
  while (it->next(item))
    add(item, Value::integer(1));
}

Value counter_update(Interpreter &interp, const Value &self, CallArgs &args) {
  if (args.positional.size() > 1)
    raise_python("TypeError", "expected at most 1 argument, got " + std::to_string(args.positional.size()));
  if (!args.positional.empty())
    count_into(interp, self, args.positional[0], 1);
  for (const auto &[k, v] : args.keywords)
    count_into(interp, self, Value::dict({{Value::str(k), v}}), 1);
  return Value::none();
}
Value counter_subtract(Interpreter &interp, const Value &self, CallArgs &args) {
  if (args.positional.size() > 1)
    raise_python("TypeError", "expected at most 1 argument, got " + std::to_string(args.positional.size()));
  if (!args.positional.empty())
    count_into(interp, self, args.positional[0], -1);
  for (const auto &[k, v] : args.keywords)
    count_into(interp, self, Value::dict({{Value::str(k), v}}), -1);
  return Value::none();
}
/// The items by count, descending; equal counts keep insertion order (most_common()).
std::vector<DictData::Item> by_count(Interpreter &interp, const Value &self) {
  std::vector<DictData::Item> items(self.dict_data().items().begin(), self.dict_data().items().end());
  std::vector<Value> keyed;
  for (auto &item : items)
    keyed.push_back(Value::tuple({item.first, item.second}));
  Value key = Value::object(std::make_shared<BuiltinFunction>("count", [](Interpreter &i, CallArgs &a) {
    return i.unary_op(python::UnaryOpKind::USub, a.positional[0].seq().items[1]);
  }));
  sort_values(interp, keyed, &key, false);
  std::vector<DictData::Item> out;
  for (const Value &t : keyed)
    out.emplace_back(t.seq().items[0], t.seq().items[1]);
  return out;
}
Value counter_most_common(Interpreter &interp, const Value &self, CallArgs &args) {
  BoundArgs a("most_common", args, {"n"}, 0);
  std::vector<DictData::Item> items = by_count(interp, self);
  std::size_t n = items.size();
  if (a.has(0) && !a.get(0)->is_none())
    n = static_cast<std::size_t>(std::clamp<std::int64_t>(index_arg(*a.get(0)), 0, static_cast<std::int64_t>(n)));
  std::vector<Value> out;
  for (std::size_t k = 0; k < n; ++k)
    out.push_back(Value::tuple({items[k].first, items[k].second}));
  return Value::list(std::move(out));
}
Value counter_elements(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("elements", args, 0, 0);
  std::vector<Value> out;
  for (const auto &[k, v] : self.dict_data().items()) {
    std::int64_t n = is_intlike(v) ? int_of(v) : 0;
    for (std::int64_t j = 0; j < n; ++j) {
      out.push_back(k);
      interp.check_length(out.size());
    }
  }
  return Value::list(std::move(out));
}
Value counter_total(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("total", args, 0, 0);
  Value total = Value::integer(0);
  for (const auto &[k, v] : self.dict_data().items())
    total = interp.binary_op(BinOpKind::Add, total, v);
  return total;
}

Value ordered_move_to_end(Interpreter &interp, const Value &self, CallArgs &args) {
  BoundArgs a("move_to_end", args, {"key", "last"}, 1);
  bool last = !a.has(1) || interp.truthy(*a.get(1));
  DictData &d = self.dict_data();
  Value value;
  if (!d.erase(&interp, *a.get(0), &value))
    raise_python("KeyError", repr(*a.get(0)));
  if (last) {
    d.set(&interp, *a.get(0), std::move(value));
    return Value::none();
  }
  std::vector<DictData::Item> rest(d.items().begin(), d.items().end());
  d.clear();
  d.set(&interp, *a.get(0), std::move(value));
  for (auto &[k, v] : rest)
    d.set(&interp, k, std::move(v));
  return Value::none();
}
Value ordered_popitem(Interpreter &interp, const Value &self, CallArgs &args) {
  BoundArgs a("popitem", args, {"last"}, 0);
  bool last = !a.has(0) || interp.truthy(*a.get(0));
  DictData &d = self.dict_data();
  if (d.empty())
    raise_python("KeyError", "'dictionary is empty'");
  if (last) {
    std::optional<DictData::Item> item = d.pop_last();
    return Value::tuple({std::move(item->first), std::move(item->second)});
  }
  Value key = d.items().begin()->first;
  Value value;
  d.erase(&interp, key, &value);
  return Value::tuple({std::move(key), std::move(value)});
}

// ---- deque ---------------------------------------------------------------------------------------

class DequeObject : public Object, public std::enable_shared_from_this<DequeObject> {
public:
  ~DequeObject() override {
    std::vector<Value> all(std::make_move_iterator(items.begin()), std::make_move_iterator(items.end()));
    items.clear();
    release_nested(all.data(), all.size());
  }
  std::string_view type_name() const override { return "deque"; }
  std::optional<std::int64_t> length(Interpreter &) override { return static_cast<std::int64_t>(items.size()); }
  bool truthy(Interpreter &) override { return !items.empty(); }
  std::unique_ptr<Iterator> iterate(Interpreter &) override {
    struct It : Iterator {
      std::shared_ptr<DequeObject> d;
      std::size_t k = 0, size;
      bool next(Value &out) override {
        if (d->items.size() != size)
          raise_python("RuntimeError", "deque mutated during iteration");
        if (k >= d->items.size())
          return false;
        out = d->items[k++];
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->d = shared_from_this();
    it->size = items.size();
    return it;
  }
  std::optional<bool> contains(Interpreter &interp, const Value &item) override {
    for (std::size_t k = 0; k < items.size(); ++k) {
      Value x = items[k];
      if (items_equal(interp, x, item))
        return true;
    }
    return false;
  }
  Value get_item(Interpreter &, const Value &key) override { return items[position(key, "deque index out of range")]; }
  void set_item(Interpreter &, const Value &key, const Value &value) override {
    items[position(key, "deque index out of range")] = value;
  }
  std::optional<Value> compare(Interpreter &interp, CmpOpKind op, const Value &other, bool reflected) override {
    auto *o = other.as<DequeObject>();
    if (!o)
      return std::nullopt;
    Value a = Value::list(std::vector<Value>(items.begin(), items.end()));
    Value b = Value::list(std::vector<Value>(o->items.begin(), o->items.end()));
    return reflected ? interp.compare(op, b, a) : interp.compare(op, a, b);
  }
  std::string repr() const override {
    if (ReprNesting::active(this))
      return "[...]";
    ReprNesting nesting(this);
    std::string out = "deque([";
    for (std::size_t k = 0; k < items.size(); ++k)
      out += (k ? ", " : "") + trace::repr(items[k]);
    out += "]";
    if (maxlen >= 0)
      out += ", maxlen=" + std::to_string(maxlen);
    return out + ")";
  }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;

  void push_back(Value v) {
    if (maxlen == 0)
      return;
    if (maxlen > 0 && static_cast<std::int64_t>(items.size()) >= maxlen)
      items.pop_front();
    items.push_back(std::move(v));
  }
  void push_front(Value v) {
    if (maxlen == 0)
      return;
    if (maxlen > 0 && static_cast<std::int64_t>(items.size()) >= maxlen)
      items.pop_back();
    items.push_front(std::move(v));
  }
  std::size_t position(const Value &key, const char *message) const {
    std::int64_t k = index_arg(key), n = static_cast<std::int64_t>(items.size());
    if (k < 0)
      k += n;
    if (k < 0 || k >= n)
      raise_python("IndexError", message);
    return static_cast<std::size_t>(k);
  }

  std::deque<Value> items;
  std::int64_t maxlen = -1; ///< -1: unbounded
};

std::optional<Value> DequeObject::get_attr(Interpreter &interp, std::string_view name) {
  if (name == "maxlen")
    return maxlen < 0 ? Value::none() : Value::integer(maxlen);
  using Impl = Value (*)(Interpreter &, DequeObject &, CallArgs &);
  static const std::pair<std::string_view, Impl> methods[] = {
      {"append",
       [](Interpreter &i, DequeObject &d, CallArgs &a) {
         expect_args("deque.append", a, 1, 1);
         d.push_back(a.positional[0]);
         i.check_length(d.items.size());
         return Value::none();
       }},
      {"appendleft",
       [](Interpreter &i, DequeObject &d, CallArgs &a) {
         expect_args("deque.appendleft", a, 1, 1);
         d.push_front(a.positional[0]);
         i.check_length(d.items.size());
         return Value::none();
       }},
      {"pop",
       [](Interpreter &, DequeObject &d, CallArgs &a) {
         expect_args("deque.pop", a, 0, 0);
         if (d.items.empty())
           raise_python("IndexError", "pop from an empty deque");
         Value v = std::move(d.items.back());
         d.items.pop_back();
         return v;
       }},
      {"popleft",
       [](Interpreter &, DequeObject &d, CallArgs &a) {
         expect_args("deque.popleft", a, 0, 0);
         if (d.items.empty())
           raise_python("IndexError", "pop from an empty deque");
         Value v = std::move(d.items.front());
         d.items.pop_front();
         return v;
       }},
      {"extend",
       [](Interpreter &i, DequeObject &d, CallArgs &a) {
         expect_args("deque.extend", a, 1, 1);
         for (Value &v : i.to_list(a.positional[0]))
           d.push_back(std::move(v));
         i.check_length(d.items.size());
         return Value::none();
       }},
      {"extendleft",
       [](Interpreter &i, DequeObject &d, CallArgs &a) {
         expect_args("deque.extendleft", a, 1, 1);
         for (Value &v : i.to_list(a.positional[0]))
           d.push_front(std::move(v));
         i.check_length(d.items.size());
         return Value::none();
       }},
      {"clear",
       [](Interpreter &, DequeObject &d, CallArgs &a) {
         expect_args("deque.clear", a, 0, 0);
         d.items.clear();
         return Value::none();
       }},
      {"copy",
       [](Interpreter &, DequeObject &d, CallArgs &a) {
         expect_args("deque.copy", a, 0, 0);
         auto c = std::make_shared<DequeObject>();
         c->items = d.items;
         c->maxlen = d.maxlen;
         return Value::object(c);
       }},
      {"count",
       [](Interpreter &i, DequeObject &d, CallArgs &a) {
         expect_args("deque.count", a, 1, 1);
         std::int64_t n = 0;
         for (std::size_t k = 0; k < d.items.size(); ++k) {
           Value x = d.items[k];
           n += items_equal(i, x, a.positional[0]);
         }
         return Value::integer(n);
       }},
      {"index",
       [](Interpreter &i, DequeObject &d, CallArgs &a) {
         expect_args("deque.index", a, 1, 3);
         for (std::size_t k = 0; k < d.items.size(); ++k) {
           Value x = d.items[k];
           if (items_equal(i, x, a.positional[0]))
             return Value::integer(static_cast<std::int64_t>(k));
         }
         raise_python("ValueError", trace::repr(a.positional[0]) + " is not in deque");
       }},
      {"insert",
       [](Interpreter &i, DequeObject &d, CallArgs &a) {
         expect_args("deque.insert", a, 2, 2);
         if (d.maxlen >= 0 && static_cast<std::int64_t>(d.items.size()) >= d.maxlen)
           raise_python("IndexError", "deque already at its maximum size");
         std::int64_t k = index_arg(a.positional[0]), n = static_cast<std::int64_t>(d.items.size());
         if (k < 0)
           k = std::max<std::int64_t>(0, k + n);
         d.items.insert(d.items.begin() + std::min(k, n), a.positional[1]);
         i.check_length(d.items.size());
         return Value::none();
       }},
      {"remove",
       [](Interpreter &i, DequeObject &d, CallArgs &a) {
         expect_args("deque.remove", a, 1, 1);
         for (std::size_t k = 0; k < d.items.size(); ++k) {
           Value x = d.items[k];
           if (items_equal(i, x, a.positional[0])) {
             if (k < d.items.size())
               d.items.erase(d.items.begin() + static_cast<std::ptrdiff_t>(k));
             return Value::none();
           }
         }
         raise_python("ValueError", "deque.remove(x): x not in deque");
       }},
      {"reverse",
       [](Interpreter &, DequeObject &d, CallArgs &a) {
         expect_args("deque.reverse", a, 0, 0);
         std::reverse(d.items.begin(), d.items.end());
         return Value::none();
       }},
      {"rotate",
       [](Interpreter &, DequeObject &d, CallArgs &a) {
         expect_args("deque.rotate", a, 0, 1);
         std::int64_t n = a.positional.empty() ? 1 : index_arg(a.positional[0]);
         auto size = static_cast<std::int64_t>(d.items.size());
         if (size > 1) {
           n %= size;
           if (n < 0)
             n += size;
           std::rotate(d.items.begin(), d.items.begin() + (size - n), d.items.end());
         }
         return Value::none();
       }},
  };
  for (const auto &[n, impl] : methods)
    if (n == name) {
      auto self = shared_from_this();
      return Value::object(std::make_shared<BuiltinFunction>(
          std::string(name), [self, impl = impl](Interpreter &i, CallArgs &a) { return impl(i, *self, a); }));
    }
  return unmodelled_attribute(interp, "deque", name);
}

Value make_deque(Interpreter &interp, CallArgs &args) {
  BoundArgs a("deque", args, {"iterable", "maxlen"}, 0);
  auto d = std::make_shared<DequeObject>();
  if (a.has(1) && !a.get(1)->is_none()) {
    d->maxlen = index_arg(*a.get(1));
    if (d->maxlen < 0)
      raise_python("ValueError", "maxlen must be non-negative");
  }
  if (a.has(0))
    for (Value &v : interp.to_list(*a.get(0)))
      d->push_back(std::move(v));
  return Value::object(d);
}

Value make_ordered_dict(Interpreter &interp, CallArgs &args) {
  if (args.positional.size() > 1)
    raise_python("TypeError", "expected at most 1 arguments, got " + std::to_string(args.positional.size()));
  Value d = new_flavored(DictData::Flavor::OrderedDict);
  if (!args.positional.empty())
    dict_update_from(interp, d, args.positional[0]);
  for (const auto &[k, v] : args.keywords)
    d.dict_data().set(&interp, Value::str(k), v);
  return d;
}

Value make_defaultdict(Interpreter &interp, CallArgs &args) {
  Value d = new_flavored(DictData::Flavor::DefaultDict);
  if (!args.positional.empty()) {
    const Value &factory = args.positional[0];
    if (!factory.is_none() && factory.kind != K::Object)
      raise_python("TypeError", "first argument must be callable or None");
    d.dict_data().default_factory = factory;
  }
  if (args.positional.size() > 2)
    raise_python("TypeError", "defaultdict expected at most 2 arguments, got " + std::to_string(args.positional.size()));
  if (args.positional.size() > 1)
    dict_update_from(interp, d, args.positional[1]);
  for (const auto &[k, v] : args.keywords)
    d.dict_data().set(&interp, Value::str(k), v);
  return d;
}

Value make_counter(Interpreter &interp, CallArgs &args) {
  Value c = new_flavored(DictData::Flavor::Counter);
  counter_update(interp, c, args);
  return c;
}

} // namespace

MethodImpl flavor_method(DictData::Flavor flavor, std::string_view name) {
  switch (flavor) {
  case DictData::Flavor::Counter:
    if (name == "update")
      return counter_update;
    if (name == "subtract")
      return counter_subtract;
    if (name == "most_common")
      return counter_most_common;
    if (name == "elements")
      return counter_elements;
    if (name == "total")
      return counter_total;
    break;
  case DictData::Flavor::OrderedDict:
    if (name == "move_to_end")
      return ordered_move_to_end;
    if (name == "popitem")
      return ordered_popitem;
    break;
  default:
    break;
  }
  return nullptr;
}

std::optional<Value> flavor_attr(const Value &dict, std::string_view name) {
  const DictData &d = dict.dict_data();
  if (d.flavor == DictData::Flavor::DefaultDict && name == "default_factory")
    return d.default_factory;
  return std::nullopt;
}

std::string_view flavor_table(DictData::Flavor flavor) {
  switch (flavor) {
  case DictData::Flavor::Dict:
    return "dict";
  case DictData::Flavor::OrderedDict:
    return "OrderedDict";
  case DictData::Flavor::DefaultDict:
    return "defaultdict";
  case DictData::Flavor::Counter:
    return "Counter";
  }
  return "dict";
}

std::shared_ptr<ModuleObject> make_collections_module(Interpreter &) {
  auto m = make_library_module("collections", "collections");
  m->globals().set("deque", library_type("deque", K::Object, make_deque));
  m->globals().set("OrderedDict", library_type("OrderedDict", K::Dict, make_ordered_dict));
  m->globals().set("defaultdict", library_type("defaultdict", K::Dict, make_defaultdict));
  m->globals().set("Counter", library_type("Counter", K::Dict, make_counter));
  return m;
}

} // namespace pylib

} // namespace nkicc::trace
