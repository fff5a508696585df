// Bytes that stay in the buffer they were built or read in, with whatever keeps that buffer
// alive: a BIR kernel or module is written from the FlatBuffers builder's own allocation (it
// builds from the end of it), and a persistent cache hit's BIR blob stays where the entry was
// read, so megabytes are never copied into a string on their way out.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace nkicc {

class OwnedBytes {
public:
  OwnedBytes() = default;
  OwnedBytes(std::shared_ptr<const void> owner, std::string_view bytes) : owner_(std::move(owner)), bytes_(bytes) {}

  /// Bytes that own themselves: the string, moved in.
  static OwnedBytes of(std::string bytes) {
    auto owner = std::make_shared<const std::string>(std::move(bytes));
    std::string_view view(*owner);
    return OwnedBytes(std::move(owner), view);
  }

  std::string_view bytes() const { return bytes_; }
  std::size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  /// `size` bytes from `offset` (within these bytes), kept alive by the same owner.
  OwnedBytes slice(std::size_t offset, std::size_t size) const { return {owner_, bytes_.substr(offset, size)}; }

private:
  std::shared_ptr<const void> owner_;
  std::string_view bytes_;
};

} // namespace nkicc
