// The machine state of one kernel run and the helpers every opcode's visitor shares: tensor
// buffers with a written-bit per element, access patterns resolved to element offsets for the
// SPMD instance in progress, masks, reads checked for never-written elements, writes rounded
// to the destination's dtype. The visitors themselves (one per opcode) are in visitors.cpp.
#pragma once

#include "nkicc/sim/simulator.h"
#include "predicate.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nkicc::sim {

/// A tensor's elements. `data` starts uninitialized: an element is meaningful once `written`
/// says so, and a read of one that is not gives 0. `unwritten` counts those, so that a tile
/// fully written (the usual case) skips every per-element check.
/// An allocator whose resize() leaves new elements uninitialized: scratch vectors are filled
/// right after they grow, and zeroing them first would cost as much as the filling.
template <class T> struct UninitializedAllocator : std::allocator<T> {
  template <class U> struct rebind { using other = UninitializedAllocator<U>; };
  UninitializedAllocator() = default;
  template <class U> UninitializedAllocator(const UninitializedAllocator<U> &) {}
  template <class U> void construct(U *p) noexcept { ::new (static_cast<void *>(p)) U; }
  template <class U, class... Args> void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

/// Element offsets of a view, in row-major order of its shape.
using Offsets = std::vector<std::int64_t, UninitializedAllocator<std::int64_t>>;

struct Buffer {
  std::unique_ptr<double[]> data;
  std::vector<std::uint8_t> written;
  std::size_t size = 0;
  std::size_t unwritten = 0;
  bool live = false;
};

class Executor {
public:
  Executor(const bir::KernelData &kernel, const SimulateOptions &options, KernelRun &run);

  /// Runs every instance; false when an error was recorded.
  bool run(std::span<const HostArray> inputs);

  // ---- for the visitors ----------------------------------------------------------------------

  const bir::KernelData &kernel() const { return kernel_; }
  const bir::KernelTensor &tensor(ir::TensorId id) const { return kernel_.tensors[id]; }
  Buffer &buffer(ir::TensorId id);

  /// Records an error about the instruction being executed; returns false.
  bool fail(std::string message);
  /// Records a warning once per (instruction source location, opcode, kind).
  void warn_once(std::string_view kind, std::string message);
  /// `instruction 12 (tensor_tensor at line 14:9)`, for messages.
  std::string where() const;
  /// Records what a device_print prints: a note after where(), in instruction order.
  void print(std::string text) {
    run_.messages.push_back({Severity::Note, where() + ": " + std::move(text), "sim-device-print"});
  }

  /// The element offsets of a view in row-major order of its shape. Elements inactive in
  /// `active` (a mask) get -1 and need not lie inside the tensor; every other one must.
  bool offsets(const ir::AccessPattern &ap, Offsets &out, const std::vector<std::uint8_t> *active,
               std::string_view role);
  /// The view's shape (the `num` of each pair) and element count.
  static std::vector<std::int64_t> shape_of(const ir::AccessPattern &ap);
  static std::int64_t count_of(const ir::AccessPattern &ap);

  /// The instruction's `mask` attribute evaluated over `shape` (its iteration space), or null
  /// when it has none; false on a malformed mask.
  bool mask(const std::vector<std::int64_t> &shape, std::vector<std::uint8_t> &active, bool &has_mask);
  /// A predicate attribute parsed, with this instance's program ids bound.
  const Predicate *predicate(std::string_view text, std::string_view what);

  /// Warns when an element a read touches was never written.
  void check_written(ir::TensorId id, const Offsets &offs, const std::vector<std::uint8_t> *active,
                     std::string_view role);
  double read(ir::TensorId id, std::int64_t off) const {
    const Buffer &b = buffers_[id];
    auto i = static_cast<std::size_t>(off);
    return b.unwritten == 0 || b.written[i] ? b.data[i] : 0.0;
  }
  /// Writes `v` rounded to the tensor's dtype.
  void write(ir::TensorId id, std::int64_t off, double v) { write_exact(id, off, round_to_dtype(id, v)); }
  /// Writes a value the tensor's dtype already holds exactly.
  void write_exact(ir::TensorId id, std::int64_t off, double v) {
    Buffer &b = buffers_[id];
    auto i = static_cast<std::size_t>(off);
    b.data[i] = v;
    if (!b.written[i]) {
      b.written[i] = 1;
      --b.unwritten;
    }
  }
  double round_to_dtype(ir::TensorId id, double v) const;
  /// With --check-nan: `produced` NaN from finite inputs is reported.
  void note_nan(bool inputs_finite, bool produced_nan);
  bool check_nan() const { return options_.check_nan; }

  /// An attribute of the instruction being executed, or null.
  const PyConstant *attr(std::string_view name) const;
  const bir::KernelInstruction &instruction() const { return kernel_.instructions[index_]; }
  const std::array<std::int64_t, kMaxProgramAxes> &program_ids() const { return pid_; }
  /// The state of the engines' random number generator (nl.rand, nisa.dropout): each instance
  /// starts from kDefaultSeed's state, and nl.random_seed sets it (visitors_select.cpp).
  std::uint64_t &rng_state() { return rng_; }
  static constexpr std::uint64_t kDefaultSeed = 0;

  /// The accumulator registers (one float32 per partition lane) that fused reductions
  /// (`reduce_cmd`) keep between instructions: the Scalar engine's and the Vector engine's. An
  /// instruction's partition k is lane k. Every instance starts with them at zero.
  static constexpr std::size_t kLanes = 128;
  std::array<float, kLanes> &accumulators(ir::Engine engine) {
    return engine == ir::Engine::Scalar ? scalar_acc_ : vector_acc_;
  }

private:
  /// What one SPMD instance holds while the instances run in phases: its tiles and private HBM
  /// (by tensor id; shared HBM is everyone's), its accumulators and its random state.
  struct InstanceState {
    std::vector<Buffer> local;
    std::array<float, kLanes> scalar_acc{};
    std::array<float, kLanes> vector_acc{};
    std::uint64_t rng = kDefaultSeed;
  };
  using ProgramIds = std::array<std::int64_t, kMaxProgramAxes>;

  bool run_instance();
  /// Instructions [begin, end) of the instance whose state is loaded.
  bool run_range(std::size_t begin, std::size_t end);
  /// nl.all_reduce over program axes (collectives.cpp): every instance runs up to the
  /// collective, the collective combines them, then every instance runs on to the next one.
  bool run_phased(const std::vector<ProgramIds> &instances, const std::vector<std::size_t> &collectives);
  bool all_reduce_programs(std::vector<InstanceState> &states, const std::vector<ProgramIds> &instances);
  /// Swaps an instance's state with the executor's (loading it, or saving it back).
  void swap_state(InstanceState &state);
  bool instance_local(ir::TensorId id) const {
    return kernel_.tensors[id].memory != ir::Memory::SharedHbm && kernel_.tensors[id].role == ir::TensorRole::Internal;
  }
  /// A view (`t.view(dtype)`) keeps its own buffer: before an instruction that uses it, it is
  /// decoded from its base's bytes, and after one that writes it, its bytes go back to the base.
  void view_from_base(ir::TensorId view);
  void view_to_base(ir::TensorId view);
  /// The base's elements encoded in its dtype, unwritten ones as zero bytes, into view_bytes_.
  void encode_base(ir::TensorId base);
  void release_after(std::size_t index);
  void release(ir::TensorId id);

  const bir::KernelData &kernel_;
  const SimulateOptions &options_;
  KernelRun &run_;
  std::vector<Buffer> buffers_;
  /// Storage of released tiles by element count: an unrolled loop allocates the same few tile
  /// sizes again and again, and reusing them saves the page faults of fresh memory.
  std::map<std::size_t, std::vector<Buffer>> pool_;
  std::vector<std::vector<ir::TensorId>> release_; ///< per instruction: tiles whose last use it is
  std::vector<std::uint8_t> uses_view_;            ///< per instruction: an operand is a view
  std::vector<std::uint8_t> view_bytes_;
  std::array<std::int64_t, kMaxProgramAxes> pid_{};
  std::array<float, kLanes> scalar_acc_{};
  std::array<float, kLanes> vector_acc_{};
  bool has_grid_ = false;
  std::uint64_t rng_ = kDefaultSeed;
  std::size_t index_ = 0;
  bool failed_ = false;
  std::set<std::tuple<std::uint32_t, std::uint32_t, int, std::string>> warned_;
  std::map<std::string, Predicate, std::less<>> predicates_;
};

/// Executes one instruction: the visitor for its opcode (visitors.cpp).
bool execute_instruction(Executor &ex, const bir::KernelInstruction &inst);

} // namespace nkicc::sim
