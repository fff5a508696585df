import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add(a, b):
    c = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nl.store(c, value=nl.add(nl.load(a), nl.load(b), dtype=nl.bfloat16))
    return c
