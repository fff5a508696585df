// The NKI operations (nl.*, nisa.*) and the tensor operators they share.
#pragma once

#include "nki.h"

namespace nkicc::trace {

/// Methods of a tensor view: `x.reshape(shape)`, `x.broadcast_to(shape)`, `x.view(dtype)`.
std::optional<Value> tensor_method(Interpreter &interp, std::shared_ptr<TensorRef> self, std::string_view name);

/// `target[...] = value` and `target[...] op= value` on a view: a store into HBM, a copy or
/// memset on chip, and `psum[...] += nl.matmul(...)` folded into an accumulating matmul.
void assign_to_view(Interpreter &interp, TensorRef &target, const Value &value, std::optional<python::BinOpKind> op);

/// Python operators on tiles (`a + b`, `x * 0.125`, `1.0 / s`, `-x`).
std::optional<Value> tensor_binary_operator(Interpreter &interp, std::shared_ptr<TensorRef> self, python::BinOpKind op,
                                            const Value &other, bool reflected);
std::optional<Value> tensor_unary_operator(Interpreter &interp, std::shared_ptr<TensorRef> self,
                                           python::UnaryOpKind op);

/// Fills the `nl`, `nisa` and `numpy` modules with their functions.
void add_language_functions(NkiRuntime &rt, ModuleObject &nl);
void add_isa_functions(NkiRuntime &rt, ModuleObject &nisa);
void add_numpy_functions(NkiRuntime &rt, ModuleObject &np, ModuleObject &nl);

} // namespace nkicc::trace
