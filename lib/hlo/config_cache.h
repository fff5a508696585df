// The backend_configs of one module's calls, each encoded once: a module of many calls usually
// repeats a few kernels, and a config costs about three times its BIR blob to encode.
#pragma once

#include "nkicc/hlo/hlo.h"

#include <string>
#include <string_view>
#include <unordered_map>

namespace nkicc::hlo {

/// `backend_config_json` with the blob's base64 given.
std::string backend_config_json(const HloCall &call, std::string_view ir_base64);

/// Valid while the calls' blobs are: blobs are keyed by address and size.
class ConfigCache {
public:
  /// The base64 backend_config of `call`, as backend_config(call) returns it.
  const std::string &get(const HloCall &call) {
    auto [blob, fresh] = blobs_.try_emplace(BlobKey{call.bir_blob.data(), call.bir_blob.size()});
    if (fresh)
      blob->second = base64_encode(call.bir_blob);
    auto [config, added] = configs_.try_emplace(backend_config_json(call, blob->second));
    if (added)
      config->second = base64_encode(config->first);
    return config->second;
  }

private:
  struct BlobKey {
    const char *data;
    std::size_t size;
    bool operator==(const BlobKey &) const = default;
  };
  struct BlobHash {
    std::size_t operator()(const BlobKey &k) const {
      return std::hash<const char *>()(k.data) ^ (std::hash<std::size_t>()(k.size) << 1);
    }
  };
  std::unordered_map<BlobKey, std::string, BlobHash> blobs_;
  std::unordered_map<std::string, std::string> configs_;
};

} // namespace nkicc::hlo
