"""A tiled matrix multiplication: result[M, N] = lhsT.T @ rhs, for lhsT[K, M] and rhs[K, N].

The output is cut into 128 x 512 blocks. For each block the contraction dimension K is walked
128 rows at a time, and the Tensor engine accumulates the partial products in one PSUM tile,
which is copied to SBUF and stored once the block is complete.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def nki_matmul_tiled_(lhsT, rhs):
    K, M = lhsT.shape
    K_rhs, N = rhs.shape
    assert K == K_rhs, f"lhsT has {K} rows but rhs has {K_rhs}"

    BLOCK_M = nl.tile_size.gemm_stationary_fmax  # 128 output rows per block
    BLOCK_K = nl.tile_size.pmax  # 128 partitions per contraction step
    BLOCK_N = nl.tile_size.gemm_moving_fmax  # 512 output columns per block
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for bm in nl.affine_range(M // BLOCK_M):
        for bn in nl.affine_range(N // BLOCK_N):
            partial = nl.zeros((BLOCK_M, BLOCK_N), dtype=nl.float32, buffer=nl.psum)
            for bk in nl.affine_range(K // BLOCK_K):
                stationary = nl.load(lhsT[nl.ds(bk * BLOCK_K, BLOCK_K), nl.ds(bm * BLOCK_M, BLOCK_M)])
                moving = nl.load(rhs[nl.ds(bk * BLOCK_K, BLOCK_K), nl.ds(bn * BLOCK_N, BLOCK_N)])
                partial += nisa.nc_matmul(stationary, moving)
            block = nl.copy(partial, dtype=result.dtype)
            nl.store(result[nl.ds(bm * BLOCK_M, BLOCK_M), nl.ds(bn * BLOCK_N, BLOCK_N)], value=block)
    return result


if __name__ == "__main__":
    import numpy as np

    lhsT = np.random.random_sample([1024, 512]).astype(np.float32)
    rhs = np.random.random_sample([1024, 2048]).astype(np.float32)
    print(np.allclose(nki_matmul_tiled_(lhsT, rhs), lhsT.T @ rhs, rtol=1e-2))
