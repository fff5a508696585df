// The standard library's class factories, as kernels use them: `dataclasses` (dataclass with
// defaults, field(default_factory=), frozen=True, order=True, generated __init__/__repr__/
// __eq__/__hash__, replace, asdict, astuple, fields), `enum` (Enum, IntEnum, auto, members by
// value and name), `collections.namedtuple` and `typing.NamedTuple`.
#include "eval/classes.h"
#include "eval/machine.h"
#include "nkicc/trace/pylib.h"

#include <algorithm>

namespace nkicc::eval {

using namespace python;
using trace::BuiltinFunction;
using trace::FunctionObject;
using trace::ModuleObject;
using trace::OpaqueObject;
using trace::Scope;
using trace::TraceError;
using trace::TypeObject;
using K = Value::Kind;

namespace {

Symbol sym(std::string_view s) { return Symbol::intern(s); }

Value builtin(std::string name, BuiltinFunction::Impl impl) {
  return Value::object(make_ref<BuiltinFunction>(std::move(name), std::move(impl)));
}

std::string join_names(const std::vector<std::string> &names) {
  std::string out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k)
      out += names.size() == 2 ? " and " : (k + 1 == names.size() ? ", and " : ", ");
    out += "'" + names[k] + "'";
  }
  return out;
}

/// A module whose unknown attributes are placeholders (typing's many names are annotations only).
class PartialModule : public ModuleObject {
public:
  using ModuleObject::ModuleObject;
  std::optional<Value> get_attr(Interpreter &interp, std::string_view attr) override {
    if (auto v = ModuleObject::get_attr(interp, attr))
      return v;
    return Value::object(std::make_shared<OpaqueObject>(name() + "." + std::string(attr)));
  }
};

bool is_dunder(std::string_view n) { return n.size() > 4 && n.starts_with("__") && n.ends_with("__"); }
bool is_sunder(std::string_view n) { return n.size() > 2 && n.starts_with("_") && n.ends_with("_") && !is_dunder(n); }

/// Binds a call's arguments to named parameters with defaults, with CPython's messages:
/// values[k] gets field k's argument, or its default, else an error.
std::vector<Value> bind_fields(const std::string &fn, const std::vector<std::string> &names,
                               const std::vector<std::optional<Value>> &defaults, const std::vector<Value> &positional,
                               const std::vector<std::pair<std::string, Value>> &keywords) {
  std::size_t n = names.size();
  std::vector<std::optional<Value>> out(n);
  if (positional.size() > n)
    raise_python("TypeError", fn + "() takes " + std::to_string(n + 1) + " positional argument" + (n ? "s" : "") +
                                  " but " + std::to_string(positional.size() + 1) + " were given");
  for (std::size_t k = 0; k < positional.size(); ++k)
    out[k] = positional[k];
  for (const auto &[key, v] : keywords) {
    auto it = std::find(names.begin(), names.end(), key);
    if (it == names.end())
      raise_python("TypeError", fn + "() got an unexpected keyword argument '" + key + "'");
    std::size_t k = static_cast<std::size_t>(it - names.begin());
    if (out[k])
      raise_python("TypeError", fn + "() got multiple values for argument '" + key + "'");
    out[k] = v;
  }
  std::vector<std::string> missing;
  for (std::size_t k = 0; k < n; ++k)
    if (!out[k]) {
      if (defaults[k])
        out[k] = *defaults[k];
      else
        missing.push_back(names[k]);
    }
  if (!missing.empty())
    raise_python("TypeError", fn + "() missing " + std::to_string(missing.size()) + " required positional argument" +
                                  (missing.size() == 1 ? "" : "s") + ": " + join_names(missing));
  std::vector<Value> values;
  for (auto &v : out)
    values.push_back(std::move(*v));
  return values;
}

/// The names in a class's `__annotations__`, in order, with their annotation text.
std::vector<std::pair<std::string, std::string>> annotations(ClassObject &cls) {
  std::vector<std::pair<std::string, std::string>> out;
  Value *ann = cls.dict.find_local("__annotations__");
  if (!ann || ann->kind != K::Dict)
    return out;
  for (const auto &[k, v] : ann->dict_data().items())
    if (k.kind == K::Str)
      out.emplace_back(k.str_text(), v.kind == K::Str ? v.str_text() : std::string());
  return out;
}

