"""Fine-tuning (section 4.4): only the task's calibration block learns; h, v, phi and psi stay
bit-identical. Network adaptation (``FinetuneConfig.network_steps``, not in the paper) also
trains a task's own copy of every network weight on the support set.

Each step splits the support set into two stratified random halves, embeds one half and
takes the loss on the other, exactly like a pre-training episode. The halvings are drawn
first; all steps of one run (Adam, the lattice layer's projections, the held-out losses of
early stopping) then run in one compiled call, ``DEN.finetune_fn``.
"""

from __future__ import annotations

import dataclasses
from typing import TextIO

import numpy as np

from den._tf import tf
from den.errors import DENError, DENInputError, DENModelError
from den.model.task_model import TaskModel
from den.train.config import FinetuneConfig
from den.train.episodes import halve_support

# With a progress stream, ``FittedTask.proba`` scores a larger query in blocks of this many rows
# and reports after each (about 1-10 s a block on 2 cores, by the model and the classes).
PROGRESS_BLOCK_ROWS = 16384

# FinetuneConfig settings that act across task models (members, feature subsets, held-out
# epochs, network adaptation): ``fit_task`` applies them, ``finetune`` (one model) cannot.
_FIT_TASK_SETTINGS = ("ensemble", "early_stopping", "feature_counts", "network_steps")


def finetune(task_model: TaskModel, config: FinetuneConfig | None = None) -> list[float]:
    """Fine-tune ``task_model``'s calibration on its support set, in place: the paper's
    fine-tuning (``epochs`` x ``steps_per_epoch`` steps at ``learning_rate``, ``seed``, and
    ``output_scaling``).

    A model without a calibration block (``use_calibration=False``) is left unchanged.

    Returns:
        the loss of every step.

    Raises:
        DENInputError: ``config`` is no ``FinetuneConfig``, or sets what only ``fit_task``
            applies (an ensemble, early stopping, feature counts, network adaptation).
    """
    config = FinetuneConfig() if config is None else config
    if not isinstance(config, FinetuneConfig):
        raise DENInputError(f"finetune's config must be a FinetuneConfig (or None: the defaults), not "
                            f"a {type(config).__name__}; e.g. FinetuneConfig(**settings)")
    default = FinetuneConfig()
    beyond = [name for name in _FIT_TASK_SETTINGS if getattr(config, name) != getattr(default, name)]
    if beyond:
        raise DENInputError(f"finetune fine-tunes one task model's calibration and would ignore "
                            f"{', '.join(beyond)}; use den.train.finetune.fit_task(den, x_support, "
                            f"y_support, n_classes, config), which applies them")
    return _finetune_rows(task_model, config)[0]


