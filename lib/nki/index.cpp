#include "index.h"

#include <fmt/format.h>

#include <algorithm>

namespace nkicc::nki {

using python::BinOpKind;
using python::CmpOpKind;
using python::UnaryOpKind;

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

/// Appends `coef*name` as a term of a sum: the first term carries its own sign (`-1*i0`),
/// later ones are added or subtracted (` - 2*i1`).
void append_term(std::string &out, std::int64_t coef, const std::string &name) {
  if (coef == 0)
    return;
  if (out.empty()) {
    out += coef == 1 ? name : fmt::format("{}*{}", coef, name);
    return;
  }
  std::int64_t mag = coef < 0 ? -coef : coef;
  out += coef < 0 ? " - " : " + ";
  out += mag == 1 ? name : fmt::format("{}*{}", mag, name);
}

void append_constant(std::string &out, std::int64_t c) {
  if (out.empty()) {
    out += fmt::format("{}", c);
    return;
  }
  if (c != 0)
    out += c < 0 ? fmt::format(" - {}", -c) : fmt::format(" + {}", c);
}

IndexObject combine(const IndexObject &a, const IndexObject &b, std::int64_t sign) {
  bool a_const = a.terms.empty(), b_const = b.terms.empty();
  if (!a_const && !b_const && a.rank != b.rank)
    raise_error("TypeError", fmt::format("index tiles of {} and {} dimensions cannot be combined: place both on the "
                                         "axes of one index space ([:, None], [None, :])",
                                         a.rank, b.rank));
  IndexObject out = a_const ? b : a;
  out.constant = affine_add(a.constant, b.constant, sign);
  out.terms.clear();
  std::size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    if (j == b.terms.size() || (i < a.terms.size() && a.terms[i].axis < b.terms[j].axis)) {
      out.terms.push_back(a.terms[i++]);
    } else if (i == a.terms.size() || b.terms[j].axis < a.terms[i].axis) {
      IndexTerm t = b.terms[j++];
      t.coef = checked_mul(t.coef, sign);
      out.terms.push_back(t);
    } else {
      IndexTerm t = a.terms[i];
      const IndexTerm &u = b.terms[j];
      if (t.count != u.count && t.count != 1 && u.count != 1)
        raise_error("TypeError", fmt::format("index tiles of {} and {} elements on axis {} cannot be combined",
                                             t.count, u.count, t.axis));
      t.count = std::max(t.count, u.count);
      t.coef = checked_add(t.coef, checked_mul(u.coef, sign));
      out.terms.push_back(t);
      ++i;
      ++j;
    }
  }
  return out;
}

IndexObject scale(const IndexObject &a, std::int64_t k) {
  IndexObject out = a;
  out.constant = affine_scale(a.constant, k);
  for (IndexTerm &t : out.terms)
    t.coef = checked_mul(t.coef, k);
  return out;
}

Value index_value(IndexObject v) { return Value::object(std::make_shared<IndexObject>(std::move(v))); }

[[noreturn]] void not_affine(std::string_view what) {
  raise_error("TypeError",
              fmt::format("index expressions must stay affine (sums of index tiles and program ids times integers): "
                          "{} is not",
                          what));
}

} // namespace

std::optional<IndexObject> to_index(const Value &v) {
  if (auto *ix = v.as<IndexObject>())
    return *ix;
  if (auto a = to_affine(v)) {
    IndexObject c;
    c.constant = *a;
    return c;
  }
  return std::nullopt;
}

std::string IndexObject::text() const {
  std::string out;
  for (const IndexTerm &t : terms)
    append_term(out, t.coef, fmt::format("i{}", t.axis));
  for (std::size_t a = 0; a < constant.coef.size(); ++a)
    append_term(out, constant.coef[a], fmt::format("program_id({})", a));
  append_constant(out, constant.constant);
  return out;
}

ir::Shape IndexObject::shape() const {
  ir::Shape out;
  out.resize(static_cast<std::size_t>(rank), 1);
  for (const IndexTerm &t : terms)
    out[static_cast<std::size_t>(t.axis)] = t.count;
  return out;
}

const IndexTerm *IndexObject::term(int axis) const {
  for (const IndexTerm &t : terms)
    if (t.axis == axis)
      return &t;
  return nullptr;
}

std::string IndexObject::repr() const { return fmt::format("IndexTile({}, shape={})", text(), shape_text(shape())); }

Value IndexObject::get_item(Interpreter &, const Value &key) {
  // `nl.arange(n)[:, None]` puts the range on axis 0 of a 2-D index tile; `[None, :]` on axis 1.
  std::vector<Value> parts;
  if (key.kind == Value::Kind::Tuple)
    parts = key.seq().items;
  else
    parts.push_back(key);
  int placed_at = -1;
  int rank_out = 0;
  for (const Value &p : parts) {
    if (p.kind == Value::Kind::Slice) {
      const SliceData &s = p.slice_data();
      if (!s.lower.is_none() || !s.upper.is_none() || !s.step.is_none())
        raise_error("TypeError", "an index tile takes only ':' and None when placed on an axis");
      if (placed_at >= 0)
        raise_error("TypeError", "an index tile has a single ':' axis");
      placed_at = rank_out++;
    } else if (p.is_none()) {
      ++rank_out;
    } else {
      raise_error("TypeError", "an index tile takes only ':' and None when placed on an axis");
    }
  }
  if (placed_at < 0)
    raise_error("TypeError", "an index tile needs one ':' to place its range on an axis");
  if (placed || terms.size() > 1)
    raise_error("TypeError", "only a 1-D nl.arange can be placed on an axis with [:, None]");
  auto out = std::make_shared<IndexObject>(*this);
  out->rank = rank_out;
  out->placed = true;
  for (IndexTerm &t : out->terms)
    t.axis = placed_at;
  return Value::object(out);
}

