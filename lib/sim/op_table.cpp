// The op-semantics table (see op_table.h). Where the hardware's behaviour is a choice, the
// choice is stated beside the op.
#include "op_table.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>

namespace nkicc::sim {
namespace {

// Bitwise ops and shifts work on the integer value (int64 here; the write saturates). On float
// operands they act on the value truncated to an integer, a choice: the hardware's bitwise ALU
// ops are defined for integer tiles.
std::int64_t as_int(double v) { return std::isfinite(v) ? static_cast<std::int64_t>(std::trunc(v)) : 0; }

/// NumPy's mod: the result takes the divisor's sign (np.mod, Python's %).
template <class T> T py_mod(T a, T b) {
  if (b == 0)
    return std::numeric_limits<T>::quiet_NaN();
  T r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

template <class T> T shift_left(T a, T b) {
  std::int64_t s = as_int(b);
  return s < 0 || s > 62 ? T(0) : static_cast<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(as_int(a)) << s));
}
template <class T> T shift_right(T a, T b) {
  std::int64_t s = as_int(b);
  return s < 0 || s > 62 ? T(as_int(a) < 0 ? -1 : 0) : static_cast<T>(as_int(a) >> s);
}

#define NKICC_BINARY(expr)                                                                                             \
  BinaryOp { [](float a, float b) -> float { return (expr); }, [](double a, double b) -> double { return (expr); } }

const std::map<std::string, BinaryOp, std::less<>> &binary_table() {
  static const std::map<std::string, BinaryOp, std::less<>> table = [] {
    std::map<std::string, BinaryOp, std::less<>> t;
    t["add"] = NKICC_BINARY(a + b);
    t["subtract"] = NKICC_BINARY(a - b);
    t["multiply"] = NKICC_BINARY(a * b);
    // Division by zero gives IEEE's inf/NaN; the write saturates it in an integer tile.
    t["divide"] = NKICC_BINARY(a / b);
    t["power"] = NKICC_BINARY(std::pow(a, b));
    t["maximum"] = NKICC_BINARY(std::isnan(a) || std::isnan(b) ? a + b : (a > b ? a : b));
    t["minimum"] = NKICC_BINARY(std::isnan(a) || std::isnan(b) ? a + b : (a < b ? a : b));
    t["mod"] = NKICC_BINARY(py_mod(a, b));
    t["fmod"] = NKICC_BINARY(std::fmod(a, b));
    t["equal"] = NKICC_BINARY(a == b ? 1 : 0);
    t["not_equal"] = NKICC_BINARY(a != b ? 1 : 0);
    t["greater"] = NKICC_BINARY(a > b ? 1 : 0);
    t["greater_equal"] = NKICC_BINARY(a >= b ? 1 : 0);
    t["less"] = NKICC_BINARY(a < b ? 1 : 0);
    t["less_equal"] = NKICC_BINARY(a <= b ? 1 : 0);
    t["logical_and"] = NKICC_BINARY(a != 0 && b != 0 ? 1 : 0);
    t["logical_or"] = NKICC_BINARY(a != 0 || b != 0 ? 1 : 0);
    t["logical_xor"] = NKICC_BINARY((a != 0) != (b != 0) ? 1 : 0);
    t["bitwise_and"] = NKICC_BINARY(static_cast<decltype(a)>(as_int(a) & as_int(b)));
    t["bitwise_or"] = NKICC_BINARY(static_cast<decltype(a)>(as_int(a) | as_int(b)));
    t["bitwise_xor"] = NKICC_BINARY(static_cast<decltype(a)>(as_int(a) ^ as_int(b)));
    t["left_shift"] = NKICC_BINARY(shift_left(a, b));
    t["right_shift"] = NKICC_BINARY(shift_right(a, b));
    // np.max / np.min passed as a tensor_tensor op are the element-wise maximum / minimum.
    // The Vector engine's unary ALU op (tensor_scalar_reduce(op0=nl.abs, operand0=0.0)): |a|.
    t["abs"] = NKICC_BINARY(((void)b, a < 0 ? -a : a));
    t["max"] = t["maximum"];
    t["min"] = t["minimum"];
    t["true_divide"] = t["divide"];
    return t;
  }();
  return table;
}

#undef NKICC_BINARY

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

const std::map<std::string, UnaryFn, std::less<>> &activation_table() {
  static const std::map<std::string, UnaryFn, std::less<>> table = {
      // np.copy / nl.copy through the Scalar engine: the identity (with its scale and bias).
      {"copy", [](float x) { return x; }},
      {"identity", [](float x) { return x; }},
      {"exp", [](float x) { return std::exp(x); }},
      {"log", [](float x) { return std::log(x); }},
      {"sqrt", [](float x) { return std::sqrt(x); }},
      {"rsqrt", [](float x) { return 1.0f / std::sqrt(x); }},
      {"tanh", [](float x) { return std::tanh(x); }},
      {"sigmoid", sigmoid},
      {"relu", [](float x) { return x > 0.0f ? x : 0.0f; }},
      // gelu is the exact (erf) form; gelu_apprx_tanh the tanh approximation.
      {"gelu", gelu},
      {"gelu_apprx_tanh", gelu_tanh},
      {"gelu_dx",
       [](float x) {
         return 0.5f * (1.0f + std::erf(x * 0.70710678118654752f)) + x * 0.3989422804014327f * std::exp(-0.5f * x * x);
       }},
      {"silu", [](float x) { return x * sigmoid(x); }},
      {"silu_dx",
       [](float x) {
         float s = sigmoid(x);
         return s * (1.0f + x * (1.0f - s));
       }},
      {"mish", [](float x) { return x * std::tanh(softplus(x)); }},
      {"erf", [](float x) { return std::erf(x); }},
      {"softplus", softplus},
      {"square", [](float x) { return x * x; }},
      {"abs", [](float x) { return std::fabs(x); }},
      {"negative", [](float x) { return -x; }},
      {"sign", [](float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }},
      {"floor", [](float x) { return std::floor(x); }},
      {"ceil", [](float x) { return std::ceil(x); }},
      {"trunc", [](float x) { return std::trunc(x); }},
      {"reciprocal", [](float x) { return 1.0f / x; }},
      {"sin", [](float x) { return std::sin(x); }},
      {"cos", [](float x) { return std::cos(x); }},
      {"arctan", [](float x) { return std::atan(x); }},
      {"logical_not", [](float x) { return x == 0.0f ? 1.0f : 0.0f; }},
  };
  return table;
}

const std::map<std::string, ReduceKind, std::less<>> &reduce_table() {
  // nl.sum / nl.max / ... record their own names; nisa.tensor_reduce records the ALU op it is
  // given (np.add, np.maximum, np.max, ...).
  static const std::map<std::string, ReduceKind, std::less<>> table = {
      {"sum", ReduceKind::Sum},         {"add", ReduceKind::Sum},     {"max", ReduceKind::Max},
      {"maximum", ReduceKind::Max},     {"amax", ReduceKind::Max},    {"min", ReduceKind::Min},
      {"minimum", ReduceKind::Min},     {"amin", ReduceKind::Min},    {"mean", ReduceKind::Mean},
      {"prod", ReduceKind::Prod},       {"multiply", ReduceKind::Prod}, {"all", ReduceKind::All},
      {"logical_and", ReduceKind::All}, {"any", ReduceKind::Any},     {"logical_or", ReduceKind::Any},
  };
  return table;
}

} // namespace

const BinaryOp *binary_op(std::string_view name) {
  auto it = binary_table().find(name);
  return it == binary_table().end() ? nullptr : &it->second;
}

UnaryFn activation_fn(std::string_view name) {
  auto it = activation_table().find(name);
  return it == activation_table().end() ? nullptr : it->second;
}

const ReduceKind *reduce_kind(std::string_view name) {
  auto it = reduce_table().find(name);
  return it == reduce_table().end() ? nullptr : &it->second;
}

} // namespace nkicc::sim
