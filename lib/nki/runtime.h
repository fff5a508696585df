// NKI's modules as a kernel imports them (legacy `neuronxcc.nki.*` and new `nki.*` names,
// `numpy`) and the kernel being traced; one NkiRuntime per interpreter. The tracer's view of
// lib/nki: it resolves imports here, points `current` at the trace in progress, and reads
// the IR the KernelBuilder collects.
#pragma once

#include "builder.h"
#include "objects.h"
#include "tensor.h"

#include <map>

namespace nkicc::nki {

class NkiRuntime {
public:
  NkiRuntime();
  /// The ModuleResolver: `neuronxcc.nki.language`, `nki.isa`, `numpy`, ...; null otherwise.
  std::shared_ptr<Object> resolve(std::string_view dotted_name);
  /// The builder of the trace in progress; outside a kernel, NKI's error for `op`.
  KernelBuilder &builder(std::string_view op) const;
  KernelBuilder *current = nullptr;

private:
  void build_modules();
  std::map<std::string, std::shared_ptr<ModuleObject>, std::less<>> modules_;
};

/// The numpy module's NKI side: its ufuncs name NKI ops (`op=np.add`) and, on tiles, are the
/// nl op of the same name.
void add_numpy_aliases(ModuleObject &np, ModuleObject &nl);

} // namespace nkicc::nki
