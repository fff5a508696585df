import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import numpy as np


@nki.jit
def softmax(x):
    """Row-wise softmax of x[128, N]."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    row_max = nl.max(tile, axis=1, keepdims=True)
    shifted = nl.subtract(tile, row_max)
    exps = nl.exp(shifted)
    sums = nl.sum(exps, axis=1, keepdims=True)
    nl.store(out, value=nl.divide(exps, sums))
    return out


@nki.jit
def fused_self_attention(q_ref, k_ref, v_ref, use_causal_mask=False):
    """softmax(Q @ K.T * scale [+ causal mask]) @ V for one 128-token block.

    q_ref, k_ref: [d_head, seqlen] (already transposed), v_ref: [seqlen, d_head].
    """
    d_head, seqlen = q_ref.shape
    assert d_head <= 128 and seqlen == 128, "one block of 128 tokens"
    out_ref = nl.ndarray((seqlen, d_head), dtype=q_ref.dtype, buffer=nl.shared_hbm)
    softmax_scale = 0.125

    q_tile = nl.load(q_ref)
    k_tile = nl.load(k_ref)
    v_tile = nl.load(v_ref)

    # scores[q, k] = sum_d q[d, q] * k[d, k]
    qk = nisa.nc_matmul(q_tile, k_tile)
    scores = nisa.activation(np.copy, qk, scale=softmax_scale)
    if use_causal_mask:
        i_q = nl.arange(seqlen)[:, None]
        i_k = nl.arange(seqlen)[None, :]
        scores = nisa.affine_select(pred=(i_q - i_k >= 0), on_true_tile=scores, on_false_value=-9984.0)

    neg_max = nisa.tensor_reduce(np.max, scores, axis=(1,), negate=True, keepdims=True)
    exps = nisa.activation(np.exp, scores, bias=neg_max, scale=1.0)
    sums = nl.sum(exps, axis=1, keepdims=True)
    inv = nl.reciprocal(sums)

    exps_t = nl.copy(nisa.nc_transpose(exps), dtype=nl.float32)
    attn = nisa.nc_matmul(exps_t, v_tile)
    out_tile = nl.multiply(attn, inv, dtype=q_ref.dtype)
    nl.store(out_ref, value=out_tile)
    return out_ref
