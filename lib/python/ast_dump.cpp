#include "nkicc/python/ast.h"
#include "nkicc/python/parser.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace nkicc::python {

std::string_view expr_kind_name(ExprKind kind) {
  static constexpr std::string_view names[] = {
      "BoolOp",    "NamedExpr", "BinOp",   "UnaryOp",        "Lambda",       "IfExp",    "Dict",
      "Set",       "ListComp",  "SetComp", "DictComp",       "GeneratorExp", "Await",    "Yield",
      "YieldFrom", "Compare",   "Call",    "FormattedValue", "JoinedStr",    "Constant", "Attribute",
      "Subscript", "Starred",   "Name",    "List",           "Tuple",        "Slice"};
  return names[static_cast<std::size_t>(kind)];
}

std::string_view stmt_kind_name(StmtKind kind) {
  static constexpr std::string_view names[] = {"FunctionDef", "ClassDef", "Return", "Delete",     "Assign", "AugAssign",
                                               "AnnAssign",   "For",      "While",  "If",         "With",   "Raise",
                                               "Try",         "Assert",   "Import", "ImportFrom", "Global", "Nonlocal",
                                               "Expr",        "Pass",     "Break",  "Continue"};
  return names[static_cast<std::size_t>(kind)];
}

std::string_view bin_op_name(BinOpKind op) {
  static constexpr std::string_view names[] = {"Add",    "Sub",    "Mult",  "MatMult", "Div",    "Mod",     "Pow",
                                               "LShift", "RShift", "BitOr", "BitXor",  "BitAnd", "FloorDiv"};
  return names[static_cast<std::size_t>(op)];
}

std::string_view unary_op_name(UnaryOpKind op) {
  static constexpr std::string_view names[] = {"Invert", "Not", "UAdd", "USub"};
  return names[static_cast<std::size_t>(op)];
}

std::string_view cmp_op_name(CmpOpKind op) {
  static constexpr std::string_view names[] = {"Eq", "NotEq", "Lt", "LtE", "Gt", "GtE", "Is", "IsNot", "In", "NotIn"};
  return names[static_cast<std::size_t>(op)];
}

std::string_view cmp_op_symbol(CmpOpKind op) {
  static constexpr std::string_view symbols[] = {"==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "not in"};
  return symbols[static_cast<std::size_t>(op)];
}

std::string_view context_name(ExprContext ctx) {
  static constexpr std::string_view names[] = {"Load", "Store", "Del"};
  return names[static_cast<std::size_t>(ctx)];
}

namespace {

/// Python's repr() of a str or bytes value, for a dump that reads like ast.dump.
void append_repr(std::string &out, std::string_view s, bool bytes) {
  if (bytes)
    out += 'b';
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (ch == quote || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += quote;
}

void append_double(std::string &out, double v) {
  if (std::isinf(v)) {
    out += v > 0 ? "inf" : "-inf";
    return;
  }
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  // Python's repr(float): the shortest digits that round-trip, positional for exponents in
  // [-4, 16), scientific otherwise, and always with a '.' or an exponent.
  char buf[64];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  std::string s(buf);
  std::size_t e = s.find('e');
  int exponent = std::atoi(s.c_str() + e + 1);
  std::string mantissa = s.substr(0, e);
  bool negative = !mantissa.empty() && mantissa[0] == '-';
  if (negative)
    mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.')
      digits += c;
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  if (negative)
    out += '-';
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-exponent - 1), '0');
      out += digits;
    } else {
      auto int_len = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_len);
        out += '.';
        out += digits.substr(int_len);
      }
    }
    return;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
  out += exp_buf;
}

