// The canonical text of BIR blobs (`nkicc dis`, `--emit=bir-text`). Golden tests diff it and
// FileCheck matches it, so it is deterministic, holds no paths or addresses, and puts one item
// on each line. A kernel prints as `--emit=ir` prints the same function, plus its format
// version and target:
//
//   kernel <name>
//     format_version: 1
//     target: <target>
//     inputs: <name>, ...
//     outputs: <name>, ...
//     matmul_mac_count: <n>
//     has_collectives: true|false
//     grid: [<n>, ...]               (only for a kernel specialized for an SPMD grid)
//     tensors: <count>
//       %<id> <name> <role> <memory> <dtype>[<shape>] [<allocation>] [<data>] [@line:col]
//     instructions: <count>
//       <index>: <opcode> <engine> [dst=<ap>, ...] [src=<ap>, ...] [<attr>=<repr>]...
//                [loop=<kind>] [@line:col]
//
// and a module as its header, its kernels (each kernel's text indented under `#<index>`), and
// one line per NKIKLIRKernel instruction:
//
//   module <name>
//     format_version: 1
//     nkicc_version: <version>
//     target: <target>
//     nki_frontend: <value>
//     kernels: <count>
//       #<index> cache_key=<key>
//         kernel <name>
//         ...
//     instructions: <count>
//       <index>: NKIKLIRKernel func_name=<f> kernel_name=<k> kernel_format=bir cache_key=<key>
//                kernel=#<index> nki_binary_version_identifier=<id> func_args=[<a>, ...]
//                func_outs=[<o>, ...]
//
// Names are printed bare when they are plain tokens and as Python string literals otherwise
// (empty, spaces, control bytes), so a hostile name cannot break the one-item-per-line shape.
#include "nkicc/bir/bir.h"
#include "nkicc/support/decimal.h"

#include "bir/verify.h"
#include "nkicc/cache/py_repr.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace nkicc::bir {
namespace {

using flatbuffers::String;
using flatbuffers::Vector;

void append_uint(std::string &out, std::uint64_t value) {
  char buf[24];
  auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

std::string_view view(const String *s) { return s ? std::string_view(s->data(), s->size()) : std::string_view(); }

bool is_plain_token(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-' || c == '+' || c == ':' || c == '/' || c == '$';
    if (!ok)
      return false;
  }
  return true;
}

void append_token(std::string &out, std::string_view s) {
  if (is_plain_token(s))
    out += s;
  else
    append_py_str_repr(out, s);
}

/// Text output shares one budget: shared strings in a crafted buffer could otherwise expand a
/// few megabytes into terabytes of text. A string is checked against it before it is copied
/// (fits), since one list of 100,000 names may point at the same megabyte.
class TextSink {
public:
  TextSink(std::string &out, std::size_t budget) : out_(out), budget_(budget) {}
  std::string &out() { return out_; }
  bool over_budget() const { return out_.size() > budget_; }
  std::size_t budget() const { return budget_; }
  /// Whether a token of `bytes` bytes, printed at its longest (every byte a `\xNN` escape,
  /// quotes and a separator), still fits.
  bool fits(std::size_t bytes) const { return out_.size() <= budget_ && 4 * bytes + 4 <= budget_ - out_.size(); }

private:
  std::string &out_;
  std::size_t budget_;
};

/// `a, b, c`; false (nothing more appended) when the next name would not fit the budget.
bool append_token_list(TextSink &sink, const Vector<flatbuffers::Offset<String>> *names) {
  if (!names)
    return true;
  std::string &out = sink.out();
  for (flatbuffers::uoffset_t i = 0; i < names->size(); ++i) {
    std::string_view name = view(names->Get(i));
    if (!sink.fits(name.size()))
      return false;
    if (i)
      out += ", ";
    append_token(out, name);
  }
  return true;
}

std::size_t text_budget(std::size_t blob_size) { return 64 * blob_size + (1u << 20); }

class KernelPrinter {
public:
  KernelPrinter(TextSink &sink, std::string &error, std::string_view indent, bool locations)
      : sink_(sink), out_(sink.out()), error_(error), indent_(indent), locations_(locations) {}

