#include "nkicc/bir/bir.h"

#include "bir/schema.h"
#include "nkicc/cache/py_repr.h"
#include "nkicc/support/prefault.h"

#include <array>
#include <optional>
#include <utility>
#include <unordered_map>

namespace nkicc::bir {
namespace {

// The enum conversions are switches, not casts: a new IR enumerator is then a -Wswitch error
// here until the schema (and kFormatVersion, if old readers would misread it) follows.

TensorRole to_bir(ir::TensorRole role) {
  switch (role) {
  case ir::TensorRole::Input:
    return TensorRole::Input;
  case ir::TensorRole::Output:
    return TensorRole::Output;
  case ir::TensorRole::Internal:
    return TensorRole::Internal;
  case ir::TensorRole::Constant:
    return TensorRole::Constant;
  }
  return TensorRole::Internal;
}

Memory to_bir(ir::Memory memory) {
  switch (memory) {
  case ir::Memory::SharedHbm:
    return Memory::SharedHbm;
  case ir::Memory::PrivateHbm:
    return Memory::PrivateHbm;
  case ir::Memory::Sbuf:
    return Memory::Sbuf;
  case ir::Memory::Psum:
    return Memory::Psum;
  }
  return Memory::Sbuf;
}

DType to_bir(nkicc::DType dtype) {
  switch (dtype) {
  case nkicc::DType::Float32:
    return DType::Float32;
  case nkicc::DType::Float16:
    return DType::Float16;
  case nkicc::DType::BFloat16:
    return DType::BFloat16;
  case nkicc::DType::TFloat32:
    return DType::TFloat32;
  case nkicc::DType::Float8E4M3:
    return DType::Float8E4M3;
  case nkicc::DType::Float8E4M3FN:
    return DType::Float8E4M3FN;
  case nkicc::DType::Float8E5M2:
    return DType::Float8E5M2;
  case nkicc::DType::Int8:
    return DType::Int8;
  case nkicc::DType::Int16:
    return DType::Int16;
  case nkicc::DType::Int32:
    return DType::Int32;
  case nkicc::DType::UInt8:
    return DType::UInt8;
  case nkicc::DType::UInt16:
    return DType::UInt16;
  case nkicc::DType::UInt32:
    return DType::UInt32;
  case nkicc::DType::Bool:
    return DType::Bool;
  case nkicc::DType::Float8E5M2X4:
    return DType::Float8E5M2X4;
  case nkicc::DType::Float8E4M3FNX4:
    return DType::Float8E4M3FNX4;
  case nkicc::DType::Float4E2M1FNX4:
    return DType::Float4E2M1FNX4;
  case nkicc::DType::Float8E8M0FNU:
    return DType::Float8E8M0FNU;
  }
  return DType::Float32;
}

Engine to_bir(ir::Engine engine) {
  switch (engine) {
  case ir::Engine::Tensor:
    return Engine::Tensor;
  case ir::Engine::Vector:
    return Engine::Vector;
  case ir::Engine::Scalar:
    return Engine::Scalar;
  case ir::Engine::GpSimd:
    return Engine::GpSimd;
  case ir::Engine::Sync:
    return Engine::Sync;
  }
  return Engine::Vector;
}

Opcode to_bir(ir::Opcode op) {
  switch (op) {
  case ir::Opcode::Load:
    return Opcode::Load;
  case ir::Opcode::Store:
    return Opcode::Store;
  case ir::Opcode::DmaCopy:
    return Opcode::DmaCopy;
  case ir::Opcode::TensorCopy:
    return Opcode::TensorCopy;
  case ir::Opcode::MatMul:
    return Opcode::MatMul;
  case ir::Opcode::Transpose:
    return Opcode::Transpose;
  case ir::Opcode::TensorTensor:
    return Opcode::TensorTensor;
  case ir::Opcode::TensorScalar:
    return Opcode::TensorScalar;
  case ir::Opcode::Activation:
    return Opcode::Activation;
  case ir::Opcode::TensorReduce:
    return Opcode::TensorReduce;
  case ir::Opcode::Memset:
    return Opcode::Memset;
  case ir::Opcode::Iota:
    return Opcode::Iota;
  case ir::Opcode::AffineSelect:
    return Opcode::AffineSelect;
  case ir::Opcode::BnStats:
    return Opcode::BnStats;
  case ir::Opcode::BnAggr:
    return Opcode::BnAggr;
  case ir::Opcode::Select:
    return Opcode::Select;
  case ir::Opcode::Collective:
    return Opcode::Collective;
  case ir::Opcode::TensorTensorScan:
    return Opcode::TensorTensorScan;
  case ir::Opcode::PartitionReduce:
    return Opcode::PartitionReduce;
  case ir::Opcode::SelectReduce:
    return Opcode::SelectReduce;
  case ir::Opcode::ScalarTensorTensor:
    return Opcode::ScalarTensorTensor;
  case ir::Opcode::Max8:
    return Opcode::Max8;
  case ir::Opcode::FindIndex8:
    return Opcode::FindIndex8;
  case ir::Opcode::MatchReplace8:
    return Opcode::MatchReplace8;
  case ir::Opcode::StreamShuffle:
    return Opcode::StreamShuffle;
  case ir::Opcode::Rand:
    return Opcode::Rand;
  case ir::Opcode::RandomSeed:
    return Opcode::RandomSeed;
  case ir::Opcode::Dropout:
    return Opcode::Dropout;
  case ir::Opcode::SequenceBounds:
    return Opcode::SequenceBounds;
  case ir::Opcode::RangeSelect:
    return Opcode::RangeSelect;
  case ir::Opcode::LocalGather:
    return Opcode::LocalGather;
  case ir::Opcode::DevicePrint:
    return Opcode::DevicePrint;
  case ir::Opcode::GatherFlattened:
    return Opcode::GatherFlattened;
  case ir::Opcode::MatMulMx:
    return Opcode::MatMulMx;
  case ir::Opcode::QuantizeMx:
    return Opcode::QuantizeMx;
  }
  return Opcode::TensorCopy;
}

LoopKind to_bir(ir::LoopKind kind) {
  switch (kind) {
  case ir::LoopKind::None:
    return LoopKind::None;
  case ir::LoopKind::Range:
    return LoopKind::Range;
  case ir::LoopKind::Affine:
    return LoopKind::Affine;
  case ir::LoopKind::Sequential:
    return LoopKind::Sequential;
  case ir::LoopKind::Static:
    return LoopKind::Static;
  }
  return LoopKind::None;
}

PyKind to_bir(PyConstant::Kind kind) {
  switch (kind) {
  case PyConstant::Kind::None:
    return PyKind::None;
  case PyConstant::Kind::Bool:
    return PyKind::Bool;
  case PyConstant::Kind::Int:
    return PyKind::Int;
  case PyConstant::Kind::Float:
    return PyKind::Float;
  case PyConstant::Kind::Str:
    return PyKind::Str;
  case PyConstant::Kind::Tuple:
    return PyKind::Tuple;
  case PyConstant::Kind::List:
    return PyKind::List;
  case PyConstant::Kind::Dict:
    return PyKind::Dict;
  case PyConstant::Kind::Ref: // written as its text (write_value)
    return PyKind::Str;
  }
  return PyKind::None;
}

using Builder = flatbuffers::FlatBufferBuilder;

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>
string_vector(Builder &fbb, const std::vector<std::string> &strings) {
  std::vector<flatbuffers::Offset<flatbuffers::String>> offsets;
  offsets.reserve(strings.size());
  for (const std::string &s : strings)
    offsets.push_back(fbb.CreateString(s));
  return fbb.CreateVector(offsets);
}

flatbuffers::Offset<Attr> write_attr(Builder &fbb, const std::string &name, const PyConstant &value);

flatbuffers::Offset<PyValue> write_value(Builder &fbb, const PyConstant &value) {
  // A named reference resolves at trace time; the tracer's attributes never hold one, and
  // anything else that would is written as its text.
  if (value.kind == PyConstant::Kind::Ref)
    return write_value(fbb, PyConstant::str(py_repr(value)));
  // Children are serialized before their parent: FlatBuffers builds bottom-up.
  flatbuffers::Offset<flatbuffers::String> s;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<PyValue>>> items;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<Attr>>> entries;
  switch (value.kind) {
  case PyConstant::Kind::Str:
    s = fbb.CreateString(value.s);
    break;
  case PyConstant::Kind::Tuple:
  case PyConstant::Kind::List: {
    std::vector<flatbuffers::Offset<PyValue>> offsets;
    offsets.reserve(value.items.size());
    for (const PyConstant &item : value.items)
      offsets.push_back(write_value(fbb, item));
    items = fbb.CreateVector(offsets);
    break;
  }
  case PyConstant::Kind::Dict: {
    std::vector<flatbuffers::Offset<Attr>> offsets;
    offsets.reserve(value.dict.size());
    for (const auto &[key, item] : value.dict)
      offsets.push_back(write_attr(fbb, key, item));
    entries = fbb.CreateVector(offsets);
    break;
  }
  default:
    break;
  }
  PyValueBuilder b(fbb);
  switch (value.kind) {
  case PyConstant::Kind::Bool:
    b.add_b(value.b);
    break;
  case PyConstant::Kind::Int:
    b.add_i(value.i);
    break;
  case PyConstant::Kind::Float:
    // Stored even when it equals the default 0.0: -0.0 compares equal to 0.0 and would
    // otherwise be dropped, and repr(-0.0) is '-0.0'. The default passed here only has to
    // differ from the value.
    fbb.AddElement<double>(PyValue::VT_F, value.f, value.f == 0.0 ? 1.0 : 0.0);
    break;
  case PyConstant::Kind::Str:
    b.add_s(s);
    break;
  case PyConstant::Kind::Tuple:
  case PyConstant::Kind::List:
    b.add_items(items);
    break;
  case PyConstant::Kind::Dict:
    b.add_entries(entries);
    break;
  case PyConstant::Kind::None:
  case PyConstant::Kind::Ref:
    break;
  }
  b.add_kind(to_bir(value.kind));
  return b.Finish();
}

flatbuffers::Offset<Attr> write_attr(Builder &fbb, const std::string &name, const PyConstant &value) {
  auto name_offset = fbb.CreateString(name);
  auto value_offset = write_value(fbb, value);
  return CreateAttr(fbb, name_offset, value_offset);
}

LineCol line_col(SourceLoc loc, const SourceManager &sources) {
  if (!loc.valid() || loc.file > sources.file_count())
    return {};
  return sources.line_col(loc);
}

/// The shape vectors of a kernel's tensors, each distinct shape written once: a trace's tiles
/// are a few shapes over and over (a 400,000-instruction matmul has 264,000 tiles of two
/// shapes), and a FlatBuffers vector can be referenced by every table that holds the same one.
class ShapeWriter {
public:
  explicit ShapeWriter(Builder &fbb) : fbb_(fbb) {}

