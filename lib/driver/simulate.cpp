// `nkicc simulate`: the trace pipeline up to the BIR module, then each call's kernel executed on
// the CPU from the blob alone (lib/sim), its inputs read from .npy files or made up, its outputs
// written as .npy files.
#include "nkicc/bir/bir.h"
#include "nkicc/driver/driver.h"
#include "nkicc/sim/simulator.h"
#include "nkicc/support/file_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <functional>
#include <system_error>

namespace nkicc {
namespace {

std::string shape_text(const std::vector<std::int64_t> &shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

/// The C library's reason, in nkicc's form: lowercase start ("Not a directory" -> "not a directory").
std::string reason(const std::error_code &ec) {
  std::string text = ec.message();
  if (text.size() > 1 && std::isupper(static_cast<unsigned char>(text[0])) &&
      !std::isupper(static_cast<unsigned char>(text[1])))
    text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

/// A problem with one of the run's files: the file is the diagnostic's location.
void file_error(DiagnosticEngine &diags, const std::string &path, std::string message, std::string id) {
  Diagnostic d;
  d.path = path;
  d.message = std::move(message);
  d.id = std::move(id);
  diags.report(std::move(d));
}

/// Makes OUTDIR (and its parents) unless it exists; false, reported, when it cannot be a folder
/// nkicc writes into.
bool prepare_output_dir(const std::string &dir, DiagnosticEngine &diags) {
  std::error_code ec;
  std::filesystem::path path(dir);
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_directory(path, ec)) {
    diags.io_error(dir, "cannot write simulation outputs: it is not a folder");
    return false;
  }
  std::filesystem::create_directories(path, ec);
  if (ec) {
    diags.io_error(dir, "cannot create the output folder: " + reason(ec));
    return false;
  }
  return true;
}

class Simulation {
public:
  Simulation(const SimulateRequest &request, const std::string &description, DiagnosticEngine &diags,
             std::vector<std::string> &deps, const std::function<void(const std::string &)> &log)
      : request_(request), description_(description), diags_(diags), deps_(deps), log_(log) {}

  void run_call(std::size_t index, const bir::ModuleCall &call, const bir::KernelData &kernel) {
    parameters_.emplace_back(index, kernel.input_names);
    std::vector<sim::HostArray> inputs;
    bool ok = true;
    for (std::size_t p = 0; p < kernel.input_names.size(); ++p) {
      const std::string &name = kernel.input_names[p];
      const bir::KernelTensor *t = input_tensor(kernel, name);
      if (!t) {
        diags_.internal_error(
            fmt::format("call {}: BIR kernel '{}' names input '{}' but has no such tensor", index, kernel.name, name));
        return;
      }
      auto array = input(index, p, name, *t);
      ok = ok && array.has_value();
      if (array)
        inputs.push_back(std::move(*array));
    }
    if (!ok)
      return;
    sim::SimulateOptions options;
    options.check_nan = request_.check_nan;
    sim::KernelRun run = sim::run_kernel(kernel, inputs, options);
    for (const sim::SimMessage &m : run.messages) {
      Diagnostic d;
      d.severity = m.severity;
      d.path = description_;
      d.message = fmt::format("call {} ('{}'): {}", index, call.func_name, m.message);
      d.id = m.id;
      diags_.report(std::move(d));
    }
    if (!run.ok)
      return;
    for (std::size_t o = 0; o < run.outputs.size(); ++o)
      write(array_path(request_.output_dir, index, kernel.output_names[o]), sim::npy_from_array(run.outputs[o]));
    if (log_) {
      std::int64_t instances = 1;
      for (std::int64_t g : kernel.grid)
        instances *= g;
      std::vector<std::string> named;
      for (std::size_t o = 0; o < run.outputs.size(); ++o)
        named.push_back(fmt::format("{} {}{}", kernel.output_names[o], dtype_name(run.outputs[o].dtype),
                                    shape_text(run.outputs[o].shape)));
      log_(fmt::format("simulate: call {} ('{}'): {} instruction{} x {} instance{}, matmul_mac_count {}; inputs: {}; "
                       "outputs: {}",
                       index, call.func_name, kernel.instructions.size(), kernel.instructions.size() == 1 ? "" : "s",
                       instances, instances == 1 ? "" : "s", kernel.matmul_mac_count,
                       kernel.input_names.empty() ? "none" : fmt::format("{}", fmt::join(kernel.input_names, ", ")),
                       named.empty() ? "none" : fmt::format("{}", fmt::join(named, ", "))));
    }
  }

private:
  static const bir::KernelTensor *input_tensor(const bir::KernelData &kernel, const std::string &name) {
    for (const bir::KernelTensor &t : kernel.tensors)
      if (t.role == ir::TensorRole::Input && t.name == name)
        return &t;
    return nullptr;
  }

  static std::string array_path(const std::string &dir, std::size_t call, const std::string &name) {
    return join_path(dir, fmt::format("call{}.{}.npy", call, name));
  }

  void write(const std::string &path, const std::string &bytes) {
    std::string why;
    if (!write_file_atomically(path, bytes, why))
      diags_.io_error(path, "cannot write simulation output: " + why);
  }

  std::optional<sim::HostArray> input(std::size_t call, std::size_t param, const std::string &name,
                                      const bir::KernelTensor &t) {
    std::string expected = fmt::format("{}{}", dtype_name(t.dtype), shape_text(t.shape));
    if (request_.seed) {
      const sim::RandomRange *range = range_for(call, name);
      if (range) {
        if (auto why = sim::random_range_mismatch(*range, t.dtype)) {
          file_error(diags_, description_,
                     fmt::format("--random-range '{}' does not fit call {} parameter '{}' ({}): {}", range->text, call,
                                 name, expected, *why),
                     "simulate-input");
          return std::nullopt;
        }
      }
      sim::HostArray array = sim::random_array(t.shape, t.dtype, *request_.seed, call, param, range);
      // Written beside the outputs, so that a reference computation can read the same data.
      write(array_path(request_.output_dir, call, name), sim::npy_from_array(array));
      return array;
    }
    std::string path = array_path(request_.inputs_dir, call, name);
    std::string why;
    auto bytes = read_file(path, why);
    if (!bytes) {
      diags_.io_error(
          path, fmt::format("cannot read the input of call {} parameter '{}' ({}): {}", call, name, expected, why));
      return std::nullopt;
    }
    deps_.push_back(path);
    auto npy = sim::parse_npy(*bytes, why);
    if (!npy) {
      file_error(diags_, path,
                 fmt::format("bad .npy input for call {} parameter '{}' ({}): {}", call, name, expected, why),
                 "simulate-input");
      return std::nullopt;
    }
    auto array = sim::array_from_npy(*npy, t.shape, t.dtype, why);
    if (!array) {
      file_error(diags_, path, fmt::format("wrong input for call {} parameter '{}': {}", call, name, why),
                 "simulate-input");
      return std::nullopt;
    }
    return array;
  }

  /// The range for call `call`'s parameter `name`: the one naming the call, else one for every call.
  const sim::RandomRange *range_for(std::size_t call, const std::string &name) {
    const sim::RandomRange *found = nullptr;
    for (std::size_t r = 0; r < request_.random_ranges.size(); ++r) {
      const sim::RandomRange &range = request_.random_ranges[r];
      if (range.param != name || (range.call && *range.call != call))
        continue;
      used_ranges_[r] = true;
      if (!found || (range.call && !found->call))
        found = &range;
    }
    return found;
  }

public:
  /// Reports each --random-range that named no tensor parameter of the simulated calls (a typo).
  void check_ranges_used() {
    for (std::size_t r = 0; r < request_.random_ranges.size(); ++r) {
      if (used_ranges_[r])
        continue;
      const sim::RandomRange &range = request_.random_ranges[r];
      std::vector<std::string> parameters;
      for (const auto &[call, names] : parameters_)
        if (!range.call || *range.call == call)
          for (const std::string &name : names)
            if (std::find(parameters.begin(), parameters.end(), name) == parameters.end())
              parameters.push_back(name);
      std::string which = range.call ? fmt::format("call {}", *range.call) : std::string("the simulated calls");
      if (range.call && std::none_of(parameters_.begin(), parameters_.end(),
                                     [&](const auto &entry) { return entry.first == *range.call; })) {
        file_error(diags_, description_,
                   fmt::format("--random-range '{}' names call {}, which is not simulated", range.text, *range.call),
                   "simulate-input");
        continue;
      }
      file_error(diags_, description_,
                 fmt::format("--random-range '{}' names no tensor parameter of {} (they are: {})", range.text, which,
                             parameters.empty() ? std::string("none") : fmt::format("{}", fmt::join(parameters, ", "))),
                 "simulate-input");
    }
  }

private:
  const SimulateRequest &request_;
  std::vector<bool> used_ranges_ = std::vector<bool>(request_.random_ranges.size());
  /// Each simulated call's tensor parameters, for check_ranges_used().
  std::vector<std::pair<std::size_t, std::vector<std::string>>> parameters_;
  const std::string &description_;
  DiagnosticEngine &diags_;
  std::vector<std::string> &deps_;
  const std::function<void(const std::string &)> &log_;
};

} // namespace

std::optional<DriverOutput> run_simulate(const DriverOptions &options, const SimulateRequest &request,
                                         SourceManager &sources, DiagnosticEngine &diags) {
  DriverOptions trace = options;
  trace.emit = EmitKind::Bir;
  trace.text_output = nullptr;
  // No graph node is inserted, as with nki.simulate_kernel: a kernel may return nl.hbm tensors.
  trace.shared_hbm_guard = false;
  auto traced = run_trace(trace, sources, diags);
  if (!traced)
    return std::nullopt;
  // The executor sees only what the BIR module carries: the blob is read back, not the trace.
  std::string error;
  std::string blob = traced->blob.joined();
  auto module = bir::read_module(blob, error);
  if (!module) {
    diags.internal_error("the BIR module nkicc wrote does not read back: " + error);
    return std::nullopt;
  }
  std::string description = options.input == "-" ? "<stdin>" : options.input;
  if (request.call && *request.call >= module->calls.size()) {
    file_error(diags, description,
               fmt::format("--call {} names no call: the description has {} call{}", *request.call,
                           module->calls.size(), module->calls.size() == 1 ? "" : "s"),
               "simulate");
    return std::nullopt;
  }
  if (!prepare_output_dir(request.output_dir, diags))
    return std::nullopt;
  DriverOutput out;
  out.dependencies = std::move(traced->dependencies);
  Simulation simulation(request, description, diags, out.dependencies, options.info_log);
  auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < module->calls.size(); ++i) {
    if (request.call && *request.call != i)
      continue;
    const bir::ModuleCall &call = module->calls[i];
    auto kernel = bir::read_kernel(module->kernels[call.kernel_index].second, error);
    if (!kernel) {
      diags.internal_error(fmt::format("call {}: the BIR kernel nkicc wrote does not read back: {}", i, error));
      return std::nullopt;
    }
    simulation.run_call(i, call, *kernel);
  }
  simulation.check_ranges_used();
  if (options.stage_timer)
    options.stage_timer("simulate",
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  if (diags.has_errors())
    return std::nullopt;
  return out;
}

} // namespace nkicc
