import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import numpy as np


@nki.jit
def rmsnorm(a_tensor, g_tensor):
    """out = a / sqrt(mean(a^2, axis=1)) * g, 128 rows at a time."""
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    rows, cols = a_tensor.shape
    assert g_tensor.shape[0] == cols

    ix = nl.arange(128)[:, None]
    iw = nl.arange(1)[:, None]
    iy = nl.arange(cols)[None, :]
    g_tile = nl.load(g_tensor.reshape((1, cols))[iw, iy])

    for i in nl.affine_range(math.ceil(rows / 128)):
        a_tile = nl.load(a_tensor[i * 128 + ix, iy], mask=(i * 128 + ix < rows))
        squared = nl.multiply(a_tile, a_tile, mask=(i * 128 + ix < rows))
        square_sum = nl.sum(squared, axis=[1])
        mean = square_sum / cols
        rms_reciprocal = nl.rsqrt(mean)
        out_tile = nl.multiply(a_tile, rms_reciprocal)
        g_bcast = g_tile.broadcast_to((128, cols))
        out_tile = nl.multiply(out_tile, g_bcast)
        nl.store(out_tensor[i * 128 + ix, iy], value=out_tile, mask=(i * 128 + ix < rows))
    return out_tensor


@nki.jit
def layernorm(input_tensor, epsilon, gamma_vector, beta_vector):
    """Normalizes each row with bn_stats/bn_aggr, then scales by gamma and shifts by beta."""
    output_tensor = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype, buffer=nl.shared_hbm)
    num_rows, num_cols = input_tensor.shape
    assert num_cols <= nl.tile_size.bn_stats_fmax

    shift_scale = nl.load(gamma_vector.reshape((1, num_cols)))
    shift = nl.load(beta_vector.reshape((1, num_cols)))
    for i in nl.affine_range(num_rows // nl.tile_size.pmax):
        rows = nl.ds(i * nl.tile_size.pmax, nl.tile_size.pmax)
        input_tile = nl.load(input_tensor[rows, :])
        stats = nisa.bn_stats(input_tile)
        mean_var = nisa.bn_aggr(stats)
        mean = mean_var[:, 0:1]
        var = mean_var[:, 1:2]
        rstd = nl.rsqrt(var + epsilon)
        shifted = nisa.tensor_scalar(input_tile, op0=np.subtract, operand0=mean,
                                     op1=np.multiply, operand1=rstd)
        scaled = nl.multiply(shifted, shift_scale.broadcast_to((nl.tile_size.pmax, num_cols)))
        out_tile = nl.add(scaled, shift.broadcast_to((nl.tile_size.pmax, num_cols)))
        nl.store(output_tensor[rows, :], value=out_tile)
    return output_tensor
