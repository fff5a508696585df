// The interpreter of SPEC §3's Python subset: values and their repr as CPython prints them,
// operators, scopes, binding, statements, builtins, and every error in CPython 3.11's words,
// located at the innermost expression.
#include "nkicc/trace/interpreter.h"

#include "nkicc/python/parser.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

using namespace nkicc;
using namespace nkicc::trace;

namespace {

/// Parses and runs a module; `result()` is repr(result) or `line:col: Id: message`.
struct Run {
  SourceManager sources;
  std::optional<python::Module> module;
  std::unique_ptr<Interpreter> interp;
  std::shared_ptr<ModuleObject> mod;
  std::vector<std::string> printed;
  std::string error;

  explicit Run(const std::string &src, InterpreterLimits limits = {}, ModuleResolver resolver = nullptr) {
    FileId file = sources.add_buffer("k.py", src);
    DiagnosticEngine diags(sources);
    module = python::parse_module(sources, file, diags);
    REQUIRE(module);
    interp = std::make_unique<Interpreter>(sources, limits, std::move(resolver));
    interp->set_print_handler([this](const std::string &s) { printed.push_back(s); });
    try {
      mod = interp->run_module(*module, "k");
    } catch (TraceError &e) {
      error = format_error(e);
    }
  }
  std::string format_error(const TraceError &e) const {
    std::string out;
    if (e.loc.valid()) {
      LineCol lc = sources.line_col(e.loc);
      out = std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": ";
    }
    return out + e.id + ": " + e.message;
  }
  std::string global(const std::string &name) {
    if (!error.empty())
      return error;
    Value *v = mod->globals().find_local(name);
    return v ? repr(*v) : "<unbound>";
  }
  std::string call(const std::string &fn, std::vector<Value> positional = {},
                   std::vector<std::pair<std::string, Value>> keywords = {}) {
    if (!error.empty())
      return error;
    CallArgs args;
    args.positional = std::move(positional);
    args.keywords = std::move(keywords);
    try {
      return repr(interp->call(*mod->globals().find_local(fn), args));
    } catch (TraceError &e) {
      return format_error(e);
    }
  }
};

/// repr() of one expression evaluated at module level, or its located error.
std::string ev(const std::string &expr) {
  Run r("result = " + expr + "\n");
  return r.global("result");
}

/// The result of calling `f()` defined by `src`.
std::string fcall(const std::string &src) {
  Run r(src);
  return r.call("f");
}

} // namespace

TEST_CASE("repr of built-in values matches CPython", "[interp]") {
  CHECK(ev("None") == "None");
  CHECK(ev("True") == "True");
  CHECK(ev("-7") == "-7");
  CHECK(ev("1.0") == "1.0");
  CHECK(ev("1e16") == "1e+16");
  CHECK(ev("0.1 + 0.2") == "0.30000000000000004");
  CHECK(ev("'it''s'") == "'its'");
  CHECK(ev("\"it's\"") == "\"it's\"");
  CHECK(ev("(1,)") == "(1,)");
  CHECK(ev("()") == "()");
  CHECK(ev("[1, 'a', (2, 3)]") == "[1, 'a', (2, 3)]");
  CHECK(ev("{1: 'a', 'b': [2]}") == "{1: 'a', 'b': [2]}");
  CHECK(ev("slice(1, 2)") == "slice(1, 2, None)");
  CHECK(ev("...") == "Ellipsis");
  CHECK(ev("range(4)") == "range(0, 4)");
  CHECK(ev("range(0, 8, 2)") == "range(0, 8, 2)");
  CHECK(loop_kind_name(LoopKind::Affine) == "affine_range");
  CHECK(loop_kind_name(LoopKind::Static) == "static_range");
}

