"""Transposes of HBM tensors: nkicc's bundled internal kernel `tiled_dve_transpose_10`.

nkicc's own version (not a copy) of the public neuron-team transpose kernels
(aws-neuron/nki-samples, contributed/neuron-team-kernels/transpose.py), with their entry points,
signatures and conventions: tiled_dve_transpose_10(img_ref, permutation) swaps the last two
dimensions of img_ref (`permutation` must say so, once the dimensions that move together are
merged) and returns the result in private HBM (buffer=nl.hbm), as the real kernel does;
tiled_dve_transpose_210 reverses the last three dimensions; transpose_to_last_dim moves one
dimension to the end. All transposes run on the Vector engine in blocks of at most 32 x 32 (the
largest block nisa.nc_transpose takes there); no matmul, so no MACs.

A real transpose.py in an -I folder replaces this file under the same registry entry.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

# The Vector engine transposes blocks of at most this many rows and columns.
DVE_BLOCK = 32


def _prod(dims):
    count = 1
    for d in dims:
        count *= d
    return count


def _merge_moving_dims(shape, permutation):
    """The permutation on merged dimensions (runs of source axes that stay together) and the
    source shape of those merged dimensions, in source order."""
    runs = []
    for axis in permutation:
        if runs and axis == runs[-1][-1] + 1:
            runs[-1].append(axis)
        else:
            runs.append([axis])
    order = sorted(range(len(runs)), key=lambda r: runs[r][0])
    sizes = [_prod([shape[axis] for axis in run]) for run in runs]
    return order, [sizes[r] for r in order]


def _transpose_planes(src, dst):
    """dst[p, c, r] = src[p, r, c] for views src [P, R, C] and dst [P, C, R], block by block."""
    planes, rows, cols = src.shape
    for p in nl.affine_range(planes):
        for r0 in range(0, rows, DVE_BLOCK):
            nr = min(DVE_BLOCK, rows - r0)
            for c0 in range(0, cols, DVE_BLOCK):
                nc = min(DVE_BLOCK, cols - c0)
                block = nl.load(src[p, r0:r0 + nr, c0:c0 + nc])
                flipped = nisa.nc_transpose(block, engine=nisa.vector_engine)
                nl.store(dst[p, c0:c0 + nc, r0:r0 + nr], value=flipped)


def get_3d_shape(ref, dim):
    """[dimensions before `dim` merged, dim, dimensions after it merged]."""
    return [_prod(ref.shape[:dim]), ref.shape[dim], _prod(ref.shape[dim + 1:])]


def transpose_to_last_dim_kernel(ref, dim, dst):
    """Writes `ref` with dimension `dim` moved to the end into `dst`."""
    assert len(ref.shape) >= 2, "a transpose needs at least 2 dimensions"
    assert dim != len(ref.shape) - 1, f"dimension {dim} is already the last one"
    before, moved, after = get_3d_shape(ref, dim)
    _transpose_planes(ref.reshape((before, moved, after)), dst.reshape((before, after, moved)))


def transpose_to_last_dim(src, dim, dst=None):
    """`src` with dimension `dim` moved to the end, in `dst` or a new private HBM tensor."""
    if dst is None:
        before, moved, after = get_3d_shape(src, dim)
        dst = nl.ndarray((before, after, moved), dtype=src.dtype, buffer=nl.hbm)
    transpose_to_last_dim_kernel(src, dim, dst)
    return dst


def _tiled_dve_transpose_10(img_ref):
    """[..., I, J] -> [..., J, I] in private HBM."""
    shape = img_ref.shape
    assert len(shape) >= 2, "a transpose needs at least 2 dimensions"
    rows, cols = shape[-2], shape[-1]
    batch = _prod(shape[:-2])
    out = nl.ndarray((batch, cols, rows), dtype=img_ref.dtype, buffer=nl.hbm, name='transposed_img_ref')
    _transpose_planes(img_ref.reshape((batch, rows, cols)), out)
    return out.reshape(list(shape[:-2]) + [cols, rows])


@nki.jit
def tiled_dve_transpose_210(img_ref, **kwargs):
    """[..., I, J, K] -> [..., K, J, I] in private HBM."""
    shape = img_ref.shape
    assert len(shape) >= 3, "this transpose needs at least 3 dimensions"
    i, j, k = shape[-3], shape[-2], shape[-1]
    batch = _prod(shape[:-3])
    src = img_ref.reshape((batch, i, j, k))
    out = nl.ndarray((batch, k, j, i), dtype=img_ref.dtype, buffer=nl.hbm, name='transposed_img_ref')
    # Each j-plane is a 2-D transpose [I, K] -> [K, I].
    for b in nl.affine_range(batch):
        for jj in range(j):
            for r0 in range(0, i, DVE_BLOCK):
                nr = min(DVE_BLOCK, i - r0)
                for c0 in range(0, k, DVE_BLOCK):
                    nc = min(DVE_BLOCK, k - c0)
                    block = nl.load(src[b, r0:r0 + nr, jj, c0:c0 + nc])
                    flipped = nisa.nc_transpose(block, engine=nisa.vector_engine)
                    nl.store(out[b, c0:c0 + nc, jj, r0:r0 + nr], value=flipped)
    return out.reshape(list(shape[:-3]) + [k, j, i])


@nki.jit
def tiled_dve_transpose_10(img_ref, permutation=None):
    """img_ref permuted by `permutation`, which must swap the last two (merged) dimensions."""
    assert permutation, "tiled_dve_transpose_10 needs the permutation it implements"
    shape = img_ref.shape
    merged_perm, merged_shape = _merge_moving_dims(shape, permutation)
    assert len(merged_perm) >= 2, f"permutation {list(permutation)} moves no dimension"
    swap_last_two = list(range(len(merged_perm)))
    swap_last_two[-2], swap_last_two[-1] = swap_last_two[-1], swap_last_two[-2]
    assert list(merged_perm) == swap_last_two, f"permutation {list(permutation)} does not swap the last two dimensions"
    out = _tiled_dve_transpose_10(img_ref.reshape(merged_shape))
    return out.reshape([shape[axis] for axis in permutation])
