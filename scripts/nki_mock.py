"""A minimal recording mock of neuronxcc.nki, .language (nl) and .isa (nisa) for CPython.

scripts/bench_interp.sh runs the kernel files it traces with nkicc under CPython against this
mock, so both sides execute the same source. Each op appends one tuple to OPS; tensors and tiles
are small objects with a shape, a dtype and slicing. It models only what the benchmark's kernels
call, and does no arithmetic on data: it is the cheapest tracer CPython can be, a floor for
what a tracer written in Python costs, not a model of real NKI.

    /usr/bin/python3 scripts/nki_mock.py KERNEL.py KERNEL_NAME SHAPE:DTYPE...

installs the mock in sys.modules, imports KERNEL.py unchanged, calls KERNEL_NAME with one HBM
tensor per SHAPE:DTYPE argument (SHAPE as 128x512) and prints, after whatever the kernel
printed, `ops=N dma=D macs=M`: the recorded ops, how many are loads or stores, and the
multiply-accumulates of its matmuls (bench_interp.sh checks the last two against nkicc).
"""
import importlib.util
import sys
import types

OPS = []


class Tensor:
    """An HBM tensor or an on-chip tile: a shape, a dtype, a buffer; slicing gives a view."""

    __slots__ = ("shape", "dtype", "buffer")

    def __init__(self, shape, dtype, buffer):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.buffer = buffer

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        shape = []
        for i, size in enumerate(self.shape):
            k = key[i] if i < len(key) else slice(None)
            if isinstance(k, slice):
                start, stop, step = k.indices(size)
                shape.append(max(0, (stop - start + step - 1) // step))
            elif isinstance(k, DynSlice):
                shape.append(k.size)
            elif k is Ellipsis:
                shape.extend(self.shape[i:])
                break
            # an integer index drops the dimension
        return Tensor(shape, self.dtype, self.buffer)

    def __setitem__(self, key, value):
        OPS.append(("assign", self.buffer, self.shape, getattr(value, "shape", None)))

    def _binary(self, other, op):
        OPS.append((op, self.shape, getattr(other, "shape", other)))
        return Tensor(self.shape, self.dtype, "sbuf")

    def __add__(self, other):
        return self._binary(other, "add")

    def __iadd__(self, other):
        OPS.append(("accumulate", self.shape, getattr(other, "shape", other)))
        return self

    def __mul__(self, other):
        return self._binary(other, "multiply")

    def __sub__(self, other):
        return self._binary(other, "subtract")

    def __truediv__(self, other):
        return self._binary(other, "divide")


class DynSlice:
    __slots__ = ("start", "size")

    def __init__(self, start, size):
        self.start = start
        self.size = size


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    return mod


def _jit(fn=None, **_options):
    if fn is None:
        return lambda f: f
    return fn


def _ndarray(shape, dtype, buffer="sbuf"):
    OPS.append(("ndarray", tuple(shape), dtype, buffer))
    return Tensor(shape, dtype, buffer)


def _zeros(shape, dtype, buffer="sbuf"):
    OPS.append(("memset", tuple(shape), dtype, buffer))
    return Tensor(shape, dtype, buffer)


def _load(src, dtype=None):
    OPS.append(("load", src.shape, src.dtype))
    return Tensor(src.shape, dtype or src.dtype, "sbuf")


def _store(dst, value):
    OPS.append(("store", dst.shape, value.shape))


def _copy(src, dtype=None):
    OPS.append(("copy", src.shape, dtype))
    return Tensor(src.shape, dtype or src.dtype, "sbuf")


def _unary(name):
    def op(x, dtype=None):
        OPS.append((name, x.shape))
        return Tensor(x.shape, dtype or x.dtype, "sbuf")
    return op


def _binary(name):
    def op(x, y, dtype=None):
        OPS.append((name, x.shape, getattr(y, "shape", y)))
        return Tensor(x.shape, dtype or x.dtype, "sbuf")
    return op


def _reduce(name):
    def op(x, axis, dtype=None, keepdims=False):
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        shape = [1 if i in axes else s for i, s in enumerate(x.shape)] if keepdims else \
            [s for i, s in enumerate(x.shape) if i not in axes]
        OPS.append((name, x.shape, axes))
        return Tensor(shape, dtype or x.dtype, "sbuf")
    return op


def _nc_matmul(stationary, moving, **_options):
    OPS.append(("nc_matmul", stationary.shape, moving.shape))
    return Tensor((stationary.shape[1], moving.shape[1]), "float32", "psum")


def _range(*args):
    return range(*args)


class _TileSize:
    pmax = 128
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    psum_fmax = 2048


_dtypes = {d: d for d in ("float32", "bfloat16", "float16", "int32", "int8", "uint8")}

language = _module(
    "neuronxcc.nki.language",
    ndarray=_ndarray, zeros=_zeros, load=_load, store=_store, copy=_copy,
    exp=_unary("exp"), reciprocal=_unary("reciprocal"), negative=_unary("negative"),
    add=_binary("add"), subtract=_binary("subtract"), multiply=_binary("multiply"),
    divide=_binary("divide"), max=_reduce("max"), sum=_reduce("sum"),
    affine_range=_range, sequential_range=_range, static_range=_range,
    ds=DynSlice, tile_size=_TileSize, shared_hbm="shared_hbm", hbm="hbm", sbuf="sbuf",
    psum="psum", **_dtypes)
isa = _module("neuronxcc.nki.isa", nc_matmul=_nc_matmul)
nki = _module("neuronxcc.nki", jit=_jit, language=language, isa=isa)
neuronxcc = _module("neuronxcc", nki=nki)


def install():
    sys.modules.update({"neuronxcc": neuronxcc, "neuronxcc.nki": nki,
                        "neuronxcc.nki.language": language, "neuronxcc.nki.isa": isa})


def main(argv):
    path, kernel_name, specs = argv[1], argv[2], argv[3:]
    install()
    spec = importlib.util.spec_from_file_location("kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = []
    for s in specs:
        shape, dtype = s.split(":")
        args.append(Tensor(tuple(int(d) for d in shape.split("x")), dtype, "shared_hbm"))
    getattr(module, kernel_name)(*args)
    dma = sum(1 for op in OPS if op[0] in ("load", "store"))
    macs = sum(op[1][0] * op[1][1] * op[2][1] for op in OPS if op[0] == "nc_matmul")
    print(f"ops={len(OPS)} dma={dma} macs={macs}")


if __name__ == "__main__":
    main(sys.argv)
