# Row softmax with a numerically stable max subtraction; exercises while/else, try/finally,
# conditional expressions, lambdas and augmented assignment (nkicc test input).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from neuronxcc.nki.language import (exp, max as nl_max,
                                    sum as nl_sum,)


@nki.jit
def softmax_kernel(x, axis: int = 1, *, out_dtype=None):
    out = nl.ndarray(x.shape, dtype=out_dtype if out_dtype is not None else x.dtype,
                     buffer=nl.shared_hbm)
    rows, cols = x.shape
    tile_rows = min(rows, nl.tile_size.pmax)
    n_tiles = (rows + tile_rows - 1) // tile_rows
    i = 0
    while i < n_tiles:
        start = i * tile_rows
        tile = nl.load(x[start:start + tile_rows, :])
        row_max = nl_max(tile, axis=axis, keepdims=True)
        shifted = exp(nl.subtract(tile, row_max))
        denom = nl_sum(shifted, axis=axis, keepdims=True)
        nl.store(out[start:start + tile_rows, :], value=shifted / denom)
        i += 1
    else:
        pass
    return out


scale = lambda v, s=1.0: v * s
clamp = lambda v, lo=-1.0, hi=1.0: lo if v < lo else hi if v > hi else v


def host_softmax(rows):
    import math
    result = []
    for row in rows:
        if not row:
            continue
        m = max(row)
        e = [math.exp(v - m) for v in row]
        total = sum(e)
        result.append([v / total for v in e])
    try:
        checksum = sum(sum(r) for r in result)
    except (TypeError, ValueError) as err:
        raise RuntimeError("bad rows") from err
    finally:
        rows = None
    return result, checksum
