// `--random-range [callN.]NAME=LOW:HIGH`: the option's value, and which parameters it can apply to.
#include "nkicc/sim/random_range.h"
#include "nkicc/sim/numeric.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <algorithm>

namespace nkicc::sim {
namespace {

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

std::optional<double> parse_bound(std::string_view text) {
  double value = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value))
    return std::nullopt;
  return value;
}

} // namespace

std::optional<RandomRange> parse_random_range(std::string_view text, std::string &error) {
  RandomRange range;
  range.text = std::string(text);
  std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    error = "expected [callN.]NAME=LOW:HIGH";
    return std::nullopt;
  }
  std::string_view name = text.substr(0, eq), bounds = text.substr(eq + 1);
  if (std::size_t dot = name.find('.'); dot != std::string_view::npos) {
    std::size_t call = 0;
    auto [ptr, ec] = std::from_chars(name.data() + std::min<std::size_t>(4, dot), name.data() + dot, call);
    if (name.substr(0, 4) != "call" || dot == 4 || ec != std::errc() || ptr != name.data() + dot) {
      error = fmt::format("'{}' is not callN.NAME (N a call's number)", name);
      return std::nullopt;
    }
    range.call = call;
    name = name.substr(dot + 1);
  }
  if (!is_identifier(name)) {
    error = fmt::format("'{}' is not a parameter name", name);
    return std::nullopt;
  }
  range.param = std::string(name);
  std::size_t colon = bounds.find(':');
  std::optional<double> low, high;
  if (colon != std::string_view::npos) {
    low = parse_bound(bounds.substr(0, colon));
    high = parse_bound(bounds.substr(colon + 1));
  }
  if (!low || !high) {
    error = fmt::format("'{}' is not LOW:HIGH (two finite numbers)", bounds);
    return std::nullopt;
  }
  if (!(*low < *high)) {
    error = fmt::format("the range [{}, {}) is empty: LOW must be less than HIGH", bounds.substr(0, colon),
                        bounds.substr(colon + 1));
    return std::nullopt;
  }
  range.low = *low;
  range.high = *high;
  return range;
}

std::optional<std::string> random_range_mismatch(const RandomRange &range, DType dtype) {
  if (dtype == DType::Bool || dtype_is_mx_x4(dtype) || dtype == DType::Float8E8M0FNU)
    return fmt::format("a range applies to integer and float parameters, not to {}", dtype_name(dtype));
  if (!dtype_is_integer(dtype, false))
    return std::nullopt;
  if (std::floor(range.low) != range.low || std::floor(range.high) != range.high)
    return fmt::format("the bounds of a range of {} values must be integers", dtype_name(dtype));
  auto [min, max] = integer_limits(dtype);
  if (range.low < min || range.high - 1 > max)
    return fmt::format("{} holds [{}, {}], so a range of it lies within [{}, {}]", dtype_name(dtype), min, max, min,
                       max + 1);
  return std::nullopt;
}

} // namespace nkicc::sim
