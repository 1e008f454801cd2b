"""Sampling of episodes: which rows form the support batch B and the query batch A.

Pre-training (section 4.4): per step a task, C of its covariates (covariate sampling) and
two disjoint batches. Fine-tuning: the task's support set split into two halves per step,
the same way. Every function takes a ``numpy.random.Generator`` so runs are reproducible.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class Episode:
    """One training step's data (indices into one task).

    Attributes:
        task: index of the task in the pre-training list.
        columns: (C,) sampled feature columns of that task, in random order.
        support: (nB,) row indices of batch B (the distribution embedding).
        query: (nA,) row indices of batch A (the loss).
        label_slots: (L,) for multiclass pre-training, the label-encoding row each of the
            task's classes is given in this episode (a random injective map into
            0..max_classes-1), so v(y) learns no fixed meaning per class; else identity.
    """

    task: int
    columns: np.ndarray
    support: np.ndarray
    query: np.ndarray
    label_slots: np.ndarray


def split_rows(y: np.ndarray, support_rows: int, query_rows: int,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint random row sets, support first, each class in the support if possible.

    When the task has fewer than ``support_rows + query_rows`` rows the two sizes shrink
    in proportion. Support rows start with one random row of each class (classes with at
    least two rows), so the embedding sees every class the query may contain.

    Args:
        y: (n,) labels of all rows.
        support_rows, query_rows: wanted sizes of B and A.

    Returns:
        (support indices, query indices), int64 arrays.
    """
    n = len(y)
    if n < 2:
        raise ValueError(f"need at least 2 rows to split into support and query, got {n}")
    if support_rows + query_rows > n:
        support_rows = max(1, int(round(n * support_rows / (support_rows + query_rows))))
        support_rows = min(support_rows, n - 1)
        query_rows = n - support_rows
    order = rng.permutation(n)
    shuffled = y[order]
    classes, first_position = np.unique(shuffled, return_index=True)
    counts = np.bincount(y)
    firsts = first_position[counts[classes] >= 2][:support_rows]  # positions in `order`
    rest_mask = np.ones(n, dtype=bool)
    rest_mask[firsts] = False
    rest = order[rest_mask]
    n_more = support_rows - len(firsts)
    support = np.concatenate([order[firsts], rest[:n_more]])
    query = rest[n_more:n_more + query_rows]
    return support, query


def halve_support(y: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Stratified random split of a support set into an embedding half and a loss half.

    Each class with at least two rows has rows in both halves.

    Returns:
        (embedding-half indices, loss-half indices).
    """
    first, second = [], []
    for label in np.unique(y):
        rows = rng.permutation(np.nonzero(y == label)[0])
        cut = len(rows) // 2 if len(rows) >= 2 else len(rows)
        if len(rows) % 2 and rng.random() < 0.5 and len(rows) >= 2:
            cut += 1
        first.append(rows[:cut])
        second.append(rows[cut:])
    return np.concatenate(first), np.concatenate(second)


def sample_episode(task_sizes: list[tuple[int, int, int]], labels: list[np.ndarray],
                   rng: np.random.Generator, *, support_rows: tuple[int, int], query_rows: int,
                   covariates: tuple[int, int], label_slots: int | None) -> Episode:
    """Draw one pre-training episode.

    Args:
        task_sizes: per task (n_rows, n_features, n_classes).
        labels: per task (n,) labels.
        support_rows: (min, max) size of B, drawn uniformly.
        query_rows: size of A.
        covariates: (min, max) C, drawn uniformly and capped by the task's d.
        label_slots: max_classes for multiclass (random label slots), None for binary.
    """
    t = int(rng.integers(len(task_sizes)))
    n, d, n_classes = task_sizes[t]
    c_max = min(d, covariates[1])
    c_min = min(c_max, covariates[0])
    c = int(rng.integers(c_min, c_max + 1))
    columns = rng.permutation(d)[:c].astype(np.int32)
    b = int(rng.integers(support_rows[0], support_rows[1] + 1))
    support, query = split_rows(labels[t], b, query_rows, rng)
    if label_slots is None:
        slots = np.arange(n_classes, dtype=np.int32)
    else:
        slots = rng.permutation(label_slots)[:n_classes].astype(np.int32)
    return Episode(t, columns, support, query, slots)
