// Scope analysis of a module, as CPython's symtable: every function, lambda, class body and
// comprehension is a scope; each name used in a scope is classified once (local, cell, free,
// global, class namespace), so that the compiler turns names into registers, cells and global
// lookups before the first run.
//
// Comprehensions are compiled inline into the code of their enclosing function (PEP 709): their
// variables are registers of that code, and a name they read from the enclosing function is
// read directly, not through a cell.
#pragma once

#include "nkicc/python/ast.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nkicc::eval {

using python::Symbol;

enum class ScopeKind : std::uint8_t { Module, Function, Lambda, Class, Comprehension };

enum class NameKind : std::uint8_t {
  Local,          ///< a register of the function's code
  Cell,           ///< a local that a nested function captures: a cell in a register
  Free,           ///< a variable of an enclosing function, through a cell
  GlobalExplicit, ///< declared `global`
  GlobalImplicit, ///< not bound in any enclosing function: globals, then builtins
  Namespace,      ///< bound in a class body or at module level: the namespace
};

struct ScopeInfo {
  ScopeKind kind = ScopeKind::Module;
  const void *node = nullptr; ///< Module, FunctionDefStmt, LambdaExpr, ClassDefStmt or the comprehension
  std::string_view name;
  ScopeInfo *parent = nullptr;
  std::vector<ScopeInfo *> children;

  /// Every name used or bound here, classified (by symbol id, for a deterministic order).
  std::map<std::uint32_t, NameKind> names;
  /// Names bound here, in the order of their first binding (parameters first).
  std::vector<Symbol> bound;
  std::vector<Symbol> declared_global;
  std::vector<Symbol> declared_nonlocal;
  /// Free variables in a fixed order: the closure a function object carries.
  std::vector<Symbol> free;
  /// `from m import *` inside a function: names it binds are looked up at run time.
  bool import_star = false;
  /// A function defined directly in a class body that names `super` or `__class__`: it
  /// closes over the class (`__class__`), as CPython arranges for zero-argument super().
  bool needs_class_cell = false;
  /// A class body whose methods need `__class__`.
  bool has_class_cell = false;
  /// A nested def or lambda closes over this scope.
  bool has_nested_functions = false;

  NameKind kind_of(Symbol s) const {
    auto it = names.find(s.id());
    return it == names.end() ? (kind == ScopeKind::Module || kind == ScopeKind::Class ? NameKind::Namespace
                                                                                      : NameKind::GlobalImplicit)
                             : it->second;
  }
  bool binds(Symbol s) const;
  bool is_function_like() const {
    return kind == ScopeKind::Function || kind == ScopeKind::Lambda || kind == ScopeKind::Comprehension;
  }
};

/// A name the analysis rejects, as CPython's compiler would (`nonlocal x` without a binding).
struct SymtableError {
  std::string message;
  SourceLoc loc;
};

class SymbolTable {
public:
  /// Analyzes a whole module. Errors are listed, not thrown: the code that holds one raises it
  /// when it runs.
  explicit SymbolTable(const python::Module &module);

  const ScopeInfo &module_scope() const { return *scopes_.front(); }
  /// The scope a node opens (a def, lambda, class or comprehension); null for other nodes.
  const ScopeInfo *scope_of(const void *node) const;
  const std::vector<SymtableError> &errors() const { return errors_; }

private:
  friend class ScopeBuilder;
  std::vector<std::unique_ptr<ScopeInfo>> scopes_;
  std::map<const void *, ScopeInfo *> by_node_;
  std::vector<SymtableError> errors_;
};

/// The symbol of `__class__`.
Symbol class_cell_symbol();

} // namespace nkicc::eval
