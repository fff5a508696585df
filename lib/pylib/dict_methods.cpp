// The methods of dict and its views (`d.keys()`, `d.items()`), and iteration over a dict, in
// CPython 3.11's words. collections' dict subclasses (OrderedDict, defaultdict, Counter) are
// dicts with a flavor: their own methods are collections.cpp's.
#include "methods.h"

#include "collections.h"
#include "nkicc/trace/pylib.h"
#include "set.h"

namespace nkicc::trace {

using namespace pylib;

namespace {

/// Iterates a dict by position. Like CPython, it refuses to go on once the dict changed size
/// (and once its keys changed while the size stayed the same).
class DictIterator : public Iterator {
public:
  DictIterator(Value dict, DictPart part)
      : dict_(std::move(dict)), part_(part), size_(dict_.dict_data().size()), version_(dict_.dict_data().version()) {}
  bool next(Value &out) override {
    DictData &d = dict_.dict_data();
    if (d.size() != size_) {
      size_ = d.size(); // report once; CPython's iterator is then exhausted
      raise_python("RuntimeError", "dictionary changed size during iteration");
    }
    if (d.version() != version_)
      raise_python("RuntimeError", "dictionary keys changed during iteration");
    while (position_ < d.slot_count()) {
      const DictData::Item *item = d.slot(position_++);
      if (!item)
        continue;
      switch (part_) {
      case DictPart::Keys:
        out = item->first;
        break;
      case DictPart::Values:
        out = item->second;
        break;
      case DictPart::Items:
        out = Value::tuple({item->first, item->second});
        break;
      }
      return true;
    }
    return false;
  }

private:
  Value dict_;
  DictPart part_;
  std::size_t size_;
  std::uint64_t version_;
  std::size_t position_ = 0;
};

/// `d.keys()`, `d.values()`, `d.items()`: live views of the dict.
class DictView : public Object {
public:
  DictView(Value dict, DictPart part) : dict_(std::move(dict)), part_(part) {}
  std::string_view type_name() const override {
    return part_ == DictPart::Keys ? "dict_keys" : part_ == DictPart::Values ? "dict_values" : "dict_items";
  }
  std::unique_ptr<Iterator> iterate(Interpreter &) override { return dict_iterator(dict_, part_); }
  std::optional<std::int64_t> length(Interpreter &) override {
    return static_cast<std::int64_t>(dict_.dict_data().size());
  }
  bool truthy(Interpreter &) override { return !dict_.dict_data().empty(); }
  std::optional<bool> contains(Interpreter &interp, const Value &item) override {
    DictData &d = dict_.dict_data();
    switch (part_) {
    case DictPart::Keys:
      return d.find(&interp, item) != nullptr;
    case DictPart::Items: {
      if (item.kind != K::Tuple || item.seq().items.size() != 2)
        return false;
      Value key = item.seq().items[0], value = item.seq().items[1];
      Value *found = d.find(&interp, key);
      if (!found)
        return false;
      Value held = *found;
      return items_equal(interp, held, value);
    }
    case DictPart::Values:
      return std::nullopt; // by iteration
    }
    return std::nullopt;
  }
  std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind op, const Value &other,
                                 bool reflected) override {
    // Keys and items views are set-like: `d.keys() - {'a'}` is a set.
    if (part_ == DictPart::Values)
      return std::nullopt;
    using python::BinOpKind;
    if (op != BinOpKind::BitAnd && op != BinOpKind::BitOr && op != BinOpKind::Sub && op != BinOpKind::BitXor)
      return std::nullopt;
    Value self = make_set(interp, interp.to_list(Value::object(std::make_shared<DictView>(dict_, part_))));
    Value rhs = make_set(interp, interp.to_list(other));
    return reflected ? interp.binary_op(op, rhs, self) : interp.binary_op(op, self, rhs);
  }
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool) override {
    if (part_ == DictPart::Values || (op != python::CmpOpKind::Eq && op != python::CmpOpKind::NotEq))
      return std::nullopt;
    auto *view = other.as<DictView>();
    if (!view && !is_set_like(other))
      return std::nullopt;
    Value a = make_set(interp, interp.to_list(Value::object(std::make_shared<DictView>(dict_, part_))));
    Value b = make_set(interp, interp.to_list(other));
    bool eq = interp.truthy(interp.compare(python::CmpOpKind::Eq, a, b));
    return Value::boolean(op == python::CmpOpKind::Eq ? eq : !eq);
  }
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override {
    if (name == "mapping")
      return dict_;
    return std::nullopt;
  }
  std::string repr() const override {
    std::string out = std::string(type_name()) + "([";
    bool first = true;
    for (const auto &[key, value] : dict_.dict_data().items()) {
      if (!first)
        out += ", ";
      first = false;
      if (part_ == DictPart::Keys)
        out += trace::repr(key);
      else if (part_ == DictPart::Values)
        out += trace::repr(value);
      else
        out += "(" + trace::repr(key) + ", " + trace::repr(value) + ")";
    }
    return out + "])";
  }

private:
  Value dict_;
  DictPart part_;
};

