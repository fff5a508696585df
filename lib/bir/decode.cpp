// Decoding BIR blobs into plain structs for the executor (lib/sim): the same verification as
// the text printer, and the same checks of what the verifier cannot see, so an executor never
// touches a FlatBuffers type or trusts a field it has not checked.
#include "nkicc/bir/bir.h"

#include "bir/verify.h"

namespace nkicc::bir {
namespace {

using flatbuffers::String;
using flatbuffers::Vector;

/// The bytes a decoder may copy out of a blob: shared strings in a crafted blob (100,000 names
/// pointing at one megabyte) could otherwise expand it into terabytes. Each copy is counted
/// before it is made; once the budget is spent every further copy is empty and exceeded() says so.
class CopyBudget {
public:
  explicit CopyBudget(std::size_t blob_size) : left_(64 * blob_size + (1u << 20)) {}
  bool exceeded() const { return exceeded_; }
  /// Counts `bytes` (plus one, so that empty items count too); false once the budget is spent.
  bool take(std::size_t bytes) {
    if (exceeded_ || bytes >= left_) {
      exceeded_ = true;
      return false;
    }
    left_ -= bytes + 1;
    return true;
  }
  std::string text(const String *s) {
    if (!take(s ? s->size() : 0) || !s)
      return {};
    return std::string(s->data(), s->size());
  }
  std::vector<std::string> strings(const Vector<flatbuffers::Offset<String>> *v) {
    std::vector<std::string> out;
    if (v)
      for (flatbuffers::uoffset_t i = 0; i < v->size() && !exceeded_; ++i)
        out.push_back(text(v->Get(i)));
    return out;
  }

private:
  std::size_t left_;
  bool exceeded_ = false;
};

constexpr const char *kSharedData = "would be far larger than the blob (shared data)";

class KernelDecoder {
public:
  KernelDecoder(std::string &error, CopyBudget &budget) : error_(error), budget_(budget) {}

  bool decode(const Kernel &k, KernelData &out) {
    out.name = budget_.text(k.name());
    out.target = budget_.text(k.target());
    out.input_names = budget_.strings(k.input_names());
    out.output_names = budget_.strings(k.output_names());
    if (budget_.exceeded())
      return fail(std::string("its names ") + kSharedData);
    out.matmul_mac_count = k.matmul_mac_count();
    out.has_collectives = k.has_collectives();
    if (!is_aligned_8(k.grid()))
      return fail("its grid is misaligned");
    if (const auto *grid = k.grid()) {
      if (grid->size() > ir::kMaxGridAxes)
        return fail("its grid has " + std::to_string(grid->size()) + " dimensions (at most 3)");
      for (flatbuffers::uoffset_t d = 0; d < grid->size(); ++d) {
        if (grid->Get(d) <= 0)
          return fail("its grid has a dimension of " + std::to_string(grid->Get(d)));
        out.grid.push_back(grid->Get(d));
      }
    }
    if (const auto *tensors = k.tensors()) {
      out.tensors.resize(tensors->size());
      for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
        if (!tensor(i, *tensors->Get(i), out.tensors[i]) || !view(i, out.tensors))
          return false;
        if (budget_.exceeded())
          return fail(std::string("its tensor names ") + kSharedData);
      }
    }
    tensor_count_ = out.tensors.size();
    if (const auto *instructions = k.instructions()) {
      out.instructions.resize(instructions->size());
      for (flatbuffers::uoffset_t i = 0; i < instructions->size(); ++i)
        if (!instruction(i, *instructions->Get(i), out.instructions[i]))
          return false;
    }
    return true;
  }

private:
  bool fail(std::string message) {
    error_ = "corrupt BIR kernel: " + std::move(message);
    return false;
  }

  // A view's base comes before it, is no view itself, and holds the same bytes in the same memory.
  bool view(std::size_t id, const std::vector<KernelTensor> &tensors) {
    const KernelTensor &t = tensors[id];
    if (t.view_of == -1)
      return true;
    std::string what = "tensor %" + std::to_string(id) + " views ";
    if (t.view_of < 0 || static_cast<std::size_t>(t.view_of) >= id)
      return fail(what + "tensor " + std::to_string(t.view_of) + ", which is not an earlier tensor");
    const KernelTensor &base = tensors[static_cast<std::size_t>(t.view_of)];
    auto bytes = [](const KernelTensor &k) -> std::int64_t {
      auto n = static_cast<std::int64_t>(dtype_size(k.dtype));
      for (std::int64_t d : k.shape)
        if (__builtin_mul_overflow(n, d, &n))
          return -1;
      return n;
    };
    if (base.view_of != -1 || base.memory != t.memory || bytes(base) != bytes(t) || bytes(t) < 0)
      return fail(what + "%" + std::to_string(t.view_of) + ", which is a view, in another memory or of another size");
    return true;
  }

