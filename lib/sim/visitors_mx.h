// The visitors of the microscaling instructions (lib/nki/isa_mx.cpp emits them):
// quantize_mx and matmul_mx (visitors_mx.cpp).
#pragma once

#include "executor.h"

namespace nkicc::sim {

bool visit_matmul_mx(Executor &ex, const bir::KernelInstruction &inst);
bool visit_quantize_mx(Executor &ex, const bir::KernelInstruction &inst);

} // namespace nkicc::sim
