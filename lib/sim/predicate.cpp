#include "predicate.h"

#include <cctype>

namespace nkicc::sim {

bool AffineForm::is_constant() const {
  return index == std::array<std::int64_t, kMaxIndexAxes>{} && program == std::array<std::int64_t, kMaxProgramAxes>{};
}

namespace {

using Node = Predicate::Node;
using NodePtr = std::unique_ptr<Node>;

class Parser {
public:
  Parser(std::string_view s, std::string &error) : s_(s), error_(error) {}

  NodePtr parse() {
    NodePtr n = or_expr();
    if (!n)
      return nullptr;
    skip();
    if (i_ != s_.size())
      return fail("unexpected text");
    return n;
  }
  std::size_t axes() const { return axes_; }

private:
  NodePtr fail(const char *what) {
    if (error_.empty())
      error_ = std::string(what) + " at offset " + std::to_string(i_) + " of '" + std::string(s_) + "'";
    return nullptr;
  }
  void skip() {
    while (i_ < s_.size() && s_[i_] == ' ')
      ++i_;
  }
  bool eat(std::string_view t) {
    skip();
    if (s_.substr(i_, t.size()) == t) {
      i_ += t.size();
      return true;
    }
    return false;
  }
  static NodePtr sum(AffineForm f) {
    auto n = std::make_unique<Node>();
    n->form = f;
    return n;
  }
  static NodePtr join(Node::Kind kind, NodePtr a, NodePtr b) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->lhs = std::move(a);
    n->rhs = std::move(b);
    return n;
  }
  bool checked(bool overflow) {
    if (overflow)
      fail("integer overflow");
    return !overflow;
  }
  /// a + sign * b, term by term.
  bool add(AffineForm &a, const AffineForm &b, std::int64_t sign) {
    bool o = false;
    auto term = [&](std::int64_t &x, std::int64_t y) {
      std::int64_t t;
      o |= __builtin_mul_overflow(y, sign, &t) || __builtin_add_overflow(x, t, &x);
    };
    term(a.constant, b.constant);
    for (std::size_t k = 0; k < kMaxIndexAxes; ++k)
      term(a.index[k], b.index[k]);
    for (std::size_t k = 0; k < kMaxProgramAxes; ++k)
      term(a.program[k], b.program[k]);
    return checked(o);
  }
  bool scale(AffineForm &a, std::int64_t k) {
    bool o = __builtin_mul_overflow(a.constant, k, &a.constant);
    for (auto &x : a.index)
      o |= __builtin_mul_overflow(x, k, &x);
    for (auto &x : a.program)
      o |= __builtin_mul_overflow(x, k, &x);
    return checked(o);
  }