bool is_classvar(const std::string &annotation) {
  return annotation.starts_with("ClassVar") || annotation.starts_with("typing.ClassVar") ||
         annotation.starts_with("t.ClassVar");
}

// ---- dataclasses --------------------------------------------------------------------------------

/// `dataclasses.field(...)`: the options of one field.
class FieldObject : public Object {
public:
  std::string_view type_name() const override { return "Field"; }
  std::optional<Value> get_attr(Interpreter &, std::string_view attr) override {
    if (attr == "name")
      return Value::str(name);
    if (attr == "type")
      return Value::str(type);
    if (attr == "default")
      return default_ ? *default_ : missing();
    if (attr == "default_factory")
      return factory.is_none() ? missing() : factory;
    if (attr == "init")
      return Value::boolean(init);
    if (attr == "repr")
      return Value::boolean(repr_);
    if (attr == "compare")
      return Value::boolean(compare_);
    return std::nullopt;
  }
  std::string repr() const override { return "Field(name='" + name + "')"; }
  static Value missing() {
    static Value v = Value::object(std::make_shared<OpaqueObject>("dataclasses.MISSING"));
    return v;
  }

  std::string name, type;
  std::optional<Value> default_;
  Value factory;
  bool init = true, repr_ = true, compare_ = true, kw_only = false;
};

struct DataclassOptions {
  bool init = true, repr = true, eq = true, order = false, frozen = false, unsafe_hash = false;
};

std::vector<Ref<FieldObject>> dataclass_fields(ClassObject &cls) {
  std::vector<Ref<FieldObject>> out;
  if (Value *f = cls.dict.find_local("__dataclass_fields__"); f && f->kind == K::Dict)
    for (const auto &[k, v] : f->dict_data().items())
      out.push_back(v.ref_as<FieldObject>());
  return out;
}

Value field_values_tuple(Interpreter &in, const Value &obj, const std::vector<Ref<FieldObject>> &fields) {
  std::vector<Value> items;
  for (const Ref<FieldObject> &f : fields)
    if (f->compare_)
      items.push_back(in.get_attr(obj, f->name));
  return Value::tuple(std::move(items));
}