TEST_CASE("integer and float arithmetic follow Python", "[interp]") {
  CHECK(ev("7 // 2, -7 // 2, 7 // -2, -7 % 3, 7 % -3") == "(3, -4, -4, 2, -2)");
  CHECK(ev("7 / 2, 6 / 3") == "(3.5, 2.0)");
  CHECK(ev("-7.5 // 2, -7.5 % 2, 7.5 % -2") == "(-4.0, 0.5, -0.5)");
  CHECK(ev("2 ** 10, 2 ** -1, 2.0 ** 3") == "(1024, 0.5, 8.0)");
  CHECK(ev("True + True, 3 * False, 1 + 2.5") == "(2, 0, 3.5)");
  CHECK(ev("1 << 4, -16 >> 2, 6 & 3, 6 | 3, 6 ^ 3, ~5") == "(16, -4, 2, 7, 5, -6)");
  CHECK(ev("True & False, True | False") == "(False, True)");
  CHECK(ev("-(-3), +4, not 0, not 'a'") == "(3, 4, True, False)");
  CHECK(ev("9223372036854775807 + 1") ==
        "1:10: OverflowError: integer overflow: the result does not fit in 64 bits (nkicc has no big integers)");
  CHECK(ev("3 * 2 ** 62").find("OverflowError") != std::string::npos);
  CHECK(ev("1 << 63").find("OverflowError") != std::string::npos);
  CHECK(ev("-(-9223372036854775807 - 1)").find("OverflowError") != std::string::npos);
  CHECK(ev("abs(-9223372036854775807 - 1)").find("OverflowError") != std::string::npos);
  CHECK(ev("10 ** 19").find("OverflowError") != std::string::npos);
}

TEST_CASE("division errors use CPython 3.11's words", "[interp]") {
  CHECK(ev("1 / 0") == "1:10: ZeroDivisionError: division by zero");
  CHECK(ev("1 // 0") == "1:10: ZeroDivisionError: integer division or modulo by zero");
  CHECK(ev("1 % 0") == "1:10: ZeroDivisionError: integer modulo by zero");
  CHECK(ev("1.0 / 0") == "1:10: ZeroDivisionError: float division by zero");
  CHECK(ev("1.0 % 0") == "1:10: ZeroDivisionError: float modulo");
  CHECK(ev("1.0 // 0") == "1:10: ZeroDivisionError: float floor division by zero");
  CHECK(ev("0 ** -1") == "1:10: ZeroDivisionError: 0.0 cannot be raised to a negative power");
  CHECK(ev("0.0 ** -1") == "1:10: ZeroDivisionError: 0.0 cannot be raised to a negative power");
  CHECK(ev("1 << -1") == "1:10: ValueError: negative shift count");
  CHECK(ev("10.0 ** 400") == "1:10: OverflowError: (34, 'Numerical result out of range')");
}

TEST_CASE("comparisons, identity, membership and boolean operators", "[interp]") {
  CHECK(ev("1 < 2 < 3, 1 < 3 < 2, 1 == 1.0, 'a' < 'b'") == "(True, False, True, True)");
  CHECK(ev("(1, 2) < (1, 3), [1, 2] < [1, 2, 0], (1,) == [1]") == "(True, True, False)");
  CHECK(ev("None is None, 1 is not None, [] is []") == "(True, True, False)");
  CHECK(ev("'b' in 'abc', 2 in (1, 2), 3 not in [1], 'k' in {'k': 1}, 4 in range(0, 8, 2), 5 in range(0, 8, 2)") ==
        "(True, True, True, True, True, False)");
  CHECK(ev("0 or 'x', 1 and 2, [] and 3, None or 0") == "('x', 2, [], 0)");
  CHECK(ev("'y' if 0 else 'n'") == "'n'");
  CHECK(ev("1 < 'a'") == "1:10: TypeError: '<' not supported between instances of 'int' and 'str'");
  CHECK(ev("1 in 5") == "1:10: TypeError: argument of type 'int' is not iterable");
  CHECK(ev("1 in 'a'") == "1:10: TypeError: 'in <string>' requires string as left operand, not int");
}

