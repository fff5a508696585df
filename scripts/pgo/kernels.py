"""Kernels that nkicc's profile-guided build (scripts/pgo/train.sh) runs to learn which paths are
hot. They are written for the training, not taken from the benchmarks (scripts/bench_*), which
must measure code the profile has not seen: a tiled layer norm, a blocked matmul with a bias, a
row softmax in two passes, and a host-side planner of plain Python (classes, dataclasses,
closures, comprehensions, dicts, strings, exceptions) that decides the kernels' tiling."""
import math
from dataclasses import dataclass, field

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@dataclass(frozen=True)
class Tiling:
    rows: int
    cols: int
    part: int = 128
    notes: tuple = ()

    @property
    def row_tiles(self):
        return (self.rows + self.part - 1) // self.part

    def col_tiles(self, width):
        return (self.cols + width - 1) // width


@dataclass
class Budget:
    bytes_left: int
    spent: list = field(default_factory=list)

    def take(self, name, n):
        if n > self.bytes_left:
            raise ValueError(f"{name} needs {n} bytes, {self.bytes_left} left")
        self.bytes_left -= n
        self.spent.append((name, n))
        return n


class Planner:
    """Chooses tile widths by scoring candidates, as a kernel author's helper module would."""

    def __init__(self, rows, cols, itemsize):
        self.rows, self.cols, self.itemsize = rows, cols, itemsize
        self.cache = {}

    def score(self, width):
        if width in self.cache:
            return self.cache[width]
        tiles = -(-self.cols // width)
        waste = tiles * width - self.cols
        s = tiles * 3 + waste / max(width, 1) + (0 if width % 128 == 0 else 2)
        self.cache[width] = s
        return s

    def best(self, candidates):
        ranked = sorted(candidates, key=lambda w: (self.score(w), -w))
        return ranked[0]

    def __repr__(self):
        return f"Planner({self.rows}x{self.cols}, {len(self.cache)} scored)"


def make_counter(start):
    count = start

    def bump(by=1):
        nonlocal count
        count += by
        return count

    return bump


def plan(rows, cols, itemsize=4):
    planner = Planner(rows, cols, itemsize)
    widths = [w for w in (64, 128, 256, 384, 512, 1024) if w <= max(cols, 64)]
    width = planner.best(widths)
    budget = Budget(192 * 1024)
    bump = make_counter(0)
    names = {}
    for i in range(min(-(-cols // width), 64)):
        key = "t%d" % (i % 7)
        names[key] = names.get(key, 0) + 1
        try:
            budget.take(key, width * itemsize)
        except ValueError:
            bump()
    words = sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{k}={v}" for k, v in words)
    checksum = sum(ord(c) for c in text) % 997
    pairs = {(a, b): a * b for a in range(8) for b in range(a, 8) if (a + b) % 3}
    odd = {k: v for k, v in pairs.items() if v % 2}
    total = sum(v for v in odd.values()) + bump(0) + checksum
    return Tiling(rows, cols, notes=(width, total, repr(planner)))


class Candidate:
    def __init__(self, tm, tn, tk):
        self.tm, self.tn, self.tk = tm, tn, tk
        self.cost = None

    def footprint(self, itemsize):
        return (self.tm * self.tk + self.tk * self.tn) * itemsize + self.tm * self.tn * 4

    def __lt__(self, other):
        return (self.cost, self.tm, self.tn) < (other.cost, other.tm, other.tn)


class CostModel:
    def __init__(self, m, n, k, itemsize):
        self.m, self.n, self.k, self.itemsize = m, n, k, itemsize
        self.seen = {}

    def tiles(self, size, tile):
        return -(-size // tile)

    def cost(self, c):
        key = (c.tm, c.tn, c.tk)
        if key in self.seen:
            return self.seen[key]
        loads = self.tiles(self.m, c.tm) * self.tiles(self.n, c.tn) * self.tiles(self.k, c.tk) * 2
        waste = (self.tiles(self.m, c.tm) * c.tm - self.m) + (self.tiles(self.n, c.tn) * c.tn - self.n)
        spill = max(0, c.footprint(self.itemsize) - 24 * 1024 * 128)
        total = loads * 10 + waste + spill // 64
        i = 0
        while i < 8:  # a few refinement steps, as a search over schedules would make
            total = (total * 7 + i) // 7
            i += 1
        self.seen[key] = total
        return total


def autotune(m, n, k, itemsize=2, rounds=40):
    """Scores every tiling of a matmul over several rounds of a made-up cost model: the
    plain-Python search a kernel file runs at trace time to choose its tile sizes."""
    model = CostModel(m, n, k, itemsize)
    best = None
    history = []
    for r in range(rounds):
        pool = [Candidate(tm, tn, tk) for tm in (32, 64, 128) for tn in (128, 256, 512) for tk in (64, 128)]
        for c in pool:
            c.cost = model.cost(c) + (r % 3)
        pool.sort()
        top = pool[:4]
        history.append(tuple(c.cost for c in top))
        stats = {}
        for c in pool:
            stats.setdefault(c.tm, []).append(c.cost)
        means = {tm: sum(v) / len(v) for tm, v in stats.items()}
        if best is None or top[0] < best:
            best = top[0]
        if r % 2 == 0:
            model.seen.clear()  # the model changes between rounds: score again
        _ = sorted(means.items(), key=lambda kv: kv[1])
    return best.tm, best.tn, best.tk


@nki.jit
def layer_norm(x, gamma):
    rows, cols = x.shape
    t = plan(rows, cols)
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.load(gamma.reshape((1, cols)))
    for r in nl.affine_range(t.row_tiles):
        i_p = r * t.part + nl.arange(t.part)[:, None]
        i_f = nl.arange(cols)[None, :]
        tile = nl.load(x[i_p, i_f], mask=(i_p < rows))
        mean = nl.mean(tile, axis=1, keepdims=True)
        centered = nl.subtract(tile, mean)
        var = nl.mean(nl.multiply(centered, centered), axis=1, keepdims=True)
        scale = nl.rsqrt(nl.add(var, 1e-5))
        y = nl.multiply(nl.multiply(centered, scale), g)
        nl.store(out[i_p, i_f], value=y, mask=(i_p < rows))
    return out


@nki.jit
def matmul_bias(lhsT, rhs, bias):
    K, M = lhsT.shape
    _, N = rhs.shape
    TK, TM = nl.tile_size.pmax, nl.tile_size.gemm_stationary_fmax
    _, tn, _ = autotune(M, N, K, rounds=1500)
    TN = min(nl.tile_size.gemm_moving_fmax, N, tn)
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    b = nl.load(bias.reshape((1, N)))
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            acc = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for k in nl.sequential_range(K // TK):
                lhs_tile = nl.load(lhsT[nl.ds(k * TK, TK), nl.ds(m * TM, TM)])
                rhs_tile = nl.load(rhs[nl.ds(k * TK, TK), nl.ds(n * TN, TN)])
                acc += nisa.nc_matmul(lhs_tile, rhs_tile)
            res = nl.add(nl.copy(acc, dtype=nl.float32), b[:, nl.ds(n * TN, TN)])
            nl.store(out[nl.ds(m * TM, TM), nl.ds(n * TN, TN)], value=nl.copy(res, dtype=out.dtype))
    return out


@nki.jit
def softmax_two_pass(x):
    rows, cols = x.shape
    width = min(cols, 512)
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(rows // 128):
        top = nl.full((128, 1), -math.inf, dtype=nl.float32)
        for c in nl.sequential_range(cols // width):
            t = nl.load(x[nl.ds(r * 128, 128), nl.ds(c * width, width)])
            top = nl.maximum(top, nl.max(t, axis=1, keepdims=True))
        total = nl.zeros((128, 1), dtype=nl.float32)
        for c in nl.sequential_range(cols // width):
            t = nl.load(x[nl.ds(r * 128, 128), nl.ds(c * width, width)])
            total = nl.add(total, nl.sum(nl.exp(nl.subtract(t, top)), axis=1, keepdims=True))
        inv = nl.reciprocal(total)
        for c in nl.affine_range(cols // width):
            t = nl.load(x[nl.ds(r * 128, 128), nl.ds(c * width, width)])
            y = nl.multiply(nl.exp(nl.subtract(t, top)), inv)
            nl.store(out[nl.ds(r * 128, 128), nl.ds(c * width, width)], value=y)
    return out
