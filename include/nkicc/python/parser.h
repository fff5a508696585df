// The parser for Python 3 source: tokens to the AST of ast.h, with syntax errors located and
// worded as CPython 3.11 words them (one error per file, as CPython).
#pragma once

#include "nkicc/python/ast.h"
#include "nkicc/support/diagnostics.h"

#include <optional>
#include <string>

namespace nkicc::python {

/// The parser's bound on expression nesting (unary operators, `not`, conditional expressions,
/// lambdas, nested f-strings), so that hostile input cannot overflow the stack. Brackets are
/// bounded earlier, by the tokenizer's 200 levels.
inline constexpr int kMaxExpressionDepth = 1000;

/// Tokenizes and parses one buffer; on a syntax error reports it (id `syntax-error`) and
/// returns std::nullopt.
std::optional<Module> parse_module(const SourceManager &sources, FileId file, DiagnosticEngine &diags);

/// A canonical, deterministic, indented text dump of the AST with line:col-endline:endcol on
/// every node, for golden tests.
std::string dump_ast(const Module &module, const SourceManager &sources);

} // namespace nkicc::python
