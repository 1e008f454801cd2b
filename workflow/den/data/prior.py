"""A structural prior over tabular classification tasks, for pre-training (issue 19).

``den.data.synthetic`` draws class-conditional Gaussians behind monotone distortions: after
the right per-feature map the classes differ only in their means, so nothing in it teaches
DEN about interactions, thresholds, irrelevant features or skewed classes, which is where a
random forest beats it on real sets. Tasks here are drawn the other way round, as in the
priors of TabPFN: covariates first, then a random labelling function of a few of them.

One task:
    1. latent covariates u (n, d): correlated Gaussians (a random factor model), some
       columns made heavy-tailed, skewed, or discrete (a few levels, like codes and counts);
    2. a relevant subset R of the columns (often few of them);
    3. a score f(u_R) drawn from one of ``MECHANISMS``:
       "additive"  sum of random smooth one-dimensional functions (monotone or not),
       "pairwise"  additive terms plus products of random pairs,
       "trees"     a sum of random axis-aligned trees (thresholds at random quantiles),
       "mlp"       a random one- or two-layer tanh network (a small structural causal model);
    4. noise on the score, then labels by cutting it at random quantiles (the positive share
       of a binary task is uniform in [0.1, 0.9]), and a few flipped labels;
    5. each observed feature a random monotone distortion of its latent column
       (``den.data.synthetic._distort``), some values missing.
"""

from __future__ import annotations

import numpy as np

from den.data.synthetic import DISTORTIONS, _distort
from den.data.tasks import Task

MECHANISMS = ("additive", "pairwise", "trees", "mlp")


