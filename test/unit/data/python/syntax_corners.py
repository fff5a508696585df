# Every statement and expression form nkicc parses (nkicc test input; compared against CPython).
from . import sibling
from .. import parent as p
from ...pkg.sub import (a as b, c,
                        d,)
from os.path import *
import os, sys as system, a.b.c as abc
global_a = global_b = 3
x: int
y: "list[int]" = []
(z): int = 1
obj.attr: float = 2.0
arr[0]: int
a, *rest = b, *more = [1, 2, 3]
[p1, (p2, p3)] = (1, (2, 3))
first, = [1]
n += 1; n -= 1; n *= 2; n /= 2; n //= 2; n %= 3; n **= 2; n @= m; n &= 1; n |= 1; n ^= 1; n <<= 1; n >>= 1;
del a, b[1], c.d
del (e, f), [g]
assert x, "message"
raise
raise ValueError("v") from None
pass
lst = [1, 2, 3,]
tpl = (1,)
empty = ()
empty_dict = {}
st = {1, 2, *lst}
dct = {"a": 1, **other, 'b': 2}
nums = 0xFF_FF + 0o17 + 0B1_0 + 1_000_000 + 0 + 00 + 0_0 + 9223372036854775807 + 9223372036854775808
big = 0xFFFFFFFFFFFFFFFF
floats = 1.5 + .5 + 5. + 1e10 + 1E-3 + 1_0.0_1e+1_0 + 0e0 + 09.5 + 1e400
imag = 1j + 2.5J + 1e3j + 09j + 0j
strs = 'a' "b" '''c''' """d""" r'\n' R"\d" u'x' U"y"
bts = b'a' rb'\n' Br'\x' B"z" b'\x00\xff\n\t\\'
escapes = '\a\b\f\n\r\t\v\\\'\"\0\101\x41\u00e9\U0001F600 \q'
cont = 'line one \
line two'
fs = f'{x}' f"{y!r}" F'{z!s:>10}' rf'{w}\n' fR'{v!a}' f'{{literal}}' f'{a:{b}.{c}f}'
fs2 = f'{x=}' f'{x = !s:>10}' f'{ {1: 2}[1] }' f'{3!=4}' f'{a:=1}' f'{(a:=1)}' f"{d['k']}"
fs3 = f'''{
    x
}''' f'{x,y}' f'{*x,}' f'{yield}' f'{lambda_ if c else d}' f'{"nested"!r:^{width}}'
fs4 = 'plain' f'{x}' 'tail' f'' f'no fields'
walrus = [y := f(x), y ** 2]
cond = a if b else c if d else e
lam = lambda: 0
lam2 = lambda a, /, b=1, *args, c, d=2, **kw: (a, b, args, c, d, kw)
lam3 = lambda *, k: k
cmp = a < b <= c > d >= e == f != g in h not in i is j is not k
bools = not a and b or not c
arith = -a + +b - ~c * d / e // f % g @ h ** -i ** j
bits = a | b ^ c & d << e >> f
power = -2 ** -3
aw = await_ = 1
sub = a[1], a[1:2], a[::2], a[:, None], a[..., 0], a[i, 1:2, ...], a[1:2, ::3], a[*idx], a[b:=1], a[x,]
calls = f(), f(a), f(a, b=1), f(*a, **k), f(a, *b, c=1, **d, e=2), f(x for x in y), f(a)(b)[c].d
comps = [x for x in y], {x for x in y if x if not x}, {k: v for k, v in d.items()}, (x for x in y for z in x)
nested = [[j for j in range(i)] for i in range(3) if i > 0]
star_expr = *a, *b
gen_call = sum(x * x for x in range(10))
chained = a.b.c(d).e[f](g)
ell = ...
none_true_false = None, True, False
semi = 1; semi2 = 2
lines = (1 +
         2) + \
    3
if a:
    pass
elif b:
    pass
elif c: pass
else:
    pass
if x: y = 1; z = 2
for i in range(10):
    if i % 2:
        continue
    elif i > 8:
        break
else:
    done = True
for a, b in pairs: pass
for (a, b), *c in triples: pass
while True:
    break
else:
    pass
with open(f) as fh, open(g) as gh:
    pass
with (open(f) as fh,
      open(g) as gh,):
    pass
with (a, b):
    pass
with (a) as b, c:
    pass
with a as (b, c), d as [e, f], g as h.i, j as k[0]:
    pass
try:
    pass
except ValueError:
    pass
except (TypeError, KeyError) as e:
    raise
except:
    pass
else:
    pass
finally:
    pass
try:
    pass
finally:
    pass
try:
    pass
except* ValueError as eg:
    pass
except* (TypeError,):
    pass


@decorator
@decorator.attr(arg, kw=1)
@decorators[0]
@(lambda f: f)
@a if b else c
def function(a, b: int, /, c, d: str = "d", *args: tuple, e, f: int = 1, **kwargs: dict) -> "ret":
    """Docstring."""
    global g1, g2

    def inner():
        nonlocal a
        a = yield
        b = yield from range(3)
        c = yield a, b
        await_ = await_
        return
    return inner


def posonly(a, b=2, /):
    return a + b


def only_star(*, a, b=1, **c):
    pass


def varargs(*a, **b): pass
class Empty: pass
class Base(object, metaclass=type, **extra):
    attr: int = 0

    @staticmethod
    def method(self=None):
        return 1 if self else 0


class Derived(Base,):
    pass


if __name__ == "__main__":
    print(function(1, 2, 3, e=4))
