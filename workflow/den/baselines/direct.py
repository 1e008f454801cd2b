"""Direct baselines: classifiers trained on the support set alone (section 5.1 of the paper).

Features are imputed (median of the support set) and standardised on the support set (for the
NNs, a column constant on the support set is then 0 for the query rows too:
``SupportConstantZeroed``);
"direct logistic regression" and "direct NNs" with 1, 2 or 3 hidden layers of 8 ReLU units,
and the comparators a practitioner asks for first: gradient-boosted trees
(HistGradientBoostingClassifier, which handles missing values itself) and k-nearest
neighbours (k = 5, or fewer when the support set is smaller). These keep scikit-learn's
defaults (the paper has no rows for them: its direct baselines are LR and the NNs).

Strong classical baselines, as a practitioner with about 50 labelled rows would tune them:
``random_forest`` (500 trees after median imputation), ``gradient_boosting_small``
(boosted trees sized for small data: leaves of 3 rows, 200 rounds at rate 0.05, no early
stopping) and ``logistic_regression_cv`` (L2 logistic regression whose C is chosen from 10
values by stratified cross-validation on the support set, scored by log loss).
"""

from __future__ import annotations

import numpy as np

DIRECT_MODELS = ("logistic_regression", "mlp", "gradient_boosting", "knn", "random_forest",
                 "gradient_boosting_small", "logistic_regression_cv")


class SupportConstantZeroed:
    """A pipeline step (after the scaler) that sets to 0 the columns constant on the rows it
    was fitted on (the support set), for every row it transforms.

    A column constant on the support rows (all 0 in a zero-inflated feature, or all missing
    and imputed) is 0 there after centring, so a network's weights from it never learn and
    keep their random start; a query value in it (e.g. 2000, as StandardScaler leaves a
    constant column unscaled) would then move the prediction by that value times a random
    weight. The support rows are unchanged; a query row reads such a column as the support
    did.
    """

    def fit(self, x, y=None):
        x = np.asarray(x, dtype=float)
        self.varies_ = np.ptp(x, axis=0) > 0 if len(x) else np.ones(x.shape[1], bool)
        return self

    def transform(self, x):
        return np.where(self.varies_[None, :], np.asarray(x, dtype=float), 0.0)

    def fit_transform(self, x, y=None):
        return self.fit(x, y).transform(x)

    def get_params(self, deep=True):  # scikit-learn's clone and repr
        return {}

    def set_params(self, **params):
        return self


class SupportMissingZeroed(SupportConstantZeroed):
    """A pipeline step (before the boosted trees) that sets to 0 the columns with no observed
    value on the rows it was fitted on (the support set), for every row it transforms; every
    other column, its missing values included, passes unchanged.

    HistGradientBoostingClassifier takes missing values as they are, but stops with "window
    shape cannot be larger than input array shape" on a column that is missing in every
    fitting row (a mostly-empty survey column meets 50 support rows that way). Such a column
    says nothing on the support set; as 0 it is constant there, so the trees never split on it,
    as if it were left out, and a query row's value in it is not read.
    """

    def fit(self, x, y=None):
        x = np.asarray(x, dtype=float)
        self.varies_ = ~np.isnan(x).all(axis=0) if len(x) else np.ones(x.shape[1], bool)
        return self


def cv_folds(min_class_count: int | None) -> int:
    """Folds of ``logistic_regression_cv``'s stratified cross-validation: 5, or the support
    set's smallest class count when that is smaller (each fold holds every class); below 2
    there is no cross-validation (0: plain logistic regression)."""
    folds = 5 if min_class_count is None else min(5, int(min_class_count))
    return folds if folds >= 2 else 0


def make_direct(model: str, hidden: tuple[int, ...] = (8,), seed: int = 0, max_iter: int = 500,
                n_support: int | None = None, min_class_count: int | None = None):
    """An unfitted scikit-learn estimator: impute -> standardise -> classifier (the boosted
    trees take missing values as they are, but a column missing in every support row becomes 0:
    ``SupportMissingZeroed``; the random forest is imputed, not standardised).

    Args:
        model: one of ``DIRECT_MODELS``.
        hidden: hidden layer sizes of ``mlp``.
        seed: random state of every randomised model (and of the CV folds' shuffle).
        n_support: support rows (``knn`` uses at most that many neighbours).
        min_class_count: rows of the support set's smallest class: ``logistic_regression_cv``
            uses min(5, it) folds, and plain logistic regression below 2 (``cv_folds``).
    """
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    impute = SimpleImputer(strategy="median", keep_empty_features=True)
    if model == "random_forest":
        return make_pipeline(impute, RandomForestClassifier(n_estimators=500, random_state=seed, n_jobs=1))
    if model == "gradient_boosting_small":
        return make_pipeline(SupportMissingZeroed(), HistGradientBoostingClassifier(
            min_samples_leaf=3, max_iter=200, learning_rate=0.05, early_stopping=False, random_state=seed))
    if model == "logistic_regression_cv":
        folds = cv_folds(min_class_count)
        if folds:
            clf = LogisticRegressionCV(Cs=10, cv=StratifiedKFold(folds, shuffle=True, random_state=seed),
                                       scoring="neg_log_loss", max_iter=1000)
        else:
            clf = LogisticRegression(max_iter=1000)
    elif model == "logistic_regression":
        clf = LogisticRegression(max_iter=max_iter)
    elif model == "mlp":
        clf = MLPClassifier(hidden_layer_sizes=tuple(hidden), max_iter=max_iter, random_state=seed)
    elif model == "gradient_boosting":
        return make_pipeline(SupportMissingZeroed(), HistGradientBoostingClassifier(random_state=seed))
    elif model == "knn":
        clf = KNeighborsClassifier(n_neighbors=min(5, n_support or 5))
    else:
        raise ValueError(f"direct model must be one of {DIRECT_MODELS}, got {model!r}")
    if model == "mlp":  # a network's weights from a support-constant column never learn
        return make_pipeline(impute, StandardScaler(), SupportConstantZeroed(), clf)
    return make_pipeline(impute, StandardScaler(), clf)


def direct_predict_proba(model: str, x_support: np.ndarray, y_support: np.ndarray, x_query: np.ndarray,
                         n_classes: int, *, hidden=(8,), seed: int = 0) -> np.ndarray:
    """Fit on the support set, return (m, n_classes) query probabilities (absent classes 0)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    counts = np.unique(y_support, return_counts=True)[1]
    pipeline = make_direct(model, tuple(hidden), seed, n_support=len(y_support),
                           min_class_count=int(counts.min()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # LogisticRegressionCV announces changes of its defaults and fitted attributes (scikit-learn
        # 1.8+); their new names do not exist in the oldest scikit-learn we support (1.5)
        warnings.simplefilter("ignore", FutureWarning)
        pipeline.fit(x_support, y_support)
    proba = np.zeros((len(x_query), n_classes))
    proba[:, pipeline.classes_.astype(int)] = pipeline.predict_proba(x_query)
    return proba
