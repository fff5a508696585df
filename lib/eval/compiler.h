// The compiler from the AST to the evaluator's register code: names are resolved to registers,
// cells and cached global lookups, constants are folded, comprehensions are inlined, and each
// instruction carries the source location its errors are reported at, so that the compiled
// form reports every error where the tree-walking evaluator did.
#pragma once

#include "eval/code.h"

namespace nkicc::eval {

/// The code of a module's body.
std::unique_ptr<Code> compile_module(const python::Module &module, const SymbolTable &symtable,
                                     trace::Interpreter &interp);
/// The code of a function or lambda.
std::unique_ptr<Code> compile_function(const FunctionTemplate &fn, trace::Interpreter &interp);
/// The code of a class body.
std::unique_ptr<Code> compile_class_body(const ClassTemplate &cls, trace::Interpreter &interp);

} // namespace nkicc::eval