void IndexObject::set_item(Interpreter &, const Value &, const Value &) {
  raise_error("err_cannot_assign_to_index", "'index' tensor does not support item assignment");
}

std::optional<Value> IndexObject::get_attr(Interpreter &, std::string_view name) {
  if (name == "shape") {
    std::vector<Value> dims;
    for (std::int64_t d : shape())
      dims.push_back(Value::integer(d));
    return Value::tuple(std::move(dims));
  }
  if (name == "ndim")
    return Value::integer(rank);
  return std::nullopt;
}

std::optional<Value> IndexObject::binary_op(Interpreter &, BinOpKind op, const Value &other, bool reflected) {
  auto o = to_index(other);
  if (!o)
    return std::nullopt;
  const IndexObject &lhs = reflected ? *o : *this;
  const IndexObject &rhs = reflected ? *this : *o;
  switch (op) {
  case BinOpKind::Add:
    return index_value(combine(lhs, rhs, 1));
  case BinOpKind::Sub:
    return index_value(combine(lhs, rhs, -1));
  case BinOpKind::Mult:
    if (!o->terms.empty() || !o->constant.is_constant())
      not_affine("a product of two index expressions");
    return index_value(scale(*this, o->constant.constant));
  case BinOpKind::FloorDiv:
    not_affine("'//' of an index tile");
  case BinOpKind::Mod:
    not_affine("'%' of an index tile");
  default:
    return std::nullopt;
  }
}

std::optional<Value> IndexObject::unary_op(Interpreter &, UnaryOpKind op) {
  if (op == UnaryOpKind::USub)
    return index_value(scale(*this, -1));
  if (op == UnaryOpKind::UAdd)
    return index_value(*this);
  return std::nullopt;
}

std::optional<Value> IndexObject::compare(Interpreter &, CmpOpKind op, const Value &other, bool reflected) {
  auto theirs = to_index(other);
  if (!theirs)
    return std::nullopt;
  auto mask = std::make_shared<MaskObject>();
  mask->text = reflected ? fmt::format("{} {} {}", theirs->text(), python::cmp_op_symbol(reflect(op)), text())
                         : fmt::format("{} {} {}", text(), python::cmp_op_symbol(op), theirs->text());
  return Value::object(mask);
}

bool IndexObject::truthy(Interpreter &) { control_flow_error(); }

std::optional<Value> MaskObject::binary_op(Interpreter &, BinOpKind op, const Value &other, bool reflected) {
  if (op != BinOpKind::BitAnd && op != BinOpKind::BitOr)
    return std::nullopt;
  std::string theirs;
  if (auto *m = other.as<MaskObject>()) {
    theirs = m->text;
  } else if (other.kind == Value::Kind::Bool) {
    // `flag & (i < n)`: a Python bool folds away (True & p is p, False | p is p).
    bool b = other.b;
    if ((op == BinOpKind::BitAnd) == b)
      return Value::object(std::make_shared<MaskObject>(*this));
    auto out = std::make_shared<MaskObject>();
    out->text = b ? "0 == 0" : "0 != 0";
    return Value::object(out);
  } else {
    return std::nullopt;
  }
  auto out = std::make_shared<MaskObject>();
  const std::string &a = reflected ? theirs : text;
  const std::string &b = reflected ? text : theirs;
  out->text = fmt::format("({}) {} ({})", a, op == BinOpKind::BitAnd ? "&" : "|", b);
  return Value::object(out);
}

std::optional<Value> MaskObject::unary_op(Interpreter &, UnaryOpKind op) {
  if (op != UnaryOpKind::Invert)
    return std::nullopt;
  // `~(i < n)`: the complement, as `(i < n) == 0` would read; written as the opposite test.
  static const std::pair<std::string_view, std::string_view> kOpposite[] = {
      {" < ", " >= "}, {" <= ", " > "}, {" > ", " <= "}, {" >= ", " < "}, {" == ", " != "}, {" != ", " == "}};
  if (text.find('(') == std::string::npos)
    for (auto [from, to] : kOpposite) {
      std::size_t at = text.find(from);
      if (at != std::string::npos) {
        auto out = std::make_shared<MaskObject>();
        out->text = text.substr(0, at) + std::string(to) + text.substr(at + from.size());
        return Value::object(out);
      }
    }
  raise_error("TypeError", "only a single comparison of index tiles can be inverted with '~'");
}

bool MaskObject::truthy(Interpreter &) { control_flow_error(); }

Value make_arange(std::int64_t start, std::int64_t stop, std::int64_t step) {
  auto ix = std::make_shared<IndexObject>();
  ix->constant.constant = start;
  ix->terms.push_back({0, step, (stop - start + step - 1) / step});
  return Value::object(ix);
}

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
      ix->constant.constant = lo;
      ix->terms.push_back({static_cast<int>(i), st, (hi - lo + st - 1) / st});
      ix->rank = static_cast<int>(parts.size());
      ix->placed = true;
      grid->items.push_back(Value::object(ix));
    }
    return Value::object(grid);
  }
};

} // namespace

Value make_mgrid() { return Value::object(std::make_shared<MGrid>()); }

std::optional<std::vector<Value>> mgrid_items(const Value &v) {
  if (auto *g = v.as<MGridResult>())
    return g->items;
  return std::nullopt;
}

} // namespace nkicc::nki
