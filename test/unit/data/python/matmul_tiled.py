# Tiled matrix multiplication with PSUM accumulation (nkicc test input).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import numpy as np


@nki.jit
def nki_matmul_tiled_(lhsT, rhs, result):
  """result[M, N] = lhsT[K, M].T @ rhs[K, N], in 128x128x512 tiles."""
  K, M = lhsT.shape
  K_, N = rhs.shape
  assert K == K_, f"contraction dims differ: {K} != {K_}"

  TILE_M = nl.tile_size.gemm_stationary_fmax  # 128
  TILE_K = nl.tile_size.pmax  # 128
  TILE_N = nl.tile_size.gemm_moving_fmax  # 512

  for m in nl.affine_range(M // TILE_M):
    for n in nl.affine_range(N // TILE_N):
      res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)

      for k in nl.affine_range(K // TILE_K):
        lhsT_tile = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        rhs_tile = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
        lhsT_tile[...] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K,
                                      m * TILE_M:(m + 1) * TILE_M])
        rhs_tile[...] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
        res_psum += nl.matmul(lhsT_tile[...], rhs_tile[...], transpose_x=True)

      res_sb = nl.copy(res_psum, dtype=result.dtype)
      nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res_sb)


@nki.jit(mode="simulation", platform_target="trn2")
def matmul_isa(lhsT, rhs):
  result = nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=lhsT.dtype, buffer=nl.shared_hbm)
  i_k, i_m = nl.mgrid[0:128, 0:128]
  psum = nisa.nc_matmul(nl.load(lhsT[i_k, i_m]), nl.load(rhs[0:128, 0:512]))
  nl.store(result[...], nl.copy(psum))
  return result


if __name__ == "__main__":
  lhs_small = np.ones((128, 64), dtype=np.float32)
  rhs_small = np.ones((128, 512), dtype=np.float32)
  out = np.zeros((64, 512), dtype=np.float32)
  nki_matmul_tiled_(lhs_small, rhs_small, out)
  expected = lhs_small.T @ rhs_small
  print("ok" if np.allclose(out, expected) else "mismatch")
