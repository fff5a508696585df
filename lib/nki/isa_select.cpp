// nisa's selection, shuffle and random-number ops (max8, nc_find_index8, nc_match_replace8,
// nc_stream_shuffle, dropout, sequence_bounds, tensor_copy_predicated, tensor_copy_dynamic_src /
// _dst, dma_transpose, local_gather), nl's random-number generator (nl.rand, nl.random_seed),
// nl.atomic_rmw, nl.device_print and nl.gather_flattened.
// Each is one instruction; lib/sim/visitors_select.cpp says what it computes. The constraints are
// those NKI's documentation of each op states.
#include "index.h"
#include "lowering.h"
#include "objects.h"
#include "op_table.h"
#include "runtime.h"

#include <fmt/format.h>

namespace nkicc::nki {

namespace {

constexpr std::int64_t kMaxElements8 = 16384; // elements per partition max8 and its kin read

std::int64_t per_partition(const TensorRef &t) { return product(t.shape(), 1); }

void check_rank(const TensorRef &t, std::size_t max_rank, std::string_view op) {
  if (t.shape().size() > max_rank)
    raise_error("err_exceed_max_supported_dimension",
                fmt::format("parameter '{}' of '{}' exceed max supported number of dimensions of {}.", t.describe(), op,
                            max_rank));
}

void check_same_partitions(const TensorRef &a, std::string_view pa, const TensorRef &b, std::string_view pb,
                           std::string_view op) {
  if (a.shape()[0] != b.shape()[0])
    raise_error("err_num_partition_mismatch",
                fmt::format("number of partitions (dimension 0 size of a tile) mismatch in parameters ({}{}, {}{}) of "
                            "'{}'",
                            pa, shape_text(a.shape()), pb, shape_text(b.shape()), op));
}

/// max8 and its kin read 8 to 16384 elements per partition of their data (`min` 8, or 1 for
/// nc_match_replace8, which needs none beyond its 8 values).
void check_data(const TensorRef &data, std::string_view param, std::string_view op, std::int64_t min) {
  check_rank(data, 5, op);
  std::int64_t n = per_partition(data);
  if (n < min || n > kMaxElements8)
    raise_error("ValueError", fmt::format("'{}' reads {} to {} elements per partition of its {}, but '{}' has {}", op,
                                          min, kMaxElements8, param, data.describe(), n));
}

/// The 8 values per partition of nc_find_index8 and nc_match_replace8.
void check_vals(const TensorRef &vals, const TensorRef &data, std::string_view op) {
  check_rank(vals, 3, op);
  check_same_partitions(data, "data", vals, "vals", op);
  if (per_partition(vals) != 8)
    raise_error("ValueError", fmt::format("the vals of '{}' must hold 8 values per partition, but '{}' holds {}", op,
                                          vals.describe(), per_partition(vals)));
}

Value lower_max8(OpCall &c) {
  auto src = c.required_tensor("src");
  check_data(*src, "src", "max8", 8);
  auto out = new_tile(c.kb(), "max8", ir::Memory::Sbuf, {src->shape()[0], 8}, c.dtype().value_or(src->tensor().dtype));
  c.emit({&out->ap, 1}, {&src->ap, 1});
  return Value::object(out);
}

Value lower_find_index8(OpCall &c) {
  auto data = c.required_tensor("data");
  auto vals = c.required_tensor("vals");
  check_data(*data, "data", "nc_find_index8", 8);
  check_vals(*vals, *data, "nc_find_index8");
  DType dtype = c.dtype().value_or(DType::UInt32);
  if (dtype != DType::UInt32 && dtype != DType::UInt16)
    raise_error("TypeError",
                fmt::format("the dtype of 'nc_find_index8' must be uint16 or uint32, not {}", dtype_name(dtype)));
  auto out = new_tile(c.kb(), "find_index8", ir::Memory::Sbuf, {data->shape()[0], 8}, dtype);
  ir::AccessPattern srcs[] = {data->ap, vals->ap};
  c.emit({&out->ap, 1}, srcs);
  return Value::object(out);
}

// The replaced data is the result; `dst_idx=`, when given, is a second destination that takes
// the indices of the matches.
Value lower_match_replace8(OpCall &c) {
  auto data = c.required_tensor("data");
  auto vals = c.required_tensor("vals");
  check_data(*data, "data", "nc_match_replace8", 1);
  check_vals(*vals, *data, "nc_match_replace8");
  const Value &imm = c.required("imm");
  if (!is_scalar(imm))
    raise_error("TypeError",
                fmt::format("the imm of 'nc_match_replace8' must be a float32 constant, not {}", trace::repr(imm)));
  PyConstant k = scalar_constant(imm);
  double value = k.kind == PyConstant::Kind::Float ? k.f
                 : k.kind == PyConstant::Kind::Int ? static_cast<double>(k.i)
                                                   : (k.b ? 1.0 : 0.0);
  auto out =
      new_tile(c.kb(), "match_replace8", ir::Memory::Sbuf, data->shape(), c.dtype().value_or(data->tensor().dtype));
  std::vector<ir::AccessPattern> dst = {out->ap};
  if (auto idx = c.tensor("dst_idx")) {
    require_on_chip(*idx, "nc_match_replace8", "dst_idx");
    check_same_partitions(*data, "data", *idx, "dst_idx", "nc_match_replace8");
    if (per_partition(*idx) != 8)
      raise_error("ValueError",
                  fmt::format("the dst_idx of 'nc_match_replace8' must hold 8 indices per partition, but '{}' holds {}",
                              idx->describe(), per_partition(*idx)));
    if (!dtype_is_integer(idx->tensor().dtype, true))
      raise_error("TypeError", fmt::format("the dst_idx of 'nc_match_replace8' must be an integer tile, not {}",
                                           dtype_name(idx->tensor().dtype)));
    dst.push_back(idx->ap);
  }
  ir::AccessPattern srcs[] = {data->ap, vals->ap};
  c.emit(dst, srcs, {{"imm", PyConstant::floating(value)}});
  return Value::object(out);
}

// nc_stream_shuffle writes `dst` itself (it returns nothing).
Value lower_stream_shuffle(OpCall &c) {
  auto src = c.required_tensor("src");
  auto dst = c.required_tensor("dst");
  const Value &mask = c.required("shuffle_mask");
  if (mask.kind != Value::Kind::List && mask.kind != Value::Kind::Tuple)
    raise_error("TypeError", fmt::format("the shuffle_mask of 'nc_stream_shuffle' must be a list of 32 partitions, not "
                                         "{}",
                                         trace::repr(mask)));
  const auto &items = mask.seq().items;
  if (items.size() != 32)
    raise_error("ValueError",
                fmt::format("the shuffle_mask of 'nc_stream_shuffle' must hold 32 partitions, not {}", items.size()));
  std::vector<PyConstant> parts;
  for (const Value &v : items) {
    if (v.kind != Value::Kind::Int || !((v.i >= 0 && v.i < 32) || v.i == 255))
      raise_error("ValueError", fmt::format("each partition of the shuffle_mask of 'nc_stream_shuffle' must be 0 to 31 "
                                            "(or 255 to leave the partition unmodified), not {}",
                                            trace::repr(v)));
    parts.push_back(PyConstant::integer(v.i));
  }
  if (src->tensor().dtype != dst->tensor().dtype)
    raise_error("TypeError", fmt::format("'nc_stream_shuffle' needs dst of the dtype of src, got src {} and dst {}",
                                         dtype_name(src->tensor().dtype), dtype_name(dst->tensor().dtype)));
  if (per_partition(*src) != per_partition(*dst))
    raise_error("ValueError", fmt::format("'nc_stream_shuffle' needs as many elements per partition in dst as in src, "
                                          "got src '{}' and dst '{}'",
                                          src->describe(), dst->describe()));
  if (!dst->out_of_bound.empty())
    raise_error("err_tensor_access_out_of_bound", dst->out_of_bound);
  c.emit({&dst->ap, 1}, {&src->ap, 1}, {{"shuffle_mask", PyConstant::tuple(std::move(parts))}});
  return Value::none();
}

Value lower_dropout(OpCall &c) {
  auto data = c.required_tensor("data");
  DType in = data->tensor().dtype;
  std::optional<DType> dtype = c.dtype();
  if (dtype_is_integer(in, true) && dtype && *dtype != in)
    raise_error("TypeError", fmt::format("'dropout' of integer data ({}) must keep its dtype, not cast to {}",
                                         dtype_name(in), dtype_name(*dtype)));
  std::vector<ir::AccessPattern> srcs = {data->ap};
  ir::AttrList attrs;
  const Value &prob = c.required("prob");
  if (auto p = prob.shared_as<TensorRef>()) {
    require_on_chip(*p, "dropout", "prob");
    ir::Shape s = p->shape();
    if (s.size() != 2 || s[1] != 1 || s[0] != data->shape()[0])
      raise_error("ValueError", fmt::format("the prob of 'dropout' must be a scalar or a [{}, 1] tile, got '{}'",
                                            data->shape()[0], p->describe()));
    if (dtype_is_integer(p->tensor().dtype, true) ||
        (dtype_is_integer(in, true) && p->tensor().dtype != DType::Float32))
      raise_error("TypeError",
                  fmt::format("the prob of 'dropout' of {} data must be {}, not {}", dtype_name(in),
                              dtype_is_integer(in, true) ? "float32" : "a float type", dtype_name(p->tensor().dtype)));
    srcs.push_back(broadcast_view(*p, data->shape()));
  } else if (is_scalar(prob)) {
    PyConstant k = scalar_constant(prob);
    double v = k.kind == PyConstant::Kind::Float ? k.f : k.kind == PyConstant::Kind::Int ? static_cast<double>(k.i) : 0;
    if (!(v >= 0.0 && v <= 1.0))
      raise_error("ValueError",
                  fmt::format("the prob of 'dropout' is a probability (0 to 1), not {}", trace::repr(prob)));
    attrs.emplace_back("prob", PyConstant::floating(v));
  } else {
    raise_error("TypeError",
                fmt::format("the prob of 'dropout' must be a number or a tile, not {}", trace::type_name(prob)));
  }
  auto out = new_tile(c.kb(), "dropout", ir::Memory::Sbuf, data->shape(), dtype.value_or(in));
  c.emit({&out->ap, 1}, srcs, attrs);
  return Value::object(out);
}

Value lower_sequence_bounds(OpCall &c) {
  auto ids = c.required_tensor("segment_ids");
  ir::Shape s = ids->shape();
  if (s.size() != 2 || s[0] != 1)
    raise_error("ValueError",
                fmt::format("the segment_ids of 'sequence_bounds' must be a [1, N] tile, got '{}'", ids->describe()));
  DType in = ids->tensor().dtype;
  if (in != DType::Float32 && in != DType::Int32)
    raise_error("TypeError",
                fmt::format("the segment_ids of 'sequence_bounds' must be float32 or int32, not {}", dtype_name(in)));
  DType dtype = c.dtype().value_or(in);
  if (dtype != DType::Float32 && dtype != DType::Int32)
    raise_error("TypeError",
                fmt::format("the dtype of 'sequence_bounds' must be float32 or int32, not {}", dtype_name(dtype)));
  auto out = new_tile(c.kb(), "sequence_bounds", ir::Memory::Sbuf, {1, 2, s[1]}, dtype);
  c.emit({&out->ap, 1}, {&ids->ap, 1});
  return Value::object(out);
}

// tensor_copy_predicated is the Vector engine's select: dst = predicate ? src : dst (reversed:
// predicate ? dst : src), the Select instruction nl.where also emits.
Value lower_copy_predicated(OpCall &c) {
  auto dst = c.required_tensor("dst");
  auto pred = c.required_tensor("predicate");
  auto src = c.tensor("src");
  if (!src)
    raise_error("not-modelled", "nkicc does not model a 'tensor_copy_predicated' of a scalar src yet");
  DType p = pred->tensor().dtype;
  if (p != DType::UInt8 && p != DType::UInt16 && p != DType::UInt32 && p != DType::Bool)
    raise_error("TypeError", fmt::format("the predicate of 'tensor_copy_predicated' must be uint8, uint16 or uint32, "
                                         "not {}",
                                         dtype_name(p)));
  if (src->tensor().dtype != dst->tensor().dtype)
    raise_error("TypeError", fmt::format("'tensor_copy_predicated' needs src and dst of one dtype, got {} and {}",
                                         dtype_name(src->tensor().dtype), dtype_name(dst->tensor().dtype)));
  if (ir::is_on_chip(src->tensor().memory) && src->tensor().memory == ir::Memory::Psum &&
      pred->tensor().memory == ir::Memory::Psum)
    raise_error("ValueError", "'tensor_copy_predicated' takes src or predicate from PSUM, not both");
  for (const auto &[t, name] : {std::pair{pred, "predicate"}, std::pair{src, "src"}})
    if (t->shape()[0] != dst->shape()[0] || per_partition(*t) != per_partition(*dst))
      raise_error("ValueError", fmt::format("'tensor_copy_predicated' needs {} of the partitions and elements per "
                                            "partition of dst, got '{}' and '{}'",
                                            name, t->describe(), dst->describe()));
  if (!dst->out_of_bound.empty())
    raise_error("err_tensor_access_out_of_bound", dst->out_of_bound);
  bool reverse = c.flag("reverse_pred");
  ir::AccessPattern srcs[] = {pred->ap, reverse ? dst->ap : src->ap, reverse ? src->ap : dst->ap};
  c.emit({&dst->ap, 1}, srcs);
  return Value::none();
}

// tensor_copy_dynamic_src / _dst: a TensorCopy whose src (dst) is at a dynamic offset within each
// partition: the view is indexed by one element of a tile (`t[ix, offsets[0, i], iz]`), which the
// instruction reads at run time (its last source, as an indirect DMA's index).
Value lower_copy_dynamic(OpCall &c, bool on_src) {
  auto src = c.required_tensor("src");
  std::shared_ptr<TensorRef> dst = on_src ? nullptr : c.required_tensor("dst");
  const TensorRef &dynamic = on_src ? *src : *dst;
  std::string_view op = on_src ? "tensor_copy_dynamic_src" : "tensor_copy_dynamic_dst";
  if (!dynamic.indirect)
    raise_error("TypeError", fmt::format("the {} of '{}' must be a tile at a dynamic offset (indexed by an element of "
                                         "a tile, as t[ix, offsets[0, i]]), not '{}'",
                                         on_src ? "src" : "dst", op, dynamic.describe()));
  if (!on_src && src->indirect)
    raise_error("not-modelled",
                "nkicc does not model a 'tensor_copy_dynamic_dst' whose src is at a dynamic offset too");
  if (!on_src) {
    if (dst->shape()[0] != src->shape()[0] || per_partition(*dst) != per_partition(*src))
      raise_error("ValueError", fmt::format("'{}' needs src and dst of the same partitions and elements per partition, "
                                            "got '{}' and '{}'",
                                            op, src->describe(), dst->describe()));
    if (!dst->out_of_bound.empty())
      raise_error("err_tensor_access_out_of_bound", dst->out_of_bound);
  }
  auto out =
      on_src ? new_tile(c.kb(), "copy_dynamic", ir::Memory::Sbuf, src->shape(), c.dtype().value_or(src->tensor().dtype))
             : dst;
  std::vector<ir::AccessPattern> srcs = {src->ap};
  ir::AttrList attrs;
  add_indirect_operand(dynamic, on_src ? "src" : "dst", srcs, attrs);
  c.emit({&out->ap, 1}, srcs, attrs);
  return on_src ? Value::object(out) : Value::none();
}

Value lower_copy_dynamic_src(OpCall &c) { return lower_copy_dynamic(c, true); }
Value lower_copy_dynamic_dst(OpCall &c) { return lower_copy_dynamic(c, false); }

// dma_transpose: the DMA engine's transpose of an HBM or SBUF tile into SBUF, the Transpose
// instruction nc_transpose also is, here on the Sync (DMA) engine.
Value lower_dma_transpose(OpCall &c) {
  auto src = c.required_tensor("src");
  if (src->tensor().memory == ir::Memory::Psum)
    raise_error("err_unsupported_memory", "Expected operand 'src' of 'dma_transpose' to be in address space 'hbm' or "
                                          "'sbuf', but got a tile in 'psum' instead.");
  ir::Shape s = src->shape();
  if (s.size() < 2 || s.size() > 4)
    raise_error("err_exceed_max_supported_dimension",
                fmt::format("parameter '{}' of 'dma_transpose' exceed max supported number of dimensions of 4.",
                            src->describe()));
  if (const Value *axes = c.get("axes")) {
    std::vector<std::int64_t> want = s.size() == 2   ? std::vector<std::int64_t>{1, 0}
                                     : s.size() == 3 ? std::vector<std::int64_t>{2, 1, 0}
                                                     : std::vector<std::int64_t>{3, 1, 2, 0};
    std::vector<std::int64_t> got;
    if (axes->kind == Value::Kind::Tuple || axes->kind == Value::Kind::List)
      for (const Value &a : axes->seq().items)
        got.push_back(a.kind == Value::Kind::Int ? a.i : -1);
    if (got != want)
      raise_error("ValueError", fmt::format("the axes of 'dma_transpose' of a {}-d tile must be ({}), not {}", s.size(),
                                            fmt::join(want, ", "), trace::repr(*axes)));
  }
  if (s.size() != 2)
    raise_error("not-modelled", fmt::format("nkicc does not model a 'dma_transpose' of a {}-d tile yet", s.size()));
  auto out = new_tile(c.kb(), "dma_transpose", ir::Memory::Sbuf, {s[1], s[0]}, c.dtype().value_or(src->tensor().dtype));
  c.emit({&out->ap, 1}, {&src->ap, 1});
  return Value::object(out);
}

// local_gather: each of GpSimd's 8 cores gathers within its 16 partitions. The result has
// num_valid_indices * num_elem_per_idx elements per partition, in src_buffer's dtype (no
// casting).
Value lower_local_gather(OpCall &c) {
  if (c.has("mask"))
    raise_error("not-modelled", "nkicc does not model a masked 'local_gather' yet");
  auto src = c.required_tensor("src_buffer");
  auto index = c.required_tensor("index");
  for (const auto &[t, name] : {std::pair{src, "src_buffer"}, std::pair{index, "index"}})
    if (t->tensor().memory != ir::Memory::Sbuf)
      raise_error("err_unsupported_memory", fmt::format("Expected operand '{}' of 'local_gather' to be in address "
                                                        "space 'sbuf', but got a tile in 'psum' instead.",
                                                        name));
  check_same_partitions(*src, "src_buffer", *index, "index", "local_gather");
  std::int64_t partitions = src->shape()[0];
  if (partitions % 16 != 0)
    raise_error("ValueError", fmt::format("'local_gather' works on groups of 16 partitions (one per GpSimd core): the "
                                          "partitions of src_buffer '{}' must be a multiple of 16",
                                          src->describe()));
  if (index->tensor().dtype != DType::UInt16)
    raise_error("TypeError", fmt::format("the index of 'local_gather' must be a uint16 tile, not {}",
                                         dtype_name(index->tensor().dtype)));
  std::int64_t per_idx = c.integer("num_elem_per_idx");
  if (per_idx != 1 && per_idx != 2 && per_idx != 4 && per_idx != 8 && per_idx != 16 && per_idx != 32)
    raise_error("ValueError", fmt::format("the num_elem_per_idx of 'local_gather' must be one of 1, 2, 4, 8, 16, 32, "
                                          "not {}",
                                          per_idx));
  // Each core's 16-partition slice of index holds this many indices.
  std::int64_t per_core = 16 * per_partition(*index);
  std::int64_t valid = c.has("num_valid_indices") ? c.integer("num_valid_indices") : per_core;
  if (valid < 1 || valid > per_core)
    raise_error("ValueError", fmt::format("the num_valid_indices of 'local_gather' must be 1 to the {} indices of "
                                          "each core's 16 partitions of '{}', not {}",
                                          per_core, index->describe(), valid));
  if (valid > 4096)
    raise_error("ValueError",
                fmt::format("'local_gather' gathers at most 4096 indices per GpSimd core, not {}", valid));
  // A [P, F] index with every index valid gives a [P, F, 16, num_elem_per_idx] result (element
  // (p, i, r, e) gathered by index[16 * (p / 16) + r, i]), as NKI shapes local_gather's tile;
  // otherwise [P, num_valid_indices, num_elem_per_idx].
  ir::Shape shape = {partitions, valid, per_idx};
  if (valid == per_core && index->shape().size() == 2)
    shape = {partitions, index->shape()[1], 16, per_idx};
  auto out = new_tile(c.kb(), "local_gather", ir::Memory::Sbuf, shape, src->tensor().dtype);
  ir::AccessPattern srcs[] = {src->ap, index->ap};
  c.emit({&out->ap, 1}, srcs,
         {{"num_elem_per_idx", PyConstant::integer(per_idx)}, {"num_valid_indices", PyConstant::integer(valid)}});
  return Value::object(out);
}

// nl.gather_flattened(data, indices): per partition, result[p, j...] = data[p, indices[p, j...]]
// with data's free dimensions flattened into one row (NumPy's take_along_axis on the flattened
// rows), on the GpSimd engine. The result has indices' shape and data's dtype (or dtype=); an
// index past the row is garbage on hardware, an error in the simulator.
Value lower_gather_flattened(OpCall &c) {
  auto data = c.required_tensor("data");
  auto indices = c.required_tensor("indices");
  for (const auto &[t, name] : {std::pair{data, "data"}, std::pair{indices, "indices"}})
    if (t->shape().size() < 2 || t->shape().size() > 4)
      raise_error("ValueError", fmt::format("the {} of 'gather_flattened' must be a 2-, 3- or 4-dimensional tile, not "
                                            "'{}'",
                                            name, t->describe()));
  check_same_partitions(*data, "data", *indices, "indices", "gather_flattened");
  if (indices->tensor().dtype != DType::UInt32)
    raise_error("TypeError", fmt::format("the indices of 'gather_flattened' must be a uint32 tile, not {}",
                                         dtype_name(indices->tensor().dtype)));
  auto out = new_tile(c.kb(), "gather_flattened", ir::Memory::Sbuf, indices->shape(),
                      c.dtype().value_or(data->tensor().dtype));
  ir::AccessPattern srcs[] = {data->ap, indices->ap};
  c.emit({&out->ap, 1}, srcs);
  return Value::object(out);
}

// nl.device_print(prefix, x): an instruction that computes nothing; the simulator prints x.
Value lower_device_print(OpCall &c) {
  const Value &prefix = c.required("prefix");
  if (prefix.kind != Value::Kind::Str)
    raise_error("TypeError",
                fmt::format("the prefix of 'device_print' must be a string, not {}", trace::type_name(prefix)));
  if (c.has("mask"))
    raise_error("not-modelled", "nkicc does not model a masked 'device_print' yet");
  auto x = c.required_tensor("x");
  c.emit({}, {&x->ap, 1}, {{"prefix", PyConstant::str(prefix.str_text())}});
  return Value::none();
}

// ---- nl's random number generator ----------------------------------------------------------

// nl.atomic_rmw(dst, value, op): dst = op(dst, value) on HBM, read, modified and written by one
// DMA (a Store with `dst_rmw_op`), the destination usually indexed by a tile of indices.
Value lower_atomic_rmw(OpCall &c) {
  auto dst = c.required_tensor("dst");
  std::string op = c.op_name("op");
  if (op != "add")
    raise_error("ValueError", fmt::format("'atomic_rmw' supports only np.add, not {}", op));
  auto value = c.tensor("value");
  if (!value)
    raise_error("not-modelled", "nkicc does not model an 'atomic_rmw' of a scalar value yet");
  require_on_chip(*value, "atomic_rmw", "value");
  check_store_shape(*dst, *value, "dst", "value");
  KernelBuilder &kb = c.kb();
  value = to_sbuf(kb, value);
  std::vector<ir::AccessPattern> src = {broadcast_view(*value, dst->shape())};
  ir::AttrList attrs;
  add_indirect_operand(*dst, "dst", src, attrs);
  attrs.emplace_back("dst_rmw_op", PyConstant::str(op));
  c.emit({&dst->ap, 1}, src, with_mask(std::move(attrs), c.get("mask")));
  return Value::none();
}

Value lower_rand(OpCall &c) {
  ir::Shape shape = shape_arg(c.required("shape"), "rand");
  DType dtype = c.dtype().value_or(DType::Float32);
  auto out = new_tile(c.kb(), "rand", ir::Memory::Sbuf, shape, dtype);
  c.emit({&out->ap, 1}, {});
  return Value::object(out);
}

Value lower_random_seed(OpCall &c) {
  if (c.has("mask"))
    raise_error("not-modelled", "nkicc does not model a masked 'random_seed' yet");
  const Value &seed = c.required("seed");
  if (auto t = seed.shared_as<TensorRef>()) {
    require_on_chip(*t, "random_seed", "seed");
    if (product(t->shape()) != 1)
      raise_error("ValueError",
                  fmt::format("the seed of 'random_seed' must be one 32-bit value, got '{}'", t->describe()));
    c.emit({}, {&t->ap, 1});
  } else if (seed.kind == Value::Kind::Int) {
    if (seed.i < 0 || seed.i > 0xFFFFFFFFll)
      raise_error("ValueError", fmt::format("the seed of 'random_seed' must be a 32-bit value, not {}", seed.i));
    c.emit({}, {}, {{"seed", PyConstant::integer(seed.i)}});
  } else {
    raise_error("TypeError",
                fmt::format("the seed of 'random_seed' must be an integer or a tile, not {}", trace::type_name(seed)));
  }
  return Value::none();
}

constexpr ir::Engine kVector = ir::Engine::Vector;
constexpr ir::Engine kGpSimd = ir::Engine::GpSimd;
constexpr DstForm kDst = {true, 0, false};

const OpDef kIsaOps[] = {
    {"max8(*, src: tile, mask: mask? = None, dtype: dtype? = None)", kVector, ir::Opcode::Max8, lower_max8, kDst},
    {"nc_find_index8(*, data: tile, vals: tile, mask: mask? = None, dtype: dtype? = None)", kVector,
     ir::Opcode::FindIndex8, lower_find_index8, kDst},
    {"nc_match_replace8(*, data: tile, vals: tile, imm: any, dst_idx: tile? = None, mask: mask? = None, "
     "dtype: dtype? = None)",
     kVector, ir::Opcode::MatchReplace8, lower_match_replace8, kDst},
    {"nc_stream_shuffle(src: tile, dst: tile, shuffle_mask: any, *, dtype: dtype? = None, mask: mask? = None)", kVector,
     ir::Opcode::StreamShuffle, lower_stream_shuffle},
    {"dropout(data: tile, prob: tile_or_scalar, *, mask: mask? = None, dtype: dtype? = None)",
     kVector,
     ir::Opcode::Dropout,
     lower_dropout,
     {true, 2, false}},
    {"sequence_bounds(*, segment_ids: tile, dtype: dtype? = None)", kGpSimd, ir::Opcode::SequenceBounds,
     lower_sequence_bounds, kDst},
    {"tensor_copy_predicated(*, src: tile_or_scalar, dst: tile, predicate: tile, reverse_pred: bool = False, "
     "mask: mask? = None, dtype: dtype? = None)",
     kVector, ir::Opcode::Select, lower_copy_predicated},
    {"tensor_copy_dynamic_src(src: tile, *, mask: mask? = None, dtype: dtype? = None, engine: any = None)",
     kVector,
     ir::Opcode::TensorCopy,
     lower_copy_dynamic_src,
     {true, 1, false},
     {},
     true},
    {"dma_transpose(src: tensor, *, axes: any = None, mask: mask? = None, dtype: dtype? = None)",
     ir::Engine::Sync,
     ir::Opcode::Transpose,
     lower_dma_transpose,
     {true, 1, false}},
    {"local_gather(src_buffer: tile, index: tile, num_elem_per_idx: int = 1, num_valid_indices: int? = None, *, "
     "mask: mask? = None)",
     kGpSimd,
     ir::Opcode::LocalGather,
     lower_local_gather,
     {true, 2, false}},
    {"tensor_copy_dynamic_dst(*, dst: tile, src: tile, mask: mask? = None, dtype: dtype? = None, engine: any = None)",
     kVector,
     ir::Opcode::TensorCopy,
     lower_copy_dynamic_dst,
     {},
     {},
     true},
};

const OpDef kLanguageOps[] = {
    {"rand(shape: any, dtype: dtype? = None)", kVector, ir::Opcode::Rand, lower_rand},
    {"random_seed(seed: any, *, mask: mask? = None)", kVector, ir::Opcode::RandomSeed, lower_random_seed},
    {"device_print(prefix: any, x: tensor, *, mask: mask? = None)", kGpSimd, ir::Opcode::DevicePrint,
     lower_device_print},
    {"gather_flattened(data: tile, indices: tile, *, mask: mask? = None, dtype: dtype? = None)", ir::Engine::GpSimd,
     ir::Opcode::GatherFlattened, lower_gather_flattened},
    {"atomic_rmw(dst: hbm, value: tile_or_scalar, op: op, *, mask: mask? = None)",
     ir::Engine::Sync,
     ir::Opcode::Store,
     lower_atomic_rmw,
     {},
     {},
     true},
};

} // namespace

std::span<const OpDef> isa_select_ops() { return kIsaOps; }
std::span<const OpDef> language_misc_ops() { return kLanguageOps; }

} // namespace nkicc::nki
