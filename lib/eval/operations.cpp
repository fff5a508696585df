// The machine's slower operations, each one instruction's work: names and attributes (with their
// inline caches), loop setup, unpacking, augmented assignment, displays and f-strings,
// imports, raising and catching, `with`, class statements, `del`.
#include "eval/machine.h"
#include "nkicc/trace/pylib.h"

#include "eval/compiler.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace nkicc::eval {

using namespace python;
using trace::ModuleObject;
using trace::Object;
using trace::Scope;
using trace::TraceError;
using K = Value::Kind;

namespace {

std::string ascii_of(const std::string &r) {
  std::string ascii;
  for (std::size_t k = 0; k < r.size();) {
    unsigned char c = static_cast<unsigned char>(r[k]);
    if (c < 0x80) {
      ascii += static_cast<char>(c);
      ++k;
      continue;
    }
    std::size_t len = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (std::size_t m = 1; m < len && k + m < r.size(); ++m)
      cp = (cp << 6) | (static_cast<unsigned char>(r[k + m]) & 0x3F);
    k += len;
    char buf[16];
    std::snprintf(buf, sizeof buf,
                  cp < 0x100     ? "\\x%02x"
                  : cp < 0x10000 ? "\\u%04x"
                                 : "\\U%08x",
                  static_cast<unsigned>(cp));
    ascii += buf;
  }
  return ascii;
}

} // namespace

// ---- names --------------------------------------------------------------------------------------

Value Machine::load_global(Frame &f, const Insn &in) {
  GlobalCache &gc = const_cast<Code *>(f.code)->globals[in.d];
  Scope &builtins = *in_.builtins_;
  if (f.globals) {
    if (gc.globals == f.globals && gc.globals_version == f.globals->version() &&
        gc.builtins_version == builtins.version())
      return *gc.slot;
    if (Value *v = f.globals->find_local(gc.name)) {
      gc = GlobalCache{gc.name, f.globals, f.globals->version(), builtins.version(), v};
      return *v;
    }
  }
  if (Value *v = builtins.find_local(gc.name)) {
    if (f.globals)
      gc = GlobalCache{gc.name, f.globals, f.globals->version(), builtins.version(), v};
    return *v;
  }
  raise_python("NameError", "name '" + std::string(gc.name.name()) + "' is not defined");
}

Value Machine::load_name(Frame &f, const Insn &in) {
  const GlobalCache &gc = f.code->globals[in.d];
  if (f.ns && f.ns != f.globals)
    if (Value *v = f.ns->find_local(gc.name))
      return *v;
  return load_global(f, in);
}

void Machine::store_name(Frame &f, Symbol name, const Value &v) {
  Scope *ns = f.ns ? f.ns : f.globals;
  ns->set(name, v);
}

void Machine::bind_name(Frame &f, const Insn &in) {
  Symbol name;
  const Value *v = nullptr;
  switch (in.op) {
  case Op::StoreGlobal:
  case Op::StoreName:
    name = f.code->names[in.d];
    v = &f.regs[in.a];
    break;
  case Op::StoreDeref:
    name = f.code->names[in.d];
    v = &f.regs[in.b];
    break;
  case Op::ForNext:
  case Op::ForLoop:
    name = f.code->local_names[in.b];
    v = &f.regs[in.b];
    break;
  default:
    name = f.code->local_names[in.a];
    v = &f.regs[in.a];
    break;
  }
  if (Object *obj = v->object())
    obj->on_bind(name.name());
}

