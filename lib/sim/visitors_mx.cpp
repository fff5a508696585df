// The microscaling instructions (lib/nki/isa_mx.cpp emits them): quantize_mx and matmul_mx.
// An x4 element is held as its bits (numeric.h); mx_lane() reads its four values. Data
// partition p of a [P, F] x4 tile takes its scale from partition (p / 32) * 32 + (p % 32) / 8
// of the scale view, free index as the data's (NKI's layout, isa_mx.cpp). A uint8 scale is
// the biased exponent e of 2^(e - 127); a float8_e8m0fnu scale holds that power itself.
#include "visitors_mx.h"

#include "nkicc/sim/numeric.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace nkicc::sim {
namespace {

/// The scale partition of data partition p (relative to the scale view).
std::int64_t scale_partition(std::int64_t p) { return p / 32 * 32 + p % 32 / 8; }

/// The value of a scale element as the dequantization multiplies by it.
double scale_value(DType dtype, double stored) {
  if (dtype == DType::Float8E8M0FNU)
    return stored;
  return stored >= 255 ? std::nan("") : std::ldexp(1.0, static_cast<int>(stored) - 127);
}

bool two_d(Executor &ex, const ir::AccessPattern &ap, std::string_view role) {
  if (ap.pattern.size() != 2)
    return ex.fail(fmt::format("its {} is not a 2-D view", role));
  return true;
}

/// The element offsets of a [P, F] view, checked for unwritten elements when it is read.
bool view_offsets(Executor &ex, const ir::AccessPattern &ap, Offsets &out, std::string_view role, bool read) {
  if (!two_d(ex, ap, role) || !ex.offsets(ap, out, nullptr, role))
    return false;
  if (read)
    ex.check_written(ap.tensor, out, nullptr, role);
  return true;
}

/// A scale view covering `partitions` data partitions and `free` elements per partition.
bool scale_offsets(Executor &ex, const ir::AccessPattern &ap, std::int64_t partitions, std::int64_t free, Offsets &out,
                   std::string_view role, bool read) {
  if (!view_offsets(ex, ap, out, role, false))
    return false;
  if (ap.pattern[0].second < scale_partition(partitions - 1) + 1 || ap.pattern[1].second != free)
    return ex.fail(fmt::format("its {} [{}, {}] does not cover {} data partitions of {} elements", role,
                               ap.pattern[0].second, ap.pattern[1].second, partitions, free));
  if (read) {
    // Only the partitions that hold scales are read.
    Offsets used;
    for (std::int64_t p = 0; p < partitions; p += 8)
      for (std::int64_t j = 0; j < free; ++j)
        used.push_back(out[static_cast<std::size_t>(scale_partition(p) * free + j)]);
    ex.check_written(ap.tensor, used, nullptr, role);
  }
  return true;
}

/// The four lanes of the x4 data element at `off`, dequantized by `scale`.
void lanes(Executor &ex, const ir::AccessPattern &ap, std::int64_t off, double scale, float out[4]) {
  DType dtype = ex.tensor(ap.tensor).dtype;
  auto bits = static_cast<std::uint32_t>(ex.read(ap.tensor, off));
  for (int l = 0; l < 4; ++l)
    out[l] = static_cast<float>(mx_lane(dtype, bits, l) * scale);
}

} // namespace

/// matmul_mx: dst[m, n] = sum over k < K and lane < 4 of
/// st[k, m][lane] * st_scale(k, m) * mv[k, n][lane] * mv_scale(k, n), each product and the sum
/// in float32 (the Tensor engine accumulates in float32), rounded once to dst's dtype.
bool visit_matmul_mx(Executor &ex, const bir::KernelInstruction &inst) {
  if (inst.dst.size() != 1 || inst.src.size() != 4)
    return ex.fail(fmt::format("it has {} destination and {} source operands", inst.dst.size(), inst.src.size()));
  const ir::AccessPattern &dst = inst.dst[0], &st = inst.src[0], &mv = inst.src[1], &ss = inst.src[2],
                          &ms = inst.src[3];
  Offsets so, mo, sso, mso, d_o;
  if (!view_offsets(ex, st, so, "stationary", true) || !view_offsets(ex, mv, mo, "moving", true) ||
      !view_offsets(ex, dst, d_o, "destination", false))
    return false;
  std::int64_t K = st.pattern[0].second, M = st.pattern[1].second, N = mv.pattern[1].second;
  if (mv.pattern[0].second != K || dst.pattern[0].second != M || dst.pattern[1].second != N)
    return ex.fail(fmt::format("its shapes do not chain: stationary [{}, {}], moving [{}, {}], result [{}, {}]", K, M,
                               mv.pattern[0].second, N, dst.pattern[0].second, dst.pattern[1].second));
  if (!scale_offsets(ex, ss, K, M, sso, "stationary scale", true) ||
      !scale_offsets(ex, ms, K, N, mso, "moving scale", true))
    return false;
  const PyConstant *acc = ex.attr("accumulate");
  bool accumulate = acc && acc->kind == PyConstant::Kind::Bool && acc->b;
  if (accumulate)
    ex.check_written(dst.tensor, d_o, nullptr, "accumulated");
  DType ssd = ex.tensor(ss.tensor).dtype, msd = ex.tensor(ms.tensor).dtype;
  // Dequantized operands, [K * 4, M] and [K * 4, N] in row-major order.
  std::vector<float> S(static_cast<std::size_t>(K * 4 * M)), V(static_cast<std::size_t>(K * 4 * N));
  bool finite_in = true;
  auto unpack = [&](const ir::AccessPattern &ap, const Offsets &data, const ir::AccessPattern &scale_ap,
                    const Offsets &scales, DType scale_dtype, std::int64_t F, std::vector<float> &out) {
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t f = 0; f < F; ++f) {
        auto sk = static_cast<std::size_t>(scale_partition(k) * F + f);
        double scale = scale_value(scale_dtype, ex.read(scale_ap.tensor, scales[sk]));
        float v[4];
        lanes(ex, ap, data[static_cast<std::size_t>(k * F + f)], scale, v);
        for (int l = 0; l < 4; ++l) {
          finite_in = finite_in && std::isfinite(v[l]);
          out[static_cast<std::size_t>((k * 4 + l) * F + f)] = v[l];
        }
      }
  };
  unpack(st, so, ss, sso, ssd, M, S);
  unpack(mv, mo, ms, mso, msd, N, V);
  bool nan_out = false;
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      float sum = 0;
      for (std::int64_t k = 0; k < K * 4; ++k)
        sum += S[static_cast<std::size_t>(k * M + m)] * V[static_cast<std::size_t>(k * N + n)];
      auto off = d_o[static_cast<std::size_t>(m * N + n)];
      if (accumulate)
        sum = static_cast<float>(ex.read(dst.tensor, off)) + sum;
      nan_out = nan_out || std::isnan(sum);
      ex.write(dst.tensor, off, sum);
    }
  ex.note_nan(finite_in, nan_out);
  return true;
}

