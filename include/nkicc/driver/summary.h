// `--emit=summary`: what a traced kernel asks of the chip, per call, for the person tuning it
// first and a golden diff second. Every figure is read from the traced IR after allocation:
//
//   call <i>: kernel <name> | internal <func_name>  [grid [d0, ...][, nc k]]  [(same kernel as call <j>)]
//     SBUF: <high water> of <capacity> bytes per partition (<p>%), <n> partitions
//       peak: <live> bytes live at instruction <k> [@line:col], <t> tiles:
//         %<id> <name> <dtype>[<shape>] bytes [<b0>, <b1>) [@line:col]
//     PSUM: ... (the same)
//     instructions: <total>
//       <engine> <count> [dma <bytes> bytes]          (per engine used, in engine order)
//     DMA bytes: <total>
//     MACs: <matmul_mac_count>
//
// The high water is the highest byte any tile reaches in a partition (what must fit the
// capacity); the peak is the instruction where the tiles live at once add up to the most bytes.
#pragma once

#include "nkicc/ir/kernel_ir.h"
#include "nkicc/support/text_options.h"
#include "nkicc/target/target.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nkicc {

struct MemorySummary {
  std::int64_t capacity = 0;                   ///< bytes per partition of the memory on the target
  std::int64_t high_water = 0;                 ///< the highest byte offset + size of any tile, per partition
  std::int64_t partitions = 0;                 ///< partitions the tiles span
  std::int64_t peak_live = 0;                  ///< the most bytes per partition live at one instruction
  std::optional<std::size_t> peak_instruction; ///< the first instruction where peak_live is reached
  std::vector<ir::TensorId> live_at_peak;      ///< the tiles live there, by byte offset
};

inline constexpr std::size_t kEngineCount = 5; ///< ir::Engine's values

struct EngineSummary {
  std::uint64_t instructions = 0;
  std::uint64_t dma_bytes = 0; ///< bytes moved by the engine's DMA instructions (load, store, dma_copy)
};

struct KernelSummary {
  MemorySummary sbuf;
  MemorySummary psum;
  std::array<EngineSummary, kEngineCount> engines{}; ///< indexed by ir::Engine
  std::uint64_t instructions = 0;
  std::uint64_t dma_bytes = 0;
  std::int64_t macs = 0;
};

/// The figures of one allocated function. Linear in its instructions and operands, plus a sort of
/// its tiles.
KernelSummary summarize_kernel(const ir::Function &fn, const TargetInfo &target);

/// One call as the summary shows it.
struct CallSummary {
  std::size_t index = 0;
  bool external = true;
  std::string func_name;
  std::vector<std::int64_t> grid;
  std::int64_t nc = 1;
  const ir::Function *function = nullptr;
  KernelSummary figures;
  std::optional<std::size_t> same_as; ///< an earlier call that uses the very same kernel
};

/// The text above; `options` may leave out source locations.
std::string summary_text(const std::vector<CallSummary> &calls, const SourceManager &sources,
                         const TextOptions &options);
/// The same figures as one JSON object, `{"calls": [...]}` (`--stats-format=json`).
std::string summary_json(const std::vector<CallSummary> &calls, const SourceManager &sources,
                         const TextOptions &options);

} // namespace nkicc
