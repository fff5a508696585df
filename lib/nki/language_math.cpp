// nl's compute ops: element-wise math (activations on the Scalar engine, binary ALU ops on the
// Vector engine), reductions over free axes, nl.matmul and nl.transpose.
#include "index.h"
#include "lowering.h"
#include "objects.h"
#include "op_table.h"
#include "runtime.h"

#include <fmt/format.h>

namespace nkicc::nki {

namespace {

Value lower_unary(OpCall &c) {
  return activation(c.kb(), c.name(), *c.required_tensor("x"), c.dtype(), nullptr, nullptr, {});
}

Value lower_binary(OpCall &c) { return elementwise(c.kb(), c.name(), c.required("x"), c.required("y"), c.dtype(), {}); }

Value lower_reduce(OpCall &c) {
  return reduce(c.kb(), c.name(), *c.required_tensor("x"), c.required("axis"), c.flag("keepdims"), false, c.dtype(),
                {});
}

// nl.matmul(x, y) = nisa.nc_matmul(transpose(x), y); with transpose_x, x is already [K, M].
Value lower_matmul(OpCall &c) {
  auto x = c.required_tensor("x");
  auto y = c.required_tensor("y");
  KernelBuilder &kb = c.kb();
  if (c.flag("transpose_x"))
    return nc_matmul(kb, *x, *y, "matmul");
  Value xt = transpose(kb, *x, "matmul", ir::Engine::Tensor);
  auto xt_sbuf = to_sbuf(kb, xt.shared_as<TensorRef>());
  return nc_matmul(kb, *xt_sbuf, *y, "matmul");
}

Value lower_transpose(OpCall &c) { return transpose(c.kb(), *c.required_tensor("x"), "transpose", ir::Engine::Tensor); }

// nl.where(condition, x, y): x where the condition holds (is non-zero), else y, element by
// element: one Select on the Vector engine (as tensor_copy_predicated), operands broadcast as
// nl's element-wise ops broadcast them. A number operand is set into a tile of the result's
// shape first (a Memset), since Select reads three tiles.
Value lower_where(OpCall &c) {
  KernelBuilder &kb = c.kb();
  auto cond = c.required_tensor("condition");
  const Value *operands[] = {&c.required("x"), &c.required("y")};
  const char *names[] = {"x", "y"};
  std::shared_ptr<TensorRef> tiles[2];
  ir::Shape shape = cond->shape();
  std::optional<DType> dtype = c.dtype();
  std::optional<DType> tile_dtype, scalar_dtype;
  for (int k = 0; k < 2; ++k) {
    if (operands[k]->shared_as<TensorRef>()) {
      tiles[k] = as_tensor(*operands[k], "where", names[k]);
      ir::Shape s = broadcast_shapes(*cond, *tiles[k], "where", "condition", names[k], true);
      for (std::size_t d = 0; d < s.size(); ++d) {
        if (s[d] == shape[d] || s[d] == 1)
          continue;
        if (shape[d] != 1 && shape[d] != cond->shape()[d])
          raise_error("ValueError", fmt::format("operands of 'where' cannot be broadcast together: x{} and y{}",
                                                shape_text(tiles[0]->shape()), shape_text(tiles[k]->shape())));
        shape[d] = s[d];
      }
      DType t = tiles[k]->tensor().dtype;
      tile_dtype = tile_dtype ? promote(*tile_dtype, t) : t;
    } else { // a number (the signature's tile_or_scalar)
      DType t = weak_scalar_dtype(*operands[k]);
      scalar_dtype = scalar_dtype ? promote(*scalar_dtype, t) : t;
    }
  }
  // A number takes the tile operand's dtype (NKI's weak scalars); two numbers their own.
  DType out_dtype = dtype.value_or(tile_dtype.value_or(scalar_dtype.value_or(DType::Float32)));
  ir::AccessPattern srcs[3] = {broadcast_view(*cond, shape)};
  for (int k = 0; k < 2; ++k) {
    if (tiles[k]) {
      srcs[k + 1] = broadcast_view(*tiles[k], shape);
      continue;
    }
    auto filled = new_tile(kb, "where", ir::Memory::Sbuf, shape, out_dtype);
    memset(kb, *filled, *operands[k]);
    srcs[k + 1] = filled->ap;
  }
  auto out = new_tile(kb, "where", ir::Memory::Sbuf, shape, out_dtype);
  c.emit({&out->ap, 1}, srcs);
  return Value::object(out);
}

// nl.loop_reduce(x, op, loop_indices): `dst = op(dst, x)` across a loop, where dst is the tile
// the result is assigned into; emitted at that assignment (LoopReduceObject). loop_indices
// names the loops the reduction runs across (loop indices or numbers); nkicc checks them and
// emits the same instruction in every iteration, as the loop's trace does.
Value lower_loop_reduce(OpCall &c) {
  auto x = c.required_tensor("x");
  std::string op = c.op_name("op");
  if (op == "max" || op == "min") // np.max / np.min name the element-wise maximum / minimum here
    op = op == "max" ? "maximum" : "minimum";
  if (op != "add" && op != "multiply" && op != "maximum" && op != "minimum")
    raise_error("ValueError",
                fmt::format("'loop_reduce' reduces with add, multiply, maximum or minimum, not '{}'", op));
  const Value &indices = c.required("loop_indices");
  auto check_index = [](const Value &v) {
    if (v.kind == Value::Kind::Int || v.as<IndexObject>())
      return;
    raise_error("TypeError", fmt::format("'loop_indices' of 'loop_reduce' must be loop indices of nl.affine_range "
                                         "(or numbers), not '{}'",
                                         trace::type_name(v)));
  };
  if (indices.kind == Value::Kind::Tuple || indices.kind == Value::Kind::List) {
    for (const Value &v : indices.seq().items)
      check_index(v);
  } else {
    check_index(indices);
  }
  auto out = std::make_shared<LoopReduceObject>();
  out->x = Value::object(x);
  out->op = std::move(op);
  if (const MaskObject *m = c.mask())
    out->mask = m->text;
  if (const Value *name = c.get("name")) {
    if (name->kind != Value::Kind::Str)
      raise_error("TypeError", fmt::format("'name' of 'loop_reduce' must be a str, not '{}'", trace::type_name(*name)));
    out->name = name->str_text();
  }
  return Value::object(std::move(out));
}

constexpr ir::Engine kScalar = ir::Engine::Scalar;
constexpr ir::Engine kVector = ir::Engine::Vector;
constexpr ir::Opcode kAct = ir::Opcode::Activation;
constexpr ir::Opcode kTT = ir::Opcode::TensorTensor;
constexpr ir::Opcode kReduce = ir::Opcode::TensorReduce;

// One line per op: the NumPy name that means the same op on a tile closes each entry.
#define NKI_UNARY(name)                                                                                                \
  OpDef { name "(x: tile, *, dtype: dtype? = None, mask: mask? = None)", kScalar, kAct, lower_unary, {}, name }
#define NKI_BINARY(name)                                                                                               \
  OpDef {                                                                                                              \
    name "(x: tile_or_scalar, y: tile_or_scalar, *, dtype: dtype? = None, mask: mask? = None)", kVector, kTT,          \
        lower_binary, {}, name                                                                                         \
  }
// Comparisons and logical ops give bool tiles unless told otherwise (NKI's `dtype=bool`).
#define NKI_COMPARE(name)                                                                                              \
  OpDef {                                                                                                              \
    name "(x: tile_or_scalar, y: tile_or_scalar, *, dtype: dtype = 'bool', mask: mask? = None)", kVector, kTT,         \
        lower_binary, {}, name                                                                                         \
  }
#define NKI_REDUCE(name)                                                                                               \
  OpDef {                                                                                                              \
    name "(x: tile, axis: any, *, dtype: dtype? = None, mask: mask? = None, keepdims: bool = False)", kVector,         \
        kReduce, lower_reduce, {}, name                                                                                \
  }

const OpDef kOps[] = {
    // Activation functions, f(x) on the Scalar engine.
    NKI_UNARY("exp"),
    NKI_UNARY("log"),
    NKI_UNARY("sqrt"),
    NKI_UNARY("rsqrt"),
    NKI_UNARY("tanh"),
    NKI_UNARY("sigmoid"),
    NKI_UNARY("relu"),
    NKI_UNARY("gelu"),
    NKI_UNARY("silu"),
    NKI_UNARY("erf"),
    NKI_UNARY("softplus"),
    NKI_UNARY("square"),
    NKI_UNARY("abs"),
    NKI_UNARY("negative"),
    NKI_UNARY("sign"),
    NKI_UNARY("floor"),
    NKI_UNARY("ceil"),
    NKI_UNARY("reciprocal"),
    NKI_UNARY("sin"),
    NKI_UNARY("cos"),
    NKI_UNARY("arctan"),
    NKI_UNARY("gelu_apprx_tanh"),
    NKI_UNARY("gelu_dx"),
    NKI_UNARY("silu_dx"),
    NKI_UNARY("mish"),
    OpDef{"logical_not(x: tile, *, dtype: dtype = 'bool', mask: mask? = None)",
          kScalar,
          kAct,
          lower_unary,
          {},
          "logical_not"},
    NKI_UNARY("trunc"),
    // Binary ALU ops of two tiles, or a tile and a scalar, on the Vector engine.
    NKI_BINARY("add"),
    NKI_BINARY("subtract"),
    NKI_BINARY("multiply"),
    NKI_BINARY("divide"),
    NKI_BINARY("power"),
    NKI_BINARY("maximum"),
    NKI_BINARY("minimum"),
    NKI_BINARY("mod"),
    NKI_BINARY("fmod"),
    NKI_COMPARE("equal"),
    NKI_COMPARE("not_equal"),
    NKI_COMPARE("greater"),
    NKI_COMPARE("greater_equal"),
    NKI_COMPARE("less"),
    NKI_COMPARE("less_equal"),
    NKI_COMPARE("logical_and"),
    NKI_COMPARE("logical_or"),
    NKI_COMPARE("logical_xor"),
    NKI_BINARY("bitwise_and"),
    NKI_BINARY("bitwise_or"),
    NKI_BINARY("bitwise_xor"),
    NKI_BINARY("left_shift"),
    NKI_BINARY("right_shift"),
    // Reductions along free axes.
    NKI_REDUCE("sum"),
    NKI_REDUCE("max"),
    NKI_REDUCE("min"),
    NKI_REDUCE("mean"),
    NKI_REDUCE("prod"),
    OpDef{"all(x: tile, axis: any, *, dtype: dtype = 'bool', mask: mask? = None, keepdims: bool = False)",
          kVector,
          kReduce,
          lower_reduce,
          {},
          "all"},
    NKI_REDUCE("any"),
    {"loop_reduce(x: tile, op: op, loop_indices: any, *, dtype: dtype? = None, mask: mask? = None, name: any = None)",
     kVector, kTT, lower_loop_reduce},
    // Selection.
    {"where(condition: tile, x: tile_or_scalar, y: tile_or_scalar, *, dtype: dtype? = None, mask: mask? = None)",
     kVector, ir::Opcode::Select, lower_where},
    // The Tensor engine.
    {"matmul(x: tile, y: tile, *, transpose_x: bool = False, mask: mask? = None)", ir::Engine::Tensor,
     ir::Opcode::MatMul, lower_matmul},
    {"transpose(x: tile, *, dtype: dtype? = None, mask: mask? = None)", ir::Engine::Tensor, ir::Opcode::Transpose,
     lower_transpose},
};

#undef NKI_UNARY
#undef NKI_BINARY
#undef NKI_REDUCE
#undef NKI_COMPARE

} // namespace

std::span<const OpDef> language_math_ops() { return kOps; }

void add_numpy_aliases(ModuleObject &np, ModuleObject &nl) {
  // NumPy's ufuncs name NKI ops when passed as `op=` (np.add, np.exp, np.max); called on tiles
  // they behave as the nl function of the same name (lib: on host values they are host NumPy).
  auto alias = [&](std::string_view np_name, std::string_view nl_name) {
    if (Value *v = nl.globals().find_local(nl_name))
      trace::set_tile_function(np, np_name, *v);
  };
  for (std::span<const OpDef> table : {language_math_ops(), language_memory_ops()})
    for (const OpDef &def : table)
      if (!def.numpy.empty())
        alias(def.numpy, def.signature.substr(0, def.signature.find('(')));
  alias("amax", "max");
  alias("amin", "min");
  alias("true_divide", "divide");
}

} // namespace nkicc::nki
