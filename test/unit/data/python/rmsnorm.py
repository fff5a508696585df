# RMSNorm over the rows of a [N, D] tensor, 128 rows at a time (nkicc test input).
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

EPS = 1e-6
PMAX: int = 128


@nki.jit
def nki_rmsnorm_kernel(a_tensor, g_tensor, eps=EPS):
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)

    # Make sure shapes match
    assert a_tensor.shape[1] == g_tensor.shape[0]

    ix = nl.arange(PMAX)[:, None]
    iw = nl.arange(1)[:, None]
    iy = nl.arange(a_tensor.shape[1])[None, :]
    num_rows = a_tensor.shape[0]

    g_tile = nl.load(g_tensor.reshape((1, g_tensor.shape[0]))[iw, iy])

    for i in nl.affine_range(math.ceil(a_tensor.shape[0] / PMAX)):
        a_tile = nl.load(a_tensor[i * PMAX + ix, iy], mask=(i * PMAX + ix < num_rows))
        in_square = nl.square(a_tile)
        square_sum = nl.sum(in_square, axis=[1])
        mean = square_sum / a_tensor.shape[1]
        rms_reciprocal = nl.rsqrt(mean + eps)
        out_tile = nl.multiply(a_tile, rms_reciprocal)
        g_bcast = g_tile.broadcast_to((PMAX, g_tensor.shape[0]))
        out_tile[...] = nl.multiply(out_tile, g_bcast, mask=(i * PMAX + ix < num_rows))
        nl.store(out_tensor[i * PMAX + ix, iy], value=out_tile,
                 mask=(i * PMAX + ix < num_rows))

    return out_tensor


def reference(a, g, eps=EPS):
    import numpy as np
    rms = np.sqrt(np.mean(np.square(a), axis=-1, keepdims=True) + eps)
    return a / rms * g
