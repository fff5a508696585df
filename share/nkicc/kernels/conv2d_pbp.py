"""Internal kernel: a 2-D convolution (stride 1, no padding) in the partition-by-partition style.

x[C_in, H, W] and w[C_in, KH * KW, C_out] -> out[C_out, H - KH + 1, W - KW + 1]. Input channels
are the partition (contraction) dimension; each output row accumulates, in PSUM, one matmul per
kernel position: weights[C_in, C_out] (stationary) against the shifted input row
x[C_in, oh + kh, kw : kw + OW] (moving). It performs C_in * C_out * OH * OW * KH * KW MACs.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def conv2d_pbp_3x3(x, w, kernel_h=3, kernel_w=3):
    C_in, H, W = x.shape
    C_in2, taps, C_out = w.shape
    assert C_in == C_in2, f"input channels differ: {C_in} and {C_in2}"
    assert taps == kernel_h * kernel_w, f"weights hold {taps} taps, not {kernel_h} x {kernel_w}"
    assert C_in <= 128 and C_out <= 128, "channels must fit the 128 partitions"
    OH = H - kernel_h + 1
    OW = W - kernel_w + 1
    assert OW <= 512, "an output row must fit one PSUM bank"
    out = nl.ndarray((C_out, OH, OW), dtype=x.dtype, buffer=nl.shared_hbm)

    weights = []
    for t in nl.static_range(taps):
        weights.append(nl.load(w[:, t, :]))
    for oh in nl.affine_range(OH):
        acc = nl.zeros((C_out, OW), nl.float32, buffer=nl.psum)
        for kh in nl.static_range(kernel_h):
            row = nl.load(x[:, oh + kh, :])
            for kw in nl.static_range(kernel_w):
                acc += nisa.nc_matmul(weights[kh * kernel_w + kw], row[:, kw:kw + OW])
        nl.store(out[:, oh, :], value=nl.copy(acc, dtype=x.dtype))
    return out
