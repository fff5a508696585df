// The `--emit=ir` text. Golden tests diff it and FileCheck matches it line by line, so it is
// deterministic, holds no paths or addresses, and puts exactly one tensor or one instruction
// on each line:
//
//   kernel <name>
//     inputs: <name>, ...
//     outputs: <name>, ...
//     matmul_mac_count: <n>
//     has_collectives: true|false
//     tensors: <count>
//       %<id> <name> <role> <memory> <dtype>[<shape>] [<allocation>] [view_of=%<id>] [<data>] [@line:col]
//     [block tensors: <count>
//       <name> <memory> <dtype>[<block dims>, par_dim(<p>), <free dims>]
//                bytes_per_partition=<n> blocks=[%<id>|-, ...] [@line:col]]   (one line)
//     instructions: <count>
//       <index>: <opcode> <engine> [dst=<ap>, ...] [src=<ap>, ...] [<attr>=<repr>]...
//                [loop=<kind>] [@line:col]                        (one line, wrapped here)
//
// where a block tensor lists its blocks (each a tensor line of its own, named `name[i, j]`)
// in row-major order of its block dimensions, `-` for a block no instruction uses, and
// bytes_per_partition is what its blocks would take if all were live at once; <allocation> is `partitions=[p0, p1)
// bytes=[b0, b1)` for an allocated SBUF/PSUM tile and `unallocated` for one never referenced; <ap> is `%<id>[[step,
// num], ...]` followed by
// `+<offset>` when non-zero and `+<c>*pid<axis>` per non-zero grid term (`-` when negative);
// <data>, on a constant tensor only, is `data=sha256:<16 hex digits>`, the start of the SHA-256 of
// its encoded elements (ConstantData::bytes), which the BIR's Tensor.data holds whole;
// <repr> is Python's repr of the attribute; `loop=` appears only inside a loop; a location is
// printed only when the SourceManager holds its file, and never with --source-locations=none.
// Empty dst/src lists are left out.
#include "nkicc/cache/py_repr.h"
#include "nkicc/support/decimal.h"
#include "nkicc/ir/kernel_ir.h"
#include "nkicc/support/file_io.h"

#include <charconv>

namespace nkicc::ir {
namespace {

// `+N` or `-N`, as a term of a sum.
void append_signed_term(std::string &out, std::int64_t value) {
  if (value >= 0)
    out += '+';
  append_int(out, value);
}

// Named by the NKI iterator that produced the loop, which is what a reader searches the
// kernel for.
std::string_view loop_text(LoopKind kind) {
  switch (kind) {
  case LoopKind::None:
    return "none";
  case LoopKind::Range:
    return "range";
  case LoopKind::Affine:
    return "affine_range";
  case LoopKind::Sequential:
    return "sequential_range";
  case LoopKind::Static:
    return "static_range";
  }
  return "?";
}

// `sources` is null when the text leaves locations out (--source-locations=none).
void append_loc(std::string &out, SourceLoc loc, const SourceManager *sources) {
  if (!sources || !loc.valid() || loc.file > sources->file_count())
    return;
  LineCol lc = sources->line_col(loc);
  out += " @";
  append_int(out, lc.line);
  out += ':';
  append_int(out, lc.column);
}

void append_ap(std::string &out, const Function &fn, const Operand &op) {
  out += '%';
  append_int(out, op.tensor);
  out += '[';
  auto pattern = fn.pattern(op);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (i)
      out += ", ";
    out += '[';
    append_int(out, pattern[i].first);
    out += ", ";
    append_int(out, pattern[i].second);
    out += ']';
  }
  out += ']';
  if (op.offset != 0)
    append_signed_term(out, op.offset);
  if (fn.program_id(op) == 0)
    return;
  auto program = fn.program_offset(op);
  for (std::size_t axis = 0; axis < program.size(); ++axis) {
    if (program[axis] == 0)
      continue;
    append_signed_term(out, program[axis]);
    out += "*pid";
    append_int(out, static_cast<std::int64_t>(axis));
  }
}

void append_aps(std::string &out, std::string_view label, const Function &fn, std::span<const Operand> ops) {
  if (ops.empty())
    return;
  out += ' ';
  out += label;
  out += '=';
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (i)
      out += ", ";
    append_ap(out, fn, ops[i]);
  }
}

void append_names(std::string &out, std::string_view label, const std::vector<std::string> &names) {
  out += "  ";
  out += label;
  out += ':';
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += i ? ", " : " ";
    out += names[i];
  }
  out += '\n';
}

