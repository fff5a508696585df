"""Element-wise addition of two tensors, tiled over an SPMD grid (nkicc test input)."""
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from neuronxcc.nki.typing import tensor

TILE_P = 128
TILE_F = 512


@nki.jit
def tensor_add_kernel(a_input, b_input):
    """Adds two [N, M] tensors; each program instance handles one 128x512 tile."""
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)

    # Tile offsets of this instance.
    offset_i_x = nl.program_id(0) * TILE_P
    offset_i_y = nl.program_id(1) * TILE_F

    ix = offset_i_x + nl.arange(TILE_P)[:, None]
    iy = offset_i_y + nl.arange(TILE_F)[None, :]

    a_tile = nl.load(a_input[ix, iy])
    b_tile = nl.load(b_input[ix, iy])
    c_tile = a_tile + b_tile
    nl.store(c_output[ix, iy], value=c_tile)
    return c_output


def tensor_add_grid(a, b):
    grid_x = a.shape[0] // TILE_P
    grid_y = a.shape[1] // TILE_F
    return tensor_add_kernel[grid_x, grid_y](a, b)


if __name__ == "__main__":
    a = np.random.random_sample([256, 1024]).astype(np.float16)
    b = np.random.random_sample([256, 1024]).astype(np.float16)
    out = tensor_add_grid(a, b)
    print(f"max error: {np.max(np.abs(out - (a + b))):.3e}")
    assert np.allclose(out, a + b), "mismatch"
