// The dispatch loop: one switch over the instruction set, with the common cases (int and float
// arithmetic, comparisons, jumps, loops over ranges and sequences, calls of compiled
// functions) handled inline and everything else passed to the Interpreter's operations, which
// raise Python's errors in Python's words. An error that leaves an instruction without a
// location takes the instruction's; one an `except` or `with` of the frame covers goes to its
// handler.
#include "eval/machine.h"

#include "eval/compiler.h"
#include "nkicc/support/memory_budget.h"
#include "nkicc/trace/pylib.h"
#include "pylib/set.h"

#include <algorithm>
#include <limits>

namespace nkicc::eval {

using namespace python;
using trace::ModuleObject;
using trace::Object;
using trace::Scope;
using trace::TraceError;
using K = Value::Kind;

// ---- the register stack -------------------------------------------------------------------------

Value *RegisterStack::push_chunk(std::size_t n) {
  // Chunks start small and double up to kChunk: each is made None (touched) whole, and a run
  // whose module code needs a few registers paid 64 fresh pages for the first chunk of 16,384.
  constexpr std::size_t kFirstChunk = 1024, kChunk = 16384;
  // The next chunk large enough (chunks are kept once made).
  std::size_t next = chunks_.empty() ? 0 : chunk_ + 1;
  while (next < chunks_.size() && chunks_[next].size < n)
    ++next;
  if (next >= chunks_.size()) {
    Chunk c;
    c.size = std::max(chunks_.empty() ? kFirstChunk : std::min(kChunk, 2 * chunks_.back().size), n);
    c.values = std::make_unique<Value[]>(c.size);
    chunks_.push_back(std::move(c));
    next = chunks_.size() - 1;
  }
  chunk_ = next;
  top_ = n;
  return chunks_[chunk_].values.get();
}

// ---- the machine --------------------------------------------------------------------------------

Machine::Machine(Interpreter &in) : in_(in) {
  spare_positional_.reserve(64);
  spare_keywords_.reserve(64);
}

Machine::~Machine() = default;

void Machine::run_module(const python::Module &module, const std::shared_ptr<ModuleObject> &m) {
  auto &st = symtables_[&module];
  if (!st)
    st = std::make_unique<SymbolTable>(module);
  auto &code = module_codes_[&module];
  if (!code)
    code = compile_module(module, *st, in_);
  Frame f;
  f.code = code.get();
  f.module = &m;
  f.globals = &m->globals();
  f.ns = f.globals;
  FrameScope scope(*this, in_, code->nregs);
  f.regs = scope.regs;
  f.loop_base = scope.loop_base;
  execute(f);
}

const Code &Machine::code_of(FunctionObject &fn) {
  FunctionTemplate &t = *fn.tmpl;
  if (!t.code)
    t.code = compile_function(t, in_);
  return *t.code;
}

void Machine::passed_step_gate(SourceLoc loc) {
  if (Interpreter::Budget spent = in_.check_budgets(); spent != Interpreter::Budget::None)
    in_.budget_error(spent, loc);
}

void Machine::passed_step_gate(const Code &code, std::uint32_t pc) {
  if (Interpreter::Budget spent = in_.check_budgets(); spent != Interpreter::Budget::None)
    in_.budget_error(spent, code.step_loc(pc));
}

// ---- the dispatch loop --------------------------------------------------------------------------

namespace {
// Results of the inline kinds written in place: the register's old value is released only when
// it pointed to heap data.
[[gnu::always_inline]] inline void set_int(Value &v, std::int64_t x) {
  if (v.is_heap())
    v = Value();
  v.kind = K::Int;
  v.i = x;
}
[[gnu::always_inline]] inline void set_float(Value &v, double x) {
  if (v.is_heap())
    v = Value();
  v.kind = K::Float;
  v.f = x;
}
[[gnu::always_inline]] inline void set_bool(Value &v, bool x) {
  if (v.is_heap())
    v = Value();
  v.kind = K::Bool;
  v.i = 0;
  v.b = x;
}
inline bool int_operands(const Value &x, const Value &y) { return x.kind == K::Int && y.kind == K::Int; }
inline bool float_operands(const Value &x, const Value &y) { return x.kind == K::Float && y.kind == K::Float; }

/// A comparison of two ints or two floats, or nullopt for anything else.
[[gnu::always_inline]] inline std::optional<bool> fast_compare(CmpOpKind op, const Value &x, const Value &y) {
  if (int_operands(x, y)) {
    switch (op) {
    case CmpOpKind::Eq:
      return x.i == y.i;
    case CmpOpKind::NotEq:
      return x.i != y.i;
    case CmpOpKind::Lt:
      return x.i < y.i;
    case CmpOpKind::LtE:
      return x.i <= y.i;
    case CmpOpKind::Gt:
      return x.i > y.i;
    case CmpOpKind::GtE:
      return x.i >= y.i;
    default:
      return std::nullopt;
    }
  }
  if (float_operands(x, y)) {
    switch (op) {
    case CmpOpKind::Eq:
      return x.f == y.f;
    case CmpOpKind::NotEq:
      return x.f != y.f;
    case CmpOpKind::Lt:
      return x.f < y.f;
    case CmpOpKind::LtE:
      return x.f <= y.f;
    case CmpOpKind::Gt:
      return x.f > y.f;
    case CmpOpKind::GtE:
      return x.f >= y.f;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

/// `x op y` for two ints (when the result fits) or two floats, as Python computes it, into `out`;
/// false for anything else (other kinds, overflow, division by zero), which the interpreter's
/// binary_op answers with Python's result or error.
[[gnu::always_inline]] inline bool fast_binary(BinOpKind op, const Value &x, const Value &y, Value &out) {
  if (int_operands(x, y)) {
    std::int64_t a = x.i, b = y.i, r;
    switch (op) {
    case BinOpKind::Add:
      if (__builtin_add_overflow(a, b, &r))
        return false;
      break;
    case BinOpKind::Sub:
      if (__builtin_sub_overflow(a, b, &r))
        return false;
      break;
    case BinOpKind::Mult:
      if (__builtin_mul_overflow(a, b, &r))
        return false;
      break;
    case BinOpKind::Mod:
    case BinOpKind::FloorDiv: {
      if (b == 0 || (b == -1 && a == std::numeric_limits<std::int64_t>::min()))
        return false;
      std::int64_t q = a / b, m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) { // Python floors: the remainder takes the divisor's sign
        --q;
        m += b;
      }
      r = op == BinOpKind::Mod ? m : q;
      break;
    }
    case BinOpKind::BitAnd:
      r = a & b;
      break;
    case BinOpKind::BitOr:
      r = a | b;
      break;
    case BinOpKind::BitXor:
      r = a ^ b;
      break;
    case BinOpKind::RShift:
      if (b < 0)
        return false;
      r = b >= 64 ? (a < 0 ? -1 : 0) : a >> b;
      break;
    case BinOpKind::LShift:
      if (b < 0 || b >= 64 || ((a << b) >> b) != a)
        return false;
      r = a << b;
      break;
    default:
      return false;
    }
    set_int(out, r);
    return true;
  }
  if (float_operands(x, y)) {
    double a = x.f, b = y.f, r;
    switch (op) {
    case BinOpKind::Add:
      r = a + b;
      break;
    case BinOpKind::Sub:
      r = a - b;
      break;
    case BinOpKind::Mult:
      r = a * b;
      break;
    case BinOpKind::Div:
      if (b == 0)
        return false;
      r = a / b;
      break;
    default:
      return false;
    }
    set_float(out, r);
    return true;
  }
  return false;
}

/// Truth of the inline kinds; nullopt for values whose truth needs the interpreter.
inline std::optional<bool> fast_truth(const Value &v) {
  switch (v.kind) {
  case K::Bool:
    return v.b;
  case K::None:
    return false;
  case K::Int:
    return v.i != 0;
  default:
    return std::nullopt;
  }
}
} // namespace

Value Machine::execute(Frame &entry) {
  // The frame being run: `entry`, or an inline frame of a function it called (enter_inline).
  // Its code, instructions, constants and registers are held in locals, reloaded on each switch.
  Frame *fp = &entry;
  const Code *code = fp->code;
  const Insn *base = code->insns.data();
  const Value *K_ = code->consts.data();
  Value *R = fp->regs;
  const Insn *ip = base;
  std::uint64_t &steps = in_.steps_;
  const std::uint64_t &step_gate = in_.step_gate_;
  // Inline frames pushed by this execute() that an exception leaves are popped on the way out,
  // as the frames of nested calls would be.
  struct InlineGuard {
    Machine &m;
    std::size_t depth;
    ~InlineGuard() {
      while (m.inline_depth_ > depth)
        m.leave_inline();
    }
  } guard{*this, inline_depth_};
  // The hot locals stay in registers: nothing takes their address (no lambda captures them);
  // a frame switch reloads them from the new frame.
#define NKICC_ENTER_FRAME(to, at)                                                                                      \
  do {                                                                                                                 \
    fp = (to);                                                                                                         \
    code = fp->code;                                                                                                   \
    base = code->insns.data();                                                                                         \
    K_ = code->consts.data();                                                                                          \
    R = fp->regs;                                                                                                      \
    ip = (at);                                                                                                         \
  } while (false)
#define RK_B(in) (((in).flags & kConstB) ? K_[(in).b] : R[(in).b])
#define RK_C(in) (((in).flags & kConstC) ? K_[(in).c] : R[(in).c])
#define PC(in) static_cast<std::uint32_t>(&(in)-base)
#define LOC(in) code->locs[PC(in)]
  for (;;) {
    try {
      for (;;) {
        const Insn &in = *ip++;
        if (in.flags & kStep) {
          if (++steps > step_gate) [[unlikely]]
            passed_step_gate(*code, PC(in));
        }
        switch (in.op) {
        case Op::Nop:
          break;
        case Op::Move:
          if (in.a != in.b)
            R[in.a] = R[in.b];
          break;
        case Op::LoadConst:
          R[in.a] = K_[in.d];
          break;
        case Op::LoadNone:
          R[in.a] = Value();
          break;
        case Op::LoadBool:
          R[in.a] = Value::boolean(in.b != 0);
          break;
        case Op::LoadInt:
          set_int(R[in.a], static_cast<std::int32_t>(in.d));
          break;
        case Op::CheckBound:
          if (is_unbound(R[in.a]))
            raise_python("UnboundLocalError", "cannot access local variable '" + std::string(code->names[in.d].name()) +
                                                  "' where it is not associated with a value");
          break;
        case Op::Unbind:
          if (is_unbound(R[in.a]))
            raise_python("UnboundLocalError", "cannot access local variable '" + std::string(code->names[in.d].name()) +
                                                  "' where it is not associated with a value");
          set_unbound(R[in.a]);
          break;
        case Op::ClearLocal:
          set_unbound(R[in.a]);
          break;
        case Op::MakeCell: {
          auto cell = make_ref<trace::Cell>(&cells_);
          if (in.b && !is_unbound(R[in.a])) {
            cell->value = std::move(R[in.a]);
            cell->bound = true;
          }
          R[in.a] = Value::object(std::move(cell));
          break;
        }
        case Op::LoadDeref: {
          auto *cell = static_cast<trace::Cell *>(R[in.b].object());
          if (!cell->bound) {
            bool free = std::find(code->free_regs.begin(), code->free_regs.end(), in.b) != code->free_regs.end();
            std::string name(code->names[in.d].name());
            if (free)
              raise_python("NameError", "cannot access free variable '" + name +
                                            "' where it is not associated with a value in enclosing scope");
            raise_python("UnboundLocalError",
                         "cannot access local variable '" + name + "' where it is not associated with a value");
          }
          R[in.a] = cell->value;
          break;
        }
        case Op::StoreDeref: {
          auto *cell = static_cast<trace::Cell *>(R[in.a].object());
          cell->value = R[in.b];
          cell->bound = true;
          break;
        }
        case Op::DeleteDeref: {
          auto *cell = static_cast<trace::Cell *>(R[in.a].object());
          if (!cell->bound)
            raise_python("UnboundLocalError", "cannot access local variable '" + std::string(code->names[in.d].name()) +
                                                  "' where it is not associated with a value");
          Value drop = std::move(cell->value);
          cell->bound = false;
          break;
        }
        case Op::LoadGlobal: {
          const GlobalCache &gc = code->globals[in.d];
          if (gc.globals == fp->globals && gc.globals && gc.globals_version == gc.globals->version() &&
              gc.builtins_version == in_.builtins_->version()) [[likely]] {
            R[in.a] = *gc.slot;
            break;
          }
          R[in.a] = load_global(*fp, in);
          break;
        }
        case Op::StoreGlobal:
          fp->globals->set(code->names[in.d], R[in.a]);
          break;
        case Op::DeleteGlobal:
          if (!fp->globals->erase(code->names[in.d]))
            raise_python("NameError", "name '" + std::string(code->names[in.d].name()) + "' is not defined");
          break;
        case Op::LoadName:
          R[in.a] = load_name(*fp, in);
          break;
        case Op::LoadClassDeref: {
          if (fp->ns)
            if (Value *v = fp->ns->find_local(code->globals[in.d].name)) {
              R[in.a] = *v;
              break;
            }
          auto *cell = static_cast<trace::Cell *>(R[in.b].object());
          if (!cell->bound)
            raise_python("NameError", "cannot access free variable '" + std::string(code->globals[in.d].name.name()) +
                                          "' where it is not associated with a value in enclosing scope");
          R[in.a] = cell->value;
          break;
        }
        case Op::StoreName:
          store_name(*fp, code->names[in.d], R[in.a]);
          break;
        case Op::DeleteName: {
          Scope *ns = fp->ns ? fp->ns : fp->globals;
          if (!ns->erase(code->names[in.d]))
            raise_python("NameError", "name '" + std::string(code->names[in.d].name()) + "' is not defined");
          break;
        }
        case Op::LoadAttr: {
          // An instance's own attribute, as the site's cache knows it: read in place.
          if (auto *inst = exactly<InstanceObject>(R[in.b])) {
            const AttrCache &ac = code->attrs[in.d];
            if (ac.key == inst->cls.get() && ac.epoch == class_epoch() && ac.kind == AttrPlan::Slot &&
                ac.index < inst->slots.size() && !is_unbound(inst->slots[ac.index])) {
              R[in.a] = inst->slots[ac.index];
              break;
            }
          }
          Value v = load_attr(*fp, in, R[in.b]);
          R[in.a] = std::move(v);
          break;
        }
        case Op::LoadMethod:
          load_method(*fp, in);
          break;
        case Op::StoreAttr:
          if (auto *inst = exactly<InstanceObject>(R[in.a])) {
            const AttrCache &ac = code->attrs[in.d];
            if (ac.key == inst->cls.get() && ac.epoch == class_epoch() && ac.kind == kStoreSlot &&
                ac.index < inst->slots.size()) {
              inst->slots[ac.index] = R[in.b];
              break;
            }
          }
          store_attr(*fp, in);
          break;
        case Op::DeleteAttr:
          delete_attr(*fp, in);
          break;
        case Op::GetItem: {
          const Value &c = R[in.b];
          const Value &key = RK_C(in);
          if ((c.kind == K::List || c.kind == K::Tuple) && key.kind == K::Int) {
            const auto &items = c.seq().items;
            std::int64_t k = key.i, n = static_cast<std::int64_t>(items.size());
            if (k < 0)
              k += n;
            if (k >= 0 && k < n) {
              R[in.a] = items[static_cast<std::size_t>(k)];
              break;
            }
          }
          Value item = in_.get_item(c, key, LOC(in));
          if (in.flags & kRecycle)
            recycle_key(R[in.c]);
          R[in.a] = std::move(item);
          break;
        }
        case Op::SetItem: {
          const Value &c = R[in.a];
          const Value &key = RK_B(in);
          if (c.kind == K::List && key.kind == K::Int) {
            auto &items = c.seq().items;
            std::int64_t k = key.i, n = static_cast<std::int64_t>(items.size());
            if (k < 0)
              k += n;
            if (k >= 0 && k < n) {
              items[static_cast<std::size_t>(k)] = R[in.c];
              break;
            }
          }
          in_.set_item(c, key, R[in.c], LOC(in));
          break;
        }
        case Op::DeleteItem:
          delete_item(*fp, in);
          break;
        case Op::Add: {
          const Value &x = RK_B(in), &y = RK_C(in);
          std::int64_t out;
          if (int_operands(x, y) && !__builtin_add_overflow(x.i, y.i, &out)) {
            set_int(R[in.a], out);
            goto next_insn; // (a number takes no name: no kBind check)
          }
          if (float_operands(x, y)) {
            set_float(R[in.a], x.f + y.f);
            goto next_insn;
          }
          R[in.a] = in_.binary_op(BinOpKind::Add, x, y, LOC(in));
          break;
        }
        case Op::Sub: {
          const Value &x = RK_B(in), &y = RK_C(in);
          std::int64_t out;
          if (int_operands(x, y) && !__builtin_sub_overflow(x.i, y.i, &out)) {
            set_int(R[in.a], out);
            goto next_insn; // (a number takes no name: no kBind check)
          }
          if (float_operands(x, y)) {
            set_float(R[in.a], x.f - y.f);
            goto next_insn;
          }
          R[in.a] = in_.binary_op(BinOpKind::Sub, x, y, LOC(in));
          break;
        }
        case Op::Mul: {
          const Value &x = RK_B(in), &y = RK_C(in);
          std::int64_t out;
          if (int_operands(x, y) && !__builtin_mul_overflow(x.i, y.i, &out)) {
            set_int(R[in.a], out);
            goto next_insn; // (a number takes no name: no kBind check)
          }
          if (float_operands(x, y)) {
            set_float(R[in.a], x.f * y.f);
            goto next_insn;
          }
          R[in.a] = in_.binary_op(BinOpKind::Mult, x, y, LOC(in));
          break;
        }
        case Op::Binary:
          if (fast_binary(static_cast<BinOpKind>(in.d), RK_B(in), RK_C(in), R[in.a]))
            goto next_insn;
          R[in.a] = in_.binary_op(static_cast<BinOpKind>(in.d), RK_B(in), RK_C(in), LOC(in));
          break;
        case Op::InplaceName:
          if (fast_binary(static_cast<BinOpKind>(in.d), R[in.b], RK_C(in), R[in.a]))
            goto next_insn;
          inplace_name(*fp, in);
          break;
        case Op::AugItem:
          aug_item(*fp, in);
          break;
        case Op::Unary:
          R[in.a] = in_.unary_op(static_cast<UnaryOpKind>(in.d), R[in.b], LOC(in));
          break;
        case Op::Not: {
          std::optional<bool> t = fast_truth(R[in.b]);
          R[in.a] = Value::boolean(!(t ? *t : in_.truthy(R[in.b])));
          break;
        }
        case Op::Compare: {
          const Value &x = RK_B(in), &y = RK_C(in);
          auto op = static_cast<CmpOpKind>(in.d);
          if (std::optional<bool> r = fast_compare(op, x, y)) {
            set_bool(R[in.a], *r);
            goto next_insn;
          }
          R[in.a] = in_.compare(op, x, y, LOC(in));
          break;
        }
        case Op::Jump:
          ip = base + in.d;
          break;
        case Op::JumpIfFalse:
        case Op::JumpIfTrue: {
          std::optional<bool> t = fast_truth(R[in.a]);
          bool truth = t ? *t : in_.truthy(R[in.a]);
          if (truth == (in.op == Op::JumpIfTrue))
            ip = base + in.d;
          break;
        }
        case Op::CmpJumpFalse:
        case Op::CmpJumpTrue: {
          const Value &x = RK_B(in), &y = RK_C(in);
          auto op = static_cast<CmpOpKind>(in.a);
          bool truth;
          if (std::optional<bool> r = fast_compare(op, x, y)) {
            truth = *r;
          } else {
            Value result = in_.compare(op, x, y, code->extra_locs[PC(in)]);
            std::optional<bool> t = fast_truth(result);
            truth = t ? *t : in_.truthy(result);
          }
          if (truth == (in.op == Op::CmpJumpTrue))
            ip = base + in.d;
          break;
        }
        case Op::BuildTuple:
          R[in.a] = in.c ? build_tuple_key(*fp, in) : Value::tuple({});
          break;
        case Op::BuildList: {
          std::vector<Value> items(std::make_move_iterator(R + in.b), std::make_move_iterator(R + in.b + in.c));
          R[in.a] = Value::list(std::move(items));
          break;
        }
        case Op::BuildSet: {
          // lib: the set type (pylib.h); d says the display is all constants (CPython builds it
          // from a frozenset constant, which changes its iteration order).
          std::vector<Value> items(R + in.b, R + in.b + in.c);
          R[in.a] = trace::make_set(in_, std::move(items), in.d != 0);
          break;
        }
        case Op::BuildDict:
          R[in.a] = Value::dict();
          break;
        case Op::BuildSlice:
          R[in.a] = build_slice(*fp, in);
          break;
        case Op::ListAppend:
          R[in.a].seq().items.push_back(R[in.b]);
          in_.check_length(R[in.a].seq().items.size());
          break;
        case Op::ListExtend: {
          std::vector<Value> more = in_.to_list(R[in.b], LOC(in));
          auto &items = R[in.a].seq().items;
          items.insert(items.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
          in_.check_length(items.size());
          break;
        }
        case Op::ListToTuple: {
          std::vector<Value> items = std::move(R[in.a].seq().items);
          R[in.a] = Value::tuple(std::move(items));
          break;
        }
        case Op::SetAdd: {
          // lib: a set comprehension's items (or a starred display's list) join the set in order.
          auto *set = R[in.a].as<trace::pylib::SetObject>();
          auto add = [&](const Value &v) {
            set->add(&in_, v);
            in_.check_length(set->size());
          };
          if (in.c) {
            for (const Value &v : std::vector(R[in.b].seq().items))
              add(v);
          } else {
            add(R[in.b]);
          }
          break;
        }
        case Op::DictSet:
          if (in.d) // a named keyword of a call with `**`: a (name, value) pair
            R[in.a].seq().items.push_back(Value::tuple({R[in.b], R[in.c]}));
          else
            in_.set_item(R[in.a], R[in.b], R[in.c], LOC(in));
          break;
        case Op::DictMerge:
          dict_merge(*fp, in);
          break;
        case Op::BuildString:
          R[in.a] = build_string(*fp, in);
          break;
        case Op::Format:
          R[in.a] = format(*fp, in);
          break;
        case Op::Unpack:
          unpack(*fp, in);
          break;
        case Op::ForPrep:
          for_prep(*fp, in);
          break;
        case Op::ForNext:
          if (!next_item(R, in)) {
            ip = base + in.d;
            goto next_insn;
          }
          break;
        case Op::ForLoop:
          if (!next_item(R, in))
            goto next_insn;
          ip = base + in.d;
          break;
        case Op::LoopPush:
          in_.loop_stack_.push_back(in_.current_loop_kind());
          break;
        case Op::LoopPop:
          in_.loop_stack_.pop_back();
          break;
        case Op::Call: {
          const CallSite &site = code->calls[in.d];
          if (auto *fn = exactly<FunctionObject>(R[in.b])) {
            if (InlineFrame *callee = enter_inline(*fn, R + in.b + 1, in.c, site, fp, &in)) {
              NKICC_ENTER_FRAME(&callee->frame, callee->frame.code->insns.data());
              goto next_insn;
            }
          } else if (auto *cls = exactly<ClassObject>(R[in.b]); cls && site.keywords.empty()) {
            // `C(a, b)`: the instance and the arguments run __init__ inline.
            if (const Value *init = plain_init(*cls, site)) {
              Value keep = *init; // (the class could drop its __init__ while it runs)
              Value obj = Value::object(make_ref<InstanceObject>(Ref<ClassObject>(cls)));
              Value callee_value = std::exchange(R[in.b], obj); // the instance is `self`
              auto *init_fn = exactly<FunctionObject>(keep);
              if (InlineFrame *callee = enter_inline(*init_fn, R + in.b, in.c + 1u, site, fp, &in)) {
                callee->instance = std::move(obj);
                callee->keep_alive = std::move(keep);
                NKICC_ENTER_FRAME(&callee->frame, callee->frame.code->insns.data());
                goto next_insn;
              }
              R[in.b] = std::move(callee_value); // (the general call below binds the arguments)
            }
          }
          Value out = call_registers(R[in.b], R + in.b + 1, in.c, site);
          R[in.a] = std::move(out);
          break;
        }
        case Op::CallMethod: {
          // A function found on the receiver's type (or the receiver's own attribute) runs inline.
          if (!is_unbound(R[in.b]))
            if (auto *fn = exactly<FunctionObject>(R[in.b])) {
              bool self = !is_unbound(R[in.b + 1]);
              Value *args = self ? R + in.b + 1 : R + in.b + 2;
              if (InlineFrame *callee = enter_inline(*fn, args, in.c + (self ? 1u : 0u), code->calls[in.d], fp, &in)) {
                NKICC_ENTER_FRAME(&callee->frame, callee->frame.code->insns.data());
                goto next_insn;
              }
            }
          Value out = call_method(*fp, in);
          R[in.a] = std::move(out);
          break;
        }
        case Op::CallEx:
        case Op::CallMethodEx: {
          Value out = call_ex(*fp, in, in.op == Op::CallMethodEx);
          R[in.a] = std::move(out);
          break;
        }
        case Op::Super: {
          if (in.c == kNoReg || is_unbound(R[in.c]))
            raise_python("RuntimeError", "super(): no arguments");
          auto *cell = static_cast<trace::Cell *>(R[in.b].object());
          if (!cell->bound || !cell->value.as<ClassObject>())
            raise_python("RuntimeError", "super(): __class__ cell not found");
          R[in.a] = Value::object(make_ref<SuperObject>(cell->value.ref_as<ClassObject>(), R[in.c]));
          break;
        }
        case Op::MakeClass: {
          Value cls = make_class(*fp, in);
          R[in.a] = std::move(cls);
          break;
        }
        case Op::AddAnnotation:
          add_annotation(*fp, in);
          break;
        case Op::MakeFunction:
          R[in.a] = make_function(*fp, in);
          break;
        case Op::Return: {
          in_.last_return_loc_ = LOC(in);
          if (fp == &entry)
            return std::move(R[in.a]);
          Frame *caller = nullptr;
          if (const Insn *call = return_inline(R[in.a], caller)) {
            NKICC_ENTER_FRAME(caller, call + 1);
            if ((call->flags & kBind) && R[call->a].kind == Value::Kind::Object) [[unlikely]]
              bind_name(*fp, *call);
            goto next_insn;
          }
          Resume r = return_init(R[in.a]);
          NKICC_ENTER_FRAME(r.frame, r.ip);
          if (r.bad_init) [[unlikely]]
            check_init_result(R[(ip - 1)->a]);
          goto next_insn;
        }
        case Op::ReturnNone: {
          if (fp == &entry)
            return Value();
          Value none;
          Frame *caller = nullptr;
          if (const Insn *call = return_inline(none, caller)) {
            NKICC_ENTER_FRAME(caller, call + 1);
            goto next_insn; // (None takes no name: no kBind check)
          }
          Resume r = return_init(none);
          NKICC_ENTER_FRAME(r.frame, r.ip);
          goto next_insn;
        }
        case Op::Raise:
          raise(*fp, in);
        case Op::Reraise:
          reraise(in_, R[in.a]);
        case Op::ExcMatch:
          set_bool(R[in.a], exception_matches(R[in.b], R[in.c]));
          break;
        case Op::WithEnter:
          with_enter(*fp, in);
          break;
        case Op::WithExit: {
          Value r = call_values(R[in.b + 1], {Value(), Value(), Value()}, LOC(in));
          (void)r;
          break;
        }
        case Op::WithExitExc:
          with_exit_exc(*fp, in);
          break;
        case Op::AssertFail:
          raise_python("AssertionError", in.b ? str(R[in.a]) : std::string(), LOC(in));
        case Op::ImportName: {
          const ImportSite &site = code->imports[in.d];
          ModuleObject *importer = fp->module ? fp->module->get() : nullptr;
          if (!site.from) {
            R[in.a] = in_.import_name(site.module, site.has_asname, importer, site.loc);
          } else {
            std::shared_ptr<Object> m = in_.import_from_module(site.level, site.module, importer, site.loc);
            R[in.a] = m ? Value::object(std::move(m)) : Value();
          }
          break;
        }
        case Op::ImportFrom: {
          const ImportSite &site = code->imports[in.d];
          Object *m = R[in.b].object();
          R[in.a] = in_.import_from(m ? m->shared_self() : nullptr, site.level, site.module, site.name, site.loc,
                                    fp->module ? fp->module->get() : nullptr);
          break;
        }
        case Op::ImportStar:
          import_star(*fp, in);
          break;
        case Op::Unsupported:
          unsupported(*code, in);
        case Op::Error:
          raise_python(K_[in.d].str_text(), K_[in.b].str_text(), LOC(in));
        }
        if (in.flags & kBind) [[unlikely]] {
          // Only an object takes its name (a tile created without `name=`).
          std::uint16_t r = in.op == Op::ForNext || in.op == Op::ForLoop || in.op == Op::StoreDeref ? in.b : in.a;
          if (R[r].kind == K::Object)
            bind_name(*fp, in);
        }
      next_insn:;
      }
    } catch (TraceError &e) {
      Resume r = to_handler(e, fp, ip, &entry);
      if (!r.frame)
        throw;
      NKICC_ENTER_FRAME(r.frame, r.ip);
    } catch (const memory::BudgetExceeded &e) {
      // --max-memory reached: located at the statement that was running, and uncatchable by the
      // kernel (its id is no Python exception's), so that the trace ends here.
      std::uint32_t at = static_cast<std::uint32_t>(ip - 1 - base);
      throw TraceError{e.message("the trace"), e.id(), code->locs[at], {}, Value()};
    } catch (std::bad_alloc &) {
      // Memory ran out inside an operation: a located error, never an abort.
      std::uint32_t at = static_cast<std::uint32_t>(ip - 1 - base);
      TraceError e{"out of memory (the kernel built values larger than this machine holds)",
                   "MemoryError",
                   code->locs[at],
                   {},
                   Value()};
      Resume r = to_handler(e, fp, ip, &entry);
      if (!r.frame)
        throw e;
      NKICC_ENTER_FRAME(r.frame, r.ip);
    }
  }
#undef RK_B
#undef RK_C
#undef PC
#undef LOC
#undef NKICC_ENTER_FRAME
}

Machine::Resume Machine::return_init(Value &value) {
  Value result = std::move(value); // (the callee's registers are released below)
  InlineFrame &top = *inline_pool_[inline_depth_ - 1];
  const Insn *call = top.call;
  Frame *caller = top.caller;
  Value instance = std::move(top.instance);
  leave_inline();
  // __init__ returned a value: it goes to the call's register, whose TypeError the caller
  // raises at its call once it resumes.
  bool bad_init = !result.is_none();
  Value &dest = caller->regs[call->a];
  dest = bad_init ? std::move(result) : std::move(instance);
  if ((call->flags & kBind) && dest.kind == Value::Kind::Object) [[unlikely]]
    bind_name(*caller, *call);
  return {caller, call + 1, bad_init};
}

Machine::Resume Machine::to_handler(TraceError &e, Frame *fp, const Insn *ip, Frame *entry) {
  // The exception raised by the instruction before ip goes to the innermost frame's handler
  // covering it, else to its caller's covering the call (an inline frame without one is left,
  // as a nested call's would be).
  bool catchable = is_catchable(in_, e);
  for (;;) {
    const Code &code = *fp->code;
    std::uint32_t at = static_cast<std::uint32_t>(ip - 1 - code.insns.data());
    if (!e.loc.valid())
      e.loc = code.locs[at];
    if (catchable)
      for (const Handler &h : code.handlers)
        if (h.start <= at && at < h.end) {
          fp->regs[h.exc] = exception_value(in_, e);
          in_.loop_stack_.resize(fp->loop_base + h.loops);
          return {fp, code.insns.data() + h.target};
        }
    if (fp == entry)
      return {};
    InlineFrame &top = *inline_pool_[inline_depth_ - 1];
    const Insn *call = top.call;
    Frame *caller = top.caller;
    top.instance = Value();
    leave_inline();
    fp = caller;
    ip = call + 1;
  }
}

} // namespace nkicc::eval
