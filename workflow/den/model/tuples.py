"""Feature tuples of dependency order r (the index sets t_1..t_r of the paper, remark 1)."""

from __future__ import annotations

import functools
import itertools

import numpy as np


@functools.lru_cache(maxsize=256)
def feature_tuples(n_features: int, order: int, seed: int,
                   max_tuples: int | None = None, min_tuples: int | None = None) -> np.ndarray:
    """Index tuples over which the embedding and the Deep Sets classifier pool.

    All of [d]^r, enumerated in lexicographic order, when d^r <= d^2 (always for r <= 2).
    Otherwise a fixed random subset of d^2 distinct tuples, drawn with ``seed`` (the
    paper's appendix D), sorted lexicographically. The same array serves the support
    (embedding) branch and the query (classifier) branch of one task. With ``max_tuples``
    the budget is min(d^2, max_tuples): a wide task pools over a random subset of its tuples
    (mean pooling makes that an estimate of the mean over all), which bounds the cost per row.
    Every feature is in at least one tuple: where the draw leaves features out (a budget
    of 625 over more than about 200 features), tuples of them replace drawn tuples whose
    features other tuples also hold (T stays the budget), or, where too few can go (from
    about d = 1,500 at 625), join them (e.g. T = 780 at d = 2,000).
    A task's columns map onto these indices in ``canonical_order``.

    Args:
        n_features: d >= 1, the number of features of the task.
        order: r >= 1, the dependency order.
        seed: the run's seed; only used when sampling.
        max_tuples: most tuples, or None (the paper: d^2).
        min_tuples: with r > 2, raise the d^2 budget to min(d^r, min_tuples) (then capped by
            ``max_tuples``): a narrow task pools over more of its r-tuples, so the few that
            carry a three-way interaction are less likely to be left out (r = 3, d = 9: 81 of
            729 without it). None: the paper's d^2.

    Returns:
        int32 array of shape (T, r), read-only: T = min(d^r, max(d^2, min_tuples), max_tuples),
        or more where that many tuples cannot hold every feature.
    """
    if n_features < 1:
        raise ValueError(f"a task needs at least one feature, got n_features={n_features}")
    if order < 1:
        raise ValueError(f"the dependency order r must be >= 1, got {order}")
    if max_tuples is not None and max_tuples < 1:
        raise ValueError(f"max_tuples must be >= 1 or None, got {max_tuples}")
    if min_tuples is not None and min_tuples < 1:
        raise ValueError(f"min_tuples must be >= 1 or None, got {min_tuples}")
    d, r = int(n_features), int(order)
    budget = d * d if min_tuples is None else max(d * d, min(d**r, int(min_tuples)))
    budget = budget if max_tuples is None else min(budget, int(max_tuples))
    if d**r <= budget:
        out = np.array(list(itertools.product(range(d), repeat=r)), dtype=np.int32)
    else:
        rng = np.random.default_rng([int(seed), d, r])
        chosen: set[tuple[int, ...]] = set()
        while len(chosen) < budget:
            draw = rng.integers(0, d, size=(budget, r))
            for row in map(tuple, draw.tolist()):
                chosen.add(row)
                if len(chosen) == budget:
                    break
        out = _cover(np.array(sorted(chosen), dtype=np.int32), d, rng)
    out = out.reshape(-1, r)
    out.setflags(write=False)
    return out


def _cover(tuples: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """``tuples`` (T, r) with every feature 0..d-1 in at least one tuple, sorted: the features
    no tuple holds, in groups of r (the last filled with random held features), replace
    tuples whose features all stay held, drawn at random; where too few can go, the new
    tuples are added. Unchanged where every feature is held already."""
    held = np.bincount(tuples.ravel(), minlength=d)
    missing = np.flatnonzero(held == 0)
    if len(missing) == 0:
        return tuples
    r = tuples.shape[1]
    n_new = -(-len(missing) // r)
    fill = rng.choice(np.flatnonzero(held > 0), size=n_new * r - len(missing))
    new = np.concatenate([rng.permutation(missing), fill]).reshape(n_new, r)
    keep = np.ones(len(tuples), dtype=bool)
    removed = 0
    for i in rng.permutation(len(tuples)):
        if removed == n_new:
            break
        features, times = np.unique(tuples[i], return_counts=True)
        if np.all(held[features] > times):  # each of its features is in another tuple too
            held[features] -= times
            keep[i] = False
            removed += 1
    out = np.concatenate([tuples[keep], new.astype(np.int32)])
    return out[np.lexsort(out.T[::-1])]


# splitmix64's finaliser constants: a well-mixed 64-bit hash of a 64-bit word.
_MIX = (np.uint64(30), np.uint64(0xBF58476D1CE4E5B9), np.uint64(27), np.uint64(0x94D049BB133111EB),
        np.uint64(31))


def _mix(words: np.ndarray) -> np.ndarray:
    """uint64 array -> uint64 array of the same shape, each word hashed (splitmix64)."""
    a, m1, b, m2, c = _MIX
    with np.errstate(over="ignore"):
        words = (words ^ (words >> a)) * m1
        words = (words ^ (words >> b)) * m2
        return words ^ (words >> c)


def canonical_order(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A task's columns in an order set by their contents, so that which tuples of
    ``feature_tuples`` a task pools over does not depend on the order of its columns (nor
    of its rows): ``canonical_order(x, y)[feature_tuples(d, ...)]`` are column tuples.

    Each column's key hashes, summed over rows, each cell's value with its row's label and
    a hash of the row's values (summed over columns): permuting the columns permutes the
    keys alike, permuting the rows leaves them as they are, and only columns that are
    copies of each other (or match under a permutation of equal rows) tie, in their given
    order.

    Args:
        x: (n, d) support features, NaN = missing.
        y: (n,) class codes.

    Returns:
        (d,) int64 column indices: position k of the canonical order is column ``out[k]``.
    """
    x = np.asarray(x, dtype=np.float64)
    x = np.where(np.isnan(x), np.nan, x) + 0.0  # one NaN, and -0.0 as 0.0
    cells = _mix(x.view(np.uint64))
    labels = _mix(np.asarray(y, dtype=np.int64).astype(np.uint64) + np.uint64(1))
    with np.errstate(over="ignore"):
        rows = _mix(cells.sum(axis=1, dtype=np.uint64) ^ labels)
        keys = _mix(cells ^ rows[:, None]).sum(axis=0, dtype=np.uint64)
    return np.argsort(keys, kind="stable")


def count_multisets(tuples: np.ndarray) -> int:
    """U, the number of distinct feature multisets among ``tuples`` (T, r): the tuples whose
    kernels the local embedding and tuple relevance compute (``den.model.network``), as a
    squared distance does not depend on the order of a tuple's features."""
    return len(np.unique(np.sort(tuples, axis=1), axis=0))
