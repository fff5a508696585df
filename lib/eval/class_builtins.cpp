// The class model's builtins: `object`, the exception classes in CPython's hierarchy,
// super/staticmethod/classmethod/property/issubclass, `class` statements (build_class), and the
// bridge between nkicc's errors and Python exception instances (raise, except, re-raise).
#include "eval/classes.h"
#include "eval/machine.h"

#include <algorithm>

namespace nkicc::eval {

using namespace python;
using trace::BuiltinFunction;
using trace::FunctionObject;
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

InstanceObject &self_instance(const CallArgs &a, std::string_view what) {
  if (a.positional.empty() || !a.positional[0].as<InstanceObject>())
    raise_python("TypeError", std::string(what) + " needs an instance");
  return *a.positional[0].as<InstanceObject>();
}

/// CPython's exception hierarchy: (name, base).
constexpr std::pair<const char *, const char *> kExceptions[] = {
    {"BaseException", nullptr},
    {"Exception", "BaseException"},
    {"GeneratorExit", "BaseException"},
    {"KeyboardInterrupt", "BaseException"},
    {"SystemExit", "BaseException"},
    {"ArithmeticError", "Exception"},
    {"FloatingPointError", "ArithmeticError"},
    {"OverflowError", "ArithmeticError"},
    {"ZeroDivisionError", "ArithmeticError"},
    {"AssertionError", "Exception"},
    {"AttributeError", "Exception"},
    {"BufferError", "Exception"},
    {"EOFError", "Exception"},
    {"ImportError", "Exception"},
    {"ModuleNotFoundError", "ImportError"},
    {"LookupError", "Exception"},
    {"IndexError", "LookupError"},
    {"KeyError", "LookupError"},
    {"MemoryError", "Exception"},
    {"NameError", "Exception"},
    {"UnboundLocalError", "NameError"},
    {"OSError", "Exception"},
    {"FileNotFoundError", "OSError"},
    {"PermissionError", "OSError"},
    {"TimeoutError", "OSError"},
    {"ReferenceError", "Exception"},
    {"RuntimeError", "Exception"},
    {"NotImplementedError", "RuntimeError"},
    {"RecursionError", "RuntimeError"},
    {"StopIteration", "Exception"},
    {"SyntaxError", "Exception"},
    {"SystemError", "Exception"},
    {"TypeError", "Exception"},
    {"ValueError", "Exception"},
    {"UnicodeError", "ValueError"},
    {"Warning", "Exception"},
    {"DeprecationWarning", "Warning"},
    {"FutureWarning", "Warning"},
    {"RuntimeWarning", "Warning"},
    {"UserWarning", "Warning"},
};

} // namespace

// ---- the per-interpreter classes ----------------------------------------------------------------

Machine::ClassModel &Machine::classes() {
  if (classes_.object)
    return classes_;
  Interpreter &in = in_;
  auto object = make_ref<ClassObject>(in, "object", "object", "builtins");
  object->dict.set(sym("__init__"), builtin("object.__init__", [](Interpreter &, CallArgs &a) {
                     if (a.positional.size() > 1 || !a.keywords.empty())
                       raise_python("TypeError", "object.__init__() takes exactly one argument (the instance to "
                                                 "initialize)");
                     return Value();
                   }));
  object->dict.set(sym("__setattr__"), builtin("object.__setattr__", [](Interpreter &, CallArgs &a) {
                     if (a.positional.size() != 3 || a.positional[1].kind != K::Str)
                       raise_python("TypeError", "object.__setattr__() takes an instance, a name and a value");
                     self_instance(a, "object.__setattr__").set_own(sym(a.positional[1].str_text()), a.positional[2]);
                     return Value();
                   }));
  object->dict.set(sym("__new__"), builtin("object.__new__", [](Interpreter &, CallArgs &a) {
                     if (a.positional.empty() || !a.positional[0].as<ClassObject>())
                       raise_python("TypeError", "object.__new__(X): X is not a type object");
                     return Value::object(make_ref<InstanceObject>(a.positional[0].ref_as<ClassObject>()));
                   }));
  classes_.object = object;
  for (const auto &[name, base] : kExceptions) {
    auto cls = make_ref<ClassObject>(in, name, name, "builtins");
    cls->flavor = ClassFlavor::Exception;
    Ref<ClassObject> b = base ? classes_.exceptions.at(base) : object;
    cls->bases.push_back(b);
    cls->mro = c3_mro(cls.get(), cls->bases);
    classes_.exceptions.emplace(name, cls);
  }
  ClassObject &base_exception = *classes_.exceptions.at("BaseException");
  base_exception.dict.set(sym("__init__"), builtin("BaseException.__init__", [](Interpreter &, CallArgs &a) {
                            if (!a.keywords.empty())
                              raise_python("TypeError", "BaseException.__init__() takes no keyword arguments");
                            InstanceObject &self = self_instance(a, "BaseException.__init__");
                            self.args.assign(a.positional.begin() + 1, a.positional.end());
                            return Value();
                          }));
  base_exception.dict.set(sym("with_traceback"),
                          builtin("BaseException.with_traceback", [](Interpreter &, CallArgs &a) {
                            return a.positional.empty() ? Value() : a.positional[0];
                          }));
  // dataclasses.FrozenInstanceError: an AttributeError, not a builtin name.
  auto frozen = make_ref<ClassObject>(in, "FrozenInstanceError", "FrozenInstanceError", "dataclasses");
  frozen->flavor = ClassFlavor::Exception;
  frozen->bases.push_back(classes_.exceptions.at("AttributeError"));
  frozen->mro = c3_mro(frozen.get(), frozen->bases);
  classes_.exceptions.emplace("FrozenInstanceError", frozen);
  return classes_;
}

