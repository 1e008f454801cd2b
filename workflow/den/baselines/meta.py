"""The paper's meta-learning baselines behind one interface (section 5 and appendix B).

Every baseline is a ``MetaLearner``:

    learner = make_baseline("proto_net", MetaConfig(head="binary", steps=2000))
    learner.pretrain(tasks)                          # episodic pre-training on a list of Tasks
    learner.adapt(x_support, y_support, n_classes)   # (n, d) support rows -> task-specific state
    proba = learner.predict_proba(x_query)           # (m, d) -> (m, n_classes)
    learner.save("model.npz"); MetaLearner.load("model.npz")

the same three steps as DEN (pre-train on tasks, adapt to a support set, predict a query
set). ``BASELINES`` lists them: Matching Net, Proto Net, TADAM, PMN, Relation Net, CNP and
Iwata & Kumagai (2020) (``den.baselines.metric``), MAML, BMAML and T-Net
(``den.baselines.maml``). Those modules register their classes in ``den.baselines.registry``,
where ``make_baseline`` and ``MetaLearner.load`` find them; this module imports neither.

Adding a baseline: subclass ``MetaLearner`` with a ``name``, ``init_params(rng)`` (a list of
numpy arrays, the trainable parameters) and ``scores(xs, ys, xq)`` ((Q, K) logits of the query
rows from the support rows and their one-hot labels; see ``ProtoNet`` in
``den.baselines.metric``), call ``registry.register(YourClass)`` in its module, and import
that module in ``den/baselines/__init__.py``. ``make_baseline``, ``MetaLearner.load`` and the
workflow's config (``methods.<name>: {kind: meta, model: <its name>}``) then know it.

Shared protocol:
- Features are standardised with the support set's mean and standard deviation (missing
  values become the mean, i.e. 0) and clipped to [-5, 5]; in pre-training each episode is
  standardised with its own support batch, exactly as at evaluation.
- Methods that need a fixed input length get ``n_inputs`` = D columns: a task with d < D
  features has d - D of them repeated at random, one with d > D keeps a random D (the
  paper's "randomly repeat features"). Iwata & Kumagai takes any d as it is.
- Pre-training is episodic: per step a task, C of its covariates, a support batch and a
  disjoint query batch (``den.train.episodes.sample_episode``, as for DEN); with
  ``flip_rate`` > 0 sampled covariates are negated per episode (as DEN's ``flip_rate``).
  Multiclass episodes give the task's classes random label slots among ``max_classes``.
- Metric methods and CNP classify the query with the support set; MAML, BMAML and T-Net
  are meta-trained with an inner loop and, at evaluation, fine-tune their last layer for
  ``finetune_epochs`` epochs on the support set (the paper's protocol).
"""

from __future__ import annotations

import abc
import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from den.baselines import registry
from den.errors import DENInputError, DENModelError, setting_type_problems

BASELINES = ("matching_net", "proto_net", "tadam", "pmn", "relation_net", "cnp", "iwata", "maml",
             "bmaml", "tnet")
FORMAT = "den-baseline-1"


