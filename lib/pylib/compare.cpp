// Comparison and containment of the interpreter's values (`==`, `<`, `is`, `in`), in CPython
// 3.11's words. Items of containers compare by identity first (CPython's
// PyObject_RichCompareBool), so a list that contains itself equals itself; nesting deeper than
// Python's recursion limit raises RecursionError "in comparison", as CPython does.
#include "common.h"

#include "nkicc/trace/pylib.h"

namespace nkicc::trace {

using python::CmpOpKind;
using namespace pylib;

thread_local int RecursionGuard::depth_ = 0;

bool pylib::items_equal(Interpreter &interp, const Value &x, const Value &y) {
  if (is_same(x, y))
    return true;
  if (x.kind == K::Int && y.kind == K::Int)
    return x.i == y.i;
  return interp.truthy(interp.compare(CmpOpKind::Eq, x, y));
}

namespace {

constexpr const char *kInComparison = " in comparison";

bool numbers_equal(const Value &a, const Value &b) {
  if (a.kind != K::Float && b.kind != K::Float)
    return int_of(a) == int_of(b);
  if (a.kind == K::Float && b.kind == K::Float)
    return a.f == b.f;
  // int vs float, exactly: long double holds every int64.
  long double x = a.kind == K::Float ? static_cast<long double>(a.f) : static_cast<long double>(int_of(a));
  long double y = b.kind == K::Float ? static_cast<long double>(b.f) : static_cast<long double>(int_of(b));
  return x == y;
}

bool dicts_equal(Interpreter &interp, const Value &a, const Value &b) {
  DictData &x = a.dict_data(), &y = b.dict_data();
  if (x.size() != y.size())
    return false;
  // By position: a Python `==` on the way may change either dict (CPython copes the same way).
  for (std::size_t k = 0; k < x.slot_count(); ++k) {
    const DictData::Item *item = x.slot(k);
    if (!item)
      continue;
    Value key = item->first, value = item->second;
    Value *other = y.find(&interp, key);
    if (!other)
      return false;
    Value held = *other;
    if (!items_equal(interp, value, held))
      return false;
    if (k >= x.slot_count())
      break;
  }
  return true;
}

// Three-way ordering of two built-in values for <, <=, >, >=; nullopt when unordered (NaN).
std::optional<int> order(Interpreter &interp, CmpOpKind op, const Value &a, const Value &b) {
  if (a.is_number() && b.is_number()) {
    long double x = a.kind == K::Float ? static_cast<long double>(a.f) : static_cast<long double>(int_of(a));
    long double y = b.kind == K::Float ? static_cast<long double>(b.f) : static_cast<long double>(int_of(b));
    if (x < y)
      return -1;
    if (x > y)
      return 1;
    if (x == y)
      return 0;
    return std::nullopt;
  }
  if (a.kind == K::Str && b.kind == K::Str) {
    int c = a.str_text().compare(b.str_text());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if ((a.kind == K::Tuple || a.kind == K::List) && a.kind == b.kind) {
    RecursionGuard guard(kInComparison);
    // Hold both: a Python `<` on the way may shrink a list.
    Value hold_a = a, hold_b = b;
    const auto &x = hold_a.seq().items, &y = hold_b.seq().items;
    for (std::size_t k = 0; k < x.size() && k < y.size(); ++k) {
      Value xi = x[k], yi = y[k];
      if (items_equal(interp, xi, yi))
        continue;
      // The first differing items decide, by the operator itself.
      bool holds = interp.truthy(interp.compare(op, xi, yi));
      return holds == (op == CmpOpKind::Lt || op == CmpOpKind::LtE) ? -1 : 1;
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  raise_python("TypeError", "'" + std::string(python::cmp_op_symbol(op)) +
                                "' not supported between instances of '" + tn(a) + "' and '" + tn(b) + "'");
}

} // namespace

bool values_equal(const Value &a, const Value &b) {
  if (a.is_number() && b.is_number())
    return numbers_equal(a, b);
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case K::None:
  case K::Ellipsis:
    return true;
  case K::Str:
    return a.same_heap(b) || a.str_text() == b.str_text();
  case K::Tuple:
  case K::List: {
    if (a.same_heap(b))
      return true;
    const auto &x = a.seq().items, &y = b.seq().items;
    if (x.size() != y.size())
      return false;
    RecursionGuard guard(kInComparison);
    for (std::size_t k = 0; k < x.size(); ++k)
      if (!is_same(x[k], y[k]) && !values_equal(x[k], y[k]))
        return false;
    return true;
  }
  case K::Dict: {
    if (a.same_heap(b))
      return true;
    DictData &x = a.dict_data(), &y = b.dict_data();
    if (x.size() != y.size())
      return false;
    RecursionGuard guard(kInComparison);
    for (const auto &[key, value] : x.items()) {
      const Value *other = y.find(nullptr, key);
      if (!other || (!is_same(value, *other) && !values_equal(value, *other)))
        return false;
    }
    return true;
  }
  case K::Slice: {
    const SliceData &x = a.slice_data(), &y = b.slice_data();
    RecursionGuard guard(kInComparison);
    return values_equal(x.lower, y.lower) && values_equal(x.upper, y.upper) && values_equal(x.step, y.step);
  }
  default:
    return a.same_heap(b);
  }
}

Value Interpreter::compare(CmpOpKind op, const Value &l, const Value &r, SourceLoc loc) {
  // Two ints compare exactly as order() and values_equal() would compare them.
  if (l.kind == K::Int && r.kind == K::Int) {
    switch (op) {
    case CmpOpKind::Eq:
      return Value::boolean(l.i == r.i);
    case CmpOpKind::NotEq:
      return Value::boolean(l.i != r.i);
    case CmpOpKind::Lt:
      return Value::boolean(l.i < r.i);
    case CmpOpKind::LtE:
      return Value::boolean(l.i <= r.i);
    case CmpOpKind::Gt:
      return Value::boolean(l.i > r.i);
    case CmpOpKind::GtE:
      return Value::boolean(l.i >= r.i);
    default:
      break;
    }
  }
  try {
    switch (op) {
    case CmpOpKind::Is:
      return Value::boolean(is_same(l, r));
    case CmpOpKind::IsNot:
      return Value::boolean(!is_same(l, r));
    case CmpOpKind::In:
      return Value::boolean(contains(r, l));
    case CmpOpKind::NotIn:
      return Value::boolean(!contains(r, l));
    default:
      break;
    }
    if (l.kind == K::Object || r.kind == K::Object) {
      RecursionGuard guard(kInComparison);
      SourceLoc saved = current_loc_;
      if (loc.valid())
        current_loc_ = loc;
      std::optional<Value> result;
      try {
        if (Object *obj = l.object())
          result = obj->compare(*this, op, r, false);
        if (!result)
          if (Object *obj = r.object())
            result = obj->compare(*this, op, l, true);
      } catch (...) {
        current_loc_ = saved;
        throw;
      }
      current_loc_ = saved;
      if (result)
        return std::move(*result);
      if (op == CmpOpKind::Eq)
        return Value::boolean(l.same_heap(r));
      if (op == CmpOpKind::NotEq)
        return Value::boolean(!(l.same_heap(r)));
      order(*this, op, l, r); // raises the TypeError
    }
    if (op == CmpOpKind::Eq || op == CmpOpKind::NotEq) {
      bool eq;
      if ((l.kind == K::Tuple || l.kind == K::List) && l.kind == r.kind) {
        Value hold_l = l, hold_r = r;
        const auto &x = hold_l.seq().items, &y = hold_r.seq().items;
        eq = x.size() == y.size();
        if (eq && !l.same_heap(r)) {
          RecursionGuard guard(kInComparison);
          for (std::size_t k = 0; eq && k < x.size() && k < y.size(); ++k) {
            Value xi = x[k], yi = y[k];
            eq = items_equal(*this, xi, yi);
          }
        }
      } else if (l.kind == K::Dict && r.kind == K::Dict) {
        RecursionGuard guard(kInComparison);
        eq = l.same_heap(r) || dicts_equal(*this, l, r);
      } else {
        eq = values_equal(l, r);
      }
      return Value::boolean(op == CmpOpKind::Eq ? eq : !eq);
    }
    std::optional<int> c = order(*this, op, l, r);
    if (!c)
      return Value::boolean(false);
    switch (op) {
    case CmpOpKind::Lt:
      return Value::boolean(*c < 0);
    case CmpOpKind::LtE:
      return Value::boolean(*c <= 0);
    case CmpOpKind::Gt:
      return Value::boolean(*c > 0);
    default:
      return Value::boolean(*c >= 0);
    }
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

bool Interpreter::contains(const Value &container, const Value &item, SourceLoc loc) {
  try {
    switch (container.kind) {
    case K::Str:
      if (item.kind != K::Str)
        raise_python("TypeError", "'in <string>' requires string as left operand, not " + tn(item));
      return container.str_text().find(item.str_text()) != std::string::npos;
    case K::Tuple:
    case K::List: {
      Value hold = container; // a Python `==` on the way may shrink the list
      const auto &items = hold.seq().items;
      for (std::size_t k = 0; k < items.size(); ++k) {
        Value x = items[k];
        if (items_equal(*this, x, item))
          return true;
      }
      return false;
    }
    case K::Dict:
      return container.dict_data().find(this, item) != nullptr;
    case K::Object: {
      if (auto *range = container.as<RangeObject>(); range && is_intlike(item))
        return range->contains(int_of(item));
      SourceLoc saved = current_loc_;
      if (loc.valid())
        current_loc_ = loc;
      std::optional<bool> answer;
      try {
        answer = container.object()->contains(*this, item);
      } catch (...) {
        current_loc_ = saved;
        throw;
      }
      current_loc_ = saved;
      if (answer)
        return *answer;
      std::unique_ptr<Iterator> it = container.object()->iterate(*this);
      if (!it)
        raise_python("TypeError", "argument of type '" + tn(container) + "' is not iterable");
      Value x;
      std::uint64_t n = 0;
      while (it->next(x)) {
        if (items_equal(*this, x, item))
          return true;
        check_length(++n);
      }
      return false;
    }
    default:
      raise_python("TypeError", "argument of type '" + tn(container) + "' is not iterable");
    }
  } catch (TraceError &e) {
    if (!e.loc.valid())
      e.loc = loc;
    throw;
  }
}

} // namespace nkicc::trace
