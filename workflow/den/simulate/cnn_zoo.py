"""Simulated aggregation tasks (section 5.2 and appendix B): binary image tasks scored by a
zoo of randomly built CNNs, whose scores on the test images become a task's covariates.

Per image dataset and cutoff c, a test image is positive when its class id is below c
(cutoffs 1..9 of a 10-class set give positive shares 0.1..0.9). Each CNN is

    Conv(f, k) -> MaxPool(p) -> ... (c_conv times) -> Dense(u) -> ... (n_dense - 1 times) -> Dense(1)

with c_conv, n_dense, f, u, k, p and its training epochs drawn uniformly from configured
ranges (the paper's: conv 0..3, dense 1..4, filters/units 2..511, kernel/pool 2..5,
epochs 1..24). Everything follows from the seed, so a shard of CNNs is a reproducible job.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from den.data.tasks import Task
from den.simulate.images import ImageData

PAPER_RANGES = {"conv_layers": (0, 3), "dense_layers": (1, 4), "filters": (2, 511), "units": (2, 511),
                "kernel": (2, 5), "pool": (2, 5), "epochs": (1, 24)}


@dataclasses.dataclass(frozen=True)
class Architecture:
    conv_layers: int
    dense_layers: int
    filters: int
    units: int
    kernel: int
    pool: int
    epochs: int


def sample_architecture(rng: np.random.Generator, ranges: dict | None = None) -> Architecture:
    """One CNN drawn uniformly from the inclusive ``ranges`` (default: the paper's)."""
    ranges = {**PAPER_RANGES, **(ranges or {})}
    for key, (lo, hi) in ranges.items():
        if key not in PAPER_RANGES or lo > hi:
            raise ValueError(f"CNN zoo range {key!r}={[lo, hi]} is invalid; keys: {sorted(PAPER_RANGES)}")
    draw = {key: int(rng.integers(lo, hi + 1)) for key, (lo, hi) in ranges.items()}
    return Architecture(**draw)


def binary_labels(class_ids: np.ndarray, cutoff: int) -> np.ndarray:
    """1 where the class id is below ``cutoff``."""
    return (np.asarray(class_ids) < cutoff).astype(np.int32)


def build_cnn(arch: Architecture, input_shape: tuple[int, ...], seed: int):
    """The tf_keras model of ``arch``; pooling is skipped once the image is too small for it."""
    from den._tf import tf_keras

    tf_keras.utils.set_random_seed(seed)
    layers = [tf_keras.layers.InputLayer(input_shape=input_shape)]
    height = input_shape[0]
    for _ in range(arch.conv_layers):
        layers.append(tf_keras.layers.Conv2D(arch.filters, arch.kernel, padding="same", activation="relu"))
        if height // arch.pool >= 1:
            layers.append(tf_keras.layers.MaxPool2D(arch.pool, padding="same"))
            height = -(-height // arch.pool)
    layers.append(tf_keras.layers.Flatten())
    for _ in range(arch.dense_layers - 1):
        layers.append(tf_keras.layers.Dense(arch.units, activation="relu"))
    layers.append(tf_keras.layers.Dense(1))
    return tf_keras.Sequential(layers)


def train_and_score(arch: Architecture, images: ImageData, cutoff: int, seed: int,
                    batch_size: int = 128, max_train: int | None = None) -> np.ndarray:
    """Train one CNN on the binary train task; return its sigmoid scores on the test images.

    Args:
        max_train: use at most this many (randomly chosen) training images.

    Returns:
        (n_test,) float32 scores in [0, 1].
    """
    from den._tf import tf_keras

    x, y = images.x_train, binary_labels(images.y_train, cutoff)
    if max_train is not None and len(x) > max_train:
        keep = np.random.default_rng(seed).choice(len(x), max_train, replace=False)
        x, y = x[keep], y[keep]
    model = build_cnn(arch, images.x_train.shape[1:], seed)
    model.compile(optimizer=tf_keras.optimizers.Adam(1e-3),
                  loss=tf_keras.losses.BinaryCrossentropy(from_logits=True))
    model.fit(x, y, epochs=arch.epochs, batch_size=batch_size, verbose=0, shuffle=True)
    logits = model.predict(images.x_test, batch_size=1024, verbose=0)[:, 0]
    return (1.0 / (1.0 + np.exp(-logits.astype(np.float64)))).astype(np.float32)


def score_shard(images: ImageData, cutoff: int, cnn_ids: list[int], seed: int, ranges: dict | None = None,
                max_train: int | None = None, progress=None) -> tuple[np.ndarray, list[dict]]:
    """Scores of the CNNs ``cnn_ids`` of one (dataset, cutoff) task.

    CNN i's architecture and training follow from ``[seed, cutoff, i]`` alone, so shards
    can run anywhere in any order.

    Returns:
        ((n_test, len(cnn_ids)) scores, the architectures as dicts).
    """
    from den.progress import Progress

    bar = Progress(len(cnn_ids), f"cnn zoo {images.name} cutoff {cutoff}", unit="cnns", stream=progress)
    columns, archs = [], []
    for done, i in enumerate(cnn_ids, start=1):
        rng = np.random.default_rng([seed, cutoff, i])
        arch = sample_architecture(rng, ranges)
        columns.append(train_and_score(arch, images, cutoff, int(rng.integers(2**31)), max_train=max_train))
        archs.append({"cnn": i, **dataclasses.asdict(arch)})
        bar.update(done)
    return np.stack(columns, axis=1), archs


def save_shard(path, scores: np.ndarray, archs: list[dict]) -> None:
    """One shard's scores and architectures in one ``.npz`` file (atomic)."""
    import json

    from den.io import atomic_write

    with atomic_write(path) as handle:
        np.savez(handle, scores=scores, archs=np.array(json.dumps(archs)))


def simulated_task(name: str, images: ImageData, cutoff: int, shard_paths: list) -> Task:
    """The aggregation task of one (image set, cutoff): CNN scores on the test images as
    covariates (one column per CNN, in CNN-id order), the binary test labels as labels."""
    import json

    columns, names = [], []
    for path in shard_paths:
        with np.load(path, allow_pickle=False) as data:
            columns.append(data["scores"])
            names += [f"cnn{a['cnn']}" for a in json.loads(str(data["archs"]))]
    x = np.concatenate(columns, axis=1)
    order = np.argsort([int(n[3:]) for n in names], kind="stable")
    return Task(name=name, x=x[:, order], y=binary_labels(images.y_test, cutoff),
                feature_names=[names[i] for i in order], classes=[f"class >= {cutoff}", f"class < {cutoff}"])
