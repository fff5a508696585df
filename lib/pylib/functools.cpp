// functools: reduce, partial, lru_cache/cache, wraps/update_wrapper and cmp_to_key, in CPython
// 3.11's words.
#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "stdlib.h"
#include "unmodelled.h"

namespace nkicc::trace::pylib {

namespace {

Value reduce(Interpreter &interp, CallArgs &args) {
  no_keywords("reduce", args);
  if (args.positional.size() < 2 || args.positional.size() > 3)
    raise_python("TypeError", "reduce expected at least 2 arguments, got " + std::to_string(args.positional.size()));
  const Value &fn = args.positional[0];
  std::unique_ptr<Iterator> it = interp.iterate(args.positional[1]);
  Value acc;
  bool have = args.positional.size() == 3;
  if (have)
    acc = args.positional[2];
  Value item;
  while (it->next(item)) {
    if (!have) {
      acc = std::move(item);
      have = true;
      continue;
    }
    CallArgs call_args;
    call_args.positional = {acc, std::move(item)};
    acc = interp.call(fn, call_args);
  }
  if (!have)
    raise_python("TypeError", "reduce() of empty iterable with no initial value");
  return acc;
}

/// functools.partial: the function with some arguments bound.
class PartialObject : public Object {
public:
  std::string_view type_name() const override { return "partial"; }
  bool is_callable() const override { return true; }
  Value call(Interpreter &interp, CallArgs &args) override {
    CallArgs full;
    full.loc = args.loc;
    full.positional = bound;
    full.positional.insert(full.positional.end(), args.positional.begin(), args.positional.end());
    full.keywords = keywords;
    for (const auto &[k, v] : args.keywords) {
      auto it =
          std::find_if(full.keywords.begin(), full.keywords.end(), [&k = k](const auto &p) { return p.first == k; });
      if (it != full.keywords.end())
        it->second = v;
      else
        full.keywords.emplace_back(k, v);
    }
    return interp.call(func, full);
  }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override {
    if (name == "func")
      return func;
    if (name == "args")
      return Value::tuple(bound);
    if (name == "keywords") {
      std::vector<std::pair<Value, Value>> entries;
      for (const auto &[k, v] : keywords)
        entries.emplace_back(Value::str(k), v);
      return Value::dict(std::move(entries));
    }
    (void)interp;
    return std::nullopt;
  }
  std::string repr() const override {
    std::string out = "functools.partial(" + trace::repr(func);
    for (const Value &v : bound)
      out += ", " + trace::repr(v);
    for (const auto &[k, v] : keywords)
      out += ", " + k + "=" + trace::repr(v);
    return out + ")";
  }
  Value func;
  std::vector<Value> bound;
  std::vector<std::pair<std::string, Value>> keywords;
};

Value partial(Interpreter &, CallArgs &args) {
  if (args.positional.empty())
    raise_python("TypeError", "type 'partial' takes at least one argument");
  auto p = std::make_shared<PartialObject>();
  const Value &func = args.positional[0];
  if (auto *inner = func.as<PartialObject>()) {
    // partial(partial(f, 1), 2) flattens to partial(f, 1, 2), as CPython does.
    p->func = inner->func;
    p->bound = inner->bound;
    p->keywords = inner->keywords;
  } else {
    if (func.kind != K::Object)
      raise_python("TypeError", "the first argument must be callable");
    p->func = func;
  }
  p->bound.insert(p->bound.end(), args.positional.begin() + 1, args.positional.end());
  for (const auto &[k, v] : args.keywords) {
    auto it = std::find_if(p->keywords.begin(), p->keywords.end(), [&k = k](const auto &e) { return e.first == k; });
    if (it != p->keywords.end())
      it->second = v;
    else
      p->keywords.emplace_back(k, v);
  }
  return Value::object(p);
}

/// A function memoized by its arguments (lru_cache, cache). The cache is unbounded or holds
/// the `maxsize` most recently used results.
class CachedFunction : public Object, public std::enable_shared_from_this<CachedFunction> {
public:
  std::string_view type_name() const override { return "_lru_cache_wrapper"; }
  bool is_callable() const override { return true; }
  Value call(Interpreter &interp, CallArgs &args) override {
    // The key: the positional arguments, then a marker and the keyword pairs (CPython's
    // _make_key without typed=).
    std::vector<Value> parts = args.positional;
    if (!args.keywords.empty()) {
      parts.push_back(Value::str("\x01kwd_mark"));
      for (const auto &[k, v] : args.keywords) {
        parts.push_back(Value::str(k));
        parts.push_back(v);
      }
    }
    Value key = Value::tuple(std::move(parts));
    if (maxsize != 0) {
      if (Value *hit = cache.find(&interp, key)) {
        ++hits;
        Value out = *hit;
        if (maxsize > 0) { // most recently used goes last
          cache.erase(&interp, key);
          cache.set(&interp, key, out);
        }
        return out;
      }
    }
    ++misses;
    Value out = interp.call(func, args);
    if (maxsize != 0) {
      cache.set(&interp, key, out);
      if (maxsize > 0 && static_cast<std::int64_t>(cache.size()) > maxsize) {
        Value oldest = cache.items().begin()->first;
        cache.erase(&interp, oldest);
      }
    }
    return out;
  }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override {
    auto self = shared_from_this();
    if (name == "cache_info")
      return Value::object(std::make_shared<BuiltinFunction>("cache_info", [self](Interpreter &, CallArgs &) {
        return Value::tuple({Value::integer(self->hits), Value::integer(self->misses),
                             self->maxsize < 0 ? Value::none() : Value::integer(self->maxsize),
                             Value::integer(static_cast<std::int64_t>(self->cache.size()))});
      }));
    if (name == "cache_clear")
      return Value::object(std::make_shared<BuiltinFunction>("cache_clear", [self](Interpreter &, CallArgs &) {
        self->cache.clear();
        self->hits = self->misses = 0;
        return Value::none();
      }));
    if (name == "__wrapped__")
      return func;
    return interp.find_attr(func, name);
  }
  std::string repr() const override { return "<functools._lru_cache_wrapper object>"; }
  Value func;
  std::int64_t maxsize = 128; ///< -1: unbounded
  DictData cache;
  std::int64_t hits = 0, misses = 0;
};

Value cached(const Value &func, std::int64_t maxsize) {
  auto c = std::make_shared<CachedFunction>();
  c->func = func;
  c->maxsize = maxsize;
  return Value::object(c);
}

Value lru_cache(Interpreter &, CallArgs &args) {
  // @lru_cache, @lru_cache(), @lru_cache(maxsize=None), @lru_cache(32)
  const Value *maxsize_arg = args.keyword("maxsize");
  for (const auto &[k, v] : args.keywords)
    if (k != "maxsize" && k != "typed")
      raise_python("TypeError", "lru_cache() got an unexpected keyword argument '" + k + "'");
  if (args.positional.size() == 1 && args.positional[0].kind == K::Object && !maxsize_arg)
    return cached(args.positional[0], 128);
  if (args.positional.size() > 1)
    raise_python("TypeError", "lru_cache() takes at most 2 arguments");
  if (!args.positional.empty())
    maxsize_arg = &args.positional[0];
  std::int64_t maxsize = 128;
  if (maxsize_arg) {
    if (maxsize_arg->is_none())
      maxsize = -1;
    else if (is_intlike(*maxsize_arg))
      maxsize = std::max<std::int64_t>(0, int_of(*maxsize_arg));
    else
      raise_python("TypeError", "Expected first argument to be an integer, a callable, or None");
  }
  return Value::object(std::make_shared<BuiltinFunction>("decorating_function", [maxsize](Interpreter &, CallArgs &a) {
    arity("decorating_function", a, 1, 1);
    return cached(a.positional[0], maxsize);
  }));
}

Value cache(Interpreter &, CallArgs &args) {
  arity("cache", args, 1, 1);
  return cached(args.positional[0], -1);
}

/// functools.wraps(wrapped): a decorator that hands the wrapper back. nkicc's functions keep
/// their own names (their attributes are read-only here), which no trace can observe.
Value wraps(Interpreter &, CallArgs &args) {
  if (args.positional.empty())
    raise_python("TypeError", "wraps() missing 1 required positional argument: 'wrapped'");
  return Value::object(std::make_shared<BuiltinFunction>("update_wrapper", [](Interpreter &, CallArgs &a) {
    arity("update_wrapper", a, 1, 1);
    return a.positional[0];
  }));
}
Value update_wrapper(Interpreter &, CallArgs &args) {
  if (args.positional.size() < 2)
    raise_python("TypeError", "update_wrapper() missing 2 required positional arguments: 'wrapper' and 'wrapped'");
  return args.positional[0];
}

/// cmp_to_key(cmp): keys that order by cmp(a, b) < 0.
class CmpKey : public Object {
public:
  std::string_view type_name() const override { return "functools.KeyWrapper"; }
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override {
    auto *o = other.as<CmpKey>();
    if (!o)
      return std::nullopt;
    CallArgs args;
    args.positional = reflected ? std::vector<Value>{o->obj, obj} : std::vector<Value>{obj, o->obj};
    Value c = interp.call(cmp, args);
    Value zero = Value::integer(0);
    return interp.compare(op, c, zero);
  }
  Value cmp, obj;
};

Value cmp_to_key(Interpreter &, CallArgs &args) {
  arity("cmp_to_key", args, 1, 1);
  Value cmp = args.positional[0];
  return Value::object(std::make_shared<BuiltinFunction>("K", [cmp](Interpreter &, CallArgs &a) {
    arity("K", a, 1, 1);
    auto k = std::make_shared<CmpKey>();
    k->cmp = cmp;
    k->obj = a.positional[0];
    return Value::object(k);
  }));
}

} // namespace

std::shared_ptr<ModuleObject> make_functools_module(Interpreter &) {
  auto m = make_library_module("functools", "functools");
  define_function(*m, "reduce", reduce);
  m->globals().set("partial", library_type("partial", K::Object, partial));
  define_function(*m, "lru_cache", lru_cache);
  define_function(*m, "cache", cache);
  define_function(*m, "wraps", wraps);
  define_function(*m, "update_wrapper", update_wrapper);
  define_function(*m, "cmp_to_key", cmp_to_key);
  return m;
}

} // namespace nkicc::trace::pylib
