// Python's class model: classes made by `class` statements (C3 method resolution order,
// single and multiple inheritance, a base from a module nkicc does not model as a placeholder),
// their instances, bound methods, staticmethod/classmethod/property, super(), and the built-in
// exception classes in Python's hierarchy. Dunder methods a class defines (`__eq__`,
// `__getitem__`, `__add__`, ...) answer the Object hooks, so instances work wherever built-in
// values do.
#pragma once

#include "nkicc/trace/interpreter.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nkicc::eval {

using python::Symbol;
using trace::CallArgs;
using trace::Interpreter;
using trace::Object;
using trace::Ref;
using trace::Value;

/// Changes whenever a class's namespace or an instance layout changes: compiled code remembers
/// where it found an attribute while the epoch stays.
namespace detail {
inline std::uint64_t g_class_epoch = 1; // (caches start at epoch 0 with no key)
}
inline std::uint64_t class_epoch() { return detail::g_class_epoch; }
inline void bump_class_epoch() { ++detail::g_class_epoch; }

class ClassObject;
class InstanceObject;

/// Objects of the class model that may sit in reference cycles (a class and the methods in its
/// namespace, an instance that holds itself): the machine that made them clears them when the
/// interpreter ends, so that nothing leaks.
class Tracked {
public:
  struct List {
    Tracked *head = nullptr;
    List() = default;
    List(const List &) = delete;
    List &operator=(const List &) = delete;
    ~List();
    /// Drops every reference the live tracked objects hold.
    void clear_all();
  };
  void track(List &list);

protected:
  Tracked() = default;
  Tracked(const Tracked &) = delete;
  Tracked &operator=(const Tracked &) = delete;
  ~Tracked();
  virtual Object &tracked_object() = 0;
  virtual void clear_refs() = 0;

private:
  List *list_ = nullptr;
  Tracked *prev_ = nullptr, *next_ = nullptr;
};

/// What a class is beyond its namespace: the built-in behaviour its instances extend.
enum class ClassFlavor : std::uint8_t {
  Plain,
  Exception,  ///< BaseException and its subclasses
  Enum,       ///< enum.Enum and its subclasses: members are instances made at class creation
  NamedTuple, ///< collections.namedtuple / typing.NamedTuple: instances are tuples
};

/// How an attribute of an instance is found, per class (cached for the epoch).
struct AttrPlan {
  enum Kind : std::uint8_t {
    Slot,    ///< the instance's attribute `index`; else the class's plain value `value`
    Method,  ///< a function on the class (`value`), bound to the instance
    Generic, ///< anything else: the full lookup
  } kind = Generic;
  std::uint32_t index = 0;
  const Value *value = nullptr;
};

class ClassObject final : public Object, public Tracked {
public:
  ClassObject(Interpreter &interp, std::string name, std::string qualname, std::string module);
  ~ClassObject() override;

  std::string_view type_name() const override { return "type"; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  void set_attr(Interpreter &interp, std::string_view name, const Value &value) override;
  Value call(Interpreter &interp, CallArgs &args) override;
  Value get_item(Interpreter &interp, const Value &key) override;
  std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind op, const Value &other,
                                 bool reflected) override;
  std::unique_ptr<trace::Iterator> iterate(Interpreter &interp) override;
  std::string repr() const override;
  bool is_callable() const override { return true; }

  /// The value of `name` in the first class of the MRO that has it, or null.
  const Value *lookup(Symbol name) const;
  const Value *lookup(std::string_view name) const;
  /// `self` is `other` or derives from it.
  bool is_subclass_of(const ClassObject &other) const;
  /// The index of the instance attribute `name` in this class's layout (made when `create`).
  std::optional<std::uint32_t> slot_of(Symbol name, bool create);
  /// How many instance attributes the layout names so far.
  std::size_t layout_size() const { return layout_.size(); }
  AttrPlan plan(Symbol name);
  /// Sets a class attribute (namespace and epoch).
  void set(Symbol name, Value value);
  /// An instance of this class, with `args` passed to `__init__`.
  Value instantiate(Interpreter &interp, CallArgs &args);

