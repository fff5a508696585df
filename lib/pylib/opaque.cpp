// Placeholders for what nkicc does not model: a module it does not know (`torch`), and a real
// name it does not model yet (`nl.softmax`). At module level they are harmless (attributes and
// calls give further placeholders); used inside a kernel they raise an error naming the module,
// or saying nkicc does not model the name yet.
#include "common.h"

#include "nkicc/trace/numpy.h"
#include "unmodelled.h"

namespace nkicc::trace {

using python::BinOpKind;
using python::CmpOpKind;

std::string_view OpaqueObject::module_name() const {
  std::string_view p = path_;
  return p.substr(0, p.find_first_of(".(["));
}

std::shared_ptr<OpaqueObject> OpaqueObject::with_use_message(std::string path, std::string message) {
  auto out = std::make_shared<OpaqueObject>(std::move(path));
  out->use_message_ = std::make_shared<const std::string>(std::move(message));
  return out;
}

void OpaqueObject::raise_use(std::string_view what) const {
  if (use_message_)
    raise_error("unmodelled", *use_message_);
  if (unmodelled_)
    pylib::raise_unmodelled(std::string_view(path_).substr(0, path_.find_first_of("([")));
  std::string message = "cannot use '" + path_ + "' (" + std::string(what) + ") in a kernel: module '" +
                        std::string(module_name()) + "' is not modelled by nkicc";
  if (searched_ && !searched_->empty())
    message += ", and no kernel file defines it (nkicc looked for " + *searched_ + ")";
  raise_python("TypeError", message);
}

Value OpaqueObject::derive(std::string path) const {
  auto out = std::make_shared<OpaqueObject>(std::move(path), unmodelled_);
  out->searched_ = searched_;
  out->use_message_ = use_message_;
  return Value::object(std::move(out));
}

std::optional<Value> OpaqueObject::get_attr(Interpreter &, std::string_view name) {
  return derive(path_ + "." + std::string(name));
}
Value OpaqueObject::call(Interpreter &interp, CallArgs &args) {
  // Host code (module level, and the functions it calls) may call anything; a traced kernel
  // calling an unmodelled module would compute nothing nkicc can see (SPEC §3).
  if (interp.tracing_kernel())
    raise_use("a call");
  // A decorator from a module nkicc does not model (`@torch_neuronx.nki_jit`,
  // `@pytest.mark.parametrize(...)`) leaves the function it decorates callable.
  // A dtype or builtin type is an argument, never what a decorator decorates:
  // `np.random.rand(4, 8).astype(nl.bfloat16)` is another placeholder, not the dtype.
  if (args.positional.size() == 1 && args.keywords.empty()) {
    const Value &f = args.positional[0];
    bool is_type = f.as<DTypeObject>() || f.as<TypeObject>() || f.as<ExceptionTypeObject>();
    if (!is_type && (f.as<FunctionObject>() || (f.kind == Value::Kind::Object && f.object()->is_callable())))
      return f;
  }
  return derive(path_ + "()");
}
void OpaqueObject::set_attr(Interpreter &interp, std::string_view, const Value &) {
  if (interp.tracing_kernel())
    raise_use("attribute assignment");
}
Value OpaqueObject::get_item(Interpreter &interp, const Value &) {
  if (interp.tracing_kernel())
    raise_use("indexing");
  return derive(path_ + "[]");
}
void OpaqueObject::set_item(Interpreter &interp, const Value &, const Value &) {
  if (interp.tracing_kernel())
    raise_use("item assignment");
}
std::optional<Value> OpaqueObject::binary_op(Interpreter &interp, BinOpKind, const Value &, bool) {
  if (interp.tracing_kernel())
    raise_use("an arithmetic operand");
  return derive(path_);
}
std::optional<Value> OpaqueObject::unary_op(Interpreter &interp, python::UnaryOpKind) {
  if (interp.tracing_kernel())
    raise_use("an arithmetic operand");
  return derive(path_);
}
std::optional<Value> OpaqueObject::compare(Interpreter &interp, CmpOpKind op, const Value &other, bool) {
  if (interp.tracing_kernel())
    raise_use("a comparison operand");
  if (op == CmpOpKind::Eq || op == CmpOpKind::NotEq)
    return std::nullopt;
  (void)other;
  return Value::boolean(false);
}
bool OpaqueObject::truthy(Interpreter &interp) {
  if (interp.tracing_kernel())
    raise_use("a condition");
  return true;
}
std::unique_ptr<Iterator> OpaqueObject::iterate(Interpreter &interp) {
  if (interp.tracing_kernel())
    raise_use("an iterable");
  struct Empty : Iterator {
    bool next(Value &) override { return false; }
  };
  return std::make_unique<Empty>();
}

} // namespace nkicc::trace