/// quantize_mx: for each group of 8 partitions x 4 elements of src (x4 element j of partitions
/// 8g..8g+7), amax = the largest magnitude; the scale is X = 2^(floor(log2 amax) - (Emax - 1))
/// with Emax 8 for float8_e4m3fn and 15 for float8_e5m2 (twice the OCP sample conversion's, as
/// NKI documents), 2^-127 for an all-zero group; each value is v / X rounded (to nearest even,
/// saturating) to the float8 lane.
bool visit_quantize_mx(Executor &ex, const bir::KernelInstruction &inst) {
  if (inst.dst.size() != 2 || inst.src.size() != 1)
    return ex.fail(fmt::format("it has {} destination and {} source operands", inst.dst.size(), inst.src.size()));
  const ir::AccessPattern &dst = inst.dst[0], &scale = inst.dst[1], &src = inst.src[0];
  Offsets so, d_o, sco;
  if (!view_offsets(ex, src, so, "source", true) || !view_offsets(ex, dst, d_o, "destination", false))
    return false;
  std::int64_t P = src.pattern[0].second, F = dst.pattern[1].second;
  if (P % 8 != 0 || dst.pattern[0].second != P || src.pattern[1].second != 4 * F)
    return ex.fail(fmt::format("its shapes do not match: source [{}, {}], destination [{}, {}]", P,
                               src.pattern[1].second, dst.pattern[0].second, F));
  if (!scale_offsets(ex, scale, P, F, sco, "scale", false))
    return false;
  DType x4 = ex.tensor(dst.tensor).dtype;
  if (x4 != DType::Float8E5M2X4 && x4 != DType::Float8E4M3FNX4)
    return ex.fail(fmt::format("its destination is {}, not a float8 x4 dtype", dtype_name(x4)));
  int emax = x4 == DType::Float8E4M3FNX4 ? 8 : 15;
  DType scale_dtype = ex.tensor(scale.tensor).dtype;
  bool finite_in = true, nan_out = false;
  for (std::int64_t g = 0; g < P; g += 8)
    for (std::int64_t j = 0; j < F; ++j) {
      double amax = 0;
      for (std::int64_t p = g; p < g + 8; ++p)
        for (int l = 0; l < 4; ++l) {
          double v = ex.read(src.tensor, so[static_cast<std::size_t>(p * 4 * F + 4 * j + l)]);
          finite_in = finite_in && std::isfinite(v);
          amax = std::isnan(v) || std::isnan(amax) ? std::nan("") : std::max(amax, std::fabs(v));
        }
      int e = -127;
      if (std::isnan(amax) || std::isinf(amax))
        e = 128; // no power of two scales it: the scale is NaN (0xff)
      else if (amax > 0)
        e = std::clamp(std::ilogb(amax) - (emax - 1), -127, 127);
      double x = e > 127 ? std::nan("") : std::ldexp(1.0, e);
      nan_out = nan_out || std::isnan(x);
      auto soff = sco[static_cast<std::size_t>(scale_partition(g) * F + j)];
      ex.write(scale.tensor, soff, scale_dtype == DType::Float8E8M0FNU ? x : static_cast<double>(e + 127));
      for (std::int64_t p = g; p < g + 8; ++p) {
        std::uint32_t packed = 0;
        for (int l = 0; l < 4; ++l) {
          double v = ex.read(src.tensor, so[static_cast<std::size_t>(p * 4 * F + 4 * j + l)]);
          packed |= mx_lane_bits(x4, v / x) << (8 * l);
        }
        ex.write_exact(dst.tensor, d_o[static_cast<std::size_t>(p * F + j)], static_cast<double>(packed));
      }
    }
  ex.note_nan(finite_in, nan_out);
  return true;
}

} // namespace nkicc::sim
