// The values nkicc's interpreter computes with while it re-executes a kernel body (SPEC §3,
// seed 001 §2: tracing is re-execution). Python's own values are built in; everything NKI
// (tensors, index tiles, modules, dtypes, ops) is an Object subclass with virtual behaviour.
#pragma once

#include "nkicc/python/ast.h"
#include "nkicc/support/source_manager.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace nkicc::trace {

class Interpreter;
class Object;

/// Everything a Value points to on the heap derives from this. The reference count is
/// intrusive and not atomic (the interpreter runs on one thread): copying a Value is one
/// increment, and a Value is one tag and one word (16 bytes).
struct HeapData {
  HeapData() = default;
  HeapData(const HeapData &) : refs_(0) {}
  HeapData &operator=(const HeapData &) { return *this; }
  virtual ~HeapData() = default;

  /// How many Values and Refs hold this.
  std::uint32_t ref_count() const { return refs_; }

  void retain() const { ++refs_; }
  void release() const {
    if (--refs_ == 0)
      const_cast<HeapData *>(this)->last_release();
  }

protected:
  /// The last Value or Ref let go: deletes, unless a std::shared_ptr still owns the object.
  virtual void last_release() { delete this; }

private:
  mutable std::uint32_t refs_ = 0;
};

/// An intrusive pointer to heap data (a Value's payload, an interpreter object).
template <class T> class Ref {
public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T *p) : p_(p) {
    if (p_)
      p_->retain();
  }
  Ref(const Ref &o) : Ref(o.p_) {}
  Ref(Ref &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <class U, class = std::enable_if_t<std::is_convertible_v<U *, T *>>> Ref(const Ref<U> &o) : Ref(o.get()) {}
  template <class U, class = std::enable_if_t<std::is_convertible_v<U *, T *>>>
  Ref(Ref<U> &&o) noexcept : p_(o.release_ownership()) {}
  ~Ref() {
    if (p_)
      p_->release();
  }
  Ref &operator=(Ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  T *get() const { return p_; }
  T *operator->() const { return p_; }
  T &operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  friend bool operator==(const Ref &a, const Ref &b) { return a.p_ == b.p_; }
  void reset() { Ref().swap(*this); }
  void swap(Ref &o) noexcept { std::swap(p_, o.p_); }
  /// Gives up the reference without releasing it (the caller now holds it).
  T *release_ownership() { return std::exchange(p_, nullptr); }
  /// Takes over a reference already counted (from release_ownership).
  static Ref adopt(T *p) {
    Ref out;
    out.p_ = p;
    return out;
  }

private:
  T *p_ = nullptr;
};

template <class T, class... Args> Ref<T> make_ref(Args &&...args) { return Ref<T>(new T(std::forward<Args>(args)...)); }
template <class T, class U> Ref<T> static_ref_cast(const Ref<U> &r) { return Ref<T>(static_cast<T *>(r.get())); }

struct Value;
struct StrData;
struct SeqData;
class DictData;
struct SliceData;

struct Value {
  /// Kinds from Str on point to heap data (is_heap()); a new heap kind goes after Str.
  enum class Kind : std::uint8_t { None, Bool, Int, Float, Ellipsis, Str, Tuple, List, Dict, Slice, Object };

  Kind kind = Kind::None;
  union {
    bool b;
    std::int64_t i;
    double f;
    HeapData *ptr_; ///< kinds from Str on; use heap_data()
  };

  Value() : i(0) {}
  [[gnu::always_inline]] Value(const Value &o) noexcept : kind(o.kind), i(o.i) {
    if (is_heap())
      ptr_->retain();
  }
  [[gnu::always_inline]] Value(Value &&o) noexcept : kind(o.kind), i(o.i) {
    o.kind = Kind::None;
    o.i = 0;
  }
  // Both assignments read the source before releasing what this held: releasing it may free
  // the container the source lives in.
  [[gnu::always_inline]] Value &operator=(const Value &o) noexcept {
    Kind k = o.kind;
    std::int64_t bits = o.i;
    if (o.is_heap())
      o.ptr_->retain();
    drop();
    kind = k;
    i = bits;
    return *this;
  }
  [[gnu::always_inline]] Value &operator=(Value &&o) noexcept {
    Kind k = o.kind;
    std::int64_t bits = o.i;
    o.kind = Kind::None;
    o.i = 0;
    drop();
    kind = k;
    i = bits;
    return *this;
  }
  [[gnu::always_inline]] ~Value() { drop(); }

  static Value none() { return Value(); }
  static Value boolean(bool v) {
    Value out;
    out.kind = Kind::Bool;
    out.b = v;
    return out;
  }
  static Value integer(std::int64_t v) {
    Value out;
    out.kind = Kind::Int;
    out.i = v;
    return out;
  }
  static Value floating(double v) {
    Value out;
    out.kind = Kind::Float;
    out.f = v;
    return out;
  }
  static Value str(std::string v);
  static Value tuple(std::vector<Value> items);
  static Value list(std::vector<Value> items);
  static Value dict(std::vector<std::pair<Value, Value>> entries = {});
  static Value dict(Ref<DictData> data);
  static Value slice(Value lower, Value upper, Value step);
  static Value ellipsis() {
    Value out;
    out.kind = Kind::Ellipsis;
    return out;
  }
  /// An object owned by std::shared_ptr (std::make_shared): the Value keeps it alive.
  static Value object(std::shared_ptr<Object> obj);
  /// An object owned by intrusive references (make_ref).
  static Value object(Ref<Object> obj);
  template <class T, class = std::enable_if_t<std::is_base_of_v<Object, T>>> static Value object(Ref<T> obj) {
    return object(Ref<Object>(std::move(obj)));
  }
  /// A Value of `kind` (Str, Tuple, List, Dict, Slice) holding `data`.
  static Value from_heap(Kind kind, Ref<HeapData> data) {
    Value out;
    out.kind = kind;
    out.ptr_ = data.release_ownership();
    return out;
  }

  bool is_none() const { return kind == Kind::None; }
  bool is_int() const { return kind == Kind::Int; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool is_heap() const { return kind >= Kind::Str; }

  /// The heap data of a heap kind, else null.
  HeapData *heap_data() const { return is_heap() ? ptr_ : nullptr; }
  /// Whether both are the same heap data (identity of containers and objects).
  bool same_heap(const Value &o) const { return is_heap() && o.is_heap() && ptr_ == o.ptr_; }
  /// How many Values and Refs hold this value's heap data (0 for inline kinds).
  std::uint32_t use_count() const { return is_heap() ? ptr_->ref_count() : 0; }

  const std::string &str_text() const; ///< kind Str
  SeqData &seq() const;                ///< kind Tuple or List (a list is shared and mutable)
  DictData &dict_data() const;         ///< kind Dict
  SliceData &slice_data() const;       ///< kind Slice
  Object *object() const;              ///< kind Object, else null

  /// The Object as a T, or null when this is not an Object of that type.
  template <class T> T *as() const;
  template <class T> std::shared_ptr<T> shared_as() const;
  template <class T> Ref<T> ref_as() const {
    T *p = as<T>();
    return Ref<T>(p);
  }

private:
  [[gnu::always_inline]] void drop() {
    if (is_heap())
      ptr_->release();
  }
};

struct StrData : HeapData {
  std::string text;
};
/// Items of a tuple or a list; a list's SeqData is shared by every Value that refers to it.
struct SeqData : HeapData {
  std::vector<Value> items;
  ~SeqData() override; ///< releases nested containers without recursion
};
/// A dict: entries in insertion order and an open-addressing index of their positions, as
/// CPython's compact dict, so that a lookup costs O(1) whatever the size (300,000 inserts must
/// not take a minute). Keys are hashed and compared as Python does (hash, then identity, then
/// `==`); a key whose hash or `==` is Python code needs the Interpreter, and without one
/// (`interp` null) Objects compare by identity. An unhashable key raises TypeError.
class DictData : public HeapData {
public:
  using Item = std::pair<Value, Value>;

  DictData() = default;
  DictData(const DictData &other) = default;
  DictData &operator=(const DictData &) = delete;
  ~DictData() override; ///< releases nested containers without recursion

  std::size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  /// The value stored under `key`, or null.
  Value *find(Interpreter *interp, const Value &key);
  /// `d[key] = value`: a new key goes last, an existing one keeps its place (and its key).
  void set(Interpreter *interp, const Value &key, Value value);
  /// Removes `key`, moving its value to `*removed` when given; false when it is absent.
  bool erase(Interpreter *interp, const Value &key, Value *removed = nullptr);
  /// `d.popitem()`: the last entry, removed; nullopt when empty.
  std::optional<Item> pop_last();
  void clear();

  /// Entries by position, for iterators: slot(k) is null for a removed entry; positions stay
  /// valid until version() changes.
  std::size_t slot_count() const { return entries_.size(); }
  Item *slot(std::size_t k) { return hashes_[k] == kRemoved ? nullptr : &entries_[k]; }
  const Item *slot(std::size_t k) const { return hashes_[k] == kRemoved ? nullptr : &entries_[k]; }
  /// Changes whenever a key is added or removed, or positions move.
  std::uint64_t version() const { return version_; }

  /// collections' dict subclasses share the dict machinery: the flavor changes the type name,
  /// repr, a missing key's answer and a few methods (lib/pylib/collections.cpp).
  enum class Flavor : std::uint8_t { Dict, OrderedDict, DefaultDict, Counter };
  Flavor flavor = Flavor::Dict;
  Value default_factory; ///< a defaultdict's (None: a missing key is a KeyError)

  /// The live entries in insertion order: `for (auto &[key, value] : dict.items())`.
  template <class D, class I> class ItemIterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::remove_const_t<I>;
    using difference_type = std::ptrdiff_t;
    using pointer = I *;
    using reference = I &;
    ItemIterator(D *dict, std::size_t k) : dict_(dict), k_(k) { skip(); }
    I &operator*() const { return dict_->entries_[k_]; }
    I *operator->() const { return &dict_->entries_[k_]; }
    ItemIterator &operator++() {
      ++k_;
      skip();
      return *this;
    }
    ItemIterator operator++(int) {
      ItemIterator old = *this;
      ++*this;
      return old;
    }
    bool operator!=(const ItemIterator &other) const { return k_ != other.k_; }
    bool operator==(const ItemIterator &other) const { return k_ == other.k_; }

  private:
    void skip() {
      while (k_ < dict_->entries_.size() && dict_->hashes_[k_] == kRemoved)
        ++k_;
    }
    D *dict_;
    std::size_t k_;
  };
  template <class D, class I> struct ItemRange {
    D *dict;
    ItemIterator<D, I> begin() const { return {dict, 0}; }
    ItemIterator<D, I> end() const { return {dict, dict->entries_.size()}; }
  };
  ItemRange<DictData, Item> items() { return {this}; }
  ItemRange<const DictData, const Item> items() const { return {this}; }

private:
  /// Python never hashes to -1, so it marks a removed entry.
  static constexpr std::int64_t kRemoved = -1;
  /// The index slot holding `key`'s position (>= 0), or the free slot where it would go, encoded
  /// as -(slot + 1); hash is the key's hash.
  std::int64_t lookup(Interpreter *interp, const Value &key, std::int64_t hash);
  void insert_index(std::int64_t hash, std::int32_t position);
  /// Drops removed entries and rebuilds the index for at least `min_capacity` entries.
  void rebuild(std::size_t min_capacity);

  std::vector<Item> entries_;
  std::vector<std::int64_t> hashes_; ///< aligned with entries_
  std::vector<std::int32_t> index_;  ///< power-of-two sized; kEmpty, kDummy or a position
  std::size_t used_ = 0;
  std::uint64_t version_ = 0;
};
struct SliceData : HeapData {
  Value lower, upper, step;
};

/// For the destructor of a container Object (a set, a deque): releases the values' heap data
/// from a worklist instead of recursively, so that containers nested a million deep are
/// destroyed without overflowing the C++ stack.
void release_nested(Value *values, std::size_t count);

/// The loop construct an instruction was emitted under (SPEC §3: recorded on each instruction).
enum class LoopKind : std::uint8_t { None, Range, Affine, Sequential, Static };
std::string_view loop_kind_name(LoopKind kind);

/// Arguments of a call, after `*args` and `**kwargs` are expanded.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
  SourceLoc loc; ///< the call expression

  const Value *keyword(std::string_view name) const;
};