Value make_dataclass(Interpreter &, const Value &cls_value, const DataclassOptions &opt) {
  auto *cls = cls_value.as<ClassObject>();
  if (!cls)
    raise_python("TypeError", "dataclass() should be called on a class");
  // Fields of dataclass bases first (base to derived), then this class's annotations.
  std::vector<Ref<FieldObject>> fields;
  for (auto it = cls->mro.rbegin(); it != cls->mro.rend(); ++it) {
    if (*it == cls)
      continue;
    for (Ref<FieldObject> &f : dataclass_fields(**it)) {
      auto same =
          std::find_if(fields.begin(), fields.end(), [&](const Ref<FieldObject> &g) { return g->name == f->name; });
      if (same != fields.end())
        *same = f;
      else
        fields.push_back(f);
    }
  }
  for (const auto &[name, type] : annotations(*cls)) {
    if (is_classvar(type))
      continue;
    Ref<FieldObject> f;
    Value *v = cls->dict.find_local(name);
    if (v && v->as<FieldObject>()) {
      f = v->ref_as<FieldObject>();
    } else {
      f = make_ref<FieldObject>();
      if (v)
        f->default_ = *v;
    }
    f->name = name;
    f->type = type;
    if (f->default_ && (f->default_->kind == K::List || f->default_->kind == K::Dict))
      raise_python("ValueError", "mutable default <class '" + std::string(trace::type_name(*f->default_)) +
                                     "'> for field " + name + " is not allowed: use default_factory");
    // A field's default stays the class attribute; a field() without one leaves none.
    if (f->default_)
      cls->set(sym(name), *f->default_);
    else if (v)
      cls->dict.erase(sym(name));
    // (An init-capture: clang 14 cannot capture a structured binding.)
    auto same = std::find_if(fields.begin(), fields.end(),
                             [&field_name = name](const Ref<FieldObject> &g) { return g->name == field_name; });
    if (same != fields.end())
      *same = f;
    else
      fields.push_back(f);
  }
  bool seen_default = false;
  for (const Ref<FieldObject> &f : fields) {
    if (!f->init || f->kw_only)
      continue;
    bool has_default = f->default_ || !f->factory.is_none();
    if (seen_default && !has_default)
      raise_python("TypeError", "non-default argument '" + f->name + "' follows default argument");
    seen_default = seen_default || has_default;
  }
  std::vector<std::pair<Value, Value>> entries;
  cls->fields.clear();
  for (const Ref<FieldObject> &f : fields) {
    entries.emplace_back(Value::str(f->name), Value::object(f));
    cls->fields.push_back(f->name);
  }
  cls->set(sym("__dataclass_fields__"), Value::dict(std::move(entries)));
  Ref<ClassObject> keep(cls);
  std::string qual = cls->qualname;
  if (opt.init && !cls->dict.find_local("__init__")) {
    cls->set(sym("__init__"), builtin(qual + ".__init__", [keep, fields](Interpreter &interp, CallArgs &a) {
               if (a.positional.empty())
                 raise_python("TypeError", "__init__() missing 'self'");
               Value self = a.positional[0];
               std::vector<std::string> names;
               std::vector<std::optional<Value>> defaults;
               std::vector<Ref<FieldObject>> init_fields;
               for (const Ref<FieldObject> &f : fields)
                 if (f->init) {
                   names.push_back(f->name);
                   defaults.push_back(f->default_            ? f->default_
                                      : f->factory.is_none() ? std::nullopt
                                                             : std::optional<Value>(Value::object(f)));
                   init_fields.push_back(f);
                 }
               std::vector<Value> positional(a.positional.begin() + 1, a.positional.end());
               std::vector<Value> values =
                   bind_fields(keep->qualname + ".__init__", names, defaults, positional, a.keywords);
               auto *inst = self.as<InstanceObject>();
               for (std::size_t k = 0; k < values.size(); ++k) {
                 Value v = values[k];
                 // A default_factory default is called for each instance.
                 if (v.as<FieldObject>() && v.as<FieldObject>() == init_fields[k].get()) {
                   CallArgs none;
                   none.loc = a.loc;
                   v = interp.call(init_fields[k]->factory, none);
                 }
                 inst->set_own(sym(names[k]), std::move(v));
               }
               for (const Ref<FieldObject> &f : fields)
                 if (!f->init && !f->factory.is_none()) {
                   CallArgs none;
                   inst->set_own(sym(f->name), interp.call(f->factory, none));
                 }
               if (const Value *post = keep->lookup("__post_init__")) {
                 CallArgs b;
                 b.loc = a.loc;
                 b.positional.push_back(self);
                 interp.call(*post, b);
               }
               return Value();
             }));
  }
  if (opt.repr && !cls->dict.find_local("__repr__")) {
    cls->set(sym("__repr__"), builtin(qual + ".__repr__", [keep, fields](Interpreter &interp, CallArgs &a) {
               std::string out = keep->qualname + "(";
               bool first = true;
               for (const Ref<FieldObject> &f : fields) {
                 if (!f->repr_)
                   continue;
                 out += (first ? "" : ", ") + f->name + "=" + trace::repr(interp.get_attr(a.positional[0], f->name));
                 first = false;
               }
               return Value::str(out + ")");
             }));
  }
  if (opt.eq && !cls->dict.find_local("__eq__")) {
    cls->set(sym("__eq__"), builtin(qual + ".__eq__", [fields](Interpreter &interp, CallArgs &a) {
               const Value &self = a.positional[0], &other = a.positional[1];
               if (class_of(other) != class_of(self))
                 return not_implemented();
               return interp.compare(CmpOpKind::Eq, field_values_tuple(interp, self, fields),
                                     field_values_tuple(interp, other, fields));
             }));
  }
  if (opt.order) {
    const std::pair<const char *, CmpOpKind> ops[] = {
        {"__lt__", CmpOpKind::Lt}, {"__le__", CmpOpKind::LtE}, {"__gt__", CmpOpKind::Gt}, {"__ge__", CmpOpKind::GtE}};
    for (const auto &[name, op] : ops) {
      CmpOpKind o = op;
      cls->set(sym(name), builtin(qual + "." + name, [fields, o](Interpreter &interp, CallArgs &a) {
                 const Value &self = a.positional[0], &other = a.positional[1];
                 if (class_of(other) != class_of(self))
                   return not_implemented();
                 return interp.compare(o, field_values_tuple(interp, self, fields),
                                       field_values_tuple(interp, other, fields));
               }));
    }
  }
  // eq without frozen makes instances unhashable, as in CPython; frozen ones hash their fields.
  if (opt.eq && (opt.frozen || opt.unsafe_hash)) {
    cls->set(sym("__hash__"), builtin(qual + ".__hash__", [fields](Interpreter &interp, CallArgs &a) {
               // hash() of the fields' tuple, as CPython's generated __hash__ (lib: pylib's hash is
               // CPython's, stable from run to run).
               Value values = field_values_tuple(interp, a.positional[0], fields);
               return Value::integer(trace::hash_value(&interp, values));
             }));
  } else if (opt.eq && !cls->dict.find_local("__hash__")) {
    cls->set(sym("__hash__"), Value());
  }
  if (opt.frozen)
    cls->frozen = true;
  bump_class_epoch();
  return cls_value;
}

