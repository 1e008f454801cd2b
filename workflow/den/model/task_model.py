"""DEN adapted to one task: the task's keypoints, its calibration block and its support set.

Prediction follows section 4.4 of the paper: the distribution embedding (and, for the
multiclass head, the class prototypes) is computed once from the whole support set, then
query rows are transformed and scored in chunks of ``chunk_rows``, so memory stays bounded
however many query rows there are.
"""

from __future__ import annotations

import numpy as np

from den._tf import tf
from den.data.tasks import class_codes
from den.errors import DENInputError, plain_value
from den.model.calibration import fit_keypoints, to_unit
from den.model.den import DEN

# Tuple-rows (query rows x feature tuples) per chunk when ``chunk_rows`` is not given:
# phi's 64 x 64 layers on ~130k tuple-rows keep their activations near the cache, which on a
# 2-core CPU scores about 20% more rows per second than chunks several times that size.
TUPLE_ROWS_PER_CHUNK = 1 << 17
# Support rows up to which a chunk's size does not depend on them: the local embedding holds
# (query rows x support rows x tuples) kernels, so a larger support set gets smaller chunks.
CHUNK_SUPPORT_ROWS = 64


def auto_chunk_rows(n_tuples: int, n_support: int = CHUNK_SUPPORT_ROWS) -> int:
    """Query rows per chunk for a task with ``n_tuples`` feature tuples and ``n_support``
    support rows (1..65536): ``TUPLE_ROWS_PER_CHUNK`` tuple-rows, fewer in proportion above
    ``CHUNK_SUPPORT_ROWS`` support rows, so that the local embedding's kernels stay as large
    as with 64 support rows."""
    support = max(CHUNK_SUPPORT_ROWS, n_support)
    rows = TUPLE_ROWS_PER_CHUNK * CHUNK_SUPPORT_ROWS // (max(1, n_tuples) * support)
    return int(min(65536, max(32 if n_support <= CHUNK_SUPPORT_ROWS else 1, rows)))


