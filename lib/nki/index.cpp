#include "index.h"

#include <fmt/format.h>

namespace nkicc::nki {

using python::BinOpKind;
using python::CmpOpKind;

namespace {

[[noreturn]] void control_flow_error() {
  raise_error("err_control_flow_condition_depending_on_arange",
              "Control-flow depending on `nl.arange` or `nl.mgrid` is not supported");
}

CmpOpKind reflect(CmpOpKind op) {
  switch (op) {
  case CmpOpKind::Lt:
    return CmpOpKind::Gt;
  case CmpOpKind::LtE:
    return CmpOpKind::GtE;
  case CmpOpKind::Gt:
    return CmpOpKind::Lt;
  case CmpOpKind::GtE:
    return CmpOpKind::LtE;
  default:
    return op;
  }
}

} // namespace


std::string IndexObject::repr() const {
  return fmt::format("IndexTile(start={}, step={}, count={}, axis={} of {})", start.text(), step, count, axis, rank);
}

Value IndexObject::get_item(Interpreter &, const Value &key) {
  // `nl.arange(n)[:, None]` puts the range on axis 0 of a 2-D index tile; `[None, :]` on axis 1.
  std::vector<Value> parts;
  if (key.kind == Value::Kind::Tuple)
    parts = key.seq().items;
  else
    parts.push_back(key);
  int placed = -1;
  int rank_out = 0;
  for (const Value &p : parts) {
    if (p.kind == Value::Kind::Slice) {
      const SliceData &s = p.slice_data();
      if (!s.lower.is_none() || !s.upper.is_none() || !s.step.is_none())
        raise_error("TypeError", "an index tile takes only ':' and None when placed on an axis");
      if (placed >= 0)
        raise_error("TypeError", "an index tile has a single ':' axis");
      placed = rank_out++;
    } else if (p.is_none()) {
      ++rank_out;
    } else {
      raise_error("TypeError", "an index tile takes only ':' and None when placed on an axis");
    }
  }
  if (placed < 0)
    raise_error("TypeError", "an index tile needs one ':' to place its range on an axis");
  auto out = std::make_shared<IndexObject>(*this);
  out->rank = rank_out;
  out->axis = placed;
  return Value::object(out);
}

std::optional<Value> IndexObject::get_attr(Interpreter &, std::string_view name) {
  if (name == "shape") {
    std::vector<Value> dims;
    for (int i = 0; i < rank; ++i)
      dims.push_back(Value::integer(i == axis ? count : 1));
    return Value::tuple(std::move(dims));
  }
  return std::nullopt;
}

std::string IndexObject::term() const {
  std::string out = step == 1 ? fmt::format("i{}", axis) : fmt::format("{}*i{}", step, axis);
  if (!(start.is_constant() && start.constant == 0))
    out += " + " + start.text();
  return out;
}

std::optional<Value> IndexObject::binary_op(Interpreter &, BinOpKind op, const Value &other, bool reflected) {
  if ((op == BinOpKind::Add || op == BinOpKind::Sub) && (other.as<IndexObject>() || other.as<IndexSumObject>())) {
    // `i_q - i_k`: a predicate term over two axes.
    std::string mine = "(" + term() + ")";
    std::string theirs = other.as<IndexObject>() ? "(" + other.as<IndexObject>()->term() + ")"
                                                 : "(" + other.as<IndexSumObject>()->text + ")";
    auto sum = std::make_shared<IndexSumObject>();
    const char *sign = op == BinOpKind::Add ? " + " : " - ";
    sum->text = reflected ? theirs + sign + mine : mine + sign + theirs;
    return Value::object(sum);
  }
  auto o = to_affine(other);
  if (!o)
    return std::nullopt;
  auto out = std::make_shared<IndexObject>(*this);
  switch (op) {
  case BinOpKind::Add:
    out->start = affine_add(start, *o, 1);
    break;
  case BinOpKind::Sub:
    if (reflected) {
      out->start = affine_add(*o, start, -1);
      out->step = checked_mul(step, -1);
    } else {
      out->start = affine_add(start, *o, -1);
    }
    break;
  case BinOpKind::Mult:
    if (!o->is_constant())
      raise_error("TypeError", "an index tile can only be scaled by an integer");
    out->start = affine_scale(start, o->constant);
    out->step = checked_mul(step, o->constant);
    break;
  default:
    return std::nullopt;
  }
  return Value::object(out);
}

namespace {

/// The predicate text of a comparison operand: an int or program-id affine, or an index
/// expression on another axis (`i_q * 128 + ip >= i_k * 128 + if_` compares two axes).
std::optional<std::string> predicate_operand(const Value &v) {
  if (auto a = to_affine(v))
    return a->text();
  if (auto *ix = v.as<IndexObject>())
    return "(" + ix->term() + ")";
  if (auto *sum = v.as<IndexSumObject>())
    return "(" + sum->text + ")";
  return std::nullopt;
}

Value predicate(const std::string &mine, CmpOpKind op, const std::string &theirs, bool reflected) {
  auto mask = std::make_shared<MaskObject>();
  mask->text = reflected ? fmt::format("{} {} {}", theirs, python::cmp_op_symbol(reflect(op)), mine)
                         : fmt::format("{} {} {}", mine, python::cmp_op_symbol(op), theirs);
  return Value::object(mask);
}

} // namespace

std::optional<Value> IndexObject::compare(Interpreter &, CmpOpKind op, const Value &other, bool reflected) {
  auto theirs = predicate_operand(other);
  if (!theirs)
    return std::nullopt;
  return predicate(term(), op, *theirs, reflected);
}

bool IndexObject::truthy(Interpreter &) { control_flow_error(); }

std::optional<Value> IndexSumObject::binary_op(Interpreter &, BinOpKind op, const Value &other, bool reflected) {
  if (op != BinOpKind::Add && op != BinOpKind::Sub)
    return std::nullopt;
  std::string theirs;
  if (auto a = to_affine(other))
    theirs = a->text();
  else if (auto *ix = other.as<IndexObject>())
    theirs = "(" + ix->term() + ")";
  else if (auto *sum = other.as<IndexSumObject>())
    theirs = "(" + sum->text + ")";
  else
    return std::nullopt;
  auto out = std::make_shared<IndexSumObject>();
  const char *sign = op == BinOpKind::Add ? " + " : " - ";
  out->text = reflected ? theirs + sign + "(" + text + ")" : "(" + text + ")" + sign + theirs;
  return Value::object(out);
}

std::optional<Value> IndexSumObject::compare(Interpreter &, CmpOpKind op, const Value &other, bool reflected) {
  auto theirs = predicate_operand(other);
  if (!theirs)
    return std::nullopt;
  return predicate(text, op, *theirs, reflected);
}

bool IndexSumObject::truthy(Interpreter &) { control_flow_error(); }

std::optional<Value> MaskObject::binary_op(Interpreter &, BinOpKind op, const Value &other, bool reflected) {
  auto *m = other.as<MaskObject>();
  if (!m || (op != BinOpKind::BitAnd && op != BinOpKind::BitOr))
    return std::nullopt;
  auto out = std::make_shared<MaskObject>();
  const std::string &a = reflected ? m->text : text;
  const std::string &b = reflected ? text : m->text;
  out->text = fmt::format("({}) {} ({})", a, op == BinOpKind::BitAnd ? "&" : "|", b);
  return Value::object(out);
}

bool MaskObject::truthy(Interpreter &) { control_flow_error(); }

namespace {

// nl.mgrid[0:128, 0:512] gives index tiles `.p` (axis 0) and `.x` (axis 1); it also unpacks
// (`ip, if_ = nl.mgrid[...]`) and indexes (`grid[0]`) as the tuple of its index tiles.
class MGridResult : public Object {
public:
  std::string_view type_name() const override { return "mgrid"; }
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override {
    static const std::string_view names[] = {"p", "x", "y", "z"};
    for (std::size_t i = 0; i < items.size() && i < 4; ++i)
      if (names[i] == name)
        return items[i];
    return std::nullopt;
  }
  Value get_item(Interpreter &, const Value &key) override {
    if (key.kind != Value::Kind::Int)
      raise_python("TypeError", "mgrid indices must be integers, not " + std::string(trace::type_name(key)));
    std::int64_t n = static_cast<std::int64_t>(items.size()), i = key.i < 0 ? key.i + n : key.i;
    if (i < 0 || i >= n)
      raise_python("IndexError", "mgrid index out of range");
    return items[static_cast<std::size_t>(i)];
  }
  std::unique_ptr<Iterator> iterate(Interpreter &) override {
    struct It : Iterator {
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
    it->items = items;
    return it;
  }
  std::vector<Value> items;
};

class MGrid : public Object {
public:
  std::string_view type_name() const override { return "mgrid"; }
  Value get_item(Interpreter &, const Value &key) override {
    std::vector<Value> parts = key.kind == Value::Kind::Tuple ? key.seq().items : std::vector<Value>{key};
    auto grid = std::make_shared<MGridResult>();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].kind != Value::Kind::Slice)
        raise_error("TypeError", "nl.mgrid takes slices: nl.mgrid[0:128, 0:512]");
      const SliceData &s = parts[i].slice_data();
      std::int64_t lo = s.lower.is_none() ? 0 : s.lower.i, hi = s.upper.is_none() ? 0 : s.upper.i;
      std::int64_t st = s.step.is_none() ? 1 : s.step.i;
      if (s.upper.kind != Value::Kind::Int || (!s.lower.is_none() && s.lower.kind != Value::Kind::Int) || st <= 0 ||
          hi <= lo)
        raise_error("ValueError", "nl.mgrid needs non-empty integer slices");
      auto ix = std::make_shared<IndexObject>();
      ix->start.constant = lo;
      ix->step = st;
      ix->count = (hi - lo + st - 1) / st;
      ix->rank = static_cast<int>(parts.size());
      ix->axis = static_cast<int>(i);
      grid->items.push_back(Value::object(ix));
    }
    return Value::object(grid);
  }
};

} // namespace

Value make_mgrid() { return Value::object(std::make_shared<MGrid>()); }

} // namespace nkicc::nki
