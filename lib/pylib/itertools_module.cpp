// itertools: lazy iterators over iterables, in CPython 3.11's order of results (product's
// rightmost element advances fastest, combinations in lexicographic order of positions).
#include "iterators.h"
#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "stdlib.h"

#include <algorithm>
#include <limits>

namespace nkicc::trace::pylib {

namespace {

using python::BinOpKind;

std::shared_ptr<std::vector<Value>> pool_of(Interpreter &interp, const Value &iterable) {
  return std::make_shared<std::vector<Value>>(interp.to_list(iterable));
}

/// The r-length index tuples of `n` positions in CPython's order, shared by permutations,
/// combinations and combinations_with_replacement.
Value combinatoric(std::string type, std::shared_ptr<std::vector<Value>> pool, std::int64_t r,
                   std::function<bool(std::vector<std::size_t> &, std::size_t)> advance,
                   std::vector<std::size_t> first, bool empty) {
  bool started = false, done = empty;
  return make_iterator(std::move(type), [=](Value &out) mutable {
    if (done)
      return false;
    if (started && !advance(first, pool->size())) {
      done = true;
      return false;
    }
    started = true;
    std::vector<Value> items;
    items.reserve(static_cast<std::size_t>(r));
    for (std::size_t k : first)
      items.push_back((*pool)[k]);
    out = Value::tuple(std::move(items));
    return true;
  });
}

std::int64_t r_arg(const Value *v, std::size_t n) {
  if (!v || v->is_none())
    return static_cast<std::int64_t>(n);
  std::int64_t r = index_arg(*v);
  if (r < 0)
    raise_python("ValueError", "r must be non-negative");
  return r;
}

Value product(Interpreter &interp, CallArgs &args) {
  std::int64_t repeat = 1;
  for (const auto &[k, v] : args.keywords) {
    if (k != "repeat")
      raise_python("TypeError", "product() got an unexpected keyword argument '" + k + "'");
    repeat = index_arg(v);
    if (repeat < 0)
      raise_python("ValueError", "repeat argument cannot be negative");
  }
  auto pools = std::make_shared<std::vector<std::vector<Value>>>();
  std::vector<std::vector<Value>> given;
  for (const Value &v : args.positional)
    given.push_back(interp.to_list(v));
  for (std::int64_t k = 0; k < repeat; ++k)
    pools->insert(pools->end(), given.begin(), given.end());
  bool empty = std::any_of(pools->begin(), pools->end(), [](const auto &p) { return p.empty(); });
  std::vector<std::size_t> index(pools->size(), 0);
  bool started = false, done = empty;
  return make_iterator("itertools.product", [pools, index, started, done](Value &out) mutable {
    if (done)
      return false;
    if (started) {
      // Odometer: the rightmost position advances fastest.
      std::size_t k = index.size();
      while (k > 0) {
        --k;
        if (++index[k] < (*pools)[k].size())
          break;
        index[k] = 0;
        if (k == 0) {
          done = true;
          return false;
        }
      }
      if (index.empty()) {
        done = true;
        return false;
      }
    }
    started = true;
    std::vector<Value> items;
    for (std::size_t k = 0; k < index.size(); ++k)
      items.push_back((*pools)[k][index[k]]);
    out = Value::tuple(std::move(items));
    return true;
  });
}

Value chain_of(std::shared_ptr<Iterator> sources, Interpreter &interp) {
  std::shared_ptr<Iterator> current;
  Interpreter *in = &interp;
  return make_iterator("itertools.chain", [sources, current, in](Value &out) mutable {
    while (true) {
      if (current && current->next(out))
        return true;
      Value next_source;
      if (!sources->next(next_source))
        return false;
      current = in->iterate(next_source);
    }
  });
}

Value chain(Interpreter &interp, CallArgs &args) {
  no_keywords("chain", args);
  Value all = Value::tuple(args.positional);
  return chain_of(interp.iterate(all), interp);
}

Value count(Interpreter &interp, CallArgs &args) {
  BoundArgs a("count", args, {"start", "step"}, 0);
  Value start = a.has(0) ? *a.get(0) : Value::integer(0);
  Value step = a.has(1) ? *a.get(1) : Value::integer(1);
  if (!start.is_number() || !step.is_number())
    raise_python("TypeError", "a number is required");
  Interpreter *in = &interp;
  return make_iterator("itertools.count", [in, start, step](Value &out) mutable {
    out = start;
    start = in->binary_op(BinOpKind::Add, start, step);
    return true;
  });
}

Value cycle(Interpreter &interp, CallArgs &args) {
  no_keywords("cycle", args);
  arity("cycle", args, 1, 1);
  std::shared_ptr<Iterator> it = interp.iterate(args.positional[0]);
  auto saved = std::make_shared<std::vector<Value>>();
  std::size_t k = 0;
  bool exhausted = false;
  Interpreter *in = &interp;
  return make_iterator("itertools.cycle", [it, saved, k, exhausted, in](Value &out) mutable {
    if (!exhausted) {
      if (it->next(out)) {
        saved->push_back(out);
        in->check_length(saved->size());
        return true;
      }
      exhausted = true;
    }
    if (saved->empty())
      return false;
    out = (*saved)[k++ % saved->size()];
    return true;
  });
}

Value repeat(Interpreter &, CallArgs &args) {
  BoundArgs a("repeat", args, {"object", "times"}, 1);
  Value obj = *a.get(0);
  std::int64_t left = a.has(1) ? std::max<std::int64_t>(0, index_arg(*a.get(1))) : -1;
  return make_iterator("itertools.repeat", [obj, left](Value &out) mutable {
    if (left == 0)
      return false;
    if (left > 0)
      --left;
    out = obj;
    return true;
  });
}

Value islice(Interpreter &interp, CallArgs &args) {
  no_keywords("islice", args);
  arity("islice", args, 2, 4);
  auto bound = [](const Value &v, const char *what) -> std::int64_t {
    if (v.is_none())
      return -1;
    if (!is_intlike(v) || int_of(v) < 0)
      raise_python("ValueError", std::string(what) + " argument for islice() must be None or an integer: 0 <= x <= "
                                                     "sys.maxsize.");
    return int_of(v);
  };
  std::int64_t start = 0, stop, step = 1;
  if (args.positional.size() == 2) {
    stop = bound(args.positional[1], "Stop");
  } else {
    start = args.positional[1].is_none() ? 0 : bound(args.positional[1], "Indices");
    stop = bound(args.positional[2], "Stop");
    if (args.positional.size() == 4) {
      step = args.positional[3].is_none() ? 1 : bound(args.positional[3], "Step");
      if (step == 0)
        raise_python("ValueError", "Step for islice() must be a positive integer or None.");
    }
  }
  std::shared_ptr<Iterator> it = interp.iterate(args.positional[0]);
  std::int64_t next_index = start, position = 0;
  return make_iterator("itertools.islice", [it, next_index, position, stop, step](Value &out) mutable {
    if (stop >= 0 && next_index >= stop)
      return false;
    Value item;
    while (position <= next_index) {
      if (!it->next(item))
        return false;
      ++position;
    }
    out = std::move(item);
    next_index += step;
    return true;
  });
}

Value accumulate(Interpreter &interp, CallArgs &args) {
  BoundArgs a("accumulate", args, {"iterable", "func", "initial"}, 1);
  std::shared_ptr<Iterator> it = interp.iterate(*a.get(0));
  Value func = a.has(1) ? *a.get(1) : Value::none();
  bool have = a.has(2) && !a.get(2)->is_none(), pending_initial = have;
  Value total = have ? *a.get(2) : Value::none();
  Interpreter *in = &interp;
  return make_iterator("itertools.accumulate", [=](Value &out) mutable {
    if (pending_initial) {
      pending_initial = false;
      out = total;
      return true;
    }
    Value item;
    if (!it->next(item))
      return false;
    if (!have) {
      total = item;
      have = true;
    } else if (func.is_none()) {
      total = in->binary_op(BinOpKind::Add, total, item);
    } else {
      CallArgs c;
      c.positional = {total, item};
      total = in->call(func, c);
    }
    out = total;
    return true;
  });
}

Value zip_longest(Interpreter &interp, CallArgs &args) {
  Value fill;
  for (const auto &[k, v] : args.keywords) {
    if (k != "fillvalue")
      raise_python("TypeError", "zip_longest() got an unexpected keyword argument '" + k + "'");
    fill = v;
  }
  std::vector<std::shared_ptr<Iterator>> its;
  for (const Value &v : args.positional)
    its.push_back(interp.iterate(v));
  std::vector<bool> active(its.size(), true);
  std::size_t live = its.size();
  return make_iterator("itertools.zip_longest", [its, active, live, fill](Value &out) mutable {
    if (live == 0)
      return false;
    std::vector<Value> row;
    for (std::size_t k = 0; k < its.size(); ++k) {
      Value item = fill;
      if (active[k] && !its[k]->next(item)) {
        active[k] = false;
        --live;
        item = fill;
      }
      row.push_back(std::move(item));
    }
    if (live == 0)
      return false;
    out = Value::tuple(std::move(row));
    return true;
  });
}

Value starmap(Interpreter &interp, CallArgs &args) {
  no_keywords("starmap", args);
  arity("starmap", args, 2, 2);
  Value fn = args.positional[0];
  std::shared_ptr<Iterator> it = interp.iterate(args.positional[1]);
  Interpreter *in = &interp;
  return make_iterator("itertools.starmap", [fn, it, in](Value &out) {
    Value item;
    if (!it->next(item))
      return false;
    CallArgs c;
    c.positional = in->to_list(item);
    out = in->call(fn, c);
    return true;
  });
}

/// takewhile, dropwhile, filterfalse.
Value predicate_iter(Interpreter &interp, CallArgs &args, const char *name, int mode) {
  no_keywords(name, args);
  arity(name, args, 2, 2);
  Value pred = args.positional[0];
  std::shared_ptr<Iterator> it = interp.iterate(args.positional[1]);
  Interpreter *in = &interp;
  bool flag = false;
  return make_iterator(std::string("itertools.") + name, [pred, it, in, mode, flag](Value &out) mutable {
    auto test = [&](const Value &v) {
      if (pred.is_none())
        return in->truthy(v);
      CallArgs c;
      c.positional.push_back(v);
      return in->truthy(in->call(pred, c));
    };
    Value item;
    while (true) {
      if (mode == 0 && flag)
        return false;
      if (!it->next(item))
        return false;
      if (mode == 0) { // takewhile
        if (test(item)) {
          out = std::move(item);
          return true;
        }
        flag = true;
        return false;
      }
      if (mode == 1) { // dropwhile
        if (!flag && test(item))
          continue;
        flag = true;
        out = std::move(item);
        return true;
      }
      if (!test(item)) { // filterfalse
        out = std::move(item);
        return true;
      }
    }
  });
}

Value compress(Interpreter &interp, CallArgs &args) {
  BoundArgs a("compress", args, {"data", "selectors"}, 2);
  std::shared_ptr<Iterator> data = interp.iterate(*a.get(0)), selectors = interp.iterate(*a.get(1));
  Interpreter *in = &interp;
  return make_iterator("itertools.compress", [data, selectors, in](Value &out) {
    Value item, sel;
    while (data->next(item) && selectors->next(sel))
      if (in->truthy(sel)) {
        out = std::move(item);
        return true;
      }
    return false;
  });
}

Value pairwise(Interpreter &interp, CallArgs &args) {
  no_keywords("pairwise", args);
  arity("pairwise", args, 1, 1);
  std::shared_ptr<Iterator> it = interp.iterate(args.positional[0]);
  Value previous;
  bool started = false;
  return make_iterator("itertools.pairwise", [it, previous, started](Value &out) mutable {
    if (!started) {
      started = true;
      if (!it->next(previous))
        return false;
    }
    Value item;
    if (!it->next(item))
      return false;
    out = Value::tuple({previous, item});
    previous = std::move(item);
    return true;
  });
}

Value groupby(Interpreter &interp, CallArgs &args) {
  BoundArgs a("groupby", args, {"iterable", "key"}, 1);
  // Each group is materialized: simpler than CPython's shared grouper, and the same items.
  std::vector<Value> items = interp.to_list(*a.get(0));
  Value key = a.has(1) ? *a.get(1) : Value::none();
  auto groups = std::make_shared<std::vector<Value>>();
  Value current_key;
  std::vector<Value> current;
  for (const Value &item : items) {
    Value k = item;
    if (!key.is_none()) {
      CallArgs c;
      c.positional.push_back(item);
      k = interp.call(key, c);
    }
    if (!current.empty() && !items_equal(interp, current_key, k)) {
      groups->push_back(Value::tuple({current_key, make_iterator("itertools._grouper", std::make_unique<FunctionIterator>(
                                                                  [g = std::make_shared<std::vector<Value>>(current),
                                                                   i = std::size_t{0}](Value &o) mutable {
                                                                    if (i >= g->size())
                                                                      return false;
                                                                    o = (*g)[i++];
                                                                    return true;
                                                                  }))}));
      current.clear();
    }
    current_key = k;
    current.push_back(item);
  }
  if (!current.empty())
    groups->push_back(Value::tuple({current_key, make_iterator("itertools._grouper", std::make_unique<FunctionIterator>(
                                                                [g = std::make_shared<std::vector<Value>>(current),
                                                                 i = std::size_t{0}](Value &o) mutable {
                                                                  if (i >= g->size())
                                                                    return false;
                                                                  o = (*g)[i++];
                                                                  return true;
                                                                }))}));
  std::size_t k = 0;
  return make_iterator("itertools.groupby", [groups, k](Value &out) mutable {
    if (k >= groups->size())
      return false;
    out = (*groups)[k++];
    return true;
  });
}

Value tee(Interpreter &interp, CallArgs &args) {
  no_keywords("tee", args);
  arity("tee", args, 1, 2);
  std::int64_t n = args.positional.size() > 1 ? index_arg(args.positional[1]) : 2;
  if (n < 0)
    raise_python("ValueError", "n must be >= 0");
  // The items are buffered once and shared by every copy.
  auto source = std::shared_ptr<Iterator>(interp.iterate(args.positional[0]));
  auto buffer = std::make_shared<std::vector<Value>>();
  std::vector<Value> out;
  for (std::int64_t j = 0; j < n; ++j) {
    std::size_t k = 0;
    out.push_back(make_iterator("itertools._tee", [source, buffer, k](Value &o) mutable {
      if (k >= buffer->size()) {
        Value item;
        if (!source->next(item))
          return false;
        buffer->push_back(std::move(item));
      }
      o = (*buffer)[k++];
      return true;
    }));
  }
  return Value::tuple(std::move(out));
}

} // namespace

std::shared_ptr<ModuleObject> make_itertools_module(Interpreter &) {
  auto m = make_library_module("itertools", "itertools");
  define_function(*m, "product", product);
  define_function(*m, "count", count);
  define_function(*m, "cycle", cycle);
  define_function(*m, "repeat", repeat);
  define_function(*m, "islice", islice);
  define_function(*m, "accumulate", accumulate);
  define_function(*m, "zip_longest", zip_longest);
  define_function(*m, "starmap", starmap);
  define_function(*m, "takewhile", [](Interpreter &i, CallArgs &a) { return predicate_iter(i, a, "takewhile", 0); });
  define_function(*m, "dropwhile", [](Interpreter &i, CallArgs &a) { return predicate_iter(i, a, "dropwhile", 1); });
  define_function(*m, "filterfalse",
                  [](Interpreter &i, CallArgs &a) { return predicate_iter(i, a, "filterfalse", 2); });
  define_function(*m, "compress", compress);
  define_function(*m, "pairwise", pairwise);
  define_function(*m, "groupby", groupby);
  define_function(*m, "tee", tee);
  // chain, and chain.from_iterable.
  class ChainFunction : public BuiltinFunction {
  public:
    ChainFunction() : BuiltinFunction("chain", chain) {}
    std::optional<Value> get_attr(Interpreter &, std::string_view name) override {
      if (name != "from_iterable")
        return std::nullopt;
      return Value::object(std::make_shared<BuiltinFunction>("from_iterable", [](Interpreter &interp, CallArgs &a) {
        arity("from_iterable", a, 1, 1);
        return chain_of(interp.iterate(a.positional[0]), interp);
      }));
    }
  };
  m->globals().set("chain", Value::object(std::make_shared<ChainFunction>()));
  define_function(*m, "permutations", [](Interpreter &interp, CallArgs &a) {
    BoundArgs b("permutations", a, {"iterable", "r"}, 1);
    auto pool = pool_of(interp, *b.get(0));
    std::int64_t r = r_arg(b.get(1), pool->size());
    std::size_t n = pool->size();
    bool empty = static_cast<std::size_t>(r) > n;
    // CPython's algorithm: indices and cycles.
    auto indices = std::make_shared<std::vector<std::size_t>>(n);
    for (std::size_t k = 0; k < n; ++k)
      (*indices)[k] = k;
    auto cycles = std::make_shared<std::vector<std::size_t>>();
    for (std::size_t k = 0; !empty && k < static_cast<std::size_t>(r); ++k)
      cycles->push_back(n - k);
    std::vector<std::size_t> first(indices->begin(), indices->begin() + (empty ? 0 : r));
    auto advance = [indices, cycles, r](std::vector<std::size_t> &current, std::size_t size) {
      auto ur = static_cast<std::size_t>(r);
      for (std::size_t i = ur; i-- > 0;) {
        if (--(*cycles)[i] == 0) {
          std::rotate(indices->begin() + static_cast<std::ptrdiff_t>(i),
                      indices->begin() + static_cast<std::ptrdiff_t>(i) + 1, indices->end());
          (*cycles)[i] = size - i;
        } else {
          std::size_t j = (*cycles)[i];
          std::swap((*indices)[i], (*indices)[size - j]);
          current.assign(indices->begin(), indices->begin() + static_cast<std::ptrdiff_t>(ur));
          return true;
        }
      }
      return false;
    };
    return combinatoric("itertools.permutations", pool, r, advance, first, empty);
  });
  auto combinations = [](bool replace) {
    return [replace](Interpreter &interp, CallArgs &a) {
      const char *name = replace ? "combinations_with_replacement" : "combinations";
      BoundArgs b(name, a, {"iterable", "r"}, 2);
      auto pool = pool_of(interp, *b.get(0));
      std::int64_t r = r_arg(b.get(1), pool->size());
      std::size_t n = pool->size();
      auto ur = static_cast<std::size_t>(r);
      bool empty = replace ? (n == 0 && r > 0) : ur > n;
      std::vector<std::size_t> first(empty ? 0 : ur, 0);
      if (!replace)
        for (std::size_t k = 0; k < first.size(); ++k)
          first[k] = k;
      auto advance = [replace, ur](std::vector<std::size_t> &idx, std::size_t size) {
        // The rightmost index that can still grow, then reset those after it.
        for (std::size_t i = ur; i-- > 0;) {
          std::size_t limit = replace ? size - 1 : i + size - ur;
          if (idx[i] != limit) {
            ++idx[i];
            for (std::size_t j = i + 1; j < ur; ++j)
              idx[j] = replace ? idx[i] : idx[j - 1] + 1;
            return true;
          }
        }
        return false;
      };
      return combinatoric(std::string("itertools.") + name, pool, r, advance, first, empty);
    };
  };
  define_function(*m, "combinations", combinations(false));
  define_function(*m, "combinations_with_replacement", combinations(true));
  return m;
}

} // namespace nkicc::trace::pylib