/// A lazily produced sequence for `for` loops, so that `range(65536)` never builds a list.
class Iterator {
public:
  virtual ~Iterator() = default;
  virtual bool next(Value &out) = 0;
};

/// The base of every value that is not built into Python's core: modules, functions, NKI
/// tensors and tiles, index expressions, dtypes. Each hook has Python's default behaviour
/// (a TypeError or AttributeError in Python's words) unless a subclass overrides it.
class Object : public HeapData {
public:
  Object() = default;
  Object(const Object &) : HeapData() {} ///< a copy is a new object: it shares no ownership, nor identity
  Object &operator=(const Object &) { return *this; }

  /// Python's type name, for messages (`'Tile' object is not callable`).
  virtual std::string_view type_name() const = 0;

  /// `obj.name`; nullopt raises AttributeError.
  virtual std::optional<Value> get_attr(Interpreter &interp, std::string_view name);
  /// `obj.name = value`; by default AttributeError, as for objects without a `__dict__`.
  virtual void set_attr(Interpreter &interp, std::string_view name, const Value &value);
  /// `obj(...)`.
  virtual Value call(Interpreter &interp, CallArgs &args);
  /// `obj[key]`.
  virtual Value get_item(Interpreter &interp, const Value &key);
  /// `obj[key] = value`.
  virtual void set_item(Interpreter &interp, const Value &key, const Value &value);
  /// `obj[key] op= value` (`psum[...] += nl.matmul(...)` accumulates): by default
  /// get_item, the binary operation, then set_item.
  virtual void aug_set_item(Interpreter &interp, const Value &key, python::BinOpKind op, const Value &value);
  /// `self op other` (reflected: `other op self`); nullopt means NotImplemented.
  virtual std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind op, const Value &other, bool reflected);
  virtual std::optional<Value> unary_op(Interpreter &interp, python::UnaryOpKind op);
  /// `self op other` for ==, !=, <, <=, >, >=; nullopt falls back to identity for ==/!=.
  virtual std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected);
  /// `bool(obj)`: control flow on a value (an index tile raises NKI's error here).
  virtual bool truthy(Interpreter &interp);
  /// `iter(obj)`; null means the object is not iterable.
  virtual std::unique_ptr<Iterator> iterate(Interpreter &interp);
  /// The loop kind a `for` over this iterable records (nl.affine_range: Affine).
  virtual LoopKind loop_kind() const { return LoopKind::None; }
  /// `repr(obj)`.
  virtual std::string repr() const;
  /// `str(obj)`: repr() unless the object says otherwise (a class's `__str__`).
  virtual std::string to_str() const { return repr(); }
  /// `self op= other` on a name (Python's `__iadd__`): an in-place update that returns the
  /// value to rebind, or nullopt to fall back to `self op other`. A PSUM tile accumulates here
  /// (`acc += nl.matmul(...)`).
  virtual std::optional<Value> inplace_op(Interpreter &interp, python::BinOpKind op, const Value &other) {
    (void)interp;
    (void)op;
    (void)other;
    return std::nullopt;
  }
  /// Called when a plain assignment `name = obj` binds the object, so that a tensor created
  /// without `name=` takes the kernel author's variable name in the IR.
  virtual void on_bind(std::string_view name) { (void)name; }
  /// `hash(obj)`: by default identity_hash(); nullopt when the object is unhashable (an
  /// instance whose class defines `__eq__` but not `__hash__`). Never -1.
  virtual std::optional<std::int64_t> hash(Interpreter &interp);
  /// `len(obj)`; nullopt means "object of type 'X' has no len()".
  virtual std::optional<std::int64_t> length(Interpreter &interp);
  /// `item in obj`; nullopt falls back to iterating the object.
  virtual std::optional<bool> contains(Interpreter &interp, const Value &item);
  /// `callable(obj)` for objects other than functions, built-ins and types (which callable()
  /// knows): a jitted kernel, a class, an instance with `__call__`.
  virtual bool is_callable() const { return false; }
  /// Whether this is a placeholder for something nkicc does not model (OpaqueObject): in host
  /// code, unpacking one gives as many placeholders as there are targets.
  virtual bool is_host_placeholder() const { return false; }

  /// The identity hash: a serial number given on first use, so that sets of objects iterate
  /// in the same order on every run (an address would differ run to run).
  std::int64_t identity_hash() const;

  /// A std::shared_ptr sharing ownership with the Values that hold this object (made on first
  /// use for an object made by make_ref).
  std::shared_ptr<Object> shared_self();