/// The decimal digits of an integer literal too big for int64 (`0x...`, `0o...`, `0b...` or
/// decimal digits, without `_`), for a dump that matches Python's int repr.
std::string big_int_decimal(std::string_view text) {
  unsigned base = 10;
  if (text.size() > 1 && text[0] == '0') {
    char r = static_cast<char>(text[1] | 0x20);
    base = r == 'x' ? 16 : r == 'o' ? 8 : r == 'b' ? 2 : 10;
    if (base != 10)
      text.remove_prefix(2);
  }
  std::vector<std::uint32_t> limbs; // little-endian, base 1e9
  for (char c : text) {
    unsigned digit =
        c >= '0' && c <= '9' ? static_cast<unsigned>(c - '0') : static_cast<unsigned>((c | 0x20) - 'a' + 10);
    std::uint64_t carry = digit;
    for (auto &limb : limbs) {
      std::uint64_t v = std::uint64_t(limb) * base + carry;
      limb = static_cast<std::uint32_t>(v % 1000000000u);
      carry = v / 1000000000u;
    }
    if (carry)
      limbs.push_back(static_cast<std::uint32_t>(carry));
  }
  if (limbs.empty())
    return "0";
  std::string out = std::to_string(limbs.back());
  for (std::size_t i = limbs.size() - 1; i-- > 0;) {
    std::string part = std::to_string(limbs[i]);
    out.append(9 - part.size(), '0');
    out += part;
  }
  return out;
}

class Dumper {
public:
  Dumper(const SourceManager &sources, FileId file) : sources_(sources), file_(file) {}

  void stmt_list(std::string_view field, StmtList list, int indent) {
    if (list.empty())
      return;
    line(indent, field);
    out_ += ":\n";
    for (const Stmt *s : list)
      stmt(*s, indent + 1);
  }

  std::string take() { return std::move(out_); }

  void stmt(const Stmt &s, int indent) {
    line(indent, stmt_kind_name(s.kind));
    switch (s.kind) {
    case StmtKind::FunctionDef: {
      const auto &f = s.as<FunctionDefStmt>();
      out_ += " name=";
      out_ += f.name;
      pos(s);
      expr_list("decorators", f.decorators, indent + 1);
      arguments(*f.args, indent + 1);
      child("returns", f.returns, indent + 1);
      stmt_list("body", f.body, indent + 1);
      break;
    }
    case StmtKind::ClassDef: {
      const auto &c = s.as<ClassDefStmt>();
      out_ += " name=";
      out_ += c.name;
      pos(s);
      expr_list("decorators", c.decorators, indent + 1);
      expr_list("bases", c.bases, indent + 1);
      keywords(c.keywords, indent + 1);
      stmt_list("body", c.body, indent + 1);
      break;
    }
    case StmtKind::Return:
      pos(s);
      child("value", s.as<ReturnStmt>().value, indent + 1);
      break;
    case StmtKind::Delete:
      pos(s);
      expr_list("targets", s.as<DeleteStmt>().targets, indent + 1);
      break;
    case StmtKind::Assign:
      pos(s);
      expr_list("targets", s.as<AssignStmt>().targets, indent + 1);
      child("value", s.as<AssignStmt>().value, indent + 1);
      break;
    case StmtKind::AugAssign: {
      const auto &a = s.as<AugAssignStmt>();
      out_ += " op=";
      out_ += bin_op_name(a.op);
      pos(s);
      child("target", a.target, indent + 1);
      child("value", a.value, indent + 1);
      break;
    }
    case StmtKind::AnnAssign: {
      const auto &a = s.as<AnnAssignStmt>();
      out_ += a.simple ? " simple=1" : " simple=0";
      pos(s);
      child("target", a.target, indent + 1);
      child("annotation", a.annotation, indent + 1);
      child("value", a.value, indent + 1);
      break;
    }
    case StmtKind::For: {
      const auto &f = s.as<ForStmt>();
      pos(s);
      child("target", f.target, indent + 1);
      child("iter", f.iter, indent + 1);
      stmt_list("body", f.body, indent + 1);
      stmt_list("orelse", f.orelse, indent + 1);
      break;
    }
    case StmtKind::While: {
      const auto &w = s.as<WhileStmt>();
      pos(s);
      child("test", w.test, indent + 1);
      stmt_list("body", w.body, indent + 1);
      stmt_list("orelse", w.orelse, indent + 1);
      break;
    }
    case StmtKind::If: {
      const auto &i = s.as<IfStmt>();
      pos(s);
      child("test", i.test, indent + 1);
      stmt_list("body", i.body, indent + 1);
      stmt_list("orelse", i.orelse, indent + 1);
      break;
    }
    case StmtKind::With: {
      const auto &w = s.as<WithStmt>();
      pos(s);
      line(indent + 1, "items:\n");
      for (const WithItem *item : w.items) {
        line(indent + 2, "withitem");
        pos(*item);
        child("context_expr", item->context_expr, indent + 3);
        child("optional_vars", item->optional_vars, indent + 3);
      }
      stmt_list("body", w.body, indent + 1);
      break;
    }
    case StmtKind::Raise:
      pos(s);
      child("exc", s.as<RaiseStmt>().exc, indent + 1);
      child("cause", s.as<RaiseStmt>().cause, indent + 1);
      break;
    case StmtKind::Try: {
      const auto &t = s.as<TryStmt>();
      if (t.is_star)
        out_ += " star";
      pos(s);
      stmt_list("body", t.body, indent + 1);
      if (!t.handlers.empty()) {
        line(indent + 1, "handlers:\n");
        for (const ExceptHandler *h : t.handlers) {
          line(indent + 2, "ExceptHandler");
          if (!h->name.empty()) {
            out_ += " name=";
            out_ += h->name;
          }
          pos(*h);
          child("type", h->type, indent + 3);
          stmt_list("body", h->body, indent + 3);
        }
      }
      stmt_list("orelse", t.orelse, indent + 1);
      stmt_list("finalbody", t.finalbody, indent + 1);
      break;
    }
    case StmtKind::Assert:
      pos(s);
      child("test", s.as<AssertStmt>().test, indent + 1);
      child("msg", s.as<AssertStmt>().msg, indent + 1);
      break;
    case StmtKind::Import:
      pos(s);
      aliases(s.as<ImportStmt>().names, indent + 1);
      break;
    case StmtKind::ImportFrom: {
      const auto &i = s.as<ImportFromStmt>();
      out_ += " module=";
      out_ += i.module;
      out_ += " level=" + std::to_string(i.level);
      pos(s);
      aliases(i.names, indent + 1);
      break;
    }
    case StmtKind::Global:
    case StmtKind::Nonlocal: {
      auto names = s.kind == StmtKind::Global ? s.as<GlobalStmt>().names : s.as<NonlocalStmt>().names;
      for (std::string_view n : names) {
        out_ += ' ';
        out_ += n;
      }
      pos(s);
      break;
    }
    case StmtKind::Expr:
      pos(s);
      child("value", s.as<ExprStmt>().value, indent + 1);
      break;
    case StmtKind::Pass:
    case StmtKind::Break:
    case StmtKind::Continue:
      pos(s);
      break;
    }
  }

private:
  void line(int indent, std::string_view text) {
    out_.append(static_cast<std::size_t>(indent) * 2, ' ');
    out_ += text;
  }

