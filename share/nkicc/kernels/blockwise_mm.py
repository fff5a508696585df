"""Internal kernel: a block-wise matrix multiplication result[M, N] = lhsT.T @ rhs.

lhsT[K, M] and rhs[K, N]; the N dimension is processed in blocks of `block_size` columns,
each block tiled 128 (M) x 512 (N) with K accumulated in PSUM 128 rows at a time, so it performs
exactly M * N * K multiply-accumulates.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def blockwise_mm(lhsT, rhs, block_size=512):
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2, f"contraction dimensions differ: {K} and {K2}"
    TILE_K = nl.tile_size.pmax
    TILE_M = nl.tile_size.gemm_stationary_fmax
    TILE_N = min(nl.tile_size.gemm_moving_fmax, block_size)
    assert K % TILE_K == 0 and M % TILE_M == 0, "K and M must be multiples of 128"
    assert block_size % TILE_N == 0 and N % block_size == 0, "N must be a multiple of block_size"
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for block in nl.affine_range(N // block_size):
        for m in nl.affine_range(M // TILE_M):
            for n in nl.affine_range(block_size // TILE_N):
                col = block * block_size + n * TILE_N
                acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                for k in nl.affine_range(K // TILE_K):
                    lhs_tile = nl.load(lhsT[nl.ds(k * TILE_K, TILE_K), nl.ds(m * TILE_M, TILE_M)])
                    rhs_tile = nl.load(rhs[nl.ds(k * TILE_K, TILE_K), nl.ds(col, TILE_N)])
                    acc += nisa.nc_matmul(lhs_tile, rhs_tile)
                nl.store(result[nl.ds(m * TILE_M, TILE_M), nl.ds(col, TILE_N)],
                         value=nl.copy(acc, dtype=result.dtype))
    return result
