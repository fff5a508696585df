# Prints CPython's AST of a file in the format of nkicc's dump_ast, so that the two parsers can
# be compared on the same input (a development aid: `diff` the outputs). Nodes whose CPython
# position is not meaningful (f-string parts) or absent (withitem, comprehension) print `@?`.
import ast
import sys


def pos(n):
    return " @%d:%d-%d:%d" % (n.lineno, n.col_offset + 1, n.end_lineno, n.end_col_offset + 1)


def rep(s, is_bytes):
    out = "b" if is_bytes else ""
    data = s if is_bytes else s
    quote = '"' if (("'" in s if not is_bytes else b"'" in s) and not ('"' in s if not is_bytes else b'"' in s)) else "'"
    out += quote
    for item in data:
        c = item if is_bytes else ord(item)
        ch = chr(c)
        if ch == quote or ch == "\\":
            out += "\\" + ch
        elif ch == "\n":
            out += "\\n"
        elif ch == "\r":
            out += "\\r"
        elif ch == "\t":
            out += "\\t"
        elif c < 0x20 or c == 0x7F or (is_bytes and c >= 0x80):
            out += "\\x%02x" % c
        else:
            out += ch
    return out + quote


class Dumper:
    def __init__(self):
        self.lines = []

    def w(self, indent, text):
        self.lines.append("  " * indent + text)

    def stmts(self, field, body, indent):
        if not body:
            return
        self.w(indent, field + ":")
        for s in body:
            self.stmt(s, indent + 1)

    def child(self, field, e, indent, nopos=False):
        if e is None:
            return
        self.expr(e, indent, field + ": ", nopos)

    def exprs(self, field, lst, indent, nopos=False):
        if not lst:
            return
        self.w(indent, field + ":")
        for e in lst:
            if e is None:
                self.w(indent + 1, "<none>")
            else:
                self.expr(e, indent + 1, "", nopos)

    def arg(self, a, indent):
        self.w(indent, "arg " + a.arg + pos(a))
        self.child("annotation", a.annotation, indent + 1)

    def arguments(self, a, indent):
        self.w(indent, "args:")
        for field in ("posonlyargs", "args"):
            lst = getattr(a, field)
            if lst:
                self.w(indent + 1, field + ":")
                for x in lst:
                    self.arg(x, indent + 2)
        if a.vararg:
            self.w(indent + 1, "vararg:")
            self.arg(a.vararg, indent + 2)
        if a.kwonlyargs:
            self.w(indent + 1, "kwonlyargs:")
            for x in a.kwonlyargs:
                self.arg(x, indent + 2)
        self.exprs("kw_defaults", a.kw_defaults, indent + 1)
        if a.kwarg:
            self.w(indent + 1, "kwarg:")
            self.arg(a.kwarg, indent + 2)
        self.exprs("defaults", a.defaults, indent + 1)

    def keywords(self, kws, indent):
        if not kws:
            return
        self.w(indent, "keywords:")
        for k in kws:
            self.w(indent + 1, "keyword" + ("" if k.arg is None else " arg=" + k.arg) + pos(k))
            self.child("value", k.value, indent + 2)

    def aliases(self, names, indent):
        for a in names:
            self.w(indent, "alias " + a.name + ("" if a.asname is None else " as " + a.asname) + pos(a))

    def stmt(self, s, indent):
        k = type(s).__name__
        if k == "TryStar":
            k = "Try star"
        if isinstance(s, ast.FunctionDef):
            self.w(indent, "FunctionDef name=" + s.name + pos(s))
            self.exprs("decorators", s.decorator_list, indent + 1)
            self.arguments(s.args, indent + 1)
            self.child("returns", s.returns, indent + 1)
            self.stmts("body", s.body, indent + 1)
        elif isinstance(s, ast.ClassDef):
            self.w(indent, "ClassDef name=" + s.name + pos(s))
            self.exprs("decorators", s.decorator_list, indent + 1)
            self.exprs("bases", s.bases, indent + 1)
            self.keywords(s.keywords, indent + 1)
            self.stmts("body", s.body, indent + 1)
        elif isinstance(s, ast.Return):
            self.w(indent, k + pos(s))
            self.child("value", s.value, indent + 1)
        elif isinstance(s, ast.Delete):
            self.w(indent, k + pos(s))
            self.exprs("targets", s.targets, indent + 1)
        elif isinstance(s, ast.Assign):
            self.w(indent, k + pos(s))
            self.exprs("targets", s.targets, indent + 1)
            self.child("value", s.value, indent + 1)
        elif isinstance(s, ast.AugAssign):
            self.w(indent, k + " op=" + type(s.op).__name__ + pos(s))
            self.child("target", s.target, indent + 1)
            self.child("value", s.value, indent + 1)
        elif isinstance(s, ast.AnnAssign):
            self.w(indent, k + " simple=%d" % s.simple + pos(s))
            self.child("target", s.target, indent + 1)
            self.child("annotation", s.annotation, indent + 1)
            self.child("value", s.value, indent + 1)
        elif isinstance(s, ast.For):
            self.w(indent, k + pos(s))
            self.child("target", s.target, indent + 1)
            self.child("iter", s.iter, indent + 1)
            self.stmts("body", s.body, indent + 1)
            self.stmts("orelse", s.orelse, indent + 1)
        elif isinstance(s, (ast.While, ast.If)):
            self.w(indent, k + pos(s))
            self.child("test", s.test, indent + 1)
            self.stmts("body", s.body, indent + 1)
            self.stmts("orelse", s.orelse, indent + 1)
        elif isinstance(s, ast.With):
            self.w(indent, k + pos(s))
            self.w(indent + 1, "items:")
            for it in s.items:
                self.w(indent + 2, "withitem @?")
                self.child("context_expr", it.context_expr, indent + 3)
                self.child("optional_vars", it.optional_vars, indent + 3)
            self.stmts("body", s.body, indent + 1)
        elif isinstance(s, ast.Raise):
            self.w(indent, k + pos(s))
            self.child("exc", s.exc, indent + 1)
            self.child("cause", s.cause, indent + 1)
        elif k in ("Try", "Try star"):
            self.w(indent, k + pos(s))
            self.stmts("body", s.body, indent + 1)
            if s.handlers:
                self.w(indent + 1, "handlers:")
                for h in s.handlers:
                    self.w(indent + 2, "ExceptHandler" + ("" if h.name is None else " name=" + h.name) + pos(h))
                    self.child("type", h.type, indent + 3)
                    self.stmts("body", h.body, indent + 3)
            self.stmts("orelse", s.orelse, indent + 1)
            self.stmts("finalbody", s.finalbody, indent + 1)
        elif isinstance(s, ast.Assert):
            self.w(indent, k + pos(s))
            self.child("test", s.test, indent + 1)
            self.child("msg", s.msg, indent + 1)
        elif isinstance(s, ast.Import):
            self.w(indent, k + pos(s))
            self.aliases(s.names, indent + 1)
        elif isinstance(s, ast.ImportFrom):
            self.w(indent, k + " module=" + (s.module or "") + " level=%d" % s.level + pos(s))
            self.aliases(s.names, indent + 1)
        elif isinstance(s, (ast.Global, ast.Nonlocal)):
            self.w(indent, k + "".join(" " + n for n in s.names) + pos(s))
        elif isinstance(s, ast.Expr):
            self.w(indent, k + pos(s))
            self.child("value", s.value, indent + 1)
        else:
            self.w(indent, k + pos(s))

    def expr(self, e, indent, prefix, nopos=False):
        k = type(e).__name__
        p = " @?" if nopos else pos(e)
        i = indent + 1

        def head(extra=""):
            self.w(indent, prefix + k + extra + p)

        if isinstance(e, ast.BoolOp):
            head(" " + type(e.op).__name__)
            self.exprs("values", e.values, i)
        elif isinstance(e, ast.NamedExpr):
            head()
            self.child("target", e.target, i)
            self.child("value", e.value, i)
        elif isinstance(e, ast.BinOp):
            head(" " + type(e.op).__name__)
            self.child("left", e.left, i)
            self.child("right", e.right, i)
        elif isinstance(e, ast.UnaryOp):
            head(" " + type(e.op).__name__)
            self.child("operand", e.operand, i)
        elif isinstance(e, ast.Lambda):
            head()
            self.arguments(e.args, i)
            self.child("body", e.body, i)
        elif isinstance(e, ast.IfExp):
            head()
            self.child("test", e.test, i)
            self.child("body", e.body, i)
            self.child("orelse", e.orelse, i)
        elif isinstance(e, ast.Dict):
            head()
            self.exprs("keys", e.keys, i)
            self.exprs("values", e.values, i)
        elif isinstance(e, ast.Set):
            head()
            self.exprs("elts", e.elts, i)
        elif isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            head()
            if isinstance(e, ast.DictComp):
                self.child("key", e.key, i)
                self.child("value", e.value, i)
            else:
                self.child("elt", e.elt, i)
            self.w(i, "generators:")
            for g in e.generators:
                self.w(i + 1, "comprehension @?")
                self.child("target", g.target, i + 2)
                self.child("iter", g.iter, i + 2)
                self.exprs("ifs", g.ifs, i + 2)
        elif isinstance(e, (ast.Await, ast.Yield, ast.YieldFrom)):
            head()
            self.child("value", e.value, i)
        elif isinstance(e, ast.Compare):
            head("".join(" " + type(o).__name__ for o in e.ops))
            self.child("left", e.left, i)
            self.exprs("comparators", e.comparators, i)
        elif isinstance(e, ast.Call):
            head()
            self.child("func", e.func, i)
            self.exprs("args", e.args, i)
            self.keywords(e.keywords, i)
        elif isinstance(e, ast.FormattedValue):
            conv = "" if e.conversion == -1 else " conversion=" + chr(e.conversion)
            head(conv)
            self.child("value", e.value, i)
            self.child("format_spec", e.format_spec, i, nopos=True)
        elif isinstance(e, ast.JoinedStr):
            head()
            self.exprs("values", e.values, i, nopos=True)
        elif isinstance(e, ast.Constant):
            v = e.value
            if v is None or v is True or v is False:
                head(" " + str(v))
            elif v is Ellipsis:
                head(" Ellipsis")
            elif isinstance(v, int):
                head(" int " + (str(v) if v <= 2**63 - 1 else "big:" + str(v)))
            elif isinstance(v, float):
                head(" float " + repr(v))
            elif isinstance(v, complex):
                head(" complex " + repr(v.imag) + "j")
            elif isinstance(v, str):
                head(" str " + rep(v, False))
            else:
                head(" bytes " + rep(v, True))
        elif isinstance(e, ast.Attribute):
            head(" attr=" + e.attr + " " + type(e.ctx).__name__)
            self.child("value", e.value, i)
        elif isinstance(e, ast.Subscript):
            head(" " + type(e.ctx).__name__)
            self.child("value", e.value, i)
            self.child("slice", e.slice, i)
        elif isinstance(e, ast.Starred):
            head(" " + type(e.ctx).__name__)
            self.child("value", e.value, i)
        elif isinstance(e, ast.Name):
            head(" " + e.id + " " + type(e.ctx).__name__)
        elif isinstance(e, (ast.List, ast.Tuple)):
            head(" " + type(e.ctx).__name__)
            self.exprs("elts", e.elts, i)
        elif isinstance(e, ast.Slice):
            head()
            self.child("lower", e.lower, i)
            self.child("upper", e.upper, i)
            self.child("step", e.step, i)
        else:
            head(" ?")


def main():
    src = open(sys.argv[1], "rb").read()
    tree = ast.parse(src)
    d = Dumper()
    for s in tree.body:
        d.stmt(s, 1)
    sys.stdout.write("Module\n" + "".join(l + "\n" for l in d.lines))


main()