  void pos(const Node &n) {
    LineCol b = sources_.line_col(n.range.begin);
    LineCol e = sources_.line_col(SourceLoc{file_, n.range.end});
    out_ += " @" + std::to_string(b.line) + ':' + std::to_string(b.column) + '-' + std::to_string(e.line) + ':' +
            std::to_string(e.column) + '\n';
  }

  void child(std::string_view field, const Expr *e, int indent) {
    if (!e)
      return;
    line(indent, field);
    out_ += ": ";
    expr(*e, indent);
  }

  void expr_list(std::string_view field, ExprList list, int indent) {
    if (list.empty())
      return;
    line(indent, field);
    out_ += ":\n";
    for (const Expr *e : list) {
      if (!e) {
        line(indent + 1, "<none>\n");
        continue;
      }
      line(indent + 1, "");
      expr(*e, indent + 1);
    }
  }

  void keywords(NodeList<Keyword> list, int indent) {
    if (list.empty())
      return;
    line(indent, "keywords:\n");
    for (const Keyword *k : list) {
      line(indent + 1, "keyword");
      if (!k->arg.empty()) {
        out_ += " arg=";
        out_ += k->arg;
      }
      pos(*k);
      child("value", k->value, indent + 2);
    }
  }

  void aliases(NodeList<Alias> list, int indent) {
    for (const Alias *a : list) {
      line(indent, "alias ");
      out_ += a->name;
      if (!a->asname.empty()) {
        out_ += " as ";
        out_ += a->asname;
      }
      pos(*a);
    }
  }

