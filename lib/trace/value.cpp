// Python's built-in values for the tracer: construction, repr()/str() as CPython prints them,
// and the default behaviour of Object hooks (CPython's TypeError and AttributeError texts).
#include "nkicc/trace/value.h"

#include "nkicc/cache/py_repr.h"
#include "nkicc/trace/interpreter.h"

#include <algorithm>

namespace nkicc::trace {

Value Value::str(std::string v) {
  auto data = make_ref<StrData>();
  data->text = std::move(v);
  return from_heap(Kind::Str, std::move(data));
}
Value Value::tuple(std::vector<Value> items) {
  auto data = make_ref<SeqData>();
  data->items = std::move(items);
  return from_heap(Kind::Tuple, std::move(data));
}
Value Value::list(std::vector<Value> items) {
  auto data = make_ref<SeqData>();
  data->items = std::move(items);
  return from_heap(Kind::List, std::move(data));
}
Value Value::dict(std::vector<std::pair<Value, Value>> entries) {
  auto data = make_ref<DictData>();
  data->entries = std::move(entries);
  return from_heap(Kind::Dict, std::move(data));
}
Value Value::slice(Value lower, Value upper, Value step) {
  auto data = make_ref<SliceData>();
  data->lower = std::move(lower);
  data->upper = std::move(upper);
  data->step = std::move(step);
  return from_heap(Kind::Slice, std::move(data));
}
Value Value::object(std::shared_ptr<Object> obj) {
  Object *raw = obj.get();
  if (raw->ref_count() == 0)
    raw->anchor_ = std::move(obj);
  return object(Ref<Object>(raw));
}
Value Value::object(Ref<Object> obj) {
  Value out;
  out.kind = Kind::Object;
  out.ptr_ = obj.release_ownership();
  return out;
}

const std::string &Value::str_text() const { return static_cast<StrData *>(ptr_)->text; }
SeqData &Value::seq() const { return *static_cast<SeqData *>(ptr_); }
DictData &Value::dict_data() const { return *static_cast<DictData *>(ptr_); }
SliceData &Value::slice_data() const { return *static_cast<SliceData *>(ptr_); }
Object *Value::object() const { return kind == Kind::Object ? static_cast<Object *>(ptr_) : nullptr; }

std::shared_ptr<Object> Object::shared_self() {
  if (!anchor_)
    anchor_ = std::shared_ptr<Object>(this, [](Object *o) { delete o; });
  return anchor_;
}
void Object::last_release() {
  if (!anchor_) {
    delete this;
    return;
  }
  // Dropping the shared ownership may destroy this object: nothing may touch it afterwards.
  std::shared_ptr<Object> keep = std::move(anchor_);
}

// A kernel may build a list nested a million deep (`a = [a]` in a loop); destroying it
// recursively would overflow the C++ stack, so nested containers are released from a worklist.
namespace {
thread_local std::vector<HeapData *> *g_release_list = nullptr;
/// The worklist's storage, kept between releases so that destroying a tuple does not allocate.
thread_local std::vector<HeapData *> g_release_storage;

/// Releases `v`; when it is the last reference to a container, the container's destruction is
/// deferred to the worklist.
void defer_release(std::vector<HeapData *> &out, Value &v) {
  HeapData *p = v.heap_data();
  if (!p)
    return;
  if (p->ref_count() == 1) {
    out.push_back(p); // the worklist now owns this reference
    ::new (&v) Value();
  } else {
    v = Value();
  }
}

template <class F> void release_children(F &&collect) {
  bool owner = g_release_list == nullptr;
  if (owner)
    g_release_list = &g_release_storage;
  collect(*g_release_list);
  if (owner) {
    std::vector<HeapData *> &local = g_release_storage;
    while (!local.empty()) {
      HeapData *item = local.back();
      local.pop_back();
      item->release();
    }
    if (local.capacity() > 4096) // after a huge nested container, give the memory back
      std::vector<HeapData *>().swap(local);
    g_release_list = nullptr;
  }
}
} // namespace

SeqData::~SeqData() {
  if (items.empty())
    return;
  release_children([this](std::vector<HeapData *> &out) {
    for (Value &v : items)
      defer_release(out, v);
  });
}
DictData::~DictData() {
  if (entries.empty())
    return;
  release_children([this](std::vector<HeapData *> &out) {
    for (auto &[k, v] : entries) {
      defer_release(out, k);
      defer_release(out, v);
    }
  });
}

std::string_view loop_kind_name(LoopKind kind) {
  switch (kind) {
  case LoopKind::None:
    return "none";
  case LoopKind::Range:
    return "range";
  case LoopKind::Affine:
    return "affine_range";
  case LoopKind::Sequential:
    return "sequential_range";
  case LoopKind::Static:
    return "static_range";
  }
  return "none";
}

const Value *CallArgs::keyword(std::string_view name) const {
  for (const auto &[key, value] : keywords)
    if (key == name)
      return &value;
  return nullptr;
}

// ---- Object defaults ----------------------------------------------------------------------------

static std::string quoted_type(const Object &obj) { return "'" + std::string(obj.type_name()) + "' object"; }

std::optional<Value> Object::get_attr(Interpreter &, std::string_view) { return std::nullopt; }
void Object::set_attr(Interpreter &, std::string_view name, const Value &) {
  raise_python("AttributeError", quoted_type(*this) + " has no attribute '" + std::string(name) + "'");
}
Value Object::call(Interpreter &, CallArgs &) { raise_python("TypeError", quoted_type(*this) + " is not callable"); }
Value Object::get_item(Interpreter &, const Value &) {
  raise_python("TypeError", quoted_type(*this) + " is not subscriptable");
}
void Object::set_item(Interpreter &, const Value &, const Value &) {
  raise_python("TypeError", quoted_type(*this) + " does not support item assignment");
}
void Object::aug_set_item(Interpreter &interp, const Value &key, python::BinOpKind op, const Value &value) {
  Value current = get_item(interp, key);
  Value result = interp.binary_op(op, current, value);
  set_item(interp, key, result);
}
std::optional<Value> Object::binary_op(Interpreter &, python::BinOpKind, const Value &, bool) { return std::nullopt; }
std::optional<Value> Object::unary_op(Interpreter &, python::UnaryOpKind) { return std::nullopt; }
std::optional<Value> Object::compare(Interpreter &, python::CmpOpKind, const Value &, bool) { return std::nullopt; }
bool Object::truthy(Interpreter &) { return true; }
std::unique_ptr<Iterator> Object::iterate(Interpreter &) { return nullptr; }
std::string Object::repr() const { return "<" + std::string(type_name()) + " object>"; }

// ---- type names, repr, str ----------------------------------------------------------------------

std::string_view type_name(const Value &v) {
  switch (v.kind) {
  case Value::Kind::None:
    return "NoneType";
  case Value::Kind::Bool:
    return "bool";
  case Value::Kind::Int:
    return "int";
  case Value::Kind::Float:
    return "float";
  case Value::Kind::Str:
    return "str";
  case Value::Kind::Tuple:
    return "tuple";
  case Value::Kind::List:
    return "list";
  case Value::Kind::Dict:
    return "dict";
  case Value::Kind::Slice:
    return "slice";
  case Value::Kind::Ellipsis:
    return "ellipsis";
  case Value::Kind::Object:
    return v.object()->type_name();
  }
  return "object";
}

namespace {
// Containers that are being printed: a list that contains itself prints as `[...]`, as CPython.
thread_local std::vector<const HeapData *> g_repr_stack;

struct ReprGuard {
  bool active;
  explicit ReprGuard(const HeapData *p) : active(true) {
    if (g_repr_stack.size() >= 1000)
      raise_python("RecursionError", "maximum recursion depth exceeded while getting the repr of an object");
    g_repr_stack.push_back(p);
  }
  ~ReprGuard() { g_repr_stack.pop_back(); }
};
bool in_repr(const HeapData *p) { return std::find(g_repr_stack.begin(), g_repr_stack.end(), p) != g_repr_stack.end(); }

void append_repr(std::string &out, const Value &v) {
  switch (v.kind) {
  case Value::Kind::None:
    out += "None";
    return;
  case Value::Kind::Bool:
    out += v.b ? "True" : "False";
    return;
  case Value::Kind::Int:
    out += std::to_string(v.i);
    return;
  case Value::Kind::Float:
    append_py_float_repr(out, v.f);
    return;
  case Value::Kind::Str:
    append_py_str_repr(out, v.str_text());
    return;
  case Value::Kind::Ellipsis:
    out += "Ellipsis";
    return;
  case Value::Kind::Object:
    out += v.object()->repr();
    return;
  case Value::Kind::Slice: {
    const SliceData &s = v.slice_data();
    out += "slice(";
    append_repr(out, s.lower);
    out += ", ";
    append_repr(out, s.upper);
    out += ", ";
    append_repr(out, s.step);
    out += ")";
    return;
  }
  case Value::Kind::Tuple:
  case Value::Kind::List: {
    bool list = v.kind == Value::Kind::List;
    if (list && in_repr(v.heap_data())) {
      out += "[...]";
      return;
    }
    ReprGuard guard(v.heap_data());
    const auto &items = v.seq().items;
    out += list ? '[' : '(';
    for (std::size_t k = 0; k < items.size(); ++k) {
      if (k)
        out += ", ";
      append_repr(out, items[k]);
    }
    if (!list && items.size() == 1)
      out += ',';
    out += list ? ']' : ')';
    return;
  }
  case Value::Kind::Dict: {
    if (in_repr(v.heap_data())) {
      out += "{...}";
      return;
    }
    ReprGuard guard(v.heap_data());
    out += '{';
    bool first = true;
    for (const auto &[key, value] : v.dict_data().entries) {
      if (!first)
        out += ", ";
      first = false;
      append_repr(out, key);
      out += ": ";
      append_repr(out, value);
    }
    out += '}';
    return;
  }
  }
}
} // namespace

std::string repr(const Value &v) {
  std::string out;
  append_repr(out, v);
  return out;
}

std::string str(const Value &v) {
  if (v.kind == Value::Kind::Str)
    return v.str_text();
  if (Object *obj = v.object())
    return obj->to_str();
  return repr(v);
}

bool is_hashable(const Value &v) {
  switch (v.kind) {
  case Value::Kind::List:
  case Value::Kind::Dict:
  case Value::Kind::Slice:
    return false;
  case Value::Kind::Tuple:
    for (const Value &item : v.seq().items)
      if (!is_hashable(item))
        return false;
    return true;
  default:
    return true;
  }
}

static bool numeric_equal(const Value &a, const Value &b) {
  auto as_int = [](const Value &v) { return v.kind == Value::Kind::Bool ? std::int64_t(v.b) : v.i; };
  if (a.kind != Value::Kind::Float && b.kind != Value::Kind::Float)
    return as_int(a) == as_int(b);
  if (a.kind == Value::Kind::Float && b.kind == Value::Kind::Float)
    return a.f == b.f;
  // int vs float, exactly: long double holds every int64.
  long double x = a.kind == Value::Kind::Float ? static_cast<long double>(a.f) : static_cast<long double>(as_int(a));
  long double y = b.kind == Value::Kind::Float ? static_cast<long double>(b.f) : static_cast<long double>(as_int(b));
  return x == y;
}

bool values_equal(const Value &a, const Value &b) {
  if (a.is_number() && b.is_number())
    return numeric_equal(a, b);
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case Value::Kind::None:
  case Value::Kind::Ellipsis:
    return true;
  case Value::Kind::Str:
    return a.same_heap(b) || a.str_text() == b.str_text();
  case Value::Kind::Tuple:
  case Value::Kind::List: {
    if (a.same_heap(b))
      return true;
    const auto &x = a.seq().items, &y = b.seq().items;
    if (x.size() != y.size())
      return false;
    for (std::size_t k = 0; k < x.size(); ++k)
      if (!values_equal(x[k], y[k]))
        return false;
    return true;
  }
  case Value::Kind::Dict: {
    const auto &x = a.dict_data().entries, &y = b.dict_data().entries;
    if (x.size() != y.size())
      return false;
    for (const auto &[key, value] : x) {
      const Value *other = dict_find(b.dict_data(), key);
      if (!other || !values_equal(value, *other))
        return false;
    }
    return true;
  }
  case Value::Kind::Slice: {
    const SliceData &x = a.slice_data(), &y = b.slice_data();
    return values_equal(x.lower, y.lower) && values_equal(x.upper, y.upper) && values_equal(x.step, y.step);
  }
  default:
    return a.same_heap(b);
  }
}

Value *dict_find(DictData &dict, const Value &key) {
  for (auto &[k, v] : dict.entries)
    if (values_equal(k, key))
      return &v;
  return nullptr;
}

void raise_error(std::string id, std::string message, SourceLoc loc) {
  throw TraceError{std::move(message), std::move(id), loc, {}, Value()};
}

} // namespace nkicc::trace
