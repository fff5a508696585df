"""Kernels that run every op the tracer can emit, for the simulator's tests: one output per op
name, so a NumPy reference can check each on its own."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import numpy as np

UNARY = [("exp", nl.exp), ("log", nl.log), ("sqrt", nl.sqrt), ("rsqrt", nl.rsqrt), ("tanh", nl.tanh),
         ("sigmoid", nl.sigmoid), ("relu", nl.relu), ("gelu", nl.gelu), ("silu", nl.silu), ("erf", nl.erf),
         ("softplus", nl.softplus), ("square", nl.square), ("abs", nl.abs), ("negative", nl.negative),
         ("sign", nl.sign), ("floor", nl.floor), ("ceil", nl.ceil), ("reciprocal", nl.reciprocal),
         ("sin", nl.sin), ("cos", nl.cos), ("arctan", nl.arctan), ("gelu_apprx_tanh", nl.gelu_apprx_tanh),
         ("gelu_dx", nl.gelu_dx), ("silu_dx", nl.silu_dx), ("mish", nl.mish), ("logical_not", nl.logical_not),
         ("trunc", nl.trunc)]

BINARY = [("add", nl.add), ("subtract", nl.subtract), ("multiply", nl.multiply), ("divide", nl.divide),
          ("power", nl.power), ("maximum", nl.maximum), ("minimum", nl.minimum), ("mod", nl.mod),
          ("fmod", nl.fmod), ("equal", nl.equal), ("not_equal", nl.not_equal), ("greater", nl.greater),
          ("greater_equal", nl.greater_equal), ("less", nl.less), ("less_equal", nl.less_equal),
          ("logical_and", nl.logical_and), ("logical_or", nl.logical_or), ("logical_xor", nl.logical_xor)]

BITWISE = [("bitwise_and", nl.bitwise_and), ("bitwise_or", nl.bitwise_or), ("bitwise_xor", nl.bitwise_xor),
           ("int_add", nl.add), ("int_mod", nl.mod)]


@nki.jit
def unary_ops(x):
    t = nl.load(x)
    outs = []
    for name, fn in UNARY:
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name=name)
        nl.store(out, value=fn(t))
        outs.append(out)
    return tuple(outs)


@nki.jit
def binary_ops(x, y):
    a = nl.load(x)
    b = nl.load(y)
    outs = []
    for name, fn in BINARY:
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name=name)
        nl.store(out, value=fn(a, b))
        outs.append(out)
    return tuple(outs)


@nki.jit
def integer_ops(x, y):
    a = nl.load(x)
    b = nl.load(y)
    outs = []
    for name, fn in BITWISE:
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name=name)
        nl.store(out, value=fn(a, b))
        outs.append(out)
    shl = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="left_shift")
    nl.store(shl, value=nl.left_shift(a, 2))
    shr = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="right_shift")
    nl.store(shr, value=nl.right_shift(a, 1))
    # int32 * 100 stored as int8 saturates.
    sat = nl.ndarray(x.shape, dtype=nl.int8, buffer=nl.shared_hbm, name="saturated")
    nl.store(sat, value=nl.multiply(a, 100, dtype=nl.int8))
    return tuple(outs) + (shl, shr, sat)


@nki.jit
def scalar_ops(x, col):
    """tensor_scalar with constants, reversed operands and a per-partition tile; the Scalar
    engine's activation with a bias tile and a scale tile or constant."""
    t = nl.load(x)
    c = nl.load(col)
    two_stage = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(two_stage, value=nisa.tensor_scalar(t, op0=np.multiply, operand0=2.0, op1=np.subtract, operand1=c,
                                                 reverse1=True))
    reversed_sub = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(reversed_sub, value=1.0 - t)
    scaled = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(scaled, value=t * 0.125)
    act_bias_scale = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(act_bias_scale, value=nisa.activation(np.exp, t, bias=c, scale=c))
    act_scale = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(act_scale, value=nisa.activation(nl.tanh, t, scale=0.5))
    act_bias = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(act_bias, value=nisa.activation(np.copy, t, bias=c))
    return two_stage, reversed_sub, scaled, act_bias_scale, act_scale, act_bias


@nki.jit
def reductions(x, x3):
    t = nl.load(x)
    t3 = nl.load(x3)
    P = x.shape[0]
    outs = []
    for name, fn in [("sum", nl.sum), ("max", nl.max), ("min", nl.min), ("mean", nl.mean), ("prod", nl.prod)]:
        out = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm, name=name)
        nl.store(out, value=fn(t, axis=1, keepdims=True))
        outs.append(out)
    positive = nl.greater(t, 0.0)
    for name, fn in [("all", nl.all), ("any", nl.any)]:
        out = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm, name=name)
        nl.store(out, value=fn(positive, axis=1, keepdims=True))
        outs.append(out)
    neg_sum = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm, name="neg_sum")
    nl.store(neg_sum, value=nisa.tensor_reduce(np.add, t, axis=(1,), negate=True, keepdims=True))
    inner = nl.ndarray((P, x3.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm, name="inner")
    nl.store(inner, value=nl.sum(t3, axis=2))
    both = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm, name="both")
    nl.store(both, value=nisa.tensor_reduce(np.max, t3, axis=(1, 2), keepdims=True).reshape((P, 1)))
    return tuple(outs) + (neg_sum, inner, both)


@nki.jit
def movement(x, w):
    """Copies and casts, transposes, DMA, iota, memset, affine_select."""
    P, F = x.shape
    t = nl.load(x)
    as_bf16 = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nl.store(as_bf16, value=nisa.tensor_copy(t, dtype=nl.bfloat16))
    as_f16 = nl.ndarray(x.shape, dtype=nl.float16, buffer=nl.shared_hbm)
    nl.store(as_f16, value=nl.copy(t, dtype=nl.float16))
    as_f8 = nl.ndarray(x.shape, dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
    nl.store(as_f8, value=nl.copy(nl.multiply(t, 300.0), dtype=nl.float8_e4m3))
    as_i8 = nl.ndarray(x.shape, dtype=nl.int8, buffer=nl.shared_hbm)
    nl.store(as_i8, value=nl.copy(nl.multiply(t, 200.0), dtype=nl.int8))
    flipped = nl.ndarray((F, P), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(flipped, value=nl.transpose(t))
    loaded_t = nl.ndarray((F, P), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(loaded_t, value=nl.load_transpose2d(x))
    copied = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=copied, src=x)
    iota_free = nl.ndarray((1, F), dtype=nl.int32, buffer=nl.shared_hbm)
    nl.store(iota_free, value=nisa.iota(nl.arange(F)[None, :] * 3 + 5, dtype=nl.int32))
    iota_part = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(iota_part, value=nisa.iota(nl.arange(P)[:, None], dtype=nl.float32))
    filled = nl.ndarray((P, 8), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(filled, value=nl.full((P, 8), 3.5, nl.float32))
    i_p = nl.arange(P)[:, None]
    i_f = nl.arange(F)[None, :]
    selected = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(selected, value=nisa.affine_select(pred=(i_p * 2 - i_f < 10), on_true_tile=t, on_false_value=-7.0))
    # A [1, F] row broadcast over the partitions and a strided view (every other column).
    row = nl.load(w)
    broadcast = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(broadcast, value=nl.add(t, row.broadcast_to((P, F))))
    strided = nl.ndarray((P, F // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(strided, value=nl.load(x[:, 0:F:2]))
    return (as_bf16, as_f16, as_f8, as_i8, flipped, loaded_t, copied, iota_free, iota_part, filled, selected,
            broadcast, strided)
