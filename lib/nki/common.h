// What every part of NKI's language model shares: the interpreter's value types, brought into
// the nkicc::nki namespace, and the checked integer arithmetic that shapes, offsets and MAC
// counts use (SPEC §10: overflow is reported, never wrapped).
#pragma once

#include "nkicc/ir/kernel_ir.h"
#include "nkicc/trace/interpreter.h"
#include "nkicc/trace/numpy.h"

#include <cstdint>
#include <span>
#include <string>

namespace nkicc::nki {

using trace::BuiltinFunction;
using trace::CallArgs;
using trace::DictData;
using trace::DTypeObject; // lib: NumPy's dtype, also NKI's (nkicc/trace/numpy.h)
using trace::FunctionObject;
using trace::Interpreter;
using trace::Iterator;
using trace::LoopKind;
using trace::ModuleObject;
using trace::Object;
using trace::OpaqueObject;
using trace::raise_error;
using trace::raise_python;
using trace::SeqData;
using trace::SliceData;
using trace::TraceError;
using trace::Value;

std::int64_t checked_add(std::int64_t a, std::int64_t b);
std::int64_t checked_mul(std::int64_t a, std::int64_t b);

/// The shape of a value for messages: `[128, 512]`.
std::string shape_text(std::span<const std::int64_t> shape);

} // namespace nkicc::nki
