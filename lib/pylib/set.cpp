// set and frozenset as CPython 3.11's Objects/setobject.c builds them: the same probe sequence
// (ten linear probes, then perturbed jumps), the same resize points and the same algorithms for
// union, intersection and difference, so that iteration order matches CPython wherever
// CPython's own hashes are deterministic (ints, floats, tuples of them).
#include "set.h"

#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "unmodelled.h"

namespace nkicc::trace {

using python::BinOpKind;
using python::CmpOpKind;
using namespace pylib;

namespace pylib {

namespace {
constexpr std::size_t kMinSize = 8;
constexpr std::size_t kLinearProbes = 9;
constexpr unsigned kPerturbShift = 5;

std::uint64_t shuffle_bits(std::uint64_t h) { return ((h ^ 89869747ULL) ^ (h << 16)) * 3644798167ULL; }
} // namespace

SetObject::~SetObject() { release_nested(keys_.data(), keys_.size()); }

void SetObject::clear_table() {
  std::vector<Value> old = std::move(keys_);
  keys_.assign(kMinSize, Value());
  hashes_.assign(kMinSize, 0);
  state_.assign(kMinSize, kEmpty);
  fill_ = used_ = 0;
  ++version_;
  hash_.reset();
  release_nested(old.data(), old.size());
}

std::int64_t SetObject::lookup(Interpreter *interp, const Value &key, std::int64_t hash) {
restart:
  std::size_t mask = keys_.size() - 1;
  std::uint64_t perturb = static_cast<std::uint64_t>(hash);
  std::size_t i = static_cast<std::size_t>(hash) & mask;
  while (true) {
    std::size_t probes = i + kLinearProbes <= mask ? kLinearProbes : 0;
    for (std::size_t j = i;; ++j) {
      if (state_[j] == kEmpty)
        return -1;
      if (state_[j] == kActive && hashes_[j] == hash) {
        Value held = keys_[j];
        std::uint64_t version = version_;
        bool equal = keys_equal(interp, held, key);
        if (version != version_)
          goto restart;
        if (equal)
          return static_cast<std::int64_t>(j);
      }
      if (probes-- == 0)
        break;
    }
    perturb >>= kPerturbShift;
    i = (i * 5 + 1 + perturb) & mask;
  }
}

void SetObject::add_entry(Interpreter *interp, const Value &key, std::int64_t hash) {
restart:
  std::size_t mask = keys_.size() - 1;
  std::uint64_t perturb = static_cast<std::uint64_t>(hash);
  std::size_t i = static_cast<std::size_t>(hash) & mask;
  std::int64_t free_slot = -1;
  while (true) {
    std::size_t probes = i + kLinearProbes <= mask ? kLinearProbes : 0;
    for (std::size_t j = i;; ++j) {
      if (state_[j] == kEmpty) {
        if (free_slot >= 0) {
          auto f = static_cast<std::size_t>(free_slot);
          keys_[f] = key;
          hashes_[f] = hash;
          state_[f] = kActive;
          ++used_;
          ++version_;
          return;
        }
        keys_[j] = key;
        hashes_[j] = hash;
        state_[j] = kActive;
        ++fill_;
        ++used_;
        ++version_;
        if (fill_ * 5 >= mask * 3)
          resize(used_ > 50000 ? used_ * 2 : used_ * 4);
        return;
      }
      if (state_[j] == kActive && hashes_[j] == hash) {
        Value held = keys_[j];
        std::uint64_t version = version_;
        bool equal = keys_equal(interp, held, key);
        if (equal)
          return;
        if (version != version_)
          goto restart;
      } else if (state_[j] == kDummy && free_slot < 0) {
        free_slot = static_cast<std::int64_t>(j);
      }
      if (probes-- == 0)
        break;
    }
    perturb >>= kPerturbShift;
    i = (i * 5 + 1 + perturb) & mask;
  }
}

void SetObject::insert_clean(const Value &key, std::int64_t hash) {
  std::size_t mask = keys_.size() - 1;
  std::uint64_t perturb = static_cast<std::uint64_t>(hash);
  std::size_t i = static_cast<std::size_t>(hash) & mask;
  while (true) {
    if (state_[i] == kEmpty)
      break;
    bool found = false;
    if (i + kLinearProbes <= mask) {
      for (std::size_t j = 1; j <= kLinearProbes; ++j)
        if (state_[i + j] == kEmpty) {
          i += j;
          found = true;
          break;
        }
    }
    if (found)
      break;
    perturb >>= kPerturbShift;
    i = (i * 5 + 1 + perturb) & mask;
  }
  keys_[i] = key;
  hashes_[i] = hash;
  state_[i] = kActive;
}

void SetObject::resize(std::size_t min_used) {
  std::size_t n = kMinSize;
  while (n <= min_used)
    n <<= 1;
  std::vector<Value> old_keys = std::move(keys_);
  std::vector<std::int64_t> old_hashes = std::move(hashes_);
  std::vector<std::uint8_t> old_state = std::move(state_);
  keys_.assign(n, Value());
  hashes_.assign(n, 0);
  state_.assign(n, kEmpty);
  fill_ = used_;
  for (std::size_t k = 0; k < old_keys.size(); ++k)
    if (old_state[k] == kActive)
      insert_clean(old_keys[k], old_hashes[k]);
  ++version_;
}

void SetObject::merge(Interpreter *interp, const SetObject &other) {
  if (&other == this || other.used_ == 0)
    return;
  std::size_t mask = keys_.size() - 1;
  if ((fill_ + other.used_) * 5 >= mask * 3)
    resize((used_ + other.used_) * 2);
  if (fill_ == 0 && keys_.size() == other.keys_.size() && other.fill_ == other.used_) {
    // An empty table of the same size and no dummies: copy slot for slot.
    for (std::size_t k = 0; k < other.keys_.size(); ++k)
      if (other.state_[k] == kActive) {
        keys_[k] = other.keys_[k];
        hashes_[k] = other.hashes_[k];
        state_[k] = kActive;
      }
    fill_ = used_ = other.used_;
    ++version_;
    return;
  }
  if (fill_ == 0) {
    fill_ = used_ = other.used_;
    for (std::size_t k = 0; k < other.keys_.size(); ++k)
      if (other.state_[k] == kActive)
        insert_clean(other.keys_[k], other.hashes_[k]);
    ++version_;
    return;
  }
  // Hold the other's keys: a Python `==` may change either set.
  std::vector<std::pair<Value, std::int64_t>> items;
  for (std::size_t k = 0; k < other.keys_.size(); ++k)
    if (other.state_[k] == kActive)
      items.emplace_back(other.keys_[k], other.hashes_[k]);
  for (const auto &[key, hash] : items)
    add_entry(interp, key, hash);
}

void SetObject::add(Interpreter *interp, const Value &key) {
  std::int64_t hash = hash_value(interp, key);
  add_entry(interp, key, hash);
}

bool SetObject::has(Interpreter *interp, const Value &key) {
  // `{1} in s` looks the set up as a frozenset, as CPython does.
  if (auto *s = key.as<SetObject>(); s && !s->frozen_) {
    auto frozen = std::make_shared<SetObject>(*s);
    frozen->frozen_ = true;
    frozen->hash_.reset();
    Value f = Value::object(frozen);
    return lookup(interp, f, hash_value(interp, f)) >= 0;
  }
  return lookup(interp, key, hash_value(interp, key)) >= 0;
}

bool SetObject::discard(Interpreter *interp, const Value &key) {
  std::int64_t slot = lookup(interp, key, hash_value(interp, key));
  if (slot < 0)
    return false;
  auto k = static_cast<std::size_t>(slot);
  keys_[k] = Value();
  hashes_[k] = -1;
  state_[k] = kDummy;
  --used_;
  ++version_;
  return true;
}

Value SetObject::pop() {
  if (used_ == 0)
    raise_python("KeyError", "'pop from an empty set'");
  std::size_t mask = keys_.size() - 1;
  std::size_t k = finger_ & mask;
  while (state_[k] != kActive)
    k = k == mask ? 0 : k + 1;
  Value key = std::move(keys_[k]);
  keys_[k] = Value();
  hashes_[k] = -1;
  state_[k] = kDummy;
  --used_;
  ++version_;
  finger_ = k + 1;
  return key;
}

std::vector<Value> SetObject::keys() const {
  std::vector<Value> out;
  out.reserve(used_);
  for (std::size_t k = 0; k < keys_.size(); ++k)
    if (state_[k] == kActive)
      out.push_back(keys_[k]);
  return out;
}

void SetObject::update(Interpreter &interp, const Value &iterable) {
  if (auto *other = iterable.as<SetObject>()) {
    merge(&interp, *other);
    return;
  }
  if (iterable.kind == K::Dict) {
    DictData &d = iterable.dict_data();
    std::size_t mask = keys_.size() - 1;
    if ((fill_ + d.size()) * 5 >= mask * 3)
      resize((used_ + d.size()) * 2);
    std::vector<Value> keys;
    for (const auto &[key, value] : d.items())
      keys.push_back(key);
    for (const Value &key : keys)
      add(&interp, key);
    return;
  }
  std::unique_ptr<Iterator> it = interp.iterate(iterable);
  Value key;
  while (it->next(key)) {
    add(&interp, key);
    interp.check_length(used_);
  }
}

std::shared_ptr<SetObject> set_from(Interpreter &interp, const Value &iterable, bool frozen) {
  auto out = std::make_shared<SetObject>(frozen);
  out->update(interp, iterable);
  return out;
}

std::optional<std::int64_t> SetObject::hash(Interpreter &) {
  if (!frozen_)
    return std::nullopt;
  if (hash_)
    return *hash_;
  // frozenset_hash(): order-independent, from the entries' hashes.
  std::uint64_t h = 0;
  for (std::size_t k = 0; k < keys_.size(); ++k)
    if (state_[k] == kActive)
      h ^= shuffle_bits(static_cast<std::uint64_t>(hashes_[k]));
  h ^= (static_cast<std::uint64_t>(used_) + 1) * 1927868237ULL;
  h ^= (h >> 11) ^ (h >> 25);
  h = h * 69069U + 907133923ULL;
  if (h == static_cast<std::uint64_t>(-1))
    h = 590923713ULL;
  hash_ = static_cast<std::int64_t>(h);
  return hash_;
}

std::optional<bool> SetObject::contains(Interpreter &interp, const Value &item) { return has(&interp, item); }

namespace {

class SetIterator : public Iterator {
public:
  explicit SetIterator(std::shared_ptr<SetObject> set) : set_(std::move(set)), size_(set_->size()) {}
  bool next(Value &out) override {
    if (!set_)
      return false;
    if (set_->size() != size_) {
      set_.reset();
      raise_python("RuntimeError", "Set changed size during iteration");
    }
    while (position_ < set_->slot_count()) {
      if (const Value *key = set_->slot(position_++)) {
        out = *key;
        return true;
      }
    }
    return false;
  }

private:
  std::shared_ptr<SetObject> set_;
  std::size_t size_;
  std::size_t position_ = 0;
};

SetObject *as_set(const Value &v) { return v.as<SetObject>(); }

/// set_copy(): a new set updated from the old one (which may size its table differently).
std::shared_ptr<SetObject> copy_of(const SetObject &s, bool frozen) {
  auto out = std::make_shared<SetObject>(frozen);
  out->merge(nullptr, s);
  return out;
}

/// The other operand of a set method that takes any iterable.
std::shared_ptr<SetObject> as_set_arg(Interpreter &interp, const Value &v) {
  if (v.as<SetObject>())
    return v.shared_as<SetObject>();
  return set_from(interp, v, false);
}

std::shared_ptr<SetObject> intersection(Interpreter &interp, SetObject &self, const Value &other, bool frozen) {
  auto result = std::make_shared<SetObject>(frozen);
  if (SetObject *o = as_set(other)) {
    // Iterate the smaller set, look up in the larger (set_intersection).
    SetObject *small = o, *large = &self;
    if (o->size() > self.size())
      std::swap(small, large);
    for (const Value &key : small->keys())
      if (large->has(&interp, key))
        result->add(&interp, key);
    return result;
  }
  std::unique_ptr<Iterator> it = interp.iterate(other);
  Value key;
  while (it->next(key))
    if (self.has(&interp, key))
      result->add(&interp, key);
  return result;
}

std::shared_ptr<SetObject> difference(Interpreter &interp, SetObject &self, const Value &other, bool frozen) {
  std::size_t other_size = 0;
  bool sized = false;
  if (SetObject *o = as_set(other)) {
    other_size = o->size();
    sized = true;
  } else if (other.kind == K::Dict) {
    other_size = other.dict_data().size();
    sized = true;
  }
  if (!sized || (self.size() >> 2) > other_size) {
    // set_copy_and_difference(): copy, then discard the other's keys.
    auto result = copy_of(self, frozen);
    std::unique_ptr<Iterator> it = interp.iterate(other);
    Value key;
    while (it->next(key))
      result->discard(&interp, key);
    return result;
  }
  auto result = std::make_shared<SetObject>(frozen);
  for (const Value &key : self.keys()) {
    bool in_other = as_set(other) ? as_set(other)->has(&interp, key) : other.dict_data().find(&interp, key) != nullptr;
    if (!in_other)
      result->add(&interp, key);
  }
  return result;
}

/// set_symmetric_difference_update(): toggles every key of `other` in `self`.
void symmetric_update(Interpreter &interp, SetObject &self, const Value &other) {
  std::shared_ptr<SetObject> o = as_set_arg(interp, other);
  if (o.get() == &self) {
    self.clear();
    return;
  }
  for (const Value &key : o->keys())
    if (!self.discard(&interp, key))
      self.add(&interp, key);
}

bool is_subset(Interpreter &interp, SetObject &self, SetObject &other) {
  if (self.size() > other.size())
    return false;
  for (const Value &key : self.keys())
    if (!other.has(&interp, key))
      return false;
  return true;
}

Value bound(const std::shared_ptr<SetObject> &self, std::string name,
            Value (*impl)(Interpreter &, const std::shared_ptr<SetObject> &, CallArgs &)) {
  return Value::object(std::make_shared<BuiltinFunction>(
      name, [self, impl](Interpreter &interp, CallArgs &args) { return impl(interp, self, args); }));
}

Value set_value(std::shared_ptr<SetObject> s) { return Value::object(std::move(s)); }

} // namespace

std::unique_ptr<Iterator> SetObject::iterate(Interpreter &) { return std::make_unique<SetIterator>(shared_from_this()); }

std::optional<Value> SetObject::get_attr(Interpreter &interp, std::string_view name) {
  using Impl = Value (*)(Interpreter &, const std::shared_ptr<SetObject> &, CallArgs &);
  struct Entry {
    std::string_view name;
    Impl impl;
    bool mutates;
  };
  static const Entry methods[] = {
      {"add",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args("set.add", a, 1, 1);
         s->add(&i, a.positional[0]);
         i.check_length(s->size());
         return Value::none();
       },
       true},
      {"remove",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args("set.remove", a, 1, 1);
         if (!s->discard(&i, a.positional[0]))
           raise_python("KeyError", trace::repr(a.positional[0]));
         return Value::none();
       },
       true},
      {"discard",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args("set.discard", a, 1, 1);
         s->discard(&i, a.positional[0]);
         return Value::none();
       },
       true},
      {"pop",
       [](Interpreter &, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args("set.pop", a, 0, 0);
         return s->pop();
       },
       true},
      {"clear",
       [](Interpreter &, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args("set.clear", a, 0, 0);
         s->clear();
         return Value::none();
       },
       true},
      {"update",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args("set.update", a, 0, SIZE_MAX);
         for (const Value &other : a.positional)
           s->update(i, other);
         return Value::none();
       },
       true},
      {"intersection_update",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args("set.intersection_update", a, 0, SIZE_MAX);
         for (const Value &other : a.positional) {
           auto r = intersection(i, *s, other, false);
           s->clear();
           s->merge(&i, *r);
         }
         return Value::none();
       },
       true},
      {"difference_update",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args("set.difference_update", a, 0, SIZE_MAX);
         for (const Value &other : a.positional) {
           if (other.as<SetObject>() == s.get()) {
             s->clear();
             continue;
           }
           for (const Value &key : i.to_list(other))
             s->discard(&i, key);
         }
         return Value::none();
       },
       true},
      {"symmetric_difference_update",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args("set.symmetric_difference_update", a, 1, 1);
         symmetric_update(i, *s, a.positional[0]);
         return Value::none();
       },
       true},
      {"copy",
       [](Interpreter &, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args(s->frozen() ? "frozenset.copy" : "set.copy", a, 0, 0);
         return s->frozen() ? Value::object(s) : set_value(copy_of(*s, false));
       },
       false},
      {"union",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args(s->frozen() ? "frozenset.union" : "set.union", a, 0, SIZE_MAX);
         auto r = copy_of(*s, s->frozen());
         for (const Value &other : a.positional)
           r->update(i, other);
         return set_value(r);
       },
       false},
      {"intersection",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args(s->frozen() ? "frozenset.intersection" : "set.intersection", a, 0, SIZE_MAX);
         std::shared_ptr<SetObject> r = a.positional.empty() ? copy_of(*s, s->frozen()) : nullptr;
         for (const Value &other : a.positional)
           r = intersection(i, r ? *r : *s, other, s->frozen());
         return set_value(r);
       },
       false},
      {"difference",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args(s->frozen() ? "frozenset.difference" : "set.difference", a, 0, SIZE_MAX);
         std::shared_ptr<SetObject> r = copy_of(*s, s->frozen());
         for (const Value &other : a.positional)
           r = difference(i, *r, other, s->frozen());
         return set_value(r);
       },
       false},
      {"symmetric_difference",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args(s->frozen() ? "frozenset.symmetric_difference" : "set.symmetric_difference", a, 1, 1);
         // set_symmetric_difference(): a new set of the other's keys, toggled by self's.
         auto r = set_from(i, a.positional[0], s->frozen());
         symmetric_update(i, *r, Value::object(s));
         return set_value(r);
       },
       false},
      {"isdisjoint",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args(s->frozen() ? "frozenset.isdisjoint" : "set.isdisjoint", a, 1, 1);
         for (const Value &key : i.to_list(a.positional[0]))
           if (s->has(&i, key))
             return Value::boolean(false);
         return Value::boolean(true);
       },
       false},
      {"issubset",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args(s->frozen() ? "frozenset.issubset" : "set.issubset", a, 1, 1);
         return Value::boolean(is_subset(i, *s, *as_set_arg(i, a.positional[0])));
       },
       false},
      {"issuperset",
       [](Interpreter &i, const std::shared_ptr<SetObject> &s, CallArgs &a) {
         expect_args(s->frozen() ? "frozenset.issuperset" : "set.issuperset", a, 1, 1);
         return Value::boolean(is_subset(i, *as_set_arg(i, a.positional[0]), *s));
       },
       false},
  };
  for (const Entry &m : methods)
    if (m.name == name && (!m.mutates || !frozen_))
      return bound(shared_from_this(), std::string(name), m.impl);
  return unmodelled_attribute(interp, type_name(), name);
}

