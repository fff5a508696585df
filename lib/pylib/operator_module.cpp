// The operator module: Python's operators as functions (operator.add, operator.mul, ...), and
// itemgetter, attrgetter and methodcaller, through the interpreter's own operators so that they
// behave exactly as the operators do (on tiles too).
#include "methods.h"
#include "nkicc/trace/pylib.h"
#include "stdlib.h"

namespace nkicc::trace::pylib {

namespace {

using python::BinOpKind;
using python::CmpOpKind;
using python::UnaryOpKind;

/// A callable object with a repr of its own (itemgetter(1), attrgetter('a')).
class Getter : public Object {
public:
  Getter(std::string repr_text, BuiltinFunction::Impl impl) : repr_(std::move(repr_text)), impl_(std::move(impl)) {}
  std::string_view type_name() const override { return kind_; }
  bool is_callable() const override { return true; }
  Value call(Interpreter &interp, CallArgs &args) override { return impl_(interp, args); }
  std::string repr() const override { return repr_; }
  std::string kind_ = "operator.itemgetter";

private:
  std::string repr_;
  BuiltinFunction::Impl impl_;
};

std::string args_repr(const std::vector<Value> &values) {
  std::string out;
  for (std::size_t k = 0; k < values.size(); ++k)
    out += (k ? ", " : "") + trace::repr(values[k]);
  return out;
}

Value attr_path(Interpreter &interp, Value v, const std::string &dotted) {
  std::size_t at = 0;
  while (true) {
    std::size_t dot = dotted.find('.', at);
    v = interp.get_attr(v, std::string_view(dotted).substr(at, dot == std::string::npos ? dot : dot - at));
    if (dot == std::string::npos)
      return v;
    at = dot + 1;
  }
}

} // namespace

std::shared_ptr<ModuleObject> make_operator_module(Interpreter &) {
  auto m = make_library_module("operator", "operator");
  auto binary = [&](std::initializer_list<const char *> names, BinOpKind op) {
    for (const char *n : names) {
      std::string name = n;
      define_function(*m, name, [name, op](Interpreter &interp, CallArgs &a) {
        no_keywords(name, a);
        if (a.positional.size() != 2)
          raise_python("TypeError", name + " expected 2 arguments, got " + std::to_string(a.positional.size()));
        return interp.binary_op(op, a.positional[0], a.positional[1]);
      });
    }
  };
  binary({"add", "concat"}, BinOpKind::Add);
  binary({"sub"}, BinOpKind::Sub);
  binary({"mul"}, BinOpKind::Mult);
  binary({"truediv"}, BinOpKind::Div);
  binary({"floordiv"}, BinOpKind::FloorDiv);
  binary({"mod"}, BinOpKind::Mod);
  binary({"pow"}, BinOpKind::Pow);
  binary({"lshift"}, BinOpKind::LShift);
  binary({"rshift"}, BinOpKind::RShift);
  binary({"and_"}, BinOpKind::BitAnd);
  binary({"or_"}, BinOpKind::BitOr);
  binary({"xor"}, BinOpKind::BitXor);
  binary({"matmul"}, BinOpKind::MatMult);
  // The in-place forms: an object's own in-place update, else the plain operator.
  auto inplace = [&](const char *n, BinOpKind op) {
    std::string name = n;
    define_function(*m, name, [name, op](Interpreter &interp, CallArgs &a) {
      no_keywords(name, a);
      if (a.positional.size() != 2)
        raise_python("TypeError", name + " expected 2 arguments, got " + std::to_string(a.positional.size()));
      const Value &x = a.positional[0];
      if (Object *obj = x.object())
        if (std::optional<Value> out = obj->inplace_op(interp, op, a.positional[1]))
          return *out;
      if (x.kind == K::List && (op == BinOpKind::Add || op == BinOpKind::Mult)) {
        CallArgs extend;
        extend.positional.push_back(op == BinOpKind::Add ? a.positional[1]
                                                         : interp.binary_op(BinOpKind::Mult, x, a.positional[1]));
        if (op == BinOpKind::Mult)
          x.seq().items.clear();
        interp.call_method(x, "extend", extend);
        return x;
      }
      return interp.binary_op(op, x, a.positional[1]);
    });
  };
  inplace("iadd", BinOpKind::Add);
  inplace("iconcat", BinOpKind::Add);
  inplace("isub", BinOpKind::Sub);
  inplace("imul", BinOpKind::Mult);
  inplace("itruediv", BinOpKind::Div);
  inplace("ifloordiv", BinOpKind::FloorDiv);
  inplace("imod", BinOpKind::Mod);
  inplace("ipow", BinOpKind::Pow);
  inplace("ilshift", BinOpKind::LShift);
  inplace("irshift", BinOpKind::RShift);
  inplace("iand", BinOpKind::BitAnd);
  inplace("ior", BinOpKind::BitOr);
  inplace("ixor", BinOpKind::BitXor);
  inplace("imatmul", BinOpKind::MatMult);
  auto compare = [&](const char *n, CmpOpKind op) {
    std::string name = n;
    define_function(*m, name, [name, op](Interpreter &interp, CallArgs &a) {
      no_keywords(name, a);
      if (a.positional.size() != 2)
        raise_python("TypeError", name + " expected 2 arguments, got " + std::to_string(a.positional.size()));
      return interp.compare(op, a.positional[0], a.positional[1]);
    });
  };
  compare("eq", CmpOpKind::Eq);
  compare("ne", CmpOpKind::NotEq);
  compare("lt", CmpOpKind::Lt);
  compare("le", CmpOpKind::LtE);
  compare("gt", CmpOpKind::Gt);
  compare("ge", CmpOpKind::GtE);
  compare("is_", CmpOpKind::Is);
  compare("is_not", CmpOpKind::IsNot);
  auto unary = [&](const char *n, UnaryOpKind op) {
    std::string name = n;
    define_function(*m, name, [name, op](Interpreter &interp, CallArgs &a) {
      no_keywords(name, a);
      arity(name, a, 1, 1);
      return interp.unary_op(op, a.positional[0]);
    });
  };
  unary("neg", UnaryOpKind::USub);
  unary("pos", UnaryOpKind::UAdd);
  unary("invert", UnaryOpKind::Invert);
  unary("inv", UnaryOpKind::Invert);
  unary("not_", UnaryOpKind::Not);
  define_function(*m, "truth", [](Interpreter &interp, CallArgs &a) {
    arity("truth", a, 1, 1);
    return Value::boolean(interp.truthy(a.positional[0]));
  });
  define_function(*m, "abs", [](Interpreter &interp, CallArgs &a) {
    arity("abs", a, 1, 1);
    Value *builtin = interp.builtins().find_local("abs");
    return interp.call(*builtin, a);
  });
  define_function(*m, "index", [](Interpreter &, CallArgs &a) {
    arity("index", a, 1, 1);
    return Value::integer(index_arg(a.positional[0]));
  });
  define_function(*m, "contains", [](Interpreter &interp, CallArgs &a) {
    if (a.positional.size() != 2)
      raise_python("TypeError", "contains expected 2 arguments, got " + std::to_string(a.positional.size()));
    return Value::boolean(interp.contains(a.positional[0], a.positional[1]));
  });
  define_function(*m, "countOf", [](Interpreter &interp, CallArgs &a) {
    if (a.positional.size() != 2)
      raise_python("TypeError", "countOf expected 2 arguments, got " + std::to_string(a.positional.size()));
    std::int64_t n = 0;
    for (const Value &x : interp.to_list(a.positional[0]))
      n += items_equal(interp, x, a.positional[1]);
    return Value::integer(n);
  });
  define_function(*m, "indexOf", [](Interpreter &interp, CallArgs &a) {
    if (a.positional.size() != 2)
      raise_python("TypeError", "indexOf expected 2 arguments, got " + std::to_string(a.positional.size()));
    std::int64_t k = 0;
    for (const Value &x : interp.to_list(a.positional[0])) {
      if (items_equal(interp, x, a.positional[1]))
        return Value::integer(k);
      ++k;
    }
    raise_python("ValueError", "sequence.index(x): x not in sequence");
  });
  define_function(*m, "getitem", [](Interpreter &interp, CallArgs &a) {
    if (a.positional.size() != 2)
      raise_python("TypeError", "getitem expected 2 arguments, got " + std::to_string(a.positional.size()));
    return interp.get_item(a.positional[0], a.positional[1]);
  });
  define_function(*m, "setitem", [](Interpreter &interp, CallArgs &a) {
    if (a.positional.size() != 3)
      raise_python("TypeError", "setitem expected 3 arguments, got " + std::to_string(a.positional.size()));
    interp.set_item(a.positional[0], a.positional[1], a.positional[2]);
    return Value::none();
  });
  define_function(*m, "itemgetter", [](Interpreter &, CallArgs &a) {
    no_keywords("itemgetter", a);
    if (a.positional.empty())
      raise_python("TypeError", "itemgetter expected 1 argument, got 0");
    std::vector<Value> keys = a.positional;
    auto g = std::make_shared<Getter>("operator.itemgetter(" + args_repr(keys) + ")",
                                      [keys](Interpreter &interp, CallArgs &c) {
                                        arity("itemgetter", c, 1, 1);
                                        if (keys.size() == 1)
                                          return interp.get_item(c.positional[0], keys[0]);
                                        std::vector<Value> out;
                                        for (const Value &k : keys)
                                          out.push_back(interp.get_item(c.positional[0], k));
                                        return Value::tuple(std::move(out));
                                      });
    return Value::object(g);
  });
  define_function(*m, "attrgetter", [](Interpreter &, CallArgs &a) {
    no_keywords("attrgetter", a);
    if (a.positional.empty())
      raise_python("TypeError", "attrgetter expected 1 argument, got 0");
    std::vector<std::string> names;
    for (const Value &v : a.positional) {
      if (v.kind != K::Str)
        raise_python("TypeError", "attribute name must be a string");
      names.push_back(v.str_text());
    }
    auto g = std::make_shared<Getter>("operator.attrgetter(" + args_repr(a.positional) + ")",
                                      [names](Interpreter &interp, CallArgs &c) {
                                        arity("attrgetter", c, 1, 1);
                                        if (names.size() == 1)
                                          return attr_path(interp, c.positional[0], names[0]);
                                        std::vector<Value> out;
                                        for (const std::string &n : names)
                                          out.push_back(attr_path(interp, c.positional[0], n));
                                        return Value::tuple(std::move(out));
                                      });
    g->kind_ = "operator.attrgetter";
    return Value::object(g);
  });
  define_function(*m, "methodcaller", [](Interpreter &, CallArgs &a) {
    if (a.positional.empty() || a.positional[0].kind != K::Str)
      raise_python("TypeError", "method name must be a string");
    std::string name = a.positional[0].str_text();
    std::vector<Value> bound(a.positional.begin() + 1, a.positional.end());
    auto keywords = a.keywords;
    std::string text = "operator.methodcaller(" + trace::repr(a.positional[0]);
    for (const Value &v : bound)
      text += ", " + trace::repr(v);
    for (const auto &[k, v] : keywords)
      text += ", " + k + "=" + trace::repr(v);
    auto g = std::make_shared<Getter>(text + ")", [name, bound, keywords](Interpreter &interp, CallArgs &c) {
      arity("methodcaller", c, 1, 1);
      CallArgs call_args;
      call_args.positional = bound;
      call_args.keywords = keywords;
      return interp.call(interp.get_attr(c.positional[0], name), call_args);
    });
    g->kind_ = "operator.methodcaller";
    return Value::object(g);
  });
  return m;
}

} // namespace nkicc::trace::pylib
