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
#include <vector>

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

/// Bytes in pieces, each kept alive by its owner, that read as their concatenation: a BIR module
/// is written as its own frame with every kernel blob left where the trace built it or the cache
/// read it, so that the output sends each piece from where it lies and no module-sized copy is
/// ever made.
class ByteSequence {
public:
  /// Adds a piece at the end; an empty one is dropped.
  void append(OwnedBytes piece) {
    if (piece.empty())
      return;
    size_ += piece.size();
    pieces_.push_back(std::move(piece));
  }

  const std::vector<OwnedBytes> &pieces() const { return pieces_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// The bytes in one string (for readers that need them contiguous).
  std::string joined() const {
    std::string out;
    out.reserve(size_);
    for (const OwnedBytes &piece : pieces_)
      out += piece.bytes();
    return out;
  }

private:
  std::vector<OwnedBytes> pieces_;
  std::size_t size_ = 0;
};

} // namespace nkicc