  void arg_list(std::string_view field, NodeList<Arg> list, int indent) {
    if (list.empty())
      return;
    line(indent, field);
    out_ += ":\n";
    for (const Arg *a : list)
      arg(*a, indent + 1);
  }

  void arg(const Arg &a, int indent) {
    line(indent, "arg ");
    out_ += a.name;
    pos(a);
    child("annotation", a.annotation, indent + 1);
  }

  void arguments(const Arguments &a, int indent) {
    line(indent, "args:\n");
    arg_list("posonlyargs", a.posonlyargs, indent + 1);
    arg_list("args", a.args, indent + 1);
    if (a.vararg) {
      line(indent + 1, "vararg:\n");
      arg(*a.vararg, indent + 2);
    }
    arg_list("kwonlyargs", a.kwonlyargs, indent + 1);
    expr_list("kw_defaults", a.kw_defaults, indent + 1);
    if (a.kwarg) {
      line(indent + 1, "kwarg:\n");
      arg(*a.kwarg, indent + 2);
    }
    expr_list("defaults", a.defaults, indent + 1);
  }

  void generators(NodeList<Comprehension> list, int indent) {
    line(indent, "generators:\n");
    for (const Comprehension *c : list) {
      line(indent + 1, "comprehension");
      pos(*c);
      child("target", c->target, indent + 2);
      child("iter", c->iter, indent + 2);
      expr_list("ifs", c->ifs, indent + 2);
    }
  }

  void ctx(ExprContext c) {
    out_ += ' ';
    out_ += context_name(c);
  }