def _finetune_rows(task_model: TaskModel, config: FinetuneConfig,
                   train_rows: np.ndarray | None = None,
                   validation_rows: np.ndarray | None = None
                   ) -> tuple[list[float], list[float], list[list[np.ndarray]]]:
    """Fine-tune on the support rows ``train_rows`` (default all), in place.

    With ``validation_rows``, the loss of those rows (embedding the training rows) is
    measured before the first epoch and after each one, and the calibration's variables
    are kept at each of those points.

    Returns:
        (loss of every step, epochs + 1 held-out losses, epochs + 1 variable snapshots);
        the last two are empty without ``validation_rows``.
    """
    den = task_model.den
    if not den.config.use_calibration or config.epochs == 0:
        return [], [], []
    if config.output_scaling and den.config.head != "binary":
        raise ValueError("fine-tuning output_scaling learns the binary head's logit scale and "
                         f"bias; this model has the {den.config.head} head (set it to false)")
    rng = np.random.default_rng(config.seed)
    rows = np.arange(len(task_model.y_support)) if train_rows is None else np.asarray(train_rows)
    u, y = task_model.unit_support[rows], task_model.y_support[rows]
    scale, bias = task_model.logit_scale, task_model.logit_bias
    if config.output_scaling:
        start_scale, start_bias = platt_start(task_model, rows, np.random.default_rng([config.seed, 1]))
        scale.assign(start_scale)
        bias.assign(start_bias)
    # The call's iterations: each step's halving (loss half as query, embedded half as
    # support, then an update) and, with validation rows, the held-out loss (the training
    # rows embedded) before the first step and after each epoch, which updates nothing.
    n_train = len(rows)
    held = np.zeros(0, np.int64) if validation_rows is None else np.asarray(validation_rows)
    evaluate = (n_train + np.arange(len(held)), np.arange(n_train), False)
    schedule = [] if validation_rows is None else [evaluate]
    for step, (embed_rows, loss_rows) in enumerate(
            support_halvings(y, config.epochs * config.steps_per_epoch, rng)):
        schedule.append((loss_rows, embed_rows, True))
        if validation_rows is not None and (step + 1) % config.steps_per_epoch == 0:
            schedule.append(evaluate)
    query, support, updates = zip(*schedule)
    step_tuples = _step_tuples(len(task_model.tuples), updates, config.tuples_per_step,
                               np.random.default_rng([config.seed, 2]))
    kernel, missing = task_model.calibration_parameters()
    with den.network_weights(task_model.network_weights):  # no other thread's weights meanwhile
        losses, kept = den.finetune_fn(
            tf.constant(np.concatenate([u, task_model.unit_support[held]])),
            tf.constant(np.concatenate([y, task_model.y_support[held]])),
            *(tf.constant(a) for a in (*_flat(query), *_flat(support))), tf.constant(updates),
            kernel, missing, scale, bias, tf.constant(task_model.tuples),
            tf.constant(task_model.n_classes, tf.int32), *(tf.constant(a) for a in _flat(step_tuples)),
            tf.constant(config.learning_rate, tf.float32),
            tf.constant(config.output_scaling_learning_rate, tf.float32),
            tf.constant(bool(config.output_scaling)))
    losses, updates = losses.numpy(), np.asarray(updates)
    # kernel (K, d), missing outputs (1, d) as the lattice layer stores them, s, b
    variables = task_model.finetuned_variables
    kept = [a.numpy().reshape((len(updates), *v.shape)) for a, v in zip(kept, variables)]
    for variable, values in zip(variables, kept):
        variable.assign(values[-1])
    held_out, snapshots = [], []
    if validation_rows is not None:
        held_out = losses[~updates].tolist()
        snapshots = [[values[i] for values in kept] for i in np.nonzero(~updates)[0]]
    task_model.finetune_epochs += config.epochs
    task_model.invalidate()
    return losses[updates].tolist(), held_out, snapshots


def _step_tuples(n_tuples: int, updates, tuples_per_step: int | None,
                 rng: np.random.Generator) -> list[np.ndarray]:
    """Per fine-tuning iteration, the indices of the task's T feature tuples it reads: a
    fresh sample of ``tuples_per_step`` of them (without replacement, sorted) for an update
    step, all T for an evaluation (early stopping's held-out loss) and wherever
    ``tuples_per_step`` is None or at least T."""
    every = np.arange(n_tuples, dtype=np.int32)
    if tuples_per_step is None or tuples_per_step >= n_tuples:
        return [every] * len(updates)
    return [np.sort(rng.choice(n_tuples, tuples_per_step, replace=False)).astype(np.int32) if update
            else every for update in updates]


