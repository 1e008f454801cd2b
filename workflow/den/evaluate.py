"""Evaluation protocol: random support/query splits of a task and the metrics of the tables."""

from __future__ import annotations

import numpy as np


def support_query_split(y: np.ndarray, n_support: int, seed: int, max_query: int | None = None,
                        support_pool: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Random ``n_support`` support rows (every class at least once when possible); the query
    set is the rest, or a random ``max_query`` of the rest (the paper's aggregation tables
    cap it at 8000).

    Args:
        support_pool: P: draw the support rows from rows 0..P-1 only, and query rows P..n-1
            (a task whose support and query sets come from different files, e.g. Puzzles;
            ``Task.metadata["support_pool"]``). None: any row (the same split as without it).

    Returns:
        (support indices, query indices), both sorted and disjoint.
    """
    rng = np.random.default_rng(seed)
    n = len(y)
    pool = n if support_pool is None else int(support_pool)
    if support_pool is not None and not 0 < pool < n:
        raise ValueError(f"support_pool must be in 1..{n - 1} for a task of {n} rows, got {support_pool}")
    if not 2 <= n_support < pool:
        raise ValueError(f"n_support must be in 2..{pool - 1} for a task of {n} rows"
                         f"{'' if support_pool is None else f' (support pool of {pool})'}, got {n_support}")
    order = rng.permutation(pool)
    firsts = [order[np.nonzero(y[order] == c)[0][0]] for c in np.unique(y[:pool])][:n_support]
    rest = order[~np.isin(order, firsts)]
    support = np.sort(np.r_[firsts, rest[:n_support - len(firsts)]]).astype(np.int64)
    query = np.setdiff1d(np.arange(pool if support_pool is not None else 0, n), support)
    if max_query is not None and len(query) > max_query:
        query = np.sort(rng.choice(query, max_query, replace=False))
    return support, query


def score(y_true: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    """AUC (binary: of class 1; multiclass: one-vs-rest macro) and accuracy."""
    # imported here: scikit-learn costs ~1 s, which a copied evaluation job (rule evaluate,
    # den.experiments.score_record) and other light importers of this module need not pay
    from sklearn.metrics import accuracy_score, roc_auc_score

    n_classes = proba.shape[1]
    if n_classes == 2:
        auc = roc_auc_score(y_true, proba[:, 1]) if len(np.unique(y_true)) == 2 else float("nan")
    else:
        present = np.unique(y_true)
        auc = float("nan")
        if len(present) == n_classes:
            auc = roc_auc_score(y_true, proba, multi_class="ovr", labels=np.arange(n_classes))
    return {"auc": float(auc), "accuracy": float(accuracy_score(y_true, proba.argmax(axis=1)))}
