#!/usr/bin/env python3
"""Checks an HLO text module against the rules of XLA's text parser and verifier that nkicc's
output must follow (reference/hlo.md), since no HLO parser can be installed here.

    hlo_check.py FILE|-

Exits 0 when the module passes; else prints `FILE:LINE:COL: error: MESSAGE` for the first
violation and exits 1 (2 for a usage or I/O error). What it checks:

- lexing: identifiers `[a-zA-Z_][a-zA-Z0-9_.-]*`; an attribute name is directly followed by `=`
  (`custom_call_target = "x"` is "expects attribute name"); instruction names carry `%` and are
  followed by exactly ` = `; signature parameter names carry no `%`; primitive type names and
  keywords are not names; strings are C-escaped (absl::CEscape); comments; balanced brackets.
- grammar: module ::= 'HloModule' name (',' attr)* computation+;
  computation ::= ['ENTRY'] name ['(' pname ':' shape, ... ')' '->' shape] '{' instruction+ '}';
  instruction ::= ['ROOT'] %name ' = ' shape opcode '(' operands ')' (',' attribute)*.
- shapes: `type[d0,d1]{layout}` with a layout as long as the rank and a permutation of
  0..rank-1; tuples; operand shapes equal the shapes of the instructions they name.
- parameters numbered exactly 0..n-1, matching the signature; the ROOT shape, the signature
  and entry_computation_layout agree.
- custom-call: custom_call_target present; attributes in XLA's print order, none twice; a valid
  api_version (never API_VERSION_UNSPECIFIED); output_to_operand_aliasing with operand index <
  operand count, a valid output index, identical shapes; get-tuple-element and tuple shapes.
"""
import re
import sys

PRIMITIVE_TYPES = {
    "pred", "s2", "s4", "s8", "s16", "s32", "s64", "u2", "u4", "u8", "u16", "u32", "u64", "f16", "bf16", "f32",
    "f64", "c64", "c128", "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e5m2fnuz", "f8e4m3fnuz", "f8e3m4",
    "f4e2m1fn", "f8e8m0fnu", "tuple", "opaque", "token",
}
KEYWORDS = {"true", "false", "inf", "nan", "HloModule", "ENTRY", "ROOT", "maximal", "replicated", "manual",
            "last_tile_dim_replicate", "last_tile_dims", "shard_as", "shard_like", "unknown"}
# custom-call attributes in the order XLA's printer writes them (reference/hlo.md).
CUSTOM_CALL_ATTRS = ["custom_call_target", "operand_layout_constraints", "custom_call_has_side_effect",
                     "output_to_operand_aliasing", "schedule", "api_version", "frontend_attributes", "metadata",
                     "backend_config"]
API_VERSIONS = {"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED",
                "API_VERSION_TYPED_FFI"}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]+")
C_ESCAPES = set("nrt\"'\\")


class CheckError(Exception):
    def __init__(self, pos, message):
        super().__init__(message)
        self.pos = pos
        self.message = message


class Token:
    __slots__ = ("kind", "text", "pos")

    def __init__(self, kind, text, pos):
        self.kind, self.text, self.pos = kind, text, pos

    def __repr__(self):
        return f"{self.kind}:{self.text!r}"