def adapt_network(task_model: TaskModel, config: FinetuneConfig) -> list[float]:
    """Network adaptation: ``config.network_steps`` Adam steps (learning rate
    ``config.network_learning_rate``) of every network weight on the task's support set,
    each on one halving (``support_halvings`` with seed ``config.seed``: embed one half, take
    the loss on the other, as a pre-training episode) and over every feature tuple or, with
    ``config.tuples_per_step``, a fresh sample of them; the calibration held as it is. The
    result is the task model's ``network_weights``; the shared DEN keeps its own.

    Returns:
        the loss of every step (empty when ``network_steps`` is 0, or where a class has fewer
        than ``network_min_class_rows`` support rows: then nothing is adapted).
    """
    counts = np.bincount(task_model.y_support, minlength=task_model.n_classes)
    if config.network_steps == 0 or counts.min() < config.network_min_class_rows:
        return []
    den = task_model.den
    kernel, missing = task_model.calibration_parameters()
    z = den.transform(tf.constant(task_model.unit_support), kernel, missing)  # (n, d)
    y = task_model.y_support
    n_classes = tf.constant(task_model.n_classes, tf.int32)
    learning_rate = tf.constant(config.network_learning_rate, tf.float32)
    halvings = support_halvings(y, config.network_steps, np.random.default_rng(config.seed))
    step_tuples = [tf.constant(task_model.tuples[rows]) for rows in _step_tuples(
        len(task_model.tuples), [True] * config.network_steps, config.tuples_per_step,
        np.random.default_rng([config.seed, 3]))]
    losses = []
    with den.network_weights(task_model.network_weights):  # no other thread's weights meanwhile
        start = task_model.network_weights or [v.numpy() for v in den.network.trainable_variables]
        with den.network_weights(start):  # the steps train the shared variables, restored after
            den.reset_network_moments()
            for step, (embed_rows, loss_rows) in enumerate(halvings):
                losses.append(float(den.network_step_fn(
                    tf.gather(z, loss_rows), tf.constant(y[loss_rows]), tf.gather(z, embed_rows),
                    tf.constant(y[embed_rows]), step_tuples[step], n_classes, learning_rate,
                    tf.constant(step + 1, tf.float32))))
            task_model.network_weights = [v.numpy() for v in den.network.trainable_variables]
    task_model.invalidate()
    return losses


def support_halvings(y: np.ndarray, steps: int, rng: np.random.Generator
                     ) -> list[tuple[np.ndarray, np.ndarray]]:
    """(embedding half, loss half) of the support labels ``y`` for each of ``steps``
    fine-tuning steps (``halve_support``; a support set too small to halve is both halves),
    drawn in advance: the same draws as halving at each step, as nothing else reads ``rng``
    in between."""
    halvings = []
    for _ in range(steps):
        embed_rows, loss_rows = halve_support(y, rng)
        if len(loss_rows) == 0:
            embed_rows = loss_rows = np.arange(len(y))
        halvings.append((embed_rows, loss_rows))
    return halvings


