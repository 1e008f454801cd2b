"""Dataset sources. This module holds the bundled ones (scikit-learn's datasets, no network)."""

from __future__ import annotations

import numpy as np

from den.data.tasks import Task

SKLEARN_DATASETS = ("breast_cancer", "wine", "iris", "digits")


def load_sklearn(name: str) -> Task:
    """One of scikit-learn's bundled datasets as a ``Task`` (labels 0..L-1).

    Raises:
        ValueError: unknown name (the message lists the known ones).
    """
    from sklearn import datasets

    if name not in SKLEARN_DATASETS:
        raise ValueError(f"unknown bundled dataset {name!r}; choose from {SKLEARN_DATASETS}")
    bunch = getattr(datasets, f"load_{name}")()
    x = np.asarray(bunch.data, dtype=np.float32)
    keep = np.nanstd(x, axis=0) > 0  # constant columns carry nothing
    names = [str(n) for n in np.asarray(getattr(bunch, "feature_names", range(x.shape[1])))[keep]]
    classes = [str(c) for c in bunch.target_names] if hasattr(bunch, "target_names") else None
    return Task(name=name, x=x[:, keep], y=bunch.target.astype(np.int32), feature_names=names,
                classes=classes)