def lex(text):
    """Tokens: name (%x), attr (x directly before '='), ident, int, string, arrow, punctuation."""
    tokens = []
    stack = []  # open brackets, for balance
    pairs = {")": "(", "]": "[", "}": "{"}
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise CheckError(i, "unterminated comment")
            i = end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == '"':
            j = i + 1
            while True:
                if j >= n:
                    raise CheckError(i, "unterminated string")
                ch = text[j]
                o = ord(ch)
                if ch == '"':
                    break
                if o < 0x20 or o >= 0x7F:
                    raise CheckError(j, f"string byte 0x{o:02x} must be escaped (C-escaped strings: \\n, \\NNN)")
                if ch == "\\":
                    nxt = text[j + 1:j + 2]
                    if nxt in C_ESCAPES and nxt:
                        j += 2
                        continue
                    if re.match(r"[0-7]{3}", text[j + 1:j + 4]):
                        j += 4
                        continue
                    raise CheckError(j, f"invalid escape '\\{nxt}' in a string (C-escaped strings only)")
                j += 1
            tokens.append(Token("string", text[i + 1:j], i))
            i = j + 1
        elif c == "%":
            m = NAME_CHARS.match(text, i + 1)
            if not m:
                raise CheckError(i, "'%' must be followed by a name")
            tokens.append(Token("name", m.group(0), i))
            i = m.end()
        elif text.startswith("->", i):
            tokens.append(Token("->", "->", i))
            i += 2
        elif c.isdigit() or (c == "-" and i + 1 < n and text[i + 1].isdigit()):
            m = re.compile(r"-?[0-9]+").match(text, i)
            tokens.append(Token("int", m.group(0), i))
            i = m.end()
        elif c.isalpha() or c == "_":
            m = IDENT.match(text, i)
            word = m.group(0)
            kind = "attr" if text[m.end():m.end() + 1] == "=" else "ident"
            tokens.append(Token(kind, word, i))
            i = m.end()
        elif c in "([{":
            stack.append((c, i))
            tokens.append(Token(c, c, i))
            i += 1
        elif c in ")]}":
            if not stack or stack[-1][0] != pairs[c]:
                raise CheckError(i, f"unbalanced '{c}'")
            stack.pop()
            tokens.append(Token(c, c, i))
            i += 1
        elif c in ",:=*":
            tokens.append(Token(c, c, i))
            i += 1
        else:
            raise CheckError(i, f"unexpected character {c!r}")
    if stack:
        raise CheckError(stack[-1][1], f"unbalanced '{stack[-1][0]}': never closed")
    tokens.append(Token("eof", "", n))
    return tokens


class Shape:
    def __init__(self, elem=None, dims=None, layout=None, tuple_elems=None):
        self.elem, self.dims, self.layout, self.tuple_elems = elem, dims, layout, tuple_elems

    @property
    def is_tuple(self):
        return self.tuple_elems is not None

    def same(self, other, layouts=False):
        if self.is_tuple != other.is_tuple:
            return False
        if self.is_tuple:
            return len(self.tuple_elems) == len(other.tuple_elems) and all(
                a.same(b, layouts) for a, b in zip(self.tuple_elems, other.tuple_elems))
        if self.elem != other.elem or self.dims != other.dims:
            return False
        return not layouts or self.layout is None or other.layout is None or self.layout == other.layout

    def __str__(self):
        if self.is_tuple:
            return "(" + ", ".join(str(e) for e in self.tuple_elems) + ")"
        s = f"{self.elem}[{','.join(map(str, self.dims))}]"
        if self.layout is not None:
            s += "{" + ",".join(map(str, self.layout)) + "}"
        return s


class Instruction:
    def __init__(self, name, shape, opcode, pos):
        self.name, self.shape, self.opcode, self.pos = name, shape, opcode, pos
        self.operands = []  # (inline shape or None, name, pos)
        self.args = []      # tokens inside the parentheses when they are not operands (parameter(N))
        self.attrs = {}     # name -> (tokens of the value, pos)
        self.attr_order = []
        self.root = False


