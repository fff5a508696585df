#include "verify.h"

namespace nkicc::bir {

// FLATBUFFERS_MIN_BUFFER_SIZE names these unqualified.
using flatbuffers::soffset_t;
using flatbuffers::uoffset_t;

namespace {

/// The first four bytes after the root offset, for the wrong-identifier message; bytes that
/// are not printable ASCII are escaped so that the message stays one clean line.
std::string identifier_text(const std::uint8_t *buf) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < flatbuffers::kFileIdentifierLength; ++i) {
    std::uint8_t byte = buf[sizeof(flatbuffers::uoffset_t) + i];
    if (byte >= 0x20 && byte < 0x7f && byte != '\'' && byte != '\\') {
      out += static_cast<char>(byte);
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

} // namespace

std::optional<ir::TensorRole> from_bir(TensorRole v) {
  switch (v) {
  case TensorRole::Input:
    return ir::TensorRole::Input;
  case TensorRole::Output:
    return ir::TensorRole::Output;
  case TensorRole::Internal:
    return ir::TensorRole::Internal;
  case TensorRole::Constant:
    return ir::TensorRole::Constant;
  }
  return std::nullopt;
}

std::optional<ir::Memory> from_bir(Memory v) {
  switch (v) {
  case Memory::SharedHbm:
    return ir::Memory::SharedHbm;
  case Memory::PrivateHbm:
    return ir::Memory::PrivateHbm;
  case Memory::Sbuf:
    return ir::Memory::Sbuf;
  case Memory::Psum:
    return ir::Memory::Psum;
  }
  return std::nullopt;
}

std::optional<nkicc::DType> from_bir(DType v) {
  switch (v) {
  case DType::Float32:
    return nkicc::DType::Float32;
  case DType::Float16:
    return nkicc::DType::Float16;
  case DType::BFloat16:
    return nkicc::DType::BFloat16;
  case DType::TFloat32:
    return nkicc::DType::TFloat32;
  case DType::Float8E4M3:
    return nkicc::DType::Float8E4M3;
  case DType::Float8E4M3FN:
    return nkicc::DType::Float8E4M3FN;
  case DType::Float8E5M2:
    return nkicc::DType::Float8E5M2;
  case DType::Int8:
    return nkicc::DType::Int8;
  case DType::Int16:
    return nkicc::DType::Int16;
  case DType::Int32:
    return nkicc::DType::Int32;
  case DType::UInt8:
    return nkicc::DType::UInt8;
  case DType::UInt16:
    return nkicc::DType::UInt16;
  case DType::UInt32:
    return nkicc::DType::UInt32;
  case DType::Bool:
    return nkicc::DType::Bool;
  case DType::Float8E5M2X4:
    return nkicc::DType::Float8E5M2X4;
  case DType::Float8E4M3FNX4:
    return nkicc::DType::Float8E4M3FNX4;
  case DType::Float4E2M1FNX4:
    return nkicc::DType::Float4E2M1FNX4;
  case DType::Float8E8M0FNU:
    return nkicc::DType::Float8E8M0FNU;
  }
  return std::nullopt;
}

std::optional<ir::Engine> from_bir(Engine v) {
  switch (v) {
  case Engine::Tensor:
    return ir::Engine::Tensor;
  case Engine::Vector:
    return ir::Engine::Vector;
  case Engine::Scalar:
    return ir::Engine::Scalar;
  case Engine::GpSimd:
    return ir::Engine::GpSimd;
  case Engine::Sync:
    return ir::Engine::Sync;
  }
  return std::nullopt;
}

std::optional<ir::Opcode> from_bir(Opcode v) {
  switch (v) {
  case Opcode::Load:
    return ir::Opcode::Load;
  case Opcode::Store:
    return ir::Opcode::Store;
  case Opcode::DmaCopy:
    return ir::Opcode::DmaCopy;
  case Opcode::TensorCopy:
    return ir::Opcode::TensorCopy;
  case Opcode::MatMul:
    return ir::Opcode::MatMul;
  case Opcode::Transpose:
    return ir::Opcode::Transpose;
  case Opcode::TensorTensor:
    return ir::Opcode::TensorTensor;
  case Opcode::TensorScalar:
    return ir::Opcode::TensorScalar;
  case Opcode::Activation:
    return ir::Opcode::Activation;
  case Opcode::TensorReduce:
    return ir::Opcode::TensorReduce;
  case Opcode::Memset:
    return ir::Opcode::Memset;
  case Opcode::Iota:
    return ir::Opcode::Iota;
  case Opcode::AffineSelect:
    return ir::Opcode::AffineSelect;
  case Opcode::BnStats:
    return ir::Opcode::BnStats;
  case Opcode::BnAggr:
    return ir::Opcode::BnAggr;
  case Opcode::Select:
    return ir::Opcode::Select;
  case Opcode::Collective:
    return ir::Opcode::Collective;
  case Opcode::TensorTensorScan:
    return ir::Opcode::TensorTensorScan;
  case Opcode::PartitionReduce:
    return ir::Opcode::PartitionReduce;
  case Opcode::SelectReduce:
    return ir::Opcode::SelectReduce;
  case Opcode::ScalarTensorTensor:
    return ir::Opcode::ScalarTensorTensor;
  case Opcode::Max8:
    return ir::Opcode::Max8;
  case Opcode::FindIndex8:
    return ir::Opcode::FindIndex8;
  case Opcode::MatchReplace8:
    return ir::Opcode::MatchReplace8;
  case Opcode::StreamShuffle:
    return ir::Opcode::StreamShuffle;
  case Opcode::Rand:
    return ir::Opcode::Rand;
  case Opcode::RandomSeed:
    return ir::Opcode::RandomSeed;
  case Opcode::Dropout:
    return ir::Opcode::Dropout;
  case Opcode::SequenceBounds:
    return ir::Opcode::SequenceBounds;
  case Opcode::RangeSelect:
    return ir::Opcode::RangeSelect;
  case Opcode::LocalGather:
    return ir::Opcode::LocalGather;
  case Opcode::DevicePrint:
    return ir::Opcode::DevicePrint;
  case Opcode::GatherFlattened:
    return ir::Opcode::GatherFlattened;
  case Opcode::MatMulMx:
    return ir::Opcode::MatMulMx;
  case Opcode::QuantizeMx:
    return ir::Opcode::QuantizeMx;
  }
  return std::nullopt;
}

std::optional<ir::LoopKind> from_bir(LoopKind v) {
  switch (v) {
  case LoopKind::None:
    return ir::LoopKind::None;
  case LoopKind::Range:
    return ir::LoopKind::Range;
  case LoopKind::Affine:
    return ir::LoopKind::Affine;
  case LoopKind::Sequential:
    return ir::LoopKind::Sequential;
  case LoopKind::Static:
    return ir::LoopKind::Static;
  }
  return std::nullopt;
}

std::optional<PyConstant::Kind> from_bir(PyKind v) {
  switch (v) {
  case PyKind::None:
    return PyConstant::Kind::None;
  case PyKind::Bool:
    return PyConstant::Kind::Bool;
  case PyKind::Int:
    return PyConstant::Kind::Int;
  case PyKind::Float:
    return PyConstant::Kind::Float;
  case PyKind::Str:
    return PyConstant::Kind::Str;
  case PyKind::Tuple:
    return PyConstant::Kind::Tuple;
  case PyKind::List:
    return PyConstant::Kind::List;
  case PyKind::Dict:
    return PyConstant::Kind::Dict;
  }
  return std::nullopt;
}

/// Verifier limits for a buffer of `size` bytes. Every table of a buffer nkicc writes is
/// distinct and takes at least 4 bytes, so a buffer with more table visits than size / 4 shares
/// tables: only a crafted buffer does, and capping the visits keeps reading it linear in its size
/// instead of exponential in its depth.
std::string constant_data_problem(const Tensor &t, ir::TensorRole role, ir::Memory memory, nkicc::DType dtype) {
  const auto *data = t.data();
  if (role != ir::TensorRole::Constant)
    return data ? "holds constant data but is not a constant" : "";
  if (memory != ir::Memory::SharedHbm)
    return "is a constant outside shared HBM";
  if (!data)
    return "is a constant without data";
  std::uint64_t elements = 1;
  if (const auto *shape = t.shape())
    for (flatbuffers::uoffset_t d = 0; d < shape->size(); ++d)
      if (shape->Get(d) < 0 || __builtin_mul_overflow(elements, static_cast<std::uint64_t>(shape->Get(d)), &elements))
        return "is a constant whose shape overflows";
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements, dtype_size(dtype), &bytes) || bytes != data->size())
    return "is a constant whose data has " + std::to_string(data->size()) + " bytes, not the " +
           std::to_string(elements) + " elements of its shape";
  return "";
}