DataclassOptions dataclass_options(const CallArgs &a) {
  DataclassOptions o;
  for (const auto &[k, v] : a.keywords) {
    bool b = v.kind == K::Bool ? v.b : !v.is_none();
    if (k == "init")
      o.init = b;
    else if (k == "repr")
      o.repr = b;
    else if (k == "eq")
      o.eq = b;
    else if (k == "order")
      o.order = b;
    else if (k == "frozen")
      o.frozen = b;
    else if (k == "unsafe_hash")
      o.unsafe_hash = b;
    else if (k != "kw_only" && k != "slots" && k != "match_args" && k != "weakref_slot")
      raise_python("TypeError", "dataclass() got an unexpected keyword argument '" + k + "'");
  }
  return o;
}

Value dataclass_fn(Interpreter &interp, CallArgs &a) {
  DataclassOptions o = dataclass_options(a);
  if (a.positional.size() == 1)
    return make_dataclass(interp, a.positional[0], o);
  if (!a.positional.empty())
    raise_python("TypeError", "dataclass() takes at most 1 positional argument");
  return builtin("dataclass", [o](Interpreter &in, CallArgs &b) {
    if (b.positional.size() != 1)
      raise_python("TypeError", "dataclass() should be called on a class");
    return make_dataclass(in, b.positional[0], o);
  });
}

Value asdict_of(Interpreter &in, const Value &v) {
  if (ClassObject *c = class_of(v); c && c->lookup("__dataclass_fields__")) {
    std::vector<std::pair<Value, Value>> entries;
    for (const Ref<FieldObject> &f : dataclass_fields(*c))
      entries.emplace_back(Value::str(f->name), asdict_of(in, in.get_attr(v, f->name)));
    return Value::dict(std::move(entries));
  }
  if (v.kind == K::List || v.kind == K::Tuple) {
    std::vector<Value> items;
    for (const Value &x : v.seq().items)
      items.push_back(asdict_of(in, x));
    return v.kind == K::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
  }
  if (v.kind == K::Dict) {
    std::vector<std::pair<Value, Value>> entries;
    for (const auto &[k, x] : v.dict_data().items())
      entries.emplace_back(asdict_of(in, k), asdict_of(in, x));
    return Value::dict(std::move(entries));
  }
  return v;
}

ClassObject &dataclass_of(const Value &v, std::string_view fn) {
  ClassObject *c = class_of(v);
  if (!c || !c->lookup("__dataclass_fields__"))
    raise_python("TypeError", std::string(fn) + "() should be called on dataclass instances");
  return *c;
}

std::vector<Ref<FieldObject>> all_fields(ClassObject &c) {
  for (ClassObject *k : c.mro)
    if (k->dict.find_local("__dataclass_fields__"))
      return dataclass_fields(*k);
  return {};
}

