// nisa's microscaling ops (NeuronCore-v4, the OCP MX formats): nisa.quantize_mx packs
// bfloat16/float16 data into float8 x4 elements with one power-of-two scale per group of 8
// partitions x 4 elements, and nisa.nc_matmul_mx multiplies two such matrices on the Tensor
// engine, dequantizing with their scales. lib/sim/visitors_mx.cpp says what they compute.
//
// The layout both share (NKI's nisa.quantize_mx and Trainium3 architecture documentation): a
// data tile [P, F] in an x4 dtype holds 4*F values per partition; data partition p's scales sit
// in partition (p / 32) * 32 + (p % 32) / 8 of the scale view (the quadrant the group comes
// from, its first 4 partitions), free index as the data's. With P <= 32 that is p / 8, so a
// [P / 8, F] scale tile suffices; a larger P needs a scale view reaching into each quadrant.
#include "lowering.h"
#include "op_table.h"
#include "runtime.h"

#include <fmt/format.h>

namespace nkicc::nki {

namespace {

constexpr std::int64_t kQuadrant = 32;
constexpr std::int64_t kGroupPartitions = 8;

void require_nc_v4(OpCall &c) {
  int gen = c.kb().target.nc_generation;
  if (gen < 4)
    raise_error("ValueError", fmt::format("'{}' is not supported on NeuronCore-v{} (it needs NeuronCore-v4 or newer, "
                                          "target trn3)",
                                          c.name(), gen));
}

void require_memory(const TensorRef &t, ir::Memory memory, std::string_view op, std::string_view param) {
  if (t.tensor().memory != memory)
    raise_error("err_unsupported_memory",
                fmt::format("Expected operand '{}' of '{}' to be in address space '{}', but got a tile in '{}' "
                            "instead.",
                            param, op, ir::memory_name(memory), ir::memory_name(t.tensor().memory)));
}

void require_2d(const TensorRef &t, std::string_view op) {
  if (t.shape().size() != 2)
    raise_error("err_exceed_max_supported_dimension",
                fmt::format("parameter '{}' of '{}' must be a 2-D tile [partitions, free], got {} dimensions.",
                            t.describe(), op, t.shape().size()));
}

void require_dtype(const TensorRef &t, std::initializer_list<DType> allowed, std::string_view op,
                   std::string_view param) {
  DType d = t.tensor().dtype;
  for (DType a : allowed)
    if (a == d)
      return;
  std::string names;
  std::size_t i = 0;
  for (DType a : allowed) {
    names += i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ";
    names += dtype_name(a);
    ++i;
  }
  raise_error("TypeError",
              fmt::format("'{}' of '{}' must be {}, but '{}' is {}", param, op, names, t.describe(), dtype_name(d)));
}

/// MX data spans P partitions: a multiple of 32 (whole groups in whole quadrants), at most 128.
void check_mx_partitions(const TensorRef &t, std::string_view op, std::string_view param) {
  std::int64_t p = t.shape()[0];
  if (p % kQuadrant != 0 || p > kMaxPartitions)
    raise_error("ValueError", fmt::format("the partition dimension of '{}' of '{}' must be a multiple of 32 not "
                                          "exceeding 128, but '{}' has {}",
                                          param, op, t.describe(), p));
}

/// The scale view of data with `partitions` partitions and `free` x4 elements per partition.
void check_scale(const TensorRef &scale, std::int64_t partitions, std::int64_t free, std::string_view op,
                 std::string_view param) {
  require_memory(scale, ir::Memory::Sbuf, op, param);
  require_2d(scale, op);
  require_dtype(scale, {DType::Float8E8M0FNU, DType::UInt8}, op, param);
  std::int64_t last = partitions - 1;
  std::int64_t need = last / kQuadrant * kQuadrant + last % kQuadrant / kGroupPartitions + 1;
  const ir::Shape &s = scale.shape();
  if (s[0] < need)
    raise_error("ValueError",
                fmt::format("'{}' of '{}' holds the scales of {} data partitions in {} partitions (the first 4 of "
                            "each 32-partition quadrant the data spans), but '{}' has {}",
                            param, op, partitions, need, scale.describe(), s[0]));
  if (s[1] != free)
    raise_error("ValueError", fmt::format("'{}' of '{}' needs one scale per x4 element of a partition ({}), but "
                                          "'{}' has {}",
                                          param, op, free, scale.describe(), s[1]));
}

// nisa.quantize_mx(dst, src, dst_scale): src [P, 4F] bfloat16/float16 in SBUF; dst [P, F] in
// float8_e5m2_x4 or float8_e4m3fn_x4; dst_scale the scales (module comment).
Value lower_quantize_mx(OpCall &c) {
  require_nc_v4(c);
  auto dst = c.required_tensor("dst"), src = c.required_tensor("src"), scale = c.required_tensor("dst_scale");
  std::string_view op = "quantize_mx";
  require_memory(*src, ir::Memory::Sbuf, op, "src");
  require_memory(*dst, ir::Memory::Sbuf, op, "dst");
  require_2d(*src, op);
  require_2d(*dst, op);
  require_dtype(*src, {DType::BFloat16, DType::Float16}, op, "src");
  require_dtype(*dst, {DType::Float8E5M2X4, DType::Float8E4M3FNX4}, op, "dst");
  check_mx_partitions(*src, op, "src");
  const ir::Shape &s = src->shape(), &d = dst->shape();
  if (s[1] % 4 != 0)
    raise_error("ValueError", fmt::format("the free dimension of 'src' of 'quantize_mx' must be a multiple of 4 (four "
                                          "values pack into one x4 element), but '{}' has {}",
                                          src->describe(), s[1]));
  if (d[0] != s[0] || d[1] * 4 != s[1])
    raise_error("ValueError", fmt::format("'dst' of 'quantize_mx' must be [{}, {}] (src's partitions, a quarter of its "
                                          "free size), got '{}'",
                                          s[0], s[1] / 4, dst->describe()));
  check_scale(*scale, s[0], d[1], op, "dst_scale");
  ir::AccessPattern dsts[] = {dst->ap, scale->ap};
  ir::AccessPattern srcs[] = {src->ap};
  c.emit(dsts, srcs);
  return Value::none();
}

// nisa.nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale): stationary
// [K, M] and moving [K, N] in x4 dtypes contract over K partitions and the 4 lanes of each
// element, dst[M, N] (PSUM, float32 or bfloat16) = sum over k, lane of
// st[k, m][lane] * st_scale * mv[k, n][lane] * mv_scale: 4*K*M*N MACs.
Value lower_nc_matmul_mx(OpCall &c) {
  require_nc_v4(c);
  std::string_view op = "nc_matmul_mx";
  auto dst = c.required_tensor("dst"), st = c.required_tensor("stationary"), mv = c.required_tensor("moving");
  auto st_scale = c.required_tensor("stationary_scale"), mv_scale = c.required_tensor("moving_scale");
  require_memory(*dst, ir::Memory::Psum, op, "dst");
  require_memory(*st, ir::Memory::Sbuf, op, "stationary");
  require_memory(*mv, ir::Memory::Sbuf, op, "moving");
  for (const auto &t : {dst, st, mv})
    require_2d(*t, op);
  const std::initializer_list<DType> kData = {DType::Float8E5M2X4, DType::Float8E4M3FNX4, DType::Float4E2M1FNX4};
  require_dtype(*st, kData, op, "stationary");
  require_dtype(*mv, kData, op, "moving");
  require_dtype(*dst, {DType::Float32, DType::BFloat16}, op, "dst");
  const ir::Shape &s = st->shape(), &m = mv->shape(), &d = dst->shape();
  if (s[0] != m[0])
    raise_error("err_num_partition_mismatch",
                fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters (stationary{}, "
                            "moving{}) of '{}'",
                            shape_text(s), shape_text(m), op));
  check_mx_partitions(*st, op, "stationary");
  if (s[1] % 2 != 0 || s[1] > kStationaryFmax)
    raise_error("ValueError", fmt::format("the free dimension of 'stationary' of 'nc_matmul_mx' must be even and at "
                                          "most {}, but '{}' has {}",
                                          kStationaryFmax, st->describe(), s[1]));
  // The moving free size fills at most the whole PSUM (8 banks of 2 KiB per partition).
  std::int64_t moving_max = dst->tensor().dtype == DType::Float32 ? 4096 : 8192;
  if (m[1] > moving_max)
    raise_error("ValueError", fmt::format("the free dimension of 'moving' of 'nc_matmul_mx' must be at most {} with a "
                                          "{} dst (the whole PSUM), but '{}' has {}",
                                          moving_max, dtype_name(dst->tensor().dtype), mv->describe(), m[1]));
  if (d[0] != s[1] || d[1] != m[1])
    raise_error("ValueError", fmt::format("'dst' of 'nc_matmul_mx' must be [{}, {}] (stationary's and moving's free "
                                          "sizes), got '{}'",
                                          s[1], m[1], dst->describe()));
  check_scale(*st_scale, s[0], s[1], op, "stationary_scale");
  check_scale(*mv_scale, m[0], m[1], op, "moving_scale");

  ir::AttrList attrs;
  // accumulate: None (NKI's default) accumulates when the PSUM tile was written before.
  bool accumulate = false;
  if (const Value *a = c.get("accumulate"))
    accumulate = a->b;
  else
    accumulate = c.kb().last_writer[dst->ap.tensor] != KernelBuilder::kNoWriter;
  attrs.emplace_back("accumulate", PyConstant::boolean(accumulate));
  // Row tiling only: tile_size (rows, 128) with rows 128, 64 or 32, tile_position (start, 0).
  auto position = pe_pair(c.get("tile_position"), "nc_matmul_mx", "tile_position"),
       size = pe_pair(c.get("tile_size"), "nc_matmul_mx", "tile_size");
  if (position || size) {
    if (!position || !size)
      raise_error("ValueError", fmt::format("'tile_position' and 'tile_size' of 'nc_matmul_mx' must both be set to "
                                            "enable tiling mode, got only '{}'",
                                            position ? "tile_position" : "tile_size"));
    if ((size->first != 128 && size->first != 64 && size->first != 32) || size->second != 128)
      raise_error("ValueError", fmt::format("tile_size of 'nc_matmul_mx' must be (rows, 128) with rows 128, 64 or 32 "
                                            "(the Tensor engine tiles only its rows for MX), got ({}, {})",
                                            size->first, size->second));
    if (position->second != 0 || position->first < 0 || position->first % size->first != 0 ||
        position->first + size->first > kMaxPartitions)
      raise_error("ValueError", fmt::format("tile_position of 'nc_matmul_mx' must be (a multiple of the row tile size "
                                            "{} within the 128 PE rows, 0), got ({}, {})",
                                            size->first, position->first, position->second));
    if (s[0] > size->first)
      raise_error("ValueError", fmt::format("stationary tile of 'nc_matmul_mx' needs {} PE rows, which exceed the row "
                                            "tile size {} of tile_size",
                                            s[0], size->first));
    auto pair = [](std::pair<std::int64_t, std::int64_t> p) {
      return PyConstant::tuple({PyConstant::integer(p.first), PyConstant::integer(p.second)});
    };
    attrs.emplace_back("tile_position", pair(*position));
    attrs.emplace_back("tile_size", pair(*size));
  }
  ir::AccessPattern srcs[] = {st->ap, mv->ap, st_scale->ap, mv_scale->ap};
  c.emit({&dst->ap, 1}, srcs, attrs);
  KernelBuilder &kb = c.kb();
  kb.fn.matmul_mac_count =
      checked_add(kb.fn.matmul_mac_count, checked_mul(checked_mul(checked_mul(std::int64_t{4}, s[0]), s[1]), m[1]));
  return Value::none();
}

const OpDef kOps[] = {
    {"quantize_mx(dst: tile, src: tile, dst_scale: tile)", ir::Engine::Vector, ir::Opcode::QuantizeMx,
     lower_quantize_mx},
    {"nc_matmul_mx(dst: tile, stationary: tile, moving: tile, stationary_scale: tile, moving_scale: tile, "
     "tile_position: any = None, tile_size: any = None, accumulate: bool? = None)",
     ir::Engine::Tensor, ir::Opcode::MatMulMx, lower_nc_matmul_mx},
};

} // namespace

std::span<const OpDef> isa_mx_ops() { return kOps; }

} // namespace nkicc::nki