  /// `shape` must stay where it is while this writer is used (it is a key of the memo).
  flatbuffers::Offset<flatbuffers::Vector<std::int64_t>> write(const ir::Shape &shape) {
    std::string_view key(reinterpret_cast<const char *>(shape.data()), shape.size() * sizeof(std::int64_t));
    auto [it, fresh] = written_.try_emplace(key);
    if (fresh)
      it->second = fbb_.CreateVector(shape.data(), shape.size());
    return it->second;
  }

private:
  Builder &fbb_;
  std::unordered_map<std::string_view, flatbuffers::Offset<flatbuffers::Vector<std::int64_t>>> written_;
};

flatbuffers::Offset<Tensor> write_tensor(Builder &fbb, ShapeWriter &shapes, const ir::Tensor &t,
                                         const ir::ConstantData *constant, ir::TensorId view_of,
                                         const SourceManager &sources) {
  auto name = fbb.CreateString(t.name.str());
  auto shape = shapes.write(t.shape);
  flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> data;
  if (constant)
    data = fbb.CreateVector(constant->bytes);
  LineCol lc = line_col(t.loc, sources);
  return CreateTensor(fbb, name, to_bir(t.role), to_bir(t.memory), shape, to_bir(t.dtype), t.partition_start,
                      t.byte_offset, t.bytes_per_partition(), lc.line, lc.column, data,
                      view_of == ir::kNoTensor ? -1 : static_cast<std::int64_t>(view_of));
}

/// Writes a kernel's instructions. FlatBuffers lets tables and vectors be shared by offset, so
/// each distinct `[step, num]` list, grid-term list and attribute list of the Function (which
/// interns them) is serialized once and referenced by every instruction that uses it. An
/// operand the same as the last one written for its tensor (a matmul's accumulator, written by
/// every matmul of a loop) reuses that AccessPattern table, and a one-operand list of it its
/// vector.
class InstructionWriter {
public:
  InstructionWriter(Builder &fbb, const ir::Function &fn, const SourceManager &sources)
      : fbb_(fbb), fn_(fn), sources_(sources) {}