def _flat(parts) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays as one int32 array and the (len(parts) + 1,) bounds of each."""
    bounds = np.cumsum([0] + [len(p) for p in parts])
    return np.concatenate([np.zeros(0, np.int64), *parts]).astype(np.int32), bounds.astype(np.int32)


PLATT_HALVINGS = 10
PLATT_MIN_SCALE = 0.05


def platt_start(task_model: TaskModel, rows: np.ndarray, rng: np.random.Generator
                ) -> tuple[float, float]:
    """Starting (s, b) of ``output_scaling``: the logistic fit y ~ a * logit + b (nearly
    unregularised) of the binary logits the model gives the support rows ``rows`` over
    ``PLATT_HALVINGS`` random halvings of them (embed one half, score the other, as in a
    fine-tuning step), with s = log(max(a, ``PLATT_MIN_SCALE``)): a pre-trained model that
    ranks the rows backwards or not at all starts nearly flat instead of inverted.

    Returns:
        (s, b) as floats.
    """
    from sklearn.linear_model import LogisticRegression

    den = task_model.den
    u, y = task_model.unit_support[rows], task_model.y_support[rows]
    kernel, missing = task_model.calibration_parameters()
    tuples, n_classes = tf.constant(task_model.tuples), tf.constant(task_model.n_classes, tf.int32)
    logits, labels = [], []
    with den.network_weights(task_model.network_weights):  # no other thread's weights meanwhile
        for _ in range(PLATT_HALVINGS):
            embed_rows, loss_rows = halve_support(y, rng)
            if len(loss_rows) == 0:
                embed_rows = loss_rows = np.arange(len(y))
            context = den.context_fn(tf.constant(u[embed_rows]), tf.constant(y[embed_rows]), kernel,
                                     missing, tuples, n_classes)
            logits.append(den.query_fn(tf.constant(u[loss_rows]), kernel, missing, *context,
                                       tuples).numpy())
            labels.append(y[loss_rows])
    logits, labels = np.concatenate(logits)[:, None], np.concatenate(labels)
    if len(np.unique(labels)) < 2:
        return 0.0, 0.0
    fit = LogisticRegression(C=1e4).fit(logits, labels)
    return float(np.log(max(fit.coef_[0, 0], PLATT_MIN_SCALE))), float(fit.intercept_[0])


def stratified_folds(y: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """(n,) fold index 0..k-1 of each row: each class's rows are shuffled and dealt to the
    folds in turn, starting where the previous class stopped, so fold sizes differ by at
    most one and every class is spread as evenly as it can be."""
    folds = np.empty(len(y), dtype=np.int64)
    start = 0
    for label in np.unique(y):
        rows = rng.permutation(np.nonzero(y == label)[0])
        folds[rows] = (start + np.arange(len(rows))) % k
        start = (start + len(rows)) % k
    return folds


def fine_tuned_models(den, x_support: np.ndarray, y_support: np.ndarray, n_classes: int,
                      config: FinetuneConfig | None = None, x_unlabeled: np.ndarray | None = None
                      ) -> tuple[list[TaskModel], list[list[float]]]:
    """``config.ensemble`` task models of one support set, each fine-tuned (``finetune``, then
    ``adapt_network``) with halving seed ``config.seed + j``; None gives one model left at the
    pre-trained PLFs (DEN w/o fine-tuning), and so does a config that cannot change them
    (``epochs`` 0 or a model without calibration, and no network adaptation: no
    ``network_steps``, or a class below ``network_min_class_rows``), or early
    stopping that keeps epoch 0: k copies would rank identically (with ``output_scaling``
    each keeps its own Platt map, a monotone change of its logits) and cost k predictions.

    Args:
        den: the pre-trained ``DEN``.
        x_support: (n, d) support features; y_support: (n,) class codes 0..n_classes-1.
        x_unlabeled: optional (m, d) rows without labels (they widen the keypoint spans).

    Returns:
        the task models and each one's fine-tuning losses (one list per run).
    """
    adapts = config is not None and config.network_steps > 0 and \
        np.bincount(y_support, minlength=n_classes).min() >= config.network_min_class_rows
    if config is None or not (adapts or (config.epochs and den.config.use_calibration)):
        return [TaskModel(den, x_support, y_support, n_classes, x_unlabeled=x_unlabeled)], [[]]
    if config.early_stopping:
        if len(y_support) < config.ensemble:
            raise DENInputError(f"early_stopping holds out each of ensemble {config.ensemble} folds "
                                f"of the support rows in turn, but there are {len(y_support)} rows: "
                                f"set ensemble to at most {len(y_support)}")
        return _early_stopped_models(den, x_support, y_support, n_classes, config, x_unlabeled)
    models, losses = [], []
    for j in range(config.ensemble):
        task_model = TaskModel(den, x_support, y_support, n_classes, x_unlabeled=x_unlabeled)
        run = dataclasses.replace(config, seed=config.seed + j)
        losses.append(_finetune_rows(task_model, run)[0] + adapt_network(task_model, run))
        models.append(task_model)
    return models, losses


def mean_proba(task_models: list[TaskModel], x_query: np.ndarray,
               chunk_rows: int | None = None) -> np.ndarray:
    """(m, L) class probabilities of query rows, averaged over an ensemble of task models."""
    return np.mean([model.predict_proba(x_query, chunk_rows) for model in task_models], axis=0)


def one_vs_rest_min_rows(config: FinetuneConfig | None) -> int:
    """Support rows that a class, and the rest, each need for its "this class or not" model to
    be fine-tuned (``one_vs_rest_models``): 2, or early stopping's folds."""
    return config.ensemble if config is not None and config.early_stopping else 2