Value Machine::load_attr(Frame &f, const Insn &in, const Value &obj) {
  AttrCache &ac = const_cast<Code *>(f.code)->attrs[in.d];
  // A plain module's attribute is its global (ModuleObject::get_attr), found by symbol.
  if (auto *module = exactly<ModuleObject>(obj)) {
    Scope &g = module->globals();
    if (ac.key == &g && ac.epoch == g.version())
      return *ac.slot;
    if (Value *global = g.find_local(ac.name)) {
      ac.key = &g;
      ac.epoch = g.version();
      ac.slot = global;
      return *global;
    }
  }
  if (auto *inst = exactly<InstanceObject>(obj)) {
    ClassObject *cls = inst->cls.get();
    if (!ac.probe(cls, class_epoch())) {
      ac.demote();
      AttrPlan p = cls->plan(ac.name);
      ac.key = cls;
      ac.epoch = class_epoch();
      ac.kind = p.kind;
      ac.index = p.index;
      ac.slot = p.value;
    }
    if (ac.kind == AttrPlan::Slot) {
      if (ac.index < inst->slots.size() && !is_unbound(inst->slots[ac.index]))
        return inst->slots[ac.index];
      if (ac.slot)
        return *ac.slot;
    } else if (ac.kind == AttrPlan::Method) {
      return Value::object(make_ref<BoundMethod>(obj, *ac.slot));
    }
  }
  return in_.get_attr(obj, ac.name.name(), f.code->locs[&in - f.code->insns.data()]);
}

void Machine::store_attr(Frame &f, const Insn &in) {
  const Value &obj = f.regs[in.a];
  AttrCache &ac = const_cast<Code *>(f.code)->attrs[in.d];
  if (auto *inst = exactly<InstanceObject>(obj)) {
    ClassObject *cls = inst->cls.get();
    // A store site's cache: kind kStoreSlot means "write slot index".
    if (!ac.probe(cls, class_epoch()) || ac.kind != kStoreSlot) {
      ac.demote();
      const Value *setattr = cls->lookup("__setattr__");
      const Value *cv = cls->lookup(ac.name);
      bool plain = (!setattr || setattr->as<trace::BuiltinFunction>()) && !cls->frozen &&
                   !(cv && (cv->as<Property>() || cv->as<InstanceObject>()));
      if (plain) {
        std::uint32_t k = *cls->slot_of(ac.name, true);
        ac.key = cls;
        ac.epoch = class_epoch();
        ac.kind = kStoreSlot;
        ac.index = k;
      } else {
        ac.key = nullptr;
      }
    }
    if (ac.key == cls) {
      inst->slot_to_store(ac.index) = f.regs[in.b];
      return;
    }
  }
  in_.set_attr(obj, ac.name.name(), f.regs[in.b], f.code->locs[&in - f.code->insns.data()]);
}

// ---- loops --------------------------------------------------------------------------------------