ClassObject &object_class(Interpreter &interp) { return *interp.machine().classes().object; }

ClassObject *builtin_exception(Interpreter &interp, std::string_view name) {
  auto &ex = interp.machine().classes().exceptions;
  auto it = ex.find(name);
  return it == ex.end() ? nullptr : it->second.get();
}

// ---- errors and exception instances -------------------------------------------------------------

bool is_catchable(Interpreter &interp, const TraceError &e) {
  return !e.exception.is_none() || builtin_exception(interp, e.id) != nullptr;
}

Value exception_value(Interpreter &interp, const TraceError &e) {
  if (!e.exception.is_none())
    return e.exception;
  auto inst = make_ref<InstanceObject>(Ref<ClassObject>(builtin_exception(interp, e.id)));
  if (!e.message.empty())
    inst->args.push_back(Value::str(e.message));
  inst->origin = e;
  return Value::object(std::move(inst));
}

TraceError error_of(Interpreter &interp, const Value &exc, SourceLoc loc) {
  Value v = exc;
  if (auto *cls = v.as<ClassObject>(); cls && cls->flavor == ClassFlavor::Exception) {
    CallArgs none;
    none.loc = loc;
    v = cls->instantiate(interp, none);
  }
  auto *inst = v.as<InstanceObject>();
  if (!inst || inst->cls->flavor != ClassFlavor::Exception)
    return TraceError{"exceptions must derive from BaseException", "TypeError", loc, {}, Value()};
  return TraceError{inst->to_str(), inst->cls->name, loc, {}, v};
}

void reraise(Interpreter &interp, const Value &exc) {
  auto *inst = exc.as<InstanceObject>();
  if (inst && inst->origin) {
    TraceError e = *inst->origin;
    e.exception = exc;
    throw e;
  }
  throw error_of(interp, exc, {});
}

// ---- isinstance and friends ---------------------------------------------------------------------

/// isinstance(v, cls) when `cls` is a class of the class model, or a built-in type an instance
/// derives from (an IntEnum member is an int, a namedtuple a tuple); nullopt otherwise.
std::optional<bool> isinstance_hook(Interpreter &interp, const Value &v, const Value &cls) {
  if (auto *c = cls.as<ClassObject>())
    return is_instance(v, *c) || (c == &object_class(interp));
  if (auto *t = cls.as<TypeObject>())
    if (auto *inst = v.as<InstanceObject>(); inst && !inst->native.is_none())
      return t->is_instance(inst->native);
  return std::nullopt;
}

// ---- class statements ---------------------------------------------------------------------------

