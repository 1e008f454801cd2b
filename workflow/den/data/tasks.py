"""A classification task as DEN sees it: numeric covariates (NaN = missing) and 0..L-1 labels."""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class Task:
    """One labelled dataset.

    Attributes:
        name: identifier used in logs, errors and result files.
        x: (n, d) float32 covariates, NaN where missing, no infinities.
        y: (n,) int32 labels in 0..L-1.
        feature_names: d names (default f0..f{d-1}).
        classes: L original class labels, ``classes[k]`` is label k.
    """

    name: str
    x: np.ndarray
    y: np.ndarray
    feature_names: list[str] | None = None
    classes: list | None = None

    def __post_init__(self):
        self.x = np.asarray(self.x, dtype=np.float32)
        self.y = np.asarray(self.y)
        if self.x.ndim != 2:
            raise ValueError(f"task {self.name!r}: features must be 2-d, got shape {self.x.shape}")
        if self.y.shape != (self.x.shape[0],):
            raise ValueError(f"task {self.name!r}: {self.x.shape[0]} feature rows but labels of "
                             f"shape {self.y.shape}")
        if np.isinf(self.x).any():
            col = int(np.nonzero(np.isinf(self.x).any(axis=0))[0][0])
            raise ValueError(f"task {self.name!r}: feature {self.feature_name(col)!r} has infinite "
                             f"values; replace them by NaN (missing) or finite numbers")
        if self.y.size and (self.y.min() < 0 or not np.issubdtype(self.y.dtype, np.integer)):
            raise ValueError(f"task {self.name!r}: labels must be integers 0..L-1")
        self.y = self.y.astype(np.int32)
        if self.feature_names is None:
            self.feature_names = [f"f{j}" for j in range(self.n_features)]
        if self.classes is None:
            self.classes = list(range(self.n_classes))

    @property
    def n_rows(self) -> int:
        return int(self.x.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.x.shape[1])

    @property
    def n_classes(self) -> int:
        return int(self.y.max()) + 1 if self.y.size else 0

    def feature_name(self, j: int) -> str:
        return self.feature_names[j] if self.feature_names else f"f{j}"