TEST_CASE("sequences: concatenation, repetition, indexing and slicing", "[interp]") {
  CHECK(ev("'ab' + 'c', 'ab' * 2, 3 * [0], (1,) + (2,)") == "('abc', 'abab', [0, 0, 0], (1, 2))");
  CHECK(ev("[1, 2, 3][-1], 'hello'[1:4], (0, 1, 2, 3, 4)[::-2], [0, 1, 2][5:]") == "(3, 'ell', (4, 2, 0), [])");
  CHECK(ev("'abcdef'[-2:], [1, 2, 3][::-1], 'abc'[10:-10:-1]") == "('ef', [3, 2, 1], 'cba')");
  CHECK(ev("(1, 2)[2]") == "1:10: IndexError: tuple index out of range");
  CHECK(ev("[1][-2]") == "1:10: IndexError: list index out of range");
  CHECK(ev("'ab'[2]") == "1:10: IndexError: string index out of range");
  CHECK(ev("[1][::0]") == "1:10: ValueError: slice step cannot be zero");
  CHECK(ev("'a' + 1") == "1:10: TypeError: can only concatenate str (not \"int\") to str");
  CHECK(ev("[] + ()") == "1:10: TypeError: can only concatenate list (not \"tuple\") to list");
  CHECK(ev("1 + 'a'") == "1:10: TypeError: unsupported operand type(s) for +: 'int' and 'str'");
  CHECK(ev("[] * 1.5") == "1:10: TypeError: can't multiply sequence by non-int of type 'float'");
  CHECK(ev("-'a'") == "1:10: TypeError: bad operand type for unary -: 'str'");
  CHECK(ev("None[0]") == "1:10: TypeError: 'NoneType' object is not subscriptable");
  CHECK(ev("[1]['a']") == "1:10: TypeError: list indices must be integers or slices, not str");
  CHECK(ev("{}['k']") == "1:10: KeyError: 'k'");
  CHECK(ev("{}[[]]") == "1:10: TypeError: unhashable type: 'list'");
  CHECK(ev("[0] * 10**12").find("MemoryError") != std::string::npos);
  CHECK(ev("'%d items, %s, %.2f' % (3, 'x', 1.5)") == "'3 items, x, 1.50'");
}

TEST_CASE("dicts, lists and str methods", "[interp]") {
  CHECK(fcall("def f():\n  d = {'a': 1}\n  d['b'] = 2\n  d['a'] += 5\n  return d, d.get('z', 0), list(d.items())\n") ==
        "({'a': 6, 'b': 2}, 0, [('a', 6), ('b', 2)])");
  CHECK(
      fcall(
          "def f():\n  l = [3, 1]\n  l.append(2)\n  l[0] = 9\n  l += [4]\n  l.sort()\n  return l, l.pop(), len(l)\n") ==
      "([1, 2, 4], 9, 3)");
  CHECK(ev("', '.join(['a', 'b']), 'a b  c'.split(), 'x_y'.split('_'), ' s '.strip(), 'ab'.upper()") ==
        "('a, b', ['a', 'b', 'c'], ['x', 'y'], 's', 'AB')");
  CHECK(ev("'{} and {:>3}'.format(1, 'x')") == "'1 and   x'");
  CHECK(ev("(1, 2)[0].foo") == "1:10: AttributeError: 'int' object has no attribute 'foo'");
  CHECK(fcall("def f():\n  t = (1, 2)\n  t[0] = 1\n") ==
        "3:3: TypeError: 'tuple' object does not support item assignment");
}

TEST_CASE("f-strings and the format-spec mini-language", "[interp]") {
  CHECK(ev("f'{1}-{\"a\"!r}-{2.5:.3f}-{255:#x}-{5:>4}-{\"ab\":*^6}'") == "\"1-'a'-2.500-0xff-   5-**ab**\"");
  CHECK(ev("f'{1234567:,}|{1234567:_}|{0.25:%}|{1.5e-7:e}|{12345.678:.3g}|{-3:+d}|{3: d}'") ==
        "'1,234,567|1_234_567|25.000000%|1.500000e-07|1.23e+04|-3| 3'");
  CHECK(ev("f'{7:08.3f}|{-7:05}|{10:b}|{8:o}|{1.0:.3}|{100.0:.3}|{0.1}|{True:>5}|{True}'") ==
        "'0007.000|-0007|1010|10|1.0|100.0|0.1|    1|True'");
  CHECK(ev("f'{\"é\"!a}'") == "\"'\\\\xe9'\"");
  CHECK(ev("f'{1:abc}'") == "1:13: ValueError: Invalid format specifier 'abc' for object of type 'int'");
  CHECK(ev("f'{\"a\":d}'") == "1:13: ValueError: Unknown format code 'd' for object of type 'str'");
  CHECK(ev("f'{None:5}'") == "1:13: TypeError: unsupported format string passed to NoneType.__format__");
  CHECK(ev("f'{1:.2d}'") == "1:13: ValueError: Precision not allowed in integer format specifier");
}