  bool tensor(std::size_t id, const Tensor &t, KernelTensor &out) {
    auto role = from_bir(t.role());
    auto memory = from_bir(t.memory());
    auto dtype = from_bir(t.dtype());
    if (!role || !memory || !dtype)
      return fail("tensor %" + std::to_string(id) + " has a role, memory or dtype out of range");
    if (!is_aligned_8(t.shape()))
      return fail("tensor %" + std::to_string(id) + " has a misaligned shape");
    out.name = budget_.text(t.name());
    out.role = *role;
    out.memory = *memory;
    out.dtype = *dtype;
    if (const auto *shape = t.shape())
      for (flatbuffers::uoffset_t d = 0; d < shape->size(); ++d) {
        if (shape->Get(d) < 0)
          return fail("tensor %" + std::to_string(id) + " has a negative dimension");
        out.shape.push_back(shape->Get(d));
      }
    if (std::string problem = constant_data_problem(t, *role, *memory, *dtype); !problem.empty())
      return fail("tensor %" + std::to_string(id) + " " + problem);
    if (const auto *data = t.data())
      out.data.assign(data->begin(), data->end());
    out.partition_start = t.partition_start();
    out.byte_offset = t.byte_offset();
    out.bytes_per_partition = t.bytes_per_partition();
    out.line = t.line();
    out.col = t.col();
    out.view_of = t.view_of();
    return true;
  }

  bool access_patterns(std::size_t index, const Vector<flatbuffers::Offset<AccessPattern>> *aps,
                       std::vector<ir::AccessPattern> &out) {
    if (!aps)
      return true;
    for (flatbuffers::uoffset_t i = 0; i < aps->size(); ++i) {
      const AccessPattern *ap = aps->Get(i);
      if (ap->tensor() >= tensor_count_)
        return fail("instruction " + std::to_string(index) + " refers to tensor %" + std::to_string(ap->tensor()) +
                    " of " + std::to_string(tensor_count_));
      if (!is_aligned_8(ap->pattern()) || !is_aligned_8(ap->program_offset()))
        return fail("instruction " + std::to_string(index) + " has a misaligned access pattern");
      ir::AccessPattern a;
      a.tensor = ap->tensor();
      a.offset = ap->offset();
      if (const auto *pattern = ap->pattern())
        for (flatbuffers::uoffset_t d = 0; d < pattern->size(); ++d) {
          const Pair *pair = pattern->Get(d);
          if (pair->num() < 0)
            return fail("instruction " + std::to_string(index) + " has an access pattern of negative extent");
          a.pattern.emplace_back(pair->step(), pair->num());
        }
      if (const auto *program = ap->program_offset()) {
        if (program->size() > ir::kMaxGridAxes)
          return fail("instruction " + std::to_string(index) + " has " + std::to_string(program->size()) +
                      " grid terms in an access pattern (at most 3)");
        for (flatbuffers::uoffset_t axis = 0; axis < program->size(); ++axis)
          a.program_offset[axis] = program->Get(axis);
      }
      out.push_back(std::move(a));
    }
    return true;
  }

  bool value(const PyValue *v, PyConstant &out) {
    // Shared strings in a crafted blob could expand into far more memory than the blob holds.
    if (!budget_.take(v && v->s() ? v->s()->size() : 0))
      return fail(std::string("its attributes ") + kSharedData);
    out = PyConstant{};
    if (!v)
      return true;
    auto kind = from_bir(v->kind());
    if (!kind)
      return fail("attribute value kind " + std::to_string(static_cast<unsigned>(v->kind())) + " out of range");
    out.kind = *kind;
    switch (*kind) {
    case PyConstant::Kind::None:
    case PyConstant::Kind::Ref: // from_bir() never yields one: the writer stores a reference as text
      break;
    case PyConstant::Kind::Bool:
      out.b = v->b();
      break;
    case PyConstant::Kind::Int:
      out.i = v->i();
      break;
    case PyConstant::Kind::Float:
      out.f = v->f();
      break;
    case PyConstant::Kind::Str:
      out.s = v->s() ? std::string(v->s()->data(), v->s()->size()) : std::string(); // counted above
      break;
    case PyConstant::Kind::Tuple:
    case PyConstant::Kind::List:
      if (const auto *items = v->items()) {
        out.items.resize(items->size());
        for (flatbuffers::uoffset_t i = 0; i < items->size(); ++i)
          if (!value(items->Get(i), out.items[i]))
            return false;
      }
      break;
    case PyConstant::Kind::Dict:
      if (const auto *entries = v->entries()) {
        // (emplace_back, not resize: clang 14 takes PyConstant's pair as not default-constructible.)
        out.dict.reserve(entries->size());
        for (flatbuffers::uoffset_t i = 0; i < entries->size(); ++i) {
          out.dict.emplace_back(budget_.text(entries->Get(i)->name()), PyConstant());
          if (budget_.exceeded())
            return fail(std::string("its attributes ") + kSharedData);
          if (!value(entries->Get(i)->value(), out.dict.back().second))
            return false;
        }
      }
      break;
    }
    return true;
  }

