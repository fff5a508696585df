// `nkicc simulate --random-range`: the interval a made-up input is drawn from (issue 13). Kept
// apart from simulator.h so that the driver's request can hold ranges without the executor.
#pragma once

#include "nkicc/support/dtype.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nkicc::sim {

/// `--random-range [callN.]NAME=LOW:HIGH`: the interval [LOW, HIGH) a made-up input of parameter
/// NAME is drawn from instead of its dtype's default, for every call that has such a parameter or
/// only call N. Index inputs need it: a gather's indices must lie within the tensor they index.
struct RandomRange {
  std::optional<std::size_t> call; ///< only this call's parameter; every call's when unset
  std::string param;
  double low = 0, high = 0; ///< [low, high)
  std::string text;         ///< as the user wrote it, for messages
};

/// Parses the option's value; nullopt with `error` saying what is wrong with it.
std::optional<RandomRange> parse_random_range(std::string_view text, std::string &error);

/// Why `range` cannot apply to a parameter of `dtype` (a bool or packed MX parameter, a bound that
/// is not an integer or lies outside an integer dtype), or nullopt when it can.
std::optional<std::string> random_range_mismatch(const RandomRange &range, DType dtype);

} // namespace nkicc::sim
