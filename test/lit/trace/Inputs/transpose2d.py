import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def transpose_2d(in_tensor, shape2D):
    """Transposes the last two dimensions (a, b) of in_tensor[X, a*b] into out[X, b*a]."""
    X, Y = in_tensor.shape
    a, b = shape2D
    assert a * b == Y
    out_tensor = nl.ndarray((X, Y), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    ix = nl.arange(X)[:, None]
    for i in nl.affine_range(a):
        for j in nl.affine_range(b):
            tile = nl.load(in_tensor[ix, i * b + j])
            nl.store(out_tensor[ix, j * a + i], value=tile)
    return out_tensor


@nki.jit
def transpose_tile(in_tensor):
    """A [128, 128] block transposed on the Tensor engine."""
    out_tensor = nl.ndarray((in_tensor.shape[1], in_tensor.shape[0]), dtype=in_tensor.dtype,
                            buffer=nl.shared_hbm)
    tile = nl.load(in_tensor)
    flipped = nisa.nc_transpose(tile)
    nl.store(out_tensor, value=nl.copy(flipped, dtype=in_tensor.dtype))
    return out_tensor
