"""A tiled matmul for the persistent cache tests: result[M, N] = lhsT.T @ rhs, M and K in steps
of 128, N in steps of `tile_n` (a constant argument, so entries carry constant values)."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def mm(lhsT, rhs, tile_n=512):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // tile_n):
            acc = nl.zeros((128, tile_n), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                b = nl.load(rhs[k * 128:(k + 1) * 128, n * tile_n:(n + 1) * tile_n])
                acc += nl.matmul(a, b, transpose_x=True)
            nl.store(result[m * 128:(m + 1) * 128, n * tile_n:(n + 1) * tile_n], value=nl.copy(acc, dtype=result.dtype))
    return result


@nki.jit
def scale_inplace(x):
    """Doubles x in place: the returned tensor is the input (an operand-output alias)."""
    t = nl.load(x)
    nl.store(x, value=nl.add(t, t))
    return x
