"""Simulated aggregation tasks (section 5.2 and appendix B): binary image tasks scored by a
zoo of randomly built CNNs, whose scores on the test images become a task's covariates.

Per image dataset and target positive share s (the paper's 0.1..0.9), a test image is positive
when its class id is below the class cutoff c that ``class_cutoffs`` derives from the set's own
training labels, so the positive share is near s on every set: cutoffs 1..9 on a 10-class set,
10, 20, ..., 90 on a balanced 100-class one (CIFAR-100), uneven ones on an imbalanced set such
as EMNIST's 62 classes. The task is named after the share: "sim-<images>-p<percent>". Each CNN is

    Conv(f, k) -> MaxPool(p) -> ... (c_conv times) -> Dense(u) -> ... (n_dense - 1 times) -> Dense(1)

with c_conv, n_dense, f, u, k, p and its training epochs drawn uniformly from configured
ranges (the paper's: conv 0..3, dense 1..4, filters/units 2..511, kernel/pool 2..5,
epochs 1..24). Everything follows from the seed, the image set's name, the class cutoff and
the CNN's index, so a shard of CNNs is a reproducible job and image sets get different zoos.
"""

from __future__ import annotations

import dataclasses
import hashlib

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


# the least value of each range that builds a CNN (no convolutions is one; a kernel, pool,
# filter count or width of 0 is not, and the Dense(1) output is the last dense layer)
RANGE_MINIMUMS = {"conv_layers": 0, "dense_layers": 1, "filters": 1, "units": 1, "kernel": 1, "pool": 1,
                  "epochs": 1}


def check_ranges(ranges: dict | None) -> dict:
    """``ranges`` over the paper's: {key: (low, high)}, inclusive.

    Raises:
        ValueError: an unknown key, a low end above the high one, or a value below what
            builds a CNN (``RANGE_MINIMUMS``); the message names the key.
    """
    for key, bounds in (ranges or {}).items():
        if key not in PAPER_RANGES:
            raise ValueError(f"unknown range {key!r}; the ranges are {sorted(PAPER_RANGES)}")
        lo, hi = bounds
        if lo > hi:
            raise ValueError(f"{key}: {[lo, hi]} has its low end above its high one")
        if lo < RANGE_MINIMUMS[key]:
            raise ValueError(f"{key}: {[lo, hi]} goes below {RANGE_MINIMUMS[key]}, the least "
                             f"{key} that builds a CNN")
    return {**PAPER_RANGES, **(ranges or {})}


def sample_architecture(rng: np.random.Generator, ranges: dict | None = None) -> Architecture:
    """One CNN drawn uniformly from the inclusive ``ranges`` (default: the paper's;
    ``check_ranges`` raises ValueError for bad ones)."""
    ranges = check_ranges(ranges)
    draw = {key: int(rng.integers(lo, hi + 1)) for key, (lo, hi) in ranges.items()}
    return Architecture(**draw)


def binary_labels(class_ids: np.ndarray, cutoff: int) -> np.ndarray:
    """1 where the class id is below ``cutoff``."""
    return (np.asarray(class_ids) < cutoff).astype(np.int32)


def share_percent(share: float) -> int:
    """A target positive share in (0, 1) as the whole percent that names its task (0.3 -> 30).

    Raises:
        ValueError: the share is outside (0, 1) or not a whole percent (task names must be exact).
    """
    percent = round(float(share) * 100)
    if not 0 < float(share) < 1 or abs(float(share) * 100 - percent) > 1e-6:
        raise ValueError(f"positive share {share!r} must be a whole percent in (0, 1), e.g. 0.3")
    return percent


def task_name(images: str, share: float) -> str:
    """The simulated task of one (image set, target share): "sim-<images>-p<percent>"."""
    return f"sim-{images}-p{share_percent(share)}"


