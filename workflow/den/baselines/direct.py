"""Direct baselines: classifiers trained on the support set alone (section 5.1 of the paper).

Features are imputed (median of the support set) and standardised on the support set;
"direct logistic regression" and "direct NNs" with 1, 2 or 3 hidden layers of 8 ReLU units,
and the comparators a practitioner asks for first: gradient-boosted trees
(HistGradientBoostingClassifier, which handles missing values itself) and k-nearest
neighbours (k = 5, or fewer when the support set is smaller).
"""

from __future__ import annotations

import numpy as np

DIRECT_MODELS = ("logistic_regression", "mlp", "gradient_boosting", "knn")


def make_direct(model: str, hidden: tuple[int, ...] = (8,), seed: int = 0, max_iter: int = 500,
                n_support: int | None = None):
    """An unfitted scikit-learn pipeline: impute -> standardise -> classifier."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if model == "logistic_regression":
        clf = LogisticRegression(max_iter=max_iter)
    elif model == "mlp":
        clf = MLPClassifier(hidden_layer_sizes=tuple(hidden), max_iter=max_iter, random_state=seed)
    elif model == "gradient_boosting":
        return HistGradientBoostingClassifier(random_state=seed)
    elif model == "knn":
        clf = KNeighborsClassifier(n_neighbors=min(5, n_support or 5))
    else:
        raise ValueError(f"direct model must be one of {DIRECT_MODELS}, got {model!r}")
    return make_pipeline(SimpleImputer(strategy="median", keep_empty_features=True), StandardScaler(), clf)


def direct_predict_proba(model: str, x_support: np.ndarray, y_support: np.ndarray, x_query: np.ndarray,
                         n_classes: int, *, hidden=(8,), seed: int = 0) -> np.ndarray:
    """Fit on the support set, return (m, n_classes) query probabilities (absent classes 0)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    pipeline = make_direct(model, tuple(hidden), seed, n_support=len(y_support))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pipeline.fit(x_support, y_support)
    proba = np.zeros((len(x_query), n_classes))
    proba[:, pipeline.classes_.astype(int)] = pipeline.predict_proba(x_query)
    return proba
