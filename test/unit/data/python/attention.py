# Fused self-attention (softmax(Q K^T) V) for one head, with tiling helpers, star-unpacking,
# dict/set displays and nested comprehensions (nkicc test input).
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc.nki.language import par_dim

CONFIG = {"seq_tile": 128, "d_head": 128, **{"softmax_scale": 0.125}}
SUPPORTED = {np.float16, np.float32, *()}
KINDS = ("fwd", "bwd")[0:1]


@nki.jit
def fused_self_attn_for_SD_small_head_size(q_ref, k_ref, v_ref, use_causal_mask=False,
                                           mixed_percision=True):
    kernel_dtype = q_ref.dtype
    pe_in_dt = nl.bfloat16 if mixed_percision else np.float32
    assert q_ref.dtype == k_ref.dtype == v_ref.dtype

    seqlen, d_head = q_ref.shape
    assert tuple(k_ref.shape) == (seqlen, d_head), 'Input shape mismatch!'
    assert d_head <= 128, f"Cannot use this kernel for d_head > 128"
    out_ref = nl.ndarray((seqlen, d_head), dtype=q_ref.dtype, buffer=nl.shared_hbm)

    softmax_scale = CONFIG["softmax_scale"]
    q_seq_n_tiles, q_seq_tile_size = seqlen // 128, 128
    k_seq_n_tiles, k_seq_tile_size = seqlen // 128, 128
    v_seq_n_tiles, v_seq_tile_size = seqlen // 128, 128

    ip_qk, if_qk = nl.mgrid[0:d_head, 0:q_seq_tile_size]
    trans_v = nl.ndarray((par_dim(v_seq_tile_size), v_seq_n_tiles, d_head), dtype=pe_in_dt)
    for i_k_seq_tile in nl.affine_range(v_seq_n_tiles):
        ip_v = nl.arange(v_seq_tile_size)[:, None]
        if_v = nl.arange(d_head)[None, :]
        trans_v[ip_v, i_k_seq_tile, if_v] = nl.load(
            v_ref[i_k_seq_tile * k_seq_tile_size + ip_v, if_v], dtype=pe_in_dt)

    for i_q_seq_tile in nl.affine_range(q_seq_n_tiles):
        qk_res_buf = nl.ndarray((par_dim(q_seq_tile_size), seqlen), dtype=kernel_dtype)
        neg_max_res = nl.ndarray((par_dim(q_seq_tile_size), k_seq_n_tiles), dtype=kernel_dtype)
        for i_k_seq_tile in nl.affine_range(k_seq_n_tiles):
            qk_psum = nl.zeros((par_dim(q_seq_tile_size), k_seq_tile_size), dtype=np.float32,
                               buffer=nl.psum)
            qk_psum[...] += nisa.nc_matmul(moving=q_ref[i_q_seq_tile], stationary=k_ref[i_k_seq_tile])
            if use_causal_mask:
                qk_res_buf[:, nl.ds(i_k_seq_tile * k_seq_tile_size, k_seq_tile_size)] = nisa.affine_select(
                    pred=(i_q_seq_tile * q_seq_tile_size + ip_qk >= i_k_seq_tile * k_seq_tile_size + if_qk),
                    on_true_tile=qk_psum[ip_qk, if_qk], on_false_value=-9984.0, dtype=kernel_dtype)
            elif softmax_scale != 1.0:
                qk_res_buf[:, nl.ds(i_k_seq_tile * k_seq_tile_size, k_seq_tile_size)] = nl.multiply(
                    qk_psum, softmax_scale, dtype=kernel_dtype)
            else:
                qk_res_buf[:, nl.ds(i_k_seq_tile * k_seq_tile_size, k_seq_tile_size)] = nl.copy(
                    qk_psum, dtype=kernel_dtype)
            neg_max_res[:, i_k_seq_tile] = nisa.tensor_reduce(
                np.max, data=qk_res_buf[:, nl.ds(i_k_seq_tile * k_seq_tile_size, k_seq_tile_size)],
                axis=(1,), dtype=kernel_dtype, negate=True)

        neg_max_res_final = nisa.tensor_reduce(np.min, data=neg_max_res, axis=(1,),
                                               dtype=kernel_dtype, negate=False)
        exp_res = nisa.activation(np.exp, data=qk_res_buf, bias=neg_max_res_final, scale=1.0)
        sum_res = nl.sum(exp_res, axis=1, dtype=kernel_dtype)
        inverse_sum_res = nl.reciprocal(sum_res)
        attn_res_psum = nl.zeros((par_dim(q_seq_tile_size), d_head), dtype=np.float32, buffer=nl.psum)
        for i_v_seq_tile in nl.affine_range(v_seq_n_tiles):
            attn_res_psum += nl.matmul(exp_res[:, nl.ds(i_v_seq_tile * v_seq_tile_size, v_seq_tile_size)],
                                       trans_v[:, i_v_seq_tile, :], transpose_x=False)
        attn_res = nl.multiply(attn_res_psum, inverse_sum_res, dtype=kernel_dtype)
        nl.store(out_ref[i_q_seq_tile * q_seq_tile_size + nl.arange(q_seq_tile_size)[:, None],
                         nl.arange(d_head)[None, :]], value=attn_res)
    return out_ref


def split_heads(x, n_heads, *, axis=-1):
    *lead, last = x.shape
    head, rest = divmod(last, n_heads)
    grid = [[(h, t) for t in range(rest or 1)] for h in range(n_heads) if h % 2 == 0]
    pairs = {(h, t): h * t for h, t in (g[0] for g in grid)}
    first, *_ = grid or [None]
    return lead, head, pairs, first, (n := len(pairs))


if __name__ == "__main__":
    q = np.random.rand(4096, 64).astype(np.float32)
    k, v = (np.random.rand(4096, 64).astype(np.float32) for _ in range(2))
    out = fused_self_attn_for_SD_small_head_size(q, k, v)
    print(out.shape, out.dtype, sep=" | ", end="\n")
