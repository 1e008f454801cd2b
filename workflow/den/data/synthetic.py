"""Generated classification tasks: class-conditional distributions seen through random
monotone distortions of each feature.

Latent features are Gaussian given the class (class means differ on informative features,
share a random correlation structure); each observed feature is a random monotone
distortion of its latent feature (exponential, power, logistic squash, sign flip, shift and
scale). This is the setting of section 4.3: after the right per-feature transformation the
tasks share one family of class-conditional distributions, which a calibration block can
undo and the embedding and classifier blocks can learn once.
"""

from __future__ import annotations

import numpy as np

from den.data.tasks import Task

DISTORTIONS = ("identity", "exp", "cube", "logistic", "sinh", "log1p_abs")
# Sizes of the generated pre-training tasks of `den pretrain --generated-tasks` and of the
# local-copies benchmark's generated_tasks (config/local-copies.yaml).
GENERATED_ROWS = (500, 2000)
GENERATED_FEATURES = (3, 25)


def _distort(u: np.ndarray, kind: str, rng: np.random.Generator, strength: float) -> np.ndarray:
    """A strictly monotone map of the standardised latent column ``u``."""
    a = strength * rng.uniform(0.5, 1.5)
    if kind == "identity":
        out = u
    elif kind == "exp":
        out = np.exp(a * u)
    elif kind == "cube":
        out = np.sign(u) * np.abs(u) ** (1.0 + 2.0 * a)
    elif kind == "logistic":
        out = 1.0 / (1.0 + np.exp(-3.0 * a * u))
    elif kind == "sinh":
        out = np.sinh(a * 2.0 * u)
    elif kind == "log1p_abs":
        out = np.sign(u) * np.log1p(np.abs(u) * 5.0 * a)
    else:
        raise ValueError(f"unknown distortion {kind!r}; choose from {DISTORTIONS}")
    if rng.random() < 0.5:
        out = -out
    return out * rng.lognormal(0.0, 1.0) + rng.normal(0.0, 10.0)


def make_task(name: str, n_rows: int, n_features: int, n_classes: int = 2, *,
              seed: int, strength: float = 1.0, informative: float = 0.7,
              separation: float = 1.0, missing_rate: float = 0.0,
              distortions: tuple[str, ...] = DISTORTIONS) -> Task:
    """Generate one task.

    Args:
        name: task name.
        n_rows, n_features, n_classes: sizes (n_classes >= 2).
        seed: everything about the task follows from it.
        strength: how strong the monotone distortions are (0 = affine only).
        informative: share of features whose class means differ.
        separation: scale of the class-mean differences (larger = easier).
        missing_rate: share of feature values set to NaN, completely at random.
        distortions: the kinds of distortion drawn from, one per feature.

    Returns:
        a ``Task`` with float32 features and labels 0..n_classes-1 (balanced on average).
    """
    if n_classes < 2:
        raise ValueError("a task needs at least 2 classes")
    if n_rows < 1 or n_features < 1:
        raise ValueError(f"a task needs at least 1 row and 1 feature, got n_rows={n_rows}, "
                         f"n_features={n_features}")
    rng = np.random.default_rng(seed)
    d = n_features
    y = rng.integers(0, n_classes, size=n_rows)
    means = rng.normal(0.0, 1.0, size=(n_classes, d)) * separation / np.sqrt(max(1.0, d / 4))
    mask = rng.random(d) < informative
    if not mask.any():
        mask[rng.integers(d)] = True
    means[:, ~mask] = 0.0
    mix = rng.normal(0.0, 0.4, size=(d, d))
    cov = np.eye(d) + mix @ mix.T / d
    chol = np.linalg.cholesky(cov / np.sqrt(np.diag(cov))[:, None] / np.sqrt(np.diag(cov))[None, :])
    latent = means[y] + rng.standard_normal((n_rows, d)) @ chol.T
    x = np.empty_like(latent)
    kinds = rng.choice(distortions, size=d)
    for j in range(d):
        u = (latent[:, j] - latent[:, j].mean()) / (latent[:, j].std() + 1e-9)
        x[:, j] = _distort(u, str(kinds[j]), rng, strength)
    if missing_rate > 0:
        x[rng.random(x.shape) < missing_rate] = np.nan
    return Task(name=name, x=x.astype(np.float32), y=y.astype(np.int32))


def generated_task_specs(count: int, *, seed: int, rows: tuple[int, int] = (600, 1200),
                         features: tuple[int, int] = (2, 12), classes: tuple[int, int] = (2, 2),
                         prefix: str = "synthetic", **kwargs) -> dict[str, dict]:
    """Dataset config entries (``source: synthetic``) of ``count`` generated tasks, named
    ``<prefix><i:03d>``, with rows, features and classes drawn uniformly from the inclusive
    ranges and a seed each, all from ``seed``; extra keyword arguments (``make_task``'s
    strength, informative, separation, missing_rate) go into every entry."""
    rng = np.random.default_rng(seed)
    specs = {}
    for i in range(count):
        specs[f"{prefix}{i:03d}"] = {
            "source": "synthetic",
            "rows": int(rng.integers(rows[0], rows[1] + 1)),
            "features": int(rng.integers(features[0], features[1] + 1)),
            "classes": int(rng.integers(classes[0], classes[1] + 1)),
            "seed": int(rng.integers(2**31)),
            **kwargs,
        }
    return specs


def make_tasks(n_tasks: int, *, seed: int, rows: tuple[int, int] = (600, 1200),
               features: tuple[int, int] = (2, 12), classes: tuple[int, int] = (2, 2),
               prefix: str = "synthetic", **kwargs) -> list[Task]:
    """Generate the ``n_tasks`` tasks of ``generated_task_specs`` (same arguments)."""
    specs = generated_task_specs(n_tasks, seed=seed, rows=rows, features=features, classes=classes,
                                 prefix=prefix, **kwargs)
    return [task_from_spec(name, spec) for name, spec in specs.items()]


def task_from_spec(name: str, spec: dict) -> Task:
    """The task of a ``source: synthetic`` dataset entry (rows, features, classes, seed and
    ``make_task``'s keyword arguments; defaults 800 rows, 8 features, 2 classes, seed 0)."""
    settings = {k: v for k, v in spec.items() if k != "source"}
    return make_task(name, settings.pop("rows", 800), settings.pop("features", 8),
                     settings.pop("classes", 2), seed=settings.pop("seed", 0), **settings)