  bool print(const Kernel &k);

private:
  bool fail(std::string message) {
    error_ = "corrupt BIR kernel: " + std::move(message);
    return false;
  }
  bool check_budget() { return !sink_.over_budget() || check_budget_failed(); }
  bool check_budget_failed() { return fail("its text would be far larger than the blob (shared data)"); }
  void line_start(std::size_t depth) {
    out_ += indent_;
    out_.append(2 * depth, ' ');
  }
  bool to_py(const PyValue *value, PyConstant &result);
  bool print_tensor(std::size_t id, const Tensor &t);
  bool print_access_patterns(std::string_view label, const Vector<flatbuffers::Offset<AccessPattern>> *aps,
                             std::size_t index);
  bool print_instruction(std::size_t index, const Instruction &inst);
  void print_loc(std::uint32_t line, std::uint32_t col) {
    if (line == 0 || !locations_)
      return;
    out_ += " @";
    append_uint(out_, line);
    out_ += ':';
    append_uint(out_, col);
  }

  TextSink &sink_;
  std::string &out_;
  std::string &error_;
  std::string_view indent_;
  bool locations_; ///< false: --source-locations=none
  std::size_t tensor_count_ = 0;
  std::size_t value_bytes_ = 0;
};

bool KernelPrinter::to_py(const PyValue *value, PyConstant &result) {
  // A crafted value can share one long string among many nodes: the copies are counted
  // against the text budget before they are made, not after the repr is printed.
  value_bytes_ += 1 + (value && value->s() ? value->s()->size() : 0);
  if (value_bytes_ > sink_.budget())
    return fail("its text would be far larger than the blob (shared data)");
  result = PyConstant{};
  if (!value)
    return true;
  auto kind = from_bir(value->kind());
  if (!kind)
    return fail("attribute value kind " + std::to_string(static_cast<unsigned>(value->kind())) + " out of range");
  result.kind = *kind;
  switch (*kind) {
  case PyConstant::Kind::None:
  case PyConstant::Kind::Ref: // from_bir() never yields one: the writer stores a reference as text
    break;
  case PyConstant::Kind::Bool:
    result.b = value->b();
    break;
  case PyConstant::Kind::Int:
    result.i = value->i();
    break;
  case PyConstant::Kind::Float:
    result.f = value->f();
    break;
  case PyConstant::Kind::Str:
    result.s = std::string(view(value->s()));
    break;
  case PyConstant::Kind::Tuple:
  case PyConstant::Kind::List:
    if (const auto *items = value->items()) {
      result.items.resize(items->size());
      for (flatbuffers::uoffset_t i = 0; i < items->size(); ++i)
        if (!to_py(items->Get(i), result.items[i]))
          return false;
    }
    break;
  case PyConstant::Kind::Dict:
    if (const auto *entries = value->entries()) {
      // (emplace_back, not resize: clang 14 takes PyConstant's pair as not default-constructible.)
      result.dict.reserve(entries->size());
      for (flatbuffers::uoffset_t i = 0; i < entries->size(); ++i) {
        const Attr *entry = entries->Get(i);
        value_bytes_ += view(entry->name()).size();
        if (value_bytes_ > sink_.budget())
          return fail("its text would be far larger than the blob (shared data)");
        result.dict.emplace_back(std::string(view(entry->name())), PyConstant());
        if (!to_py(entry->value(), result.dict.back().second))
          return false;
      }
    }
    break;
  }
  return true;
}

bool KernelPrinter::print_tensor(std::size_t id, const Tensor &t) {
  auto role = from_bir(t.role());
  auto memory = from_bir(t.memory());
  auto dtype = from_bir(t.dtype());
  if (!role || !memory || !dtype)
    return fail("tensor %" + std::to_string(id) + " has a role, memory or dtype out of range");
  line_start(2);
  out_ += '%';
  append_uint(out_, id);
  out_ += ' ';
  append_token(out_, view(t.name()));
  out_ += ' ';
  out_ += ir::role_name(*role);
  out_ += ' ';
  out_ += ir::memory_name(*memory);
  out_ += ' ';
  out_ += dtype_name(*dtype);
  out_ += '[';
  std::int64_t partitions = 0;
  if (!is_aligned_8(t.shape()))
    return fail("tensor %" + std::to_string(id) + " has a misaligned shape");
  if (const auto *shape = t.shape()) {
    for (flatbuffers::uoffset_t d = 0; d < shape->size(); ++d) {
      if (d)
        out_ += ", ";
      append_int(out_, shape->Get(d));
    }
    if (shape->size() > 0)
      partitions = shape->Get(0);
  }
  out_ += ']';
  if (ir::is_on_chip(*memory)) {
    if (t.byte_offset() < 0) {
      out_ += " unallocated";
    } else {
      std::int64_t partition_end = 0;
      std::int64_t byte_end = 0;
      if (__builtin_add_overflow(t.partition_start(), partitions, &partition_end) ||
          __builtin_add_overflow(t.byte_offset(), t.bytes_per_partition(), &byte_end))
        return fail("tensor %" + std::to_string(id) + " has an allocation past the 64-bit range");
      out_ += " partitions=[";
      append_int(out_, t.partition_start());
      out_ += ", ";
      append_int(out_, partition_end);
      out_ += ") bytes=[";
      append_int(out_, t.byte_offset());
      out_ += ", ";
      append_int(out_, byte_end);
      out_ += ')';
    }
  }
  if (std::string problem = constant_data_problem(t, *role, *memory, *dtype); !problem.empty())
    return fail("tensor %" + std::to_string(id) + " " + problem);
  if (t.view_of() != -1) {
    out_ += " view_of=%";
    append_int(out_, t.view_of());
  }
  if (const auto *data = t.data())
    out_ += ir::constant_data_text({data->data(), data->size()});
  print_loc(t.line(), t.col());
  out_ += '\n';
  return check_budget();
}

bool KernelPrinter::print_access_patterns(std::string_view label, const Vector<flatbuffers::Offset<AccessPattern>> *aps,
                                          std::size_t index) {
  if (!aps || aps->size() == 0)
    return true;
  out_ += ' ';
  out_ += label;
  out_ += '=';
  for (flatbuffers::uoffset_t i = 0; i < aps->size(); ++i) {
    const AccessPattern *ap = aps->Get(i);
    if (ap->tensor() >= tensor_count_)
      return fail("instruction " + std::to_string(index) + " refers to tensor %" + std::to_string(ap->tensor()) +
                  " of " + std::to_string(tensor_count_));
    if (!is_aligned_8(ap->pattern()) || !is_aligned_8(ap->program_offset()))
      return fail("instruction " + std::to_string(index) + " has a misaligned access pattern");
    if (i)
      out_ += ", ";
    out_ += '%';
    append_uint(out_, ap->tensor());
    out_ += '[';
    if (const auto *pattern = ap->pattern()) {
      for (flatbuffers::uoffset_t d = 0; d < pattern->size(); ++d) {
        const Pair *pair = pattern->Get(d);
        if (d)
          out_ += ", ";
        out_ += '[';
        append_int(out_, pair->step());
        out_ += ", ";
        append_int(out_, pair->num());
        out_ += ']';
      }
    }
    out_ += ']';
    if (ap->offset() != 0) {
      if (ap->offset() > 0)
        out_ += '+';
      append_int(out_, ap->offset());
    }
    if (const auto *program_offset = ap->program_offset()) {
      if (program_offset->size() > ir::kMaxGridAxes)
        return fail("instruction " + std::to_string(index) + " has " + std::to_string(program_offset->size()) +
                    " grid terms in an access pattern (at most 3)");
      for (flatbuffers::uoffset_t axis = 0; axis < program_offset->size(); ++axis) {
        std::int64_t term = program_offset->Get(axis);
        if (term == 0)
          continue;
        if (term > 0)
          out_ += '+';
        append_int(out_, term);
        out_ += "*pid";
        append_uint(out_, axis);
      }
    }
  }
  return true;
}

bool KernelPrinter::print_instruction(std::size_t index, const Instruction &inst) {
  auto opcode = from_bir(inst.opcode());
  auto engine = from_bir(inst.engine());
  auto loop = from_bir(inst.loop_kind());
  if (!opcode || !engine || !loop)
    return fail("instruction " + std::to_string(index) + " has an opcode, engine or loop kind out of range");
  line_start(2);
  append_uint(out_, index);
  out_ += ": ";
  out_ += ir::opcode_name(*opcode);
  out_ += ' ';
  out_ += ir::engine_name(*engine);
  if (!print_access_patterns("dst", inst.dst(), index) || !print_access_patterns("src", inst.src(), index))
    return false;
  if (const auto *attrs = inst.attrs()) {
    for (flatbuffers::uoffset_t i = 0; i < attrs->size(); ++i) {
      const Attr *attr = attrs->Get(i);
      PyConstant value;
      if (!to_py(attr->value(), value))
        return false;
      out_ += ' ';
      append_token(out_, view(attr->name()));
      out_ += '=';
      append_py_repr(out_, value);
      if (!check_budget())
        return false;
    }
  }
  if (*loop != ir::LoopKind::None) {
    out_ += " loop=";
    out_ += trace::loop_kind_name(*loop);
  }
  print_loc(inst.line(), inst.col());
  out_ += '\n';
  return check_budget();
}

bool KernelPrinter::print(const Kernel &k) {
  line_start(0);
  out_ += "kernel ";
  append_token(out_, view(k.name()));
  out_ += '\n';
  line_start(1);
  out_ += "format_version: ";
  append_uint(out_, k.format_version());
  out_ += '\n';
  line_start(1);
  out_ += "target: ";
  append_token(out_, view(k.target()));
  out_ += '\n';
  line_start(1);
  out_ += "inputs:";
  if (k.input_names() && k.input_names()->size())
    out_ += ' ';
  if (!append_token_list(sink_, k.input_names()))
    return check_budget_failed();
  out_ += '\n';
  line_start(1);
  out_ += "outputs:";
  if (k.output_names() && k.output_names()->size())
    out_ += ' ';
  if (!append_token_list(sink_, k.output_names()))
    return check_budget_failed();
  out_ += '\n';
  line_start(1);
  out_ += "matmul_mac_count: ";
  append_int(out_, k.matmul_mac_count());
  out_ += '\n';
  line_start(1);
  out_ += "has_collectives: ";
  out_ += k.has_collectives() ? "true" : "false";
  out_ += '\n';
  if (!is_aligned_8(k.grid()))
    return fail("its grid is misaligned");
  if (const auto *grid = k.grid(); grid && grid->size() > 0) {
    if (grid->size() > ir::kMaxGridAxes)
      return fail("its grid has " + std::to_string(grid->size()) + " dimensions (at most 3)");
    line_start(1);
    out_ += "grid: [";
    for (flatbuffers::uoffset_t d = 0; d < grid->size(); ++d) {
      if (d)
        out_ += ", ";
      append_int(out_, grid->Get(d));
    }
    out_ += "]\n";
  }
  if (!check_budget())
    return false;

  const auto *tensors = k.tensors();
  tensor_count_ = tensors ? tensors->size() : 0;
  line_start(1);
  out_ += "tensors: ";
  append_uint(out_, tensor_count_);
  out_ += '\n';
  for (std::size_t i = 0; i < tensor_count_; ++i)
    if (!print_tensor(i, *tensors->Get(static_cast<flatbuffers::uoffset_t>(i))))
      return false;

  const auto *instructions = k.instructions();
  std::size_t instruction_count = instructions ? instructions->size() : 0;
  line_start(1);
  out_ += "instructions: ";
  append_uint(out_, instruction_count);
  out_ += '\n';
  for (std::size_t i = 0; i < instruction_count; ++i)
    if (!print_instruction(i, *instructions->Get(static_cast<flatbuffers::uoffset_t>(i))))
      return false;
  return true;
}

bool print_kernel(std::string_view blob, TextSink &sink, std::string_view indent, bool locations, std::string &error) {
  if (!check_header(blob, kKernelIdentifier, kModuleIdentifier, "kernel", error) || !check_size(blob, "kernel", error))
    return false;
  AlignedCopy copy(blob);
  flatbuffers::Verifier verifier(copy.data(), copy.size(), verifier_options(copy.size()));
  if (!verifier.VerifyBuffer<Kernel>(kKernelIdentifier)) {
    error = "corrupt BIR kernel: verification failed";
    return false;
  }
  const Kernel *kernel = flatbuffers::GetRoot<Kernel>(copy.data());
  if (!check_version(kernel->format_version(), error))
    return false;
  return KernelPrinter(sink, error, indent, locations).print(*kernel);
}

} // namespace

