"""A classification task as DEN sees it: numeric covariates (NaN = missing) and 0..L-1 labels."""

from __future__ import annotations

import dataclasses

import numpy as np

from den.errors import DENInputError


def class_codes(y, what: str = "labels") -> np.ndarray:
    """Labels as int64 class codes 0..L-1: integers, or floats that are whole numbers.

    Raises:
        DENInputError (a ValueError): missing, negative, fractional or non-numeric labels, or
            none at all; the message starts with ``what``.
    """
    y = np.asarray(y)
    hint = "den.data.encoding.encode_labels maps labels of any type to 0..L-1"
    if y.dtype.kind == "f":
        if not np.isfinite(y).all() or (y != np.floor(y)).any():
            raise DENInputError(f"{what} must be class codes 0..L-1; got missing or fractional "
                                f"values ({hint})")
        y = y.astype(np.int64)
    if y.dtype.kind not in "iu":
        raise DENInputError(f"{what} must be integer class codes 0..L-1, got {y.dtype} labels ({hint})")
    if y.size == 0 or y.min() < 0:
        raise DENInputError(f"{what} must be class codes 0..L-1 of at least one row, got "
                            f"{'none' if y.size == 0 else int(y.min())} ({hint})")
    return y


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
        if self.y.size:
            self.y = class_codes(self.y, f"task {self.name!r}: labels")
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


def binary_cuts(task: Task, count: int, seed: int) -> list[Task]:
    """``count`` binary tasks cut from a multiclass ``task``, for pre-training a binary head on
    multiclass data (``PretrainConfig.multiclass_cuts``): each a random bipartition of the task's
    classes into label 0 and label 1, both sides holding rows, named "<name>~b<j>" (j = 0..count-1).
    The cuts are random draws, not distinct ones: with few classes two cuts may coincide.

    Args:
        task: a task of more than two classes.
        count: number of cuts.
        seed: with the task's class and row counts, seeds the draws (the same task and seed give
            the same cuts).

    Returns:
        ``count`` tasks sharing ``task.x`` (not a copy), each y (n,) int32 in {0, 1}.
    """
    if task.n_classes <= 2:
        raise ValueError(f"task {task.name!r} has {task.n_classes} classes: binary cuts need more than two")
    rng = np.random.default_rng([seed, task.n_classes, task.n_rows])
    present = np.unique(task.y)
    out = []
    for j in range(count):
        side = rng.random(task.n_classes) < 0.5
        if side.all() or not side.any():
            side[rng.integers(task.n_classes)] = not side[0]
        if side[present].all() or not side[present].any():  # only classes without rows on one side
            side[present[0]] = not side[present[0]]
        out.append(Task(name=f"{task.name}~b{j}", x=task.x, y=side[task.y].astype(np.int32),
                        feature_names=task.feature_names, classes=[0, 1],
                        metadata={"cut_of": task.name, "positive_classes": np.flatnonzero(side).tolist()}))
    return out


def one_vs_rest_cuts(task: Task, count: int, seed: int) -> list[Task]:
    """``count`` binary tasks of one class of a multiclass ``task`` against the rest, for
    pre-training a binary head (``PretrainConfig.one_vs_rest_cuts``): the shape of the tasks
    that fitting one class against the rest gives a binary DEN, and of imbalanced binary tasks
    (one class among many is rare). Named "<name>~r<j>" (j = 0..count-1).

    The classes are distinct draws while there are enough (a random order of the classes
    that have rows, then again from its start).

    Args:
        task: a task of more than two classes.
        count: number of cuts.
        seed: with the task's class and row counts, seeds the order (the same task and seed
            give the same cuts).

    Returns:
        ``count`` tasks sharing ``task.x`` (not a copy), each y (n,) int32: 1 for the rows of
        the cut's class, 0 for the others.
    """
    if task.n_classes <= 2:
        raise ValueError(f"task {task.name!r} has {task.n_classes} classes: one-against-the-rest "
                         f"cuts need more than two")
    rng = np.random.default_rng([seed, 7, task.n_classes, task.n_rows])
    order = rng.permutation(np.unique(task.y))
    out = []
    for j in range(count):
        positive = int(order[j % len(order)])
        out.append(Task(name=f"{task.name}~r{j}", x=task.x, y=(task.y == positive).astype(np.int32),
                        feature_names=task.feature_names, classes=[0, 1],
                        metadata={"cut_of": task.name, "positive_classes": [positive]}))
    return out
