"""An internal kernel of a project's own registry: the sum of each row, out[R, 1] = in[R, C].sum(1).

It is found through share/nkicc/examples/registry/registry.json when that folder is given with -I.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def row_sum(in_tensor, rows_per_tile=128):
    rows, cols = in_tensor.shape
    assert rows % rows_per_tile == 0, f"{rows} rows are not a multiple of {rows_per_tile}"
    out = nl.ndarray((rows, 1), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(rows // rows_per_tile):
        tile = nl.load(in_tensor[nl.ds(t * rows_per_tile, rows_per_tile), :])
        total = nl.sum(tile, axis=1, keepdims=True)
        nl.store(out[nl.ds(t * rows_per_tile, rows_per_tile), :], value=total)
    return out
