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
  for (auto &[key, value] : entries)
    data->set(nullptr, key, std::move(value));
  return from_heap(Kind::Dict, std::move(data));
}
Value Value::dict(Ref<DictData> data) { return from_heap(Kind::Dict, std::move(data)); }
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
  if (entries_.empty())
    return;
  release_children([this](std::vector<HeapData *> &out) {
    for (auto &[k, v] : entries_) {
      defer_release(out, k);
      defer_release(out, v);
    }
  });
}
void release_nested(Value *values, std::size_t count) {
  if (count == 0)
    return;
  release_children([values, count](std::vector<HeapData *> &out) {
    for (std::size_t k = 0; k < count; ++k)
      defer_release(out, values[k]);
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
std::optional<std::int64_t> Object::hash(Interpreter &) { return identity_hash(); }
std::optional<std::int64_t> Object::length(Interpreter &) { return std::nullopt; }
std::optional<bool> Object::contains(Interpreter &, const Value &) { return std::nullopt; }

namespace {
thread_local std::uint32_t g_next_serial = 0;
}
std::int64_t Object::identity_hash() const {
  if (serial_ == 0) {
    serial_ = ++g_next_serial;
    if (serial_ == 0) // after 2^32 objects, numbering wraps: hashes may then collide, never -1
      serial_ = ++g_next_serial;
  }
  // Spread the serials as CPython spreads addresses (rotated by 4 bits), away from small ints.
  std::uint64_t x = (static_cast<std::uint64_t>(serial_) << 4) | 0x5bd1e995'00000000ULL;
  return static_cast<std::int64_t>(x);
}

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
    switch (v.dict_data().flavor) {
    case DictData::Flavor::OrderedDict:
      return "OrderedDict";
    case DictData::Flavor::DefaultDict:
      return "defaultdict";
    case DictData::Flavor::Counter:
      return "Counter";
    case DictData::Flavor::Dict:
      break;
    }
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

bool in_repr(const HeapData *p) { return ReprNesting::active(p); }
using ReprGuard = ReprNesting;

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
    const DictData &d = v.dict_data();
    if (in_repr(v.heap_data())) {
      out += d.flavor == DictData::Flavor::Dict ? "{...}" : "...";
      return;
    }
    ReprGuard guard(v.heap_data());
    auto entries = [&](std::string_view open, std::string_view sep, std::string_view close) {
      out += open;
      bool first = true;
      for (const auto &[key, value] : d.items()) {
        if (!first)
          out += ", ";
        first = false;
        if (sep == ", ")
          out += '(';
        append_repr(out, key);
        out += sep;
        append_repr(out, value);
        if (sep == ", ")
          out += ')';
      }
      out += close;
    };
    switch (d.flavor) {
    case DictData::Flavor::Dict:
      entries("{", ": ", "}");
      return;
    case DictData::Flavor::OrderedDict: // 3.11: OrderedDict([('a', 1)])
      if (d.empty()) {
        out += "OrderedDict()";
        return;
      }
      entries("OrderedDict([", ", ", "])");
      return;
    case DictData::Flavor::DefaultDict:
      out += "defaultdict(";
      append_repr(out, d.default_factory);
      entries(", {", ": ", "})");
      return;
    case DictData::Flavor::Counter:
      if (d.empty()) {
        out += "Counter()";
        return;
      }
      out += "Counter(";
      // most_common() order: by count, descending, ties in insertion order.
      {
        std::vector<const DictData::Item *> order;
        for (const auto &item : d.items())
          order.push_back(&item);
        std::stable_sort(order.begin(), order.end(), [](const DictData::Item *a, const DictData::Item *b) {
          auto count = [](const Value &c) {
            return c.kind == Value::Kind::Float ? c.f : c.kind == Value::Kind::Int ? static_cast<double>(c.i) : 0.0;
          };
          return count(a->second) > count(b->second);
        });
        out += '{';
        for (std::size_t k = 0; k < order.size(); ++k) {
          if (k)
            out += ", ";
          append_repr(out, order[k]->first);
          out += ": ";
          append_repr(out, order[k]->second);
        }
        out += "})";
      }
      return;
    }
    return;
  }
  }
}
} // namespace

ReprNesting::ReprNesting(const HeapData *self) {
  if (g_repr_stack.size() >= 1000)
    raise_python("RecursionError", "maximum recursion depth exceeded while getting the repr of an object");
  g_repr_stack.push_back(self);
}
ReprNesting::~ReprNesting() { g_repr_stack.pop_back(); }
bool ReprNesting::active(const HeapData *self) {
  return std::find(g_repr_stack.begin(), g_repr_stack.end(), self) != g_repr_stack.end();
}

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

void raise_error(std::string id, std::string message, SourceLoc loc) {
  throw TraceError{std::move(message), std::move(id), loc, {}, Value()};
}

} // namespace nkicc::trace
