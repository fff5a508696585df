// nl's compute ops: element-wise math (activations on the Scalar engine, binary ALU ops on the
// Vector engine), reductions over free axes, nl.matmul and nl.transpose.
#include "lowering.h"
#include "op_table.h"
#include "runtime.h"

namespace nkicc::nki {

namespace {

Value lower_unary(OpCall &c) {
  return activation(c.kb(), c.name(), *c.required_tensor("x"), c.dtype(), nullptr, nullptr, {});
}

Value lower_binary(OpCall &c) {
  return elementwise(c.kb(), c.name(), c.required("x"), c.required("y"), c.dtype(), {});
}

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

constexpr ir::Engine kScalar = ir::Engine::Scalar;
constexpr ir::Engine kVector = ir::Engine::Vector;
constexpr ir::Opcode kAct = ir::Opcode::Activation;
constexpr ir::Opcode kTT = ir::Opcode::TensorTensor;
constexpr ir::Opcode kReduce = ir::Opcode::TensorReduce;

// One line per op: the NumPy name that means the same op on a tile closes each entry.
#define NKI_UNARY(name) OpDef{name "(x: tile, *, dtype: dtype? = None, mask: mask? = None)", kScalar, kAct, lower_unary, {}, name}
#define NKI_BINARY(name)                                                                                               \
  OpDef{name "(x: tile_or_scalar, y: tile_or_scalar, *, dtype: dtype? = None, mask: mask? = None)", kVector, kTT,     \
        lower_binary, {}, name}
// Comparisons and logical ops give bool tiles unless told otherwise (NKI's `dtype=bool`).
#define NKI_COMPARE(name)                                                                                              \
  OpDef{name "(x: tile_or_scalar, y: tile_or_scalar, *, dtype: dtype = 'bool', mask: mask? = None)", kVector, kTT,     \
        lower_binary, {}, name}
#define NKI_REDUCE(name)                                                                                               \
  OpDef{name "(x: tile, axis: any, *, dtype: dtype? = None, mask: mask? = None, keepdims: bool = False)", kVector,    \
        kReduce, lower_reduce, {}, name}

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
    OpDef{"logical_not(x: tile, *, dtype: dtype = 'bool', mask: mask? = None)", kScalar, kAct, lower_unary, {},
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
    OpDef{"all(x: tile, axis: any, *, dtype: dtype = 'bool', mask: mask? = None, keepdims: bool = False)", kVector,
          kReduce, lower_reduce, {}, "all"},
    NKI_REDUCE("any"),
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
  // they behave as the nl function of the same name.
  auto alias = [&](std::string_view np_name, std::string_view nl_name) {
    if (Value *v = nl.globals().find_local(nl_name))
      np.globals().set(np_name, *v);
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