class TaskModel:
    """A pre-trained DEN plus everything task-dependent.

    Attributes:
        den: the shared ``DEN``; its network is never modified here.
        keypoints: (d, K) keypoints of the task's features (raw units).
        calibration: the task's ``Calibration`` of d features (identity at start).
        unit_support: (n, d) float32 support features mapped onto [0, 1] (NaN = missing).
        y_support: (n,) int32 support labels in 0..L-1.
        n_classes: L.
        tuples: (T, r) int32 feature tuples of this task (``DEN.tuples`` of its support rows).
        finetune_epochs: epochs of fine-tuning the calibration has had (0: pre-trained
            PLFs; with early stopping, the epoch cross-validation chose).
        logit_scale, logit_bias: scalar variables s and b of the binary head's output map
            logit -> exp(s) * logit + b; 0 and 0 (the identity, the paper) unless fine-tuning
            learns them (``FinetuneConfig.output_scaling``).
        features: (d,) sorted indices of the input columns the model reads, or None: all
            of them (the paper). The d of ``keypoints``, ``calibration`` and ``tuples`` is
            then the number of kept columns; query rows still have all ``n_inputs`` columns.
        n_inputs: columns of the support (and query) rows given to the model.
        network_weights: None (the pre-trained network, the paper), or the task's own values
            of every network weight (in ``den.network.trainable_variables`` order) after
            fine-tuning adapted the network to the support set (``adapt_network``); the
            shared ``den`` keeps its own.
    """

    def __init__(self, den: DEN, x_support: np.ndarray, y_support: np.ndarray,
                 n_classes: int | None = None, *, x_unlabeled: np.ndarray | None = None,
                 keypoints: np.ndarray | None = None, features: np.ndarray | None = None):
        """
        Args:
            den: pre-trained model.
            x_support: (n, d) raw support features, NaN = missing.
            y_support: (n,) labels in 0..L-1.
            n_classes: L (default: max label + 1).
            x_unlabeled: optional (m, d) raw rows without labels (e.g. the query set);
                they only widen the keypoints' span of each feature's domain.
            keypoints: (d, K) keypoints to use instead of fitting them (e.g. fitted on a
                whole dataset by an evaluation protocol), d the number of columns read.
            features: indices of the columns to read (e.g. ``informative_features`` of the
                support rows); None reads all.
        """
        if not isinstance(den, DEN):
            raise DENInputError(f"TaskModel needs a pre-trained DEN (den.model.den.DEN, e.g. "
                                f"DEN.load(path)), not a {type(den).__name__}")
        self.den = den
        x_support = np.asarray(x_support, dtype=np.float64)
        y_support = class_codes(y_support, "support labels")
        if x_support.ndim != 2 or x_support.shape[1] < 1:
            raise DENInputError(f"support features must be a 2-d array with at least one column, "
                                f"got shape {x_support.shape}")
        if y_support.shape != (x_support.shape[0],):
            raise DENInputError(f"{x_support.shape[0]} support rows but {y_support.shape} labels")
        if np.isinf(x_support).any():
            raise DENInputError(f"support feature {int(np.nonzero(np.isinf(x_support).any(axis=0))[0][0])} "
                                f"has infinite values; replace them by NaN (missing) or finite numbers")
        present = len(np.unique(y_support))
        if present < 2:
            raise DENInputError(f"the support set has {present} class(es); DEN needs labelled rows of "
                                f"at least two classes")
        if n_classes is not None and not y_support.max() < n_classes:
            raise DENInputError(f"support labels must be class codes 0..n_classes-1 = 0..{n_classes - 1}, "
                                f"got {int(y_support.max())}")
        if x_unlabeled is not None:
            x_unlabeled = np.asarray(x_unlabeled, dtype=np.float64)
            if x_unlabeled.ndim != 2 or x_unlabeled.shape[1] != x_support.shape[1]:
                raise DENInputError(f"x_unlabeled must have the support's {x_support.shape[1]} columns, "
                                    f"got shape {x_unlabeled.shape}")
        self.n_inputs = int(x_support.shape[1])
        self.features = None
        if features is not None:
            self.features = np.unique(np.asarray(features, dtype=np.int64))
            if len(self.features) == 0 or self.features[0] < 0 or self.features[-1] >= self.n_inputs:
                raise DENInputError(f"features must be 1 or more column indices in 0..{self.n_inputs - 1}, "
                                    f"got {np.asarray(features).tolist()}")
            x_support = x_support[:, self.features]
            if x_unlabeled is not None:
                x_unlabeled = x_unlabeled[:, self.features]
        self.n_classes = int(n_classes if n_classes is not None else y_support.max() + 1)
        if self.n_classes > den.config.n_classes_supported:
            raise DENInputError(f"the task has {self.n_classes} classes but this DEN model "
                                f"({den.config.head} head) supports at most "
                                f"{den.config.n_classes_supported}")
        if keypoints is None:
            keypoints = fit_keypoints(x_support, den.config.n_keypoints, den.config.keypoint_placement,
                                      x_more=x_unlabeled)
        elif np.shape(keypoints) != (x_support.shape[1], den.config.n_keypoints):
            raise DENInputError(f"keypoints must have shape (d, K) = "
                                f"{(x_support.shape[1], den.config.n_keypoints)}, got {keypoints.shape}")
        self.keypoints = np.asarray(keypoints, dtype=np.float64)
        self.unit_support = to_unit(x_support, self.keypoints)
        self.y_support = y_support.astype(np.int32)
        self.calibration = den.new_calibration(x_support.shape[1])
        self.tuples = den.tuples(x_support.shape[1], x_support, y_support)
        self.finetune_epochs = 0
        self.network_weights = None
        self.logit_scale = tf.Variable(0.0, dtype=tf.float32, name="logit_scale")
        self.logit_bias = tf.Variable(0.0, dtype=tf.float32, name="logit_bias")
        self._context = None

    @property
    def n_features(self) -> int:
        return int(self.keypoints.shape[0])

    def calibration_parameters(self):
        """(kernel (K, d), missing_output (d,)) tensors of the task's calibration."""
        return self.calibration.parameters()

    @property
    def finetuned_variables(self) -> list:
        """What fine-tuning may change: the calibration's kernel and missing-value outputs,
        then ``logit_scale`` and ``logit_bias``."""
        return [*self.calibration.variables_to_train, self.logit_scale, self.logit_bias]

    def finite(self) -> bool:
        """Whether everything fine-tuning may have changed (``finetuned_variables`` and the
        adapted ``network_weights``) is finite: False after a fine-tuning that diverged (e.g. at
        too large a learning rate), whose predictions would be NaN."""
        arrays = [v.numpy() for v in self.finetuned_variables] + list(self.network_weights or [])
        return all(np.isfinite(a).all() for a in arrays)

    def invalidate(self) -> None:
        """Forget the cached support context (call after the calibration changes)."""
        self._context = None

    def __getstate__(self) -> dict:
        """What pickling keeps: everything but the cached support context, which the first
        prediction after loading computes again (it would make a pickled 30-class estimator
        about 8 times larger once it has predicted)."""
        return {**self.__dict__, "_context": None}

    def context(self, context_fn=None):
        """(bias, prototypes, present, z_support, y_support) from the whole support set, cached
        (the arguments of ``DEN.query_fn`` between the calibration and the tuples), computed
        by ``context_fn`` (default ``DEN.context_fn``)."""
        if self._context is None:
            kernel, missing = self.calibration_parameters()
            with self.den.network_weights(self.network_weights):
                self._context = (context_fn or self.den.context_fn)(
                    tf.constant(self.unit_support), tf.constant(self.y_support), kernel, missing,
                    tf.constant(self.tuples), tf.constant(self.n_classes, tf.int32))
        return self._context

    def predict_logits(self, x_query: np.ndarray, chunk_rows: int | None = None) -> np.ndarray:
        """Scores of query rows.

        Args:
            x_query: (m, ``n_inputs``) raw query features.
            chunk_rows: rows scored per call (bounds memory: about chunk_rows x T x 64
                floats live at once, and with the local embedding chunk_rows x support rows x
                T); None chooses ``auto_chunk_rows`` for T and, with the local embedding, the
                support rows.

        Returns:
            binary head: (m,) logits of class 1; multiclass: (m, L) class scores.
        """
        x_query = np.asarray(x_query)
        if x_query.ndim != 2 or x_query.shape[1] != self.n_inputs:
            raise DENInputError(f"query features must have {self.n_inputs} columns like the "
                                f"support set, got shape {x_query.shape}")
        if self.features is not None:
            x_query = x_query[:, self.features]
        if chunk_rows is None:
            support = len(self.y_support) if self.den.config.local_bandwidths else CHUNK_SUPPORT_ROWS
            chunk_rows = auto_chunk_rows(len(self.tuples), support)  # local: query x support x T
        if plain_value(chunk_rows, "int") is None or chunk_rows < 1:
            raise DENInputError(f"chunk_rows must be an integer >= 1, got {chunk_rows!r}")
        kernel, missing = self.calibration_parameters()
        context_fn, query_fn = self.den.prediction_functions(x_query.shape[0] * len(self.tuples))
        tuples = tf.constant(self.tuples)
        binary = self.den.config.head == "binary"
        out = np.empty((x_query.shape[0],) if binary else (x_query.shape[0], self.n_classes),
                       np.float32)
        with self.den.network_weights(self.network_weights):  # one swap for context and chunks
            context = self.context(context_fn)
            for start in range(0, x_query.shape[0], chunk_rows):
                unit = to_unit(x_query[start:start + chunk_rows], self.keypoints)
                logits = query_fn(tf.constant(unit), kernel, missing, *context, tuples).numpy()
                out[start:start + len(unit)] = logits if binary else logits[:, :self.n_classes]
        if binary:
            out = np.float32(np.exp(self.logit_scale.numpy())) * out + np.float32(self.logit_bias.numpy())
        return out

    def predict_proba(self, x_query: np.ndarray, chunk_rows: int | None = None) -> np.ndarray:
        """(m, L) class probabilities of query rows (L = 2 for the binary head)."""
        logits = self.predict_logits(x_query, chunk_rows)
        if self.den.config.head == "binary":
            with np.errstate(over="ignore"):  # a logit below -709: exp overflows to inf, p1 is 0
                p1 = 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))
            return np.stack([1.0 - p1, p1], axis=1)
        z = logits.astype(np.float64)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)
