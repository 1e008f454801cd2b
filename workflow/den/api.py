"""``DENClassifier``: a pre-trained DEN as a scikit-learn style classifier for a new small task.

    clf = DENClassifier().fit(X_support, y_support)      # the shipped model, validated preset
    proba = clf.predict_proba(X_query)
    DENClassifier(preset="fast")                          # no fine-tuning: a fit in milliseconds
    DENClassifier(model="model.npz", preset="paper")      # your model, the paper's fine-tuning

``fit`` encodes the support table, fits the task's keypoints, fine-tunes the task's
calibration (variant "den") or adapts the network (variant "adapt") and keeps the support
set; prediction embeds the whole support set once and scores query rows in chunks. A
binary-head model on a task of more than two classes is used one class against the rest (one
binary DEN per class).
"""

from __future__ import annotations

import inspect
import os
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import DataConversionWarning, NotFittedError

from den.data.encoding import FeatureCountError, TabularEncoder, encode_labels
from den.errors import DENInputError, DENModelError
from den.model.den import DEN
from den.pretrained import ADAPT_NETWORK_LEARNING_RATE, ADAPT_NETWORK_STEPS, PRESETS, shipped_model_path
from den.train.finetune import FinetuneConfig, adapt_config, fit_task

VARIANTS = ("den", "no_finetune", "adapt")
# The ``finetune_*`` settings each variant reads (``fit`` refuses others changed under a preset).
VARIANT_SETTINGS = {
    "den": (
        "finetune_epochs", "finetune_steps_per_epoch", "finetune_learning_rate", "finetune_ensemble",
        "finetune_early_stopping", "finetune_early_stopping_tolerance", "finetune_output_scaling",
        "finetune_output_scaling_learning_rate", "finetune_feature_counts",
        "finetune_feature_counts_tolerance"),
    "adapt": ("finetune_ensemble", "finetune_network_steps", "finetune_network_learning_rate"),
    "no_finetune": (),
}


_LOADED: dict[tuple[str, float, int], DEN] = {}


def load_model(model: str | os.PathLike | DEN) -> DEN:
    """A ``DEN`` from a path (cached per file and modification time) or as given.

    Raises:
        DENModelError: naming the path: it does not exist, is a directory or is not a DEN
            model file.
    """
    if isinstance(model, DEN):
        return model
    path = Path(model)
    if path.is_dir():
        raise DENModelError(f"DEN model {str(path)!r} is a directory, not a model file; give the "
                            f".npz file written by `den pretrain` (or DEN.save)")
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_mtime, stat.st_size)
    except OSError:
        return _load(path)  # raises DENModelError naming the path
    if key not in _LOADED:
        _LOADED[key] = _load(path)
    return _LOADED[key]