  Interpreter &interp;
  std::string name, qualname, module;
  std::vector<Ref<ClassObject>> bases;
  std::vector<ClassObject *> mro; ///< this class first; the bases keep the others alive
  /// Bases from modules nkicc does not model (`unittest.TestCase`): attributes the class does
  /// not have are placeholders named after the first of them.
  std::vector<Value> opaque_bases;
  trace::Scope dict;
  ClassFlavor flavor = ClassFlavor::Plain;
  /// A class deriving from a built-in type (int for IntEnum, tuple for a namedtuple): its
  /// instances carry a value of that kind.
  Value::Kind native = Value::Kind::None;
  bool frozen = false; ///< a frozen dataclass: attributes cannot be set after __init__
  /// Enum members in definition order (enum classes).
  std::vector<Value> members;
  /// Field names of a namedtuple or dataclass, in order.
  std::vector<std::string> fields;

protected:
  Object &tracked_object() override { return *this; }
  void clear_refs() override;

private:
  std::vector<Symbol> layout_;
  std::map<std::uint32_t, std::uint32_t> layout_index_;
  std::map<std::uint32_t, AttrPlan> plans_;
  std::uint64_t plans_epoch_ = 0;
};

/// An instance's attribute values, by its class's layout: the first kInline in the instance
/// itself, so that an instance of a class with a few attributes is one allocation; past them,
/// all of them in one array. Slots are unbound (machine.h) until set.
class InstanceSlots {
public:
  static constexpr std::size_t kInline = 4;
  InstanceSlots() = default;
  InstanceSlots(const InstanceSlots &) = delete;
  InstanceSlots &operator=(const InstanceSlots &) = delete;

  std::size_t size() const { return size_; }
  Value &operator[](std::size_t k) { return heap_ ? heap_[k] : inline_[k]; }
  const Value &operator[](std::size_t k) const { return heap_ ? heap_[k] : inline_[k]; }
  /// Grows to `n` slots (more than size()), the new ones unbound.
  void grow(std::size_t n);
  /// Drops every value (they are released after the slots are empty).
  void clear();

private:
  Value inline_[kInline];
  std::unique_ptr<Value[]> heap_; ///< all the slots, once there are more than kInline
  std::size_t size_ = 0;
};

