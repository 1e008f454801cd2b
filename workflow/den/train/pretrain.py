"""Episodic pre-training of DEN over a list of tasks (section 4.4 of the paper).

Each step samples a task, C of its covariates and two disjoint batches: the support batch B
gives the distribution embedding, the loss is taken on the query batch A. Every task has
its own calibration block during pre-training (all kept in one lattice layer, indexed by
a global feature number); the embedding and classifier blocks are shared and are what a
saved model carries.

A run with ``checkpoint_dir`` saves a checkpoint every ``checkpoint_every`` steps (and when
interrupted); running it again with the same tasks and settings resumes where it stopped.
Step ``i`` draws its episode from ``numpy.random.default_rng([seed, i])``, so a resumed run
sees the same episodes as an uninterrupted one and ends with bit-identical weights.

Ctrl-C (SIGINT) and SIGTERM (a scheduler's time limit, e.g. SLURM's, which sends it before
killing a job) are handled at step boundaries: the step under way is finished, a checkpoint of
that completed step is saved (weights, optimizer state, step counter and loss window, all of
one step) and ``PretrainInterrupted`` is raised. A KeyboardInterrupt raised anywhere else
(a second Ctrl-C, or SIGINT not delivered through Python's default handler) may land inside
a step, after the weights were updated but before the counter was, so no checkpoint is
written then: the last one stays valid.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import signal
import socket
import threading
import time
from pathlib import Path
from typing import TextIO

import numpy as np

from den._tf import tf, tf_keras
from den.data.tasks import Task, binary_cuts, one_vs_rest_cuts
from den.errors import DENError, DENInputError
from den.io import atomic_write
from den.model.calibration import fit_keypoints, impute_unit, to_unit
from den.model.config import ModelConfig
from den.model.den import DEN
from den.progress import Progress, progress_stream
from den.train.config import PretrainConfig
from den.train.episodes import sample_episode

_F32 = tf.TensorSpec([None, None], tf.float32)
_I32 = tf.TensorSpec([None], tf.int32)


class PretrainInterrupted(KeyboardInterrupt):
    """Pre-training stopped by Ctrl-C at a step boundary, after checkpointing that step.

    A ``KeyboardInterrupt``, so code that stops on Ctrl-C still does.

    Attributes:
        step: steps completed (and checkpointed, with a checkpoint directory).
        total: the run's ``steps``.
        checkpoint_dir: where the checkpoint is (None: the run had no checkpoint directory).
    """

    def __init__(self, step: int, total: int, checkpoint_dir: Path | None):
        super().__init__(f"pre-training interrupted after step {step}/{total}")
        self.step, self.total, self.checkpoint_dir = step, total, checkpoint_dir


class _DeferredInterrupt:
    """Within ``with``, a first SIGINT (Ctrl-C) or SIGTERM (a scheduler's time limit, e.g.
    SLURM's before it kills a job) only sets ``requested`` (the loop stops at the next step
    boundary); a second raises ``KeyboardInterrupt`` at once. Installed only in the main
    thread and only over the default handlers, or a ``replaceable`` one (``den.logs.log_to``'s
    last-resort SIGTERM line); an ignored signal stays ignored."""

    SIGNALS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}

    def __init__(self):
        self.requested = False
        self._previous = {}

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum, default in self.SIGNALS.items():
                current = signal.getsignal(signum)
                if current is default or getattr(current, "replaceable", False):  # den.logs.log_to's
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc):
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous = {}
        return False


def _check_tasks(tasks: list[Task], config: ModelConfig) -> None:
    if not tasks:
        raise DENInputError("pre-training needs at least one task")
    for task in tasks:
        if task.n_rows < 4:
            raise DENInputError(f"task {task.name!r} has {task.n_rows} rows; pre-training needs >= 4 "
                                f"in every task: leave it out")
        counts = np.bincount(task.y)
        if np.count_nonzero(counts) < 2:
            raise DENInputError(f"task {task.name!r} has a single class; pre-training needs >= 2 "
                                f"classes in every task: leave it out")
        if task.n_classes > config.n_classes_supported:
            cuts = (" or cut it into binary tasks (multiclass_cuts or one_vs_rest_cuts > 0)"
                    if config.head == "binary" else "")
            raise DENInputError(
                f"task {task.name!r} has {task.n_classes} classes but the model's {config.head} "
                f"head supports {config.n_classes_supported}; use head 'multiclass' with "
                f"max_classes >= {task.n_classes}{cuts}")


def _fingerprint(tasks: list[Task], model_config: ModelConfig, config: PretrainConfig) -> dict:
    settings = config.to_dict()
    for name in ("steps", "checkpoint_every"):  # may change between runs of one checkpoint
        settings.pop(name)
    if not settings["one_vs_rest_cuts"]:  # as checkpoints written before the setting existed
        settings.pop("one_vs_rest_cuts")
    data = hashlib.sha256()
    for t in tasks:
        data.update(np.ascontiguousarray(t.x).tobytes())
        data.update(np.ascontiguousarray(t.y).tobytes())
    return {"model": model_config.to_dict(), "pretrain": settings,
            "tasks": [[t.name, t.n_rows, t.n_features, t.n_classes] for t in tasks],
            "data": data.hexdigest()}


def _run_difference(stored, fingerprint: dict) -> str:
    """What sets a stored fingerprint's run apart from this one, in words: the settings that
    differ with both values (``learning_rate 0.001 there, 0.01 here``), else other tasks or
    other data."""
    if not isinstance(stored, dict):
        return "other tasks, data or settings"
    absent = {"one_vs_rest_cuts": 0}  # what a setting left out of a fingerprint was
    changed = []  # (part, name, there, here)
    for part in ("model", "pretrain"):
        old, new = stored.get(part) or {}, fingerprint[part]
        for name in dict.fromkeys([*new, *old]):
            there, here = old.get(name, absent.get(name)), new.get(name, absent.get(name))
            if there != here:
                changed.append((part, name, there, here))
    # a setting of both parts (the seed) is named once where it changed alike in both, else
    # with its part: "the model's seed 3 there, 1 here; pre-training's seed 0 there, 1 here"
    values = {}
    for _, name, there, here in changed:
        values.setdefault(name, set()).add((repr(there), repr(here)))
    words = {"model": "the model's", "pretrain": "pre-training's"}
    shown = [f"{words[part] + ' ' if len(values[name]) > 1 else ''}{name} {there!r} there, {here!r} here"
             for part, name, there, here in changed]
    if shown:
        return "other settings (" + "; ".join(dict.fromkeys(shown)) + ")"
    if stored.get("tasks") != fingerprint["tasks"]:
        return "other tasks" + _task_difference(stored.get("tasks") or [], fingerprint["tasks"])
    return "other data" if stored.get("data", fingerprint["data"]) != fingerprint["data"] \
        else "other tasks, data or settings"


def _task_difference(there: list, here: list) -> str:
    """The first few differences between two fingerprints' task lists ([name, rows, features,
    classes] each), in words: " (task 'b': 300 rows there, 299 here; task 'e' added)"."""
    words = ("rows", "features", "classes")
    old = {str(t[0]): t[1:] for t in there if isinstance(t, list) and t}
    new = {str(t[0]): t[1:] for t in here}
    parts = [f"task {name!r} added" for name in new if name not in old]
    parts += [f"task {name!r} gone" for name in old if name not in new]
    for name in (n for n in new if n in old and old[n] != new[n]):
        parts.append(f"task {name!r}: " + ", ".join(
            f"{a} {w} there, {b} here" for w, a, b in zip(words, old[name], new[name]) if a != b))
    if not parts:  # the same tasks in another order
        reordered = sorted(map(str, there)) == sorted(map(str, here))
        return " (the same tasks in another order)" if reordered else ""
    shown = parts[:3] + ([f"{len(parts) - 3} more"] if len(parts) > 3 else [])
    return " (" + "; ".join(shown) + ")"


def _same_run(stored, fingerprint: dict) -> bool:
    """Whether a checkpoint's stored fingerprint is this run's; one written before the data
    hash existed is compared without it."""
    if isinstance(stored, dict) and "data" not in stored:
        fingerprint = {k: v for k, v in fingerprint.items() if k != "data"}
    return stored == fingerprint


def pretrain(tasks: list[Task], model_config: ModelConfig | None = None,
             config: PretrainConfig | None = None, *, checkpoint_dir: str | Path | None = None,
             progress: TextIO | None | str = "stderr", restart_other_run: bool = False) -> DEN:
    """Pre-train a DEN on ``tasks``.

    Args:
        tasks: training tasks; numbers of features may differ. Multiclass tasks need
            ``model_config.head == "multiclass"``, or for the binary head
            ``config.multiclass_cuts`` or ``config.one_vs_rest_cuts`` > 0.
        model_config: architecture (default ``ModelConfig()``); its ``seed`` draws the initial
            weights.
        config: run settings (default ``PretrainConfig()``); its ``seed`` draws the episodes,
            apart from the weights (``den pretrain --seed`` sets both).
        checkpoint_dir: where to checkpoint and resume from (None: no checkpoints).
        progress: stream for progress lines (None: silent; "stderr": ``sys.stderr`` now).
        restart_other_run: a checkpoint of a different run (other tasks, data or settings, or
            an unreadable fingerprint, or past the steps asked for) is deleted, with a line on
            ``progress``, and the run
            starts over, instead of raising. For a workflow whose checkpoint directory belongs
            to one output, remade whenever its settings change; a user's own directory is not
            deleted without asking (the default).

    Returns:
        the pre-trained ``DEN``; ``metadata`` records the tasks, steps and loss curve.

    Raises:
        DENInputError: a task cannot be used (too few rows, one class, too many classes).
        DENError: ``checkpoint_dir`` holds a checkpoint of a different run (other tasks,
            data or settings), a damaged one, or one past ``config.steps``; or the run
            diverged (a non-finite loss or weights: the learning rate is too large).
        PretrainInterrupted: Ctrl-C; the last completed step is checkpointed (module docstring).
    """
    with checkpoint_lock(checkpoint_dir):
        return _pretrain(tasks, model_config, config, checkpoint_dir, progress, restart_other_run)


CHECKPOINT_LOCK = ".lock"
# (checkpoint directory, thread) of the locks this process holds: a block within a block of the
# same directory and thread (``den pretrain`` holds it over pre-training and saving) is let in
_HELD_LOCKS: set[tuple[str, int]] = set()


@contextlib.contextmanager
def checkpoint_lock(checkpoint_dir: str | Path | None):
    """Hold the lock file of ``checkpoint_dir`` (made where missing) for a run: a second run on
    the same directory (another terminal, a requeued job) stops at once instead of writing
    checkpoints that delete each other's. Nothing to hold without a directory, or where the
    system has no ``fcntl`` locks. Within a block of the same directory in the same thread it
    holds nothing more (``den pretrain`` keeps the lock until the model is saved and the
    checkpoints are removed, so that no second run resumes from them meanwhile).

    Raises:
        DENInputError: ``checkpoint_dir`` is a file, or holds files that no pre-training run
            writes (``foreign_checkpoint_entries``).
        DENError: another process holds the lock; the message names its process id.
    """
    if checkpoint_dir is None:
        yield
        return
    checkpoint_dir = Path(checkpoint_dir)
    if checkpoint_dir.exists() and not checkpoint_dir.is_dir():
        raise DENInputError(f"checkpoint_dir {str(checkpoint_dir)!r} is a file, not a directory; "
                            f"give a directory (it is made where missing)")
    foreign = foreign_checkpoint_entries(checkpoint_dir)
    if foreign:  # e.g. the task files' folder: a restart would delete what is not its own
        shown = ", ".join(map(repr, foreign[:5])) + (", ..." if len(foreign) > 5 else "")
        raise DENInputError(f"checkpoint directory {str(checkpoint_dir)!r} holds files that are not "
                            f"a pre-training run's checkpoints ({shown}); give a new or empty "
                            f"directory, as pre-training writes and deletes its checkpoints there")
    try:
        import fcntl
    except ImportError:  # no advisory locks here
        yield
        return
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    held = (os.path.realpath(checkpoint_dir), threading.get_ident())
    if held in _HELD_LOCKS:
        yield
        return
    with open(checkpoint_dir / CHECKPOINT_LOCK, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (BlockingIOError, PermissionError):  # held by another process
            handle.seek(0)
            owner = handle.read().strip()
            raise DENError(f"checkpoint directory {str(checkpoint_dir)!r} is in use by another "
                           f"pre-training run{f' (process {owner})' if owner else ''}: wait for it to "
                           f"end, or give this run a checkpoint directory of its own") from None
        except OSError:  # a filesystem without flock (some Lustre or FUSE mounts): run unlocked
            yield
            return
        handle.seek(0)
        handle.truncate()
        handle.write(f"{socket.gethostname()}:{os.getpid()}\n")
        handle.flush()
        _HELD_LOCKS.add(held)
        try:
            yield  # closing the file releases the lock
        finally:
            _HELD_LOCKS.discard(held)
            # a run refused before its first checkpoint leaves no directory of a lock alone
            if checkpoint_dir.is_dir() and [p.name for p in checkpoint_dir.iterdir()] == [CHECKPOINT_LOCK]:
                (checkpoint_dir / CHECKPOINT_LOCK).unlink()
                with contextlib.suppress(OSError):
                    checkpoint_dir.rmdir()


# What a pre-training run writes in its checkpoint directory: TensorFlow's checkpoint state
# and files (with their temporary forms), the run's fingerprint and loss history (with
# ``atomic_write``'s temporary files), and the lock.
_CHECKPOINT_ENTRY = re.compile(r"checkpoint(\.tmp.*)?|ckpt-\d+.*|(fingerprint|history)\.json|"
                               r"\.(fingerprint|history)\.json\..*\.tmp|" + re.escape(CHECKPOINT_LOCK))


def foreign_checkpoint_entries(checkpoint_dir: Path) -> list[str]:
    """The names in ``checkpoint_dir`` (sorted) that no pre-training run writes: a directory
    holding them is someone's other files (the task files, notes), never a checkpoint
    directory to write in and clear."""
    if not checkpoint_dir.is_dir():
        return []
    return sorted(e.name for e in checkpoint_dir.iterdir() if not _CHECKPOINT_ENTRY.fullmatch(e.name))


def _clear_checkpoint_dir(checkpoint_dir: Path) -> None:
    """Delete the checkpoint files in ``checkpoint_dir`` (``_CHECKPOINT_ENTRY``) but its lock
    file, which this run holds; any other file is left alone."""
    for entry in checkpoint_dir.iterdir():
        if entry.name == CHECKPOINT_LOCK or not _CHECKPOINT_ENTRY.fullmatch(entry.name):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _pretrain(tasks, model_config: ModelConfig | None, config: PretrainConfig | None,
              checkpoint_dir: str | Path | None, progress, restart_other_run: bool) -> DEN:
    """``pretrain``'s work, with the lock of ``checkpoint_dir`` held."""
    model_config = ModelConfig() if model_config is None else model_config
    config = PretrainConfig() if config is None else config
    for name, value, kind in (("model_config", model_config, ModelConfig),
                              ("config", config, PretrainConfig)):
        if not isinstance(value, kind):
            raise DENInputError(f"pretrain's {name} must be a {kind.__name__} (or None: the defaults), "
                                f"not a {type(value).__name__}; e.g. {kind.__name__}(**settings)")
    if isinstance(tasks, Task):
        raise DENInputError(f"pretrain's tasks must be a list of tasks; got the one task {tasks.name!r}: "
                            f"pass [task]")
    tasks = None if isinstance(tasks, (str, bytes)) else list(tasks)  # a generator, once
    if tasks is None or not all(isinstance(t, Task) for t in tasks):
        raise DENInputError("pretrain's tasks must be a list of den.data.tasks.Task (e.g. from "
                            "den.data.encoding.task_from_frame), one per training table")
    if model_config.head == "binary" and (config.multiclass_cuts or config.one_vs_rest_cuts):
        tasks = [cut for task in tasks for cut in
                 ([*binary_cuts(task, config.multiclass_cuts, config.seed),
                   *one_vs_rest_cuts(task, config.one_vs_rest_cuts, config.seed)]
                  if task.n_classes > 2 else [task])]
    _check_tasks(tasks, model_config)
    model = DEN(model_config)
    net = model.network
    use_calibration = model_config.use_calibration
    binary = model_config.head == "binary"

    unit_x, labels, offsets, sizes = [], [], [], []
    offset = 0
    for task in tasks:
        keypoints = fit_keypoints(task.x, model_config.n_keypoints, model_config.keypoint_placement)
        unit_x.append(to_unit(task.x, keypoints))
        labels.append(task.y)
        offsets.append(offset)
        offset += task.n_features
        sizes.append((task.n_rows, task.n_features, task.n_classes))
    calibration = model.new_calibration(offset, name="pretrain_calibration")

    variables = list(net.trainable_variables)
    if use_calibration:
        variables += calibration.variables_to_train
    optimizer = tf_keras.optimizers.Adam(learning_rate=config.learning_rate)
    optimizer.build(variables)
    step = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
    n_classes = tf.constant(2 if binary else model_config.max_classes, tf.int32)

    @tf.function(input_signature=[_F32, _I32, _F32, _I32, _I32,
                                  tf.TensorSpec([None, None], tf.int32)], reduce_retracing=True,
                 autograph=False)
    def train_step(unit_query, y_query, unit_support, y_support, feature_index, tuples):
        with tf.GradientTape() as tape:
            if use_calibration:
                z_query = calibration(unit_query, feature_index)
                z_support = calibration(unit_support, feature_index)
            else:
                z_query, z_support = impute_unit(unit_query), impute_unit(unit_support)
            logits = net.logits(z_query, z_support, y_support, tuples, n_classes)
            loss = model.loss(logits, y_query, n_classes)
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    manager = None
    history: list[list[float]] = []  # [step, mean loss of the window] every 100 steps
    running: list[float] = []  # losses of the last `window` steps (checkpointed with history)
    if checkpoint_dir is not None:
        checkpoint_dir = Path(checkpoint_dir)  # made and locked by checkpoint_lock
        fingerprint = _fingerprint(tasks, model_config, config)
        fp_path = checkpoint_dir / "fingerprint.json"
        checkpoint = tf.train.Checkpoint(network=net, calibration=calibration, optimizer=optimizer,
                                         step=step)
        manager = tf.train.CheckpointManager(checkpoint, str(checkpoint_dir), max_to_keep=1)
        start_over = "delete it or choose another directory to start over"
        other_run = None  # why the checkpoint there is not this run's
        if manager.latest_checkpoint:
            try:
                stored = json.loads(fp_path.read_text()) if fp_path.is_file() else None
                if not _same_run(stored, fingerprint):
                    other_run = f"holds a pre-training run with {_run_difference(stored, fingerprint)}"
            except (OSError, ValueError) as err:
                other_run = f"cannot be read ({fp_path.name}: {err})"
            if other_run is None and restart_other_run:  # fewer steps asked for than it has
                try:
                    saved = int(tf.train.load_variable(manager.latest_checkpoint,
                                                       "step/.ATTRIBUTES/VARIABLE_VALUE"))
                except Exception:  # unreadable: the restore below says so
                    saved = 0
                if saved > config.steps:
                    other_run = f"is at step {saved}, past the {config.steps} steps asked for"
        if other_run and restart_other_run:
            if progress is not None:
                print(f"checkpoint directory {str(checkpoint_dir)!r} {other_run}: starting over",
                      file=progress_stream(progress), flush=True)
            _clear_checkpoint_dir(checkpoint_dir)
            manager = tf.train.CheckpointManager(checkpoint, str(checkpoint_dir), max_to_keep=1)
        elif other_run:
            raise DENError(f"checkpoint directory {str(checkpoint_dir)!r} {other_run}; {start_over} "
                           f"(restart_other_run=True deletes it)")
        if manager.latest_checkpoint:
            try:
                checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
                history_path = checkpoint_dir / "history.json"
                if history_path.is_file():
                    stored = json.loads(history_path.read_text())
                    if isinstance(stored, list):  # an older checkpoint, without the loss window
                        history = stored
                    else:
                        history, running = stored["history"], stored["running"]
            except Exception as err:  # TensorFlow's read errors, truncated files, bad JSON
                raise DENError(f"checkpoint directory {str(checkpoint_dir)!r} is damaged "
                               f"({type(err).__name__}: {str(err).splitlines()[0][:200]}); "
                               f"{start_over}") from None
            if progress is not None and int(step.numpy()) <= config.steps:
                print(f"resuming from the checkpoint in {str(checkpoint_dir)!r} at step "
                      f"{int(step.numpy())}/{config.steps}", file=progress_stream(progress), flush=True)
            if int(step.numpy()) > config.steps:
                raise DENError(f"checkpoint directory {str(checkpoint_dir)!r} is at step "
                               f"{int(step.numpy())}, past the {config.steps} steps asked for: "
                               f"ask for at least {int(step.numpy())} steps to go on from it, or "
                               f"{start_over}")
        else:
            with atomic_write(fp_path, "w") as handle:
                handle.write(json.dumps(fingerprint, indent=1))

    def save_checkpoint():
        if manager is not None and all(np.isfinite(v.numpy()).all() for v in variables):  # else
            # the run stops as diverged (below), and the last good checkpoint stays
            manager.save(checkpoint_number=int(step.numpy()))
            with atomic_write(checkpoint_dir / "history.json", "w") as handle:
                handle.write(json.dumps({"history": history, "running": running}))

    def kept_checkpoint() -> str:
        """After a divergence: where the last good checkpoint is, in words; with none saved yet,
        the checkpoint directory goes (if this run left it empty), as there is nothing to resume."""
        if manager is None:
            return ""
        if manager.latest_checkpoint:
            return f" (the checkpoint in {str(checkpoint_dir)!r} is from before; delete it to start over)"
        (checkpoint_dir / "fingerprint.json").unlink(missing_ok=True)
        (checkpoint_dir / CHECKPOINT_LOCK).unlink(missing_ok=True)  # held until the run ends
        with contextlib.suppress(OSError):
            checkpoint_dir.rmdir()
        return ""

    start = int(step.numpy())
    bar = Progress(config.steps, "pretrain", stream=progress, start=start)
    support_range = (config.support_rows_min or config.support_rows, config.support_rows)
    window = 50
    timed_from = None  # (step, time) after the first step, which includes tracing
    interrupt = _DeferredInterrupt()
    with interrupt:
        for i in range(start, config.steps):
            if interrupt.requested:  # the state is that of step i, all of it complete
                save_checkpoint()
                raise PretrainInterrupted(i, config.steps, checkpoint_dir)
            rng = np.random.default_rng([config.seed, i])
            ep = sample_episode(sizes, labels, rng, support_rows=support_range,
                                query_rows=config.query_rows,
                                covariates=(config.covariates_min, config.covariates_max),
                                label_slots=None if binary else model_config.max_classes)
            u, y = unit_x[ep.task], ep.label_slots[labels[ep.task]]
            u_query, u_support = u[np.ix_(ep.query, ep.columns)], u[np.ix_(ep.support, ep.columns)]
            if config.flip_rate > 0:
                flip = rng.random(len(ep.columns)) < config.flip_rate
                u_query = np.where(flip, 1.0 - u_query, u_query)
                u_support = np.where(flip, 1.0 - u_support, u_support)
            loss = float(train_step(
                tf.constant(u_query), tf.constant(y[ep.query]),
                tf.constant(u_support), tf.constant(y[ep.support]),
                tf.constant(ep.columns + offsets[ep.task]),
                tf.constant(model.tuples(len(ep.columns)))))
            if not math.isfinite(loss):  # the weights are NaN now: keep the last checkpoint
                raise DENError(f"pre-training diverged at step {i + 1}: the loss is {loss}; "
                               f"pre-train with a lower learning rate (now {config.learning_rate:g})"
                               + kept_checkpoint())
            step.assign_add(1)
            running.append(loss)
            if timed_from is None:
                timed_from = (i + 1, time.perf_counter())
            if len(running) > window:
                running.pop(0)
            done = i + 1
            if done % 100 == 0 or done == config.steps:
                history.append([done, float(np.mean(running))])
            bar.update(done, loss=float(np.mean(running)))
            if manager is not None and done % config.checkpoint_every == 0:
                save_checkpoint()
    ended = time.perf_counter()  # the final checkpoint's write below is not a step's time
    diverged = [v.name for v in variables if not np.isfinite(v.numpy()).all()]
    if diverged:  # a finite loss over weights that overflow (e.g. a huge learning rate)
        raise DENError(f"pre-training diverged: weights {diverged[:3]} are not finite; pre-train "
                       f"with a lower learning rate (now {config.learning_rate:g})" + kept_checkpoint())
    if manager is not None and int(step.numpy()) != start:
        save_checkpoint()
    steps_per_s = None
    if timed_from is not None and config.steps > timed_from[0]:
        steps_per_s = (config.steps - timed_from[0]) / (ended - timed_from[1])
    model.metadata = {
        "pretrained_on": [t.name for t in tasks],
        "pretrain": config.to_dict(),
        "loss_curve": history,
        "steps_per_s": steps_per_s,
    }
    return model
