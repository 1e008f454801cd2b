"""``DENClassifier``: a pre-trained DEN as a scikit-learn style classifier for a new small task.

    clf = DENClassifier().fit(X_support, y_support)      # the shipped model, validated preset
    proba = clf.predict_proba(X_query)
    DENClassifier(preset="fast")                          # no fine-tuning: a fit in milliseconds
    DENClassifier(model="model.npz", preset="paper")      # your model, the paper's fine-tuning

``fit`` encodes the support table, fits the task's keypoints, fine-tunes the task's
calibration (variant "den") or adapts the network (variant "adapt") and keeps the support
set; prediction embeds the whole support set once and scores query rows in chunks. A
binary-head model on a task of more than two classes is used one class against the rest (one
binary DEN per class). The fit itself is ``den.fitting.fit_table``, which ``den predict``
calls without importing scikit-learn.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import DataConversionWarning, NotFittedError

from den.data.encoding import as_pandas, encode_query
from den.fitting import VARIANTS, FitSettings, fit_table, load_model
from den.pretrained import ADAPT_NETWORK_LEARNING_RATE, ADAPT_NETWORK_STEPS, FINETUNE_TUPLES_PER_STEP

__all__ = ["VARIANTS", "DENClassifier", "load_model"]


class DENClassifier(ClassifierMixin, BaseEstimator):
    """A pre-trained DEN fine-tuned on a task's support set.

    Args:
        model: path of a saved DEN (``DEN.save`` / ``python -m den pretrain``) or a ``DEN``;
            None: a pre-trained model shipped with the package (``den.pretrained``,
            docs/model-card.md): the PLF-free one, or the one with PLFs where the variant
            fine-tunes them ("den").
        preset: "default" (the validated preset: network adaptation on a two-class task,
            none on a task of more classes), "fast" (no fine-tuning), "paper" (the paper's
            fine-tuning) or "adapt" (network adaptation on every task, each class of a
            multiclass one too); it sets ``variant`` when that is None, and whether a
            multiclass task adapts (see ``den.pretrained.PRESETS``).
        variant: None (the preset's), or "den": fine-tunes the calibration on the support set
            with the ``finetune_*`` settings (the paper's DEN);
            "no_finetune" keeps the calibration at its initial identity PLFs (DEN w/o
            fine-tuning); "adapt" trains the task's own copy of the network's weights on the
            support set (``finetune_network_steps`` Adam steps at
            ``finetune_network_learning_rate``, each on a halving of the support set; not in
            the paper), with the shipped PLF-free model when ``model`` is None. A model
            pre-trained with ``use_calibration=False`` gives "DEN w/o PLF w/o fine-tuning"
            with "den" or "no_finetune".
        finetune_epochs, finetune_steps_per_epoch, finetune_learning_rate, finetune_ensemble,
        finetune_early_stopping, finetune_early_stopping_tolerance, finetune_output_scaling,
        finetune_output_scaling_learning_rate, finetune_feature_counts,
        finetune_feature_counts_tolerance, finetune_tuples_per_step, finetune_network_steps,
        finetune_network_learning_rate: see ``den.train.config.FinetuneConfig`` (the
            ``finetune_network_*`` settings serve the "adapt" variant, the others "den"; the
            seed and ``finetune_ensemble`` serve both)
            (``finetune_ensemble`` = k fine-tuning runs whose predictions are averaged;
            ``finetune_early_stopping`` chooses the epochs by k-fold cross-validation on the
            support set, at most ``finetune_epochs``; a tolerance > 0 keeps the earliest epoch
            within that many standard errors of the best; ``finetune_tuples_per_step``: each
            fine-tuning step reads a fresh random sample of that many of the task's feature
            tuples, 128 by default (None: all of them, as in the paper, about 2.5 times slower
            at 20 features; prediction always reads them all)). A setting the variant (the
            preset's, or the one given) does not use is an error, so a grid search pairs them in
            a list of grids:
            ``[{"preset": ["fast", "default"]}, {"preset": ["paper"], "finetune_epochs": [2, 10]}]``.
            The defaults: the paper's schedule for "den" (10 epochs x 10 steps at 0.001, 128
            tuples a step), and for "adapt" 50 network steps at 1e-4 (3e-4 until session 42)
            (``den.pretrained.ADAPT_NETWORK_STEPS``, ``ADAPT_NETWORK_LEARNING_RATE``). Preset
            "default" does not adapt a task of 3+ classes, so there the ``finetune_network_*``
            settings and ``finetune_ensemble`` change nothing (a warning says so; preset "adapt"
            adapts each class).
        chunk_rows: query rows scored at once (memory bound for large query sets);
            None (the default) picks a size from the numbers of feature tuples and support rows.
        min_support_rows: fewer labelled rows than this is an error (default 10).
        seed: seed of fine-tuning (default 0). A fit repeats for the same seed on the same rows
            in the same order: fine-tuning and the default preset's network adaptation deal
            the support rows into random halves by position, so the rows in another order
            change the fit as another seed does (a few of 500 query labels flip); preset
            "fast", which does not fine-tune, does not depend on the order.

    Attributes (after ``fit``):
        classes_: (L,) the labels, sorted; ``predict_proba`` columns follow this order.
        n_features_in_: number of feature columns.
        feature_names_in_: (d,) object array of the column names, where X was a pandas frame
            whose column names are all strings (as in scikit-learn). Such a frame's columns
            may come in any order at prediction; an array then is taken column by column,
            with scikit-learn's warning that X has no valid feature names.
        task_models_: the fitted ``TaskModel`` of each fine-tuning run (one without an ensemble).
        task_model_: the first of them.
        finetune_losses_: loss per fine-tuning step (of the first run; of class 0's first
            run one-vs-rest).
        one_vs_rest_: True where a binary-head model meets more than two classes: then
            ``class_models_`` holds each class's task models ("class k or not"; None for a
            class without support rows) and ``task_models_`` all of them, class by class.

    scikit-learn compatibility: passes scikit-learn's estimator checks
    (tests/test_sklearn_checks.py; NaN is accepted as missing, tag ``allow_nan``) but two,
    expected to fail:
        check_methods_subset_invariance, check_methods_sample_order_invariance: scores are
            float32 TensorFlow arithmetic whose rounding depends on the batch's size and row
            order (and varies between runs): ~1e-7 relative differences, above these checks'
            tolerance.
    """

    def __init__(self, model=None, preset: str = "default", variant: str | None = None,
                 finetune_epochs: int = 10,
                 finetune_steps_per_epoch: int = 10, finetune_learning_rate: float = 0.001,
                 chunk_rows: int | None = None, min_support_rows: int = 10, seed: int = 0,
                 finetune_ensemble: int = 1, finetune_early_stopping: bool = False,
                 finetune_early_stopping_tolerance: float = 0.0,
                 finetune_output_scaling: bool = False,
                 finetune_output_scaling_learning_rate: float = 0.1,
                 finetune_feature_counts: tuple[int, ...] = (),
                 finetune_feature_counts_tolerance: float = 0.0,
                 finetune_tuples_per_step: int | None = FINETUNE_TUPLES_PER_STEP,
                 finetune_network_steps: int = ADAPT_NETWORK_STEPS,
                 finetune_network_learning_rate: float = ADAPT_NETWORK_LEARNING_RATE):
        self.model = model
        self.preset = preset
        self.variant = variant
        self.finetune_epochs = finetune_epochs
        self.finetune_steps_per_epoch = finetune_steps_per_epoch
        self.finetune_learning_rate = finetune_learning_rate
        self.chunk_rows = chunk_rows
        self.min_support_rows = min_support_rows
        self.seed = seed
        self.finetune_ensemble = finetune_ensemble
        self.finetune_early_stopping = finetune_early_stopping
        self.finetune_early_stopping_tolerance = finetune_early_stopping_tolerance
        self.finetune_output_scaling = finetune_output_scaling
        self.finetune_output_scaling_learning_rate = finetune_output_scaling_learning_rate
        self.finetune_feature_counts = finetune_feature_counts
        self.finetune_feature_counts_tolerance = finetune_feature_counts_tolerance
        self.finetune_tuples_per_step = finetune_tuples_per_step
        self.finetune_network_steps = finetune_network_steps
        self.finetune_network_learning_rate = finetune_network_learning_rate

    def fit(self, X, y, X_unlabeled=None) -> DENClassifier:
        """Fine-tune on the support set (X, y): ``den.fitting.fit_table`` with this
        estimator's parameters, whose docstring says what X (n rows, d features; NaN, None,
        booleans and strings allowed), y (n labels, at least two classes) and X_unlabeled
        (rows without labels that widen the keypoint spans) may hold, and which errors
        (``DENInputError``, ``DENModelError``) name a problem. A column-vector y is taken as
        the labels with scikit-learn's ``DataConversionWarning``. There is no sample_weight
        (nor class_weight): the support rows count alike, and balanced tuple relevance already
        weighs each class's rows one half where the shipped models score tuples.
        """
        shape = getattr(y, "shape", None) or np.asarray(y).shape
        if len(shape) == 2 and shape[1] == 1 and not scipy.sparse.issparse(y):
            warnings.warn("A column-vector y was passed when a 1d array was expected: its column "
                          "is taken as the labels; pass y.ravel() (a Series) to avoid this warning",
                          DataConversionWarning, stacklevel=2)
        X = as_pandas(X)  # a pyarrow or polars table: its column names as pandas reads them
        table = fit_table(FitSettings(**self.get_params(deep=False)), X, y, X_unlabeled)
        fitted = table.fitted
        self.fitted_ = fitted
        self.one_vs_rest_ = fitted.one_vs_rest
        self.class_models_ = fitted.class_models
        self.encoder_ = table.encoder
        self.classes_ = table.classes
        self.n_features_in_ = table.n_features
        names = _column_names(X)
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):  # refitted on an array
            del self.feature_names_in_
        self.task_models_ = fitted.task_models
        self.task_model_ = fitted.task_models[0]
        self.finetune_losses_ = fitted.losses[0]
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN/None are missing values, imputed by the calibration
        return tags

    def _check_fitted(self):
        """Raises scikit-learn's ``NotFittedError`` before ``fit``."""
        if not hasattr(self, "task_model_"):
            raise NotFittedError("this DENClassifier is not fitted yet; call fit(X_support, y_support)")

    def _encode_query(self, X) -> np.ndarray:
        """The query rows as the fitted encoder's features (NotFittedError before ``fit``)."""
        self._check_fitted()
        X = as_pandas(X)  # once, for the names and the encoder
        name, named = type(self).__name__, _column_names(X) is not None
        if hasattr(self, "feature_names_in_") and not named:
            warnings.warn(f"X does not have valid feature names, but {name} was fitted with "
                          f"feature names", UserWarning, stacklevel=3)
        elif named and not hasattr(self, "feature_names_in_"):
            warnings.warn(f"X has feature names, but {name} was fitted without feature names",
                          UserWarning, stacklevel=3)
        return encode_query(self.encoder_, X, name)

    def decision_function(self, X) -> np.ndarray:
        """Binary tasks: (m,) scores of ``classes_[1]`` (logits; with the multiclass head, the
        difference of the two class scores), whatever the head; more classes: (m, L) class
        scores (the mean over the fine-tuning ensemble; one-vs-rest: the log of
        ``predict_proba``)."""
        self._check_fitted()
        if self.one_vs_rest_:
            return np.log(np.maximum(self.predict_proba(X), 1e-12))
        x = self._encode_query(X)
        scores = np.mean([model.predict_logits(x, self.chunk_rows) for model in self.task_models_], axis=0)
        if scores.ndim == 2 and len(self.classes_) == 2:
            return scores[:, 1] - scores[:, 0]  # log(p1 / p0) under the softmax
        return scores

    def predict_proba(self, X) -> np.ndarray:
        """(m, L) probabilities, columns in ``classes_`` order."""
        x = self._encode_query(X)
        return self.fitted_.proba(x, self.chunk_rows)

    def predict(self, X) -> np.ndarray:
        """(m,) predicted labels (values of ``classes_``)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


def _column_names(X) -> np.ndarray | None:
    """(d,) object array of a pandas frame's column names where all are strings (what
    scikit-learn records as ``feature_names_in_``), else None."""
    columns = getattr(X, "columns", None)
    if columns is None or not all(isinstance(c, str) for c in columns):
        return None
    return np.asarray(columns, dtype=object)
