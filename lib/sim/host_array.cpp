// Host arrays: kernel inputs read from .npy files or made up deterministically, outputs written
// back as .npy.
#include "nkicc/sim/numeric.h"
#include "nkicc/sim/simulator.h"

#include <fmt/format.h>

#include <cmath>

namespace nkicc::sim {
namespace {

std::string shape_text(std::span<const std::int64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

/// The dtype whose encoding a descr names for a parameter of type `want`, or nullopt.
std::optional<DType> descr_dtype(std::string_view descr, DType want) {
  // '=' is native order, little-endian on every machine nkicc runs on.
  std::string d(descr);
  if (d.size() == 3 && d[0] == '=')
    d[0] = '<';
  auto narrower_float = [&] {
    switch (want) {
    case DType::BFloat16:
    case DType::Float16:
    case DType::TFloat32:
    case DType::Float8E4M3:
    case DType::Float8E4M3FN:
    case DType::Float8E5M2:
      return true;
    default:
      return false;
    }
  };
  if (d == "<f4")
    return want == DType::Float32 || want == DType::TFloat32 ? want : narrower_float() ? std::optional(DType::Float32)
                                                                                         : std::nullopt;
  // ml_dtypes' dtypes save as '<V2' / '|V1'; raw bits viewed as NumPy's own void type as '|V2'.
  if (d == "<V2" || d == "|V2" || d == "bfloat16")
    return want == DType::BFloat16 ? std::optional(want) : std::nullopt;
  if (d == "|V1" || d == "<V1")
    return want == DType::Float8E4M3 || want == DType::Float8E4M3FN || want == DType::Float8E5M2 ||
                   want == DType::Float8E8M0FNU
               ? std::optional(want)
               : std::nullopt;
  // MX data as the frameworks hold it: an x4 element's bits as uint32 (float8) or uint16
  // (float4), a scale's biased exponent as uint8.
  if ((d == "<u4" && (want == DType::Float8E5M2X4 || want == DType::Float8E4M3FNX4)) ||
      (d == "<u2" && want == DType::Float4E2M1FNX4) || (d == "|u1" && want == DType::Float8E8M0FNU))
    return want;
  static const std::pair<const char *, DType> exact[] = {
      {"<f2", DType::Float16}, {"|i1", DType::Int8},   {"<i2", DType::Int16},  {"<i4", DType::Int32},
      {"|u1", DType::UInt8},   {"<u2", DType::UInt16}, {"<u4", DType::UInt32}, {"|b1", DType::Bool}};
  for (auto [name, dtype] : exact)
    if (d == name && dtype == want)
      return dtype;
  return std::nullopt;
}

std::string accepted_descrs(DType want) {
  switch (want) {
  case DType::Float32:
    return "'<f4'";
  case DType::TFloat32:
    return "'<f4'";
  case DType::BFloat16:
    return "'<V2' or 'bfloat16' (ml_dtypes), or '<f4' rounded on load";
  case DType::Float16:
    return "'<f2', or '<f4' rounded on load";
  case DType::Float8E4M3:
  case DType::Float8E4M3FN:
  case DType::Float8E5M2:
    return "'|V1' (ml_dtypes), or '<f4' rounded on load";
  case DType::Float8E8M0FNU:
    return "'|V1' (ml_dtypes) or '|u1' (the biased exponents)";
  case DType::Float8E5M2X4:
  case DType::Float8E4M3FNX4:
    return "'<u4' (four packed float8 values per element)";
  case DType::Float4E2M1FNX4:
    return "'<u2' (four packed float4 values per element)";
  default:
    return "'" + std::string(npy_descr(want)) + "'";
  }
}

/// splitmix64 (Steele, Lea, Flood 2014): tiny, well mixed, the same on every platform.
class SplitMix64 {
public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

private:
  std::uint64_t state_;
};

} // namespace

std::optional<HostArray> array_from_npy(const NpyArray &npy, std::span<const std::int64_t> shape, DType dtype,
                                        std::string &error) {
  std::vector<std::int64_t> want(shape.begin(), shape.end());
  if (npy.shape != want) {
    error = fmt::format("it has shape {}, but the parameter is {}{}", shape_text(npy.shape), dtype_name(dtype),
                        shape_text(want));
    return std::nullopt;
  }
  auto stored = descr_dtype(npy.descr, dtype);
  if (!stored) {
    error = fmt::format("it holds '{}' elements, but the parameter is {}{}: expected {}", npy.descr,
                        dtype_name(dtype), shape_text(want), accepted_descrs(dtype));
    return std::nullopt;
  }
  std::size_t count = 1;
  for (std::int64_t d : want)
    count *= static_cast<std::size_t>(d);
  if (npy.fortran_order && want.size() > 1 && count > 1) {
    error = "it is in Fortran order; nkicc reads C-order arrays (save np.ascontiguousarray(x))";
    return std::nullopt;
  }
  HostArray out;
  out.shape = want;
  out.dtype = dtype;
  out.values.resize(count);
  std::size_t size = dtype_size(*stored);
  const auto *bytes = reinterpret_cast<const unsigned char *>(npy.data.data());
  for (std::size_t i = 0; i < count; ++i)
    out.values[i] = round_to(dtype, decode(*stored, bytes + i * size));
  return out;
}

std::string npy_from_array(const HostArray &array) {
  std::size_t size = dtype_size(array.dtype);
  std::string data(array.values.size() * size, '\0');
  auto *bytes = reinterpret_cast<unsigned char *>(data.data());
  for (std::size_t i = 0; i < array.values.size(); ++i)
    encode(array.dtype, array.values[i], bytes + i * size);
  return write_npy(npy_descr(array.dtype), array.shape, data);
}

HostArray random_array(std::span<const std::int64_t> shape, DType dtype, std::uint64_t seed, std::size_t call,
                       std::size_t param, const RandomRange *range) {
  HostArray out;
  out.shape.assign(shape.begin(), shape.end());
  out.dtype = dtype;
  std::size_t count = 1;
  for (std::int64_t d : shape)
    count *= static_cast<std::size_t>(d);
  out.values.resize(count);
  // One stream per (seed, call, parameter): adding a call or a parameter changes no other input.
  SplitMix64 keyed(seed);
  std::uint64_t key = keyed.next() ^ (0x632be59bd9b4e019ull * (call + 1)) ^ (0x85ebca77c2b2ae63ull * (param + 1));
  SplitMix64 rng(key);
  for (double &v : out.values) {
    std::uint64_t bits = rng.next();
    double u = static_cast<double>(bits >> 11) * 0x1.0p-53; // [0, 1)
    if (range) {
      // The span of an integer range is at most 2^33, well within u's 53 bits: floor(u * span) < span.
      double x = range->low + u * (range->high - range->low);
      v = dtype_is_integer(dtype, false) ? range->low + std::floor(u * (range->high - range->low)) : round_to(dtype, x);
      continue;
    }
    switch (dtype) {
    case DType::Bool:
      v = static_cast<double>(bits >> 63);
      break;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
      v = static_cast<double>(static_cast<std::int64_t>(bits >> 60) - 8);
      break;
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
      v = static_cast<double>(bits >> 60);
      break;
    case DType::Float8E5M2X4:
    case DType::Float8E4M3FNX4:
    case DType::Float4E2M1FNX4: {
      // Four values in [-1, 1), each from 16 bits of the draw.
      std::uint32_t packed = 0;
      int width = dtype == DType::Float4E2M1FNX4 ? 4 : 8;
      for (int lane = 0; lane < 4; ++lane) {
        double x = static_cast<double>((bits >> (16 * lane)) & 0xffffu) * 0x1.0p-15 - 1.0;
        packed |= mx_lane_bits(dtype, x) << (width * lane);
      }
      v = static_cast<double>(packed);
      break;
    }
    case DType::Float8E8M0FNU:
      v = std::ldexp(1.0, static_cast<int>(bits >> 61) - 4); // 2^-4 .. 2^3
      break;
    default:
      v = round_to(dtype, 2.0 * u - 1.0);
      break;
    }
  }
  return out;
}

} // namespace nkicc::sim