class Parser:
    def __init__(self, text):
        self.text = text
        self.tokens = lex(text)
        self.k = 0

    def peek(self, ahead=0):
        return self.tokens[min(self.k + ahead, len(self.tokens) - 1)]

    def next(self):
        t = self.peek()
        self.k += 1
        return t

    def expect(self, kind, what=None):
        t = self.next()
        if t.kind != kind:
            raise CheckError(t.pos, f"expected {what or repr(kind)}, found {t.text or t.kind!r}")
        return t

    def check_name(self, tok, what):
        base = tok.text
        if base in PRIMITIVE_TYPES or base in KEYWORDS:
            raise CheckError(tok.pos, f"{what} '{base}' is a reserved word (a primitive type name or keyword)")
        if not IDENT.fullmatch(base):
            raise CheckError(tok.pos, f"{what} '{base}' is not an identifier [a-zA-Z_][a-zA-Z0-9_.-]*")

    # shape ::= type '[' dims ']' [layout] | '(' [shape (',' shape)*] ')'
    def shape(self):
        t = self.peek()
        if t.kind == "(":
            self.next()
            elems = []
            if self.peek().kind != ")":
                elems.append(self.shape())
                while self.peek().kind == ",":
                    self.next()
                    elems.append(self.shape())
            self.expect(")", "')' closing a tuple shape")
            return Shape(tuple_elems=elems)
        if t.kind not in ("ident", "attr") or t.text not in PRIMITIVE_TYPES or t.text in ("tuple",):
            raise CheckError(t.pos, f"expected a shape, found {t.text or t.kind!r}")
        self.next()
        self.expect("[", "'[' after the element type")
        dims = []
        if self.peek().kind != "]":
            while True:
                d = self.expect("int", "a dimension")
                if int(d.text) < 0:
                    raise CheckError(d.pos, "negative dimension")
                dims.append(int(d.text))
                if self.peek().kind != ",":
                    break
                self.next()
        self.expect("]", "']' closing the dimensions")
        layout = None
        # As in XLA's parser, '{' starts a layout only when a number or '}' follows: a signature's
        # result shape is followed by the '{' of the body.
        if self.peek().kind == "{" and self.peek(1).kind in ("int", "}"):
            lpos = self.next().pos
            layout = []
            if self.peek().kind != "}":
                while True:
                    d = self.peek()
                    if d.kind != "int":
                        raise CheckError(d.pos, f"unsupported layout element {d.text!r}: minor-to-major integers only")
                    self.next()
                    layout.append(int(d.text))
                    if self.peek().kind != ",":
                        break
                    self.next()
            self.expect("}", "'}' closing the layout")
            if len(layout) != len(dims):
                raise CheckError(lpos, f"layout {{{','.join(map(str, layout))}}} has {len(layout)} entries but the "
                                       f"shape has rank {len(dims)}")
            if sorted(layout) != list(range(len(dims))):
                raise CheckError(lpos, f"layout {{{','.join(map(str, layout))}}} is not a permutation of "
                                       f"0..{len(dims) - 1}")
        return Shape(t.text, dims, layout)

    def balanced_value(self):
        """An attribute value: a string, an identifier, a number, or a bracketed group."""
        t = self.next()
        if t.kind in ("string", "ident", "int"):
            return [t]
        if t.kind in ("{", "(", "["):
            close = {"{": "}", "(": ")", "[": "]"}[t.kind]
            depth, toks = 1, [t]
            while depth:
                u = self.next()
                toks.append(u)
                if u.kind == t.kind:
                    depth += 1
                elif u.kind == close:
                    depth -= 1
            return toks
        raise CheckError(t.pos, f"expected an attribute value, found {t.text or t.kind!r}")

    def attribute(self, where):
        t = self.next()
        if t.kind != "attr":
            hint = " (write name=value with no space before '=')" if t.kind == "ident" else ""
            raise CheckError(t.pos, f"expects attribute name in {where}, found {t.text or t.kind!r}{hint}")
        self.expect("=")
        return t, self.balanced_value()

    def module(self):
        t = self.next()
        if t.kind != "ident" or t.text != "HloModule":
            raise CheckError(t.pos, "a module starts with 'HloModule'")
        name = self.next()
        if name.kind not in ("ident", "attr"):
            raise CheckError(name.pos, "expected the module name after 'HloModule'")
        self.check_name(name, "module name")
        attrs = {}
        while self.peek().kind == ",":
            self.next()
            a, value = self.attribute("the module header")
            if a.text in attrs:
                raise CheckError(a.pos, f"module attribute '{a.text}' given twice")
            attrs[a.text] = (value, a.pos)
        comps = []
        while self.peek().kind != "eof":
            comps.append(self.computation())
        if not comps:
            raise CheckError(self.peek().pos, "a module needs at least one computation")
        entries = [c for c in comps if c["entry"]]
        if len(entries) > 1:
            raise CheckError(entries[1]["pos"], "more than one ENTRY computation")
        entry = entries[0] if entries else comps[-1]
        if "entry_computation_layout" in attrs:
            self.check_entry_layout(attrs["entry_computation_layout"], entry)
        return comps

    def check_entry_layout(self, attr, entry):
        value, pos = attr
        sub = Parser.__new__(Parser)
        sub.text, sub.tokens, sub.k = self.text, value[1:-1] + [Token("eof", "", value[-1].pos)], 0
        if value[0].kind != "{":
            raise CheckError(pos, "entry_computation_layout must be {(...)->...}")
        sub.expect("(", "'(' in entry_computation_layout")
        params = []
        if sub.peek().kind != ")":
            params.append(sub.shape())
            while sub.peek().kind == ",":
                sub.next()
                params.append(sub.shape())
        sub.expect(")")
        sub.expect("->", "'->' in entry_computation_layout")
        result = sub.shape()
        sub.expect("eof", "the end of entry_computation_layout")
        if len(params) != len(entry["params"]) or not all(
                a.same(b.shape, layouts=True) for a, b in zip(params, entry["params"])):
            raise CheckError(pos, "entry_computation_layout's parameters do not match the ENTRY parameters")
        if not result.same(entry["root"].shape, layouts=True):
            raise CheckError(pos, f"entry_computation_layout's result {result} does not match the ROOT shape "
                                  f"{entry['root'].shape}")

    def computation(self):
        start = self.peek()
        entry = False
        if start.kind == "ident" and start.text == "ENTRY":
            entry = True
            self.next()
        name = self.next()
        if name.kind not in ("name", "ident"):
            raise CheckError(name.pos, f"expected a computation name, found {name.text or name.kind!r}")
        self.check_name(name, "computation name")
        signature = None
        if self.peek().kind == "(":
            self.next()
            signature = []
            while self.peek().kind != ")":
                p = self.next()
                if p.kind == "name":
                    raise CheckError(p.pos, f"parameter name '%{p.text}' in a signature carries no '%'")
                if p.kind != "ident":
                    raise CheckError(p.pos, f"expected a parameter name, found {p.text or p.kind!r}")
                self.check_name(p, "parameter name")
                self.expect(":", "':' after a parameter name")
                signature.append((p, self.shape()))
                if self.peek().kind == ",":
                    self.next()
                elif self.peek().kind != ")":
                    raise CheckError(self.peek().pos, "expected ',' or ')' in the signature")
            self.next()
            self.expect("->", "'->' after the parameters")
            signature_result = self.shape()
        self.expect("{", "'{' opening the computation body")
        insts = {}
        order = []
        while self.peek().kind != "}":
            inst = self.instruction()
            if inst.name in insts:
                raise CheckError(inst.pos, f"instruction name '%{inst.name}' defined twice")
            insts[inst.name] = inst
            order.append(inst)
        self.next()
        if not order:
            raise CheckError(start.pos, "a computation needs at least one instruction")
        roots = [i for i in order if i.root]
        if len(roots) > 1:
            raise CheckError(roots[1].pos, "more than one ROOT instruction")
        root = roots[0] if roots else order[-1]

        params = self.check_parameters(order, start.pos)
        for inst in order:
            self.check_instruction(inst, insts)
        if signature is not None:
            if len(signature) != len(params):
                raise CheckError(start.pos, f"the signature lists {len(signature)} parameters but the body has "
                                            f"{len(params)}")
            for (p, shape), inst in zip(signature, params):
                if p.text != inst.name:
                    raise CheckError(p.pos, f"signature parameter name '{p.text}' does not match parameter "
                                            f"'%{inst.name}'")
                if not shape.same(inst.shape):
                    raise CheckError(p.pos, f"signature parameter shape {shape} does not match {inst.shape}")
            if not signature_result.same(root.shape):
                raise CheckError(start.pos, f"the signature's result {signature_result} does not match the ROOT "
                                            f"shape {root.shape}")
        return {"entry": entry, "pos": start.pos, "params": params, "root": root}

    def check_parameters(self, order, pos):
        params = {}
        for inst in order:
            if inst.opcode != "parameter":
                continue
            if len(inst.args) != 1 or inst.args[0].kind != "int":
                raise CheckError(inst.pos, "parameter(N) takes one number")
            n = int(inst.args[0].text)
            if n in params:
                raise CheckError(inst.pos, f"parameter numbers must be 0..n-1 exactly: parameter({n}) appears twice")
            params[n] = inst
        for n in range(len(params)):
            if n not in params:
                raise CheckError(pos, f"parameter numbers must be 0..n-1 exactly: {len(params)} parameters but no "
                                      f"parameter({n})")
        return [params[n] for n in range(len(params))]

    def instruction(self):
        root = False
        t = self.peek()
        if t.kind == "ident" and t.text == "ROOT":
            root = True
            self.next()
        name = self.next()
        if name.kind != "name":
            raise CheckError(name.pos, f"instruction names carry '%', found {name.text or name.kind!r}")
        self.check_name(name, "instruction name")
        end = name.pos + 1 + len(name.text)
        if self.text[end:end + 3] != " = " or self.text[end + 3:end + 4] == " ":
            raise CheckError(end, f"instruction name '%{name.text}' must be followed by ' = '")
        self.expect("=")
        shape = self.shape()
        op = self.next()
        if op.kind != "ident":
            raise CheckError(op.pos, f"expected an opcode, found {op.text or op.kind!r}")
        inst = Instruction(name.text, shape, op.text, name.pos)
        inst.root = root
        self.expect("(", f"'(' after the opcode {op.text}")
        while self.peek().kind != ")":
            if self.peek().kind == "name":
                o = self.next()
                inst.operands.append((None, o.text, o.pos))
            elif self.peek().kind in ("(", "ident") and (self.peek().kind == "(" or self.peek().text in PRIMITIVE_TYPES):
                s = self.shape()
                o = self.expect("name", "an operand name after its shape")
                inst.operands.append((s, o.text, o.pos))
            else:
                inst.args.append(self.next())
            if self.peek().kind == ",":
                self.next()
            elif self.peek().kind != ")":
                raise CheckError(self.peek().pos, "expected ',' or ')' in the operand list")
        self.next()
        while self.peek().kind == ",":
            self.next()
            a, value = self.attribute(f"instruction '%{inst.name}'")
            if a.text in inst.attrs:
                raise CheckError(a.pos, f"attribute '{a.text}' given twice")
            inst.attrs[a.text] = (value, a.pos)
            inst.attr_order.append(a)
        return inst

    def check_instruction(self, inst, insts):
        shapes = []
        for inline, name, pos in inst.operands:
            if name not in insts:
                raise CheckError(pos, f"operand '%{name}' is not defined")
            defined = insts[name].shape
            if inline is not None and not inline.same(defined, layouts=True):
                raise CheckError(pos, f"operand shape {inline} does not match '%{name}' {defined}")
            shapes.append(defined)
        if inst.opcode == "custom-call":
            self.check_custom_call(inst, shapes)
        elif inst.opcode == "tuple":
            if not inst.shape.same(Shape(tuple_elems=shapes)):
                raise CheckError(inst.pos, f"tuple shape {inst.shape} does not match its operands")
        elif inst.opcode == "get-tuple-element":
            if len(shapes) != 1 or not shapes[0].is_tuple or "index" not in inst.attrs:
                raise CheckError(inst.pos, "get-tuple-element takes one tuple operand and index=")
            index = int(inst.attrs["index"][0][0].text)
            if not 0 <= index < len(shapes[0].tuple_elems):
                raise CheckError(inst.attrs["index"][1], f"get-tuple-element index {index} out of range")
            if not shapes[0].tuple_elems[index].same(inst.shape):
                raise CheckError(inst.pos, f"get-tuple-element shape {inst.shape} does not match element {index}")

    def check_custom_call(self, inst, operand_shapes):
        if "custom_call_target" not in inst.attrs:
            raise CheckError(inst.pos, "custom-call needs custom_call_target=\"...\"")
        if inst.attrs["custom_call_target"][0][0].kind != "string":
            raise CheckError(inst.attrs["custom_call_target"][1], "custom_call_target must be a string")
        last = -1
        for a in inst.attr_order:
            if a.text not in CUSTOM_CALL_ATTRS:
                continue
            rank = CUSTOM_CALL_ATTRS.index(a.text)
            if rank < last:
                raise CheckError(a.pos, f"attribute order: '{a.text}' must come before '{CUSTOM_CALL_ATTRS[last]}' "
                                        f"(XLA prints {', '.join(CUSTOM_CALL_ATTRS)})")
            last = rank
        if "api_version" in inst.attrs:
            value, pos = inst.attrs["api_version"]
            if value[0].text not in API_VERSIONS:
                raise CheckError(pos, f"invalid api_version {value[0].text} (XLA's parser rejects "
                                      f"API_VERSION_UNSPECIFIED; valid: {', '.join(sorted(API_VERSIONS))})")
        if "backend_config" in inst.attrs and inst.attrs["backend_config"][0][0].kind != "string":
            raise CheckError(inst.attrs["backend_config"][1], "backend_config must be the quoted string form")
        if "output_to_operand_aliasing" in inst.attrs:
            self.check_aliasing(inst, operand_shapes)

    def check_aliasing(self, inst, operand_shapes):
        value, pos = inst.attrs["output_to_operand_aliasing"]
        sub = Parser.__new__(Parser)
        sub.text, sub.tokens, sub.k = self.text, value[1:-1] + [Token("eof", "", value[-1].pos)], 0
        outputs = set()
        # {output_index}: (operand, {operand_index}) entries, comma-separated
        while sub.peek().kind != "eof":
            sub.expect("{", "'{' opening an output shape index")
            index = []
            while sub.peek().kind == "int":
                index.append(int(sub.next().text))
                if sub.peek().kind == ",":
                    sub.next()
            sub.expect("}", "'}' closing the output shape index")
            sub.expect(":", "':' after the output shape index")
            sub.expect("(", "'(' before the operand index")
            operand_tok = sub.expect("int", "an operand index")
            operand = int(operand_tok.text)
            sub.expect(",")
            sub.expect("{", "'{' opening the operand shape index")
            sub.expect("}", "'}' (operand shape indices are empty here)")
            sub.expect(")")
            if sub.peek().kind == ",":
                sub.next()
            if not 0 <= operand < len(operand_shapes):
                raise CheckError(operand_tok.pos, f"output_to_operand_aliasing: operand index {operand} is out of "
                                                  f"range: the custom-call has {len(operand_shapes)} operands")
            out = inst.shape
            for k in index:
                if not out.is_tuple or not 0 <= k < len(out.tuple_elems):
                    raise CheckError(pos, f"output_to_operand_aliasing: output index {{{k}}} does not exist in "
                                          f"{inst.shape}")
                out = out.tuple_elems[k]
            if tuple(index) in outputs:
                raise CheckError(pos, f"output_to_operand_aliasing: output {{{index}}} aliased twice")
            outputs.add(tuple(index))
            if not out.same(operand_shapes[operand]):
                raise CheckError(operand_tok.pos, f"output_to_operand_aliasing: output shape {out} and operand "
                                                  f"{operand} shape {operand_shapes[operand]} must be identical")


def line_col(text, pos):
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def main(argv):
    if len(argv) != 2:
        print("usage: hlo_check.py FILE|-", file=sys.stderr)
        return 2
    path = argv[1]
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as e:
        print(f"hlo_check.py: error: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 2
    # Bytes >= 0x80 are never valid outside strings and must be escaped inside them.
    text = data.decode("latin-1")
    try:
        Parser(text).module()
    except CheckError as e:
        line, col = line_col(text, e.pos)
        print(f"{path}:{line}:{col}: error: {e.message}", file=sys.stderr)
        return 1
    except RecursionError:
        print(f"{path}: error: nesting too deep", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