def class_cutoffs(class_ids: np.ndarray, shares: list[float], n_classes: int | None = None) -> list[int]:
    """The class-id cutoff of each target positive share, from one image set's labels.

    Cutoff c makes the images of class id < c positive; its share is the fraction of
    ``class_ids`` below c. The rule: the cutoffs of all the shares are chosen together, as the
    strictly increasing cutoffs in 1..L-1 (in the order of the sorted shares) whose shares are
    closest to their targets in total absolute difference; of equally close choices the one
    with the smaller cutoffs wins (last share first), so the result is deterministic. Where no
    two targets compete for one cutoff this is simply each target's closest cutoff; where they
    do (an imbalanced set: on SVHN's training labels 0.2 and 0.3 are both closest to cutoff 2)
    the tasks stay distinct. Hence the shares 0.1..0.9 give cutoffs 1..9 on any 10-class set
    (balanced or not) and 10, 20, ..., 90 on a balanced 100-class set.

    Args:
        class_ids: (n,) int class ids in 0..L-1 (the workflow passes the training labels).
        shares: K distinct target positive shares in (0, 1), in any order.
        n_classes: L (default: max(class_ids) + 1).

    Returns:
        K class cutoffs in 1..L-1, in the order of ``shares``.

    Raises:
        ValueError: a share outside (0, 1) or repeated, labels outside 0..L-1, or fewer than
            K + 1 classes (K distinct tasks need K distinct cutoffs).
    """
    ids = np.asarray(class_ids).ravel()
    targets = np.asarray(shares, dtype=np.float64)
    k = len(targets)
    if not ((targets > 0) & (targets < 1)).all() or len(np.unique(targets)) != k:
        raise ValueError(f"positive shares {list(shares)} must be distinct and in (0, 1)")
    if ids.size == 0:
        raise ValueError("class_cutoffs needs class ids (the image set has no training labels)")
    n_classes = int(ids.max()) + 1 if n_classes is None else int(n_classes)
    if ids.min() < 0 or ids.max() >= n_classes:
        raise ValueError(f"class ids must be in 0..{n_classes - 1}")
    if k > n_classes - 1:
        raise ValueError(f"{k} positive shares need {k + 1} classes or more; the image set has {n_classes}")
    if k == 0:
        return []
    below = np.cumsum(np.bincount(ids, minlength=n_classes))[:-1] / ids.size  # share of cutoff m + 1
    order = np.argsort(targets, kind="stable")
    cost = np.abs(below[None, :] - targets[order][:, None])  # (K, L - 1)
    # total[j, m]: least cost of the j + 1 smallest targets with the last of them at cutoff m + 1
    total = np.full_like(cost, np.inf)
    total[0] = cost[0]
    for j in range(1, k):
        total[j, 1:] = cost[j, 1:] + np.minimum.accumulate(total[j - 1])[:-1]
    picks, limit = np.zeros(k, dtype=int), n_classes - 1
    for j in range(k - 1, -1, -1):  # np.argmin takes the first (smallest) of equal minima
        picks[j] = limit = int(np.argmin(total[j, :limit]))
    cutoffs = np.zeros(k, dtype=int)
    cutoffs[order] = picks + 1
    return [int(c) for c in cutoffs]


def share_cutoff(images: ImageData, shares: list[float], percent: int) -> int:
    """The class cutoff of the task "sim-<images>-p<percent>", one of the configured ``shares``,
    by ``class_cutoffs`` on the image set's training labels."""
    cutoffs = class_cutoffs(images.y_train, shares, images.n_classes)
    for share, cutoff in zip(shares, cutoffs):
        if share_percent(share) == int(percent):
            return cutoff
    raise ValueError(f"no configured positive share is {percent}% (shares: {list(shares)})")