def one_vs_rest_models(den, x_support: np.ndarray, y_support: np.ndarray, n_classes: int,
                       config: FinetuneConfig | None = None, x_unlabeled: np.ndarray | None = None
                       ) -> tuple[list[list[TaskModel] | None], list[list[float]]]:
    """A binary DEN on a task of ``n_classes`` > 2 classes, one binary task per class.

    For each class k the binary task "class k or not" of the support rows gets its own task
    models (``fine_tuned_models`` with ``config``; without fine-tuning where class k has
    fewer than two support rows, or fewer rows than early stopping's folds; without network
    adaptation where ``config.network_one_vs_rest`` is False).

    Returns:
        per class k, its task models, or None for a class with no support row; and the
        fine-tuning losses of every run, class by class (one list per task model).
    """
    if config is not None and config.network_steps and not config.network_one_vs_rest:
        config = dataclasses.replace(config, network_steps=0)
    class_models, losses = [], []
    for k in range(n_classes):
        binary = (np.asarray(y_support) == k).astype(np.int32)
        positives = int(binary.sum())
        if positives == 0:
            class_models.append(None)
            continue
        class_config = config if min(positives, len(binary) - positives) >= one_vs_rest_min_rows(config) \
            else None
        models, runs = fine_tuned_models(den, x_support, binary, 2, class_config, x_unlabeled=x_unlabeled)
        class_models.append(models)
        losses += runs
    return class_models, losses


def one_vs_rest_proba(class_models: list[list[TaskModel] | None], x_query: np.ndarray,
                      chunk_rows: int | None = None) -> np.ndarray:
    """(m, L) class probabilities from ``one_vs_rest_models``: each class's probability of
    "class k" (averaged over its task models), normalised over the classes; a class with no
    support row gets 0."""
    scores = np.zeros((len(x_query), len(class_models)))
    for k, models in enumerate(class_models):
        if models is not None:
            scores[:, k] = mean_proba(models, x_query, chunk_rows)[:, 1]
    total = scores.sum(axis=1, keepdims=True)
    present = np.array([m is not None for m in class_models], dtype=float)
    return np.where(total > 0, scores / np.where(total > 0, total, 1.0), present / present.sum())


