// Interned symbols, scopes and the compiled evaluator's register locals: names behave as
// Python binds them (comprehension scopes, del, closures, `from m import *` in a function, large
// scopes, recursion).
#include "nkicc/python/parser.h"
#include "nkicc/python/symbol.h"
#include "nkicc/trace/interpreter.h"

#include <catch2/catch.hpp>

#include <optional>
#include <string>

using namespace nkicc;
using namespace nkicc::trace;
using python::Symbol;

namespace {

/// Runs `src` and returns repr(f()) or `line:col: Id: message`.
std::string run_f(const std::string &src) {
  SourceManager sources;
  FileId file = sources.add_buffer("k.py", src);
  DiagnosticEngine diags(sources);
  std::optional<python::Module> module = python::parse_module(sources, file, diags);
  REQUIRE(module);
  Interpreter interp(sources, {}, nullptr);
  auto format = [&](const TraceError &e) {
    LineCol lc = sources.line_col(e.loc);
    return std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": " + e.id + ": " + e.message;
  };
  try {
    std::shared_ptr<ModuleObject> mod = interp.run_module(*module, "k");
    CallArgs args;
    return repr(interp.call(*mod->globals().find_local("f"), args));
  } catch (TraceError &e) {
    return format(e);
  }
}

} // namespace

TEST_CASE("symbols are interned once per name", "[scope]") {
  Symbol a = Symbol::intern("scope_test_name");
  CHECK(a == Symbol::intern(std::string("scope_test_") + "name"));
  CHECK(a != Symbol::intern("scope_test_other"));
  CHECK(a.name() == "scope_test_name");
  CHECK(Symbol::find("scope_test_name") == a);
  CHECK_FALSE(Symbol::find("scope_test_never_interned_anywhere"));
  CHECK(Symbol() == Symbol::intern(""));
}

TEST_CASE("scopes bind by symbol and by string alike", "[scope]") {
  Scope s;
  s.set("x", Value::integer(1));
  s.set(Symbol::intern("y"), Value::integer(2));
  REQUIRE(s.find_local("y"));
  CHECK(s.find_local("y")->i == 2);
  REQUIRE(s.find_local(Symbol::intern("x")));
  CHECK(s.find_local(Symbol::intern("x"))->i == 1);
  CHECK_FALSE(s.find_local("z"));
  CHECK(s.erase("x"));
  CHECK_FALSE(s.erase("x"));
  CHECK_FALSE(s.find_local("x"));

  // A large scope (a module's globals) finds every name through its index, after erasures too.
  Scope big;
  for (int k = 0; k < 300; ++k)
    big.set("name_" + std::to_string(k), Value::integer(k));
  CHECK(big.erase("name_17"));
  big.set("name_17", Value::integer(-17));
  for (int k = 0; k < 300; ++k) {
    Value *v = big.find_local("name_" + std::to_string(k));
    REQUIRE(v);
    CHECK(v->i == (k == 17 ? -17 : k));
  }
  CHECK(big.entries().back().name() == "name_17");

  // The version changes when a name is added or removed, not when it is rebound: compiled code
  // remembers where a global's value lives while the version stays.
  Scope g;
  g.set("a", Value::integer(1));
  std::uint64_t v1 = g.version();
  g.set("a", Value::integer(2));
  CHECK(g.version() == v1);
  g.set("b", Value::integer(3));
  CHECK(g.version() != v1);
  std::uint64_t v2 = g.version();
  CHECK(g.erase("b"));
  CHECK(g.version() != v2);
  CHECK(Scope().version() != Scope().version());
}

TEST_CASE("locals by slot keep Python's scoping", "[scope]") {
  // A comprehension's variable shadows the function's local of the same name.
  CHECK(run_f("def f():\n  x = 10\n  ys = [x for x in range(3)]\n  return x, ys, [x + i for i in range(2)]\n") ==
        "(10, [0, 1, 2], [10, 11])");
  // del unbinds a slot; assigning binds it again.
  CHECK(run_f("def f():\n  x = 1\n  del x\n  x = 2\n  return x\n") == "2");
  CHECK(run_f("def f():\n  if False:\n    q = 1\n  del q\n") ==
        "4:7: UnboundLocalError: cannot access local variable 'q' where it is not associated with a value");
  // Closures see the defining call's later assignments; defaults are evaluated at definition.
  CHECK(run_f("def f():\n  a = 1\n  g = lambda v, w=a: v + w + a\n  a = 5\n  return g(1)\n") == "7");
  // A name `from m import *` binds in a function is found, though it is not a declared local.
  CHECK(run_f("def f():\n  from math import *\n  return floor(2.5)\n") == "2");
  // More locals than a small scope scans.
  std::string many = "def f():\n";
  for (int k = 0; k < 20; ++k)
    many += "  v" + std::to_string(k) + " = " + std::to_string(k) + "\n";
  many += "  del v3\n  v3 = 30\n  return v0 + v3 + v19\n";
  CHECK(run_f(many) == "49");
  // Calls reuse scopes: recursion and repeated calls do not see each other's locals.
  CHECK(run_f("def fib(n):\n  if n < 2:\n    return n\n  a = fib(n - 1)\n  return a + fib(n - 2)\n"
              "def f():\n  return fib(12)\n") == "144");
  CHECK(run_f("def g(first):\n  if first:\n    y = 1\n  return y\ndef f():\n  g(True)\n  return g(False)\n") ==
        "4:10: UnboundLocalError: cannot access local variable 'y' where it is not associated with a value");
  // A closure keeps its call's scope alive after the call returns.
  CHECK(run_f("def make(k):\n  def m(v):\n    return v * k\n  return m\ndef f():\n  a = make(3)\n  b = make(5)\n"
              "  return a(2), b(2)\n") == "(6, 10)");
}