  bool instruction(std::size_t index, const Instruction &inst, KernelInstruction &out) {
    auto opcode = from_bir(inst.opcode());
    auto engine = from_bir(inst.engine());
    auto loop = from_bir(inst.loop_kind());
    if (!opcode || !engine || !loop)
      return fail("instruction " + std::to_string(index) + " has an opcode, engine or loop kind out of range");
    out.opcode = *opcode;
    out.engine = *engine;
    out.loop_kind = *loop;
    out.line = inst.line();
    out.col = inst.col();
    if (!access_patterns(index, inst.dst(), out.dst) || !access_patterns(index, inst.src(), out.src))
      return false;
    if (const auto *attrs = inst.attrs())
      for (flatbuffers::uoffset_t i = 0; i < attrs->size(); ++i) {
        PyConstant v;
        if (!value(attrs->Get(i)->value(), v))
          return false;
        out.attrs.emplace_back(budget_.text(attrs->Get(i)->name()), std::move(v));
        if (budget_.exceeded())
          return fail(std::string("its attributes ") + kSharedData);
      }
    return true;
  }

  std::string &error_;
  CopyBudget &budget_;
  std::size_t tensor_count_ = 0;
};

} // namespace

std::optional<KernelData> read_kernel(std::string_view kernel_blob, std::string &error) {
  if (!check_header(kernel_blob, kKernelIdentifier, kModuleIdentifier, "kernel", error) ||
      !check_size(kernel_blob, "kernel", error))
    return std::nullopt;
  AlignedCopy copy(kernel_blob);
  flatbuffers::Verifier verifier(copy.data(), copy.size(), verifier_options(copy.size()));
  if (!verifier.VerifyBuffer<Kernel>(kKernelIdentifier)) {
    error = "corrupt BIR kernel: verification failed";
    return std::nullopt;
  }
  const Kernel *kernel = flatbuffers::GetRoot<Kernel>(copy.data());
  if (!check_version(kernel->format_version(), error))
    return std::nullopt;
  KernelData out;
  CopyBudget budget(copy.size());
  if (!KernelDecoder(error, budget).decode(*kernel, out))
    return std::nullopt;
  return out;
}

std::optional<ModuleData> read_module(std::string_view blob, std::string &error) {
  if (!check_header(blob, kModuleIdentifier, kKernelIdentifier, "module", error) || !check_size(blob, "module", error))
    return std::nullopt;
  AlignedCopy copy(blob);
  flatbuffers::Verifier verifier(copy.data(), copy.size(), verifier_options(copy.size()));
  if (!VerifyModuleBuffer(verifier)) {
    error = "corrupt BIR module: verification failed";
    return std::nullopt;
  }
  const Module *module = GetModule(copy.data());
  if (!check_version(module->format_version(), error))
    return std::nullopt;
  ModuleData out;
  CopyBudget budget(copy.size());
  out.info.name = budget.text(module->name());
  out.info.nkicc_version = budget.text(module->nkicc_version());
  out.info.target = budget.text(module->target());
  out.info.nki_frontend = budget.text(module->nki_frontend());
  std::size_t kernel_bytes = 0;
  if (const auto *kernels = module->kernels())
    for (flatbuffers::uoffset_t i = 0; i < kernels->size(); ++i) {
      const KernelBlob *entry = kernels->Get(i);
      const auto *bytes = entry->kernel();
      kernel_bytes += bytes ? bytes->size() : 0;
      if (kernel_bytes > copy.size()) {
        error = "corrupt BIR module: kernel blobs overlap";
        return std::nullopt;
      }
      out.kernels.emplace_back(budget.text(entry->cache_key()),
                               bytes ? std::string(reinterpret_cast<const char *>(bytes->data()), bytes->size())
                                     : std::string());
    }
  if (budget.exceeded()) {
    error = std::string("corrupt BIR module: its cache keys ") + kSharedData;
    return std::nullopt;
  }
  if (const auto *calls = module->instructions())
    for (flatbuffers::uoffset_t i = 0; i < calls->size(); ++i) {
      const NKIKLIRKernel *inst = calls->Get(i);
      if (inst->kernel_index() >= out.kernels.size()) {
        error = "corrupt BIR module: instruction " + std::to_string(i) + " uses kernel #" +
                std::to_string(inst->kernel_index()) + " of " + std::to_string(out.kernels.size());
        return std::nullopt;
      }
      ModuleCall call;
      call.func_name = budget.text(inst->func_name());
      call.kernel_name = budget.text(inst->kernel_name());
      call.cache_key = budget.text(inst->cache_key());
      call.kernel_index = inst->kernel_index();
      call.func_args = budget.strings(inst->func_args());
      call.func_outs = budget.strings(inst->func_outs());
      if (budget.exceeded()) {
        error = std::string("corrupt BIR module: its names ") + kSharedData;
        return std::nullopt;
      }
      out.calls.push_back(std::move(call));
    }
  return out;
}

} // namespace nkicc::bir
