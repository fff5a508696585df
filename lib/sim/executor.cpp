#include "executor.h"

#include "nkicc/sim/numeric.h"

#include <fmt/format.h>

#include <cmath>

namespace nkicc::sim {
namespace {

std::int64_t numel(const bir::KernelTensor &t) {
  std::int64_t n = 1;
  for (std::int64_t d : t.shape)
    n *= d;
  return n;
}

/// The coordinates of flat element `off` of a row-major tensor, as `[r, c]`.
std::string coords_text(std::int64_t off, const std::vector<std::int64_t> &shape) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    std::int64_t n = shape[d] > 0 ? shape[d] : 1;
    c[d] = off % n;
    off /= n;
  }
  return fmt::format("[{}]", fmt::join(c, ", "));
}

std::string shape_text(const std::vector<std::int64_t> &shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

bool on_chip(ir::Memory m) { return m == ir::Memory::Sbuf || m == ir::Memory::Psum; }

// 128-bit arithmetic for the bounds of a view: a crafted pattern cannot overflow the check.
__extension__ typedef __int128 Wide;

} // namespace

Executor::Executor(const bir::KernelData &kernel, const SimulateOptions &options, KernelRun &run)
    : kernel_(kernel), options_(options), run_(run), buffers_(kernel.tensors.size()) {
  // Tiles and private HBM are freed after their last use, so an unrolled kernel's memory is
  // that of its live tiles, as on the device. A result in private HBM (an internal kernel's
  // return) is kept: it is read back as an output.
  // A view's use is also its base's (the decoder checked that a base precedes its view).
  std::vector<std::size_t> last(kernel.tensors.size(), SIZE_MAX);
  uses_view_.assign(kernel.instructions.size(), 0);
  auto use = [&](const ir::AccessPattern &ap, std::size_t i) {
    last[ap.tensor] = i;
    if (std::int64_t base = kernel.tensors[ap.tensor].view_of; base >= 0) {
      last[static_cast<std::size_t>(base)] = i;
      uses_view_[i] = 1;
    }
  };
  for (std::size_t i = 0; i < kernel.instructions.size(); ++i) {
    for (const ir::AccessPattern &ap : kernel.instructions[i].dst)
      use(ap, i);
    for (const ir::AccessPattern &ap : kernel.instructions[i].src)
      use(ap, i);
  }
  release_.resize(kernel.instructions.size());
  for (std::size_t t = 0; t < last.size(); ++t)
    if (last[t] != SIZE_MAX && kernel.tensors[t].memory != ir::Memory::SharedHbm &&
        kernel.tensors[t].role == ir::TensorRole::Internal)
      release_[last[t]].push_back(static_cast<ir::TensorId>(t));
  has_grid_ = !kernel.grid.empty();
}

Buffer &Executor::buffer(ir::TensorId id) {
  Buffer &b = buffers_[id];
  if (!b.live) {
    auto n = static_cast<std::size_t>(numel(kernel_.tensors[id]));
    auto pooled = pool_.find(n);
    if (pooled != pool_.end() && !pooled->second.empty()) {
      b = std::move(pooled->second.back());
      pooled->second.pop_back();
      std::fill(b.written.begin(), b.written.end(), 0);
    } else {
      b.data.reset(new double[n]);
      b.written.assign(n, 0);
      b.size = n;
    }
    b.unwritten = n;
    b.live = true;
  }
  return b;
}

void Executor::release(ir::TensorId id) {
  Buffer &b = buffers_[id];
  if (!b.live)
    return;
  b.live = false;
  std::vector<Buffer> &free = pool_[b.size];
  if (free.size() < 16)
    free.push_back(std::move(b));
  b = Buffer{};
}

void Executor::release_after(std::size_t index) {
  for (ir::TensorId id : release_[index])
    release(id);
}

