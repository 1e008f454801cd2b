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
        int32 array of shape (T, r), T = min(d^r, max(d^2, min_tuples), max_tuples), read-only.
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
        out = np.array(sorted(chosen), dtype=np.int32)
    out = out.reshape(-1, r)
    out.setflags(write=False)
    return out


def count_multisets(tuples: np.ndarray) -> int:
    """U, the number of distinct feature multisets among ``tuples`` (T, r): the tuples whose
    kernels the local embedding and tuple relevance compute (``den.model.network``), as a
    squared distance does not depend on the order of a tuple's features."""
    return len(np.unique(np.sort(tuples, axis=1), axis=0))
