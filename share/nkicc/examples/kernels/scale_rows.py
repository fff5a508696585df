"""Scales a [512, 1024] tensor by a constant, as an SPMD kernel of 4 instances on 2 NeuronCores.

The description launches it on the grid [4] with "nc": 2, which is
`scale_rows[nl.spmd_dim(nl.nc(2), 2)](x, 0.5)`: the first grid dimension is spread over the two
physical cores of a trn2 engine, two instances each. Every instance scales the 128 rows that its
program id selects.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scale_rows(x, factor):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows = nl.program_id(0) * 128 + nl.arange(128)[:, None]
    cols = nl.arange(x.shape[1])[None, :]
    tile = nl.load(x[rows, cols])
    nl.store(out[rows, cols], value=nl.multiply(tile, factor))
    return out


if __name__ == "__main__":
    import numpy as np

    x = np.random.random_sample([512, 1024]).astype(np.float32)
    print(np.allclose(scale_rows[nl.spmd_dim(nl.nc(2), 2)](x, 0.5), x * 0.5))