std::string Executor::where() const {
  const bir::KernelInstruction &inst = kernel_.instructions[index_];
  std::string out = fmt::format("instruction {} ({}", index_, ir::opcode_name(inst.opcode));
  if (inst.line)
    out += fmt::format(" at line {}:{}", inst.line, inst.col);
  out += ")";
  if (has_grid_) {
    out += " of SPMD instance (";
    for (std::size_t a = 0; a < kernel_.grid.size(); ++a)
      out += (a ? ", " : "") + std::to_string(pid_[a]);
    out += ")";
  }
  return out;
}

bool Executor::fail(std::string message) {
  run_.messages.push_back({Severity::Error, where() + ": " + message, "simulate"});
  failed_ = true;
  return false;
}

void Executor::warn_once(std::string_view kind, std::string message) {
  const bir::KernelInstruction &inst = kernel_.instructions[index_];
  // An unrolled loop repeats one source instruction many times: one warning per source position.
  auto key = std::make_tuple(inst.line, inst.col, static_cast<int>(inst.opcode), std::string(kind));
  if (inst.line == 0)
    std::get<3>(key) += "#" + std::to_string(index_);
  if (!warned_.insert(std::move(key)).second)
    return;
  run_.messages.push_back({Severity::Warning, where() + " " + message, std::string(kind)});
}

std::vector<std::int64_t> Executor::shape_of(const ir::AccessPattern &ap) {
  std::vector<std::int64_t> s;
  for (auto [step, num] : ap.pattern)
    s.push_back(num);
  return s;
}

std::int64_t Executor::count_of(const ir::AccessPattern &ap) {
  std::int64_t n = 1;
  for (auto [step, num] : ap.pattern)
    n *= num;
  return n;
}

bool Executor::offsets(const ir::AccessPattern &ap, Offsets &out, const std::vector<std::uint8_t> *active,
                       std::string_view role) {
  const bir::KernelTensor &t = kernel_.tensors[ap.tensor];
  std::int64_t size = numel(t);
  Wide base = ap.offset, lo = 0, hi = 0, count = 1;
  for (std::size_t a = 0; a < kMaxProgramAxes; ++a)
    base += static_cast<Wide>(ap.program_offset[a]) * pid_[a];
  for (auto [step, num] : ap.pattern) {
    if (num == 0)
      count = 0;
    else
      count *= num;
    if (count > (Wide{1} << 40))
      return fail(fmt::format("its {} view of '{}' has more than 2^40 elements", role, t.name));
    Wide span = static_cast<Wide>(step) * (num - 1);
    (span < 0 ? lo : hi) += span;
  }
  out.resize(static_cast<std::size_t>(count));
  if (count == 0)
    return true;
  bool inside = base + lo >= 0 && base + hi < size;
  if (!inside && !active)
    return fail(fmt::format("its {} view of '{}' {} reaches elements {} to {}, outside the tensor's {}", role, t.name,
                            shape_text(shape_of(ap)), static_cast<long long>(base + lo),
                            static_cast<long long>(base + hi), size));
  // Row-major walk: an odometer over the outer dimensions, a tight loop over the last.
  std::size_t rank = ap.pattern.size();
  auto b = static_cast<std::int64_t>(base);
  if (rank == 0) {
    out[0] = b;
  } else {
    std::vector<std::int64_t> idx(rank, 0);
    auto [last_step, last_num] = ap.pattern[rank - 1];
    std::int64_t cur = b;
    std::size_t k = 0;
    while (true) {
      for (std::int64_t j = 0; j < last_num; ++j)
        out[k++] = cur + j * last_step;
      std::size_t d = rank - 1;
      bool done = true;
      while (d-- > 0) {
        cur += ap.pattern[d].first;
        if (++idx[d] < ap.pattern[d].second) {
          done = false;
          break;
        }
        cur -= ap.pattern[d].first * ap.pattern[d].second;
        idx[d] = 0;
      }
      if (done)
        break;
    }
  }
  if (!inside) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!(*active)[i]) {
        out[i] = -1;
        continue;
      }
      if (out[i] < 0 || out[i] >= size)
        return fail(fmt::format("its {} view of '{}' reaches element {} (of {}) where the mask holds", role, t.name,
                                out[i], size));
    }
  } else if (active) {
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!(*active)[i])
        out[i] = -1;
  }
  buffer(ap.tensor);
  return true;
}