Value build_class(Interpreter &interp, std::string name, std::string qualname, std::string module,
                  std::vector<Value> bases, Scope &ns, const std::vector<std::pair<std::string, Value>> &keywords,
                  SourceLoc loc) {
  (void)keywords;
  auto cls = make_ref<ClassObject>(interp, name, qualname, module);
  for (const Value &b : bases) {
    if (auto *c = b.as<ClassObject>()) {
      cls->bases.push_back(b.ref_as<ClassObject>());
      (void)c;
    } else if (b.as<OpaqueObject>()) {
      cls->opaque_bases.push_back(b);
    } else if (auto *t = b.as<TypeObject>()) {
      cls->native = t->instance_kind;
    } else {
      raise_python("TypeError", "bases must be types, not " + std::string(trace::type_name(b)), loc);
    }
  }
  if (cls->bases.empty())
    cls->bases.push_back(Ref<ClassObject>(&object_class(interp)));
  cls->mro = c3_mro(cls.get(), cls->bases);
  if (cls->mro.empty()) {
    std::string names;
    for (std::size_t k = 0; k < cls->bases.size(); ++k)
      names += (k ? ", " : "") + cls->bases[k]->name;
    raise_python("TypeError", "Cannot create a consistent method resolution order (MRO) for bases " + names, loc);
  }
  for (const Ref<ClassObject> &b : cls->bases) {
    if (cls->flavor == ClassFlavor::Plain)
      cls->flavor = b->flavor;
    if (cls->native == K::None)
      cls->native = b->native;
    if (b->frozen)
      cls->frozen = true;
    if (cls->fields.empty())
      cls->fields = b->fields;
  }
  for (const Scope::Entry &e : ns.entries()) {
    Value v = e.value;
    // As in CPython, __new__ is a static method and __init_subclass__ a class method implicitly.
    if (e.name() == "__new__" && v.as<FunctionObject>())
      v = Value::object(make_ref<StaticMethod>(v));
    else if ((e.name() == "__init_subclass__" || e.name() == "__class_getitem__") && v.as<FunctionObject>())
      v = Value::object(make_ref<ClassMethod>(v));
    cls->dict.set(e.symbol, std::move(v));
  }
  cls->track(interp.machine().tracked());
  finish_class(interp, *cls, loc);
  bump_class_epoch();
  return Value::object(std::move(cls));
}

// ---- builtins -----------------------------------------------------------------------------------

void install_class_builtins(Interpreter &interp, Scope &scope) {
  Machine::ClassModel &model = interp.machine().classes();
  scope.set("object", Value::object(model.object));
  for (const auto &[name, base] : kExceptions)
    scope.set(name, Value::object(model.exceptions.at(name)));
  scope.set("NotImplemented", not_implemented());
  scope.set("staticmethod", builtin("staticmethod", [](Interpreter &, CallArgs &a) {
              if (a.positional.size() != 1)
                raise_python("TypeError",
                             "staticmethod expected 1 argument, got " + std::to_string(a.positional.size()));
              return Value::object(make_ref<StaticMethod>(a.positional[0]));
            }));
  scope.set("classmethod", builtin("classmethod", [](Interpreter &, CallArgs &a) {
              if (a.positional.size() != 1)
                raise_python("TypeError",
                             "classmethod expected 1 argument, got " + std::to_string(a.positional.size()));
              return Value::object(make_ref<ClassMethod>(a.positional[0]));
            }));
  scope.set("property", builtin("property", [](Interpreter &, CallArgs &a) {
              auto p = make_ref<Property>();
              Value *parts[] = {&p->fget, &p->fset, &p->fdel};
              for (std::size_t k = 0; k < a.positional.size() && k < 3; ++k)
                *parts[k] = a.positional[k];
              for (const auto &[key, v] : a.keywords) {
                if (key == "fget")
                  p->fget = v;
                else if (key == "fset")
                  p->fset = v;
                else if (key == "fdel")
                  p->fdel = v;
                else if (key != "doc")
                  raise_python("TypeError", "property() got an unexpected keyword argument '" + key + "'");
              }
              return Value::object(std::move(p));
            }));
  scope.set("super", builtin("super", [](Interpreter &, CallArgs &a) {
              if (a.positional.empty())
                raise_python("RuntimeError", "super(): no arguments");
              if (a.positional.size() != 2 || !a.positional[0].as<ClassObject>())
                raise_python("TypeError", "super() argument 1 must be a type");
              return Value::object(make_ref<SuperObject>(a.positional[0].ref_as<ClassObject>(), a.positional[1]));
            }));
  scope.set("issubclass", builtin("issubclass", [](Interpreter &in, CallArgs &a) {
              if (a.positional.size() != 2)
                raise_python("TypeError",
                             "issubclass expected 2 arguments, got " + std::to_string(a.positional.size()));
              auto *c = a.positional[0].as<ClassObject>();
              if (!c && !a.positional[0].as<TypeObject>())
                raise_python("TypeError", "issubclass() arg 1 must be a class");
              auto test = [&](const Value &b) -> bool {
                if (auto *bc = b.as<ClassObject>())
                  return c && (c->is_subclass_of(*bc) || bc == &object_class(in));
                if (auto *bt = b.as<TypeObject>()) {
                  if (auto *t = a.positional[0].as<TypeObject>())
                    return t->name == bt->name || (bt->name == "int" && t->name == "bool");
                  return c && c->native == bt->instance_kind && bt->instance_kind != K::None;
                }
                raise_python("TypeError", "issubclass() arg 2 must be a class, a tuple of classes, or a union");
              };
              const Value &b = a.positional[1];
              if (b.kind == K::Tuple) {
                for (const Value &x : b.seq().items)
                  if (test(x))
                    return Value::boolean(true);
                return Value::boolean(false);
              }
              return Value::boolean(test(b));
            }));
}

} // namespace nkicc::eval
