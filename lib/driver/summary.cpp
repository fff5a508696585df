#include "nkicc/driver/summary.h"

#include "nkicc/support/json_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace nkicc {

namespace {

constexpr std::uint32_t kUnused = std::numeric_limits<std::uint32_t>::max();

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::uint64_t>::max() : sum;
}

bool is_dma(ir::Opcode op) { return op == ir::Opcode::Load || op == ir::Opcode::Store || op == ir::Opcode::DmaCopy; }

/// Bytes one access pattern covers: its element count times the tensor's element size.
std::uint64_t pattern_bytes(const ir::Function &fn, const ir::Operand &op) {
  std::uint64_t elements = 1;
  for (auto [step, num] : fn.pattern(op)) {
    (void)step;
    if (num <= 0 || __builtin_mul_overflow(elements, static_cast<std::uint64_t>(num), &elements))
      return num <= 0 ? 0 : std::numeric_limits<std::uint64_t>::max();
  }
  std::uint64_t bytes = 0;
  std::uint64_t size = op.tensor < fn.tensors.size() ? dtype_size(fn.tensors[op.tensor].dtype) : 0;
  return __builtin_mul_overflow(elements, size, &bytes) ? std::numeric_limits<std::uint64_t>::max() : bytes;
}

/// High water, partitions and the peak of one memory, from each tile's first and last use.
MemorySummary memory_summary(const ir::Function &fn, ir::Memory memory, std::int64_t capacity,
                             const std::vector<std::uint32_t> &first, const std::vector<std::uint32_t> &last) {
  MemorySummary m;
  m.capacity = capacity;
  struct Event {
    std::uint32_t at;
    std::int64_t bytes; ///< added at a first use, removed (negative) after the last
  };
  std::vector<Event> events;
  std::vector<ir::TensorId> tiles;
  for (std::size_t id = 0; id < fn.tensors.size(); ++id) {
    const ir::Tensor &t = fn.tensors[id];
    if (t.memory != memory || t.byte_offset < 0 || first[id] == kUnused)
      continue;
    tiles.push_back(static_cast<ir::TensorId>(id));
    m.high_water = std::max(m.high_water, t.byte_offset + t.bytes_per_partition());
    m.partitions = std::max<std::int64_t>(m.partitions, t.partition_start + (t.shape.empty() ? 0 : t.shape[0]));
    events.push_back({first[id], t.bytes_per_partition()});
    events.push_back({last[id] + 1, -t.bytes_per_partition()});
  }
  // At one position, every change is applied before the live bytes are read.
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) { return a.at < b.at; });
  std::int64_t live = 0;
  for (std::size_t i = 0; i < events.size();) {
    std::uint32_t at = events[i].at;
    for (; i < events.size() && events[i].at == at; ++i)
      live += events[i].bytes;
    if (live > m.peak_live) {
      m.peak_live = live;
      m.peak_instruction = at;
    }
  }
  if (!m.peak_instruction)
    return m;
  auto p = static_cast<std::uint32_t>(*m.peak_instruction);
  for (ir::TensorId id : tiles)
    if (first[id] <= p && p <= last[id])
      m.live_at_peak.push_back(id);
  std::stable_sort(m.live_at_peak.begin(), m.live_at_peak.end(), [&](ir::TensorId a, ir::TensorId b) {
    return fn.tensors[a].byte_offset < fn.tensors[b].byte_offset;
  });
  return m;
}

void append_loc(std::string &out, SourceLoc loc, const SourceManager &sources, const TextOptions &options) {
  if (!options.source_locations || !loc.valid() || loc.file > sources.file_count())
    return;
  LineCol lc = sources.line_col(loc);
  out += fmt::format(" @{}:{}", lc.line, lc.column);
}

std::string shape_text(const ir::Shape &shape) {
  std::string out = "[";
  for (std::size_t d = 0; d < shape.size(); ++d)
    out += fmt::format("{}{}", d ? ", " : "", shape[d]);
  return out + "]";
}