const PyConstant *Executor::attr(std::string_view name) const {
  for (const auto &[n, v] : kernel_.instructions[index_].attrs)
    if (n == name)
      return &v;
  return nullptr;
}

const Predicate *Executor::predicate(std::string_view text, std::string_view what) {
  auto it = predicates_.find(text);
  if (it == predicates_.end()) {
    std::string error;
    auto p = Predicate::parse(text, error);
    if (!p) {
      fail(fmt::format("its {} cannot be read: {}", what, error));
      return nullptr;
    }
    it = predicates_.emplace(std::string(text), std::move(*p)).first;
  }
  it->second.bind(pid_);
  return &it->second;
}

bool Executor::mask(const std::vector<std::int64_t> &shape, std::vector<std::uint8_t> &active, bool &has_mask) {
  const PyConstant *m = attr("mask");
  has_mask = m != nullptr;
  if (!m)
    return true;
  if (m->kind != PyConstant::Kind::Str)
    return fail("its mask is not a predicate text");
  const Predicate *p = predicate(m->s, "mask");
  if (!p)
    return false;
  std::int64_t n = 1;
  for (std::int64_t d : shape)
    n *= d;
  active.assign(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> c(shape.size(), 0);
  for (std::size_t i = 0; i < active.size(); ++i) {
    active[i] = p->eval(c) ? 1 : 0;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++c[d] < shape[d])
        break;
      c[d] = 0;
    }
  }
  return true;
}

void Executor::check_written(ir::TensorId id, const Offsets &offs, const std::vector<std::uint8_t> *active,
                             std::string_view role) {
  const Buffer &b = buffers_[id];
  if (b.unwritten == 0)
    return;
  for (std::size_t i = 0; i < offs.size(); ++i) {
    if (active && !(*active)[i])
      continue;
    if (b.written[static_cast<std::size_t>(offs[i])])
      continue;
    const bir::KernelTensor &t = kernel_.tensors[id];
    std::size_t missing = 0;
    for (std::size_t j = i; j < offs.size(); ++j)
      if ((!active || (*active)[j]) && !b.written[static_cast<std::size_t>(offs[j])])
        ++missing;
    warn_once("sim-uninitialized-read",
              fmt::format("reads {} {} '{}' {} where nothing was written: {} of the {} elements it reads, the first "
                          "at {} (read as 0)",
                          role, on_chip(t.memory) ? "tile" : "tensor", t.name, shape_text(t.shape), missing,
                          offs.size(), coords_text(offs[i], t.shape)));
    return;
  }
}

double Executor::round_to_dtype(ir::TensorId id, double v) const { return round_to(kernel_.tensors[id].dtype, v); }

void Executor::note_nan(bool inputs_finite, bool produced_nan) {
  if (!options_.check_nan || !inputs_finite || !produced_nan)
    return;
  const bir::KernelInstruction &inst = kernel_.instructions[index_];
  std::string dst = inst.dst.empty() ? std::string("its result") : "'" + kernel_.tensors[inst.dst[0].tensor].name + "'";
  warn_once("sim-nan", fmt::format("produces NaN in {} from finite inputs", dst));
}

