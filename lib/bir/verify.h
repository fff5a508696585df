// Checks shared by every reader of BIR blobs (the text printer and the decoder that lib/sim
// executes): header, size and version checks, verifier limits, and the enum conversions from the
// schema's types to nkicc's. Private to lib/bir.
#pragma once

#include "bir/schema.h"
#include "nkicc/bir/bir.h"
#include "nkicc/ir/kernel_ir.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace nkicc::bir {

/// A copy of a blob whose first byte is 8-byte aligned, as FlatBuffers' scalar reads assume;
/// a caller's bytes (a substring, a nested vector) may sit anywhere.
class AlignedCopy {
public:
  explicit AlignedCopy(std::string_view bytes)
      : words_(std::make_unique<std::uint64_t[]>(bytes.size() / 8 + 1)), size_(bytes.size()) {
    if (!bytes.empty())
      std::memcpy(words_.get(), bytes.data(), bytes.size());
  }
  const std::uint8_t *data() const { return reinterpret_cast<const std::uint8_t *>(words_.get()); }
  std::size_t size() const { return size_; }

private:
  std::unique_ptr<std::uint64_t[]> words_;
  std::size_t size_;
};

/// The verifier checks a vector's length field for 4-byte alignment but not its elements for
/// their own: a crafted offset can place a vector of longs or Pairs 4 bytes off, and reading it
/// in place would be a misaligned load. The writer always aligns them; a misaligned one is
/// corrupt. (The buffer itself is an AlignedCopy, so its addresses and offsets agree.) FlatBuffers
/// does not align an empty vector, and nothing is read from one.
template <class V> bool is_aligned_8(const V *vec) {
  return !vec || vec->size() == 0 || reinterpret_cast<std::uintptr_t>(vec->Data()) % 8 == 0;
}

/// Checks size and identifier; `what` is "module" or "kernel" for the messages.
bool check_header(std::string_view blob, const char *identifier, const char *other_identifier, std::string_view what,
                  std::string &error);
bool check_version(std::uint32_t version, std::string &error);
/// nkicc writes every blob with an 8-byte aligned size, so a file cut short, even only inside
/// the final padding the verifier never reads, is detected.
bool check_size(std::string_view blob, std::string_view what, std::string &error);

/// What is wrong with a tensor's `data` field, or empty: a Constant tensor is shared HBM and
/// holds exactly one encoded element per element of its shape; any other tensor holds none.
std::string constant_data_problem(const Tensor &t, ir::TensorRole role, ir::Memory memory, nkicc::DType dtype);

/// Verifier limits for a buffer of `size` bytes (see verify.cpp).
flatbuffers::Verifier::Options verifier_options(std::size_t size);

// The reverse of the writer's switches. An enum value the schema does not name means a newer
// writer or a corrupt blob: either way it is rejected.
std::optional<ir::TensorRole> from_bir(TensorRole v);
std::optional<ir::Memory> from_bir(Memory v);
std::optional<nkicc::DType> from_bir(DType v);
std::optional<ir::Engine> from_bir(Engine v);
std::optional<ir::Opcode> from_bir(Opcode v);
std::optional<ir::LoopKind> from_bir(LoopKind v);
std::optional<PyConstant::Kind> from_bir(PyKind v);

} // namespace nkicc::bir
