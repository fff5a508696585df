// Fuzz target: the BIR readers: `nkicc dis` (module_to_text), the kernel printer that
// decode-config uses (kernel_to_text), and the decoders the simulator executes from
// (read_module, read_kernel). Every blob is either read or refused with a message; a module
// that reads has kernels that read.
#include "fuzz_common.h"

#include "nkicc/bir/bir.h"

using namespace nkicc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  std::string_view blob(reinterpret_cast<const char *>(data), size);
  std::string error;
  auto text = bir::module_to_text(blob, error);
  if (!text && error.empty())
    std::abort();
  error.clear();
  auto kernel_text = bir::kernel_to_text(blob, error);
  if (!kernel_text && error.empty())
    std::abort();
  error.clear();
  if (auto module = bir::read_module(blob, error)) {
    for (const auto &[key, kernel] : module->kernels) {
      std::string kernel_error;
      (void)bir::read_kernel(kernel, kernel_error);
    }
  } else if (error.empty()) {
    std::abort();
  }
  error.clear();
  (void)bir::read_kernel(blob, error);
  return 0;
}