bool Executor::run(std::span<const HostArray> inputs) {
  // Inputs are bound by name, in input_names order; the caller checked their shapes and dtypes.
  for (std::size_t i = 0; i < kernel_.input_names.size() && i < inputs.size(); ++i)
    for (std::size_t t = 0; t < kernel_.tensors.size(); ++t)
      if (kernel_.tensors[t].role == ir::TensorRole::Input && kernel_.tensors[t].name == kernel_.input_names[i]) {
        Buffer &b = buffer(static_cast<ir::TensorId>(t));
        std::copy(inputs[i].values.begin(), inputs[i].values.end(), b.data.get());
        std::fill(b.written.begin(), b.written.end(), 1);
        b.unwritten = 0;
        break;
      }
  // A constant holds what the kernel gave at trace time (the decoder checked its size).
  for (std::size_t t = 0; t < kernel_.tensors.size(); ++t)
    if (const bir::KernelTensor &tensor = kernel_.tensors[t]; tensor.role == ir::TensorRole::Constant) {
      Buffer &b = buffer(static_cast<ir::TensorId>(t));
      std::size_t size = dtype_size(tensor.dtype);
      for (std::size_t k = 0; k * size < tensor.data.size(); ++k)
        b.data[k] = decode(tensor.dtype, tensor.data.data() + k * size);
      std::fill(b.written.begin(), b.written.end(), 1);
      b.unwritten = 0;
    }
  std::array<std::int64_t, kMaxProgramAxes> extent{1, 1, 1};
  for (std::size_t a = 0; a < kernel_.grid.size() && a < kMaxProgramAxes; ++a)
    extent[a] = kernel_.grid[a];
  // nl.all_reduce over program axes needs every instance at the collective at once.
  std::vector<std::size_t> collectives;
  for (std::size_t i = 0; i < kernel_.instructions.size(); ++i)
    if (kernel_.instructions[i].opcode == ir::Opcode::Collective) {
      index_ = i;
      if (attr("program_axes"))
        collectives.push_back(i);
    }
  if (!collectives.empty()) {
    std::vector<ProgramIds> instances;
    for (pid_[0] = 0; pid_[0] < extent[0]; ++pid_[0])
      for (pid_[1] = 0; pid_[1] < extent[1]; ++pid_[1])
        for (pid_[2] = 0; pid_[2] < extent[2]; ++pid_[2])
          instances.push_back(pid_);
    bool ok = run_phased(instances, collectives);
    pid_ = {};
    return ok && !failed_;
  }
  for (pid_[0] = 0; pid_[0] < extent[0]; ++pid_[0])
    for (pid_[1] = 0; pid_[1] < extent[1]; ++pid_[1])
      for (pid_[2] = 0; pid_[2] < extent[2]; ++pid_[2])
        if (!run_instance())
          return false;
  pid_ = {};
  return !failed_;
}

bool Executor::run_instance() {
  // Each instance starts with empty tiles and private HBM; shared HBM (and a result in private
  // HBM) is what earlier ones left.
  for (std::size_t t = 0; t < kernel_.tensors.size(); ++t)
    if (kernel_.tensors[t].memory != ir::Memory::SharedHbm && kernel_.tensors[t].role == ir::TensorRole::Internal)
      release(static_cast<ir::TensorId>(t));
  scalar_acc_.fill(0.0f);
  vector_acc_.fill(0.0f);
  rng_ = kDefaultSeed;
  return run_range(0, kernel_.instructions.size());
}

bool Executor::run_range(std::size_t begin, std::size_t end) {
  for (index_ = begin; index_ < end; ++index_) {
    const bir::KernelInstruction &inst = kernel_.instructions[index_];
    if (uses_view_[index_]) {
      for (const auto *aps : {&inst.dst, &inst.src})
        for (const ir::AccessPattern &ap : *aps)
          if (kernel_.tensors[ap.tensor].view_of >= 0)
            view_from_base(ap.tensor);
    }
    if (!execute_instruction(*this, inst))
      return false;
    if (uses_view_[index_])
      for (const ir::AccessPattern &ap : inst.dst)
        if (kernel_.tensors[ap.tensor].view_of >= 0)
          view_to_base(ap.tensor);
    release_after(index_);
  }
  return true;
}

