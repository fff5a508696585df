// set and frozenset: CPython's hash table (Objects/setobject.c), probe for probe, so that a set
// of ints or tuples iterates in exactly the order CPython's does.
#pragma once

#include "common.h"

#include <vector>

namespace nkicc::trace::pylib {

class SetObject final : public Object, public std::enable_shared_from_this<SetObject> {
public:
  explicit SetObject(bool frozen) : frozen_(frozen) { clear_table(); }
  SetObject(const SetObject &other) = default;
  ~SetObject() override;

  std::string_view type_name() const override { return frozen_ ? "frozenset" : "set"; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind op, const Value &other,
                                 bool reflected) override;
  std::optional<Value> inplace_op(Interpreter &interp, python::BinOpKind op, const Value &other) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &) override { return used_ > 0; }
  std::unique_ptr<Iterator> iterate(Interpreter &interp) override;
  std::string repr() const override;
  std::optional<std::int64_t> hash(Interpreter &interp) override;
  std::optional<std::int64_t> length(Interpreter &) override { return static_cast<std::int64_t>(used_); }
  std::optional<bool> contains(Interpreter &interp, const Value &item) override;

  bool frozen() const { return frozen_; }
  std::size_t size() const { return used_; }
  /// set.add(); unhashable keys raise TypeError.
  void add(Interpreter *interp, const Value &key);
  /// The keys in table order (iteration order).
  std::vector<Value> keys() const;
  /// set.discard(): whether the key was there.
  bool discard(Interpreter *interp, const Value &key);
  bool has(Interpreter *interp, const Value &key);
  /// Adds every key of another set, as CPython's set_merge() (same table order).
  void merge(Interpreter *interp, const SetObject &other);
  /// `self |= iterable` (CPython's set_update_internal).
  void update(Interpreter &interp, const Value &iterable);
  /// set.pop(); KeyError when empty.
  Value pop();
  void clear() { clear_table(); }
  /// Changes whenever a key is added or removed (iterators check it).
  std::uint64_t version() const { return version_; }

  // The table, for iterators: slot k holds a key when state(k) is active.
  std::size_t slot_count() const { return keys_.size(); }
  const Value *slot(std::size_t k) const { return state_[k] == kActive ? &keys_[k] : nullptr; }

private:
  static constexpr std::uint8_t kEmpty = 0, kActive = 1, kDummy = 2;
  void clear_table();
  /// set_add_entry(): returns after adding, or at an equal key.
  void add_entry(Interpreter *interp, const Value &key, std::int64_t hash);
  /// The slot holding an equal key, or -1.
  std::int64_t lookup(Interpreter *interp, const Value &key, std::int64_t hash);
  void insert_clean(const Value &key, std::int64_t hash);
  void resize(std::size_t min_used);

  bool frozen_;
  std::vector<Value> keys_;
  std::vector<std::int64_t> hashes_;
  std::vector<std::uint8_t> state_;
  std::size_t fill_ = 0, used_ = 0; ///< active + dummy slots; active slots
  std::size_t finger_ = 0;          ///< where pop() looks next
  std::uint64_t version_ = 0;
  std::optional<std::int64_t> hash_; ///< a frozenset's, once computed
};

/// Whether v is a set or a frozenset.
inline bool is_set_like(const Value &v) { return v.as<SetObject>() != nullptr; }
/// The set (or frozenset) of an iterable's items, as set(iterable) builds it.
std::shared_ptr<SetObject> set_from(Interpreter &interp, const Value &iterable, bool frozen);

} // namespace nkicc::trace::pylib
