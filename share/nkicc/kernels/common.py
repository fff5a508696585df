"""Helpers shared by nkicc's bundled internal kernels.

The public neuron-team kernels (aws-neuron/nki-samples, contributed/neuron-team-kernels) import
these names from a `common` module beside them; nkicc's own versions keep the names and their
meaning, so that a real kernel file placed in an -I folder runs against this module as well.
"""


def div_ceil(n, d):
    """n / d rounded up, for positive integers."""
    return -(-n // d)


def normalize_dim(idx, rank):
    """A dimension index that may count from the end (-1 is the last of `rank`)."""
    if idx < 0:
        return idx + rank
    return idx


def n_elts(shape):
    """How many elements a tensor of `shape` holds."""
    count = 1
    for d in shape:
        count *= d
    return count


def simplify_permute(src_shape, permute):
    """Merges the dimensions a permutation keeps together.

    A run of source dimensions that stays consecutive and in order under `permute` moves as one
    dimension, so the permutation can be written on fewer, larger dimensions. Returns that shorter
    permutation and the source shape with each run collapsed, e.g. shape [2, 4, 8, 16, 32] under
    [0, 1, 4, 2, 3] is the permutation [0, 2, 1] of the shape [8, 128, 32].
    """
    assert len(src_shape) == len(permute), f"{len(permute)} axes permute a shape of rank {len(src_shape)}"
    assert sorted(permute) == list(range(len(permute))), f"{list(permute)} is not a permutation"
    runs = []
    for axis in permute:
        if runs and axis == runs[-1][-1] + 1:
            runs[-1].append(axis)
        else:
            runs.append([axis])
    # Where each run sits in the source: the runs sorted by their first source axis.
    by_source = sorted(range(len(runs)), key=lambda r: runs[r][0])
    sizes = [n_elts([src_shape[axis] for axis in run]) for run in runs]
    return by_source, [sizes[r] for r in by_source]