void Executor::encode_base(ir::TensorId base) {
  const Buffer &b = buffer(base);
  DType dtype = kernel_.tensors[base].dtype;
  std::size_t size = dtype_size(dtype);
  view_bytes_.assign(b.size * size, 0);
  for (std::size_t i = 0; i < b.size; ++i)
    if (b.unwritten == 0 || b.written[i])
      encode(dtype, b.data[i], view_bytes_.data() + i * size);
}

void Executor::view_from_base(ir::TensorId view) {
  auto base = static_cast<ir::TensorId>(kernel_.tensors[view].view_of);
  encode_base(base);
  const Buffer &b = buffers_[base];
  Buffer &v = buffer(view);
  DType dtype = kernel_.tensors[view].dtype;
  std::size_t size = dtype_size(dtype), base_size = dtype_size(kernel_.tensors[base].dtype);
  v.unwritten = 0;
  for (std::size_t j = 0; j < v.size && (j + 1) * size <= view_bytes_.size(); ++j) {
    v.data[j] = decode(dtype, view_bytes_.data() + j * size);
    // Written when every base element it overlaps is.
    bool written = true;
    for (std::size_t k = j * size / base_size; k <= ((j + 1) * size - 1) / base_size && written; ++k)
      written = b.unwritten == 0 || b.written[k];
    v.written[j] = written;
    v.unwritten += !written;
  }
}

void Executor::view_to_base(ir::TensorId view) {
  auto base = static_cast<ir::TensorId>(kernel_.tensors[view].view_of);
  encode_base(base);
  const Buffer &v = buffers_[view];
  Buffer &b = buffer(base);
  DType dtype = kernel_.tensors[view].dtype, base_dtype = kernel_.tensors[base].dtype;
  std::size_t size = dtype_size(dtype), base_size = dtype_size(base_dtype);
  std::vector<std::uint8_t> touched(b.size, 0);
  for (std::size_t j = 0; j < v.size && (j + 1) * size <= view_bytes_.size(); ++j) {
    if (v.unwritten != 0 && !v.written[j])
      continue;
    encode(dtype, v.data[j], view_bytes_.data() + j * size);
    for (std::size_t k = j * size / base_size; k <= ((j + 1) * size - 1) / base_size; ++k)
      touched[k] = 1;
  }
  for (std::size_t k = 0; k < b.size; ++k) {
    if (!touched[k])
      continue;
    b.data[k] = decode(base_dtype, view_bytes_.data() + k * base_size);
    if (!b.written[k]) {
      b.written[k] = 1;
      --b.unwritten;
    }
  }
}

KernelRun run_kernel(const bir::KernelData &kernel, std::span<const HostArray> inputs, const SimulateOptions &options) {
  KernelRun run;
  Executor ex(kernel, options, run);
  if (!ex.run(inputs))
    return run;
  for (const std::string &name : kernel.output_names) {
    const bir::KernelTensor *found = nullptr;
    ir::TensorId id = 0;
    for (std::size_t t = 0; t < kernel.tensors.size() && !found; ++t)
      if (kernel.tensors[t].name == name && kernel.tensors[t].role != ir::TensorRole::Internal) {
        found = &kernel.tensors[t];
        id = static_cast<ir::TensorId>(t);
      }
    if (!found) {
      run.messages.push_back(
          {Severity::Error, fmt::format("output '{}' names no input or output tensor", name), "simulate"});
      return run;
    }
    Buffer &b = ex.buffer(id);
    std::size_t unwritten = b.unwritten;
    if (unwritten)
      run.messages.push_back({Severity::Warning,
                              fmt::format("output '{}' {}: {} of its {} elements were never written (written as 0)",
                                          name, shape_text(found->shape), unwritten, b.written.size()),
                              "sim-unwritten-output"});
    HostArray out;
    out.shape = found->shape;
    out.dtype = found->dtype;
    out.values.resize(b.size);
    for (std::size_t i = 0; i < b.size; ++i)
      out.values[i] = ex.read(id, static_cast<std::int64_t>(i));
    run.outputs.push_back(std::move(out));
  }
  run.ok = true;
  return run;
}

} // namespace nkicc::sim