@dataclasses.dataclass
class FittedTask:
    """A pre-trained DEN fitted to one task's support set (``fit_task``).

    Attributes:
        task_models: every task model, class by class one-vs-rest (their ``finetune_epochs``
            and ``n_features`` say what fine-tuning chose).
        losses: each task model's fine-tuning losses (an empty list without fine-tuning).
        class_models: one-vs-rest, each class's task models (None for a class without
            support rows); None where the model's own head covers the task's classes.
    """

    task_models: list[TaskModel]
    losses: list[list[float]]
    class_models: list[list[TaskModel] | None] | None = None

    @property
    def one_vs_rest(self) -> bool:
        return self.class_models is not None

    def proba(self, x_query: np.ndarray, chunk_rows: int | None = None,
              progress: TextIO | str | None = None) -> np.ndarray:
        """(m, L) class probabilities of the query rows: an (m, d) array, or a
        ``den.io.SpooledRows`` of them (read from its file a block at a time).

        With ``progress`` (a stream, or "stderr"), or rows spooled to a file, a query of more
        than ``PROGRESS_BLOCK_ROWS`` rows is scored block by block (with ``progress``, a
        progress line of rows done, rows/s and ETA after each block); the probabilities are the
        same (rows are scored independently).

        Raises:
            DENModelError: a probability is not finite (weights that overflow on these rows),
                rather than NaN probabilities that would read as a prediction of class 0.
        """
        from den.io import SpooledRows

        spooled = isinstance(x_query, SpooledRows)
        x_query = x_query if spooled else np.asarray(x_query)
        rows = len(x_query)
        if rows <= PROGRESS_BLOCK_ROWS or (progress is None and not spooled):
            proba = self._proba(x_query[0:rows], chunk_rows)
        else:
            from den.progress import Progress

            meter = None if progress is None else Progress(rows, "predict", unit="rows", stream=progress)
            blocks = []
            for start in range(0, rows, PROGRESS_BLOCK_ROWS):
                blocks.append(self._proba(x_query[start:start + PROGRESS_BLOCK_ROWS], chunk_rows))
                if meter is not None:
                    meter.update(start + len(blocks[-1]))  # the last block's line always prints
            proba = np.concatenate(blocks)
        if not np.isfinite(proba).all():
            bad = np.flatnonzero(~np.isfinite(proba).all(axis=1))
            raise DENModelError(f"the fitted model's class probabilities of {len(bad)} query "
                                f"row(s) (first: row {bad[0]}) are not finite: its weights "
                                f"overflow there (a model pre-trained or fine-tuned at too large "
                                f"a learning rate?)")
        return proba

    def _proba(self, x_query: np.ndarray, chunk_rows: int | None) -> np.ndarray:
        if self.one_vs_rest:
            return one_vs_rest_proba(self.class_models, x_query, chunk_rows)
        return mean_proba(self.task_models, x_query, chunk_rows)


def fit_task(den, x_support: np.ndarray, y_support: np.ndarray, n_classes: int,
             config: FinetuneConfig | None = None, x_unlabeled: np.ndarray | None = None) -> FittedTask:
    """The one way a pre-trained DEN meets a task: ``fine_tuned_models``, or where a
    binary-head DEN meets more than two classes, ``one_vs_rest_models``.

    Args:
        x_support: (n, d) support features; y_support: (n,) class codes 0..n_classes-1;
        config: fine-tuning (None: DEN w/o fine-tuning); x_unlabeled: optional (m, d) rows
            without labels (they widen the keypoint spans).
    """
    if den.config.head == "binary" and n_classes > 2:
        class_models, losses = one_vs_rest_models(den, x_support, y_support, n_classes, config,
                                                  x_unlabeled=x_unlabeled)
        task_models = [m for models in class_models if models for m in models]
        fitted = FittedTask(task_models, losses, class_models)
    else:
        task_models, losses = fine_tuned_models(den, x_support, y_support, n_classes, config,
                                                x_unlabeled=x_unlabeled)
        fitted = FittedTask(task_models, losses)
    if not all(task_model.finite() for task_model in fitted.task_models):
        rates = " and ".join(f"{name} (now {getattr(config, name):g})"
                             for name in learning_rates_used(den, config))
        raise DENError(f"fine-tuning diverged: the fitted weights are not finite (NaN or "
                       f"infinite), so every prediction would be NaN; lower {rates}")
    return fitted


def learning_rates_used(den, config: FinetuneConfig) -> list[str]:
    """The names of the ``FinetuneConfig`` learning rates that ``config`` uses with ``den``."""
    return [name for name, uses in (
        ("learning_rate", config.epochs > 0 and den.config.use_calibration),
        ("output_scaling_learning_rate", config.output_scaling and den.config.use_calibration),
        ("network_learning_rate", config.network_steps > 0)) if uses]