  NodePtr or_expr() {
    NodePtr a = and_expr();
    while (a && eat("|")) {
      NodePtr b = and_expr();
      if (!b)
        return nullptr;
      a = join(Node::Kind::Or, std::move(a), std::move(b));
    }
    return a;
  }
  NodePtr and_expr() {
    NodePtr a = compare();
    while (a && eat("&")) {
      NodePtr b = compare();
      if (!b)
        return nullptr;
      a = join(Node::Kind::And, std::move(a), std::move(b));
    }
    return a;
  }
  NodePtr compare() {
    NodePtr a = sum_expr();
    if (!a)
      return nullptr;
    static constexpr std::string_view kOps[] = {"<=", ">=", "==", "!=", "<", ">"};
    for (std::string_view op : kOps) {
      if (!eat(op))
        continue;
      NodePtr b = sum_expr();
      if (!b)
        return nullptr;
      if (a->kind != Node::Kind::Sum || b->kind != Node::Kind::Sum)
        return fail("a comparison of comparisons");
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::Compare;
      n->op = std::string(op);
      n->form = a->form;
      if (!add(n->form, b->form, -1))
        return nullptr;
      return n;
    }
    return a;
  }
  NodePtr sum_expr() {
    NodePtr a = product();
    while (a) {
      std::int64_t sign;
      if (eat("+"))
        sign = 1;
      else if (eat("-"))
        sign = -1;
      else
        break;
      NodePtr b = product();
      if (!b)
        return nullptr;
      if (a->kind != Node::Kind::Sum || b->kind != Node::Kind::Sum)
        return fail("arithmetic on a comparison");
      if (!add(a->form, b->form, sign))
        return nullptr;
    }
    return a;
  }
  NodePtr product() {
    NodePtr a = unary();
    while (a && eat("*")) {
      NodePtr b = unary();
      if (!b)
        return nullptr;
      if (a->kind != Node::Kind::Sum || b->kind != Node::Kind::Sum)
        return fail("arithmetic on a comparison");
      if (b->form.is_constant()) {
        if (!scale(a->form, b->form.constant))
          return nullptr;
      } else if (a->form.is_constant()) {
        std::int64_t k = a->form.constant;
        a = std::move(b);
        if (!scale(a->form, k))
          return nullptr;
      } else {
        return fail("a product that is not affine");
      }
    }
    return a;
  }
  NodePtr unary() {
    skip();
    if (eat("-")) {
      NodePtr a = unary();
      if (!a)
        return nullptr;
      if (a->kind != Node::Kind::Sum)
        return fail("arithmetic on a comparison");
      if (!scale(a->form, -1))
        return nullptr;
      return a;
    }
    if (eat("(")) {
      NodePtr a = or_expr();
      if (!a)
        return nullptr;
      if (!eat(")"))
        return fail("expected ')'");
      return a;
    }
    if (eat("program_id(")) {
      skip();
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] >= '0' + static_cast<int>(kMaxProgramAxes))
        return fail("expected a grid axis 0 to 2");
      AffineForm f;
      f.program[static_cast<std::size_t>(s_[i_++] - '0')] = 1;
      if (!eat(")"))
        return fail("expected ')'");
      return sum(f);
    }
    if (i_ < s_.size() && s_[i_] == 'i') {
      ++i_;
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] >= '0' + static_cast<int>(kMaxIndexAxes))
        return fail("expected an index axis 0 to 5");
      AffineForm f;
      std::size_t axis = static_cast<std::size_t>(s_[i_++] - '0');
      f.index[axis] = 1;
      axes_ = std::max(axes_, axis + 1);
      return sum(f);
    }
    if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      AffineForm f;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        if (__builtin_mul_overflow(f.constant, 10, &f.constant) ||
            __builtin_add_overflow(f.constant, s_[i_] - '0', &f.constant))
          return fail("integer overflow");
        ++i_;
      }
      return sum(f);
    }
    return fail("expected a number, an index or program_id");
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::string &error_;
  std::size_t axes_ = 0;
};

void bind_node(Node &n, std::span<const std::int64_t> pid) {
  n.bound = n.form.constant;
  for (std::size_t a = 0; a < kMaxProgramAxes; ++a)
    n.bound += n.form.program[a] * (a < pid.size() ? pid[a] : 0);
  if (n.lhs)
    bind_node(*n.lhs, pid);
  if (n.rhs)
    bind_node(*n.rhs, pid);
}

std::int64_t form_value(const Node &n, std::span<const std::int64_t> coords) {
  std::int64_t v = n.bound;
  for (std::size_t k = 0; k < coords.size() && k < kMaxIndexAxes; ++k)
    v += n.form.index[k] * coords[k];
  return v;
}

std::int64_t eval_node(const Node &n, std::span<const std::int64_t> coords) {
  switch (n.kind) {
  case Node::Kind::Sum:
    return form_value(n, coords);
  case Node::Kind::Compare: {
    std::int64_t d = form_value(n, coords); // lhs - rhs
    const std::string &op = n.op;
    if (op == "<")
      return d < 0;
    if (op == "<=")
      return d <= 0;
    if (op == ">")
      return d > 0;
    if (op == ">=")
      return d >= 0;
    if (op == "==")
      return d == 0;
    return d != 0;
  }
  case Node::Kind::And:
    return eval_node(*n.lhs, coords) != 0 && eval_node(*n.rhs, coords) != 0;
  case Node::Kind::Or:
    return eval_node(*n.lhs, coords) != 0 || eval_node(*n.rhs, coords) != 0;
  }
  return 0;
}

} // namespace

std::optional<Predicate> Predicate::parse(std::string_view text, std::string &error) {
  error.clear();
  Parser p(text, error);
  NodePtr root = p.parse();
  if (!root)
    return std::nullopt;
  Predicate out;
  out.root_ = std::move(root);
  out.axes_ = p.axes();
  out.bind({});
  return out;
}

void Predicate::bind(std::span<const std::int64_t> program_ids) { bind_node(*root_, program_ids); }

bool Predicate::eval(std::span<const std::int64_t> coords) const { return eval_node(*root_, coords) != 0; }

std::int64_t Predicate::value(std::span<const std::int64_t> coords) const { return eval_node(*root_, coords); }

} // namespace nkicc::sim