  flatbuffers::Offset<Instruction> write(const ir::Instruction &inst) {
    auto dst = access_patterns(fn_.dst(inst));
    auto src = access_patterns(fn_.src(inst));
    auto attrs_offset = attrs(inst);
    LineCol lc = line_col(inst.loc, sources_);
    return CreateInstruction(fbb_, to_bir(inst.opcode), to_bir(inst.engine), to_bir(inst.loop_kind), dst, src,
                             attrs_offset, lc.line, lc.column);
  }

private:
  using PatternOffset = flatbuffers::Offset<flatbuffers::Vector<const Pair *>>;
  using ProgramOffset = flatbuffers::Offset<flatbuffers::Vector<std::int64_t>>;
  using AttrsOffset = flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<Attr>>>;

  template <class Offset> static Offset &slot(std::vector<Offset> &memo, std::uint32_t id) {
    if (id >= memo.size())
      memo.resize(id + 1);
    return memo[id];
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<AccessPattern>>>
  access_patterns(std::span<const ir::Operand> ops) {
    if (ops.size() == 1) {
      LastOperand &last = last_operand(ops[0]);
      if (!last.alone.IsNull())
        return last.alone;
      return last.alone = fbb_.CreateVector(&last.table, 1);
    }
    // Instructions have one to three views: the scratch list stays on the stack.
    ir::SmallVector<flatbuffers::Offset<AccessPattern>, 4> offsets;
    offsets.reserve(ops.size());
    for (const ir::Operand &op : ops)
      offsets.push_back(last_operand(op).table);
    return fbb_.CreateVector(offsets.data(), offsets.size());
  }

  /// The AccessPattern table last written for the operand's tensor: `op`'s own when it is the
  /// same view at the same offset, else a new one written now. The memo is a small table by
  /// tensor id, not one slot per tensor: a trace's tiles number in the hundreds of thousands
  /// and most are used once, while the tensors used over and over stay in it.
  struct LastOperand {
    ir::TensorId tensor = ir::kNoTensor;
    std::uint32_t view = 0;
    std::int64_t offset = 0;
    flatbuffers::Offset<AccessPattern> table;
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<AccessPattern>>> alone; ///< `[table]`, once written
  };

  LastOperand &last_operand(const ir::Operand &op) {
    LastOperand &last = last_operands_[op.tensor % last_operands_.size()];
    if (last.tensor == op.tensor && last.view == op.view && last.offset == op.offset && !last.table.IsNull())
      return last;
    last = LastOperand{op.tensor, op.view, op.offset, access_pattern(op), {}};
    return last;
  }

  flatbuffers::Offset<AccessPattern> access_pattern(const ir::Operand &op) {
    PatternOffset &pattern = slot(patterns_, fn_.pattern_id(op));
    if (pattern.IsNull()) {
      ir::SmallVector<Pair, 8> pairs;
      for (const auto &[step, num] : fn_.pattern(op))
        pairs.emplace_back(step, num);
      pattern = fbb_.CreateVectorOfStructs(pairs.data(), pairs.size());
    }
    // Most views have no grid term: the vector is left out rather than stored as zeros.
    ProgramOffset program;
    if (std::uint32_t program_id = fn_.program_id(op); program_id != 0) {
      ProgramOffset &memo = slot(programs_, program_id);
      if (memo.IsNull()) {
        auto terms = fn_.program_offset(op);
        memo = fbb_.CreateVector(terms.data(), terms.size());
      }
      program = memo;
    }
    return CreateAccessPattern(fbb_, op.tensor, pattern, op.offset, program);
  }

  AttrsOffset attrs(const ir::Instruction &inst) {
    AttrsOffset &memo = slot(attrs_, inst.attrs);
    if (memo.IsNull()) {
      const ir::AttrList &list = fn_.attrs(inst);
      ir::SmallVector<flatbuffers::Offset<Attr>, 8> offsets;
      offsets.reserve(list.size());
      for (const auto &[name, value] : list)
        offsets.push_back(write_attr(fbb_, name, value));
      memo = fbb_.CreateVector(offsets.data(), offsets.size());
    }
    return memo;
  }

  Builder &fbb_;
  const ir::Function &fn_;
  const SourceManager &sources_;
  std::vector<PatternOffset> patterns_;
  std::vector<ProgramOffset> programs_;
  std::vector<AttrsOffset> attrs_;
  std::array<LastOperand, 1024> last_operands_{};
};

/// A kernel's builder, which can say where its buffer lies: a large kernel's pages are faulted in
/// on another thread while it is written (BackwardPrefaulter).
class BufferBuilder : public Builder {
public:
  using Builder::Builder;
  /// The buffer the builder writes into, from its end down; empty before the first write.
  std::pair<unsigned char *, unsigned char *> reserved() const {
    if (!buf_.capacity() || !buf_.data())
      return {nullptr, nullptr};
    unsigned char *end = buf_.data() + buf_.size();
    return {end - buf_.capacity(), end};
  }
};

/// Kernels whose builder reserves this much or more are faulted in ahead of the writer.
constexpr std::size_t kPrefaultFrom = std::size_t{8} << 20;
/// How far ahead: 4 MiB.
constexpr std::size_t kPrefaultLead = std::size_t{4} << 20;

/// The finished bytes, in the builder's own buffer.
OwnedBytes release(Builder &fbb) {
  auto buffer = std::make_shared<flatbuffers::DetachedBuffer>(fbb.Release());
  std::string_view bytes(reinterpret_cast<const char *>(buffer->data()), buffer->size());
  return OwnedBytes(std::move(buffer), bytes);
}

} // namespace

std::string write_kernel(const ir::Function &fn, std::string_view target_name, const SourceManager &sources,
                         std::span<const std::int64_t> grid) {
  return std::string(write_kernel_blob(fn, target_name, sources, grid).bytes());
}

OwnedBytes write_kernel_blob(const ir::Function &fn, std::string_view target_name, const SourceManager &sources,
                             std::span<const std::int64_t> grid) {
  BufferBuilder fbb(1024 + 256 * fn.instructions.size());
  fbb.ForceDefaults(false);
  auto name = fbb.CreateString(fn.name);
  // The builder's buffer exists from its first write on.
  std::optional<BackwardPrefaulter> prefault;
  auto reserved = fbb.reserved();
  if (reserved.first && static_cast<std::size_t>(reserved.second - reserved.first) >= kPrefaultFrom)
    prefault.emplace(reserved.first, reserved.second, kPrefaultLead);
  // Tells the prefaulter how far the builder got, every few thousand items; stops it if the
  // buffer grew (moved) after all.
  auto progress = [&](std::size_t i) {
    if (!prefault || i % 4096 != 0)
      return;
    if (fbb.reserved() != reserved)
      prefault->stop();
    else
      prefault->advance(fbb.GetSize());
  };
  auto target = fbb.CreateString(target_name.data(), target_name.size());
  auto inputs = string_vector(fbb, fn.input_names);
  auto outputs = string_vector(fbb, fn.output_names);
  std::vector<flatbuffers::Offset<Tensor>> tensors;
  tensors.reserve(fn.tensors.size());
  ShapeWriter shapes(fbb);
  std::vector<ir::TensorId> roots = fn.views.empty() ? std::vector<ir::TensorId>() : fn.storage_roots();
  for (std::size_t i = 0; i < fn.tensors.size(); ++i) {
    const ir::Tensor &t = fn.tensors[i];
    const ir::ConstantData *data =
        t.role == ir::TensorRole::Constant ? fn.constant_data(static_cast<ir::TensorId>(i)) : nullptr;
    ir::TensorId view_of = roots.empty() || roots[i] == i ? ir::kNoTensor : roots[i];
    tensors.push_back(write_tensor(fbb, shapes, t, data, view_of, sources));
    progress(i);
  }
  auto tensors_offset = fbb.CreateVector(tensors);
  std::vector<flatbuffers::Offset<Instruction>> instructions;
  instructions.reserve(fn.instructions.size());
  InstructionWriter writer(fbb, fn, sources);
  for (const ir::Instruction &inst : fn.instructions) {
    instructions.push_back(writer.write(inst));
    progress(instructions.size());
  }
  auto instructions_offset = fbb.CreateVector(instructions);
  // A kernel without a grid leaves the field out, so its bytes are what they were before grids were recorded.
  flatbuffers::Offset<flatbuffers::Vector<std::int64_t>> grid_offset;
  if (!grid.empty())
    grid_offset = fbb.CreateVector(grid.data(), grid.size());
  auto root = CreateKernel(fbb, kFormatVersion, name, target, inputs, outputs, fn.matmul_mac_count, fn.has_collectives,
                           tensors_offset, instructions_offset, grid_offset);
  // An 8-byte aligned total size lets the reader detect a file cut inside its final padding.
  fbb.TrackMinAlign(8);
  fbb.Finish(root, kKernelIdentifier);
  return release(fbb);
}

std::string write_module(const ModuleInfo &info,
                         const std::vector<std::pair<std::string_view, std::string_view>> &kernels,
                         const std::vector<ModuleCall> &calls) {
  // The caller's blobs outlive this call: pieces that point at them need no owner.
  std::vector<std::pair<std::string_view, OwnedBytes>> borrowed;
  borrowed.reserve(kernels.size());
  for (const auto &[key, blob] : kernels)
    borrowed.emplace_back(key, OwnedBytes(nullptr, blob));
  return write_module_blob(info, borrowed, calls).joined();
}

ByteSequence write_module_blob(const ModuleInfo &info,
                               const std::vector<std::pair<std::string_view, OwnedBytes>> &kernels,
                               const std::vector<ModuleCall> &calls) {
  std::size_t kernel_bytes = 0;
  for (const auto &kernel : kernels)
    kernel_bytes += kernel.second.size() + 16 + kernel.first.size(); // the blob, its alignment and its key
  std::size_t call_bytes = 0;
  for (const ModuleCall &call : calls) {
    // Five strings, two lists of names, the table and its vtable reference; sized so that the
    // builder never grows (each growth copies everything built so far).
    call_bytes += 160 + call.func_name.size() + call.kernel_name.size() + call.cache_key.size();
    for (const std::string &name : call.func_args)
      call_bytes += 12 + name.size();
    for (const std::string &name : call.func_outs)
      call_bytes += 12 + name.size();
  }
  // The builder's buffer spans the blobs too, but their bytes are never written there: each
  // blob's vector is left uninitialized (a hole whose pages are never touched) and the blob is
  // written from where it lies, between the frame's pieces around the hole.
  Builder fbb(1024 + kernel_bytes + call_bytes);
  fbb.ForceDefaults(false);
  auto nkicc_version = fbb.CreateString(info.nkicc_version);
  auto name = fbb.CreateString(info.name);
  auto target = fbb.CreateString(info.target);
  auto nki_frontend = fbb.CreateString(info.nki_frontend);
  std::vector<flatbuffers::Offset<KernelBlob>> blobs;
  blobs.reserve(kernels.size());
  std::vector<std::size_t> hole_from_end; // where each blob's bytes go, counted from the buffer's end
  hole_from_end.reserve(kernels.size());
  for (const auto &[cache_key, blob] : kernels) {
    auto key = fbb.CreateString(cache_key);
    // A nested buffer keeps the alignment its fields assume (8 bytes for longs) only if its
    // first byte is aligned: then a reader can use it in place.
    fbb.ForceVectorAlignment(blob.size(), sizeof(std::uint8_t), 16);
    std::uint8_t *hole = nullptr;
    flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> bytes(
        fbb.CreateUninitializedVector(blob.size(), sizeof(std::uint8_t), &hole));
    // FlatBuffers builds downward from the end of its buffer, which stays put relative to what is
    // already built: the distance from the end still holds once the builder is finished.
    hole_from_end.push_back(static_cast<std::size_t>(fbb.GetCurrentBufferPointer() + fbb.GetSize() - hole));
    blobs.push_back(CreateKernelBlob(fbb, key, bytes));
  }
  auto blobs_offset = fbb.CreateVector(blobs);
  std::vector<flatbuffers::Offset<NKIKLIRKernel>> instructions;
  instructions.reserve(calls.size());
  for (const ModuleCall &call : calls) {
    auto func_name = fbb.CreateString(call.func_name);
    auto kernel_name = fbb.CreateString(call.kernel_name);
    auto kernel_format = fbb.CreateString(kKernelFormat.data(), kKernelFormat.size());
    auto cache_key = fbb.CreateString(call.cache_key);
    auto version = fbb.CreateString(kNkiBinaryVersionIdentifier.data(), kNkiBinaryVersionIdentifier.size());
    auto func_args = string_vector(fbb, call.func_args);
    auto func_outs = string_vector(fbb, call.func_outs);
    instructions.push_back(CreateNKIKLIRKernel(fbb, func_name, kernel_name, kernel_format, cache_key, call.kernel_index,
                                               version, func_args, func_outs));
  }
  auto instructions_offset = fbb.CreateVector(instructions);
  auto root =
      CreateModule(fbb, kFormatVersion, nkicc_version, name, target, nki_frontend, blobs_offset, instructions_offset);
  fbb.TrackMinAlign(8);
  fbb.Finish(root, kModuleIdentifier);
  OwnedBytes frame = release(fbb);
  // The blobs were built in order, each one nearer the front: the first hole is the last kernel's.
  ByteSequence module;
  std::size_t written = 0;
  for (std::size_t i = kernels.size(); i-- > 0;) {
    std::size_t at = frame.size() - hole_from_end[i];
    module.append(frame.slice(written, at - written));
    module.append(kernels[i].second);
    written = at + kernels[i].second.size();
  }
  module.append(frame.slice(written, frame.size() - written));
  return module;
}

} // namespace nkicc::bir
