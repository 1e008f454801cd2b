"""The task-dependent transformation block: one piecewise-linear function (PLF) per feature.

A PLF with keypoints k_1 < ... < k_K (appendix A, eq. 6) is built in two exact steps:

1. ``to_unit`` maps each raw feature onto [0, 1] with the fixed piecewise-linear map that
   sends k_l to (l - 1) / (K - 1) and clamps outside [k_1, k_K] (numpy, no parameters).
2. ``Calibration`` applies a tensorflow-lattice ``PWLCalibration`` with K uniform keypoints
   on [0, 1] to the result. Composing a PLF with a PLF whose breakpoints line up is again
   a PLF with breakpoints k, so the pair is exactly the paper's c^j(x; k^j, alpha^j), with
   the alpha^j the lattice layer's trainable outputs.

This lets features with different domains (and quantile keypoints) share one lattice layer
with a single set of keypoints. Missing values (NaN) get a trainable output per feature
(the lattice layer's missing-value imputation).
"""

from __future__ import annotations

import numpy as np

from den._tf import tf, tfl
from den.model.config import KEYPOINT_PLACEMENTS, MONOTONICITIES

# The input value the lattice layer treats as missing; `to_unit` never produces it.
MISSING_INPUT_VALUE = -1.0


def fit_keypoints(x: np.ndarray, n_keypoints: int = 10, placement: str = "uniform",
                  x_more: np.ndarray | None = None) -> np.ndarray:
    """Keypoints spanning each feature's domain as seen in ``x`` (and ``x_more``).

    Args:
        x: (n, d) float array; NaN marks a missing value and is ignored.
        x_more: optional (m, d) further rows, read as if stacked under ``x`` (e.g. a million
            unlabeled query rows beside 50 support rows), one column at a time, so that no
            stacked (n + m, d) copy is made.
        n_keypoints: K >= 2.
        placement: "uniform" (K evenly spaced points from min to max, the paper's choice)
            or "quantile" (K empirical quantiles, merged where they coincide and then
            filled in uniformly, so they are always strictly increasing).

    Returns:
        (d, K) float64 array, strictly increasing along axis 1. A feature that is constant
        or entirely missing gets keypoints around its value (or around 0).
    """
    if placement not in KEYPOINT_PLACEMENTS:
        raise ValueError(f"keypoint placement must be one of {KEYPOINT_PLACEMENTS}, got {placement!r}")
    if n_keypoints < 2:
        raise ValueError(f"a PLF needs at least 2 keypoints, got {n_keypoints}")
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-d array of features, got shape {x.shape}")
    if x_more is not None:
        x_more = np.asarray(x_more, dtype=np.float64)
        if x_more.ndim != 2 or x_more.shape[1] != x.shape[1]:
            raise ValueError(f"x_more must have x's {x.shape[1]} columns, got shape {x_more.shape}")
    grid = np.linspace(0.0, 1.0, n_keypoints)
    out = np.empty((x.shape[1], n_keypoints))
    for j in range(x.shape[1]):
        col = x[:, j] if x_more is None else np.concatenate([x[:, j], x_more[:, j]])
        col = col[~np.isnan(col)]
        if col.size == 0:
            out[j] = grid - 0.5
            continue
        lo, hi = float(col.min()), float(col.max())
        if hi <= lo:
            out[j] = lo + grid - 0.5
            continue
        if placement == "uniform":
            out[j] = lo + grid * (hi - lo)
        else:
            q = np.unique(np.quantile(col, grid))
            if q.size < n_keypoints:
                # Too few distinct quantiles: insert points uniformly in the widest gaps.
                while q.size < n_keypoints:
                    gap = int(np.argmax(np.diff(q)))
                    q = np.insert(q, gap + 1, 0.5 * (q[gap] + q[gap + 1]))
            out[j] = q
    return out


