// The backend_configs of one module's calls, each encoded once: a module of many calls usually
// repeats a few kernels, and a config costs about three times its BIR blob to encode.
#pragma once

#include "nkicc/hlo/hlo.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace nkicc::hlo {

/// Standard base64 with padding, of bytes given in pieces, appended to `out` as they come: a
/// config's JSON is encoded straight from its parts and the blob's base64, never joined first.
class Base64Encoder {
public:
  /// `total` (the bytes to come, when known) reserves the output once.
  explicit Base64Encoder(std::string &out, std::size_t total = 0);
  void add(std::string_view bytes);
  /// Encodes the last one or two bytes with their padding.
  void finish();

private:
  std::string &out_;
  unsigned char carry_[3] = {};
  std::size_t carried_ = 0;
};

/// A config's JSON around its one large field: `head` ends with `"serialize_ir_string": "`,
/// `tail` starts with the closing quote; between them goes the blob's base64.
struct ConfigJsonParts {
  std::string head, tail;
};
ConfigJsonParts backend_config_json_parts(const HloCall &call);

/// `backend_config_json` with the blob's base64 given.
std::string backend_config_json(const HloCall &call, std::string_view ir_base64);

/// Valid while the calls' blobs are: blobs are keyed by address and size. A call costs its
/// config's small parts (a few hundred bytes) to look up, never its blob.
class ConfigCache {
public:
  /// The base64 backend_config of `call`, as backend_config(call) returns it.
  const std::string &get(const HloCall &call) {
    ConfigJsonParts parts = backend_config_json_parts(call);
    std::string key;
    const char *address = call.bir_blob.data();
    std::size_t size = call.bir_blob.size();
    key.append(reinterpret_cast<const char *>(&address), sizeof address);
    key.append(reinterpret_cast<const char *>(&size), sizeof size);
    key += parts.head;
    key += '\0'; // no JSON text holds a NUL: head and tail cannot run into each other
    key += parts.tail;
    auto [config, added] = configs_.try_emplace(std::move(key));
    if (added) {
      const std::string &ir = blob_base64(call.bir_blob);
      Base64Encoder encoder(config->second, parts.head.size() + ir.size() + parts.tail.size());
      encoder.add(parts.head);
      encoder.add(ir);
      encoder.add(parts.tail);
      encoder.finish();
    }
    return config->second;
  }

private:
  const std::string &blob_base64(std::string_view blob) {
    auto [it, fresh] = blobs_.try_emplace(BlobKey{blob.data(), blob.size()});
    if (fresh)
      it->second = base64_encode(blob);
    return it->second;
  }

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
