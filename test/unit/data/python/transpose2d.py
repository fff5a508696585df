# 2-D transpose through SBUF with nisa.nc_transpose; helper functions and keyword-only
# parameters (nkicc test input).
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
from neuronxcc.nki.language import par_dim


def _tiles(n: int, tile: int = 128) -> int:
    return (n + tile - 1) // tile


@nki.jit
def tensor_transpose2D_kernel_(in_tensor, shape2D, *, engine=nki.isa.engine.unknown):
    out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    sz_p, sz_f = in_tensor.shape
    sz_f1, sz_f2 = shape2D
    i_p0 = nl.arange(sz_p)[:, None]
    i_f0 = nl.arange(sz_f1)[None, :, None]
    i_f1 = nl.arange(sz_f2)[None, None, :]

    in_tile = nl.ndarray(shape=(par_dim(sz_p), sz_f), dtype=in_tensor.dtype)
    in_tile[:] = nl.load(in_tensor)
    out_tile = nl.ndarray((sz_p, sz_f2, sz_f1), dtype=out_tensor.dtype)
    out_tile[i_p0, i_f1, i_f0] = nl.copy(in_tile[i_p0, i_f0 * sz_f2 + i_f1])
    transposed = nisa.nc_transpose(out_tile, engine=engine)
    nl.store(out_tensor, value=transposed)
    return out_tensor


def describe(*shapes, sep=", ", **options) -> str:
    parts = [f"{s[0]}x{s[1]}" for s in shapes if len(s) == 2]
    extra = {k: v for k, v in sorted(options.items()) if v is not None}
    return sep.join(parts) + (f" {extra!r}" if extra else "")


class TransposeConfig:
    """Host-side configuration object (never traced)."""

    default_engine = "vector"

    def __init__(self, rows, cols, /, engine=None):
        self.rows, self.cols = rows, cols
        self.engine = engine or self.default_engine

    @property
    def size(self):
        return self.rows * self.cols

    def __repr__(self):
        return f"TransposeConfig({self.rows!r}, {self.cols!r}, engine={self.engine!r})"
