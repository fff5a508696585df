"""Matrix multiplication kernels of increasing optimization, in the style of the NKI tutorials.

Each computes result[M, N] = lhsT.T @ rhs for lhsT[K, M] and rhs[K, N].
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def matmul_single_tile(lhsT, rhs):
    """One 128 x 128 x 512 tile: a single matmul."""
    result = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    lhs_tile = nl.load(lhsT)
    rhs_tile = nl.load(rhs)
    product = nisa.nc_matmul(lhs_tile, rhs_tile)
    nl.store(result, value=product)
    return result


@nki.jit
def matmul_tiled(lhsT, rhs):
    """Tiles M by 128, N by 512 and accumulates K in PSUM, 128 at a time."""
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2, f"contraction dimensions differ: {K} and {K2}"
    TILE_M = nl.tile_size.gemm_stationary_fmax
    TILE_K = nl.tile_size.pmax
    TILE_N = nl.tile_size.gemm_moving_fmax
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lhs_tile = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                rhs_tile = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                acc += nl.matmul(lhs_tile, rhs_tile, transpose_x=True)
            out_tile = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=out_tile)
    return result


@nki.jit
def matmul_hoisted(lhsT, rhs):
    """Loads each row band of lhsT once per m, and blocks N by 2048 to reuse it."""
    K, M = lhsT.shape
    _, N = rhs.shape
    TILE_M, TILE_K, TILE_N = 128, 128, 512
    BLOCK_N = 2048
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        lhs_tiles = []
        for k in nl.static_range(K // TILE_K):
            lhs_tiles.append(nl.load(lhsT[nl.ds(k * TILE_K, TILE_K), nl.ds(m * TILE_M, TILE_M)]))
        for nb in nl.affine_range(N // BLOCK_N):
            for n in nl.affine_range(BLOCK_N // TILE_N):
                col = nb * BLOCK_N + n * TILE_N
                acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                for k in nl.affine_range(K // TILE_K):
                    rhs_tile = nl.load(rhs[nl.ds(k * TILE_K, TILE_K), nl.ds(col, TILE_N)])
                    acc += nisa.nc_matmul(lhs_tiles[k], rhs_tile)
                nl.store(result[nl.ds(m * TILE_M, TILE_M), nl.ds(col, TILE_N)], value=nl.copy(acc, dtype=lhsT.dtype))
    return result


if __name__ == "__main__":
    import numpy as np

    lhsT = np.random.rand(512, 256).astype(np.float32)
    rhs = np.random.rand(512, 1024).astype(np.float32)
    print(np.allclose(matmul_tiled(lhsT, rhs), lhsT.T @ rhs))
