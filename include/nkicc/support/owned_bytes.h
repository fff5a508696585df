// Bytes that stay in the buffer they were built in, with whatever keeps that buffer alive: a
// BIR module is written from the FlatBuffers builder's own allocation (it builds from the end
// of it), so tens of megabytes are never copied into a string on their way out.
#pragma once

#include <memory>
#include <string_view>
#include <utility>

namespace nkicc {

class OwnedBytes {
public:
  OwnedBytes() = default;
  OwnedBytes(std::shared_ptr<const void> owner, std::string_view bytes) : owner_(std::move(owner)), bytes_(bytes) {}

  std::string_view bytes() const { return bytes_; }
  bool empty() const { return bytes_.empty(); }

private:
  std::shared_ptr<const void> owner_;
  std::string_view bytes_;
};

} // namespace nkicc
