"""Methods of the experiments and one evaluation job: (method, dataset, repeat) -> metrics.

A method is a config entry ``{kind: den, variant: den|no_finetune|no_plf}`` or
``{kind: direct, model: logistic_regression|mlp, hidden: [8]}``. DEN methods need a
pre-trained model: ``den`` and ``no_finetune`` share the model pre-trained with PLFs,
``no_plf`` uses one pre-trained without them (``pretrained_model_kind``).
"""

from __future__ import annotations

import zlib

import numpy as np

from den.data.tasks import Task
from den.evaluate import score, support_query_split

METHOD_KINDS = ("den", "direct")
DEN_VARIANTS = ("den", "no_finetune", "no_plf")


def check_method(name: str, spec: dict) -> None:
    """Raise ValueError naming the method when its config entry is invalid."""
    kind = spec.get("kind")
    if kind not in METHOD_KINDS:
        raise ValueError(f"method {name!r}: kind must be one of {METHOD_KINDS}, got {kind!r}")
    if kind == "den" and spec.get("variant", "den") not in DEN_VARIANTS:
        raise ValueError(f"method {name!r}: variant must be one of {DEN_VARIANTS}")


def pretrained_model_kind(spec: dict) -> str | None:
    """Which pre-trained model a method needs: "plf", "no_plf" or None (direct methods)."""
    if spec.get("kind") != "den":
        return None
    return "no_plf" if spec.get("variant", "den") == "no_plf" else "plf"


def split_seed(seed: int, dataset: str, repeat: int) -> int:
    """The seed of a (dataset, repeat) split: the same for every method, so they compare."""
    return int(np.random.default_rng([seed, zlib.crc32(dataset.encode()), repeat]).integers(2**31))


def subtask(task: Task, features: tuple[int, int], seed: int) -> Task:
    """A random subset of C of the task's features, C uniform in ``features`` = (lo, hi)
    (capped by d): the aggregation sub-tasks of the fixed- and variable-length tables."""
    rng = np.random.default_rng([seed, 7])
    hi = min(task.n_features, features[1])
    c = int(rng.integers(min(features[0], hi), hi + 1))
    keep = np.sort(rng.choice(task.n_features, c, replace=False))
    return Task(name=task.name, x=task.x[:, keep], y=task.y,
                feature_names=[task.feature_names[j] for j in keep], classes=task.classes)


def evaluate_method(spec: dict, task: Task, *, n_support: int, seed: int, repeat: int,
                    model=None, finetune_config=None, subtask_features=None,
                    max_query: int | None = None) -> dict:
    """Split ``task``, fit the method on the support rows, score the query rows.

    Args:
        spec: the method's config entry.
        subtask_features: (lo, hi) to evaluate on a random sub-task of C in [lo, hi] features
            (drawn per repeat, the same for every method); None uses every feature.
        max_query: at most this many query rows (a random subset, the same for every method);
            None uses every non-support row.
        model: the pre-trained ``DEN`` (DEN methods).
        finetune_config: ``FinetuneConfig`` for the ``den`` variant.

    Returns:
        dict with auc, accuracy, n_support, n_query, split_seed.
    """
    s = split_seed(seed, task.name, repeat)
    if subtask_features is not None:
        task = subtask(task, tuple(subtask_features), s)
    support, query = support_query_split(task.y, n_support, s, max_query)
    if spec["kind"] == "den":
        from den.model.task_model import TaskModel
        from den.train.finetune import FinetuneConfig, finetune

        task_model = TaskModel(model, task.x[support], task.y[support], task.n_classes,
                               x_unlabeled=task.x[query])
        if spec.get("variant", "den") == "den":
            base = finetune_config or FinetuneConfig()
            finetune(task_model, FinetuneConfig(**{**base.to_dict(), "seed": s}))
        proba = task_model.predict_proba(task.x[query])
    else:
        from den.baselines.direct import direct_predict_proba

        proba = direct_predict_proba(spec["model"], task.x[support], task.y[support], task.x[query],
                                     task.n_classes, hidden=spec.get("hidden", (8,)), seed=s)
    return {**score(task.y[query], proba), "n_support": int(len(support)), "n_query": int(len(query)),
            "n_features": task.n_features, "split_seed": s}
