"""Pure-Python workloads for scripts/bench_interp.sh: each kernel runs one at trace time, then
copies its input, so nkicc and CPython (with scripts/nki_mock.py) run the same source."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

N = 1000000


def _finish(a, out, result):
    nl.store(out, value=nl.load(a))
    print(result)
    return out


@nki.jit
def loops(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    total = 0
    for i in range(3 * N):
        j = i % 7
        if j < 3:
            total += i * j
        else:
            total -= j
    k = 0
    while k < 3 * N:
        k += 1
    return _finish(a, out, total + k)


def add3(x, y, z=1):
    return x + y + z


def twice(x):
    return add3(x, x)


@nki.jit
def calls(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    total = 0
    for i in range(2 * N):
        total = twice(i) + add3(total, 1, z=i) - total
    return _finish(a, out, total)


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def norm1(self):
        return abs(self.x) + abs(self.y)


@nki.jit
def attributes(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    p = Point(1, 2)
    total = 0
    for i in range(3 * N):
        p.x = p.y + i
        p.y = p.x - i
        total += p.x + p.y
    return _finish(a, out, total + a.shape[0])


@nki.jit
def containers(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    xs = []
    d = {}
    for i in range(N // 2):
        xs.append((i, i * 2))
        d[i % 1000] = xs[-1]
    total = 0
    for i, j in xs:
        total += j - i
    for k in sorted(d):
        total += d[k][1]
    pairs = [t[0] + t[1] for t in xs if t[0] % 3 == 0]
    return _finish(a, out, total + len(pairs) + sum(pairs[:10]))


class Counter:
    def __init__(self, start):
        self.value = start

    def bump(self, by):
        self.value = self.value + by
        return self


class Stepped(Counter):
    def bump(self, by):
        return super().bump(by * 2)


@nki.jit
def instances(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    total = 0
    for i in range(3 * N // 4):
        c = Stepped(i) if i % 2 else Counter(i)
        total += c.bump(1).bump(2).value
    return _finish(a, out, total)


@nki.jit
def empty(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    return _finish(a, out, 0)
