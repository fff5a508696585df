"""2-D convolution, partition by partition: nkicc's bundled internal kernels `conv2d_pbp_*`.

nkicc's own version (not a copy) of the public neuron-team convolution kernels
(aws-neuron/nki-samples, contributed/neuron-team-kernels/conv.py) that carry these names, with
their signatures and conventions: the output is an output parameter the kernel writes, nothing is
returned, and layouts are named as XLA's dim labels (f features, b batch, 0 and 1 the spatial
dimensions; i and o the filter's input and output features):

  conv2d_pbp_0f1b_0i1o_01fb_experimental_1(img_ref, filter_ref, out_ref, padding, stride, ...)
      img [H, C_in, W, N], filter [KH, C_in, KW, C_out] -> out [OH, OW, C_out, N]

The filter rows are the contraction (partition) dimension: each output pixel (oh, ow)
accumulates in PSUM, per input channel and filter column, one matmul of the filter tile
[KH, C_out] (stationary) against the image window [KH, N] (moving) under it, so a call performs
C_out * N * OH * OW * C_in * KH * KW MACs (C_out in tiles of 128, N in tiles of 512). Padding
windows are zero-filled, so padded positions cost the same matmuls. Stride is (1, 1), as in the
public kernel.

A real conv.py (with the transpose.py and common.py it imports) in an -I folder replaces this
file under the same registry entry.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

C_OUT_TILE = 128  # output features per matmul: the stationary operand's free size
N_TILE = 512      # batch per matmul: one PSUM bank of float32


def _pairs_to_low(padding):
    """((top, bottom), (left, right)) -> (top, left); (h, w) as it is."""
    if isinstance(padding[0], (list, tuple)):
        return [p[0] for p in padding]
    return list(padding)


def conv2d_pbp_0f1b_0i1o_01fb_experimental_1(img_ref, filter_ref, out_ref, padding, stride, rhs_dilation=None,
                                              groups=None, **kwargs):
    H, C_in, W, N = img_ref.shape
    KH, filter_c_in, KW, C_out = filter_ref.shape
    OH, OW, out_c, out_n = out_ref.shape
    assert filter_c_in == C_in, f"the filter has {filter_c_in} input features, the image {C_in}"
    assert out_c == C_out, f"the output has {out_c} features, the filter {C_out}"
    assert out_n == N, f"the output has batch {out_n}, the image {N}"
    stride_h, stride_w = stride
    assert (stride_h, stride_w) == (1, 1), f"stride {tuple(stride)} is not supported, only (1, 1)"
    pad_h, pad_w = _pairs_to_low(padding)
    assert (H + 2 * pad_h - KH) // stride_h + 1 == OH, f"OH = {OH} does not follow from H = {H}, KH = {KH}"
    assert (W + 2 * pad_w - KW) // stride_w + 1 == OW, f"OW = {OW} does not follow from W = {W}, KW = {KW}"
    assert KH <= nl.tile_size.pmax, f"filter height {KH} exceeds the {nl.tile_size.pmax} partitions"
    dtype = img_ref.dtype

    # Rows of the image with (column, batch) flattened: a window is one rectangle of it.
    img_rows = img_ref.reshape((H, C_in, W * N))
    for co0 in range(0, C_out, C_OUT_TILE):
        co = min(C_OUT_TILE, C_out - co0)
        # The whole filter for these output features stays on chip: [KH, co] per (c_in, kw).
        weights = []
        for ci in nl.static_range(C_in):
            row = []
            for kw in nl.static_range(KW):
                row.append(nl.load(filter_ref[0:KH, ci, kw, co0:co0 + co]))
            weights.append(row)
        for oh in nl.static_range(OH):
            top = oh * stride_h - pad_h  # image row under filter row 0
            r0, r1 = max(0, -top), min(KH, H - top)
            for ow in nl.static_range(OW):
                left = ow * stride_w - pad_w  # image column under filter column 0
                k0, k1 = max(0, -left), min(KW, W - left)
                acc = []
                for n0 in range(0, N, N_TILE):
                    acc.append(nl.zeros((co, min(N_TILE, N - n0)), dtype=nl.float32, buffer=nl.psum))
                for ci in nl.static_range(C_in):
                    rows = img_rows[top + r0:top + r1, ci, (left + k0) * N:(left + k1) * N]
                    if r0 > 0 or r1 < KH or k0 > 0 or k1 < KW:
                        # The filter overhangs the image: zeros where it does.
                        window = nisa.memset(shape=(KH, KW * N), value=0, dtype=dtype)
                        window[r0:r1, k0 * N:k1 * N] = nl.load(rows)
                    else:
                        window = nl.load(rows)
                    for t in range(len(acc)):
                        n0 = t * N_TILE
                        nt = min(N_TILE, N - n0)
                        for kw in nl.static_range(KW):
                            acc[t][...] += nisa.nc_matmul(weights[ci][kw], window[:, kw * N + n0:kw * N + n0 + nt])
                for t in range(len(acc)):
                    n0 = t * N_TILE
                    nt = min(N_TILE, N - n0)
                    nl.store(out_ref[oh, ow, co0:co0 + co, n0:n0 + nt], value=nl.copy(acc[t], dtype=out_ref.dtype))