TEST_CASE("names: LEGB, closures, global, nonlocal, unbound locals", "[interp]") {
  CHECK(fcall("x = 1\ndef f():\n  return x + len('ab')\n") == "3");
  CHECK(fcall("def f():\n  a = 1\n  def g():\n    return a + 1\n  a = 5\n  return g()\n") == "6");
  CHECK(fcall("def f():\n  n = 0\n  def inc():\n    nonlocal n\n    n += 1\n  inc()\n  inc()\n  return n\n") == "2");
  CHECK(fcall("g = 0\ndef f():\n  global g\n  g = 7\n  return g\n") == "7");
  CHECK(fcall("x = 1\ndef f():\n  y = x\n  x = 2\n") ==
        "3:7: UnboundLocalError: cannot access local variable 'x' where it is not associated with a value");
  CHECK(fcall("def f():\n  return undefined_name\n") == "2:10: NameError: name 'undefined_name' is not defined");
  CHECK(fcall("def f():\n  x = 1\n  del x\n  return x\n") ==
        "4:10: UnboundLocalError: cannot access local variable 'x' where it is not associated with a value");
  CHECK(fcall("def make(k):\n  return lambda v: v * k\ndef f():\n  return make(3)(4)\n") == "12");
}

TEST_CASE("closures that escape their call keep their scope; those that do not are released", "[interp]") {
  // nkicc clears a call's scope at its end when only its own nested functions hold it; every
  // way a nested function can outlive the call must keep the scope alive.
  CHECK(fcall("def make():\n  n = 5\n  def g():\n    return n\n  return g\ndef f():\n  return make()()\n") == "5");
  CHECK(fcall("def make():\n  n = 6\n  def g():\n    return n\n  return [g]\ndef f():\n  return make()[0]()\n") == "6");
  CHECK(fcall("def make():\n  n = 7\n  fs = {'g': lambda: n}\n  return fs\ndef f():\n  return make()['g']()\n") == "7");
  CHECK(fcall("keep = []\ndef make():\n  n = 8\n  def g():\n    return n\n  keep.append(g)\ndef f():\n  make()\n"
              "  return keep[0]()\n") == "8");
  CHECK(fcall("def make():\n  n = 9\n  def g():\n    return n\n  def h():\n    return g() + 1\n  return h\n"
              "def f():\n  return make()()\n") == "10");
  CHECK(fcall("def make():\n  def g(v):\n    return v * 2\n  return g(21)\ndef f():\n"
              "  return sum(make() for _ in range(1000))\n") == "42000");
  // A nested function that outlives the call in a default argument or a closure cell.
  CHECK(
      fcall(
          "def make():\n  n = 3\n  def g():\n    return n\n  return lambda h=g: h()\ndef f():\n  return make()()\n") ==
      "3");
}

TEST_CASE("argument binding follows Python, with CPython's messages", "[interp]") {
  std::string defs = "def g(a, b=2, *args, k=3, **kw):\n  return (a, b, args, k, kw)\n"
                     "def h(a, b):\n  return a\n"
                     "def p(a, /, b):\n  return a\n"
                     "def q(*, k):\n  return k\n"
                     "def r(a, b=1):\n  return a\n";
  auto run = [&](const std::string &body) { return fcall(defs + "def f():\n  return " + body + "\n"); };
  CHECK(run("g(1)") == "(1, 2, (), 3, {})");
  CHECK(run("g(1, 5, 6, 7, k=8, z=9)") == "(1, 5, (6, 7), 8, {'z': 9})");
  CHECK(run("g(*[1, 2, 3], **{'k': 0})") == "(1, 2, (3,), 0, {})");
  CHECK(run("h(b=1, a=2)") == "2");
  CHECK(run("h(1)") == "12:10: TypeError: h() missing 1 required positional argument: 'b'");
  CHECK(run("h()") == "12:10: TypeError: h() missing 2 required positional arguments: 'a' and 'b'");
  CHECK(run("h(1, 2, 3)") == "12:10: TypeError: h() takes 2 positional arguments but 3 were given");
  CHECK(run("r(1, 2, 3)") == "12:10: TypeError: r() takes from 1 to 2 positional arguments but 3 were given");
  CHECK(run("h(1, 2, x=3)") == "12:10: TypeError: h() got an unexpected keyword argument 'x'");
  CHECK(run("h(1, a=3)") == "12:10: TypeError: h() got multiple values for argument 'a'");
  CHECK(run("q()") == "12:10: TypeError: q() missing 1 required keyword-only argument: 'k'");
  CHECK(run("p(a=1, b=2)") ==
        "12:10: TypeError: p() got some positional-only arguments passed as keyword arguments: 'a'");
  CHECK(fcall("def f():\n  def inner(a):\n    return a\n  return inner()\n") ==
        "4:10: TypeError: f.<locals>.inner() missing 1 required positional argument: 'a'");
  CHECK(fcall("def f():\n  return 5()\n") == "2:10: TypeError: 'int' object is not callable");
}