def _early_stopped_models(den, x_support, y_support, n_classes, config, x_unlabeled):
    """``fine_tuned_models`` with ``config.early_stopping``: one run per fold, all stopped at
    the epoch ``choose_epoch`` picks from the folds' held-out losses; with
    ``config.feature_counts``, the runs of the candidate (all features, or the k most
    informative for each k < d, smaller k first) that ``choose_features`` picks from each
    candidate's held-out losses at its own chosen epoch. Epoch 0 on all features returns one
    model (DEN w/o fine-tuning: the k runs would rank identically) and every run's losses."""
    n_features = np.asarray(x_support).shape[1]
    candidates, fold_losses = [], []
    for count in [None, *sorted({k for k in config.feature_counts if k < n_features})]:
        runs = cross_validated_runs(den, x_support, y_support, n_classes, config, x_unlabeled,
                                    n_informative=count)
        epoch = choose_epoch(runs[2], config.early_stopping_tolerance)
        candidates.append((count, epoch, runs))
        fold_losses.append(runs[2][:, epoch])
    count, epoch, (models, losses, _, snapshots) = candidates[
        choose_features(np.asarray(fold_losses).T, config.feature_counts_tolerance)]
    restore_epoch(models, snapshots, epoch)
    if epoch == 0 and count is None:  # every run is back at the pre-trained PLFs: one ranks the same
        models = models[:1]
    return models, losses


def cross_validated_runs(den, x_support: np.ndarray, y_support: np.ndarray, n_classes: int,
                         config: FinetuneConfig, x_unlabeled: np.ndarray | None = None,
                         n_informative: int | None = None):
    """The k = ``config.ensemble`` runs of early stopping: the support rows are dealt into k
    stratified folds (``stratified_folds``, seed ``config.seed``); run j fine-tunes on every
    fold but j (halving seed ``config.seed + j``) for ``config.epochs`` epochs. With
    ``n_informative``, run j reads only the ``informative_features`` of its training folds.

    Returns:
        (task models left at the last epoch, each run's step losses, (k, epochs + 1) held-out
        loss of fold j before the first epoch and after each one, each run's epochs + 1
        snapshots of the calibration's variables).
    """
    folds = stratified_folds(np.asarray(y_support), config.ensemble,
                             np.random.default_rng(config.seed))
    models, losses, curves, snapshots = [], [], [], []
    for j in range(config.ensemble):
        train_rows = np.nonzero(folds != j)[0]
        features = None if n_informative is None else informative_features(
            np.asarray(x_support)[train_rows], np.asarray(y_support)[train_rows], n_informative)
        task_model = TaskModel(den, x_support, y_support, n_classes, x_unlabeled=x_unlabeled,
                               features=features)
        run_losses, held_out, kept = _finetune_rows(
            task_model, dataclasses.replace(config, seed=config.seed + j),
            train_rows=train_rows, validation_rows=np.nonzero(folds == j)[0])
        models.append(task_model)
        losses.append(run_losses)
        curves.append(held_out)
        snapshots.append(kept)
    return models, losses, np.asarray(curves, dtype=np.float64), snapshots