def _latent(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """(n, d) standardised latent covariates with random correlations and marginals."""
    factors = int(rng.integers(1, max(2, d // 2) + 1))
    loading = rng.normal(0.0, 1.0, (factors, d)) * rng.uniform(0.0, 1.0, d)
    u = rng.standard_normal((n, factors)) @ loading + rng.standard_normal((n, d))
    for j in range(d):
        kind = rng.choice(["gaussian", "heavy", "skewed", "discrete"], p=[0.45, 0.15, 0.2, 0.2])
        col = u[:, j]
        if kind == "heavy":
            col = col * np.exp(0.5 * rng.standard_normal(n))
        elif kind == "skewed":
            col = np.exp(0.8 * (col - col.mean()) / (col.std() + 1e-9))
        elif kind == "discrete":
            levels = int(rng.integers(2, 8))
            cuts = np.quantile(col, np.sort(rng.uniform(0.05, 0.95, levels - 1)))
            col = np.searchsorted(cuts, col).astype(np.float64)
        u[:, j] = (col - col.mean()) / (col.std() + 1e-9)
    return u


def _smooth_1d(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    """A random one-dimensional function of a standardised column: linear, monotone or bumpy."""
    kind = rng.choice(["linear", "monotone", "bump", "step"])
    a = rng.normal(0.0, 1.0)
    if kind == "linear":
        return a * x
    if kind == "monotone":
        return a * np.tanh(rng.uniform(0.5, 3.0) * (x - rng.normal(0.0, 0.7)))
    if kind == "bump":
        return a * np.exp(-((x - rng.normal(0.0, 0.8)) ** 2) / rng.uniform(0.2, 2.0))
    return a * (x > np.quantile(x, rng.uniform(0.1, 0.9)))


def _tree(rng: np.random.Generator, u: np.ndarray, depth: int) -> np.ndarray:
    """Leaf values of one random axis-aligned tree for every row of ``u`` (n, k)."""
    n, k = u.shape
    out = np.zeros(n)
    node = np.zeros(n, dtype=np.int64)  # heap index of each row's node at the current depth
    splits = {}
    for _ in range(depth):
        for index in np.unique(node):
            rows = node == index
            feature = int(rng.integers(k))
            threshold = np.quantile(u[rows, feature], rng.uniform(0.2, 0.8)) if rows.sum() > 1 else 0.0
            splits[index] = (feature, threshold)
        feature = np.array([splits[i][0] for i in node])
        threshold = np.array([splits[i][1] for i in node])
        node = 2 * node + 1 + (u[np.arange(n), feature] > threshold)
    leaves = {int(i): rng.normal(0.0, 1.0) for i in np.unique(node)}
    out[:] = [leaves[int(i)] for i in node]
    return out


def _score(rng: np.random.Generator, u: np.ndarray, mechanism: str) -> np.ndarray:
    """(n,) random score of the relevant latent columns ``u`` (n, k)."""
    n, k = u.shape
    if mechanism == "additive":
        return sum(_smooth_1d(rng, u[:, j]) for j in range(k))
    if mechanism == "pairwise":
        score = sum(_smooth_1d(rng, u[:, j]) for j in range(k)) * rng.uniform(0.0, 1.0)
        for _ in range(int(rng.integers(1, k + 1))):
            a, b = rng.integers(k, size=2)
            score = score + rng.normal(0.0, 1.0) * u[:, a] * u[:, b]
        return score
    if mechanism == "trees":
        return sum(_tree(rng, u, int(rng.integers(1, 5))) for _ in range(int(rng.integers(1, 6))))
    if mechanism == "mlp":
        hidden = int(rng.integers(4, 33))
        a = np.tanh(u @ rng.normal(0.0, 1.5 / np.sqrt(k), (k, hidden)) + rng.normal(0.0, 0.5, hidden))
        if rng.random() < 0.5:
            a = np.tanh(a @ rng.normal(0.0, 1.5 / np.sqrt(hidden), (hidden, hidden)))
        return a @ rng.normal(0.0, 1.0, hidden)
    raise ValueError(f"unknown mechanism {mechanism!r}; choose from {MECHANISMS}")


def make_prior_task(name: str, n_rows: int, n_features: int, n_classes: int = 2, *, seed: int,
                    mechanism: str | None = None, missing_rate: float | None = None) -> Task:
    """Draw one task from the prior (module docstring).

    Args:
        name: task name.
        n_rows, n_features, n_classes: sizes (n_classes >= 2).
        seed: everything about the task follows from it.
        mechanism: one of ``MECHANISMS``; None draws one.
        missing_rate: share of values set missing; None draws 0 (most tasks) or up to 0.3.

    Returns:
        a ``Task`` with float32 features, labels 0..n_classes-1, every class present.
    """
    if n_classes < 2:
        raise ValueError("a task needs at least 2 classes")
    rng = np.random.default_rng(seed)
    d = n_features
    mechanism = mechanism or str(rng.choice(MECHANISMS))
    u = _latent(rng, n_rows, d)
    k = int(np.clip(rng.geometric(0.35), 1, d))  # relevant columns: often few
    relevant = rng.choice(d, k, replace=False)
    score = _score(rng, u[:, relevant], mechanism)
    score = (score - score.mean()) / (score.std() + 1e-9)
    score = score + rng.uniform(0.0, 1.0) * rng.standard_normal(n_rows)
    if n_classes == 2:
        cuts = [np.quantile(score, rng.uniform(0.1, 0.9))]
    else:
        cuts = np.quantile(score, np.sort(rng.dirichlet(np.ones(n_classes)).cumsum()[:-1]))
    y = np.searchsorted(np.sort(cuts), score).astype(np.int64)
    flip = rng.random(n_rows) < rng.uniform(0.0, 0.1)
    y[flip] = rng.integers(0, n_classes, flip.sum())
    for c in range(n_classes):  # every class keeps at least two rows
        if (y == c).sum() < 2:
            y[rng.choice(n_rows, 2, replace=False)] = c
    if rng.random() < 0.5:  # class order says nothing about the score's direction
        y = (n_classes - 1) - y
    x = np.empty_like(u)
    kinds = rng.choice(DISTORTIONS, size=d)
    for j in range(d):
        x[:, j] = _distort(u[:, j], str(kinds[j]), rng, float(rng.uniform(0.0, 1.0)))
    if missing_rate is None:
        missing_rate = 0.0 if rng.random() < 0.7 else float(rng.uniform(0.0, 0.3))
    if missing_rate > 0:
        x[rng.random(x.shape) < missing_rate] = np.nan
    return Task(name=name, x=x.astype(np.float32), y=y.astype(np.int32))


def make_prior_tasks(count: int, *, seed: int, rows: tuple[int, int] = (500, 2000),
                     features: tuple[int, int] = (2, 25), classes: tuple[int, int] = (2, 2),
                     prefix: str = "prior-") -> list[Task]:
    """``count`` tasks of the prior named "<prefix><i:04d>", their sizes drawn uniformly from
    the inclusive ranges and a seed each, all from ``seed``."""
    rng = np.random.default_rng(seed)
    tasks = []
    for i in range(count):
        n, d = int(rng.integers(rows[0], rows[1] + 1)), int(rng.integers(features[0], features[1] + 1))
        c = int(rng.integers(classes[0], classes[1] + 1))
        tasks.append(make_prior_task(f"{prefix}{i:04d}", n, d, c, seed=int(rng.integers(2**31))))
    return tasks
