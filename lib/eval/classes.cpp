// Classes and instances: attribute lookup along the MRO with Python's descriptor rules
// (functions bind, staticmethod and classmethod unwrap, property calls), instance attributes
// stored by a per-class layout, instantiation through __new__ and __init__, and the Object hooks
// answered by the dunder methods a class defines.
#include "eval/classes.h"
#include "nkicc/trace/pylib.h"

#include "eval/machine.h"

#include <algorithm>

namespace nkicc::eval {

using namespace python;
using trace::BuiltinFunction;
using trace::FunctionObject;
using trace::OpaqueObject;
using trace::Scope;
using trace::TraceError;
using K = Value::Kind;

namespace {

Symbol sym(std::string_view s) { return Symbol::intern(s); }

std::string_view binary_dunder(BinOpKind op, bool reflected) {
  switch (op) {
  case BinOpKind::Add:
    return reflected ? "__radd__" : "__add__";
  case BinOpKind::Sub:
    return reflected ? "__rsub__" : "__sub__";
  case BinOpKind::Mult:
    return reflected ? "__rmul__" : "__mul__";
  case BinOpKind::MatMult:
    return reflected ? "__rmatmul__" : "__matmul__";
  case BinOpKind::Div:
    return reflected ? "__rtruediv__" : "__truediv__";
  case BinOpKind::Mod:
    return reflected ? "__rmod__" : "__mod__";
  case BinOpKind::Pow:
    return reflected ? "__rpow__" : "__pow__";
  case BinOpKind::LShift:
    return reflected ? "__rlshift__" : "__lshift__";
  case BinOpKind::RShift:
    return reflected ? "__rrshift__" : "__rshift__";
  case BinOpKind::BitOr:
    return reflected ? "__ror__" : "__or__";
  case BinOpKind::BitXor:
    return reflected ? "__rxor__" : "__xor__";
  case BinOpKind::BitAnd:
    return reflected ? "__rand__" : "__and__";
  case BinOpKind::FloorDiv:
    return reflected ? "__rfloordiv__" : "__floordiv__";
  }
  return "";
}

std::string_view inplace_dunder(BinOpKind op) {
  switch (op) {
  case BinOpKind::Add:
    return "__iadd__";
  case BinOpKind::Sub:
    return "__isub__";
  case BinOpKind::Mult:
    return "__imul__";
  case BinOpKind::MatMult:
    return "__imatmul__";
  case BinOpKind::Div:
    return "__itruediv__";
  case BinOpKind::Mod:
    return "__imod__";
  case BinOpKind::Pow:
    return "__ipow__";
  case BinOpKind::LShift:
    return "__ilshift__";
  case BinOpKind::RShift:
    return "__irshift__";
  case BinOpKind::BitOr:
    return "__ior__";
  case BinOpKind::BitXor:
    return "__ixor__";
  case BinOpKind::BitAnd:
    return "__iand__";
  case BinOpKind::FloorDiv:
    return "__ifloordiv__";
  }
  return "";
}

/// The method for `self op other`; reflected compares swap the operator (a < b is b > a).
std::string_view compare_dunder(CmpOpKind op, bool reflected) {
  switch (op) {
  case CmpOpKind::Eq:
    return "__eq__";
  case CmpOpKind::NotEq:
    return "__ne__";
  case CmpOpKind::Lt:
    return reflected ? "__gt__" : "__lt__";
  case CmpOpKind::LtE:
    return reflected ? "__ge__" : "__le__";
  case CmpOpKind::Gt:
    return reflected ? "__lt__" : "__gt__";
  case CmpOpKind::GtE:
    return reflected ? "__le__" : "__ge__";
  default:
    return "";
  }
}

bool is_not_implemented(const Value &v);

/// Whether a class attribute takes part in instance attribute lookup before the instance's own
/// attributes (a data descriptor: a property, or an object whose class defines __set__).
bool is_data_descriptor(const Value &v) {
  if (v.as<Property>())
    return true;
  if (auto *inst = v.as<InstanceObject>())
    return inst->cls->lookup("__set__") || inst->cls->lookup("__delete__");
  return false;
}

Value call_with(Interpreter &interp, const Value &fn, std::vector<Value> args) {
  CallArgs a;
  a.positional = std::move(args);
  a.loc = interp.current_loc();
  return interp.call(fn, a);
}

/// A class attribute as seen through an instance (`self` an instance) or the class itself
/// (`self` the class, `instance` false).
Value bind(Interpreter &interp, const Value &attr, const Value &self, ClassObject &cls, bool instance) {
  // Methods the class model makes (a dataclass's __init__, an enum's __repr__) are built-in
  // functions that bind like Python functions.
  if (attr.as<FunctionObject>() || attr.as<BuiltinFunction>())
    return instance ? Value::object(make_ref<BoundMethod>(self, attr)) : attr;
  if (auto *s = attr.as<StaticMethod>())
    return s->fn;
  if (auto *c = attr.as<ClassMethod>())
    return Value::object(make_ref<BoundMethod>(Value::object(Ref<ClassObject>(&cls)), c->fn));
  if (auto *p = attr.as<Property>()) {
    if (!instance)
      return attr;
    if (p->fget.is_none())
      raise_python("AttributeError", "property object has no getter");
    return call_with(interp, p->fget, {self});
  }
  if (auto *inst = attr.as<InstanceObject>()) {
    if (const Value *get = inst->cls->lookup("__get__"))
      return call_with(interp, *get, {attr, instance ? self : Value(), Value::object(Ref<ClassObject>(&cls))});
  }
  return attr;
}

class NotImplementedObject : public Object {
public:
  std::string_view type_name() const override { return "NotImplementedType"; }
  std::string repr() const override { return "NotImplemented"; }
};

bool is_not_implemented(const Value &v) { return v.as<NotImplementedObject>() != nullptr; }

} // namespace

Value not_implemented() {
  static Value v = Value::object(make_ref<NotImplementedObject>());
  return v;
}

// ---- tracking -----------------------------------------------------------------------------------

void Tracked::track(List &list) {
  list_ = &list;
  next_ = list.head;
  if (next_)
    next_->prev_ = this;
  list.head = this;
}
Tracked::~Tracked() {
  if (!list_)
    return;
  if (prev_)
    prev_->next_ = next_;
  else
    list_->head = next_;
  if (next_)
    next_->prev_ = prev_;
}
void Tracked::List::clear_all() {
  std::vector<Ref<Object>> live;
  for (Tracked *t = head; t; t = t->next_)
    live.emplace_back(&t->tracked_object());
  for (Tracked *t = head; t; t = t->next_)
    t->clear_refs();
}
Tracked::List::~List() {
  for (Tracked *t = head; t;) {
    Tracked *next = t->next_;
    t->list_ = nullptr;
    t->prev_ = t->next_ = nullptr;
    t = next;
  }
}

void ClassObject::clear_refs() {
  dict.clear();
  members.clear();
  bases.clear();
  mro.assign(1, this);
  opaque_bases.clear();
  plans_.clear();
}

InstanceObject::InstanceObject(Ref<ClassObject> c) : cls(std::move(c)) { track(cls->interp.machine().tracked()); }

void InstanceObject::clear_refs() {
  slots.clear();
  native = Value();
  args.clear();
  origin.reset();
  cause = Value();
}

// ---- MRO ----------------------------------------------------------------------------------------

std::vector<ClassObject *> c3_mro(ClassObject *cls, const std::vector<Ref<ClassObject>> &bases) {
  std::vector<std::vector<ClassObject *>> seqs;
  for (const Ref<ClassObject> &b : bases)
    seqs.push_back(b->mro);
  std::vector<ClassObject *> direct;
  for (const Ref<ClassObject> &b : bases)
    direct.push_back(b.get());
  seqs.push_back(direct);
  std::vector<ClassObject *> out{cls};
  for (;;) {
    std::erase_if(seqs, [](const std::vector<ClassObject *> &s) { return s.empty(); });
    if (seqs.empty())
      return out;
    ClassObject *next = nullptr;
    for (const auto &s : seqs) {
      ClassObject *head = s.front();
      bool in_tail = std::any_of(seqs.begin(), seqs.end(), [&](const std::vector<ClassObject *> &t) {
        return std::find(t.begin() + 1, t.end(), head) != t.end();
      });
      if (!in_tail) {
        next = head;
        break;
      }
    }
    if (!next)
      return {};
    out.push_back(next);
    for (auto &s : seqs)
      if (s.front() == next)
        s.erase(s.begin());
  }
}

// ---- ClassObject --------------------------------------------------------------------------------

ClassObject::ClassObject(Interpreter &in, std::string n, std::string qn, std::string m)
    : interp(in), name(std::move(n)), qualname(std::move(qn)), module(std::move(m)) {
  mro.push_back(this);
}

ClassObject::~ClassObject() = default;

const Value *ClassObject::lookup(Symbol n) const {
  for (const ClassObject *c : mro)
    if (const Value *v = const_cast<Scope &>(c->dict).find_local(n))
      return v;
  return nullptr;
}
const Value *ClassObject::lookup(std::string_view n) const {
  std::optional<Symbol> s = Symbol::find(n);
  return s ? lookup(*s) : nullptr;
}

bool ClassObject::is_subclass_of(const ClassObject &other) const {
  return std::find(mro.begin(), mro.end(), &other) != mro.end();
}

std::optional<std::uint32_t> ClassObject::slot_of(Symbol n, bool create) {
  auto it = layout_index_.find(n.id());
  if (it != layout_index_.end())
    return it->second;
  if (!create)
    return std::nullopt;
  auto k = static_cast<std::uint32_t>(layout_.size());
  layout_.push_back(n);
  layout_index_[n.id()] = k;
  bump_class_epoch();
  return k;
}

AttrPlan ClassObject::plan(Symbol n) {
  if (plans_epoch_ != detail::g_class_epoch) {
    plans_.clear();
    plans_epoch_ = detail::g_class_epoch;
  }
  if (auto it = plans_.find(n.id()); it != plans_.end())
    return it->second;
  AttrPlan p;
  const Value *cv = lookup(n);
  bool custom_getattribute = lookup("__getattribute__") != nullptr;
  std::optional<std::uint32_t> slot = slot_of(n, false);
  if (custom_getattribute || flavor != ClassFlavor::Plain || native != K::None) {
    p.kind = AttrPlan::Generic;
  } else if (cv && is_data_descriptor(*cv)) {
    p.kind = AttrPlan::Generic;
  } else if (slot) {
    p.kind = AttrPlan::Slot;
    p.index = *slot;
    // When the instance lacks the attribute: a plain class value is the answer; anything that
    // binds takes the full lookup.
    p.value = cv && !cv->as<FunctionObject>() && !cv->as<StaticMethod>() && !cv->as<ClassMethod>() &&
                      !cv->as<InstanceObject>()
                  ? cv
                  : nullptr;
  } else if (cv && cv->as<FunctionObject>()) {
    p.kind = AttrPlan::Method;
    p.value = cv;
  } else {
    p.kind = AttrPlan::Generic;
  }
  plans_[n.id()] = p;
  return p;
}

void ClassObject::set(Symbol n, Value value) {
  dict.set(n, std::move(value));
  bump_class_epoch();
}

std::optional<Value> ClassObject::get_attr(Interpreter &in, std::string_view attr) {
  Value self = Value::object(Ref<ClassObject>(this));
  if (const Value *v = lookup(attr))
    return bind(in, *v, self, *this, false);
  if (attr == "__name__")
    return Value::str(name);
  if (attr == "__qualname__")
    return Value::str(qualname);
  if (attr == "__module__")
    return Value::str(module);
  if (attr == "__mro__") {
    std::vector<Value> items;
    for (ClassObject *c : mro)
      items.push_back(Value::object(Ref<ClassObject>(c)));
    return Value::tuple(std::move(items));
  }
  if (attr == "__bases__") {
    std::vector<Value> items;
    for (const Ref<ClassObject> &b : bases)
      items.push_back(Value::object(b));
    return Value::tuple(std::move(items));
  }
  if (attr == "__dict__") {
    std::vector<std::pair<Value, Value>> entries;
    for (const Scope::Entry &e : dict.entries())
      entries.emplace_back(Value::str(std::string(e.name())), e.value);
    return Value::dict(std::move(entries));
  }
  if (!opaque_bases.empty()) {
    auto *base = opaque_bases.front().as<OpaqueObject>();
    return Value::object(std::make_shared<OpaqueObject>((base ? base->path() : name) + "." + std::string(attr)));
  }
  return std::nullopt;
}

void ClassObject::set_attr(Interpreter &, std::string_view attr, const Value &value) { set(sym(attr), value); }

Value ClassObject::call(Interpreter &in, CallArgs &args) {
  if (flavor == ClassFlavor::Enum && !members.empty()) {
    // Color(1): the member with that value.
    if (args.positional.size() != 1 || !args.keywords.empty())
      raise_python("TypeError", "EnumMeta.__call__() missing 1 required positional argument: 'value'");
    const Value &v = args.positional[0];
    if (v.as<InstanceObject>() && class_of(v) == this)
      return v;
    for (const Value &m : members) {
      auto *inst = m.as<InstanceObject>();
      if (in.truthy(in.compare(CmpOpKind::Eq, inst->native.is_none() ? *inst->own(sym("_value_")) : inst->native, v)))
        return m;
    }
    raise_python("ValueError", trace::repr(v) + " is not a valid " + qualname);
  }
  return instantiate(in, args);
}

Value ClassObject::instantiate(Interpreter &in, CallArgs &args) {
  Value cls_value = Value::object(Ref<ClassObject>(this));
  Value obj;
  const Value *new_fn = lookup("__new__");
  bool user_new = new_fn && !new_fn->as<BuiltinFunction>();
  if (new_fn) {
    Value fn = new_fn->as<StaticMethod>() ? new_fn->as<StaticMethod>()->fn : *new_fn;
    CallArgs a;
    a.loc = args.loc;
    a.positional.push_back(cls_value);
    a.positional.insert(a.positional.end(), args.positional.begin(), args.positional.end());
    a.keywords = args.keywords;
    obj = in.call(fn, a);
    if (!is_instance(obj, *this))
      return obj;
  } else {
    obj = Value::object(make_ref<InstanceObject>(Ref<ClassObject>(this)));
  }
  const Value *init = lookup("__init__");
  if (!init || (init->as<BuiltinFunction>() && init->as<BuiltinFunction>()->name() == "object.__init__")) {
    if (!user_new && (!args.positional.empty() || !args.keywords.empty()) && flavor == ClassFlavor::Plain)
      raise_python("TypeError", qualname + "() takes no arguments");
    return obj;
  }
  CallArgs a;
  a.loc = args.loc;
  a.positional.reserve(args.positional.size() + 1);
  a.positional.push_back(obj);
  for (Value &v : args.positional)
    a.positional.push_back(std::move(v));
  a.keywords = std::move(args.keywords);
  Value result = in.call(*init, a);
  if (!result.is_none())
    raise_python("TypeError", "__init__() should return None, not '" + std::string(trace::type_name(result)) + "'");
  return obj;
}

Value ClassObject::get_item(Interpreter &in, const Value &key) {
  // Color['RED'], and generic aliases in annotations (`List[int]` on a user class).
  if (flavor == ClassFlavor::Enum && key.kind == K::Str) {
    for (const Value &m : members)
      if (auto *inst = m.as<InstanceObject>();
          inst && inst->own(sym("_name_")) && inst->own(sym("_name_"))->str_text() == key.str_text())
        return m;
    raise_python("KeyError", trace::repr(key));
  }
  if (const Value *g = lookup("__class_getitem__")) {
    Value fn = g->as<ClassMethod>() ? g->as<ClassMethod>()->fn : *g;
    return call_with(in, fn, {Value::object(Ref<ClassObject>(this)), key});
  }
  return Value::object(Ref<ClassObject>(this));
}

std::optional<Value> ClassObject::binary_op(Interpreter &, BinOpKind op, const Value &other, bool) {
  // `A | None` in annotations: a placeholder union.
  if (op == BinOpKind::BitOr)
    return Value::object(std::make_shared<OpaqueObject>("types.UnionType"));
  (void)other;
  return std::nullopt;
}

std::unique_ptr<trace::Iterator> ClassObject::iterate(Interpreter &) {
  if (flavor != ClassFlavor::Enum)
    return nullptr;
  struct It : trace::Iterator {
    std::vector<Value> items;
    std::size_t k = 0;
    bool next(Value &out) override {
      if (k >= items.size())
        return false;
      out = items[k++];
      return true;
    }
  };
  auto it = std::make_unique<It>();
  it->items = members;
  return it;
}

std::string ClassObject::repr() const {
  if (module.empty() || module == "builtins")
    return "<class '" + qualname + "'>";
  return "<class '" + module + "." + qualname + "'>";
}

// ---- instances ----------------------------------------------------------------------------------

Value *InstanceObject::own(Symbol n) {
  std::optional<std::uint32_t> k = cls->slot_of(n, false);
  if (!k || *k >= slots.size() || is_unbound(slots[*k]))
    return nullptr;
  return &slots[*k];
}

void InstanceObject::set_own(Symbol n, Value value) { slot_to_store(*cls->slot_of(n, true)) = std::move(value); }

void InstanceObject::grow_slots(std::uint32_t k) { slots.grow(std::max<std::size_t>(k + 1, cls->layout_size())); }

void InstanceSlots::grow(std::size_t n) {
  if (n <= kInline && !heap_) {
    for (std::size_t j = size_; j < n; ++j)
      set_unbound(inline_[j]);
  } else {
    std::unique_ptr<Value[]> grown(new Value[n]);
    for (std::size_t j = 0; j < size_; ++j)
      grown[j] = std::move((*this)[j]);
    for (std::size_t j = size_; j < n; ++j)
      set_unbound(grown[j]);
    heap_ = std::move(grown);
  }
  size_ = n;
}

void InstanceSlots::clear() {
  // Releasing a value may run into this instance again (a cycle being cleared): the slots are
  // empty before anything is released.
  std::unique_ptr<Value[]> heap = std::move(heap_);
  Value held[kInline];
  for (std::size_t j = 0; j < kInline; ++j)
    held[j] = std::move(inline_[j]);
  size_ = 0;
}

std::optional<Value> InstanceObject::call_dunder(Interpreter &in, std::string_view n, std::vector<Value> a) {
  const Value *fn = cls->lookup(n);
  if (!fn || fn->is_none())
    return std::nullopt;
  Value f = *fn;
  if (auto *s = f.as<StaticMethod>())
    return call_with(in, s->fn, std::move(a));
  if (auto *c = f.as<ClassMethod>()) {
    a.insert(a.begin(), Value::object(cls));
    return call_with(in, c->fn, std::move(a));
  }
  a.insert(a.begin(), Value::object(Ref<InstanceObject>(this)));
  return call_with(in, f, std::move(a));
}

std::optional<Value> InstanceObject::get_attr(Interpreter &in, std::string_view attr) {
  Value self = Value::object(Ref<InstanceObject>(this));
  Symbol s = sym(attr);
  const Value *cv = cls->lookup(s);
  if (cv && is_data_descriptor(*cv))
    return bind(in, *cv, self, *cls, true);
  if (Value *v = own(s))
    return *v;
  if (cv)
    return bind(in, *cv, self, *cls, true);
  if (attr == "__class__")
    return Value::object(cls);
  if (cls->flavor == ClassFlavor::Exception && attr == "args")
    return Value::tuple(args);
  if (cls->flavor == ClassFlavor::Exception && (attr == "__cause__" || attr == "__context__"))
    return attr == "__cause__" ? cause : Value();
  if (!native.is_none())
    if (std::optional<Value> v = in.find_attr(native, attr))
      return v;
  if (const Value *getattr = cls->lookup("__getattr__")) {
    try {
      return call_with(in, *getattr, {self, Value::str(std::string(attr))});
    } catch (TraceError &e) {
      if (e.id == "AttributeError")
        return std::nullopt;
      throw;
    }
  }
  for (ClassObject *c : cls->mro)
    if (!c->opaque_bases.empty()) {
      auto *base = c->opaque_bases.front().as<OpaqueObject>();
      return Value::object(std::make_shared<OpaqueObject>((base ? base->path() : c->name) + "()." + std::string(attr)));
    }
  return std::nullopt;
}

void InstanceObject::set_attr(Interpreter &in, std::string_view attr, const Value &value) {
  Value self = Value::object(Ref<InstanceObject>(this));
  if (const Value *setattr = cls->lookup("__setattr__"); setattr && !setattr->as<BuiltinFunction>()) {
    call_with(in, *setattr, {self, Value::str(std::string(attr)), value});
    return;
  }
  if (cls->frozen)
    raise_python("FrozenInstanceError", "cannot assign to field '" + std::string(attr) + "'");
  Symbol s = sym(attr);
  if (const Value *cv = cls->lookup(s)) {
    if (auto *p = cv->as<Property>()) {
      if (p->fset.is_none())
        raise_python("AttributeError",
                     "property '" + std::string(attr) + "' of '" + cls->name + "' object has no setter");
      call_with(in, p->fset, {self, value});
      return;
    }
    if (auto *inst = cv->as<InstanceObject>())
      if (const Value *set = inst->cls->lookup("__set__")) {
        call_with(in, *set, {*cv, self, value});
        return;
      }
  }
  set_own(s, value);
}

Value InstanceObject::call(Interpreter &in, CallArgs &a) {
  const Value *fn = cls->lookup("__call__");
  if (!fn)
    raise_python("TypeError", "'" + cls->name + "' object is not callable");
  CallArgs b;
  b.loc = a.loc;
  b.positional.reserve(a.positional.size() + 1);
  b.positional.push_back(Value::object(Ref<InstanceObject>(this)));
  for (Value &v : a.positional)
    b.positional.push_back(std::move(v));
  b.keywords = std::move(a.keywords);
  return in.call(*fn, b);
}

Value InstanceObject::get_item(Interpreter &in, const Value &key) {
  if (std::optional<Value> v = call_dunder(in, "__getitem__", {key}))
    return std::move(*v);
  if (!native.is_none())
    return in.get_item(native, key);
  raise_python("TypeError", "'" + cls->name + "' object is not subscriptable");
}

void InstanceObject::set_item(Interpreter &in, const Value &key, const Value &value) {
  if (call_dunder(in, "__setitem__", {key, value}))
    return;
  raise_python("TypeError", "'" + cls->name + "' object does not support item assignment");
}

std::optional<Value> InstanceObject::binary_op(Interpreter &in, BinOpKind op, const Value &other, bool reflected) {
  if (std::optional<Value> v = call_dunder(in, binary_dunder(op, reflected), {other}))
    return is_not_implemented(*v) ? std::nullopt : v;
  if (!native.is_none()) {
    const Value &o = other.as<InstanceObject>() && !other.as<InstanceObject>()->native.is_none()
                         ? other.as<InstanceObject>()->native
                         : other;
    return reflected ? in.binary_op(op, o, native) : in.binary_op(op, native, o);
  }
  return std::nullopt;
}

std::optional<Value> InstanceObject::inplace_op(Interpreter &in, BinOpKind op, const Value &other) {
  if (std::optional<Value> v = call_dunder(in, inplace_dunder(op), {other}))
    return is_not_implemented(*v) ? std::nullopt : v;
  return std::nullopt;
}

std::optional<Value> InstanceObject::unary_op(Interpreter &in, UnaryOpKind op) {
  std::string_view n = op == UnaryOpKind::USub ? "__neg__" : op == UnaryOpKind::UAdd ? "__pos__" : "__invert__";
  if (std::optional<Value> v = call_dunder(in, n, {}))
    return v;
  if (!native.is_none())
    return in.unary_op(op, native);
  return std::nullopt;
}

std::optional<Value> InstanceObject::compare(Interpreter &in, CmpOpKind op, const Value &other, bool reflected) {
  std::string_view n = compare_dunder(op, reflected);
  if (n.empty())
    return std::nullopt;
  if (std::optional<Value> v = call_dunder(in, n, {other}))
    if (!is_not_implemented(*v))
      return v;
  if (op == CmpOpKind::NotEq)
    if (std::optional<Value> v = call_dunder(in, "__eq__", {other}); v && !is_not_implemented(*v))
      return Value::boolean(!in.truthy(*v));
  if (!native.is_none()) {
    const Value &o = other.as<InstanceObject>() && !other.as<InstanceObject>()->native.is_none()
                         ? other.as<InstanceObject>()->native
                         : other;
    return reflected ? in.compare(op, o, native) : in.compare(op, native, o);
  }
  return std::nullopt;
}

bool InstanceObject::truthy(Interpreter &in) {
  if (std::optional<Value> v = call_dunder(in, "__bool__", {})) {
    if (v->kind != K::Bool)
      raise_python("TypeError", "__bool__ should return bool, returned " + std::string(trace::type_name(*v)));
    return v->b;
  }
  if (std::optional<Value> v = call_dunder(in, "__len__", {}))
    return in.truthy(*v);
  if (!native.is_none())
    return in.truthy(native);
  return true;
}

std::optional<std::int64_t> InstanceObject::hash(Interpreter &in) {
  const Value *fn = cls->lookup("__hash__");
  if (fn && fn->is_none())
    return std::nullopt;
  bool has_eq = cls->lookup("__eq__") && cls->lookup("__eq__") != object_class(in).lookup("__eq__");
  if (!fn || fn == object_class(in).lookup("__hash__")) {
    if (has_eq && cls->flavor == ClassFlavor::Plain && !cls->dict.find_local("__hash__")) {
      // CPython sets __hash__ = None in a class body that defines __eq__ alone.
      for (ClassObject *c : cls->mro) {
        if (c->dict.find_local("__hash__"))
          break;
        if (c->dict.find_local("__eq__"))
          return std::nullopt;
      }
    }
    if (!native.is_none())
      return trace::hash_value(&in, native);
    return identity_hash();
  }
  std::optional<Value> v = call_dunder(in, "__hash__", {});
  if (!v || (v->kind != K::Int && v->kind != K::Bool))
    raise_python("TypeError", "__hash__ method should return an integer");
  // CPython takes the int as it is (slot_tp_hash), but -1, which marks an error, becomes -2.
  std::int64_t h = v->kind == K::Bool ? v->b : v->i;
  return h == -1 ? -2 : h;
}

std::optional<std::int64_t> InstanceObject::length(Interpreter &in) {
  std::optional<Value> v = call_dunder(in, "__len__", {});
  if (!v) {
    if (!native.is_none()) {
      CallArgs one;
      one.positional.push_back(native);
      Value n = in.call(*in.builtins().find_local("len"), one);
      return n.i;
    }
    return std::nullopt;
  }
  if (v->kind == K::Bool)
    return v->b ? 1 : 0;
  if (v->kind != K::Int)
    raise_python("TypeError", "'" + std::string(trace::type_name(*v)) + "' object cannot be interpreted as an integer");
  if (v->i < 0)
    raise_python("ValueError", "__len__() should return >= 0");
  return v->i;
}

std::optional<bool> InstanceObject::contains(Interpreter &in, const Value &item) {
  if (std::optional<Value> v = call_dunder(in, "__contains__", {item}))
    return in.truthy(*v);
  if (!native.is_none())
    return in.contains(native, item);
  return std::nullopt;
}

bool InstanceObject::is_callable() const { return cls->lookup("__call__") != nullptr; }

namespace {
/// Iterates by calling `__next__` until StopIteration.
class NextIterator : public trace::Iterator {
public:
  NextIterator(Interpreter &in, Value it) : in_(in), it_(std::move(it)) {}
  bool next(Value &out) override {
    auto *inst = it_.as<InstanceObject>();
    try {
      std::optional<Value> v = inst->call_dunder(in_, "__next__", {});
      if (!v)
        raise_python("TypeError", "'" + inst->cls->name + "' object is not an iterator");
      out = std::move(*v);
      return true;
    } catch (TraceError &e) {
      if (e.id == "StopIteration")
        return false;
      throw;
    }
  }

private:
  Interpreter &in_;
  Value it_;
};

/// The old sequence protocol: `__getitem__` with 0, 1, ... until IndexError.
class GetItemIterator : public trace::Iterator {
public:
  GetItemIterator(Interpreter &in, Value obj) : in_(in), obj_(std::move(obj)) {}
  bool next(Value &out) override {
    try {
      out = obj_.object()->get_item(in_, Value::integer(k_++));
      return true;
    } catch (TraceError &e) {
      if (e.id == "IndexError" || e.id == "StopIteration")
        return false;
      throw;
    }
  }

private:
  Interpreter &in_;
  Value obj_;
  std::int64_t k_ = 0;
};
} // namespace

std::unique_ptr<trace::Iterator> InstanceObject::iterate(Interpreter &in) {
  Value self = Value::object(Ref<InstanceObject>(this));
  if (std::optional<Value> it = call_dunder(in, "__iter__", {})) {
    if (auto *inst = it->as<InstanceObject>()) {
      // What __iter__ returns is iterated by its __next__, never iterated again: an __iter__
      // that returns self without a __next__ would otherwise recurse until the stack ran out.
      if (!inst->cls->lookup("__next__"))
        raise_python("TypeError", "iter() returned non-iterator of type '" + inst->cls->name + "'");
      return std::make_unique<NextIterator>(in, *it);
    }
    return in.iterate(*it);
  }
  if (!native.is_none())
    return in.iterate(native);
  if (cls->lookup("__getitem__"))
    return std::make_unique<GetItemIterator>(in, self);
  return nullptr;
}

std::string InstanceObject::repr() const {
  auto *self = const_cast<InstanceObject *>(this);
  if (std::optional<Value> v = self->call_dunder(cls->interp, "__repr__", {})) {
    if (v->kind != K::Str)
      raise_python("TypeError", "__repr__ returned non-string (type " + std::string(trace::type_name(*v)) + ")");
    return v->str_text();
  }
  if (cls->flavor == ClassFlavor::Exception) {
    std::string out = cls->name + "(";
    for (std::size_t k = 0; k < args.size(); ++k)
      out += (k ? ", " : "") + trace::repr(args[k]);
    return out + ")";
  }
  // No address: the repr of an instance reaches IR text and cache keys, and must not vary
  // from run to run.
  return "<" + (cls->module.empty() ? std::string() : cls->module + ".") + cls->qualname + " object>";
}

std::string InstanceObject::to_str() const {
  auto *self = const_cast<InstanceObject *>(this);
  if (const Value *fn = cls->lookup("__str__"); fn && !fn->as<BuiltinFunction>()) {
    std::optional<Value> v = self->call_dunder(cls->interp, "__str__", {});
    if (v->kind != K::Str)
      raise_python("TypeError", "__str__ returned non-string (type " + std::string(trace::type_name(*v)) + ")");
    return v->str_text();
  }
  if (cls->flavor == ClassFlavor::Exception) {
    if (args.empty())
      return "";
    if (args.size() == 1)
      return cls->name == "KeyError" && !origin ? trace::repr(args[0]) : trace::str(args[0]);
    return trace::repr(Value::tuple(args));
  }
  if (const Value *fn = cls->lookup("__str__")) {
    std::optional<Value> v = self->call_dunder(cls->interp, "__str__", {});
    (void)fn;
    if (v && v->kind == K::Str)
      return v->str_text();
  }
  return repr();
}

// ---- methods, descriptors, super ----------------------------------------------------------------

Value BoundMethod::call(Interpreter &in, CallArgs &a) {
  CallArgs b;
  b.loc = a.loc;
  b.positional.reserve(a.positional.size() + 1);
  b.positional.push_back(self);
  for (Value &v : a.positional)
    b.positional.push_back(std::move(v));
  b.keywords = std::move(a.keywords);
  return in.call(fn, b);
}

std::optional<Value> BoundMethod::get_attr(Interpreter &in, std::string_view attr) {
  if (attr == "__self__")
    return self;
  if (attr == "__func__")
    return fn;
  if (Object *f = fn.object())
    return f->get_attr(in, attr);
  return std::nullopt;
}

std::optional<Value> BoundMethod::compare(Interpreter &in, CmpOpKind op, const Value &other, bool) {
  if (op != CmpOpKind::Eq && op != CmpOpKind::NotEq)
    return std::nullopt;
  auto *o = other.as<BoundMethod>();
  bool eq = o && fn.same_heap(o->fn) && in.truthy(in.compare(CmpOpKind::Is, self, o->self));
  return Value::boolean(op == CmpOpKind::Eq ? eq : !eq);
}

std::string BoundMethod::repr() const {
  std::string n = fn.as<FunctionObject>() ? fn.as<FunctionObject>()->qualname : trace::repr(fn);
  return "<bound method " + n + " of " + trace::repr(self) + ">";
}

Value StaticMethod::call(Interpreter &in, CallArgs &a) { return in.call(fn, a); }
std::optional<Value> StaticMethod::get_attr(Interpreter &in, std::string_view attr) {
  if (attr == "__func__")
    return fn;
  return fn.object() ? fn.object()->get_attr(in, attr) : std::nullopt;
}
std::optional<Value> ClassMethod::get_attr(Interpreter &in, std::string_view attr) {
  if (attr == "__func__")
    return fn;
  return fn.object() ? fn.object()->get_attr(in, attr) : std::nullopt;
}

std::optional<Value> Property::get_attr(Interpreter &, std::string_view attr) {
  Ref<Property> self(this);
  auto with = [self](std::string which) {
    return Value::object(make_ref<BuiltinFunction>("property." + which, [self, which](Interpreter &, CallArgs &a) {
      if (a.positional.size() != 1)
        raise_python("TypeError",
                     which + "() takes exactly one argument (" + std::to_string(a.positional.size()) + " given)");
      auto p = make_ref<Property>();
      p->fget = self->fget;
      p->fset = self->fset;
      p->fdel = self->fdel;
      (which == "getter" ? p->fget : which == "setter" ? p->fset : p->fdel) = a.positional[0];
      return Value::object(std::move(p));
    }));
  };
  if (attr == "setter" || attr == "getter" || attr == "deleter")
    return with(std::string(attr));
  if (attr == "fget")
    return fget;
  if (attr == "fset")
    return fset;
  return std::nullopt;
}

std::optional<Value> SuperObject::get_attr(Interpreter &in, std::string_view attr) {
  ClassObject *cls = self.as<ClassObject>() ? self.as<ClassObject>() : class_of(self);
  bool instance = !self.as<ClassObject>();
  if (!cls)
    return std::nullopt;
  const auto &mro = cls->mro;
  auto it = std::find(mro.begin(), mro.end(), after.get());
  if (it == mro.end())
    return std::nullopt;
  std::optional<Symbol> s = Symbol::find(attr);
  for (++it; s && it != mro.end(); ++it)
    if (const Value *v = (*it)->dict.find_local(*s)) {
      if (v->as<BuiltinFunction>() && instance) // object.__init__ and the exception bases' methods
        return Value::object(make_ref<BoundMethod>(self, *v));
      return bind(in, *v, self, *cls, instance);
    }
  for (ClassObject *c : mro)
    if (!c->opaque_bases.empty()) {
      auto *base = c->opaque_bases.front().as<OpaqueObject>();
      return Value::object(std::make_shared<OpaqueObject>((base ? base->path() : c->name) + "." + std::string(attr)));
    }
  return std::nullopt;
}

std::string SuperObject::repr() const { return "<super: <class '" + after->name + "'>>"; }

// ---- queries ------------------------------------------------------------------------------------

ClassObject *class_of(const Value &v) {
  if (auto *inst = v.as<InstanceObject>())
    return inst->cls.get();
  return nullptr;
}

bool is_instance(const Value &v, const ClassObject &cls) {
  if (ClassObject *c = class_of(v))
    return c->is_subclass_of(cls);
  if (cls.name == "object" && cls.bases.empty())
    return true;
  return false;
}

} // namespace nkicc::eval
