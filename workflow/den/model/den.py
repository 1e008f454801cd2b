"""A DEN model: its hyperparameters, its task-independent blocks, compiled forward passes,
and saving/loading to one file.

The task-dependent calibration block is not part of a saved model: every task gets its
own (``den.model.task_model.TaskModel``). The compiled functions here take the
calibration's parameters as tensors, so one trace serves every task and every feature
count d (all shapes are dynamic).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import warnings
from pathlib import Path

import numpy as np

from den._tf import check_not_forked, mark_tensorflow_used, tf
from den.errors import DENModelError, DENModelWarning
from den.io import atomic_write
from den.model.calibration import Calibration, calibrate, impute_unit
from den.model.config import ModelConfig
from den.model.network import ABSENT_CLASS_LOGIT, DENNetwork
from den.model.tuples import canonical_order, feature_tuples

FORMAT = "den-model-v1"
_CONFIG_KEY = "__den_config__"
_FORMAT_KEY = "__den_format__"
_META_KEY = "__den_metadata__"
_COMPUTATION_KEY = "__den_computation__"
_VERSION_KEY = "__den_version__"

# What a saved model predicts depends on den's code as well as on the file. COMPUTATION counts
# the changes to the code that change what a saved model predicts; a file records the count
# (and the den version) that saved it, and loading one saved under another count warns with
# the changes in between (``computation_warning``). Each change: (date, what changed, whether
# it changes the predictions of a model of a given ModelConfig). Files of before the record
# count as 1. Add an entry, and raise COMPUTATION, with any such change.
COMPUTATION = 2
COMPUTATION_CHANGES = {
    2: ("2026-11-27", "which feature tuples a task pools over follows its columns' contents, not "
                      "their order, and every column of a wide task is in a tuple (commit 20b7934)",
        lambda config: config.order >= 3 or config.max_tuples is not None),
}

_F32 = tf.TensorSpec([None, None], tf.float32)

# ``DEN.prediction_functions``: predictions smaller than this (query rows x feature tuples: 420
# rows of the shipped model on 625 triples) run eagerly. Tracing and optimising the compiled
# functions costs about 1 s once per process; eager scoring about 0.5 ms a row more, so at
# this size at most 0.2 s a call.
EAGER_TUPLE_ROWS = 1 << 18

# tf_keras.optimizers.Adam's defaults: fine-tuning applied that optimizer step by step before
# its steps ran in one compiled call (``DEN.finetune_fn``).
ADAM_BETA_1, ADAM_BETA_2, ADAM_EPSILON = 0.9, 0.999, 1e-7


def adam_step_size(learning_rate, local_step):
    """Adam's bias-corrected step size alpha = learning_rate sqrt(1 - beta_2^t) / (1 - beta_1^t)
    (float32 scalars; ``local_step`` t is the optimizer's iterations + 1, 1 at the first step):
    the same for every variable of one step, so a step over many variables computes it once."""
    beta_1_power = tf.pow(tf.cast(ADAM_BETA_1, tf.float32), local_step)
    beta_2_power = tf.pow(tf.cast(ADAM_BETA_2, tf.float32), local_step)
    return learning_rate * tf.sqrt(1 - beta_2_power) / (1 - beta_1_power)


def adam_update(variable, gradient, m, v, alpha):
    """One step of tf_keras's Adam (dense gradient, no amsgrad, no weight decay): the same
    float32 operations in the same order, as pure tensors.

    Args:
        variable, gradient, m, v: tensors of one shape (m, v: the first and second moments).
        alpha: float32 scalar, ``adam_step_size`` of the step.

    Returns:
        (new variable, new m, new v); the caller applies the variable's constraint.
    """
    m = m + (gradient - m) * (1 - ADAM_BETA_1)
    v = v + (tf.square(gradient) - v) * (1 - ADAM_BETA_2)
    return variable - (m * alpha) / (tf.sqrt(v) + ADAM_EPSILON), m, v


class DEN:
    """Pre-trained (or freshly initialised) DEN.

    Attributes:
        config: ``ModelConfig``.
        network: ``DENNetwork`` (h, v, phi, psi), shared by all tasks.
        metadata: free-form JSON-able dict saved with the model (e.g. what it was
            pre-trained on).
    """

    def __init__(self, config: ModelConfig | None = None, network: DENNetwork | None = None,
                 metadata: dict | None = None):
        check_not_forked()
        self.config = config or ModelConfig()
        self.network = network or DENNetwork(self.config)
        mark_tensorflow_used()
        self.metadata = dict(metadata or {})
        # the den version and COMPUTATION of the file ``load`` read (None where it records none)
        self.saved_by: dict | None = None
        self._weights_lock = threading.RLock()
        self._held_weights = None  # the values network_weights holds now (None: its own)
        self._compile()

    def __deepcopy__(self, memo):
        """A DEN is shared, never copied: nothing after pre-training modifies it (fine-tuning
        trains per-task calibrations), and scikit-learn's ``clone`` deep-copies parameters."""
        return self

    def __getstate__(self) -> dict:
        """Pickling (e.g. of a fitted ``DENClassifier``): the config, metadata and weights;
        the compiled functions are not picklable and are rebuilt by ``__setstate__``."""
        with self._weights_lock:  # its own weights, not a task's another thread swapped in
            weights = self.network.weights_dict()
        return {"config": self.config.to_dict(), "metadata": self.metadata, "weights": weights}

    def __setstate__(self, state: dict) -> None:
        """A pickled DEN (its fitted tasks keep their own feature tuples, so a change of
        ``COMPUTATION`` does not touch them).

        Raises:
            DENModelError: the pickle is damaged or from a den of another config or weights.
        """
        try:
            config = ModelConfig.from_dict(state["config"])
            self.__init__(config, metadata=state["metadata"])
            self.network.set_weights_dict(state["weights"])
        except (KeyError, ValueError, TypeError) as err:
            raise DENModelError(f"a pickled DEN that this den ({_den_version()}) cannot read: "
                                f"{type(err).__name__}: {err}; it was pickled by another version of "
                                f"den, or damaged: use that den, or fit the estimator again") from None

    # -- pieces shared by pre-training, fine-tuning and prediction ----------------------
    def tuples(self, n_features: int, x_support: np.ndarray | None = None,
               y_support: np.ndarray | None = None) -> np.ndarray:
        """(T, r) feature tuples of a task with ``n_features`` features: of column indices
        where the tuples are a subset of [d]^r; given the task's support rows (x_support
        (n, d), y_support (n,) class codes), their columns take those indices in
        ``canonical_order``, so the subset follows the columns, whatever their order."""
        tuples = feature_tuples(n_features, self.config.order, self.config.seed, self.config.max_tuples,
                                self.config.min_tuples)
        if x_support is None or len(tuples) == n_features ** self.config.order:
            return tuples
        return canonical_order(x_support, y_support)[tuples].astype(np.int32)

    def new_calibration(self, n_features: int, name: str = "calibration") -> Calibration:
        """A fresh calibration block (identity PLFs) for ``n_features`` features."""
        return Calibration(n_features, self.config.n_keypoints, self.config.monotonicity, name=name)

    def transform(self, unit_x, kernel, missing_output):
        """Covariate transformation block: PLFs, or (w/o PLF) only imputation of NaN."""
        if self.config.use_calibration:
            return calibrate(unit_x, kernel, missing_output)
        return impute_unit(unit_x)

    def loss(self, logits, y_query, n_classes):
        """Mean cross-entropy of query logits.

        Args:
            logits: (n,) binary logits or (n, L) class scores.
            y_query: (n,) int32 labels. Multiclass rows whose class has no support row
                (score ``ABSENT_CLASS_LOGIT``) are left out of the mean.
            n_classes: L (multiclass).

        Returns:
            scalar float32.
        """
        if self.config.head == "binary":
            labels = tf.cast(y_query, tf.float32)
            return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
        picked = tf.gather(logits, y_query, axis=1, batch_dims=1)
        weight = tf.cast(picked > 0.5 * ABSENT_CLASS_LOGIT, tf.float32)
        per_row = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y_query, logits=logits)
        per_row = tf.where(weight > 0, per_row, 0.0)
        return tf.math.divide_no_nan(tf.reduce_sum(per_row), tf.reduce_sum(weight))

    # -- compiled entry points ----------------------------------------------------------
    def _compile(self):
        net = self.network
        binary = self.config.head == "binary"
        p = self.config.phi_units[-1]

        @tf.function(input_signature=[_F32, tf.TensorSpec([None], tf.int32), _F32,
                                      tf.TensorSpec([None], tf.float32),
                                      tf.TensorSpec([None, None], tf.int32),
                                      tf.TensorSpec([], tf.int32)], reduce_retracing=True,
                     autograph=False)
        def context(unit_support, y_support, kernel, missing_output, tuples, n_classes):
            z = self.transform(unit_support, kernel, missing_output)
            ctx = net.context(z, y_support, tuples, n_classes)
            if binary:
                return ctx["bias"], tf.zeros([0, p]), tf.zeros([0], tf.bool), z, y_support
            return ctx["bias"], ctx["prototypes"], ctx["present"], tf.zeros([0, 0]), tf.zeros([0], tf.int32)

        @tf.function(input_signature=[_F32, _F32, tf.TensorSpec([None], tf.float32), _F32, _F32,
                                      tf.TensorSpec([None], tf.bool), _F32, tf.TensorSpec([None], tf.int32),
                                      tf.TensorSpec([None, None], tf.int32)], reduce_retracing=True,
                     autograph=False)
        def query(unit_query, kernel, missing_output, bias, prototypes, present, z_support, y_support,
                  tuples):
            z = self.transform(unit_query, kernel, missing_output)
            ctx = {"bias": bias, "prototypes": prototypes, "present": present, "z_support": z_support,
                   "y_support": y_support}
            return net.query_logits(z, ctx, tuples)

        @tf.function(input_signature=[_F32, tf.TensorSpec([None], tf.int32), _F32,
                                      tf.TensorSpec([None], tf.int32), _F32,
                                      tf.TensorSpec([None], tf.float32),
                                      tf.TensorSpec([None, None], tf.int32),
                                      tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.float32),
                                      tf.TensorSpec([], tf.float32)], reduce_retracing=True,
                     autograph=False)
        def calibration_gradients(unit_query, y_query, unit_support, y_support, kernel,
                                  missing_output, tuples, n_classes, logit_scale, logit_bias):
            with tf.GradientTape() as tape:
                tape.watch([kernel, missing_output, logit_scale, logit_bias])
                z_q = self.transform(unit_query, kernel, missing_output)
                z_s = self.transform(unit_support, kernel, missing_output)
                logits = net.logits(z_q, z_s, y_support, tuples, n_classes)
                if binary:
                    logits = tf.exp(logit_scale) * logits + logit_bias
                loss = self.loss(logits, y_query, n_classes)
            grads = tape.gradient(loss, [kernel, missing_output, logit_scale, logit_bias],
                                  unconnected_gradients=tf.UnconnectedGradients.ZERO)
            return loss, grads[0], grads[1], grads[2], grads[3]

        # Fine-tuning: every step of one run in one call (no Python, no host sync per step).
        # Each iteration evaluates the loss and gradients of one (query rows, support rows)
        # pair over the iteration's feature tuples (indices into the task's tuples: all of them,
        # or a step's sample, ``FinetuneConfig.tuples_per_step``); an update iteration then
        # takes one Adam step and projects with the lattice layer's own constraints (tf_keras's
        # apply_gradients applied them after every update; a task's calibration is
        # ``new_calibration(d)``, whose constraints depend only on the config), and an
        # evaluation iteration (early stopping's held-out loss) leaves everything as it is. One
        # call site keeps the graph, and its first-call optimisation, as small as one step's.
        reference = self.new_calibration(1).layer if self.config.use_calibration else None

        @tf.function(input_signature=[
            _F32, tf.TensorSpec([None], tf.int32),  # rows: unit features, labels
            tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int32),  # query rows, bounds
            tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int32),  # support rows, bounds
            tf.TensorSpec([None], tf.bool),  # per iteration: update (else only evaluate)
            # kernel (K static: the projections need it), missing outputs, logit scale and bias
            tf.TensorSpec([self.config.n_keypoints, None], tf.float32),
            tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.float32),
            tf.TensorSpec([], tf.float32),
            tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.int32),  # tuples, L
            tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int32),  # tuple rows, bounds
            tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32),  # learning rates
            tf.TensorSpec([], tf.bool)],  # whether the output map learns
            autograph=False)  # explicit tf.while_loop: converting it would only cost tracing time
        def finetune_run(unit, y, query_rows, query_bounds, support_rows, support_bounds, updates,
                         kernel, missing_output, logit_scale, logit_bias, tuples, n_classes,
                         tuple_rows, tuple_bounds, learning_rate, output_learning_rate, learn_output):
            project = (reference.kernel.constraint, reference.missing_output.constraint, None, None)
            iterations = tf.shape(updates)[0]
            params = (kernel, missing_output, logit_scale, logit_bias)
            moments = tuple(tf.zeros_like(p) for p in params for _ in range(2))
            losses = tf.TensorArray(tf.float32, size=iterations)
            kept = tuple(tf.TensorArray(tf.float32, size=iterations, element_shape=p.shape)
                         for p in params)

            def body(i, step, params, moments, losses, kept):
                query = query_rows[query_bounds[i]:query_bounds[i + 1]]
                support = support_rows[support_bounds[i]:support_bounds[i + 1]]
                step_tuples = tf.gather(tuples, tuple_rows[tuple_bounds[i]:tuple_bounds[i + 1]])
                loss, *grads = calibration_gradients(
                    tf.gather(unit, query), tf.gather(y, query), tf.gather(unit, support),
                    tf.gather(y, support), *params[:2], step_tuples, n_classes, *params[2:])
                t = tf.cast(step + 1, tf.float32)  # the optimizers' iterations + 1
                alphas = (adam_step_size(learning_rate, t), adam_step_size(output_learning_rate, t))
                new_params, new_moments = [], []
                for j, (param, grad) in enumerate(zip(params, grads)):
                    old = (param, *moments[2 * j:2 * j + 2])
                    new = adam_update(*old[:1], grad, *old[1:], alphas[0] if j < 2 else alphas[1])
                    if project[j] is not None:
                        new = (project[j](new[0]), *new[1:])
                    learns = updates[i] if j < 2 else tf.logical_and(updates[i], learn_output)
                    value, m, v = (tf.where(learns, a, b) for a, b in zip(new, old))
                    new_params.append(value)
                    new_moments += [m, v]
                params, moments = tuple(new_params), tuple(new_moments)
                losses = losses.write(i, loss)
                kept = tuple(a.write(i, p) for a, p in zip(kept, params))
                return i + 1, step + tf.cast(updates[i], tf.int32), params, moments, losses, kept

            *_, losses, kept = tf.while_loop(
                lambda i, *_: i < iterations, body,
                (tf.constant(0), tf.constant(0), params, moments, losses, kept))
            return losses.stack(), tuple(a.stack() for a in kept)

        # Network adaptation (``den.train.finetune.adapt_network``): one Adam step of every
        # network weight on one (query rows, support rows) pair of a task's support set. The
        # moments live in variables of their own (zeroed by ``reset_network_moments``), outside
        # the network, so they are never saved with the model.
        network_variables = net.trainable_variables
        self._network_moments = [tf.Variable(tf.zeros_like(v), trainable=False)
                                 for v in network_variables for _ in range(2)]

        @tf.function(input_signature=[_F32, tf.TensorSpec([None], tf.int32), _F32,
                                      tf.TensorSpec([None], tf.int32),
                                      tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.int32),
                                      tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)],
                     reduce_retracing=True, autograph=False)
        def network_step(z_query, y_query, z_support, y_support, tuples, n_classes, learning_rate,
                         local_step):
            with tf.GradientTape() as tape:
                loss = self.loss(net.logits(z_query, z_support, y_support, tuples, n_classes),
                                 y_query, n_classes)
            grads = tape.gradient(loss, network_variables,
                                  unconnected_gradients=tf.UnconnectedGradients.ZERO)
            alpha = adam_step_size(learning_rate, local_step)
            for j, (variable, grad) in enumerate(zip(network_variables, grads)):
                m, v = self._network_moments[2 * j:2 * j + 2]
                value, m_new, v_new = adam_update(variable, grad, m, v, alpha)
                variable.assign(value)
                m.assign(m_new)
                v.assign(v_new)
            return loss

        self.context_fn = context
        self.query_fn = query
        self.network_step_fn = network_step
        self.calibration_gradients_fn = calibration_gradients
        self.finetune_fn = finetune_run

    def reset_network_moments(self) -> None:
        """Zero the Adam moments of ``network_step_fn`` (before a task's adaptation)."""
        for moment in self._network_moments:
            moment.assign(tf.zeros_like(moment))

    @contextlib.contextmanager
    def network_weights(self, values):
        """Within the block the network holds ``values`` (arrays in the order of
        ``network.trainable_variables``, e.g. a task's adapted weights; None: as it is), and
        its own weights again after it. The compiled functions read the variables when they
        run, so they serve adapted weights without tracing again. Every block holds the DEN's
        lock, None included: a thread that shares this DEN (a cached model file, or
        scikit-learn's ``clone``) waits while another holds adapted weights, rather than
        reading them (a thread's blocks nest: None within a block is that block's weights).
        A block within a block of the same ``values`` (the same list) swaps nothing.

        Raises:
            DENError: in a child process forked after this process ran TensorFlow, whose
                thread pools do not survive a fork (the child would hang).
        """
        check_not_forked()
        if values is None:
            with self._weights_lock:
                yield
            return
        variables = self.network.trainable_variables
        with self._weights_lock:
            if values is self._held_weights:
                yield
                return
            own, held = [v.numpy() for v in variables], self._held_weights
            try:
                for variable, value in zip(variables, values):
                    variable.assign(value)
                self._held_weights = values
                yield
            finally:
                for variable, value in zip(variables, own):
                    variable.assign(value)
                self._held_weights = held

    def prediction_functions(self, tuple_rows: int):
        """(context, query): ``context_fn`` and ``query_fn`` for a prediction of
        ``tuple_rows`` (query rows x feature tuples) of work.

        Below ``EAGER_TUPLE_ROWS`` these are the two functions' Python bodies, run eagerly: the
        same operations, without the tracing and graph optimisation (about 1 s on 2 cores)
        that a one-off prediction, such as a cold ``den predict``, would pay for a fraction of
        a second of work. Larger predictions get the compiled functions. The choice depends on
        the size alone, so a prediction gives the same numbers in any process, whatever it
        predicted before (eager and compiled agree to float32 rounding, not to the bit).
        """
        if tuple_rows < EAGER_TUPLE_ROWS:
            return self.context_fn.python_function, self.query_fn.python_function
        return self.context_fn, self.query_fn

    # -- persistence --------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write the model (config, metadata and weights) to one ``.npz`` file, atomically.

        Returns:
            the path written.

        Raises:
            DENInputError: the path cannot be written (a read-only file, a directory, a folder
                on its way that is a file or not writable), before anything is written.
        """
        from den.io import check_output_path

        check_output_path(Path(path).expanduser(), "DEN model path")
        with self._weights_lock:  # its own weights, not a task's another thread swapped in
            arrays = dict(self.network.weights_dict())
        arrays[_FORMAT_KEY] = np.array(FORMAT)
        arrays[_COMPUTATION_KEY] = np.array(COMPUTATION)
        arrays[_VERSION_KEY] = np.array(_den_version())
        arrays[_CONFIG_KEY] = np.array(json.dumps(self.config.to_dict()))
        arrays[_META_KEY] = np.array(json.dumps(self.metadata))
        path = Path(path).expanduser()
        with atomic_write(path) as handle:
            np.savez(handle, **arrays)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> DEN:
        """Read a model written by ``save``.

        Raises:
            DENModelError: the path does not exist or is not a DEN model file.
        """
        path = Path(path).expanduser()
        hint = "pre-train one with `python -m den pretrain` or check the path"
        if path.is_dir():
            raise DENModelError(f"DEN model {str(path)!r} is a directory, not a model file; give the "
                                f".npz file in it (written by `den pretrain` or DEN.save)")
        if not path.is_file():
            raise DENModelError(f"DEN model {str(path)!r} does not exist; {hint}")
        not_a_model = DENModelError(
            f"{str(path)!r} is not a DEN model file (a DEN model is an .npz archive of plain arrays; "
            f"a DENClassifier saved with pickle or joblib is loaded with pickle.load or joblib.load); "
            f"give the .npz file written by `den pretrain` (or DEN.save)")
        with open(path, "rb") as handle:
            if handle.read(4) != b"PK\x03\x04":  # an .npz file is a zip archive: text, a pickle
                raise not_a_model
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except Exception as err:  # zip/npy errors come in many types
            if "allow_pickle" in str(err):  # object arrays: numpy's advice would be to unpickle them
                raise not_a_model from err
            cut = isinstance(err, EOFError) or "zip file" in str(err) or "truncated" in str(err).lower()
            raise DENModelError(f"DEN model {str(path)!r} is not readable as a DEN model file "
                                f"({type(err).__name__}: {err})"
                                f"{'; it looks incomplete (an interrupted copy or download?)' if cut else ''}"
                                f"; {hint}") from err
        written = str(arrays.pop(_FORMAT_KEY, ""))
        if written.startswith("den-model-v") and written != FORMAT:
            raise DENModelError(f"DEN model {str(path)!r} is a {written} file, written by another "
                                f"version of den; this one reads {FORMAT} files: use the den that "
                                f"wrote it, or pre-train the model again")
        if written != FORMAT:
            raise DENModelError(f"{str(path)!r} is not a {FORMAT} file; {hint}")
        computation = version = None
        part = "its model settings"  # what was being read when it failed, for the message
        try:
            computation = int(arrays.pop(_COMPUTATION_KEY)) if _COMPUTATION_KEY in arrays else None
            version = str(arrays.pop(_VERSION_KEY)) if _VERSION_KEY in arrays else None
            if _CONFIG_KEY not in arrays:
                raise ValueError(f"it holds no model settings ({_CONFIG_KEY})")
            config = ModelConfig.from_dict(json.loads(str(arrays.pop(_CONFIG_KEY))))
            part = "its metadata"
            metadata = json.loads(str(arrays.pop(_META_KEY, "{}")))
            part = "its weights"
            model = cls(config, metadata=metadata)
            model.network.set_weights_dict(arrays)
        except (ValueError, KeyError, TypeError) as err:
            from den._dependencies import _version_tuple

            newer = version is not None and _version_tuple(version) > _version_tuple(_den_version())
            if newer or (computation is not None and computation > COMPUTATION):
                raise DENModelError(f"DEN model {str(path)!r} was saved by a newer den ({version}, "
                                    f"computation {computation}) than this one ({_den_version()}, "
                                    f"computation {COMPUTATION}), which cannot read {part} ({err}); "
                                    f"upgrade den") from err
            raise DENModelError(f"DEN model {str(path)!r} is damaged or from an incompatible "
                                f"version: {part} do not read ({type(err).__name__}: {err})") from err
        diverged = sorted(k for k, a in arrays.items() if a.dtype.kind == "f" and not np.isfinite(a).all())
        if diverged:
            raise DENModelError(f"DEN model {str(path)!r} holds non-finite weights ({diverged[:3]}"
                                f"{' ...' if len(diverged) > 3 else ''}): its pre-training diverged; "
                                f"pre-train it again with a lower learning rate")
        model.saved_by = {"den": version, "computation": computation}
        note = computation_warning(path, computation, version, config)
        if note:
            warnings.warn(note, DENModelWarning, stacklevel=2)
        return model


def _den_version() -> str:
    from den import __version__

    return __version__


def computation_warning(path, computation: int | None, version: str | None,
                        config: ModelConfig) -> str | None:
    """Why a model file saved under ``computation`` (None: a file of before the record) by den
    ``version`` may predict here otherwise than it did for the den that saved it, or None: the
    changes since (``COMPUTATION_CHANGES``) that touch a model of ``config``, or a file of a
    newer den. Both dens are named by version and computation number: a development den may
    change its computation without a new version."""
    if computation is not None and computation > COMPUTATION:
        return (f"DEN model {str(path)!r} was saved by a newer den ({version}, computation "
                f"{computation}) than this one ({_den_version()}, computation {COMPUTATION}), which "
                f"computes its predictions otherwise: they may differ from the ones it was validated "
                f"with; upgrade den")
    since = [(date, what) for number, (date, what, touches) in sorted(COMPUTATION_CHANGES.items())
             if number > (computation or 1) and touches(config)]
    if not since:
        return None
    changes = "; ".join(f"since {date}, {what}" for date, what in since)
    if computation is None:
        return (f"DEN model {str(path)!r} does not record the den that saved it. If that was "
                f"before {since[0][0]}, this den predicts otherwise on some tasks ({changes}), so "
                f"its predictions can differ from the ones it gave then. Save it again "
                f"(DEN.load(path).save(path)) to record this den and drop this warning")
    return (f"DEN model {str(path)!r} was saved by den {version} (computation {computation}); "
            f"this den ({_den_version()}, computation {COMPUTATION}) "
            f"predicts otherwise on some tasks ({changes}), so its predictions can differ from the "
            f"ones it gave then. Save it again (DEN.load(path).save(path)) to drop this warning")