TEST_CASE("statements: unpacking, loops, else clauses, assert, raise, decorators", "[interp]") {
  CHECK(fcall("def f():\n  a, (b, c) = 1, [2, 3]\n  x, *rest, y = range(5)\n  return a, b, c, x, rest, y\n") ==
        "(1, 2, 3, 0, [1, 2, 3], 4)");
  CHECK(fcall("def f():\n  a, b = 1\n") == "2:3: TypeError: cannot unpack non-iterable int object");
  CHECK(fcall("def f():\n  a, b = [1, 2, 3]\n") == "2:3: ValueError: too many values to unpack (expected 2)");
  CHECK(fcall("def f():\n  a, *b, c = [1]\n") ==
        "2:3: ValueError: not enough values to unpack (expected at least 2, got 1)");
  CHECK(fcall("def f():\n  s = 0\n  for i in range(10):\n    if i == 2:\n      continue\n    if i == 5:\n      break\n"
              "    s += i\n  else:\n    s = -1\n  return s\n") == "8");
  CHECK(fcall("def f():\n  for i in []:\n    pass\n  else:\n    return 'else'\n") == "'else'");
  CHECK(fcall("def f():\n  i = 0\n  while i < 5:\n    i += 2\n  else:\n    i = -i\n  return i\n") == "-6");
  CHECK(fcall("def f():\n  x: int = 4\n  a = b = x\n  return a + b\n") == "8");
  CHECK(fcall("def f():\n  assert 1 == 2, f'bad {3}'\n") == "2:3: AssertionError: bad 3");
  CHECK(fcall("def f():\n  assert False\n") == "2:3: AssertionError: ");
  CHECK(fcall("def f():\n  raise ValueError('nope')\n") == "2:3: ValueError: nope");
  CHECK(fcall("def twice(fn):\n  return lambda: fn() * 2\n@twice\ndef f():\n  return 21\n") == "42");
  CHECK(
      fcall(
          "def f():\n  x = 1\n  if x > 2:\n    return 'a'\n  elif x > 0:\n    return 'b'\n  else:\n    return 'c'\n") ==
      "'b'");
  CHECK(fcall("def f():\n  return [i * j for i in range(3) if i for j in (1, 10)], {k: k * 2 for k in 'ab'}, sum(x for "
              "x in "
              "range(4))\n") == "([1, 10, 2, 20], {'a': 'aa', 'b': 'bb'}, 6)");
}

