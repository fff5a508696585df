// The C++ that flatc generates from share/nkicc/bir.fbs (build tree), and the file identifiers
// of the two buffer kinds. Private to lib/bir: nothing outside sees FlatBuffers types.
#pragma once

#include "nkicc/bir/bir_generated.h"

namespace nkicc::bir {

/// A Module buffer's identifier is the schema's; a Kernel buffer has its own, so that neither
/// can be mistaken for the other.
inline constexpr char kModuleIdentifier[] = "NBIR";
inline constexpr char kKernelIdentifier[] = "NBIK";

} // namespace nkicc::bir