std::shared_ptr<ModuleObject> dataclasses_module(Interpreter &interp) {
  auto m = std::make_shared<PartialModule>("dataclasses");
  Scope &g = m->globals();
  g.set("dataclass", builtin("dataclass", dataclass_fn));
  g.set("field", builtin("field", [](Interpreter &, CallArgs &a) {
          if (!a.positional.empty())
            raise_python("TypeError", "field() takes 0 positional arguments but " +
                                          std::to_string(a.positional.size()) + " were given");
          auto f = make_ref<FieldObject>();
          for (const auto &[k, v] : a.keywords) {
            if (k == "default")
              f->default_ = v;
            else if (k == "default_factory")
              f->factory = v;
            else if (k == "init")
              f->init = v.kind == K::Bool && v.b;
            else if (k == "repr")
              f->repr_ = v.kind == K::Bool && v.b;
            else if (k == "compare")
              f->compare_ = v.kind == K::Bool && v.b;
            else if (k == "kw_only")
              f->kw_only = v.kind == K::Bool && v.b;
            else if (k != "hash" && k != "metadata")
              raise_python("TypeError", "field() got an unexpected keyword argument '" + k + "'");
          }
          if (f->default_ && !f->factory.is_none())
            raise_python("ValueError", "cannot specify both default and default_factory");
          return Value::object(std::move(f));
        }));
  g.set("fields", builtin("fields", [](Interpreter &, CallArgs &a) {
          if (a.positional.size() != 1)
            raise_python("TypeError", "fields() takes exactly one argument");
          const Value &v = a.positional[0];
          ClassObject *c = v.as<ClassObject>() ? v.as<ClassObject>() : class_of(v);
          if (!c || !c->lookup("__dataclass_fields__"))
            raise_python("TypeError", "must be called with a dataclass type or instance");
          std::vector<Value> items;
          for (Ref<FieldObject> &f : all_fields(*c))
            items.push_back(Value::object(f));
          return Value::tuple(std::move(items));
        }));
  g.set("asdict", builtin("asdict", [](Interpreter &in, CallArgs &a) {
          if (a.positional.size() != 1)
            raise_python("TypeError", "asdict() takes exactly one argument");
          dataclass_of(a.positional[0], "asdict");
          return asdict_of(in, a.positional[0]);
        }));
  g.set("astuple", builtin("astuple", [](Interpreter &in, CallArgs &a) {
          if (a.positional.size() != 1)
            raise_python("TypeError", "astuple() takes exactly one argument");
          ClassObject &c = dataclass_of(a.positional[0], "astuple");
          std::vector<Value> items;
          for (const Ref<FieldObject> &f : all_fields(c))
            items.push_back(in.get_attr(a.positional[0], f->name));
          return Value::tuple(std::move(items));
        }));
  g.set("replace", builtin("replace", [](Interpreter &in, CallArgs &a) {
          if (a.positional.size() != 1)
            raise_python("TypeError", "replace() takes 1 positional argument but " +
                                          std::to_string(a.positional.size()) + " were given");
          const Value &obj = a.positional[0];
          ClassObject &c = dataclass_of(obj, "replace");
          CallArgs b;
          b.loc = a.loc;
          for (const Ref<FieldObject> &f : all_fields(c)) {
            if (!f->init)
              continue;
            const Value *change = a.keyword(f->name);
            b.keywords.emplace_back(f->name, change ? *change : in.get_attr(obj, f->name));
          }
          for (const auto &[k, v] : a.keywords)
            if (std::none_of(b.keywords.begin(), b.keywords.end(),
                             [&keyword = k](const auto &kv) { return kv.first == keyword; })) // (clang 14)
              raise_python("TypeError", c.qualname + ".__init__() got an unexpected keyword argument '" + k + "'");
          return in.call(Value::object(Ref<ClassObject>(&c)), b);
        }));
  g.set("is_dataclass", builtin("is_dataclass", [](Interpreter &, CallArgs &a) {
          if (a.positional.size() != 1)
            raise_python("TypeError", "is_dataclass() takes exactly one argument");
          const Value &v = a.positional[0];
          ClassObject *c = v.as<ClassObject>() ? v.as<ClassObject>() : class_of(v);
          return Value::boolean(c && c->lookup("__dataclass_fields__"));
        }));
  g.set("FrozenInstanceError", Value::object(Ref<ClassObject>(builtin_exception(interp, "FrozenInstanceError"))));
  g.set("MISSING", FieldObject::missing());
  return m;
}

// ---- enum ---------------------------------------------------------------------------------------

/// `enum.auto()`: the next value when the class is made.
class AutoObject : public Object {
public:
  std::string_view type_name() const override { return "auto"; }
  std::string repr() const override { return "auto()"; }
};

