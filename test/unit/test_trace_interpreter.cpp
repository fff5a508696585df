// The interpreter of SPEC §3's Python subset: values and their repr as CPython prints them,
// operators, scopes, binding, statements, builtins, and every error in CPython 3.11's words,
// located at the innermost expression.
#include "nkicc/trace/interpreter.h"

#include "nkicc/python/parser.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>

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
  /// Calls `fn` as the tracer calls a kernel (Interpreter::tracing_kernel holds during it).
  std::string call(const std::string &fn, std::vector<Value> positional = {},
                   std::vector<std::pair<std::string, Value>> keywords = {}) {
    if (!error.empty())
      return error;
    Interpreter::KernelTraceScope tracing{*interp};
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
  // Host code (not a kernel's trace) computes with placeholders, also inside a function.
  Run h("import torch\ndef g():\n  return torch.zeros(3) + 1\ny = g()\n");
  CHECK(h.global("y") == "<torch.zeros()>");

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
  CHECK(fcall("def f():\n  x = yield 1\n") ==
        "2:7: unsupported: unsupported Python construct 'yield expression' in kernel 'f'");
  CHECK(fcall("def f():\n  return 1j\n") == "2:10: unsupported: unsupported Python construct 'complex number' in kernel 'f'");
  Run m("x = b'ab'\n");
  CHECK(m.error == "1:5: unsupported: unsupported Python construct 'bytes literal'");
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

TEST_CASE("int / int is correctly rounded beyond 2^53, as CPython's", "[interp]") {
  // Expected quotients printed by CPython 3.11 as float.hex(a / b).
  struct Case {
    std::int64_t a, b;
    const char *hex;
  };
  const Case cases[] = {
      {9223372036854775807LL, 3LL, "0x1.5555555555555p+61"},
      {INT64_MIN, 3LL, "-0x1.5555555555555p+61"},
      {9223372036854775807LL, 9223372036854775807LL, "0x1.0000000000000p+0"},
      {INT64_MIN, -1LL, "0x1.0000000000000p+63"},
      {9007199254740993LL, 1LL, "0x1.0000000000000p+53"},
      {9007199254740993LL, 2LL, "0x1.0000000000000p+52"},
      {9007199254740993LL, 3LL, "0x1.5555555555556p+51"},
      {-9007199254740995LL, 7LL, "-0x1.2492492492494p+50"},
      {1LL, 9223372036854775807LL, "0x1.0000000000000p-63"},
      {12345678901234567LL, 10LL, "0x1.18b54f22aeb03p+50"},
      {4611686018427387905LL, 2305843009213693955LL, "0x1.0000000000000p+1"},
      {9223372036854775807LL, -4611686018427387903LL, "-0x1.0000000000000p+1"},
      {18014398509481983LL, 2LL, "0x1.0000000000000p+53"},
      {3LL, 36028797018963969LL, "0x1.8000000000000p-54"},
      {6278314744523580143LL, 8178487946830493815LL, "0x1.890affbba9eb1p-1"},
      {-7135090535216748403LL, 6796619034484074658LL, "-0x1.0cbfb10af82a1p+0"},
      {807245392750664142LL, -4624032049778536635LL, "-0x1.658824eda61d7p-3"},
      {-5225412918917539040LL, 4901769371750354077LL, "-0x1.10e712252ad01p+0"},
      {-1017601865735381429LL, -9125361901619617366LL, "0x1.c8c2796207313p-4"},
      {-3886633566064428532LL, 3516723173199664692LL, "-0x1.1aed79e86f9c7p+0"},
      {-3711689638677909673LL, -1569694061328666230LL, "0x1.2eab06b50e190p+1"},
      {-6535646215565993069LL, -3101737243867545856LL, "0x1.0db5321d2c955p+1"},
      {-2990275005756324949LL, -5814907404099792577LL, "0x1.074ad95656de5p-1"},
      {3775479192418272757LL, -1497373166783613018LL, "-0x1.42bd4a28b3064p+1"},
      {-870275754132048363LL, 8382098646157929331LL, "-0x1.a944f2eaf71d1p-4"},
      {4717504199111745942LL, 5083978340113225226LL, "0x1.db17ca0ed21ccp-1"},
      {5482864479294113307LL, -3765648096750146217LL, "-0x1.74bdd2b62929cp+0"},
      {-5377532202205081506LL, 2044407312726891369LL, "-0x1.50afb762b209cp+1"},
      {-6489645105857182963LL, -7524918575836000434LL, "0x1.b98f32c5c9e9cp-1"},
      {-3379443766361623304LL, 5511400445575114492LL, "-0x1.39f1dad1aa012p-1"},
      {-8636277029682526457LL, 1733260233307143618LL, "-0x1.3ee430ce8385bp+2"},
      {-4607833270300173744LL, -1443323327528190823LL, "0x1.98a45fe57690dp+1"},
      {-1589695769437602206LL, -1207243700485761001LL, "0x1.5119a803dfc31p+0"},
      {-3785033330447126057LL, 6497914973209143820LL, "-0x1.2a3d6594f2d9dp-1"},
      {409413535435301339LL, -3362799827304786089LL, "-0x1.f2add691f0efbp-4"},
      {-3854952336344010431LL, 7413017308708126267LL, "-0x1.0a40ae7eb5897p-1"},
      {6784692889685563544LL, -7579076946775220934LL, "-0x1.ca55fafff009ap-1"},
      {5070974714781831479LL, 4789489358162434413LL, "0x1.0f0ba5bd57ed0p+0"},
      {2761332835105049790LL, 6489970370167582732LL, "0x1.b3b03b26347bfp-2"},
      {-683655017347925461LL, 5490229724975434892LL, "-0x1.fe0ae6bad6cf9p-4"},
      {-1688448500603016138LL, 6325011982149617623LL, "-0x1.115ac88f65ce3p-2"},
      {8782904236135746656LL, -1537842891513630415LL, "-0x1.6d840b502858cp+2"},
      {-1461129139724881210LL, 2524744396364848136LL, "-0x1.284e7554f5f21p-1"},
      {9149895354356667693LL, 8850009131679601622LL, "0x1.08acb6e89fcabp+0"},
      {-7178940850033995407LL, -5874417020748066255LL, "0x1.38d97da0b5ac8p+0"},
      {891360363637902369LL, -639545590939809347LL, "-0x1.64cc276f18bd1p+0"},
      {1663239747976107369LL, -9211185821460255210LL, "-0x1.71cd505516ff5p-3"},
      {8339894920756507746LL, -7474221066388806019LL, "-0x1.1da676a3c43dcp+0"},
      {233308909397579836LL, 1492272234867948283LL, "0x1.4031ab5286886p-3"},
      {-1492306001556103923LL, -2408356699366513481LL, "0x1.3d4102c880e65p-1"},
      {1177993248992111227LL, 2003498902947048749LL, "0x1.2d0a24600471ap-1"},
      {-9205894085508697073LL, -1306012996623427525LL, "0x1.c32069cc692b7p+2"},
      {-5048212312510973310LL, -2217657706857951858LL, "0x1.23602254556a0p+1"},
      {-68151435954395159LL, -8860500225440241084LL, "0x1.f813a879775b0p-8"},
      {8933324962315833083LL, -504LL, "-0x1.f7c543f396351p+53"},
      {-425461113288737002LL, -125LL, "0x1.82f46285f8210p+51"},
      {-3816574110732313671LL, 801LL, "-0x1.0ed8687c072b4p+52"},
      {-1985075241471605968LL, -492LL, "0x1.cab1649069871p+51"},
      {8029003089569917407LL, 801LL, "0x1.1ce43145562c8p+53"},
      {-182275782467152410LL, 865LL, "-0x1.7f4dc0853eb11p+47"},
      {9017233418134576116LL, -301LL, "-0x1.a9b91038e2e37p+54"},
      {9084713375411755503LL, 531LL, "0x1.e64216e1145fep+53"},
      {4803507787741259234LL, -308LL, "-0x1.bb42699c5e060p+53"},
      {3837426339213955533LL, -629LL, "-0x1.5acadc18a34a2p+52"},
      {550958287612602119LL, -476LL, "-0x1.072def6d11de8p+50"},
      {1675051078724946566LL, 38LL, "0x1.3935954e51516p+55"},
      {981887266490075737LL, 703LL, "0x1.3d933bbe8241cp+50"},
      {-8954777885287047009LL, -798LL, "0x1.3eef594a93b7dp+53"},
      {6294036424562191523LL, -488LL, "-0x1.6e92812dcb1e2p+53"},
      {7358354125170130096LL, 477LL, "0x1.b6713e1bad8c0p+53"},
      {6203245928619180994LL, -712LL, "-0x1.ef3e74d0d9144p+52"},
      {-6591313418222143895LL, -490LL, "0x1.7e51b5513f4e8p+53"},
      {5752119886471600440LL, 71LL, "0x1.1fd36a95c8792p+56"},
      {5895463933466609980LL, 811LL, "0x1.9d3757e0855b7p+52"},
      {8156525978972178452LL, -342LL, "-0x1.52ebf1843b879p+54"},
      {3712373121685062312LL, 51LL, "0x1.029b9a070dc8dp+56"},
      {-6966293154990298431LL, 630LL, "-0x1.3a46b03e474bep+53"},
      {7283632841875959861LL, -300LL, "-0x1.5905ac4d866f9p+54"},
      {2955384271200843197LL, 764LL, "0x1.b7c676dfa708fp+51"},
      {-9039478364344966218LL, -94LL, "0x1.55a5407ce9272p+56"},
      {1848688965209252421LL, -502LL, "-0x1.a2ab24d31729fp+51"},
      {2880546389484635887LL, 937LL, "0x1.5d7fa5c4fec58p+51"},
      {3639473996378092127LL, -155LL, "-0x1.4dad7aa960b3bp+54"},
      {2229802402306141318LL, 270LL, "0x1.d571640fed580p+52"},
      {-4876723405602515019LL, -853LL, "0x1.44fb633746076p+52"},
      {8764103064330818718LL, 828LL, "0x1.2cd593eb04940p+53"},
      {-2375680101450874333LL, -755LL, "0x1.65ba004d6ef0ap+51"},
      {2859498924069680019LL, 88LL, "0x1.cdc598aec350ep+54"},
      {6703268133430850952LL, -519LL, "-0x1.6f165d2264fc6p+53"},
      {-2128395573272114872LL, 869LL, "-0x1.16727793d3711p+51"},
      {8338693191223121275LL, 698LL, "0x1.538a9ada6d821p+53"},
      {-7082115027357513817LL, -997LL, "0x1.93c8715e3c7f4p+52"},
      {-5321869173807999132LL, -719LL, "0x1.a4bddc10b02fep+52"},
      {6194733977965906536LL, -297LL, "-0x1.2867d5b3a552ep+54"},
  };
  int naive_differs = 0;
  for (const Case &c : cases) {
    double expected = std::strtod(c.hex, nullptr);
    double got = nkicc::trace::int_true_divide(c.a, c.b);
    INFO(c.a << " / " << c.b);
    CHECK(std::memcmp(&got, &expected, sizeof got) == 0);
    naive_differs += static_cast<double>(c.a) / static_cast<double>(c.b) != expected;
  }
  // Converting each operand to double first rounds twice: these cases tell the two apart.
  CHECK(naive_differs > 0);
  CHECK(fcall("def f():\n  return 9007199254740993 / 3\n") == "3002399751580331.0");
  CHECK(fcall("def f():\n  return 7 / 2\n") == "3.5");
  CHECK(fcall("def f():\n  return -9223372036854775807 / 9223372036854775807\n") == "-1.0");
}