protected:
  void last_release() override;

private:
  friend struct Value;
  /// While Values hold an object that a std::shared_ptr owns (std::make_shared), the shared
  /// ownership is kept here; the last Value to let go drops it.
  std::shared_ptr<Object> anchor_;
  mutable std::uint32_t serial_ = 0;
};

// The payload accessors are defined here, where the payload types are complete; they are inline
// because the evaluator calls them on every container and object operation.
inline const std::string &Value::str_text() const { return static_cast<StrData *>(ptr_)->text; }
inline SeqData &Value::seq() const { return *static_cast<SeqData *>(ptr_); }
inline DictData &Value::dict_data() const { return *static_cast<DictData *>(ptr_); }
inline SliceData &Value::slice_data() const { return *static_cast<SliceData *>(ptr_); }
inline Object *Value::object() const { return kind == Kind::Object ? static_cast<Object *>(ptr_) : nullptr; }

// An Object of exactly type T is recognized by its type_info's address (one per type in the
// binary) before dynamic_cast walks the hierarchy; should the addresses differ, dynamic_cast
// still answers.
template <class T> T *Value::as() const {
  if (kind != Kind::Object)
    return nullptr;
  auto *obj = static_cast<Object *>(ptr_);
  if (&typeid(*obj) == &typeid(T))
    return static_cast<T *>(obj);
  if constexpr (std::is_final_v<T>)
    return nullptr; // no subclass to look for (dynamic_cast would walk the hierarchy by name)
  else
    return dynamic_cast<T *>(obj);
}
template <class T> std::shared_ptr<T> Value::shared_as() const {
  T *p = as<T>();
  if (!p)
    return nullptr;
  return std::shared_ptr<T>(static_cast<Object *>(ptr_)->shared_self(), p);
}