std::optional<Value> SetObject::binary_op(Interpreter &interp, BinOpKind op, const Value &other, bool reflected) {
  SetObject *o = as_set(other);
  if (!o)
    return std::nullopt;
  // The result has the left operand's type (`frozenset | set` is a frozenset).
  SetObject &left = reflected ? *o : *this;
  Value right = reflected ? Value::object(shared_from_this()) : other;
  bool frozen = left.frozen();
  switch (op) {
  case BinOpKind::BitOr: {
    auto r = copy_of(left, frozen);
    r->update(interp, right);
    return set_value(r);
  }
  case BinOpKind::BitAnd:
    return set_value(intersection(interp, left, right, frozen));
  case BinOpKind::Sub:
    return set_value(difference(interp, left, right, frozen));
  case BinOpKind::BitXor: {
    auto r = set_from(interp, right, frozen);
    symmetric_update(interp, *r, reflected ? other : Value::object(shared_from_this()));
    return set_value(r);
  }
  default:
    return std::nullopt;
  }
}

std::optional<Value> SetObject::inplace_op(Interpreter &interp, BinOpKind op, const Value &other) {
  if (frozen_ || !as_set(other))
    return std::nullopt;
  switch (op) {
  case BinOpKind::BitOr:
    update(interp, other);
    break;
  case BinOpKind::BitAnd: {
    auto r = intersection(interp, *this, other, false);
    clear();
    merge(&interp, *r);
    break;
  }
  case BinOpKind::Sub:
    if (as_set(other) == this)
      clear();
    else
      for (const Value &key : as_set(other)->keys())
        discard(&interp, key);
    break;
  case BinOpKind::BitXor:
    symmetric_update(interp, *this, other);
    break;
  default:
    return std::nullopt;
  }
  return Value::object(shared_from_this());
}