/// A share of the capacity to a tenth of a percent, rounded half up, in integers so that the
/// text is the same on every machine.
std::string percent(std::int64_t part, std::int64_t whole) {
  if (whole <= 0)
    return "-";
  // Tiles fit their memory, so `part` is at most a few MiB; the guard keeps absurd figures finite.
  if (part < 0 || part > std::numeric_limits<std::int64_t>::max() / 1000)
    return ">100%";
  std::int64_t tenths = (part * 1000 + whole / 2) / whole;
  return fmt::format("{}.{}%", tenths / 10, tenths % 10);
}

void memory_text(std::string &out, std::string_view label, const MemorySummary &m, const CallSummary &call,
                 const SourceManager &sources, const TextOptions &options) {
  out += fmt::format("  {}: {} of {} bytes per partition ({}), {} partitions\n", label, m.high_water, m.capacity,
                     percent(m.high_water, m.capacity), m.partitions);
  if (!m.peak_instruction)
    return;
  const ir::Function &fn = *call.function;
  out += fmt::format("    peak: {} bytes live at instruction {}", m.peak_live, *m.peak_instruction);
  if (*m.peak_instruction < fn.instructions.size())
    append_loc(out, fn.instructions[*m.peak_instruction].loc, sources, options);
  out += fmt::format(", {} {}:\n", m.live_at_peak.size(), m.live_at_peak.size() == 1 ? "tile" : "tiles");
  for (ir::TensorId id : m.live_at_peak) {
    const ir::Tensor &t = fn.tensors[id];
    out += fmt::format("      %{} {} {}{} bytes [{}, {})", id, t.name, dtype_name(t.dtype), shape_text(t.shape),
                       t.byte_offset, t.byte_offset + t.bytes_per_partition());
    append_loc(out, t.loc, sources, options);
    out += '\n';
  }
}

void call_header(std::string &out, const CallSummary &c) {
  out += fmt::format("call {}: {} {}", c.index, c.external ? "kernel" : "internal", c.func_name);
  if (!c.grid.empty()) {
    out += fmt::format(", grid [{}]", fmt::join(c.grid, ", "));
    if (c.nc > 1)
      out += fmt::format(", nc {}", c.nc);
  }
}

void json_loc(std::string &out, SourceLoc loc, const SourceManager &sources, const TextOptions &options) {
  if (!options.source_locations || !loc.valid() || loc.file > sources.file_count())
    return;
  LineCol lc = sources.line_col(loc);
  out += fmt::format(", \"line\": {}, \"column\": {}", lc.line, lc.column);
}

void memory_json(std::string &out, const MemorySummary &m, const ir::Function &fn, const SourceManager &sources,
                 const TextOptions &options) {
  out += fmt::format("{{\"capacity\": {}, \"high_water\": {}, \"partitions\": {}, \"peak_live\": {}", m.capacity,
                     m.high_water, m.partitions, m.peak_live);
  if (m.peak_instruction)
    out += fmt::format(", \"peak_instruction\": {}", *m.peak_instruction);
  out += ", \"live_at_peak\": [";
  for (std::size_t i = 0; i < m.live_at_peak.size(); ++i) {
    const ir::Tensor &t = fn.tensors[m.live_at_peak[i]];
    out += i ? ", " : "";
    out += fmt::format("{{\"id\": {}, \"name\": ", m.live_at_peak[i]);
    append_json_string(out, t.name.str(), false);
    out += fmt::format(", \"dtype\": \"{}\", \"shape\": {}, \"byte_offset\": {}, \"bytes\": {}", dtype_name(t.dtype),
                       shape_text(t.shape), t.byte_offset, t.bytes_per_partition());
    json_loc(out, t.loc, sources, options);
    out += '}';
  }
  out += "]}";
}

} // namespace

