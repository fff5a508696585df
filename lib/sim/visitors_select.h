// The visitors of the selection, shuffle and random-number instructions
// (lib/nki/isa_select.cpp emits them): max8, nc_find_index8, nc_match_replace8,
// nc_stream_shuffle, nl.rand, nl.random_seed, dropout, sequence_bounds, local_gather,
// nl.device_print.
#pragma once

#include "executor.h"

namespace nkicc::sim {

bool visit_max8(Executor &ex, const bir::KernelInstruction &inst);
bool visit_find_index8(Executor &ex, const bir::KernelInstruction &inst);
bool visit_match_replace8(Executor &ex, const bir::KernelInstruction &inst);
bool visit_stream_shuffle(Executor &ex, const bir::KernelInstruction &inst);
bool visit_rand(Executor &ex, const bir::KernelInstruction &inst);
bool visit_random_seed(Executor &ex, const bir::KernelInstruction &inst);
bool visit_dropout(Executor &ex, const bir::KernelInstruction &inst);
bool visit_sequence_bounds(Executor &ex, const bir::KernelInstruction &inst);
bool visit_local_gather(Executor &ex, const bir::KernelInstruction &inst);
bool visit_device_print(Executor &ex, const bir::KernelInstruction &inst);

} // namespace nkicc::sim