std::optional<std::string> kernel_to_text(std::string_view kernel_blob, std::string &error,
                                          const TextOptions &options) {
  std::string out;
  TextSink sink(out, text_budget(kernel_blob.size()));
  if (!print_kernel(kernel_blob, sink, "", options.source_locations, error))
    return std::nullopt;
  return out;
}

std::optional<std::string> module_to_text(std::string_view blob, std::string &error, const TextOptions &options) {
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

  const auto *kernels = module->kernels();
  const std::size_t kernel_count = kernels ? kernels->size() : 0;
  // Kernel blobs are stored side by side; bytes shared between two of them would let a small
  // module make the kernel verifier below do work far beyond the module's size.
  std::size_t kernel_bytes = 0;
  for (std::size_t i = 0; i < kernel_count; ++i) {
    const auto *bytes = kernels->Get(static_cast<flatbuffers::uoffset_t>(i))->kernel();
    kernel_bytes += bytes ? bytes->size() : 0;
  }
  if (kernel_bytes > copy.size()) {
    error = "corrupt BIR module: kernel blobs overlap";
    return std::nullopt;
  }

  const auto *instructions = module->instructions();
  const std::size_t instruction_count = instructions ? instructions->size() : 0;
  // With --call/--kernel, only the instructions of the chosen calls and the kernels they use
  // are printed (every kernel is still verified); each keeps its own index.
  std::vector<bool> shown_instruction(instruction_count, true);
  std::vector<bool> shown_kernel(kernel_count, !options.calls.active());
  std::size_t shown_instructions = instruction_count;
  if (options.calls.active()) {
    shown_instructions = 0;
    for (std::size_t i = 0; i < instruction_count; ++i) {
      const NKIKLIRKernel *inst = instructions->Get(static_cast<flatbuffers::uoffset_t>(i));
      shown_instruction[i] = options.calls.accepts(i, view(inst->func_name()));
      if (!shown_instruction[i])
        continue;
      ++shown_instructions;
      if (inst->kernel_index() < kernel_count)
        shown_kernel[inst->kernel_index()] = true;
    }
  }
  std::size_t shown_kernels = 0;
  for (bool shown : shown_kernel)
    shown_kernels += shown;

  std::string out;
  TextSink sink(out, text_budget(blob.size()));
  std::string hidden;
  TextSink hidden_sink(hidden, text_budget(blob.size()));
  out += "module ";
  append_token(out, view(module->name()));
  out += "\n  format_version: ";
  append_uint(out, module->format_version());
  out += "\n  nkicc_version: ";
  append_token(out, view(module->nkicc_version()));
  out += "\n  target: ";
  append_token(out, view(module->target()));
  out += "\n  nki_frontend: ";
  append_token(out, view(module->nki_frontend()));
  out += "\n  kernels: ";
  append_uint(out, shown_kernels);
  out += '\n';
  for (std::size_t i = 0; i < kernel_count; ++i) {
    const KernelBlob *entry = kernels->Get(static_cast<flatbuffers::uoffset_t>(i));
    const auto *bytes = entry->kernel();
    std::string_view kernel_blob =
        bytes ? std::string_view(reinterpret_cast<const char *>(bytes->data()), bytes->size()) : std::string_view();
    std::string kernel_error;
    if (!shown_kernel[i]) {
      hidden.clear();
      if (!print_kernel(kernel_blob, hidden_sink, "", false, kernel_error)) {
        error = "corrupt BIR module: kernel #" + std::to_string(i) + ": " + kernel_error;
        return std::nullopt;
      }
      continue;
    }
    out += "    #";
    append_uint(out, i);
    out += " cache_key=";
    append_token(out, view(entry->cache_key()));
    out += '\n';
    if (!print_kernel(kernel_blob, sink, "      ", options.source_locations, kernel_error)) {
      error = "corrupt BIR module: kernel #" + std::to_string(i) + ": " + kernel_error;
      return std::nullopt;
    }
  }

  out += "  instructions: ";
  append_uint(out, shown_instructions);
  out += '\n';
  for (std::size_t i = 0; i < instruction_count; ++i) {
    const NKIKLIRKernel *inst = instructions->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (inst->kernel_index() >= kernel_count) {
      error = "corrupt BIR module: instruction " + std::to_string(i) + " uses kernel #" +
              std::to_string(inst->kernel_index()) + " of " + std::to_string(kernel_count);
      return std::nullopt;
    }
    if (!shown_instruction[i])
      continue;
    out += "    ";
    append_uint(out, i);
    out += ": NKIKLIRKernel func_name=";
    append_token(out, view(inst->func_name()));
    out += " kernel_name=";
    append_token(out, view(inst->kernel_name()));
    out += " kernel_format=";
    append_token(out, view(inst->kernel_format()));
    out += " cache_key=";
    append_token(out, view(inst->cache_key()));
    out += " kernel=#";
    append_uint(out, inst->kernel_index());
    out += " nki_binary_version_identifier=";
    append_token(out, view(inst->nki_binary_version_identifier()));
    out += " func_args=[";
    bool fits = append_token_list(sink, inst->func_args());
    out += "] func_outs=[";
    fits = fits && append_token_list(sink, inst->func_outs());
    out += "]\n";
    if (!fits || sink.over_budget()) {
      error = "corrupt BIR module: its text would be far larger than the blob (shared data)";
      return std::nullopt;
    }
  }
  return out;
}

} // namespace nkicc::bir
