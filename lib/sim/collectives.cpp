// nl.all_reduce over the program axes of a launch grid. The instances of one launch run on the
// CPU one after another, but a collective needs all of them at once: so the instances run in
// phases, each up to the next such collective, with each instance's tiles, private HBM,
// accumulators and random state set aside between phases (shared HBM is everyone's). At the
// collective, every instance's source is read, the instances that differ only along the
// reduced axes are combined, in instance order (row-major program ids), in float64, and the
// result is written into each one's destination, rounded to its dtype.
// nki.nccl's collectives across the ranks of replica groups are other NeuronCores' business:
// `nkicc simulate` runs one NeuronCore and refuses them (visitors.cpp).
#include "executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace nkicc::sim {

void Executor::swap_state(InstanceState &state) {
  if (state.local.size() != buffers_.size())
    state.local.resize(buffers_.size());
  for (std::size_t t = 0; t < buffers_.size(); ++t)
    if (instance_local(static_cast<ir::TensorId>(t)))
      std::swap(buffers_[t], state.local[t]);
  std::swap(scalar_acc_, state.scalar_acc);
  std::swap(vector_acc_, state.vector_acc);
  std::swap(rng_, state.rng);
}

bool Executor::run_phased(const std::vector<ProgramIds> &instances, const std::vector<std::size_t> &collectives) {
  std::vector<InstanceState> states(instances.size());
  std::size_t begin = 0;
  for (std::size_t phase = 0; phase <= collectives.size(); ++phase) {
    std::size_t end = phase < collectives.size() ? collectives[phase] : kernel_.instructions.size();
    for (std::size_t k = 0; k < instances.size(); ++k) {
      swap_state(states[k]);
      pid_ = instances[k];
      bool ok = run_range(begin, end);
      swap_state(states[k]);
      if (!ok)
        return false;
    }
    if (phase == collectives.size())
      break;
    index_ = end;
    if (!all_reduce_programs(states, instances))
      return false;
    begin = end + 1;
  }
  // The results left in private HBM (an internal kernel's return) are the last instance's.
  if (!states.empty())
    swap_state(states.back());
  return true;
}

bool Executor::all_reduce_programs(std::vector<InstanceState> &states, const std::vector<ProgramIds> &instances) {
  const bir::KernelInstruction &inst = instruction();
  if (inst.dst.size() != 1 || inst.src.size() != 1)
    return fail("an all_reduce over program axes has one source and one destination");
  const PyConstant *op = attr("op");
  const PyConstant *axes = attr("program_axes");
  if (!op || op->kind != PyConstant::Kind::Str || (op->s != "add" && op->s != "maximum" && op->s != "minimum"))
    return fail("its op is not add, maximum or minimum");
  if (axes->kind != PyConstant::Kind::Tuple && axes->kind != PyConstant::Kind::List)
    return fail("its program_axes is not a tuple of axes");
  std::array<bool, kMaxProgramAxes> reduced{};
  for (const PyConstant &a : axes->items) {
    if (a.kind != PyConstant::Kind::Int || a.i < 0 || a.i >= static_cast<std::int64_t>(kMaxProgramAxes))
      return fail("its program_axes names no axis of the grid");
    reduced[static_cast<std::size_t>(a.i)] = true;
  }
  const ir::AccessPattern &src = inst.src[0], &dst = inst.dst[0];
  std::vector<std::int64_t> shape = shape_of(src);
  if (shape != shape_of(dst))
    return fail("its source and destination differ in shape");
  std::size_t n = static_cast<std::size_t>(count_of(src));
  // Each instance's source, read while its state is loaded.
  std::vector<std::vector<double>> values(instances.size());
  std::vector<std::uint8_t> active;
  bool has_mask = false;
  Offsets offs;
  for (std::size_t k = 0; k < instances.size(); ++k) {
    swap_state(states[k]);
    pid_ = instances[k];
    if (kernel_.tensors[src.tensor].view_of >= 0)
      view_from_base(src.tensor);
    buffer(src.tensor);
    bool ok = mask(shape, active, has_mask) && offsets(src, offs, has_mask ? &active : nullptr, "source");
    if (ok) {
      check_written(src.tensor, offs, has_mask ? &active : nullptr, "source");
      values[k].resize(n);
      for (std::size_t e = 0; e < n; ++e)
        values[k][e] = offs[e] < 0 ? 0.0 : read(src.tensor, offs[e]);
    }
    swap_state(states[k]);
    if (!ok)
      return false;
  }
  // The instances that agree on every axis not reduced form a group.
  std::map<ProgramIds, std::vector<double>> combined;
  for (std::size_t k = 0; k < instances.size(); ++k) {
    ProgramIds key = instances[k];
    for (std::size_t a = 0; a < kMaxProgramAxes; ++a)
      if (reduced[a])
        key[a] = 0;
    auto [it, fresh] = combined.try_emplace(key, values[k]);
    if (fresh)
      continue;
    for (std::size_t e = 0; e < n; ++e) {
      double &acc = it->second[e];
      double v = values[k][e];
      acc = op->s == "add" ? acc + v : op->s == "maximum" ? std::max(acc, v) : std::min(acc, v);
    }
  }
  for (std::size_t k = 0; k < instances.size(); ++k) {
    swap_state(states[k]);
    pid_ = instances[k];
    ProgramIds key = instances[k];
    for (std::size_t a = 0; a < kMaxProgramAxes; ++a)
      if (reduced[a])
        key[a] = 0;
    const std::vector<double> &result = combined[key];
    if (kernel_.tensors[dst.tensor].view_of >= 0)
      view_from_base(dst.tensor);
    bool ok = mask(shape, active, has_mask) && offsets(dst, offs, has_mask ? &active : nullptr, "destination");
    if (ok) {
      buffer(dst.tensor);
      for (std::size_t e = 0; e < n; ++e)
        if (offs[e] >= 0)
          write(dst.tensor, offs[e], result[e]);
      if (kernel_.tensors[dst.tensor].view_of >= 0)
        view_to_base(dst.tensor);
      release_after(index_);
    }
    swap_state(states[k]);
    if (!ok)
      return false;
  }
  return true;
}

} // namespace nkicc::sim