void Machine::for_prep(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const Value &iterable = R[in.b];
  SourceLoc loc = f.code->locs[&in - f.code->insns.data()];
  Value *it = R + in.a;
  trace::LoopKind kind = in_.current_loop_kind();
  if (Object *obj = iterable.object())
    if (trace::LoopKind k = obj->loop_kind(); k != trace::LoopKind::None)
      kind = k;
  auto *range = exactly<trace::RangeObject>(iterable);
  // A range longer than int64 counts (range(-5, 2**63 - 1)) iterates lazily, as CPython's
  // longrange_iterator: only its length would overflow.
  if (range && range->count() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    range = nullptr;
  if (range) {
    it[0] = Value::integer(kForRange);
    it[1] = Value::integer(range->start);
    it[2] = Value::integer(range->step);
    it[3] = Value::integer(range->length());
  } else if (iterable.kind == K::Tuple || iterable.kind == K::List) {
    it[0] = Value::integer(kForSeq);
    it[1] = iterable;
    it[2] = Value::integer(0);
  } else {
    std::unique_ptr<trace::Iterator> i = in_.iterate(iterable, loc);
    it[0] = Value::integer(kForIter);
    it[1] = Value::object(make_ref<IteratorObject>(std::move(i)));
  }
  // A comprehension's loop records no loop kind (c); a `for` over a list keeps its
  // enclosing loop's kind.
  if (!in.c)
    in_.loop_stack_.push_back(kind);
}

bool Machine::for_next_slow(Value *regs, const Insn &in) {
  Value *it = regs + in.a;
  auto *iter = static_cast<IteratorObject *>(it[1].object());
  Value item;
  if (!iter->it->next(item))
    return false;
  regs[in.b] = std::move(item);
  return true;
}

// ---- assignment ---------------------------------------------------------------------------------

void Machine::unpack(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const Value v = R[in.b];
  std::size_t n = in.c;
  bool starred = in.d != 0xffff;
  std::vector<Value> items;
  if (v.kind != K::Object && v.kind != K::Tuple && v.kind != K::List && v.kind != K::Str && v.kind != K::Dict)
    raise_python("TypeError", "cannot unpack non-iterable " + std::string(type_name(v)) + " object");
  if (auto *obj = v.object(); obj && obj->is_host_placeholder() && !in_.tracing_kernel()) {
    // Host code unpacking what nkicc does not model (`data, idx = kernel(x)` in a file's test
    // code): one placeholder per target, each `v[k]`.
    for (std::size_t k = 0; k < n; ++k)
      R[in.a + k] = obj->get_item(in_, Value::integer(static_cast<std::int64_t>(k)));
    if (starred)
      R[in.a + in.d] = Value::list({});
    return;
  }
  if (auto *obj = v.object(); obj && !dynamic_cast<trace::RangeObject *>(obj)) {
    std::unique_ptr<trace::Iterator> it = obj->iterate(in_);
    if (!it)
      raise_python("TypeError", "cannot unpack non-iterable " + std::string(type_name(v)) + " object");
    Value x;
    while (it->next(x)) {
      items.push_back(std::move(x));
      // More items than targets can only be an error; stop reading an endless iterable.
      if (items.size() > n + 1 && !starred)
        break;
      in_.check_length(items.size());
    }
  } else if ((v.kind == K::Tuple || v.kind == K::List) && !starred && v.seq().items.size() == n) {
    const auto &src = v.seq().items;
    for (std::size_t k = 0; k < n; ++k)
      R[in.a + k] = src[k];
    return;
  } else {
    items = in_.to_list(v);
  }
  if (!starred) {
    if (items.size() > n)
      raise_python("ValueError", "too many values to unpack (expected " + std::to_string(n) + ")");
    if (items.size() < n)
      raise_python("ValueError", "not enough values to unpack (expected " + std::to_string(n) + ", got " +
                                     std::to_string(items.size()) + ")");
    for (std::size_t k = 0; k < n; ++k)
      R[in.a + k] = std::move(items[k]);
    return;
  }
  if (items.size() < n - 1)
    raise_python("ValueError", "not enough values to unpack (expected at least " + std::to_string(n - 1) + ", got " +
                                   std::to_string(items.size()) + ")");
  std::size_t star = in.d, after = n - star - 1;
  for (std::size_t k = 0; k < star; ++k)
    R[in.a + k] = std::move(items[k]);
  std::vector<Value> rest(std::make_move_iterator(items.begin() + static_cast<std::ptrdiff_t>(star)),
                          std::make_move_iterator(items.end() - static_cast<std::ptrdiff_t>(after)));
  for (std::size_t k = 0; k < after; ++k)
    R[in.a + star + 1 + k] = std::move(items[items.size() - after + k]);
  R[in.a + star] = Value::list(std::move(rest));
}

void Machine::inplace_name(Frame &f, const Insn &in) {
  Value *R = f.regs;
  std::uint32_t pc = static_cast<std::uint32_t>(&in - f.code->insns.data());
  SourceLoc loc = f.code->locs[pc];
  const Value &cur = R[in.b];
  Value rhs = (in.flags & kConstC) ? f.code->consts[in.c] : R[in.c];
  auto op = static_cast<BinOpKind>(in.d);
  // list += iterable extends in place, as list.__iadd__.
  if (cur.kind == K::List && op == BinOpKind::Add) {
    std::vector<Value> more = in_.to_list(rhs, f.code->extra_locs[pc]);
    in_.check_length(cur.seq().items.size() + more.size());
    Value keep = cur;
    keep.seq().items.insert(keep.seq().items.end(), std::make_move_iterator(more.begin()),
                            std::make_move_iterator(more.end()));
    R[in.a] = std::move(keep);
    return;
  }
  if (Object *obj = cur.object()) {
    std::optional<Value> updated;
    {
      LocScope at(in_, loc);
      try {
        updated = obj->inplace_op(in_, op, rhs);
      } catch (TraceError &err) {
        if (!err.loc.valid())
          err.loc = loc;
        throw;
      }
    }
    if (updated) {
      R[in.a] = std::move(*updated);
      return;
    }
  }
  R[in.a] = in_.binary_op(op, cur, rhs, loc);
}

void Machine::aug_item(Frame &f, const Insn &in) {
  Value *R = f.regs;
  std::uint32_t pc = static_cast<std::uint32_t>(&in - f.code->insns.data());
  SourceLoc target = f.code->locs[pc], stmt = f.code->extra_locs[pc];
  const Value &c = R[in.a];
  const Value &key = R[in.b];
  const Value &rhs = R[in.c];
  auto op = static_cast<BinOpKind>(in.d);
  if (Object *obj = c.object()) {
    LocScope at(in_, stmt);
    try {
      obj->aug_set_item(in_, key, op, rhs);
    } catch (TraceError &err) {
      if (!err.loc.valid())
        err.loc = target;
      throw;
    }
    return;
  }
  Value cur = in_.get_item(c, key, target);
  in_.set_item(c, key, in_.binary_op(op, cur, rhs, stmt), target);
}

// ---- displays and strings -----------------------------------------------------------------------

Value Machine::format(Frame &f, const Insn &in) {
  Value *R = f.regs;
  Value v = R[in.b];
  char conversion = static_cast<char>(in.d);
  if (conversion == 'r' || conversion == 'a') {
    std::string r = repr(v);
    if (conversion == 'a')
      r = ascii_of(r);
    v = Value::str(std::move(r));
  } else if (conversion == 's') {
    v = Value::str(str(v));
  }
  std::string spec = in.c ? R[in.b + 1].str_text() : std::string();
  std::string out = in_.format(v, spec);
  in_.check_length(out.size());
  return Value::str(std::move(out));
}

Value Machine::build_string(Frame &f, const Insn &in) {
  std::string out;
  for (std::size_t k = 0; k < in.c; ++k) {
    out += f.regs[in.b + k].str_text();
    in_.check_length(out.size());
  }
  return Value::str(std::move(out));
}

Value Machine::build_slice(Frame &f, const Insn &in) {
  // A subscript's slice records are made and dropped for every load and store of an unrolled
  // loop: they come from the spares recycle_key() returns.
  Ref<trace::SliceData> data;
  if (spare_slices_.empty()) {
    data = make_ref<trace::SliceData>();
  } else {
    data = std::move(spare_slices_.back());
    spare_slices_.pop_back();
  }
  data->lower = f.regs[in.b];
  data->upper = f.regs[in.b + 1];
  data->step = f.regs[in.b + 2];
  return Value::from_heap(K::Slice, std::move(data));
}

Value Machine::build_tuple_key(Frame &f, const Insn &in) {
  Ref<trace::SeqData> data;
  if (spare_tuples_.empty()) {
    data = make_ref<trace::SeqData>();
  } else {
    data = std::move(spare_tuples_.back());
    spare_tuples_.pop_back();
  }
  data->items.reserve(in.c);
  for (std::size_t k = 0; k < in.c; ++k)
    data->items.push_back(std::move(f.regs[in.b + k]));
  return Value::from_heap(K::Tuple, std::move(data));
}

void Machine::recycle_key(Value &key) {
  // Only records nothing else holds: the object indexed may have kept the key.
  constexpr std::size_t kMaxSpares = 64;
  if (key.use_count() != 1)
    return;
  auto recycle_slice = [this](Value &v) {
    if (v.kind != K::Slice || v.use_count() != 1 || spare_slices_.size() >= kMaxSpares)
      return;
    Ref<trace::SliceData> data(&v.slice_data());
    v = Value();
    data->lower = Value();
    data->upper = Value();
    data->step = Value();
    spare_slices_.push_back(std::move(data));
  };
  if (key.kind == K::Slice) {
    recycle_slice(key);
    return;
  }
  if (key.kind != K::Tuple || spare_tuples_.size() >= kMaxSpares)
    return;
  Ref<trace::SeqData> data(&key.seq());
  key = Value();
  for (Value &item : data->items)
    recycle_slice(item);
  data->items.clear();
  spare_tuples_.push_back(std::move(data));
}

void Machine::dict_merge(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const Value &m = R[in.b];
  std::uint32_t pc = static_cast<std::uint32_t>(&in - f.code->insns.data());
  if (!in.c) {
    if (m.kind != K::Dict)
      raise_python("TypeError", "'" + std::string(type_name(m)) + "' object is not a mapping");
    trace::dict_update_from(in_, R[in.a], m); // lib: DictData is hashed (pylib.h)
    return;
  }
  // `f(**m)`: keyword arguments, as (name, value) pairs in call order.
  if (m.kind != K::Dict)
    raise_python("TypeError", "argument after ** must be a mapping, not " + std::string(type_name(m)));
  auto &pairs = R[in.a].seq().items;
  for (const auto &[key, value] :
       std::vector<trace::DictData::Item>(m.dict_data().items().begin(), m.dict_data().items().end())) {
    if (key.kind != K::Str)
      raise_python("TypeError", "keywords must be strings");
    for (const Value &p : pairs)
      if (p.seq().items[0].str_text() == key.str_text())
        raise_python("TypeError", "got multiple values for keyword argument '" + key.str_text() + "'",
                     f.code->extra_locs[pc]);
    pairs.push_back(Value::tuple({key, value}));
  }
}

// ---- imports and errors -------------------------------------------------------------------------

void Machine::import_star(Frame &f, const Insn &in) {
  auto *mod = dynamic_cast<ModuleObject *>(f.regs[in.a].object());
  if (!mod)
    return;
  // `__all__` when the module defines it, else every public name.
  std::vector<Scope::Entry> names;
  Value *all = mod->globals().find_local("__all__");
  if (all && (all->kind == Value::Kind::List || all->kind == Value::Kind::Tuple)) {
    SourceLoc loc = f.code->locs[&in - f.code->insns.data()];
    for (const Value &name : std::vector(all->seq().items)) {
      if (name.kind != Value::Kind::Str)
        raise_python("TypeError",
                     "Item in " + mod->name() + ".__all__ must be str, not " + std::string(trace::type_name(name)),
                     loc);
      std::optional<Value> v = mod->get_attr(in_, name.str_text());
      if (!v)
        raise_python("AttributeError", "module '" + mod->name() + "' has no attribute '" + name.str_text() + "'", loc);
      names.push_back(Scope::Entry{python::Symbol::intern(name.str_text()), true, std::move(*v)});
    }
  } else {
    for (const Scope::Entry &entry : mod->globals().entries())
      if (!entry.name().starts_with("_"))
        names.push_back(entry);
  }
  for (const Scope::Entry &entry : names) {
    if (f.code->kind == CodeKind::Function || f.code->kind == CodeKind::Lambda) {
      bool local = false;
      for (std::size_t r = 0; r < f.code->nlocals; ++r)
        if (f.code->local_names[r] == entry.symbol) {
          f.regs[r] = entry.value;
          local = true;
        }
      if (local)
        continue;
      if (!f.dynamic_ns) {
        f.dynamic_ns = std::make_shared<Scope>();
        f.ns = f.dynamic_ns.get();
      }
    }
    store_name(f, entry.symbol, entry.value);
  }
}

void Machine::raise(Frame &f, const Insn &in) {
  const Value &exc = f.regs[in.a];
  SourceLoc loc = f.code->locs[&in - f.code->insns.data()];
  TraceError e = error_of(in_, exc, loc);
  if (in.c) {
    // `raise X from Y`: Y is recorded on X and named in a note.
    const Value &cause = f.regs[in.b];
    auto *inst = e.exception.as<InstanceObject>();
    Value cause_exc = cause;
    if (auto *cls = cause.as<ClassObject>(); cls && cls->flavor == ClassFlavor::Exception) {
      CallArgs none;
      cause_exc = cls->instantiate(in_, none);
    }
    auto *ci = cause_exc.as<InstanceObject>();
    if (!cause.is_none() && (!ci || ci->cls->flavor != ClassFlavor::Exception))
      raise_python("TypeError", "exception causes must derive from BaseException", loc);
    if (inst)
      inst->cause = cause_exc;
    if (ci) {
      std::string text = ci->to_str();
      e.notes.emplace_back(ci->origin ? ci->origin->loc : loc,
                           "the direct cause: " + ci->cls->name + (text.empty() ? "" : ": " + text));
    }
  }
  throw e;
}

bool Machine::exception_matches(const Value &exc, const Value &cls) {
  auto test = [&](const Value &c) {
    auto *k = c.as<ClassObject>();
    if (!k || k->flavor != ClassFlavor::Exception)
      raise_python("TypeError", "catching classes that do not inherit from BaseException is not allowed");
    return is_instance(exc, *k);
  };
  if (cls.kind == K::Tuple) {
    bool any = false;
    for (const Value &c : cls.seq().items)
      any = test(c) || any;
    return any;
  }
  return test(cls);
}

Value Machine::call_values(const Value &fn, std::vector<Value> args, SourceLoc loc) {
  PooledArgs pooled(*this);
  pooled.args.loc = loc;
  for (Value &v : args)
    pooled.args.positional.push_back(std::move(v));
  return call(fn, pooled.args, loc);
}

void Machine::with_enter(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const Value mgr = R[in.b];
  auto method = [&](std::string_view name) -> std::optional<Value> {
    if (auto *inst = mgr.as<InstanceObject>()) {
      if (const Value *m = inst->cls->lookup(name))
        return m->as<FunctionObject>() ? Value::object(make_ref<BoundMethod>(mgr, *m)) : *m;
      return std::nullopt;
    }
    if (Object *obj = mgr.object())
      return obj->get_attr(in_, name);
    return std::nullopt;
  };
  std::optional<Value> enter = method("__enter__");
  std::optional<Value> exit = enter ? method("__exit__") : std::nullopt;
  if (!enter || !exit)
    raise_python("TypeError",
                 "'" + std::string(type_name(mgr)) + "' object does not support the context manager protocol");
  R[in.b + 1] = std::move(*exit);
  R[in.a] = call_values(*enter, {}, f.code->locs[&in - f.code->insns.data()]);
}

void Machine::with_exit_exc(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const Value exc = R[in.a];
  Value type = class_of(exc) ? Value::object(Ref<ClassObject>(class_of(exc))) : Value();
  Value r = call_values(R[in.b + 1], {type, exc, Value()}, f.code->locs[&in - f.code->insns.data()]);
  if (!in_.truthy(r))
    reraise(in_, exc);
}

Value Machine::make_class(Frame &f, const Insn &in) {
  Value *R = f.regs;
  ClassTemplate &t = *f.code->classes[in.d];
  if (!t.code)
    t.code = compile_class_body(t, in_);
  const Code &body = *t.code;
  std::vector<Value> bases(R + in.b, R + in.b + in.c);
  std::vector<std::pair<std::string, Value>> keywords;
  for (std::size_t k = 0; k < t.keywords.size(); ++k)
    keywords.emplace_back(t.keywords[k], R[in.b + in.c + k]);
  std::string module = f.module && *f.module ? (*f.module)->name() : std::string();
  Scope ns;
  ns.set("__module__", Value::str(module));
  ns.set("__qualname__", Value::str(t.qualname));
  FrameScope scope(*this, in_, body.nregs);
  Frame g;
  g.code = &body;
  g.regs = scope.regs;
  g.module = f.module;
  g.globals = f.globals;
  g.ns = &ns;
  g.fn = f.fn;
  g.loop_base = scope.loop_base;
  for (std::size_t k = 0; k < body.free_regs.size() && k < t.closure_regs.size(); ++k)
    g.regs[body.free_regs[k]] = R[t.closure_regs[k]];
  execute(g);
  Value cls = build_class(in_, std::string(t.def->name), t.qualname, module, std::move(bases), ns, keywords,
                          f.code->locs[&in - f.code->insns.data()]);
  if (body.class_cell != kNoReg) {
    auto *cell = static_cast<trace::Cell *>(g.regs[body.class_cell].object());
    cell->value = cls;
    cell->bound = true;
  }
  return cls;
}

void Machine::add_annotation(Frame &f, const Insn &in) {
  // A class body's `name: annotation`: recorded in `__annotations__` (as the annotation's
  // source text, which dataclasses and NamedTuple read for their fields).
  Scope *ns = f.ns ? f.ns : f.globals;
  Symbol key = Symbol::intern("__annotations__");
  Value *ann = ns->find_local(key);
  if (!ann) {
    ns->set(key, Value::dict());
    ann = ns->find_local(key);
  }
  Value dict = *ann;
  in_.set_item(dict, Value::str(std::string(f.code->names[in.d].name())), f.code->consts[in.b]);
}

void Machine::delete_item(Frame &f, const Insn &in) {
  Value *R = f.regs;
  const Value &c = R[in.a];
  const Value &key = R[in.b];
  if (c.kind == K::List) {
    auto &items = c.seq().items;
    auto n = static_cast<std::int64_t>(items.size());
    if (key.kind == K::Int || key.kind == K::Bool) {
      std::int64_t k = key.kind == K::Bool ? key.b : key.i;
      if (k < 0)
        k += n;
      if (k < 0 || k >= n)
        raise_python("IndexError", "list assignment index out of range");
      items.erase(items.begin() + k);
      return;
    }
    if (key.kind == K::Slice) {
      trace::ResolvedSlice r = trace::resolve_slice(key.slice_data(), n);
      std::vector<bool> drop(items.size(), false);
      for (std::int64_t k = 0; k < r.count; ++k)
        drop[static_cast<std::size_t>(r.start + k * r.step)] = true;
      std::vector<Value> kept;
      for (std::size_t k = 0; k < items.size(); ++k)
        if (!drop[k])
          kept.push_back(std::move(items[k]));
      items = std::move(kept);
      return;
    }
    raise_python("TypeError", "list indices must be integers or slices, not " + std::string(type_name(key)));
  }
  if (c.kind == K::Dict) {
    if (c.dict_data().erase(&in_, key)) // lib: DictData is hashed
      return;
    raise_python("KeyError", repr(key));
  }
  if (auto *inst = c.as<InstanceObject>())
    if (inst->call_dunder(in_, "__delitem__", {key}))
      return;
  raise_python("TypeError", "'" + std::string(type_name(c)) + "' object doesn't support item deletion");
}

void Machine::delete_attr(Frame &f, const Insn &in) {
  const Value &obj = f.regs[in.a];
  Symbol name = f.code->attrs[in.d].name;
  if (auto *inst = obj.as<InstanceObject>()) {
    if (inst->cls->frozen)
      raise_python("FrozenInstanceError", "cannot delete field '" + std::string(name.name()) + "'");
    if (const Value *d = inst->cls->lookup("__delattr__"); d && !d->as<trace::BuiltinFunction>()) {
      call_values(*d, {obj, Value::str(std::string(name.name()))}, f.code->locs[&in - f.code->insns.data()]);
      return;
    }
    if (Value *v = inst->own(name)) {
      set_unbound(*v);
      return;
    }
    raise_python("AttributeError",
                 "'" + inst->cls->name + "' object has no attribute '" + std::string(name.name()) + "'");
  }
  if (auto *cls = obj.as<ClassObject>()) {
    if (!cls->dict.erase(name))
      raise_python("AttributeError",
                   "type object '" + cls->name + "' has no attribute '" + std::string(name.name()) + "'");
    bump_class_epoch();
    return;
  }
  raise_python("AttributeError",
               "'" + std::string(type_name(obj)) + "' object has no attribute '" + std::string(name.name()) + "'");
}

void Machine::unsupported(const Code &code, const Insn &in) {
  std::string msg = "unsupported Python construct '" + code.consts[in.d].str_text() + "'";
  if (in_.function_frames_ > 0)
    msg += " in kernel '" + in_.kernel_name_ + "'";
  raise_error("unsupported", std::move(msg), code.locs[&in - code.insns.data()]);
}

} // namespace nkicc::eval