def _load(path: Path) -> DEN:
    """``DEN.load``, whose error for a file that is not an .npz archive of plain arrays (text,
    a pickle, object arrays) would quote numpy's advice to allow pickles: a DEN model file
    never needs them, so say it is not one."""
    try:
        return DEN.load(path)
    except DENModelError as err:
        if "allow_pickle" not in str(err):
            raise
        raise DENModelError(f"{str(path)!r} is not a DEN model file (a DEN model is an .npz archive "
                            f"of plain arrays; a DENClassifier saved with pickle or joblib is loaded "
                            f"with pickle.load or joblib.load); give the .npz file written by "
                            f"`den pretrain` (or DEN.save)") from err


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
        finetune_feature_counts_tolerance, finetune_network_steps,
        finetune_network_learning_rate: see ``den.train.finetune.FinetuneConfig`` (the
            ``finetune_network_*`` settings serve the "adapt" variant, the others "den"; the
            seed and ``finetune_ensemble`` serve both)
            (``finetune_ensemble`` = k fine-tuning runs whose predictions are averaged;
            ``finetune_early_stopping`` chooses the epochs by k-fold cross-validation on the
            support set, at most ``finetune_epochs``; a tolerance > 0 keeps the earliest epoch
            within that many standard errors of the best).
        chunk_rows: query rows scored at once (memory bound for large query sets);
            None picks a size from the number of feature tuples.
        min_support_rows: fewer labelled rows than this is an error.
        seed: seed of fine-tuning.

    Attributes (after ``fit``):
        classes_: (L,) the labels, sorted; ``predict_proba`` columns follow this order.
        n_features_in_: number of feature columns.
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
        self.finetune_network_steps = finetune_network_steps
        self.finetune_network_learning_rate = finetune_network_learning_rate

    def fit(self, X, y, X_unlabeled=None) -> DENClassifier:
        """Fine-tune on the support set (X, y).

        Args:
            X: (n, d) array or DataFrame; NaN/None = missing; booleans and strings allowed.
            y: (n,) labels of any type (at least two classes), except continuous numbers
                (floats not all whole numbers: a regression target) and complex numbers.
            X_unlabeled: optional rows without labels (e.g. the query set); they only widen
                each feature's keypoint span.

        Raises:
            DENInputError: no labels (y None), continuous labels, one class, too few rows,
                infinite values, more classes than the model supports, a bad variant.
            DENModelError: the model path is not a readable DEN model.
        """
        if self.preset not in PRESETS:
            raise DENInputError(f"preset must be one of {tuple(PRESETS)}, got {self.preset!r}")
        variant = PRESETS[self.preset]["variant"] if self.variant is None else self.variant
        if variant not in VARIANTS:
            raise DENInputError(f"variant must be one of {VARIANTS} (or None: the preset's), "
                                f"got {self.variant!r}")
        if self.variant is None:  # settings the preset's variant would silently ignore
            defaults = inspect.signature(type(self).__init__).parameters
            changed = [name for name in defaults if name.startswith("finetune_")
                       and getattr(self, name) != defaults[name].default
                       and name not in VARIANT_SETTINGS[variant]]
            if changed:
                raise DENInputError(f"{', '.join(changed)} given, but preset {self.preset!r} "
                                    f"(variant {variant!r}) does not use them: add variant='den' "
                                    f"(or preset='paper') to fine-tune the calibration")
        den = load_model(shipped_model_path(finetune=variant == "den") if self.model is None
                         else self.model)
        if y is None:
            raise DENInputError("DENClassifier requires y to be passed, but the target y is None: "
                                "give the support set's labels, one per row of X")
        shape = getattr(y, "shape", None) or np.asarray(y).shape
        if len(shape) == 2 and shape[1] == 1 and not scipy.sparse.issparse(y):
            warnings.warn("A column-vector y was passed when a 1d array was expected: its column "
                          "is taken as the labels; pass y.ravel() (a Series) to avoid this warning",
                          DataConversionWarning, stacklevel=2)
        codes, classes = encode_labels(y)
        if classes.dtype.kind == "f":
            finite = classes[np.isfinite(classes)]
            fractional = finite[finite != np.floor(finite)]
            if len(fractional):
                raise DENInputError(f"the support labels are continuous (e.g. {fractional[0]:g} is "
                                    f"not a whole number): DEN is a classifier; give class labels "
                                    f"(integers or strings), or bin a regression target into classes")
        if len(codes) == 0:
            raise DENInputError("the support set has no rows; DEN needs labelled rows of at least "
                                "two classes")
        if len(classes) < 2:
            raise DENInputError(f"the support set has a single class ({classes.tolist()}); with "
                                f"one class there is nothing to classify: DEN needs labelled rows "
                                f"of at least two classes")
        if len(codes) < self.min_support_rows:
            raise DENInputError(f"the support set has {len(codes)} rows; at least "
                                f"{self.min_support_rows} are needed (min_support_rows)")
        if den.config.head != "binary" and len(classes) > den.config.n_classes_supported:
            raise DENInputError(
                f"the support set has {len(classes)} classes but the model supports at most "
                f"{den.config.n_classes_supported} ({den.config.head} head); use a model "
                f"pre-trained with the multiclass head and max_classes >= {len(classes)}")
        encoder = TabularEncoder()
        x = encoder.fit_transform(X, "support features")
        if x.shape[0] != len(codes):
            raise DENInputError(f"{x.shape[0]} support rows but {len(codes)} labels")
        unlabeled = None if X_unlabeled is None else encoder.transform(X_unlabeled, "unlabeled features")
        config = None
        if variant == "den":
            config = FinetuneConfig(epochs=self.finetune_epochs,
                                    steps_per_epoch=self.finetune_steps_per_epoch,
                                    learning_rate=self.finetune_learning_rate, seed=self.seed,
                                    ensemble=self.finetune_ensemble,
                                    early_stopping=self.finetune_early_stopping,
                                    early_stopping_tolerance=self.finetune_early_stopping_tolerance,
                                    output_scaling=self.finetune_output_scaling,
                                    output_scaling_learning_rate=self.finetune_output_scaling_learning_rate,
                                    feature_counts=tuple(self.finetune_feature_counts),
                                    feature_counts_tolerance=self.finetune_feature_counts_tolerance)
        elif variant == "adapt":
            config = adapt_config(self.seed, self.finetune_ensemble, self.finetune_network_steps,
                                  self.finetune_network_learning_rate,
                                  one_vs_rest=PRESETS[self.preset].get("one_vs_rest", True))
        fitted = fit_task(den, x, codes, len(classes), config, x_unlabeled=unlabeled)
        self.fitted_ = fitted
        self.one_vs_rest_ = fitted.one_vs_rest
        self.class_models_ = fitted.class_models
        self.encoder_ = encoder
        self.classes_ = classes
        self.n_features_in_ = x.shape[1]
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
        try:
            return self.encoder_.transform(X, "query features")
        except FeatureCountError as err:  # in scikit-learn's words too
            raise DENInputError(f"X has {err.given} features, but {type(self).__name__} is "
                                f"expecting {err.expected} features as input: {err}") from None

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