TEST_CASE("builtins", "[interp]") {
  CHECK(ev("len('héllo'), len([1]), len({}), len(range(3, 10, 2))") == "(5, 1, 0, 4)");
  CHECK(ev("min(3, 1, 2), max([1, 5, 2]), max('ab', 'c', key=len), min([], default=7)") == "(1, 5, 'ab', 7)");
  CHECK(ev("abs(-3), abs(-2.5), int('42'), int(' -7 '), int(3.9), int('ff', 16), float('1.5'), float(2)") ==
        "(3, 2.5, 42, -7, 3, 255, 1.5, 2.0)");
  CHECK(ev("bool([]), str(12), tuple([1]), list('ab'), dict(a=1), dict([(1, 2)])") ==
        "(False, '12', (1,), ['a', 'b'], {'a': 1}, {1: 2})");
  CHECK(ev("list(enumerate('ab', 1)), list(zip([1, 2, 3], 'ab'))") == "([(1, 'a'), (2, 'b')], [(1, 'a'), (2, 'b')])");
  CHECK(ev("isinstance(1, int), isinstance(True, int), isinstance(1.0, (int, str)), isinstance([], list)") ==
        "(True, True, False, True)");
  CHECK(ev("sum([1, 2, 3]), sum([0.5], 1), any([0, 1]), all([]), sorted([3, 1, 2], reverse=True), list(reversed((1, "
           "2)))") == "(6, 1.5, True, True, [3, 2, 1], [2, 1])");
  CHECK(ev("divmod(7, -2), round(2.5), round(3.5), round(2.675, 2), round(1234, -2), pow(2, 10), pow(3, 4, 5)") ==
        "((-4, -1), 2, 4, 2.67, 1200, 1024, 1)");
  CHECK(ev("hasattr('a', 'join'), getattr(1, 'x', None), type(1) == int, type('a'), type(range(1))") ==
        "(True, None, True, <class 'str'>, <class 'range'>)");
  CHECK(ev("int('x')") == "1:10: ValueError: invalid literal for int() with base 10: 'x'");
  CHECK(ev("float('x')") == "1:10: ValueError: could not convert string to float: 'x'");
  CHECK(ev("int(float('inf'))") == "1:10: OverflowError: cannot convert float infinity to integer");
  CHECK(ev("max([])") == "1:10: ValueError: max() arg is an empty sequence");
  CHECK(ev("len(5)") == "1:10: TypeError: object of type 'int' has no len()");
  CHECK(ev("isinstance(1, 2)") == "1:10: TypeError: isinstance() arg 2 must be a type, a tuple of types, or a union");

  Run r("print('a', 1, [2])\nprint('x', 'y', sep='-', end='!')\n");
  CHECK(r.error.empty());
  REQUIRE(r.printed.size() == 2);
  CHECK(r.printed[0] == "a 1 [2]");
  CHECK(r.printed[1] == "x-y!");
}

TEST_CASE("math", "[interp]") {
  CHECK(fcall("import math\ndef f():\n  return math.ceil(2.1), math.floor(-2.1), math.sqrt(16), math.log2(8), "
              "math.isqrt(17), math.prod([2, 3]), math.gcd(12, 18), math.pi, math.inf, math.fabs(-1)\n") ==
        "(3, -3, 4.0, 3.0, 4, 6, 6, 3.141592653589793, inf, 1.0)");
  CHECK(fcall("import math\ndef f():\n  return math.sqrt(-1)\n") == "3:10: ValueError: math domain error");
  CHECK(fcall("import math\ndef f():\n  return math.nope\n") ==
        "3:10: AttributeError: module 'math' has no attribute 'nope'");
  CHECK(fcall("from math import ceil as c\ndef f():\n  return c(1.5)\n") == "2");
}

TEST_CASE("modules: __main__ is not run, opaque modules, dotted imports", "[interp]") {
  Run r("import torch\nimport numpy as np\nx = torch.zeros(3) + 1\nran = False\n"
        "if __name__ == '__main__':\n  ran = True\n"
        "def f():\n  return torch.zeros(3) + 1\n");
  CHECK(r.global("ran") == "False");
  CHECK(r.global("x") == "<torch.zeros()>");
  std::string err = r.call("f");
  CHECK(err.rfind("8:10: TypeError: ", 0) == 0);
  CHECK(err.find("torch") != std::string::npos);

  auto nl = std::make_shared<ModuleObject>("neuronxcc.nki.language");
  nl->globals().set("tile_size", Value::integer(128));
  auto root = std::make_shared<ModuleObject>("neuronxcc");
  ModuleResolver resolver = [&](Interpreter &, std::string_view name) -> std::shared_ptr<Object> {
    if (name == "neuronxcc")
      return root;
    if (name == "neuronxcc.nki.language")
      return nl;
    return nullptr;
  };
  Run d("import neuronxcc.nki.language\nimport neuronxcc.nki.language as nl\nfrom neuronxcc.nki.language import "
        "tile_size\n"
        "a = neuronxcc.nki.language.tile_size\nb = nl.tile_size + tile_size\nfrom neuronxcc.nki import language\n",
        {}, resolver);
  CHECK(d.global("a") == "128");
  CHECK(d.global("b") == "256");
  CHECK(d.global("language") == "<module 'neuronxcc.nki.language'>");
  Run e("from neuronxcc.nki.language import nope\n", {}, resolver);
  CHECK(e.error == "1:36: ImportError: cannot import name 'nope' from 'neuronxcc.nki.language' (unknown location)");
}

