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
        metadata: JSON-able facts about how the task was made, saved with it (e.g. a simulated
            task's class cutoff and positive shares); empty for most tasks.
    """

    name: str
    x: np.ndarray
    y: np.ndarray
    feature_names: list[str] | None = None
    classes: list | None = None
    metadata: dict = dataclasses.field(default_factory=dict)

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

    # -- the normalised file of a dataset (one per dataset in the workflow) ------------------
    def save(self, path) -> None:
        """Write features, labels and metadata to one ``.npz`` file, atomically."""
        import json

        from den.io import atomic_write

        meta = {"name": self.name, "feature_names": list(self.feature_names),
                "classes": [c if isinstance(c, (int, float, str)) else str(c) for c in self.classes]}
        if self.metadata:
            meta["metadata"] = self.metadata
        with atomic_write(path) as handle:
            np.savez_compressed(handle, x=self.x, y=self.y, meta=np.array(json.dumps(meta)))

    @classmethod
    def load(cls, path) -> Task:
        """Read a file written by ``save``."""
        import json

        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            return cls(name=meta["name"], x=data["x"], y=data["y"], feature_names=meta["feature_names"],
                       classes=meta["classes"], metadata=meta.get("metadata", {}))
