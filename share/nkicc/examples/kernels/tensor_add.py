"""Element-wise addition of two [256, 2048] tensors over an SPMD grid of 2 x 4 instances.

Each instance adds one [128, 512] tile, located by its program ids.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def nki_tensor_add_kernel_(a_input, b_input):
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)

    # The tile this SPMD instance owns.
    offset_i_x = nl.program_id(0) * 128
    offset_i_y = nl.program_id(1) * 512

    ix = offset_i_x + nl.arange(128)[:, None]
    iy = offset_i_y + nl.arange(512)[None, :]

    a_tile = nl.load(a_input[ix, iy])
    b_tile = nl.load(b_input[ix, iy])
    c_tile = a_tile + b_tile
    nl.store(c_output[ix, iy], value=c_tile)
    return c_output


if __name__ == "__main__":
    import numpy as np

    a = np.random.random_sample([256, 2048]).astype(np.float32)
    b = np.random.random_sample([256, 2048]).astype(np.float32)
    c = nki_tensor_add_kernel_[2, 4](a, b)
    print(np.allclose(c, a + b))