Value member_name(const InstanceObject &m) { return *const_cast<InstanceObject &>(m).own(sym("_name_")); }
Value member_value(const InstanceObject &m) { return *const_cast<InstanceObject &>(m).own(sym("_value_")); }

Ref<ClassObject> enum_base(Interpreter &in, std::string name, Value::Kind native) {
  auto cls = make_ref<ClassObject>(in, name, name, "enum");
  cls->flavor = ClassFlavor::Enum;
  cls->native = native;
  cls->bases.push_back(Ref<ClassObject>(&object_class(in)));
  cls->mro = c3_mro(cls.get(), cls->bases);
  cls->track(in.machine().tracked());
  auto property = [&](std::string attr, std::string field) {
    auto p = make_ref<Property>();
    p->fget = builtin(name + "." + attr, [field](Interpreter &, CallArgs &a) {
      return *a.positional[0].as<InstanceObject>()->own(sym(field));
    });
    cls->dict.set(sym(attr), Value::object(std::move(p)));
  };
  property("name", "_name_");
  property("value", "_value_");
  bool int_like = native == K::Int;
  cls->dict.set(sym("__repr__"), builtin(name + ".__repr__", [](Interpreter &, CallArgs &a) {
                  auto *m = a.positional[0].as<InstanceObject>();
                  return Value::str("<" + m->cls->qualname + "." + member_name(*m).str_text() + ": " +
                                    trace::repr(member_value(*m)) + ">");
                }));
  cls->dict.set(sym("__str__"), builtin(name + ".__str__", [int_like](Interpreter &, CallArgs &a) {
                  auto *m = a.positional[0].as<InstanceObject>();
                  // Python 3.11: str() of an IntEnum member is the int's.
                  if (int_like)
                    return Value::str(trace::repr(member_value(*m)));
                  return Value::str(m->cls->qualname + "." + member_name(*m).str_text());
                }));
  return cls;
}

std::shared_ptr<ModuleObject> enum_module(Interpreter &in) {
  auto m = std::make_shared<PartialModule>("enum");
  Scope &g = m->globals();
  Ref<ClassObject> e = enum_base(in, "Enum", K::None);
  g.set("Enum", Value::object(e));
  g.set("IntEnum", Value::object(enum_base(in, "IntEnum", K::Int)));
  g.set("StrEnum", Value::object(enum_base(in, "StrEnum", K::Str)));
  g.set("Flag", Value::object(enum_base(in, "Flag", K::None)));
  g.set("IntFlag", Value::object(enum_base(in, "IntFlag", K::Int)));
  g.set("auto", builtin("auto", [](Interpreter &, CallArgs &) { return Value::object(make_ref<AutoObject>()); }));
  g.set("unique", builtin("unique", [](Interpreter &, CallArgs &a) {
          if (a.positional.size() != 1)
            raise_python("TypeError", "unique() takes exactly one argument");
          return a.positional[0];
        }));
  return m;
}

void make_enum_members(Interpreter &in, ClassObject &cls) {
  std::int64_t last = 0;
  std::vector<std::pair<Symbol, Value>> entries;
  for (const Scope::Entry &e : cls.dict.entries())
    entries.emplace_back(e.symbol, e.value);
  for (auto &[name, v] : entries) {
    std::string_view n = name.name();
    if (is_dunder(n) || is_sunder(n) || v.as<FunctionObject>() || v.as<StaticMethod>() || v.as<ClassMethod>() ||
        v.as<Property>() || v.as<BuiltinFunction>() || v.as<ClassObject>())
      continue;
    Value value = v;
    if (v.as<AutoObject>())
      value = Value::integer(last + 1);
    if (value.kind == K::Int)
      last = value.i;
    if (cls.native == K::Int && value.kind != K::Int && value.kind != K::Bool)
      raise_python("TypeError", "invalid literal for int() with base 10: " + trace::repr(value));
    // A second name for an existing value is an alias of that member.
    Value member;
    for (const Value &m : cls.members)
      if (in.truthy(in.compare(CmpOpKind::Eq, member_value(*m.as<InstanceObject>()), value)))
        member = m;
    if (member.is_none()) {
      auto inst = make_ref<InstanceObject>(Ref<ClassObject>(&cls));
      inst->set_own(sym("_name_"), Value::str(std::string(n)));
      inst->set_own(sym("_value_"), value);
      if (cls.native != K::None)
        inst->native = value;
      member = Value::object(std::move(inst));
      cls.members.push_back(member);
    }
    cls.dict.set(name, member);
  }
}