def informative_features(x: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """Sorted indices of the k columns of ``x`` (n, d) whose values alone rank the rows by
    label ``y`` (n,) best: the largest |AUC - 1/2| of any class against the rest, each
    column's missing values left out (a constant column, or one class, scores 0); ties go
    to the earlier column. k >= d gives every column."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y)
    scores = np.zeros(x.shape[1])
    for j in range(x.shape[1]):
        present = ~np.isnan(x[:, j])
        column, labels = x[present, j], y[present]
        values, where = np.unique(column, return_inverse=True)
        classes = np.unique(labels)
        if len(values) < 2 or len(classes) < 2:
            continue
        for label in classes:
            scores[j] = max(scores[j], abs(_roc_auc(labels == label, where, len(values)) - 0.5))
    return np.sort(np.argsort(-scores, kind="stable")[:k])


def _roc_auc(positive: np.ndarray, where: np.ndarray, n_values: int) -> float:
    """scikit-learn's ``roc_auc_score(positive, column)`` with the same floating-point
    operations (so the same value to the last bit), without its input checks, which cost
    ~100x the arithmetic on a support set: the ROC points of the column's distinct values
    from the highest down (``where``: each row's index among the n_values sorted distinct
    values), collinear points dropped (``roc_curve(drop_intermediate=True)``), then the
    trapezoidal rule."""
    from scipy.integrate import trapezoid

    tps = np.cumsum(np.bincount(where, weights=positive, minlength=n_values)[::-1])
    fps = np.cumsum(np.bincount(where, minlength=n_values)[::-1]).astype(np.float64) - tps
    if len(fps) > 2:
        keep = np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True]
        fps, tps = fps[keep], tps[keep]
    fpr, tpr = np.r_[0.0, fps] / fps[-1], np.r_[0.0, tps] / tps[-1]
    return float(trapezoid(tpr, fpr))


def choose_features(held_out: np.ndarray, tolerance: float = 0.0) -> int:
    """The candidate ``feature_counts`` keeps, from the (k, C) held-out losses of k folds for
    C candidates (0 = all features, each at its chosen epoch): the lowest mean loss among
    all features and the subsets whose mean loss is below all features' by more than
    ``tolerance`` standard errors of their fold-by-fold difference (0: the lowest mean;
    ties go to the earlier candidate)."""
    held_out = np.asarray(held_out, dtype=np.float64)
    if held_out.ndim != 2 or held_out.shape[0] < 2 or held_out.shape[1] < 1:
        raise ValueError(f"held-out losses must be (folds >= 2, candidates >= 1), got {held_out.shape}")
    gap = held_out - held_out[:, [0]]
    standard_error = gap.std(axis=0, ddof=1) / np.sqrt(held_out.shape[0])
    allowed = (np.arange(held_out.shape[1]) == 0) | (gap.mean(axis=0) < -tolerance * standard_error)
    mean = np.where(allowed, held_out.mean(axis=0), np.inf)
    return int(np.argmin(mean))


def choose_epoch(held_out: np.ndarray, tolerance: float = 0.0) -> int:
    """The epoch early stopping keeps, from the (k, E + 1) held-out losses of k folds at
    epochs 0..E (0 = pre-trained PLFs).

    ``tolerance`` 0 takes the epoch with the lowest mean loss over the folds. A positive
    tolerance takes the earliest epoch whose mean loss exceeds that lowest one by at most
    ``tolerance`` standard errors of the difference (the fold-by-fold differences from the
    best epoch, whose spread over the folds gives the standard error): 1 is a paired form of
    the one-standard-error rule (which uses the spread of the losses at the best epoch
    itself), fine-tuning only as far as the folds agree it helps.
    """
    held_out = np.asarray(held_out, dtype=np.float64)
    if held_out.ndim != 2 or held_out.shape[0] < 2 or held_out.shape[1] < 1:
        raise ValueError(f"held-out losses must be (folds >= 2, epochs + 1), got {held_out.shape}")
    mean = held_out.mean(axis=0)
    best = int(np.argmin(mean))
    if tolerance <= 0:
        return best
    gap = held_out - held_out[:, [best]]
    standard_error = gap.std(axis=0, ddof=1) / np.sqrt(held_out.shape[0])
    return int(np.nonzero(gap.mean(axis=0) <= tolerance * standard_error)[0][0])


def restore_epoch(task_models: list[TaskModel], snapshots: list[list[list[np.ndarray]]],
                  epoch: int) -> None:
    """Set each task model's calibration and output map (``TaskModel.finetuned_variables``)
    to its snapshot of ``epoch`` (``cross_validated_runs``)."""
    for task_model, kept in zip(task_models, snapshots):
        for variable, value in zip(task_model.finetuned_variables, kept[epoch]):
            variable.assign(value)
        task_model.finetune_epochs = epoch
        task_model.invalidate()