TEST_CASE("unsupported constructs are located diagnostics naming the kernel", "[interp]") {
  CHECK(fcall("def f():\n  with open('x') as h:\n    pass\n") ==
        "2:3: unsupported: unsupported Python construct 'with statement' in kernel 'f'");
  CHECK(fcall("def f():\n  try:\n    pass\n  except Exception:\n    pass\n") ==
        "2:3: unsupported: unsupported Python construct 'try statement' in kernel 'f'");
  CHECK(fcall("def g():\n  class C:\n    pass\ndef f():\n  g()\n") ==
        "2:3: unsupported: unsupported Python construct 'class definition' in kernel 'f'");
  CHECK(fcall("def f():\n  return (y := 1)\n") ==
        "2:11: unsupported: unsupported Python construct 'assignment expression' in kernel 'f'");
  Run m("class C:\n  pass\n");
  CHECK(m.error == "1:1: unsupported: unsupported Python construct 'class definition'");
}

TEST_CASE("runaway kernels end in diagnostics", "[interp]") {
  InterpreterLimits limits;
  limits.max_steps = 1'000'000;
  auto start = std::chrono::steady_clock::now();
  Run r("def f():\n  while True:\n    pass\n", limits);
  CHECK(r.call("f") == "2:3: step-budget: the trace ran more than 1000000 steps (an endless loop?); raise "
                       "--max-instructions or fix the loop");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK(fcall("def f():\n  return f()\n") == "2:10: RecursionError: maximum recursion depth exceeded");
  CHECK(fcall("def f():\n  a = []\n  for i in range(100000):\n    a = [a]\n  return len(a)\n") == "1");
}

namespace {
/// An iterable with NKI's affine loop kind, and a builtin that records the loop kind it sees.
class AffineRange : public Object {
public:
  explicit AffineRange(std::int64_t n) : n_(n) {}
  std::string_view type_name() const override { return "affine_range"; }
  LoopKind loop_kind() const override { return LoopKind::Affine; }
  std::unique_ptr<Iterator> iterate(Interpreter &) override {
    struct It : Iterator {
      std::int64_t i = 0, n;
      bool next(Value &out) override {
        if (i >= n)
          return false;
        out = Value::integer(i++);
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->n = n_;
    return it;
  }

private:
  std::int64_t n_;
};
} // namespace

TEST_CASE("loop kinds are recorded for the loop body", "[interp]") {
  std::vector<std::string> seen;
  auto nl = std::make_shared<ModuleObject>("nl");
  nl->globals().set("affine_range",
                    Value::object(std::make_shared<BuiltinFunction>("affine_range", [](Interpreter &, CallArgs &a) {
                      return Value::object(std::make_shared<AffineRange>(a.positional[0].i));
                    })));
  nl->globals().set(
      "record", Value::object(std::make_shared<BuiltinFunction>("record", [&](Interpreter &i, CallArgs &) {
        seen.push_back(std::string(loop_kind_name(i.current_loop_kind())) + "@" + std::to_string(i.loop_depth()));
        return Value();
      })));
  ModuleResolver resolver = [&](Interpreter &, std::string_view name) -> std::shared_ptr<Object> {
    return name == "nl" ? nl : nullptr;
  };
  Run r(
      "import nl\ndef f():\n  nl.record()\n  for i in nl.affine_range(2):\n    for j in range(1):\n      nl.record()\n"
      "    nl.record()\n",
      {}, resolver);
  CHECK(r.call("f") == "None");
  CHECK(seen == std::vector<std::string>{"none@0", "range@2", "affine_range@1", "range@2", "affine_range@1"});
}

TEST_CASE("throughput of a simple loop", "[.][interp-benchmark]") {
  InterpreterLimits limits;
  limits.max_steps = 1'000'000'000;
  Run r("def f():\n  x = 0\n  for i in range(10000000):\n    x = x + i\n  return x\n", limits);
  auto start = std::chrono::steady_clock::now();
  CHECK(r.call("f") == "49999995000000");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN("10M loop statements in " << s << " s: " << (10e6 / s / 1e6) << " M statements/s");
}