// ---- named tuples -------------------------------------------------------------------------------

/// Makes a namedtuple class with `fields` (defaults for the last ones) on top of `cls`.
void make_namedtuple(Interpreter &, ClassObject &cls, std::vector<std::string> fields,
                     std::vector<std::optional<Value>> defaults) {
  cls.flavor = ClassFlavor::NamedTuple;
  cls.native = K::Tuple;
  cls.fields = fields;
  Ref<ClassObject> keep(&cls);
  std::vector<Value> names;
  for (const std::string &f : fields)
    names.push_back(Value::str(f));
  cls.dict.set(sym("_fields"), Value::tuple(names));
  cls.dict.set(sym("__new__"), builtin(cls.qualname + ".__new__", [fields, defaults](Interpreter &, CallArgs &a) {
                 auto *c = a.positional.empty() ? nullptr : a.positional[0].as<ClassObject>();
                 if (!c)
                   raise_python("TypeError", "__new__() needs a class");
                 std::vector<Value> positional(a.positional.begin() + 1, a.positional.end());
                 std::vector<Value> values =
                     bind_fields(c->qualname + ".__new__", fields, defaults, positional, a.keywords);
                 auto inst = make_ref<InstanceObject>(a.positional[0].ref_as<ClassObject>());
                 inst->native = Value::tuple(std::move(values));
                 return Value::object(std::move(inst));
               }));
  // Fields read the tuple by position.
  for (std::size_t k = 0; k < fields.size(); ++k) {
    auto p = make_ref<Property>();
    p->fget = builtin(fields[k], [k](Interpreter &, CallArgs &a) {
      return a.positional[0].as<InstanceObject>()->native.seq().items[k];
    });
    cls.dict.set(sym(fields[k]), Value::object(std::move(p)));
  }
  cls.dict.set(sym("__repr__"), builtin(cls.qualname + ".__repr__", [fields](Interpreter &, CallArgs &a) {
                 auto *inst = a.positional[0].as<InstanceObject>();
                 std::string out = inst->cls->qualname + "(";
                 const auto &items = inst->native.seq().items;
                 for (std::size_t k = 0; k < fields.size() && k < items.size(); ++k)
                   out += (k ? ", " : "") + fields[k] + "=" + trace::repr(items[k]);
                 return Value::str(out + ")");
               }));
  cls.dict.set(sym("_asdict"), builtin(cls.qualname + "._asdict", [fields](Interpreter &, CallArgs &a) {
                 const auto &items = a.positional[0].as<InstanceObject>()->native.seq().items;
                 std::vector<std::pair<Value, Value>> entries;
                 for (std::size_t k = 0; k < fields.size() && k < items.size(); ++k)
                   entries.emplace_back(Value::str(fields[k]), items[k]);
                 return Value::dict(std::move(entries));
               }));
  cls.dict.set(sym("_replace"), builtin(cls.qualname + "._replace", [fields](Interpreter &in, CallArgs &a) {
                 auto *inst = a.positional[0].as<InstanceObject>();
                 std::vector<Value> items = inst->native.seq().items;
                 for (const auto &[k, v] : a.keywords) {
                   auto it = std::find(fields.begin(), fields.end(), k);
                   if (it == fields.end())
                     raise_python("ValueError", "Got unexpected field names: ['" + k + "']");
                   items[static_cast<std::size_t>(it - fields.begin())] = v;
                 }
                 auto out = make_ref<InstanceObject>(inst->cls);
                 out->native = Value::tuple(std::move(items));
                 (void)in;
                 return Value::object(std::move(out));
               }));
  auto make = make_ref<ClassMethod>(builtin(cls.qualname + "._make", [](Interpreter &in, CallArgs &a) {
    CallArgs b;
    b.loc = a.loc;
    b.positional = in.to_list(a.positional.at(1));
    return in.call(a.positional[0], b);
  }));
  cls.dict.set(sym("_make"), Value::object(std::move(make)));
  bump_class_epoch();
}