Value dict_get(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("get", args, 1, 2);
  if (Value *v = self.dict_data().find(&interp, args.positional[0]))
    return *v;
  return args.positional.size() > 1 ? args.positional[1] : Value::none();
}
Value dict_view(const Value &self, CallArgs &args, DictPart part, std::string_view name) {
  expect_args(name, args, 0, 0);
  return Value::object(std::make_shared<DictView>(self, part));
}
Value dict_keys(Interpreter &, const Value &self, CallArgs &args) { return dict_view(self, args, DictPart::Keys, "dict.keys"); }
Value dict_values(Interpreter &, const Value &self, CallArgs &args) {
  return dict_view(self, args, DictPart::Values, "dict.values");
}
Value dict_items(Interpreter &, const Value &self, CallArgs &args) {
  return dict_view(self, args, DictPart::Items, "dict.items");
}
Value dict_pop(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("pop", args, 1, 2);
  Value out;
  if (self.dict_data().erase(&interp, args.positional[0], &out))
    return out;
  if (args.positional.size() > 1)
    return args.positional[1];
  raise_python("KeyError", repr(args.positional[0]));
}
Value dict_popitem(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("dict.popitem", args, 0, 0);
  std::optional<DictData::Item> item = self.dict_data().pop_last();
  if (!item)
    raise_python("KeyError", "'popitem(): dictionary is empty'");
  return Value::tuple({std::move(item->first), std::move(item->second)});
}
Value dict_update(Interpreter &interp, const Value &self, CallArgs &args) {
  if (args.positional.size() > 1)
    raise_python("TypeError", "update expected at most 1 argument, got " + std::to_string(args.positional.size()));
  if (!args.positional.empty())
    dict_update_from(interp, self, args.positional[0]);
  for (const auto &[k, v] : args.keywords)
    self.dict_data().set(&interp, Value::str(k), v);
  return Value::none();
}
Value dict_setdefault(Interpreter &interp, const Value &self, CallArgs &args) {
  expect_args("setdefault", args, 1, 2);
  if (Value *v = self.dict_data().find(&interp, args.positional[0]))
    return *v;
  Value dflt = args.positional.size() > 1 ? args.positional[1] : Value::none();
  self.dict_data().set(&interp, args.positional[0], dflt);
  return dflt;
}
Value dict_copy(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("dict.copy", args, 0, 0);
  return Value::dict(make_ref<DictData>(self.dict_data()));
}
Value dict_clear(Interpreter &, const Value &self, CallArgs &args) {
  expect_args("dict.clear", args, 0, 0);
  self.dict_data().clear();
  return Value::none();
}

} // namespace

std::unique_ptr<Iterator> dict_iterator(const Value &dict, DictPart part) {
  return std::make_unique<DictIterator>(dict, part);
}

void dict_update_from(Interpreter &interp, const Value &self, const Value &other) {
  DictData &d = self.dict_data();
  if (other.kind == K::Dict) {
    // A copy of the other's items: `d.update(d)` and a Python __eq__ may change it.
    std::vector<DictData::Item> items;
    for (const auto &item : other.dict_data().items())
      items.push_back(item);
    for (auto &[k, v] : items)
      d.set(&interp, k, std::move(v));
    return;
  }
  // A mapping (anything with keys()) is read by key, anything else as (key, value) pairs.
  if (other.kind == K::Object) {
    if (std::optional<Value> keys = interp.find_attr(other, "keys")) {
      CallArgs none;
      for (const Value &key : interp.to_list(interp.call(*keys, none)))
        d.set(&interp, key, interp.get_item(other, key));
      return;
    }
  }
  std::unique_ptr<Iterator> it = interp.iterate(other);
  Value pair;
  for (std::size_t n = 0; it->next(pair); ++n) {
    std::vector<Value> kv;
    if (pair.kind == K::Tuple || pair.kind == K::List) {
      kv = pair.seq().items;
    } else {
      std::unique_ptr<Iterator> inner;
      try {
        inner = interp.iterate(pair);
      } catch (TraceError &) {
        raise_python("TypeError", "cannot convert dictionary update sequence element #" + std::to_string(n) +
                                      " to a sequence");
      }
      kv = interp.to_list(pair);
    }
    if (kv.size() != 2)
      raise_python("ValueError", "dictionary update sequence element #" + std::to_string(n) + " has length " +
                                     std::to_string(kv.size()) + "; 2 is required");
    d.set(&interp, kv[0], kv[1]);
  }
}

namespace pylib {

std::span<const Method> dict_methods() {
  static const Method methods[] = {
      {"clear", dict_clear},   {"copy", dict_copy},         {"get", dict_get},
      {"items", dict_items},   {"keys", dict_keys},         {"pop", dict_pop},
      {"popitem", dict_popitem}, {"setdefault", dict_setdefault}, {"update", dict_update},
      {"values", dict_values},
  };
  return methods;
}

} // namespace pylib

} // namespace nkicc::trace