def to_unit(x: np.ndarray, keypoints: np.ndarray) -> np.ndarray:
    """Map raw features onto [0, 1], keypoint k_l of feature j going to (l-1)/(K-1).

    Args:
        x: (n, d) array; NaN stays NaN.
        keypoints: (d, K) from ``fit_keypoints``.

    Returns:
        (n, d) float32 array with values in [0, 1] or NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    d, k = keypoints.shape
    if x.ndim != 2 or x.shape[1] != d:
        raise ValueError(f"expected {d} feature columns, got array of shape {x.shape}")
    grid = np.linspace(0.0, 1.0, k)
    out = np.empty(x.shape, dtype=np.float32)
    for j in range(d):
        col = x[:, j]
        out[:, j] = np.interp(col, keypoints[j], grid)  # clamps outside, keeps NaN
    return out


class Calibration(tf.Module):
    """PLF calibration of ``n_features`` features, on inputs already mapped by ``to_unit``.

    One ``tfl.layers.PWLCalibration`` holds the parameters of all features (one column per
    feature, plus one trainable missing-value output per feature) and projects them after
    each optimiser step (monotonicity, output bounds [0, 1]). ``__call__`` evaluates any
    subset of the features, which lets pre-training keep the calibrations of every task in
    one layer and evaluate only the columns a step samples.

    At initialisation each PLF is the identity on [0, 1] and a missing value maps to 0.5.
    """

    def __init__(self, n_features: int, n_keypoints: int = 10, monotonicity: str = "none",
                 name: str = "calibration"):
        super().__init__(name=name)
        if monotonicity not in MONOTONICITIES:
            raise ValueError(f"monotonicity must be one of {MONOTONICITIES}, got {monotonicity!r}")
        self.n_features = int(n_features)
        self.n_keypoints = int(n_keypoints)
        grid = np.linspace(0.0, 1.0, self.n_keypoints)
        with self.name_scope:
            self.layer = tfl.layers.PWLCalibration(
                input_keypoints=grid,
                units=self.n_features,
                output_min=0.0,
                output_max=1.0,
                monotonicity=monotonicity,
                impute_missing=True,
                missing_input_value=MISSING_INPUT_VALUE,
                dtype=tf.float32,
            )
            self.layer.build((None, self.n_features))

    @property
    def variables_to_train(self) -> list[tf.Variable]:
        """The kernel (K, n_features) and the missing-value outputs (1, n_features)."""
        return list(self.layer.trainable_variables)

    def __call__(self, unit_x: tf.Tensor, feature_index: tf.Tensor | None = None) -> tf.Tensor:
        """Calibrate.

        Args:
            unit_x: (n, C) float32 output of ``to_unit``, NaN where missing.
            feature_index: (C,) int32, which of the layer's features the columns are;
                ``None`` means all of them in order (C = n_features).

        Returns:
            (n, C) float32 calibrated features z in [0, 1].
        """
        kernel = self.layer.kernel  # (K, F): bias row, then segment heights
        missing_output = self.layer.missing_output[0]  # (F,)
        if feature_index is not None:
            kernel = tf.gather(kernel, feature_index, axis=1)
            missing_output = tf.gather(missing_output, feature_index)
        return calibrate(unit_x, kernel, missing_output)

    def parameters(self) -> tuple[tf.Tensor, tf.Tensor]:
        """(kernel (K, F), missing_output (F,)): what ``calibrate`` takes."""
        return self.layer.kernel, self.layer.missing_output[0]


def calibrate(unit_x: tf.Tensor, kernel: tf.Tensor, missing_output: tf.Tensor) -> tf.Tensor:
    """Evaluate PLFs given their parameters (pure function; traced once for all tasks).

    Args:
        unit_x: (n, C) float32 output of ``to_unit``, NaN where missing.
        kernel: (K, C) PWLCalibration kernel: row 0 the output at the first keypoint,
            rows 1.. the output increments over the K - 1 uniform segments of [0, 1].
        missing_output: (C,) output for a missing value.

    Returns:
        (n, C) float32 calibrated features.
    """
    k = kernel.shape[0] if kernel.shape[0] is not None else tf.shape(kernel)[0]
    grid = tf.linspace(0.0, 1.0, k)
    left, lengths = grid[:-1], grid[1:] - grid[:-1]
    is_missing = tf.math.is_nan(unit_x)
    clean = tf.where(is_missing, tf.zeros_like(unit_x), unit_x)
    weights = tfl.pwl_calibration_lib.compute_interpolation_weights(
        clean[..., None], left, lengths)  # (n, C, K)
    calibrated = tf.reduce_sum(weights * tf.transpose(kernel), axis=-1)
    return tf.where(is_missing, missing_output[None, :], calibrated)


def impute_unit(unit_x: tf.Tensor) -> tf.Tensor:
    """The transformation used when the model has no calibration block: missing -> 0.5."""
    return tf.where(tf.math.is_nan(unit_x), tf.fill(tf.shape(unit_x), 0.5), unit_x)