std::vector<std::string> field_names(Interpreter &in, const Value &v) {
  std::vector<std::string> out;
  if (v.kind == K::Str) {
    std::string cur;
    for (char c : v.str_text() + " ") {
      if (c == ' ' || c == ',') {
        if (!cur.empty())
          out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    return out;
  }
  for (const Value &x : in.to_list(v)) {
    if (x.kind != K::Str)
      raise_python("TypeError", "Type names and field names must be strings");
    out.push_back(x.str_text());
  }
  return out;
}

Value namedtuple_fn(Interpreter &in, CallArgs &a) {
  if (a.positional.size() < 2 && !a.keyword("field_names"))
    raise_python("TypeError", "namedtuple() missing 1 required positional argument: 'field_names'");
  if (a.positional.empty() || a.positional[0].kind != K::Str)
    raise_python("TypeError", "Type names and field names must be strings");
  std::string name = a.positional[0].str_text();
  std::vector<std::string> fields =
      field_names(in, a.positional.size() > 1 ? a.positional[1] : *a.keyword("field_names"));
  std::vector<std::optional<Value>> defaults(fields.size());
  if (const Value *d = a.keyword("defaults"); d && !d->is_none()) {
    std::vector<Value> ds = in.to_list(*d);
    if (ds.size() > fields.size())
      raise_python("TypeError", "Got more default values than field names");
    for (std::size_t k = 0; k < ds.size(); ++k)
      defaults[fields.size() - ds.size() + k] = ds[k];
  }
  std::string module;
  if (const Value *m = a.keyword("module"); m && m->kind == K::Str)
    module = m->str_text();
  auto cls = make_ref<ClassObject>(in, name, name, module);
  cls->bases.push_back(Ref<ClassObject>(&object_class(in)));
  cls->mro = c3_mro(cls.get(), cls->bases);
  cls->track(in.machine().tracked());
  make_namedtuple(in, *cls, std::move(fields), std::move(defaults));
  return Value::object(std::move(cls));
}

/// typing.NamedTuple as a base class: a marker the class statement turns into a namedtuple.
Ref<ClassObject> named_tuple_marker(Interpreter &in) {
  auto cls = make_ref<ClassObject>(in, "NamedTuple", "NamedTuple", "typing");
  cls->bases.push_back(Ref<ClassObject>(&object_class(in)));
  cls->mro = c3_mro(cls.get(), cls->bases);
  cls->flavor = ClassFlavor::NamedTuple;
  cls->native = K::Tuple;
  cls->track(in.machine().tracked());
  return cls;
}

} // namespace

void finish_class(Interpreter &interp, ClassObject &cls, SourceLoc) {
  if (cls.flavor == ClassFlavor::Enum)
    make_enum_members(interp, cls);
  if (cls.flavor == ClassFlavor::NamedTuple && cls.fields.empty() && !cls.dict.find_local("_fields")) {
    // `class P(NamedTuple): x: int; y: int = 0`
    std::vector<std::string> fields;
    std::vector<std::optional<Value>> defaults;
    for (const auto &[name, type] : annotations(cls)) {
      (void)type;
      fields.push_back(name);
      Value *d = cls.dict.find_local(name);
      if (!d && !defaults.empty() && defaults.back())
        raise_python("TypeError", "Non-default namedtuple field " + name + " cannot follow default field");
      defaults.push_back(d ? std::optional<Value>(*d) : std::nullopt);
    }
    make_namedtuple(interp, cls, std::move(fields), std::move(defaults));
  }
}

std::shared_ptr<ModuleObject> class_module(Interpreter &interp, std::string_view name) {
  auto &modules = interp.machine().classes().modules;
  if (auto it = modules.find(name); it != modules.end())
    return it->second;
  std::shared_ptr<ModuleObject> m;
  if (name == "dataclasses") {
    m = dataclasses_module(interp);
  } else if (name == "enum") {
    m = enum_module(interp);
  } else if (name == "typing") {
    m = std::make_shared<PartialModule>("typing");
    m->globals().set("NamedTuple", Value::object(named_tuple_marker(interp)));
  } else if (name == "collections") {
    m = std::make_shared<PartialModule>("collections");
    m->globals().set("namedtuple", builtin("namedtuple", namedtuple_fn));
  } else {
    return nullptr;
  }
  modules.emplace(std::string(name), m);
  return m;
}

} // namespace nkicc::eval
