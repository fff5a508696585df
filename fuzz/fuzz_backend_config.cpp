// Fuzz target: `nkicc decode-config`. The input is the backend_config's JSON (what
// base64.b64decode gives back), encoded here, so that mutations work on the JSON and the BIR
// kernel it embeds rather than on base64 text; the first byte chooses whether the raw input is
// decoded as base64 text instead (padding, whitespace and alphabet errors).
#include "fuzz_common.h"

#include "nkicc/hlo/hlo.h"

using namespace nkicc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  if (size == 0)
    return 0;
  std::string rest = fuzz::text_of(data + 1, size - 1);
  std::string text = data[0] == '!' ? rest : hlo::base64_encode(rest);
  std::string error;
  auto decoded = hlo::decode_config(text, error);
  if (!decoded && error.empty())
    std::abort();
  return 0;
}