flatbuffers::Verifier::Options verifier_options(std::size_t size) {
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 64;
  opts.max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 1);
  opts.check_alignment = true;
  opts.check_nested_flatbuffers = false; // each kernel is verified on its own, with its own limits
  return opts;
}

/// Checks size and identifier; `what` is "module" or "kernel" for the messages.
bool check_header(std::string_view blob, const char *identifier, const char *other_identifier, std::string_view what,
                  std::string &error) {
  std::string prefix = "not a BIR " + std::string(what) + ": ";
  if (blob.empty()) {
    error = prefix + "empty buffer";
    return false;
  }
  if (blob.size() < FLATBUFFERS_MIN_BUFFER_SIZE) {
    error = prefix + "too short (" + std::to_string(blob.size()) + " bytes)";
    return false;
  }
  if (blob.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    error = prefix + "too large (" + std::to_string(blob.size()) + " bytes; FlatBuffers holds less than 2 GiB)";
    return false;
  }
  const auto *bytes = reinterpret_cast<const std::uint8_t *>(blob.data());
  if (flatbuffers::BufferHasIdentifier(bytes, identifier))
    return true;
  error = prefix + "wrong file identifier '" + identifier_text(bytes) + "'";
  if (flatbuffers::BufferHasIdentifier(bytes, other_identifier))
    error += what == "module" ? " (this is a BIR kernel blob)" : " (this is a BIR module blob)";
  return false;
}

bool check_version(std::uint32_t version, std::string &error) {
  if (version == kFormatVersion)
    return true;
  error = "unsupported BIR format version " + std::to_string(version) + "; this nkicc reads version " +
          std::to_string(kFormatVersion);
  return false;
}

/// nkicc writes every blob with an 8-byte aligned size, so a file cut short, even only inside
/// the final padding the verifier never reads, is detected.
bool check_size(std::string_view blob, std::string_view what, std::string &error) {
  if (blob.size() % 8 == 0)
    return true;
  error = "truncated BIR " + std::string(what) + ": its size (" + std::to_string(blob.size()) +
          " bytes) is not a multiple of 8";
  return false;
}

} // namespace nkicc::bir
