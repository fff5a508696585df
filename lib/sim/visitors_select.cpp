// Selection, shuffle and random-number instructions (lib/nki/isa_select.cpp says what
// each emits). Each works partition by partition on [P, F] rows: a view's partition dimension
// first, its free dimensions flattened in row-major order, as NKI's documentation describes
// these instructions. Values are compared in float32, as the Vector engine does. Where the
// documentation leaves a behaviour undefined, the visitor reports an error instead of guessing.
#include "visitors_select.h"

#include <fmt/format.h>

#include "nkicc/sim/numeric.h"

#include <algorithm>
#include <cmath>

namespace nkicc::sim {
namespace {

std::string shape_text(const std::vector<std::int64_t> &shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

bool counts(Executor &ex, const bir::KernelInstruction &inst, std::size_t dst_min, std::size_t dst_max,
            std::size_t src_min, std::size_t src_max) {
  if (inst.dst.size() < dst_min || inst.dst.size() > dst_max || inst.src.size() < src_min || inst.src.size() > src_max)
    return ex.fail(fmt::format("it has {} destination and {} source operands", inst.dst.size(), inst.src.size()));
  return true;
}

bool number(Executor &ex, std::string_view name, double &out) {
  const PyConstant *v = ex.attr(name);
  if (v && v->kind == PyConstant::Kind::Int)
    out = static_cast<double>(v->i);
  else if (v && v->kind == PyConstant::Kind::Float)
    out = v->f;
  else
    return ex.fail(fmt::format("it has no numeric '{}' attribute", name));
  return true;
}

/// A view as [P, F] rows: its element offsets (row-major), P and F. `active` (a mask over the
/// view's shape, or null) turns elements off; their offsets are -1.
struct Rows {
  Offsets offs;
  std::int64_t p = 0, f = 0;
  std::size_t at(std::int64_t row, std::int64_t col) const { return static_cast<std::size_t>(row * f + col); }
};

bool rows(Executor &ex, const ir::AccessPattern &ap, std::string_view role, Rows &out,
          const std::vector<std::uint8_t> *active = nullptr) {
  if (ap.pattern.empty())
    return ex.fail(fmt::format("its {} view has no partition dimension", role));
  if (!ex.offsets(ap, out.offs, active, role))
    return false;
  out.p = ap.pattern[0].second;
  out.f = out.p ? static_cast<std::int64_t>(out.offs.size()) / out.p : 0;
  return true;
}

/// The instruction's mask over `ap`'s shape, or null when it has none.
bool mask_over(Executor &ex, const ir::AccessPattern &ap, std::vector<std::uint8_t> &active,
               const std::vector<std::uint8_t> *&act) {
  bool masked = false;
  if (!ex.mask(Executor::shape_of(ap), active, masked))
    return false;
  act = masked ? &active : nullptr;
  return true;
}

bool on(const std::vector<std::uint8_t> *act, std::size_t i) { return !act || (*act)[i]; }

/// Float32 order with NaN above everything (the largest values come first).
bool greater(float a, float b) { return a > b || (std::isnan(a) && !std::isnan(b)); }

/// The 8 values of each partition of a `vals` operand.
bool eight_values(Executor &ex, const ir::AccessPattern &ap, std::int64_t partitions, Rows &vals) {
  if (!rows(ex, ap, "vals", vals))
    return false;
  if (vals.p != partitions || vals.f != 8)
    return ex.fail(fmt::format("its vals view is {}, not {} partitions of 8 values", shape_text(Executor::shape_of(ap)),
                               partitions));
  ex.check_written(ap.tensor, vals.offs, nullptr, "vals");
  return true;
}

/// splitmix64: the generator behind nl.rand and dropout. A draw is a 24-bit fraction, a float32
/// in [0, 1) exactly.
float uniform(std::uint64_t &state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * 0x1p-24f;
}

} // namespace

/// Max8: per partition, the 8 largest (float32) values of the source, in descending order. The
/// mask (over the source's shape) leaves elements out; a partition it leaves entirely out keeps
/// its destination row, and one with fewer than 8 elements left is an error (max8 reads 8 to
/// 16384 elements per partition).
bool visit_max8(Executor &ex, const bir::KernelInstruction &inst) {
  if (!counts(ex, inst, 1, 1, 1, 1))
    return false;
  std::vector<std::uint8_t> active;
  const std::vector<std::uint8_t> *act = nullptr;
  Rows src, dst;
  if (!mask_over(ex, inst.src[0], active, act) || !rows(ex, inst.src[0], "source", src, act) ||
      !rows(ex, inst.dst[0], "destination", dst))
    return false;
  if (dst.p != src.p || dst.f != 8)
    return ex.fail(
        fmt::format("its destination is {}, not [{}, 8]", shape_text(Executor::shape_of(inst.dst[0])), src.p));
  ex.check_written(inst.src[0].tensor, src.offs, act, "source");
  std::vector<float> row;
  for (std::int64_t p = 0; p < src.p; ++p) {
    row.clear();
    for (std::int64_t f = 0; f < src.f; ++f)
      if (on(act, src.at(p, f)))
        row.push_back(static_cast<float>(ex.read(inst.src[0].tensor, src.offs[src.at(p, f)])));
    if (row.empty())
      continue;
    if (row.size() < 8)
      return ex.fail(fmt::format("its mask leaves {} elements of partition {}; max8 reads at least 8", row.size(), p));
    std::partial_sort(row.begin(), row.begin() + 8, row.end(), greater);
    for (std::int64_t k = 0; k < 8; ++k)
      ex.write(inst.dst[0].tensor, dst.offs[dst.at(p, k)], row[static_cast<std::size_t>(k)]);
  }
  return true;
}

/// FindIndex8: per partition, the index (in the flattened free dimensions) of the first element
/// of data equal (in float32) to each of the 8 vals; the mask (over data's shape) leaves elements
/// out. A value that is not in the data is undefined on the device: an error here.
bool visit_find_index8(Executor &ex, const bir::KernelInstruction &inst) {
  if (!counts(ex, inst, 1, 1, 2, 2))
    return false;
  std::vector<std::uint8_t> active;
  const std::vector<std::uint8_t> *act = nullptr;
  Rows data, vals, dst;
  if (!mask_over(ex, inst.src[0], active, act) || !rows(ex, inst.src[0], "data", data, act) ||
      !eight_values(ex, inst.src[1], data.p, vals) || !rows(ex, inst.dst[0], "destination", dst))
    return false;
  if (dst.p != data.p || dst.f != 8)
    return ex.fail(
        fmt::format("its destination is {}, not [{}, 8]", shape_text(Executor::shape_of(inst.dst[0])), data.p));
  ex.check_written(inst.src[0].tensor, data.offs, act, "data");
  for (std::int64_t p = 0; p < data.p; ++p) {
    for (std::int64_t k = 0; k < 8; ++k) {
      auto v = static_cast<float>(ex.read(inst.src[1].tensor, vals.offs[vals.at(p, k)]));
      std::int64_t found = -1;
      for (std::int64_t f = 0; f < data.f && found < 0; ++f)
        if (on(act, data.at(p, f)) && static_cast<float>(ex.read(inst.src[0].tensor, data.offs[data.at(p, f)])) == v)
          found = f;
      if (found < 0)
        return ex.fail(fmt::format("value {} (vals[{}, {}]) is not in partition {} of its data", v, p, k, p));
      ex.write(inst.dst[0].tensor, dst.offs[dst.at(p, k)], static_cast<double>(found));
    }
  }
  return true;
}

/// MatchReplace8: per partition, the 8 vals in order: the first element of data equal (in
/// float32) to the value, among those the mask (over data's shape) leaves in, becomes `imm`, and
/// its index goes to the second destination when there is one; a later equal value matches the
/// next such element. A value with no match replaces nothing and gives index 0 (NKI's NumPy
/// equivalent). The first destination is data with the replacements, where the mask allows.
bool visit_match_replace8(Executor &ex, const bir::KernelInstruction &inst) {
  double imm = 0;
  if (!counts(ex, inst, 1, 2, 2, 2) || !number(ex, "imm", imm))
    return false;
  std::vector<std::uint8_t> active;
  const std::vector<std::uint8_t> *act = nullptr;
  Rows data, vals, out, idx;
  if (!mask_over(ex, inst.src[0], active, act) || !rows(ex, inst.src[0], "data", data, act) ||
      !eight_values(ex, inst.src[1], data.p, vals) || !rows(ex, inst.dst[0], "destination", out, act))
    return false;
  if (out.p != data.p || out.f != data.f)
    return ex.fail(fmt::format("its destination {} and its data {} differ in size",
                               shape_text(Executor::shape_of(inst.dst[0])),
                               shape_text(Executor::shape_of(inst.src[0]))));
  bool with_idx = inst.dst.size() == 2;
  if (with_idx) {
    if (!rows(ex, inst.dst[1], "index destination", idx))
      return false;
    if (idx.p != data.p || idx.f != 8)
      return ex.fail(
          fmt::format("its index destination is {}, not [{}, 8]", shape_text(Executor::shape_of(inst.dst[1])), data.p));
  }
  ex.check_written(inst.src[0].tensor, data.offs, act, "data");
  // Everything is read before anything is written: the result may be the data itself.
  std::vector<double> values(data.offs.size());
  std::vector<double> indices(static_cast<std::size_t>(data.p * 8), 0.0);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = on(act, i) ? ex.read(inst.src[0].tensor, data.offs[i]) : 0.0;
  auto replacement = static_cast<float>(imm);
  for (std::int64_t p = 0; p < data.p; ++p) {
    for (std::int64_t k = 0; k < 8; ++k) {
      auto v = static_cast<float>(ex.read(inst.src[1].tensor, vals.offs[vals.at(p, k)]));
      for (std::int64_t f = 0; f < data.f; ++f) {
        std::size_t i = data.at(p, f);
        if (on(act, i) && static_cast<float>(values[i]) == v) {
          values[i] = replacement;
          indices[static_cast<std::size_t>(p * 8 + k)] = static_cast<double>(f);
          break;
        }
      }
    }
  }
  for (std::size_t i = 0; i < values.size(); ++i)
    if (on(act, i))
      ex.write(inst.dst[0].tensor, out.offs[i], values[i]);
  if (with_idx)
    for (std::int64_t p = 0; p < data.p; ++p)
      for (std::int64_t k = 0; k < 8; ++k)
        ex.write(inst.dst[1].tensor, idx.offs[idx.at(p, k)], indices[static_cast<std::size_t>(p * 8 + k)]);
  return true;
}

/// StreamShuffle: destination partition p (in quadrant q = p / 32) copies source partition
/// 32 * q + shuffle_mask[p % 32]; the value 255 leaves the partition unmodified. A source
/// partition past the source's is an error; the mask (over the destination's shape) leaves
/// elements unmodified.
bool visit_stream_shuffle(Executor &ex, const bir::KernelInstruction &inst) {
  if (!counts(ex, inst, 1, 1, 1, 1))
    return false;
  const PyConstant *m = ex.attr("shuffle_mask");
  if (!m || m->kind != PyConstant::Kind::Tuple || m->items.size() != 32)
    return ex.fail("it has no 'shuffle_mask' attribute of 32 partitions");
  std::vector<std::uint8_t> active;
  const std::vector<std::uint8_t> *act = nullptr;
  Rows src, dst;
  if (!mask_over(ex, inst.dst[0], active, act) || !rows(ex, inst.src[0], "source", src) ||
      !rows(ex, inst.dst[0], "destination", dst, act))
    return false;
  if (src.f != dst.f)
    return ex.fail(fmt::format("its source {} and destination {} differ in elements per partition",
                               shape_text(Executor::shape_of(inst.src[0])),
                               shape_text(Executor::shape_of(inst.dst[0]))));
  std::vector<double> values(dst.offs.size());
  std::vector<std::uint8_t> moved(static_cast<std::size_t>(dst.p), 0);
  for (std::int64_t p = 0; p < dst.p; ++p) {
    const PyConstant &k = m->items[static_cast<std::size_t>(p % 32)];
    if (k.kind != PyConstant::Kind::Int)
      return ex.fail("its 'shuffle_mask' holds a value that is not an integer");
    if (k.i == 255)
      continue;
    std::int64_t s = p / 32 * 32 + k.i;
    if (k.i < 0 || k.i >= 32 || s >= src.p)
      return ex.fail(
          fmt::format("destination partition {} reads source partition {}, but the source has {}", p, s, src.p));
    moved[static_cast<std::size_t>(p)] = 1;
    Offsets one(static_cast<std::size_t>(src.f));
    for (std::int64_t f = 0; f < src.f; ++f)
      one[static_cast<std::size_t>(f)] = src.offs[src.at(s, f)];
    ex.check_written(inst.src[0].tensor, one, nullptr, "source");
    for (std::int64_t f = 0; f < src.f; ++f)
      values[dst.at(p, f)] = ex.read(inst.src[0].tensor, src.offs[src.at(s, f)]);
  }
  for (std::int64_t p = 0; p < dst.p; ++p)
    if (moved[static_cast<std::size_t>(p)])
      for (std::int64_t f = 0; f < dst.f; ++f)
        if (on(act, dst.at(p, f)))
          ex.write(inst.dst[0].tensor, dst.offs[dst.at(p, f)], values[dst.at(p, f)]);
  return true;
}

/// Rand: each element (row-major, where the mask allows) is the generator's next uniform value
/// in [0, 1), rounded to the destination's dtype.
bool visit_rand(Executor &ex, const bir::KernelInstruction &inst) {
  if (!counts(ex, inst, 1, 1, 0, 0))
    return false;
  std::vector<std::uint8_t> active;
  const std::vector<std::uint8_t> *act = nullptr;
  Offsets offs;
  if (!mask_over(ex, inst.dst[0], active, act) || !ex.offsets(inst.dst[0], offs, act, "destination"))
    return false;
  std::uint64_t &state = ex.rng_state();
  for (std::size_t i = 0; i < offs.size(); ++i)
    if (on(act, i))
      ex.write(inst.dst[0].tensor, offs[i], uniform(state));
  return true;
}

/// RandomSeed: the generator restarts from the 32-bit seed: the `seed` attribute, or the one
/// element of its source tile.
bool visit_random_seed(Executor &ex, const bir::KernelInstruction &inst) {
  if (!counts(ex, inst, 0, 0, 0, 1))
    return false;
  double seed = 0;
  if (inst.src.empty()) {
    if (!number(ex, "seed", seed))
      return false;
  } else {
    Offsets offs;
    if (!ex.offsets(inst.src[0], offs, nullptr, "seed"))
      return false;
    if (offs.size() != 1)
      return ex.fail(fmt::format("its seed view holds {} elements, not 1", offs.size()));
    ex.check_written(inst.src[0].tensor, offs, nullptr, "seed");
    seed = ex.read(inst.src[0].tensor, offs[0]);
  }
  ex.rng_state() = static_cast<std::uint32_t>(static_cast<std::int64_t>(seed));
  return true;
}

/// Dropout: each element (row-major, where the mask allows) draws the generator's next uniform
/// value u and is 0 when u < prob, else the data's value (no rescaling: NKI's dropout only
/// replaces). `prob` is the `prob` attribute or, per partition, the second source.
bool visit_dropout(Executor &ex, const bir::KernelInstruction &inst) {
  if (!counts(ex, inst, 1, 1, 1, 2))
    return false;
  double prob = 0;
  bool tile = inst.src.size() == 2;
  if (!tile && !number(ex, "prob", prob))
    return false;
  std::vector<std::uint8_t> active;
  const std::vector<std::uint8_t> *act = nullptr;
  Offsets d, s, pr;
  if (!mask_over(ex, inst.dst[0], active, act) || !ex.offsets(inst.dst[0], d, act, "destination") ||
      !ex.offsets(inst.src[0], s, act, "data") || (tile && !ex.offsets(inst.src[1], pr, act, "prob")))
    return false;
  if (s.size() != d.size() || (tile && pr.size() != d.size()))
    return ex.fail("its data, prob and destination views differ in size");
  ex.check_written(inst.src[0].tensor, s, act, "data");
  if (tile)
    ex.check_written(inst.src[1].tensor, pr, act, "prob");
  std::vector<double> values(d.size());
  std::uint64_t &state = ex.rng_state();
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (!on(act, i))
      continue;
    auto p = static_cast<float>(tile ? ex.read(inst.src[1].tensor, pr[i]) : prob);
    float u = uniform(state);
    values[i] = u < p ? 0.0 : ex.read(inst.src[0].tensor, s[i]);
  }
  for (std::size_t i = 0; i < d.size(); ++i)
    if (on(act, i))
      ex.write(inst.dst[0].tensor, d[i], values[i]);
  return true;
}

/// SequenceBounds: for segment ids [1, N], destination [1, 2, N]: element i's segment (the run of
/// equal ids around it) starts at start[i] and ends before end[i]; id 0 is padding, with start N
/// and end -1 (NKI's NumPy equivalent).
bool visit_sequence_bounds(Executor &ex, const bir::KernelInstruction &inst) {
  if (!counts(ex, inst, 1, 1, 1, 1))
    return false;
  Offsets s, d;
  if (!ex.offsets(inst.src[0], s, nullptr, "segment_ids") || !ex.offsets(inst.dst[0], d, nullptr, "destination"))
    return false;
  std::size_t n = s.size();
  if (d.size() != 2 * n)
    return ex.fail(
        fmt::format("its destination {} does not hold 2 x {} bounds", shape_text(Executor::shape_of(inst.dst[0])), n));
  ex.check_written(inst.src[0].tensor, s, nullptr, "segment_ids");
  std::vector<double> ids(n), lo(n), hi(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = ex.read(inst.src[0].tensor, s[i]);
  auto pad_lo = static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i)
    lo[i] = ids[i] == 0 ? pad_lo : i > 0 && ids[i] == ids[i - 1] ? lo[i - 1] : static_cast<double>(i);
  for (std::size_t i = n; i-- > 0;)
    hi[i] = ids[i] == 0 ? -1.0 : i + 1 < n && ids[i] == ids[i + 1] ? hi[i + 1] : static_cast<double>(i + 1);
  for (std::size_t i = 0; i < n; ++i) {
    ex.write(inst.dst[0].tensor, d[i], lo[i]);
    ex.write(inst.dst[0].tensor, d[n + i], hi[i]);
  }
  return true;
}

/// LocalGather: GpSimd core c serves partitions 16c to 16c + 15. It flattens its 16 partitions
/// of `index` partition first, in NumPy's order 'F' (of a [P, F] index, the j-th is
/// index[16c + j % 16, j / 16]) and, for each of
/// the first num_valid_indices indices k_j, copies num_elem_per_idx contiguous elements from
/// each of its partitions p: dst[p, j, e] = src[p, k_j + e], src's free dimensions flattened.
/// The hardware leaves an index past the partition's elements undefined: an error here. A mask
/// (over the destination) leaves elements unwritten.
bool visit_local_gather(Executor &ex, const bir::KernelInstruction &inst) {
  if (!counts(ex, inst, 1, 1, 2, 2))
    return false;
  double per_idx_d = 0, valid_d = 0;
  if (!number(ex, "num_elem_per_idx", per_idx_d) || !number(ex, "num_valid_indices", valid_d))
    return false;
  auto per_idx = static_cast<std::int64_t>(per_idx_d), valid = static_cast<std::int64_t>(valid_d);
  std::vector<std::uint8_t> active;
  const std::vector<std::uint8_t> *act = nullptr;
  Rows src, index, dst;
  if (!mask_over(ex, inst.dst[0], active, act) || !rows(ex, inst.src[0], "source", src) ||
      !rows(ex, inst.src[1], "index", index) || !rows(ex, inst.dst[0], "destination", dst, act))
    return false;
  if (src.p != index.p || src.p != dst.p || src.p % 16 != 0 || per_idx < 1 || valid < 1 || valid > 16 * index.f ||
      dst.f != valid * per_idx)
    return ex.fail(fmt::format("its source {}, index {} and destination {} do not fit {} indices of {} elements per "
                               "16-partition core",
                               shape_text(Executor::shape_of(inst.src[0])), shape_text(Executor::shape_of(inst.src[1])),
                               shape_text(Executor::shape_of(inst.dst[0])), valid, per_idx));
  ex.check_written(inst.src[1].tensor, index.offs, nullptr, "index");
  // The (j / 16)-th index of a partition in the order the core flattens them (NumPy's order
  // 'F': the first free dimension fastest), as a row-major position in the partition.
  std::vector<std::int64_t> free = Executor::shape_of(inst.src[1]);
  free.erase(free.begin());
  auto column = [&free](std::int64_t n) {
    std::int64_t col = 0, stride = 1;
    std::vector<std::int64_t> at(free.size());
    for (std::size_t a = 0; a < free.size(); ++a) {
      at[a] = n % free[a];
      n /= free[a];
    }
    for (std::size_t a = free.size(); a-- > 0;) {
      col += at[a] * stride;
      stride *= free[a];
    }
    return col;
  };
  std::vector<double> values(dst.offs.size());
  Offsets read;
  for (std::int64_t p = 0; p < dst.p; ++p) {
    std::int64_t core = p / 16;
    for (std::int64_t j = 0; j < valid; ++j) {
      double k = ex.read(inst.src[1].tensor, index.offs[index.at(16 * core + j % 16, column(j / 16))]);
      for (std::int64_t e = 0; e < per_idx; ++e) {
        std::size_t i = dst.at(p, j * per_idx + e);
        if (!on(act, i))
          continue;
        auto at = static_cast<std::int64_t>(k) + e;
        if (at < 0 || at >= src.f)
          return ex.fail(fmt::format("index {} (position {} of GpSimd core {}'s indices) reads element {} of "
                                     "partition {}, past its {} elements",
                                     k, j, core, at, p, src.f));
        read.push_back(src.offs[src.at(p, at)]);
        values[i] = ex.read(inst.src[0].tensor, src.offs[src.at(p, at)]);
      }
    }
  }
  ex.check_written(inst.src[0].tensor, read, nullptr, "source");
  for (std::size_t i = 0; i < values.size(); ++i)
    if (on(act, i))
      ex.write(inst.dst[0].tensor, dst.offs[i], values[i]);
  return true;
}

namespace {

/// NumPy's print of an array: nested brackets, and beyond 1000 elements only the first and last
/// 3 of each axis with `...` between.
void format_array(std::string &out, const std::vector<double> &values, const std::vector<std::int64_t> &shape,
                  std::size_t axis, std::int64_t base, bool integer, bool summarize) {
  if (axis == shape.size()) {
    double v = values[static_cast<std::size_t>(base)];
    out += integer ? fmt::format("{}", static_cast<std::int64_t>(v)) : fmt::format("{}", static_cast<float>(v));
    return;
  }
  std::int64_t stride = 1;
  for (std::size_t a = axis + 1; a < shape.size(); ++a)
    stride *= shape[a];
  std::int64_t n = shape[axis];
  out += '[';
  for (std::int64_t i = 0; i < n; ++i) {
    if (summarize && n > 6 && i == 3) {
      out += ", ...";
      i = n - 3;
    }
    if (i)
      out += ", ";
    format_array(out, values, shape, axis + 1, base + i * stride, integer, summarize);
  }
  out += ']';
}

} // namespace

/// DevicePrint: the source's elements, printed as a note ("prefix dtype[shape] [[...]]") in
/// program order; nothing is written.
bool visit_device_print(Executor &ex, const bir::KernelInstruction &inst) {
  if (!counts(ex, inst, 0, 0, 1, 1))
    return false;
  const PyConstant *prefix = ex.attr("prefix");
  if (!prefix || prefix->kind != PyConstant::Kind::Str)
    return ex.fail("it has no 'prefix' attribute");
  const ir::AccessPattern &ap = inst.src[0];
  Offsets offs;
  if (!ex.offsets(ap, offs, nullptr, "source"))
    return false;
  ex.check_written(ap.tensor, offs, nullptr, "source");
  std::vector<double> values(offs.size());
  for (std::size_t i = 0; i < offs.size(); ++i)
    values[i] = ex.read(ap.tensor, offs[i]);
  std::vector<std::int64_t> shape = Executor::shape_of(ap);
  DType dtype = ex.tensor(ap.tensor).dtype;
  std::string text = fmt::format("{} {}{} ", prefix->s, dtype_name(dtype), shape_text(shape));
  format_array(text, values, shape, 0, 0, is_integer(dtype), values.size() > 1000);
  ex.print(std::move(text));
  return true;
}

} // namespace nkicc::sim