std::optional<Value> SetObject::compare(Interpreter &interp, CmpOpKind op, const Value &other, bool reflected) {
  SetObject *o = as_set(other);
  if (!o)
    return std::nullopt;
  SetObject &a = reflected ? *o : *this, &b = reflected ? *this : *o;
  switch (op) {
  case CmpOpKind::Eq:
  case CmpOpKind::NotEq: {
    bool eq = a.size() == b.size() && is_subset(interp, a, b);
    return Value::boolean(op == CmpOpKind::Eq ? eq : !eq);
  }
  case CmpOpKind::LtE:
    return Value::boolean(is_subset(interp, a, b));
  case CmpOpKind::GtE:
    return Value::boolean(is_subset(interp, b, a));
  case CmpOpKind::Lt:
    return Value::boolean(a.size() < b.size() && is_subset(interp, a, b));
  case CmpOpKind::Gt:
    return Value::boolean(a.size() > b.size() && is_subset(interp, b, a));
  default:
    return std::nullopt;
  }
}

std::string SetObject::repr() const {
  if (used_ == 0)
    return frozen_ ? "frozenset()" : "set()";
  if (ReprNesting::active(this))
    return std::string(type_name()) + "(...)";
  ReprNesting nesting(this);
  std::string out = frozen_ ? "frozenset({" : "{";
  bool first = true;
  for (std::size_t k = 0; k < keys_.size(); ++k) {
    if (state_[k] != kActive)
      continue;
    if (!first)
      out += ", ";
    first = false;
    out += trace::repr(keys_[k]);
  }
  return out + (frozen_ ? "})" : "}");
}

} // namespace pylib

Value make_set(Interpreter &interp, std::vector<Value> items, bool constant_display) {
  auto s = std::make_shared<SetObject>(false);
  for (const Value &item : items) {
    s->add(&interp, item);
    interp.check_length(s->size());
  }
  if (constant_display && items.size() > 2) {
    // frozenset(tuple) made by the compiler, rebuilt from its own order, then SET_UPDATE.
    auto rebuilt = std::make_shared<SetObject>(true);
    for (const Value &item : s->keys())
      rebuilt->add(&interp, item);
    auto out = std::make_shared<SetObject>(false);
    out->merge(&interp, *rebuilt);
    return Value::object(std::move(out));
  }
  return Value::object(std::move(s));
}

} // namespace nkicc::trace