/// Python's `a / b` for ints (b != 0): the exact quotient rounded once to the nearest double,
/// ties to even, also where the operands are beyond 2^53 and a conversion would round first.
double int_true_divide(std::int64_t a, std::int64_t b);

/// Python's type name of any value (`int`, `list`, `NoneType`, or the Object's).
std::string_view type_name(const Value &v);
/// Python's repr() of any value (ints, floats and strs exactly as CPython prints them).
std::string repr(const Value &v);
/// For repr() of a container: one level of nesting, RecursionError past Python's recursion
/// limit (in CPython's words), and active() says whether a container is already being printed
/// (a list that contains itself prints `[...]`).
class ReprNesting {
public:
  explicit ReprNesting(const HeapData *self);
  ~ReprNesting();
  ReprNesting(const ReprNesting &) = delete;
  ReprNesting &operator=(const ReprNesting &) = delete;
  static bool active(const HeapData *self);
};
/// Python's str(): repr() except that a str is its own text.
std::string str(const Value &v);

/// `a == b` for built-in values without an interpreter (numbers across int/float/bool,
/// containers element-wise, Objects by identity). Nested deeper than Python's recursion
/// limit, it raises RecursionError as CPython does.
bool values_equal(const Value &a, const Value &b);

/// An error while tracing: a Python exception in Python's words (`id` is the exception type,
/// `NameError`), or an NKI error with NKI's message and id. Thrown inside the tracer only and
/// turned into a diagnostic at the trace boundary; an invalid `loc` is filled in with the
/// innermost expression being evaluated when it propagates.
struct TraceError {
  std::string message;
  std::string id;
  SourceLoc loc;
  std::vector<std::pair<SourceLoc, std::string>> notes;
  /// The Python exception instance raised (a `raise` statement's), or None for an error raised
  /// by nkicc itself (its instance is made when an `except` clause catches it).
  Value exception;
};

[[noreturn]] void raise_error(std::string id, std::string message, SourceLoc loc = {});
/// Python exceptions: raise_python("TypeError", "...").
[[noreturn]] inline void raise_python(std::string type, std::string message, SourceLoc loc = {}) {
  raise_error(std::move(type), std::move(message), loc);
}

} // namespace nkicc::trace
