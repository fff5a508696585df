// `nki.compiler`: direct allocation (sbuf/psum alloc, mod_alloc, auto_alloc), the kernel
// decorators (skip_middle_end_transformations, enable_stack_allocator, force_auto_alloc) and
// the loop directives (multi_buffer, no_reorder).
#include "allocation.h"
#include "builder.h"
#include "lowering.h"

#include <fmt/format.h>

namespace nkicc::nki {

namespace {

std::int64_t as_int(const Value &v, std::string_view what) {
  if (v.kind == Value::Kind::Int)
    return v.i;
  if (v.kind == Value::Kind::Bool)
    return v.b;
  raise_error("TypeError", fmt::format("{} must be an integer, not '{}'", what, trace::type_name(v)));
}

std::vector<std::int64_t> int_tuple(const Value *v, std::string_view what) {
  std::vector<std::int64_t> out;
  if (!v || v->is_none())
    return out;
  if (v->kind != Value::Kind::Tuple && v->kind != Value::Kind::List)
    return {as_int(*v, what)};
  for (const Value &item : v->seq().items)
    out.push_back(as_int(item, what));
  return out;
}

/// NKI's modulo placement (its documentation's reference `modulo_allocate_func`): the block
/// index modulo `shape` (all ones when empty), linearized row-major, times `scale`, plus `base`.
std::int64_t modulo(std::int64_t base, const std::vector<std::int64_t> &shape, std::int64_t scale,
                    std::span<const std::int64_t> index) {
  std::vector<std::int64_t> sizes = shape.empty() ? std::vector<std::int64_t>(index.size(), 1) : shape;
  std::size_t n = std::min(sizes.size(), index.size());
  std::int64_t linear = 0;
  for (std::size_t d = 0; d < n; ++d) {
    if (sizes[d] <= 0)
      raise_error("ValueError", "the tile counts of a modulo allocation must be positive");
    std::int64_t stride = 1;
    for (std::size_t e = d + 1; e < sizes.size(); ++e)
      stride = checked_mul(stride, sizes[e]);
    linear = checked_add(linear, checked_mul(index[d] % sizes[d], stride));
  }
  return checked_add(checked_mul(linear, scale), base);
}

class ModAlloc : public PlacementObject {
public:
  using PlacementObject::PlacementObject;
  Place place(Interpreter &, std::span<const std::int64_t> index, std::int64_t partitions,
              std::int64_t bytes) override {
    Place p;
    p.partition = modulo(base_partition, num_par_tiles, partitions, index);
    p.byte_offset = modulo(base_addr, num_free_tiles, bytes, index);
    if (memory == ir::Memory::Psum)
      p.byte_offset =
          checked_add(checked_mul(modulo(base_bank, num_bank_tiles, 1, index), kPsumBankBytes), p.byte_offset);
    return p;
  }
  std::int64_t base_addr = 0, base_partition = 0, base_bank = 0;
  std::vector<std::int64_t> num_par_tiles, num_free_tiles, num_bank_tiles;
};

/// `ncc.sbuf.alloc(func)`: the kernel's function gives (start_partition, byte_addr) per block,
/// or (bank, start_partition, byte_addr) in PSUM.
class FuncAlloc : public PlacementObject {
public:
  using PlacementObject::PlacementObject;
  Place place(Interpreter &interp, std::span<const std::int64_t> index, std::int64_t partitions,
              std::int64_t bytes) override {
    std::vector<Value> idx;
    for (std::int64_t i : index)
      idx.push_back(Value::integer(i));
    // By keyword, as NKI calls it: `functools.partial(f, bank_map=...)` then binds the rest.
    CallArgs args;
    args.keywords = {{"idx", Value::tuple(std::move(idx))},
                     {"pdim_size", Value::integer(partitions)},
                     {"fdim_size", Value::integer(bytes)}};
    Value r = interp.call(func, args);
    std::size_t want = memory == ir::Memory::Psum ? 3 : 2;
    if ((r.kind != Value::Kind::Tuple && r.kind != Value::Kind::List) || r.seq().items.size() != want)
      raise_error("TypeError",
                  fmt::format("the allocation function of {} must return a tuple of {} integers ({}), not {}",
                              description, want,
                              want == 3 ? "bank, start_partition, byte_addr" : "start_partition, byte_addr",
                              trace::repr(r)));
    const std::vector<Value> &items = r.seq().items;
    Place p;
    if (want == 3) {
      p.partition = as_int(items[1], "start_partition");
      p.byte_offset = checked_add(checked_mul(as_int(items[0], "bank"), kPsumBankBytes), as_int(items[2], "byte_addr"));
    } else {
      p.partition = as_int(items[0], "start_partition");
      p.byte_offset = as_int(items[1], "byte_addr");
    }
    return p;
  }
  Value func;
};

/// `ncc.sbuf` / `ncc.psum`: the automatic buffer (as nl.sbuf), with the allocation makers.
class CompilerBuffer : public BufferObject {
public:
  using BufferObject::BufferObject;
  std::optional<Value> get_attr(Interpreter &, std::string_view name) override {
    bool psum = memory == ir::Memory::Psum;
    std::string prefix = psum ? "ncc.psum." : "ncc.sbuf.";
    ir::Memory m = memory;
    if (name == "auto_alloc")
      return Value::object(std::make_shared<BuiltinFunction>(prefix + "auto_alloc", [m](Interpreter &, CallArgs &) {
        return Value::object(std::make_shared<BufferObject>(m));
      }));
    if (name == "mod_alloc")
      return Value::object(std::make_shared<BuiltinFunction>(prefix + "mod_alloc", [m, prefix](Interpreter &,
                                                                                               CallArgs &call) {
        auto a = std::make_shared<ModAlloc>(m);
        std::vector<std::string> given;
        for (const auto &[key, v] : call.keywords) {
          if (key == "base_addr")
            a->base_addr = as_int(v, key);
          else if (key == "base_partition")
            a->base_partition = as_int(v, key);
          else if (key == "base_bank" && m == ir::Memory::Psum)
            a->base_bank = as_int(v, key);
          else if (key == "num_par_tiles")
            a->num_par_tiles = int_tuple(&v, key);
          else if (key == "num_free_tiles")
            a->num_free_tiles = int_tuple(&v, key);
          else if (key == "num_bank_tiles" && m == ir::Memory::Psum)
            a->num_bank_tiles = int_tuple(&v, key);
          else
            raise_error("TypeError", fmt::format("{}mod_alloc() got an unexpected keyword argument '{}'", prefix, key));
          given.push_back(key + "=" + trace::repr(v));
        }
        // The SBUF form requires base_addr, the PSUM form base_bank (both keyword-only).
        if (!call.positional.empty())
          raise_error("TypeError", fmt::format("{}mod_alloc() takes keyword arguments only", prefix));
        const char *required = m == ir::Memory::Psum ? "base_bank" : "base_addr";
        if (std::none_of(call.keywords.begin(), call.keywords.end(),
                         [&](const auto &kw) { return kw.first == required; }))
          raise_error("TypeError", fmt::format("{}mod_alloc() missing required argument '{}'", prefix, required));
        a->description = fmt::format("{}mod_alloc({})", prefix, fmt::join(given, ", "));
        return Value::object(a);
      }));
    if (name == "alloc")
      return Value::object(
          std::make_shared<BuiltinFunction>(prefix + "alloc", [m, prefix](Interpreter &, CallArgs &call) {
            const Value *f = call.positional.size() == 1 ? &call.positional[0] : call.keyword("func");
            if (!f || call.positional.size() + call.keywords.size() != 1)
              raise_error("TypeError", fmt::format("{}alloc() takes one allocation function", prefix));
            auto a = std::make_shared<FuncAlloc>(m);
            a->func = *f;
            a->description = fmt::format("{}alloc({})", prefix, trace::repr(*f));
            return Value::object(a);
          }));
    return std::nullopt;
  }
};

/// A loop directive (`directives=ncc.no_reorder()`): a hint for NKI's scheduler, which nkicc
/// records nowhere since the trace is the program order.
class Directive : public Object {
public:
  explicit Directive(std::string text) : text_(std::move(text)) {}
  std::string_view type_name() const override { return "directive"; }
  std::string repr() const override { return text_; }

private:
  std::string text_;
};

/// A decorator that hands back the kernel (`@ncc.skip_middle_end_transformations`), also when
/// called with options first (`@ncc.enable_stack_allocator(log_level=...)`).
Value kernel_decorator(std::string name, bool force_auto_alloc) {
  return Value::object(
      std::make_shared<BuiltinFunction>(name, [name, force_auto_alloc](Interpreter &, CallArgs &call) -> Value {
        const Value *f = !call.positional.empty() ? &call.positional[0] : call.keyword("func");
        if (!f || f->is_none())
          return kernel_decorator(name, force_auto_alloc);
        auto k = as_kernel(*f);
        if (!k)
          raise_error("TypeError",
                      fmt::format("nki.compiler.{}() takes a kernel function, not '{}'", name, trace::type_name(*f)));
        if (force_auto_alloc) {
          k = std::make_shared<JitKernel>(*k);
          k->force_auto_alloc = true;
        }
        return Value::object(k);
      }));
}

} // namespace

PlacementObject::Place check_place(KernelBuilder &kb, PlacementObject &placement, std::span<const std::int64_t> index,
                                   const ir::Tensor &t) {
  std::int64_t partitions = t.shape.empty() ? 0 : t.shape[0];
  std::int64_t bytes = ir::bytes_per_partition(t);
  PlacementObject::Place p = placement.place(kb.interp, index, partitions, bytes);
  bool psum = t.memory == ir::Memory::Psum;
  std::string what = fmt::format("{} tile {}", psum ? "PSUM" : "SBUF", shape_text(t.shape));
  if (!index.empty())
    what += fmt::format(" (block {})", shape_text(index));
  // The ISA's rule for where a tile may start: by its number of partitions.
  std::int64_t unit = partitions > 64 ? 128 : partitions > 32 ? 64 : 32;
  if (p.partition < 0 || p.partition % unit != 0 || p.partition + partitions > kMaxPartitions)
    raise_error("err_invalid_allocation",
                fmt::format("{} of {} partitions cannot start at partition {}: a tile of more than 64 partitions "
                            "starts at 0, of more than 32 at 0 or 64, else at a multiple of 32",
                            what, partitions, p.partition));
  std::int64_t capacity = psum ? kb.target.psum_bytes_per_partition : kb.target.sbuf_bytes_per_partition;
  if (p.byte_offset < 0 || checked_add(p.byte_offset, bytes) > capacity)
    raise_error("err_invalid_allocation",
                fmt::format("{} placed at bytes [{}, {}) by {} does not fit the {} bytes of a partition", what,
                            p.byte_offset, p.byte_offset + bytes, placement.description, capacity));
  if (psum && p.byte_offset / kPsumBankBytes != (p.byte_offset + std::max<std::int64_t>(bytes, 1) - 1) / kPsumBankBytes)
    raise_error("err_invalid_allocation",
                fmt::format("{} placed at bytes [{}, {}) by {} spans two PSUM banks: a physical PSUM tile lies in "
                            "one 2 KiB bank",
                            what, p.byte_offset, p.byte_offset + bytes, placement.description));
  return p;
}

void place_tile(KernelBuilder &kb, ir::TensorId id, PlacementObject &placement, std::span<const std::int64_t> index) {
  ir::Tensor probe = kb.fn.tensors[id];
  PlacementObject::Place p = check_place(kb, placement, index, probe);
  ir::Tensor &tile = kb.fn.tensors[id]; // the kernel's function may have made tensors
  tile.partition_start = static_cast<std::int32_t>(p.partition);
  tile.byte_offset = p.byte_offset;
  tile.user_placed = true;
}

std::shared_ptr<ModuleObject> make_compiler_module(const std::string &name) {
  auto ncc = std::make_shared<ModuleObject>(name);
  ncc->globals().set("sbuf", Value::object(std::make_shared<CompilerBuffer>(ir::Memory::Sbuf)));
  ncc->globals().set("psum", Value::object(std::make_shared<CompilerBuffer>(ir::Memory::Psum)));
  for (const char *d : {"skip_middle_end_transformations", "enable_stack_allocator"})
    ncc->globals().set(d, kernel_decorator(d, false));
  ncc->globals().set("force_auto_alloc", kernel_decorator("force_auto_alloc", true));
  ncc->globals().set("no_reorder",
                     Value::object(std::make_shared<BuiltinFunction>("no_reorder", [](Interpreter &, CallArgs &) {
                       return Value::object(std::make_shared<Directive>("ncc.no_reorder()"));
                     })));
  ncc->globals().set("multi_buffer",
                     Value::object(std::make_shared<BuiltinFunction>("multi_buffer", [](Interpreter &, CallArgs &call) {
                       std::int64_t factor = 2;
                       if (!call.positional.empty())
                         factor = as_int(call.positional[0], "factor");
                       else if (const Value *f = call.keyword("factor"))
                         factor = as_int(*f, "factor");
                       return Value::object(std::make_shared<Directive>(fmt::format("ncc.multi_buffer({})", factor)));
                     })));
  return ncc;
}

} // namespace nkicc::nki