def _name_key(name: str) -> int:
    """A stable 64-bit integer of a name (Python's ``hash`` of a str changes per process)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def cnn_rng(seed: int, images: str, cutoff: int, cnn: int) -> np.random.Generator:
    """The random generator of CNN ``cnn`` of the task (image set ``images``, class cutoff
    ``cutoff``): its architecture and then its training seed are drawn from it."""
    return np.random.default_rng([seed, _name_key(images), cutoff, cnn])


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
    """Scores of the CNNs ``cnn_ids`` of one (image set, class cutoff) task.

    CNN i's architecture and training follow from ``cnn_rng(seed, images.name, cutoff, i)``
    alone, so shards can run anywhere in any order and in any size, and each image set gets
    its own architectures.

    Returns:
        ((n_test, len(cnn_ids)) scores, the architectures as dicts).
    """
    from den.progress import Progress

    bar = Progress(len(cnn_ids), f"cnn zoo {images.name} cutoff {cutoff}", unit="cnns", stream=progress)
    columns, archs = [], []
    for done, i in enumerate(cnn_ids, start=1):
        rng = cnn_rng(seed, images.name, cutoff, i)
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


def simulated_task(name: str, images: ImageData, cutoff: int, shard_paths: list,
                   target_share: float | None = None) -> Task:
    """The aggregation task of one (image set, cutoff): CNN scores on the test images as
    covariates (one column per CNN, in CNN-id order), the binary test labels as labels.

    The task's ``metadata`` records how it was made, for reports: ``images``, ``n_classes``,
    ``class_cutoff``, ``target_share`` (None if not given), and the realized positive shares
    ``train_share`` (of the training images the CNNs learned from) and ``test_share`` (the
    task's own labels).
    """
    import json

    columns, names = [], []
    for path in shard_paths:
        with np.load(path, allow_pickle=False) as data:
            columns.append(data["scores"])
            names += [f"cnn{a['cnn']}" for a in json.loads(str(data["archs"]))]
    x = np.concatenate(columns, axis=1)
    order = np.argsort([int(n[3:]) for n in names], kind="stable")
    y = binary_labels(images.y_test, cutoff)
    metadata = {"images": images.name, "n_classes": images.n_classes, "class_cutoff": int(cutoff),
                "target_share": None if target_share is None else float(target_share),
                "train_share": round(float(binary_labels(images.y_train, cutoff).mean()), 6),
                "test_share": round(float(y.mean()), 6)}
    return Task(name=name, x=x[:, order], y=y, feature_names=[names[i] for i in order],
                classes=[f"class >= {cutoff}", f"class < {cutoff}"], metadata=metadata)


def task_summary(task: Task) -> dict:
    """How one simulated task came out, for the report of the CNN zoo
    (``results/tables/simulated_tasks``): its positive shares and the spread of its CNNs.

    Each covariate is one CNN's sigmoid score on the test images, so a CNN's accuracy is
    that of thresholding its score at 0.5 and its AUC that of ranking by it (a CNN with a
    constant score has AUC 0.5).

    Returns:
        a flat dict: task, images, target_share, class_cutoff, n_classes, train_share,
        test_share (from the task's ``metadata``), rows, cnns, and the min / median / max over
        the CNNs of accuracy and AUC (``accuracy_min`` ... ``auc_max``, in [0, 1]).
    """
    from sklearn.metrics import roc_auc_score

    meta = task.metadata or {}
    y = np.asarray(task.y)
    accuracy = ((np.asarray(task.x) >= 0.5) == (y[:, None] == 1)).mean(axis=0)
    both = len(np.unique(y)) == 2
    auc = np.array([roc_auc_score(y, column) if both else 0.5 for column in np.asarray(task.x).T])
    summary = {"task": task.name, **{key: meta.get(key) for key in (
        "images", "target_share", "class_cutoff", "n_classes", "train_share", "test_share")},
        "rows": int(task.n_rows), "cnns": int(task.n_features)}
    for name, values in (("accuracy", accuracy), ("auc", auc)):
        summary |= {f"{name}_min": float(values.min()), f"{name}_median": float(np.median(values)),
                    f"{name}_max": float(values.max())}
    return summary