class InstanceObject final : public Object, public Tracked {
public:
  explicit InstanceObject(Ref<ClassObject> c);
  std::string_view type_name() const override { return cls->name; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  void set_attr(Interpreter &interp, std::string_view name, const Value &value) override;
  Value call(Interpreter &interp, CallArgs &args) override;
  Value get_item(Interpreter &interp, const Value &key) override;
  void set_item(Interpreter &interp, const Value &key, const Value &value) override;
  std::optional<Value> binary_op(Interpreter &interp, python::BinOpKind op, const Value &other,
                                 bool reflected) override;
  std::optional<Value> unary_op(Interpreter &interp, python::UnaryOpKind op) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  bool truthy(Interpreter &interp) override;
  std::unique_ptr<trace::Iterator> iterate(Interpreter &interp) override;
  std::optional<Value> inplace_op(Interpreter &interp, python::BinOpKind op, const Value &other) override;
  std::string repr() const override;
  /// str(): `__str__`, else repr() (an exception's: its message).
  std::string to_str() const override;
  // lib: the hooks pylib's builtins and hashed containers ask (hash(), len(), `in`, callable()).
  /// `__hash__`; unhashable (nullopt) when the class set `__hash__ = None` (a class defining
  /// `__eq__` but not `__hash__`); the identity hash for a class that defines neither.
  std::optional<std::int64_t> hash(Interpreter &interp) override;
  std::optional<std::int64_t> length(Interpreter &interp) override;
  std::optional<bool> contains(Interpreter &interp, const Value &item) override;
  bool is_callable() const override;

  /// The attribute stored on the instance, or null.
  Value *own(Symbol name);
  void set_own(Symbol name, Value value);
  /// The slot of layout index `k`, to be stored to: the slots grow (unbound) to the whole
  /// layout the first time one is missing, so that an instance whose `__init__` sets its
  /// attributes one by one allocates them once, not once per attribute.
  Value &slot_to_store(std::uint32_t k) {
    if (k >= slots.size()) [[unlikely]]
      grow_slots(k);
    return slots[k];
  }
  /// Calls the method `name` defined on the class (not the instance) with `self` first;
  /// nullopt when the class has no such method.
  std::optional<Value> call_dunder(Interpreter &interp, std::string_view name, std::vector<Value> args);

  Ref<ClassObject> cls;
  InstanceSlots slots; ///< by the class's layout; unbound where not set
  /// The built-in value an instance of an int or tuple subclass is (IntEnum members, namedtuples).
  Value native;
  /// An exception instance: its arguments, and where it was first raised.
  std::vector<Value> args;
  std::optional<trace::TraceError> origin;
  Value cause;

protected:
  Object &tracked_object() override { return *this; }
  void clear_refs() override;

private:
  void grow_slots(std::uint32_t k);
};

/// A function bound to the object it was found on (`obj.method`).
class BoundMethod final : public Object {
public:
  BoundMethod(Value s, Value f) : self(std::move(s)), fn(std::move(f)) {}
  std::string_view type_name() const override { return "method"; }
  Value call(Interpreter &interp, CallArgs &args) override;
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  std::optional<Value> compare(Interpreter &interp, python::CmpOpKind op, const Value &other, bool reflected) override;
  std::string repr() const override;
  Value self, fn;
};

/// `@staticmethod`, `@classmethod` and `@property` wrappers.
class StaticMethod final : public Object {
public:
  explicit StaticMethod(Value f) : fn(std::move(f)) {}
  std::string_view type_name() const override { return "staticmethod"; }
  Value call(Interpreter &interp, CallArgs &args) override;
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  Value fn;
};
class ClassMethod final : public Object {
public:
  explicit ClassMethod(Value f) : fn(std::move(f)) {}
  std::string_view type_name() const override { return "classmethod"; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  Value fn;
};
class Property final : public Object {
public:
  std::string_view type_name() const override { return "property"; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  Value fget, fset, fdel;
};

/// `super()` and `super(C, obj)`: attributes found after C in the MRO of obj's class.
class SuperObject final : public Object {
public:
  SuperObject(Ref<ClassObject> start, Value s) : after(std::move(start)), self(std::move(s)) {}
  std::string_view type_name() const override { return "super"; }
  std::optional<Value> get_attr(Interpreter &interp, std::string_view name) override;
  std::string repr() const override;
  Ref<ClassObject> after;
  Value self;
};

/// The class of a value when it is an instance of a class statement's class (or the class of a
/// class: none), else null.
ClassObject *class_of(const Value &v);
/// isinstance(v, cls) for a class.
bool is_instance(const Value &v, const ClassObject &cls);

/// The method resolution order of a class with `bases` (C3 linearization), `cls` first; an
/// empty vector when no consistent order exists.
std::vector<ClassObject *> c3_mro(ClassObject *cls, const std::vector<Ref<ClassObject>> &bases);

/// Makes the class of a `class` statement: its bases, its namespace after the body ran, its
/// keywords (`metaclass=`, and options such as `total=`).
Value build_class(Interpreter &interp, std::string name, std::string qualname, std::string module,
                  std::vector<Value> bases, trace::Scope &ns,
                  const std::vector<std::pair<std::string, Value>> &keywords, SourceLoc loc);

/// The built-in `object` class, root of every class.
ClassObject &object_class(Interpreter &interp);
/// The `NotImplemented` singleton a binary dunder returns to decline.
Value not_implemented();
/// The last steps of making a class: enum members, namedtuple fields (stdlib.cpp).
void finish_class(Interpreter &interp, ClassObject &cls, SourceLoc loc);
/// isinstance(v, cls) when `cls` is a class of the class model, or a built-in type an instance
/// derives from (an IntEnum member is an int, a namedtuple a tuple); nullopt for other types.
std::optional<bool> isinstance_hook(Interpreter &interp, const Value &v, const Value &cls);

// ---- exceptions ----------------------------------------------------------------------------------

/// The built-in exception class named `name` (ValueError, ...), or null.
ClassObject *builtin_exception(Interpreter &interp, std::string_view name);
/// Whether an error may be caught by `except`: a Python exception, not a trace limit or an
/// NKI error.
bool is_catchable(Interpreter &interp, const trace::TraceError &e);
/// The exception instance an error is (made for an error raised by nkicc itself).
Value exception_value(Interpreter &interp, const trace::TraceError &e);
/// The error that raising `exc` (an exception class or instance) throws, located at `loc`.
trace::TraceError error_of(Interpreter &interp, const Value &exc, SourceLoc loc);
/// Raises an exception instance again where it was first raised.
[[noreturn]] void reraise(Interpreter &interp, const Value &exc);

/// Binds the class model's builtins (object, super, staticmethod, classmethod, property,
/// issubclass, the exception classes) into the builtins namespace.
void install_class_builtins(Interpreter &interp, trace::Scope &builtins);
/// The modules of the class model: `dataclasses`, `enum`, and the class factories of
/// `collections` and `typing` (namedtuple, NamedTuple); null for other names.
std::shared_ptr<trace::ModuleObject> class_module(Interpreter &interp, std::string_view name);

} // namespace nkicc::eval