@dataclasses.dataclass(frozen=True)
class MetaConfig:
    """Settings of a meta-learning baseline (architectures: appendix B of the paper).

    Attributes:
        head: "binary" (2 classes) or "multiclass" (up to ``max_classes``).
        max_classes: classes a multiclass model can predict.
        n_inputs: D, the fixed input length of methods that need one.
        steps: pre-training steps (outer steps for the MAML family).
        support_rows, query_rows: sizes of an episode's support and query batches.
        covariates_min, covariates_max: C per episode, uniform in [min, min(d, max)].
        learning_rate: Adam's learning rate (episodic methods; the paper's 0.001).
        flip_rate: probability of negating a sampled covariate in an episode.
        meta_batch: tasks per outer step (MAML family).
        inner_lr, inner_steps: the inner loop of MAML, BMAML and T-Net (alpha = 0.01).
        outer_lr: the outer (meta) learning rate of the MAML family (beta = 0.005).
        particles: BMAML's particles.
        finetune_epochs, finetune_batch, finetune_lr: last-layer fine-tuning at evaluation
            (MAML family; the paper fine-tunes for 5 epochs).
        seed: initial weights and episodes.
    """

    head: str = "binary"
    max_classes: int = 10
    n_inputs: int = 25
    steps: int = 2000
    support_rows: int = 50
    query_rows: int = 100
    covariates_min: int = 1
    covariates_max: int = 25
    learning_rate: float = 1e-3
    flip_rate: float = 0.0
    meta_batch: int = 4
    inner_lr: float = 0.01
    inner_steps: int = 1
    outer_lr: float = 0.005
    particles: int = 5
    finetune_epochs: int = 5
    finetune_batch: int = 10
    finetune_lr: float = 0.01
    seed: int = 0

    def __post_init__(self):
        problems = setting_type_problems(self)
        if problems:  # the checks below compare numbers
            raise ValueError("invalid MetaConfig: " + "; ".join(problems))
        if self.head not in ("binary", "multiclass"):
            problems.append(f"head must be 'binary' or 'multiclass', got {self.head!r}")
        for name in ("max_classes", "n_inputs", "steps", "support_rows", "query_rows", "covariates_min",
                     "covariates_max", "meta_batch", "inner_steps", "particles", "finetune_epochs",
                     "finetune_batch"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_classes < 2:
            problems.append("max_classes must be >= 2")
        for name in ("learning_rate", "inner_lr", "outer_lr", "finetune_lr"):
            if not getattr(self, name) > 0:
                problems.append(f"{name} must be > 0")
        if not 0 <= self.flip_rate <= 1:
            problems.append("flip_rate must be in [0, 1]")
        if self.covariates_min > self.covariates_max:  # C would be covariates_max, silently
            problems.append(f"covariates_min {self.covariates_min} > covariates_max {self.covariates_max}")
        if problems:
            raise ValueError("invalid MetaConfig: " + "; ".join(problems))

    @property
    def n_classes(self) -> int:
        """K, the width of the model's class output."""
        return 2 if self.head == "binary" else self.max_classes

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def standardise(x_support: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Standardise ``x_support`` and ``others`` with the support's column mean and std.

    Args:
        x_support: (n, d) with NaN for missing values.
        others: (m, d) arrays on the same columns.

    Returns:
        [support, *others] as float32, missing values 0 (the mean), clipped to [-5, 5].
    """
    x_support = np.asarray(x_support, np.float64)
    with np.errstate(all="ignore"):
        mean = np.nanmean(np.where(np.isnan(x_support).all(axis=0), 0.0, x_support), axis=0)
        std = np.nanstd(x_support, axis=0)
    mean = np.nan_to_num(mean)
    std = np.where(np.isfinite(std) & (std > 1e-6), std, 1.0)
    out = []
    for x in (x_support, *others):
        z = (np.asarray(x, np.float64) - mean) / std
        out.append(np.clip(np.nan_to_num(z, nan=0.0), -5, 5).astype(np.float32))
    return out


def fixed_length_columns(d: int, n_inputs: int, rng: np.random.Generator) -> np.ndarray:
    """(n_inputs,) column indices: every column once plus random repeats when d < n_inputs,
    a random subset when d > n_inputs."""
    if d >= n_inputs:
        return np.sort(rng.choice(d, n_inputs, replace=False))
    return np.concatenate([np.arange(d), rng.choice(d, n_inputs - d, replace=True)])


def one_hot(y: np.ndarray, k: int) -> np.ndarray:
    return np.eye(k, dtype=np.float32)[np.asarray(y, np.int64)]


def glorot(rng: np.random.Generator, n_in: int, n_out: int) -> np.ndarray:
    limit = np.sqrt(6.0 / (n_in + n_out))
    return rng.uniform(-limit, limit, (n_in, n_out)).astype(np.float32)


def dense_params(rng: np.random.Generator, sizes: list[int]) -> list[np.ndarray]:
    """Weights of a dense stack with layer sizes ``sizes`` = [in, hidden..., out]:
    [W0, b0, W1, b1, ...] (Glorot-uniform weights, zero biases)."""
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params += [glorot(rng, n_in, n_out), np.zeros(n_out, np.float32)]
    return params


def apply_dense(params, x, final_relu: bool = False):
    """Apply a dense stack ([W0, b0, ...]); ReLU between layers (and after the last if asked)."""
    from den._tf import tf

    n = len(params) // 2
    for i in range(n):
        x = tf.matmul(x, params[2 * i]) + params[2 * i + 1]
        if i < n - 1 or final_relu:
            x = tf.nn.relu(x)
    return x


class MetaLearner(abc.ABC):
    """Base class: episodic pre-training, adaptation to a support set, prediction.

    Subclasses set ``name``, build their weights in ``init_params`` and define
    ``scores(xs, ys, xq)`` (support (S, D), one-hot support labels (S, K), query (Q, D) ->
    (Q, K) class scores). The default loss is softmax cross-entropy over the classes present
    in the support set; ``fixed_length`` says whether inputs are brought to ``n_inputs``
    columns. The MAML family overrides ``train_step``, ``adapt`` and ``predict_proba``.
    """

    name = "meta"
    fixed_length = True

    def __init__(self, config: MetaConfig):
        from den._tf import check_not_forked, mark_tensorflow_used, tf

        check_not_forked()  # as DEN: TensorFlow's thread pools do not survive a fork
        mark_tensorflow_used()
        self.config = config
        rng = np.random.default_rng([config.seed, 17])
        self.params = [tf.Variable(p, name=f"p{i}") for i, p in enumerate(self.init_params(rng))]
        self.metadata: dict = {}
        self._support = None
        self._step_fn = None

    # -- to be defined by each method -------------------------------------------------------
    @abc.abstractmethod
    def init_params(self, rng: np.random.Generator) -> list[np.ndarray]:
        """The method's initial weights, in the order of ``self.params``."""

    @abc.abstractmethod
    def scores(self, xs, ys, xq):
        """(S, D) support rows, (S, K) one-hot labels, (Q, D) query rows -> (Q, K) class scores."""

    def regularization(self):
        return 0.0

    # -- losses -------------------------------------------------------------------------------
    def episode_loss(self, xs, ys, xq, yq):
        """Mean cross-entropy of the query rows whose class occurs in the support batch."""
        from den._tf import tf

        present = tf.reduce_max(ys, axis=0) > 0
        logits = tf.where(present[None, :], self.scores(xs, ys, xq), -1e9)
        weight = tf.reduce_sum(yq * tf.cast(present, tf.float32)[None, :], axis=1)
        ce = tf.nn.softmax_cross_entropy_with_logits(labels=yq, logits=logits)
        return tf.reduce_sum(ce * weight) / tf.maximum(tf.reduce_sum(weight), 1.0) + self.regularization()

    def class_probabilities(self, xs, ys, xq):
        from den._tf import tf

        present = tf.reduce_max(ys, axis=0) > 0
        return tf.nn.softmax(tf.where(present[None, :], self.scores(xs, ys, xq), -1e9))

    # -- episodes -------------------------------------------------------------------------------
    def _prepare(self, x_support, x_query, rng):
        """Standardise on the support rows and bring both to the model's input length."""
        from den._tf import check_not_forked

        check_not_forked()  # before a prediction's TensorFlow work
        xs, xq = standardise(x_support, x_query)
        if self.fixed_length:
            columns = fixed_length_columns(xs.shape[1], self.config.n_inputs, rng)
            xs, xq = xs[:, columns], xq[:, columns]
        return xs, xq

    def sample_episode(self, tasks, rng: np.random.Generator):
        """One pre-training episode as arrays: (xs, ys one-hot, xq, yq one-hot)."""
        from den.train.episodes import sample_episode

        c = self.config
        sizes = [(len(t.y), t.n_features, t.n_classes) for t in tasks]
        episode = sample_episode(sizes, [t.y for t in tasks], rng,
                                 support_rows=(c.support_rows, c.support_rows), query_rows=c.query_rows,
                                 covariates=(c.covariates_min, c.covariates_max),
                                 label_slots=c.max_classes if c.head == "multiclass" else None)
        task = tasks[episode.task]
        x = task.x[:, episode.columns]
        if c.flip_rate > 0:
            x = x * np.where(rng.random(x.shape[1]) < c.flip_rate, -1.0, 1.0)
        xs, xq = self._prepare(x[episode.support], x[episode.query], rng)
        slots = episode.label_slots
        return (xs, one_hot(slots[task.y[episode.support]], c.n_classes), xq,
                one_hot(slots[task.y[episode.query]], c.n_classes))

    # -- pre-training ---------------------------------------------------------------------------
    def make_optimizer(self):
        from den._tf import tf_keras

        return tf_keras.optimizers.Adam(self.config.learning_rate)

    def train_step(self, tasks, rng) -> float:
        """One gradient step on one episode; returns its loss."""
        from den._tf import tf

        if self._step_fn is None:
            optimizer = self.make_optimizer()

            @tf.function(reduce_retracing=True)
            def step(xs, ys, xq, yq):
                with tf.GradientTape() as tape:
                    loss = self.episode_loss(xs, ys, xq, yq)
                grads = tape.gradient(loss, self.params)
                optimizer.apply_gradients([(g, v) for g, v in zip(grads, self.params) if g is not None])
                return loss

            self._step_fn = step
        return float(self._step_fn(*self.sample_episode(tasks, rng)))

    def pretrain(self, tasks, progress=None) -> MetaLearner:
        """Episodic pre-training on ``tasks`` (a list of ``Task``) for ``config.steps`` steps.

        Step i draws its episode from ``default_rng([seed, i])``. Progress lines go to
        ``progress`` (a ``den.progress.Progress``) when given.
        """
        import time

        from den._tf import check_not_forked

        check_not_forked()
        if not tasks:
            raise DENInputError(f"{self.name}: pre-training needs at least one task")
        if self.config.head == "binary" and any(t.n_classes != 2 for t in tasks):
            raise DENInputError(f"{self.name}: a binary model pre-trains on binary tasks only")
        if any(t.n_classes > self.config.max_classes for t in tasks):
            raise DENInputError(f"{self.name}: a task has more classes than "
                                f"max_classes={self.config.max_classes}")
        start, losses = time.perf_counter(), []
        for i in range(self.config.steps):
            losses.append(self.train_step(tasks, np.random.default_rng([self.config.seed, i])))
            if progress is not None:
                progress.update(i + 1, loss=float(np.mean(losses[-50:])))
        elapsed = time.perf_counter() - start
        self.metadata = {"method": self.name, "steps": self.config.steps, "tasks": [t.name for t in tasks],
                         "final_loss": float(np.mean(losses[-50:])),
                         "steps_per_s": self.config.steps / max(elapsed, 1e-9)}
        return self

    # -- a new task -----------------------------------------------------------------------------
    def _check_support(self, x_support, y_support, n_classes):
        from den._tf import check_not_forked

        check_not_forked()  # a learner built before a fork, adapted in the child, would hang
        x_support = np.asarray(x_support, np.float64)
        y_support = np.asarray(y_support)
        if x_support.ndim != 2 or len(x_support) != len(y_support):
            raise DENInputError(f"{self.name}: support rows must be (n, d) with n labels, got "
                                f"{x_support.shape} and {y_support.shape}")
        if n_classes > self.config.n_classes:
            raise DENInputError(f"{self.name}: the task has {n_classes} classes, the model at most "
                                f"{self.config.n_classes}")
        return x_support, y_support.astype(np.int64)

    def adapt(self, x_support, y_support, n_classes: int, seed: int = 0) -> MetaLearner:
        """Keep the (standardised) support set; the query is classified against it."""
        x_support, y_support = self._check_support(x_support, y_support, n_classes)
        self._support = (x_support, y_support, n_classes, seed)
        return self

    def predict_proba(self, x_query, chunk_rows: int = 4096) -> np.ndarray:
        """(m, d) query rows -> (m, n_classes) class probabilities."""
        from den._tf import tf

        if self._support is None:
            raise DENInputError(f"{self.name}: call adapt() with a support set first")
        x_support, y_support, n_classes, seed = self._support
        xs, xq = self._prepare(x_support, np.asarray(x_query, np.float64), np.random.default_rng([seed, 3]))
        ys = tf.constant(one_hot(y_support, self.config.n_classes))
        fn = self._predict_fn()
        out = [fn(tf.constant(xs), ys, tf.constant(xq[i:i + chunk_rows])).numpy()
               for i in range(0, len(xq), chunk_rows)]
        proba = np.concatenate(out)[:, :n_classes] if out else np.zeros((0, n_classes))
        return proba / np.maximum(proba.sum(axis=1, keepdims=True), 1e-12)

    def _predict_fn(self):
        from den._tf import tf

        if getattr(self, "_predict", None) is None:
            self._predict = tf.function(self.class_probabilities, reduce_retracing=True)
        return self._predict

    # -- files ----------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Method, config, metadata and weights in one ``.npz`` file, written atomically."""
        from den.io import atomic_write

        arrays = {f"p{i}": v.numpy() for i, v in enumerate(self.params)}
        arrays["format"] = np.array(FORMAT)
        arrays["method"] = np.array(self.name)
        arrays["config"] = np.array(json.dumps(self.config.to_dict()))
        arrays["metadata"] = np.array(json.dumps(self.metadata))
        with atomic_write(path) as handle:
            np.savez(handle, **arrays)
        return Path(path)

    @staticmethod
    def load(path: str | os.PathLike) -> MetaLearner:
        """Read a model written by ``save``; raises DENModelError naming the file."""
        path = Path(path)
        if not path.is_file():
            raise DENModelError(f"baseline model {str(path)!r} does not exist")
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError) as err:
            raise DENModelError(f"baseline model {str(path)!r} cannot be read: {err}") from err
        if str(arrays.get("format", "")) != FORMAT:
            raise DENModelError(f"{str(path)!r} is not a baseline model file (format {FORMAT})")
        learner = make_baseline(str(arrays["method"]), MetaConfig(**json.loads(str(arrays["config"]))))
        if len(learner.params) != sum(k.startswith("p") and k[1:].isdigit() for k in arrays):
            raise DENModelError(f"{str(path)!r}: weights do not match method {str(arrays['method'])!r}")
        for i, variable in enumerate(learner.params):
            variable.assign(arrays[f"p{i}"])
        learner.metadata = json.loads(str(arrays["metadata"]))
        return learner


def baseline_names() -> tuple[str, ...]:
    """Every baseline ``make_baseline`` can build: ``BASELINES`` (the paper's), then any other
    class registered in ``den.baselines.registry``."""
    return (*BASELINES, *(name for name in registry.registered() if name not in BASELINES))


def make_baseline(method: str, config: MetaConfig) -> MetaLearner:
    """A new, untrained baseline by name (one of ``baseline_names()``; the classes come from
    ``den.baselines.registry``, which the method modules fill)."""
    cls = registry.baseline_class(method)
    if cls is None:
        raise ValueError(f"baseline must be one of {baseline_names()}, got {method!r} (a baseline of "
                         f"your own: register it, see den.baselines.meta)")
    return cls(config)
