#include "nkicc/support/dtype.h"

#include <array>

namespace nkicc {

namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 18> kDTypes = {{
    {DType::Float32, "float32", 4},
    {DType::Float16, "float16", 2},
    {DType::BFloat16, "bfloat16", 2},
    {DType::TFloat32, "tfloat32", 4},
    {DType::Float8E4M3, "float8_e4m3", 1},
    {DType::Float8E4M3FN, "float8_e4m3fn", 1},
    {DType::Float8E5M2, "float8_e5m2", 1},
    {DType::Int8, "int8", 1},
    {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},
    {DType::UInt8, "uint8", 1},
    {DType::UInt16, "uint16", 2},
    {DType::UInt32, "uint32", 4},
    {DType::Bool, "bool", 1},
    {DType::Float8E5M2X4, "float8_e5m2_x4", 4},
    {DType::Float8E4M3FNX4, "float8_e4m3fn_x4", 4},
    {DType::Float4E2M1FNX4, "float4_e2m1fn_x4", 2},
    {DType::Float8E8M0FNU, "float8_e8m0fnu", 1},
}};

const DTypeInfo &info(DType d) { return kDTypes[static_cast<std::size_t>(d)]; }

} // namespace

std::string_view dtype_name(DType dtype) { return info(dtype).name; }
std::size_t dtype_size(DType dtype) { return info(dtype).size; }

bool dtype_is_integer(DType dtype, bool with_bool) {
  return (dtype >= DType::Int8 && dtype <= DType::UInt32) || (with_bool && dtype == DType::Bool);
}

bool dtype_is_mx_x4(DType dtype) { return dtype >= DType::Float8E5M2X4 && dtype <= DType::Float4E2M1FNX4; }

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "bool_")
    return DType::Bool;
  for (const DTypeInfo &d : kDTypes)
    if (d.name == name)
      return d.dtype;
  return std::nullopt;
}

const std::vector<std::string> &dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const DTypeInfo &d : kDTypes)
      v.emplace_back(d.name);
    v.emplace_back("bool_");
    return v;
  }();
  return names;
}

} // namespace nkicc
