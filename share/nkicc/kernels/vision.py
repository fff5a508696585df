"""Nearest-neighbour resize: nkicc's bundled internal kernel `resize_nearest_fixed_dma_kernel`.

nkicc's own version (not a copy) of the public kernel of that name (aws-neuron/nki-samples,
src/nki_samples/reference/vision.py), with its signature and conventions: data_tensor is
[batch, height, width, channels], out_shape the output's (batch and channels unchanged), and
output pixel (h, w) takes input pixel (floor(h * in_h / out_h), floor(w * in_w / out_w)), scale
factors that need not be integers. The pixel sources are worked out at trace time, so the kernel
is DMA copies only, one per output pixel with all its channels; no compute engine, no MACs.

A real vision.py in an -I folder replaces this file under the same registry entry.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def resize_nearest_fixed_dma_kernel(data_tensor, out_shape):
    in_b, in_h, in_w, in_c = data_tensor.shape
    out_b, out_h, out_w, out_c = out_shape
    assert in_b == out_b, "Input batch and output batch must be identical"
    assert in_c == out_c, "Input channel and output channel must be identical"
    out_tensor = nl.ndarray(out_shape, dtype=data_tensor.dtype, buffer=nl.shared_hbm)

    h_scale = 1.0 * in_h / out_h
    w_scale = 1.0 * in_w / out_w
    for b in nl.affine_range(out_b):
        for h in nl.static_range(out_h):
            src_h = int(h * h_scale)
            for w in nl.static_range(out_w):
                src_w = int(w * w_scale)
                nisa.dma_copy(dst=out_tensor[b, h, w, :], src=data_tensor[b, src_h, src_w, :])
    return out_tensor
