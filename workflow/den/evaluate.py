"""Evaluation protocol: random support/query splits of a task and the metrics of the tables."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score, roc_auc_score

from den.data.tasks import Task
from den.model.den import DEN
from den.model.task_model import TaskModel
from den.train.finetune import FinetuneConfig, finetune

VARIANTS = ("den", "den_no_finetune")


def support_query_split(y: np.ndarray, n_support: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random ``n_support`` support rows (every class at least once when possible), rest query.

    Returns:
        (support indices, query indices), both sorted.
    """
    rng = np.random.default_rng(seed)
    n = len(y)
    if not 2 <= n_support < n:
        raise ValueError(f"n_support must be in 2..{n - 1} for a task of {n} rows, got {n_support}")
    order = rng.permutation(n)
    firsts = [order[np.nonzero(y[order] == c)[0][0]] for c in np.unique(y)][:n_support]
    rest = order[~np.isin(order, firsts)]
    support = np.sort(np.r_[firsts, rest[:n_support - len(firsts)]]).astype(np.int64)
    query = np.setdiff1d(np.arange(n), support)
    return support, query


def score(y_true: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    """AUC (binary: of class 1; multiclass: one-vs-rest macro) and accuracy."""
    n_classes = proba.shape[1]
    if n_classes == 2:
        auc = roc_auc_score(y_true, proba[:, 1]) if len(np.unique(y_true)) == 2 else float("nan")
    else:
        present = np.unique(y_true)
        auc = float("nan")
        if len(present) == n_classes:
            auc = roc_auc_score(y_true, proba, multi_class="ovr", labels=np.arange(n_classes))
    return {"auc": float(auc), "accuracy": float(accuracy_score(y_true, proba.argmax(axis=1)))}


def evaluate_den(model: DEN, task: Task, n_support: int, seed: int, variant: str = "den",
                 finetune_config: FinetuneConfig | None = None) -> dict[str, float]:
    """One repeat: split, adapt (and fine-tune for ``variant='den'``), score the query rows.

    The keypoints span the feature values of all the task's rows (labels unused).
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    support, query = support_query_split(task.y, n_support, seed)
    task_model = TaskModel(model, task.x[support], task.y[support], task.n_classes,
                           x_unlabeled=task.x[query])
    if variant == "den":
        base = finetune_config or FinetuneConfig()
        finetune(task_model, FinetuneConfig(**{**base.to_dict(), "seed": seed}))
    return score(task.y[query], task_model.predict_proba(task.x[query]))


def evaluate_repeats(model: DEN, task: Task, *, n_support: int, repeats: int, seed: int,
                     finetune_config: FinetuneConfig | None = None, variants=VARIANTS):
    """``repeats`` random splits of ``task`` for each DEN variant.

    Returns:
        DataFrame with columns dataset, variant, repeat, auc, accuracy.
    """
    import pandas as pd

    from den.progress import Progress

    rows = []
    bar = Progress(repeats * len(variants), f"evaluate {task.name}", unit="fits")
    for repeat in range(repeats):
        for variant in variants:
            metrics = evaluate_den(model, task, n_support, seed * 1000 + repeat, variant, finetune_config)
            rows.append({"dataset": task.name, "variant": variant, "repeat": repeat, **metrics})
            bar.update(len(rows))
    return pd.DataFrame(rows)


def summarize(scores):
    """Mean and standard error of each metric per dataset and variant.

    Args:
        scores: DataFrame from ``evaluate_repeats`` (several datasets may be concatenated).

    Returns:
        DataFrame with dataset, variant, repeats, auc_mean, auc_se, accuracy_mean, accuracy_se.
    """
    grouped = scores.groupby(["dataset", "variant"], sort=True)
    out = grouped.size().rename("repeats").to_frame()
    for metric in ("auc", "accuracy"):
        out[f"{metric}_mean"] = grouped[metric].mean()
        out[f"{metric}_se"] = grouped[metric].std(ddof=1) / np.sqrt(grouped[metric].count())
    return out.reset_index()
