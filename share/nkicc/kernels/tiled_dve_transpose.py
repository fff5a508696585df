"""Internal kernel: a 2-D transpose on the Vector engine, in square blocks.

in_tensor[R, C] -> out[C, R]; each `tile` x `tile` block is loaded, transposed by the Vector
engine (DVE) and stored at the mirrored position.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def tiled_dve_transpose_10(in_tensor, tile=32):
    rows, cols = in_tensor.shape
    assert tile <= 32, f"the Vector engine transposes blocks of at most 32 x 32, got {tile}"
    assert rows % tile == 0 and cols % tile == 0, f"[{rows}, {cols}] is not a multiple of the {tile} block"
    out = nl.ndarray((cols, rows), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // tile):
        for j in nl.affine_range(cols // tile):
            block = nl.load(in_tensor[nl.ds(i * tile, tile), nl.ds(j * tile, tile)])
            flipped = nisa.nc_transpose(block, engine=nisa.vector_engine)
            nl.store(out[nl.ds(j * tile, tile), nl.ds(i * tile, tile)], value=flipped)
    return out