  /// Writes the node's header (its line is already indented) and its children below.
  void expr(const Expr &e, int indent) {
    out_ += expr_kind_name(e.kind);
    int in = indent + 1;
    switch (e.kind) {
    case ExprKind::BoolOp: {
      const auto &b = e.as<BoolOpExpr>();
      out_ += b.op == BoolOpKind::And ? " And" : " Or";
      pos(e);
      expr_list("values", b.values, in);
      break;
    }
    case ExprKind::NamedExpr:
      pos(e);
      child("target", e.as<NamedExpr>().target, in);
      child("value", e.as<NamedExpr>().value, in);
      break;
    case ExprKind::BinOp: {
      const auto &b = e.as<BinOpExpr>();
      out_ += ' ';
      out_ += bin_op_name(b.op);
      pos(e);
      child("left", b.left, in);
      child("right", b.right, in);
      break;
    }
    case ExprKind::UnaryOp: {
      const auto &u = e.as<UnaryOpExpr>();
      out_ += ' ';
      out_ += unary_op_name(u.op);
      pos(e);
      child("operand", u.operand, in);
      break;
    }
    case ExprKind::Lambda:
      pos(e);
      arguments(*e.as<LambdaExpr>().args, in);
      child("body", e.as<LambdaExpr>().body, in);
      break;
    case ExprKind::IfExp: {
      const auto &i = e.as<IfExpExpr>();
      pos(e);
      child("test", i.test, in);
      child("body", i.body, in);
      child("orelse", i.orelse, in);
      break;
    }
    case ExprKind::Dict:
      pos(e);
      expr_list("keys", e.as<DictExpr>().keys, in);
      expr_list("values", e.as<DictExpr>().values, in);
      break;
    case ExprKind::Set:
      pos(e);
      expr_list("elts", e.as<SetExpr>().elts, in);
      break;
    case ExprKind::ListComp:
    case ExprKind::SetComp:
    case ExprKind::GeneratorExp: {
      const auto &c = static_cast<const ComprehensionExpr &>(e);
      pos(e);
      child("elt", c.elt, in);
      generators(c.generators, in);
      break;
    }
    case ExprKind::DictComp: {
      const auto &c = e.as<DictCompExpr>();
      pos(e);
      child("key", c.key, in);
      child("value", c.value, in);
      generators(c.generators, in);
      break;
    }
    case ExprKind::Await:
      pos(e);
      child("value", e.as<AwaitExpr>().value, in);
      break;
    case ExprKind::Yield:
      pos(e);
      child("value", e.as<YieldExpr>().value, in);
      break;
    case ExprKind::YieldFrom:
      pos(e);
      child("value", e.as<YieldFromExpr>().value, in);
      break;
    case ExprKind::Compare: {
      const auto &c = e.as<CompareExpr>();
      for (CmpOpKind op : c.ops) {
        out_ += ' ';
        out_ += cmp_op_name(op);
      }
      pos(e);
      child("left", c.left, in);
      expr_list("comparators", c.comparators, in);
      break;
    }
    case ExprKind::Call: {
      const auto &c = e.as<CallExpr>();
      pos(e);
      child("func", c.func, in);
      expr_list("args", c.args, in);
      keywords(c.keywords, in);
      break;
    }
    case ExprKind::FormattedValue: {
      const auto &f = e.as<FormattedValueExpr>();
      if (f.conversion) {
        out_ += " conversion=";
        out_ += f.conversion;
      }
      pos(e);
      child("value", f.value, in);
      child("format_spec", f.format_spec, in);
      break;
    }
    case ExprKind::JoinedStr:
      pos(e);
      expr_list("values", e.as<JoinedStrExpr>().values, in);
      break;
    case ExprKind::Constant: {
      const auto &c = e.as<ConstantExpr>();
      switch (c.value_kind) {
      case ConstantKind::None:
        out_ += " None";
        break;
      case ConstantKind::True:
        out_ += " True";
        break;
      case ConstantKind::False:
        out_ += " False";
        break;
      case ConstantKind::Ellipsis:
        out_ += " Ellipsis";
        break;
      case ConstantKind::Int:
        out_ += " int ";
        if (c.int_overflow) {
          out_ += "big:";
          out_ += big_int_decimal(c.text);
        } else {
          out_ += std::to_string(c.int_value);
        }
        break;
      case ConstantKind::Float:
        out_ += " float ";
        append_double(out_, c.float_value);
        break;
      case ConstantKind::Imaginary:
        out_ += " complex ";
        append_double(out_, c.float_value);
        out_ += 'j';
        break;
      case ConstantKind::Str:
        out_ += " str ";
        append_repr(out_, c.text, false);
        break;
      case ConstantKind::Bytes:
        out_ += " bytes ";
        append_repr(out_, c.text, true);
        break;
      }
      pos(e);
      break;
    }
    case ExprKind::Attribute: {
      const auto &a = e.as<AttributeExpr>();
      out_ += " attr=";
      out_ += a.attr;
      ctx(a.ctx);
      pos(e);
      child("value", a.value, in);
      break;
    }
    case ExprKind::Subscript: {
      const auto &s = e.as<SubscriptExpr>();
      ctx(s.ctx);
      pos(e);
      child("value", s.value, in);
      child("slice", s.slice, in);
      break;
    }
    case ExprKind::Starred:
      ctx(e.as<StarredExpr>().ctx);
      pos(e);
      child("value", e.as<StarredExpr>().value, in);
      break;
    case ExprKind::Name:
      out_ += ' ';
      out_ += e.as<NameExpr>().id;
      ctx(e.as<NameExpr>().ctx);
      pos(e);
      break;
    case ExprKind::List:
      ctx(e.as<ListExpr>().ctx);
      pos(e);
      expr_list("elts", e.as<ListExpr>().elts, in);
      break;
    case ExprKind::Tuple:
      ctx(e.as<TupleExpr>().ctx);
      pos(e);
      expr_list("elts", e.as<TupleExpr>().elts, in);
      break;
    case ExprKind::Slice: {
      const auto &s = e.as<SliceExpr>();
      pos(e);
      child("lower", s.lower, in);
      child("upper", s.upper, in);
      child("step", s.step, in);
      break;
    }
    }
  }

  const SourceManager &sources_;
  FileId file_;
  std::string out_;
};

} // namespace

std::string dump_ast(const Module &module, const SourceManager &sources) {
  Dumper dumper(sources, module.file);
  std::string header = "Module\n";
  for (const Stmt *s : module.body)
    dumper.stmt(*s, 1);
  return header + dumper.take();
}

} // namespace nkicc::python
