// enumerate, zip, map, filter, reversed, iter and next: lazy, as in Python 3, so that they
// work on endless iterators (itertools.count) and see a list change while they run.
#include "iterators.h"

#include "methods.h"
#include "unmodelled.h"

#include <algorithm>
#include <limits>

namespace nkicc::trace {

using namespace pylib;

namespace pylib {

namespace {
/// iter(it) of an iterator is the iterator itself: the loop advances the shared state.
class ForwardingIterator : public Iterator {
public:
  explicit ForwardingIterator(std::shared_ptr<IteratorObject> it) : it_(std::move(it)) {}
  bool next(Value &out) override { return it_->next(out); }

private:
  std::shared_ptr<IteratorObject> it_;
};
} // namespace

bool IteratorObject::next(Value &out) {
  if (!inner_)
    return false;
  if (inner_->next(out))
    return true;
  inner_.reset();
  return false;
}

std::unique_ptr<Iterator> IteratorObject::iterate(Interpreter &) {
  return std::make_unique<ForwardingIterator>(shared_from_this());
}

std::optional<Value> IteratorObject::get_attr(Interpreter &interp, std::string_view name) {
  if (name == "__next__") {
    auto self = shared_from_this();
    return Value::object(std::make_shared<BuiltinFunction>("__next__", [self](Interpreter &, CallArgs &args) {
      expect_args("__next__", args, 0, 0);
      Value out;
      if (!self->next(out))
        raise_python("StopIteration", "");
      return out;
    }));
  }
  if (name == "__iter__") {
    Value self = Value::object(shared_from_this());
    return Value::object(std::make_shared<BuiltinFunction>("__iter__", [self](Interpreter &, CallArgs &) { return self; }));
  }
  return unmodelled_attribute(interp, "iterator", name);
}

Value make_iterator(std::string type, std::unique_ptr<Iterator> inner) {
  return Value::object(std::make_shared<IteratorObject>(std::move(type), std::move(inner)));
}
Value make_iterator(std::string type, std::function<bool(Value &)> next) {
  return make_iterator(std::move(type), std::make_unique<FunctionIterator>(std::move(next)));
}

namespace {

Value builtin_enumerate(Interpreter &interp, CallArgs &args) {
  BoundArgs a("enumerate", args, {"iterable", "start"}, 1);
  std::int64_t start = a.has(1) ? index_arg(*a.get(1)) : 0;
  std::shared_ptr<Iterator> it = interp.iterate(*a.get(0));
  bool overflowed = false;
  return make_iterator("enumerate", [it, start, overflowed](Value &out) mutable {
    Value item;
    if (!it->next(item))
      return false;
    // The count goes past int64 only after 2^63 items from start = 0; from a large start it
    // can: nkicc has no big integers, so that is an OverflowError, never a wrapped count.
    if (overflowed)
      int_overflow();
    out = Value::tuple({Value::integer(start), std::move(item)});
    if (start == std::numeric_limits<std::int64_t>::max())
      overflowed = true;
    else
      ++start;
    return true;
  });
}

Value builtin_zip(Interpreter &interp, CallArgs &args) {
  bool strict = false;
  for (const auto &[k, v] : args.keywords) {
    if (k != "strict")
      raise_python("TypeError", "zip() got an unexpected keyword argument '" + k + "'");
    strict = interp.truthy(v);
  }
  std::vector<std::shared_ptr<Iterator>> its;
  for (const Value &v : args.positional)
    its.push_back(interp.iterate(v));
  return make_iterator("zip", [its, strict](Value &out) {
    if (its.empty())
      return false;
    std::vector<Value> row;
    row.reserve(its.size());
    for (std::size_t k = 0; k < its.size(); ++k) {
      Value item;
      if (!its[k]->next(item)) {
        if (strict) {
          if (k > 0)
            raise_python("ValueError", "zip() argument " + std::to_string(k + 1) + " is shorter than argument" +
                                           (k == 1 ? " 1" : "s 1-" + std::to_string(k)));
          for (std::size_t j = 1; j < its.size(); ++j) {
            Value extra;
            if (its[j]->next(extra))
              raise_python("ValueError", "zip() argument " + std::to_string(j + 1) + " is longer than argument" +
                                             (j == 1 ? " 1" : "s 1-" + std::to_string(j)));
          }
        }
        return false;
      }
      row.push_back(std::move(item));
    }
    out = Value::tuple(std::move(row));
    return true;
  });
}

Value builtin_map(Interpreter &interp, CallArgs &args) {
  no_keywords("map", args);
  if (args.positional.size() < 2)
    raise_python("TypeError", "map() must have at least two arguments.");
  Value fn = args.positional[0];
  std::vector<std::shared_ptr<Iterator>> its;
  for (std::size_t k = 1; k < args.positional.size(); ++k)
    its.push_back(interp.iterate(args.positional[k]));
  Interpreter *in = &interp;
  return make_iterator("map", [in, fn, its](Value &out) {
    CallArgs call_args;
    for (const auto &it : its) {
      Value item;
      if (!it->next(item))
        return false;
      call_args.positional.push_back(std::move(item));
    }
    out = in->call(fn, call_args);
    return true;
  });
}

Value builtin_filter(Interpreter &interp, CallArgs &args) {
  no_keywords("filter", args);
  arity("filter", args, 2, 2);
  Value fn = args.positional[0];
  std::shared_ptr<Iterator> it = interp.iterate(args.positional[1]);
  Interpreter *in = &interp;
  return make_iterator("filter", [in, fn, it](Value &out) {
    Value item;
    while (it->next(item)) {
      bool keep;
      if (fn.is_none()) {
        keep = in->truthy(item);
      } else {
        CallArgs call_args;
        call_args.positional.push_back(item);
        keep = in->truthy(in->call(fn, call_args));
      }
      if (keep) {
        out = std::move(item);
        return true;
      }
    }
    return false;
  });
}

Value builtin_reversed(Interpreter &interp, CallArgs &args) {
  no_keywords("reversed", args);
  arity("reversed", args, 1, 1);
  const Value &v = args.positional[0];
  if (v.kind == K::List) {
    // By index from the end, as list_reverseiterator: a shrinking list ends the loop early.
    Value list = v;
    std::size_t k = v.seq().items.size();
    return make_iterator("list_reverseiterator", [list, k](Value &out) mutable {
      const auto &items = list.seq().items;
      if (k == 0 || k > items.size())
        return false;
      out = items[--k];
      return true;
    });
  }
  if (auto *range = v.as<RangeObject>()) {
    // Lazily from the last item, in uint64 so that no length need fit in int64 (CPython's
    // reversed(range(0, 2**63 - 1)) answers at once).
    std::uint64_t left = range->count();
    auto step = static_cast<std::uint64_t>(range->step);
    std::uint64_t next = left ? static_cast<std::uint64_t>(range->start) + (left - 1) * step : 0;
    return make_iterator("range_iterator", [left, step, next](Value &out) mutable {
      if (left == 0)
        return false;
      out = Value::integer(static_cast<std::int64_t>(next));
      if (--left > 0)
        next -= step;
      return true;
    });
  }
  bool reversible = v.kind == K::Tuple || v.kind == K::Str || v.kind == K::Dict ||
                    (v.kind == K::Object && v.object()->length(interp).has_value());
  if (v.kind == K::Object && v.as<IteratorObject>())
    reversible = false;
  if (!reversible)
    raise_python("TypeError", "'" + tn(v) + "' object is not reversible");
  std::vector<Value> items = interp.to_list(v);
  std::reverse(items.begin(), items.end());
  auto shared = std::make_shared<std::vector<Value>>(std::move(items));
  std::size_t k = 0;
  std::string type = v.kind == K::Dict ? "dict_reversekeyiterator" : "reversed";
  return make_iterator(type, [shared, k](Value &out) mutable {
    if (k >= shared->size())
      return false;
    out = (*shared)[k++];
    return true;
  });
}

Value builtin_iter(Interpreter &interp, CallArgs &args) {
  no_keywords("iter", args);
  arity("iter", args, 1, 2);
  if (args.positional.size() == 2) {
    // iter(callable, sentinel): call until the sentinel comes back.
    Value fn = args.positional[0], sentinel = args.positional[1];
    Interpreter *in = &interp;
    bool done = false;
    return make_iterator("callable_iterator", [in, fn, sentinel, done](Value &out) mutable {
      if (done)
        return false;
      CallArgs none;
      Value v = in->call(fn, none);
      if (items_equal(*in, v, sentinel)) {
        done = true;
        return false;
      }
      out = std::move(v);
      return true;
    });
  }
  const Value &v = args.positional[0];
  if (v.as<IteratorObject>())
    return v;
  std::string type = v.kind == K::List    ? "list_iterator"
                     : v.kind == K::Tuple ? "tuple_iterator"
                     : v.kind == K::Str   ? "str_ascii_iterator"
                     : v.kind == K::Dict  ? "dict_keyiterator"
                                          : std::string(type_name(v)) + "_iterator";
  return make_iterator(type, interp.iterate(v));
}

Value builtin_next(Interpreter &, CallArgs &args) {
  no_keywords("next", args);
  arity("next", args, 1, 2);
  auto *it = args.positional[0].as<IteratorObject>();
  if (!it)
    raise_python("TypeError", "'" + tn(args.positional[0]) + "' object is not an iterator");
  Value out;
  if (it->next(out))
    return out;
  if (args.positional.size() > 1)
    return args.positional[1];
  raise_python("StopIteration", "");
}

} // namespace

void install_iterator_builtins(Scope &scope) {
  auto fn = [&](std::string name, BuiltinFunction::Impl impl) {
    scope.set(name, Value::object(std::make_shared<BuiltinFunction>(name, std::move(impl))));
  };
  fn("enumerate", builtin_enumerate);
  fn("zip", builtin_zip);
  fn("map", builtin_map);
  fn("filter", builtin_filter);
  fn("reversed", builtin_reversed);
  fn("iter", builtin_iter);
  fn("next", builtin_next);
}

} // namespace pylib

} // namespace nkicc::trace