KernelSummary summarize_kernel(const ir::Function &fn, const TargetInfo &target) {
  KernelSummary s;
  s.macs = fn.matmul_mac_count;
  std::vector<std::uint32_t> first(fn.tensors.size(), kUnused), last(fn.tensors.size(), 0);
  for (std::size_t i = 0; i < fn.instructions.size(); ++i) {
    const ir::Instruction &inst = fn.instructions[i];
    EngineSummary &engine = s.engines[static_cast<std::size_t>(inst.engine) % kEngineCount];
    ++engine.instructions;
    ++s.instructions;
    auto index = static_cast<std::uint32_t>(std::min<std::size_t>(i, kUnused - 1));
    for (const ir::Operand &op : fn.operands(inst)) {
      if (op.tensor >= fn.tensors.size())
        continue;
      if (first[op.tensor] == kUnused)
        first[op.tensor] = index;
      last[op.tensor] = index;
    }
    if (is_dma(inst.opcode)) {
      // A DMA moves what its destination covers.
      std::uint64_t bytes = 0;
      for (const ir::Operand &op : fn.dst(inst))
        bytes = saturating_add(bytes, pattern_bytes(fn, op));
      engine.dma_bytes = saturating_add(engine.dma_bytes, bytes);
      s.dma_bytes = saturating_add(s.dma_bytes, bytes);
    }
  }
  s.sbuf = memory_summary(fn, ir::Memory::Sbuf, target.sbuf_bytes_per_partition, first, last);
  s.psum = memory_summary(fn, ir::Memory::Psum, target.psum_bytes_per_partition, first, last);
  return s;
}

std::string summary_text(const std::vector<CallSummary> &calls, const SourceManager &sources,
                         const TextOptions &options) {
  std::string out;
  for (const CallSummary &c : calls) {
    if (!out.empty())
      out += '\n';
    call_header(out, c);
    if (c.same_as) {
      out += fmt::format(" (same kernel as call {})\n", *c.same_as);
      continue;
    }
    out += '\n';
    const KernelSummary &s = c.figures;
    memory_text(out, "SBUF", s.sbuf, c, sources, options);
    memory_text(out, "PSUM", s.psum, c, sources, options);
    out += fmt::format("  instructions: {}\n", s.instructions);
    for (std::size_t e = 0; e < kEngineCount; ++e) {
      const EngineSummary &engine = s.engines[e];
      if (!engine.instructions)
        continue;
      out += fmt::format("    {} {}", ir::engine_name(static_cast<ir::Engine>(e)), engine.instructions);
      if (engine.dma_bytes)
        out += fmt::format(", dma {} bytes", engine.dma_bytes);
      out += '\n';
    }
    out += fmt::format("  DMA bytes: {}\n", s.dma_bytes);
    out += fmt::format("  MACs: {}\n", s.macs);
  }
  return out;
}

std::string summary_json(const std::vector<CallSummary> &calls, const SourceManager &sources,
                         const TextOptions &options) {
  std::string out = "{\"calls\": [";
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const CallSummary &c = calls[i];
    const KernelSummary &s = c.figures;
    out += i ? ",\n  " : "\n  ";
    out += fmt::format("{{\"index\": {}, \"kind\": \"{}\", \"func_name\": ", c.index,
                       c.external ? "external" : "internal");
    append_json_string(out, c.func_name, false);
    out += fmt::format(", \"grid\": [{}], \"nc\": {}", fmt::join(c.grid, ", "), c.nc);
    if (c.same_as)
      out += fmt::format(", \"same_kernel_as\": {}", *c.same_as);
    out += ",\n   \"sbuf\": ";
    memory_json(out, s.sbuf, *c.function, sources, options);
    out += ",\n   \"psum\": ";
    memory_json(out, s.psum, *c.function, sources, options);
    out += fmt::format(",\n   \"instructions\": {}, \"engines\": {{", s.instructions);
    bool first = true;
    for (std::size_t e = 0; e < kEngineCount; ++e) {
      if (!s.engines[e].instructions)
        continue;
      out += first ? "" : ", ";
      first = false;
      out +=
          fmt::format("\"{}\": {{\"instructions\": {}, \"dma_bytes\": {}}}",
                      ir::engine_name(static_cast<ir::Engine>(e)), s.engines[e].instructions, s.engines[e].dma_bytes);
    }
    out += fmt::format("}},\n   \"dma_bytes\": {}, \"macs\": {}}}", s.dma_bytes, s.macs);
  }
  out += calls.empty() ? "]}\n" : "\n]}\n";
  return out;
}

} // namespace nkicc