void append_tensor(std::string &out, TensorId id, const Tensor &t, const ConstantData *data, TensorId view_of,
                   const SourceManager *sources) {
  out += "    %";
  append_int(out, id);
  out += ' ';
  out += t.name;
  out += ' ';
  out += role_name(t.role);
  out += ' ';
  out += memory_name(t.memory);
  out += ' ';
  out += dtype_name(t.dtype);
  out += '[';
  for (std::size_t d = 0; d < t.shape.size(); ++d) {
    if (d)
      out += ", ";
    append_int(out, t.shape[d]);
  }
  out += ']';
  if (is_on_chip(t.memory)) {
    if (t.byte_offset < 0) {
      out += " unallocated";
    } else {
      std::int64_t partitions = t.shape.empty() ? 0 : t.shape[0];
      out += " partitions=[";
      append_int(out, t.partition_start);
      out += ", ";
      append_int(out, t.partition_start + partitions);
      out += ") bytes=[";
      append_int(out, t.byte_offset);
      out += ", ";
      append_int(out, t.byte_offset + t.bytes_per_partition());
      out += ')';
    }
  }
  if (view_of != kNoTensor) {
    out += " view_of=%";
    append_int(out, view_of);
  }
  if (data)
    out += constant_data_text(data->bytes);
  append_loc(out, t.loc, sources);
  out += '\n';
}

void append_block_tensor(std::string &out, const BlockTensor &b, const SourceManager *sources) {
  out += "    ";
  out += b.name;
  out += ' ';
  out += memory_name(b.memory);
  out += ' ';
  out += dtype_name(b.dtype);
  out += '[';
  for (std::size_t d = 0; d < b.shape.size(); ++d) {
    if (d)
      out += ", ";
    if (d == b.partition_dim)
      out += "par_dim(";
    append_int(out, b.shape[d]);
    if (d == b.partition_dim)
      out += ')';
  }
  out += "] bytes_per_partition=";
  std::int64_t free = static_cast<std::int64_t>(dtype_size(b.dtype));
  for (std::size_t d = b.partition_dim + 1; d < b.shape.size(); ++d)
    free *= b.shape[d];
  append_int(out, b.num_blocks() * free);
  out += " blocks=[";
  for (std::size_t i = 0; i < b.blocks.size(); ++i) {
    if (i)
      out += ", ";
    if (b.blocks[i] == kNoTensor) {
      out += '-';
    } else {
      out += '%';
      append_int(out, b.blocks[i]);
    }
  }
  out += ']';
  append_loc(out, b.loc, sources);
  out += '\n';
}

void append_instruction(std::string &out, std::size_t index, const Function &fn, const Instruction &inst,
                        const SourceManager *sources) {
  out += "    ";
  append_int(out, static_cast<std::int64_t>(index));
  out += ": ";
  out += opcode_name(inst.opcode);
  out += ' ';
  out += engine_name(inst.engine);
  append_aps(out, "dst", fn, fn.dst(inst));
  append_aps(out, "src", fn, fn.src(inst));
  for (const auto &[name, value] : fn.attrs(inst)) {
    out += ' ';
    out += name;
    out += '=';
    append_py_repr(out, value);
  }
  if (inst.loop_kind != LoopKind::None) {
    out += " loop=";
    out += loop_text(inst.loop_kind);
  }
  append_loc(out, inst.loc, sources);
  out += '\n';
}

} // namespace

void print_function(TextSink &sink, const Function &fn, const SourceManager &sources, const TextOptions &options) {
  const SourceManager *locations = options.source_locations ? &sources : nullptr;
  std::string &out = sink.text;
  if (!sink.streaming()) {
    // Tensor lines take about 100 bytes and instruction lines up to about 200: one generous
    // reservation keeps million-instruction kernels linear and never copies the text to grow
    // it (the pages past the end are never touched, so they cost address space, not memory).
    out.reserve(out.size() + 256 + 128 * fn.tensors.size() + 256 * fn.instructions.size());
  }
  out += "kernel ";
  out += fn.name;
  out += '\n';
  append_names(out, "inputs", fn.input_names);
  append_names(out, "outputs", fn.output_names);
  out += "  matmul_mac_count: ";
  append_int(out, fn.matmul_mac_count);
  out += "\n  has_collectives: ";
  out += fn.has_collectives ? "true" : "false";
  out += "\n  tensors: ";
  append_int(out, static_cast<std::int64_t>(fn.tensors.size()));
  out += '\n';
  std::vector<TensorId> roots = fn.views.empty() ? std::vector<TensorId>() : fn.storage_roots();
  for (std::size_t i = 0; i < fn.tensors.size(); ++i) {
    TensorId view_of = roots.empty() || roots[i] == i ? kNoTensor : roots[i];
    append_tensor(out, static_cast<TensorId>(i), fn.tensors[i],
                  fn.tensors[i].role == TensorRole::Constant ? fn.constant_data(static_cast<TensorId>(i)) : nullptr,
                  view_of, locations);
    sink.flush_if_large();
  }
  if (!fn.block_tensors.empty()) {
    out += "  block tensors: ";
    append_int(out, static_cast<std::int64_t>(fn.block_tensors.size()));
    out += '\n';
    for (const BlockTensor &b : fn.block_tensors)
      append_block_tensor(out, b, locations);
  }
  out += "  instructions: ";
  append_int(out, static_cast<std::int64_t>(fn.instructions.size()));
  out += '\n';
  for (std::size_t i = 0; i < fn.instructions.size(); ++i) {
    append_instruction(out, i, fn, fn.instructions[i], locations);
    sink.flush_if_large();
  }
}

std::string print_function(const Function &fn, const SourceManager &sources, const TextOptions &options) {
  TextSink sink;
  print_function(sink, fn, sources, options);
  return std::move(sink.text);
}

} // namespace nkicc::ir
