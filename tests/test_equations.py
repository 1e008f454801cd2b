"""The forward pass of DEN against an independent NumPy reference written from the paper.

``reference_logits`` below re-implements, slowly and in float64, one row and one tuple at a
time, what ``den-paper.tex`` defines:

- the transformation block (eq. 1 and appendix A, eq. 6): one PLF per feature,
  c^j(x) = alpha_l + (x - k_l) / (k_{l+1} - k_l) (alpha_{l+1} - alpha_l) on [k_l, k_{l+1}],
  with K keypoints "uniformly distributed in the input domain" (appendix B);
- the r-tuples of features (remark 1): every t in [d]^r, or d^2 of them when d^r > d^2
  (appendix D);
- the distribution embedding: binary eq. (2), s^t = (mean_{y=0} h(z^t), mean_{y=1} h(z^t),
  ybar) (the paper's classes 1 and 2 are this code's labels 0 and 1; ybar is the share of
  label 1); multiclass eq. (4), s^t = mean_i h([z_i^t, v(y_i)]);
- the classifier: binary eq. (3), q = psi(mean_t phi([z^t, s^t])) (mean pooling, appendix B
  and docs/fidelity.md #3); multiclass eq. (5) literally, q_k = mean over the support rows
  of class k of Phi~(z) . Phi~(z_i), with Phi~ = mean_t phi([z^t, s^t]);
- phi and h are the appendix's ReLU MLPs with a linear last layer, psi ends in one logit.

It does not call the package's TensorFlow code: it reads only the weights, and it reads each
split first layer as the one dense layer it is, on the concatenated input (h: [z^t, v(y)];
phi: [z^t, s^t] or, with the local embedding, [z^t, s^t, l^t(z)]). Keypoints are computed
here from the support rows; the tuples too, except for r = 3, where the paper draws d^2 of
the d^3 tuples at random and the reference takes the model's draw after checking it is d^2
distinct members of [d]^3.

The options the paper does not have (network module docstring) are written out here from
their definitions: the local embedding l^t(z), tuple attention, gated pooling, psi's log d
input and the tuples' leave-one-out relevance q^t. Points
the paper leaves open follow docs/fidelity.md and DESIGN.md: PLFs clamp outside [k_1, k_K]
(fidelity #7), a missing value maps to a per-feature trainable output (DESIGN.md), and a
multiclass class with no support row scores ``ABSENT_CLASS_LOGIT`` (eq. 5 is 0/0 there).

Tolerance: the model runs in float32, the reference in float64. Logits here range from
about 0.01 to 50 in size and agree to at most 4e-7 relative (max absolute difference 1.4e-5
on scores near 45), so rtol = atol = 1e-5 is a 20-fold margin over float32 rounding; each
mutation in ``test_reference_catches_wrong_equations`` moves the logits by 0.05 or more.

Note on ybar: with the paper's labels {1, 2}, the mean of y would be 1 + (share of class 2);
this code (DESIGN.md) uses 0/1 labels and the share of label 1. The two differ by a constant
that phi's first-layer bias absorbs, so it is a parametrisation, not a change of model.
"""

import itertools

import numpy as np
import pytest

from den._tf import tf
from den.model.calibration import to_unit
from den.model.config import ModelConfig
from den.model.den import DEN
from den.model.network import ABSENT_CLASS_LOGIT
from den.model.task_model import TaskModel

RTOL, ATOL = 1e-5, 1e-5
K = 6  # keypoints per PLF
ARCH = dict(h_units=(6, 5), embedding_dim=4, phi_units=(7, 6), psi_units=(5, 4), label_dim=3,
            max_classes=5, n_keypoints=K)


# -- the reference ----------------------------------------------------------------------
def keypoints_reference(x, placement):
    """K keypoints per feature spanning its observed domain (NaN ignored)."""
    out = []
    for j in range(x.shape[1]):
        col = x[:, j][~np.isnan(x[:, j])]
        if placement == "uniform":
            lo, hi = col.min(), col.max()
            out.append([lo + (hi - lo) * i / (K - 1) for i in range(K)])
        else:  # quantiles (continuous data here: all distinct)
            out.append(np.quantile(col, np.linspace(0, 1, K)))
    return np.array(out, np.float64)


def plf_reference(x, k, alpha, missing):
    """c(x; k, alpha) of appendix A, eq. (6); clamped outside [k_1, k_K]; NaN -> missing."""
    if np.isnan(x):
        return missing
    if x <= k[0]:
        return alpha[0]
    if x >= k[-1]:
        return alpha[-1]
    for seg in range(len(k) - 1):
        if k[seg] <= x <= k[seg + 1]:
            return alpha[seg] + (x - k[seg]) / (k[seg + 1] - k[seg]) * (alpha[seg + 1] - alpha[seg])
    raise AssertionError("unreachable")


def calibrate_reference(x, keypoints, alpha, missing):
    z = np.empty(x.shape)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            z[i, j] = plf_reference(x[i, j], keypoints[j], alpha[j], missing[j])
    return z


def tuples_reference(d, r, model, x_s, y_s):
    """All of [d]^r (remark 1) or, when d^r > d^2, the model's d^2 random ones (appendix D), on
    the task's columns as its support rows order them (``canonical_order``)."""
    every = list(itertools.product(range(d), repeat=r))
    if d ** r <= d * d:
        return every
    drawn = [tuple(t) for t in model.tuples(d, x_s, y_s).tolist()]
    assert len(drawn) == d * d and len(set(drawn)) == d * d and set(drawn) <= set(every)
    return drawn


def relu(a):
    return np.maximum(a, 0.0)


def mlp(x, layers):
    """layers: [(W, b, relu?)]; one input vector x."""
    for w, b, act in layers:
        x = x @ w + b
        if act:
            x = relu(x)
    return x


def weights_of(model):
    """The network's weights as float64 arrays, each MLP as a list of (W, b, relu?)."""
    net = model.network
    f = lambda v: np.asarray(v.numpy(), np.float64)  # noqa: E731
    dense = lambda layer, act: (f(layer.kernel), f(layer.bias), act)  # noqa: E731
    w = {"h_rest": [dense(layer, True) for layer in net.h_layers] + [dense(net.h_out, False)],
         "phi_rest": [dense(layer, True) for layer in net.phi_layers] + [dense(net.phi_out, False)],
         "h_z": f(net.h_z), "h_b": f(net.h_b), "phi_z": f(net.phi_z), "phi_s": f(net.phi_s),
         "phi_b": f(net.phi_b)}
    if model.config.head == "binary":
        w["psi"] = [dense(layer, True) for layer in net.psi_layers] + [dense(net.psi_out, False)]
    else:
        w["v"], w["h_v"] = f(net.label_encoding), f(net.h_v)
    if model.config.local_bandwidths:
        w["phi_l"] = f(net.phi_l)
    if model.config.linear_evidence:
        w["phi_e"] = f(net.phi_e)
    if model.config.tuple_attention:
        w["attention"] = f(net.attention)
    if model.config.gated_pooling:
        w["pool_rho"], w["gate"] = f(net.pool_rho), dense(net.gate, False)
    if model.config.tuple_relevance:  # q^t enters phi's first layer beside s^t: one stacked kernel
        w["phi_s"] = np.vstack([w["phi_s"], f(net.phi_q)])
    return w


def h_reference(w, z_t, v=None):
    """h of eq. (2) on one tuple's values, or of eq. (4) on [z^t, v(y)]."""
    if v is None:
        first = (w["h_z"], w["h_b"], True)
        x = z_t
    else:
        first = (np.vstack([w["h_z"], w["h_v"]]), w["h_b"], True)
        x = np.concatenate([z_t, v])
    return mlp(x, [first] + w["h_rest"])


def embedding_reference(w, z_s, y_s, tuples, head, mutation=None):
    """s^t for every tuple t: eq. (2) (binary) or eq. (4) (multiclass)."""
    n = len(y_s)
    out = []
    for t in tuples:
        if head == "binary":
            by_class = []
            for k in (0, 1):
                rows = [h_reference(w, z_s[i, list(t)]) for i in range(n) if y_s[i] == k]
                by_class.append(np.mean(rows, axis=0) if rows else np.zeros(w["h_rest"][-1][1].shape))
            ybar = np.mean([1.0 if y_s[i] == 1 else 0.0 for i in range(n)])
            if mutation == "swap_s0_s1":
                by_class = by_class[::-1]
            if mutation == "ybar_of_class_0":
                ybar = 1.0 - ybar
            if mutation == "ybar_first":
                out.append(np.concatenate([[ybar], by_class[0], by_class[1]]))
            else:
                out.append(np.concatenate([by_class[0], by_class[1], [ybar]]))
        else:
            rows = []
            for i in range(n):
                label = y_s[i]
                if mutation == "reverse_labels":
                    label = max(y_s) - label
                rows.append(h_reference(w, z_s[i, list(t)], w["v"][label]))
            out.append(np.mean(rows, axis=0))
    return out


def local_reference(z, z_s, y_s, t, bandwidths):
    """l^t(z) (network module docstring): per bandwidth b, the log ratio of the class-1 and
    class-0 Gaussian kernel means at z^t (0 if a class has no row; clipped to +-10), then the
    log of the overall kernel mean (floored at -10)."""
    out = []
    for b in bandwidths:
        kern = [np.exp(-np.sum((z[list(t)] - z_s[i, list(t)]) ** 2) / (2 * b * b)) for i in range(len(y_s))]
        k0 = [k for k, y in zip(kern, y_s) if y == 0]
        k1 = [k for k, y in zip(kern, y_s) if y == 1]
        ratio = np.log(np.mean(k1)) - np.log(np.mean(k0)) if k0 and k1 else 0.0
        out += [np.clip(ratio, -10, 10), max(np.log(np.mean(kern)), -10.0)]
    return np.array(out)


def relevance_reference(z_s, y_s, t, bandwidths, balanced=False, mutation=None):
    """q^t (network module docstring, ``DENNetwork.tuple_relevance``): per bandwidth b, each
    support row i scored by the Gaussian kernel means of the other rows of each class at
    z_i^t, r_i = log mean_{j != i, y_j = 1} k - log mean_{j != i, y_j = 0} k (0 if a class has
    no other row; clipped to +-5); q = mean_i (2 y_i - 1) r_i / 5, or with ``balanced``
    (``ModelConfig.balanced_relevance``) the mean of the two classes' means of (2 y_i - 1) r_i / 5."""
    n, out = len(y_s), []
    for b in bandwidths:
        margins = []
        for i in range(n):
            kern = {0: [], 1: []}
            for j in range(n):
                if j != i or mutation == "relevance_includes_self":
                    sq = np.sum((z_s[i, list(t)] - z_s[j, list(t)]) ** 2)
                    kern[y_s[j]].append(np.exp(-sq / (2 * b * b)))
            ratio = np.clip(np.log(np.mean(kern[1])) - np.log(np.mean(kern[0])), -5, 5) \
                if kern[0] and kern[1] else 0.0
            margins.append((2 * y_s[i] - 1) * ratio)
        margins = np.array(margins)
        if balanced and mutation != "relevance_unweighted":
            out.append(np.mean([margins[y_s == c].mean() for c in (0, 1)]) / 5)
        else:
            out.append(np.mean(margins) / 5)
    return np.array(out)


def evidence_reference(z, z_s, y_s, mutation=None):
    """e(z) (network module docstring, ``DENNetwork.linear_evidence``): per feature j,
    (z_j - (mu0_j + mu1_j) / 2) (mu1_j - mu0_j) / (v_j + 0.01) clipped to +-10, with mu_c the
    support rows' class means and v_j the mean squared distance of the support rows to their
    own class's mean (0 if a class has no row)."""
    if not (np.any(y_s == 0) and np.any(y_s == 1)):
        return np.zeros_like(z)
    mu0, mu1 = z_s[y_s == 0].mean(axis=0), z_s[y_s == 1].mean(axis=0)
    if mutation == "evidence_total_variance":
        v = z_s.var(axis=0)
    else:
        v = np.mean((z_s - np.where((y_s == 1)[:, None], mu1, mu0)) ** 2, axis=0)
    return np.clip((z - (mu0 + mu1) / 2) * (mu1 - mu0) / (v + 0.01), -10, 10)


def pooled_reference(w, config, z, s, tuples, z_s=None, y_s=None, mutation=None):
    """Phi~(z, s) = mean over tuples of phi([z^t, s^t] (, l^t(z)) (, e^t(z))), phi's last layer
    included (with tuple attention, a softmax-weighted mean; with gated pooling, per unit of
    phi's last hidden layer g mean + (1 - g) log-mean-exp, then phi's last layer)."""
    first_kernel = np.vstack([w["phi_z"], w["phi_s"]] + ([w["phi_l"]] if "phi_l" in w else [])
                             + ([w["phi_e"]] if "phi_e" in w else []))
    evidence = evidence_reference(z[None], z_s, y_s, mutation)[0] if "phi_e" in w else None

    def inputs(t, s_t):
        x = [z[list(t)], s_t]
        if "phi_l" in w:
            x.append(local_reference(z, z_s, y_s, t, config.local_bandwidths))
        if evidence is not None:
            x.append(evidence[list(t)])
        return np.concatenate(x)

    phis, scores = [], []
    for t, s_t in zip(tuples, s):
        x = inputs(t, s_t)
        phis.append(mlp(x, [(first_kernel, w["phi_b"], True)] + w["phi_rest"]))
        if "attention" in w:  # weight of tuple t from s^t alone: u . relu(s^t W_s + b)
            scores.append(w["attention"] @ relu(s_t @ w["phi_s"] + w["phi_b"]))
    if "attention" in w:
        weights = np.exp(np.array(scores) - max(scores))
        weights /= weights.sum()
        return sum(a * p for a, p in zip(weights, phis))
    if "gate" in w:
        hidden = np.array([mlp(inputs(t, s_t), [(first_kernel, w["phi_b"], True)] + w["phi_rest"][:-1])
                           for t, s_t in zip(tuples, s)])  # (T, P): phi's last hidden layer
        beta = np.log1p(np.exp(w["pool_rho"]))  # softplus
        soft_max = np.log(np.mean(np.exp(beta * hidden), axis=0)) / beta
        gate = 1.0 / (1.0 + np.exp(-mlp(np.mean([relu(s_t @ w["phi_s"] + w["phi_b"]) for s_t in s], axis=0),
                                        [w["gate"]])))
        return mlp(gate * hidden.mean(axis=0) + (1.0 - gate) * soft_max, [w["phi_rest"][-1]])
    return np.mean(phis, axis=0)


def reference_logits(model, x_s, y_s, x_q, alpha, missing, n_classes=None, mutation=None):
    """Binary: (m,) logits of class 1 (eq. 3); multiclass: (m, L) scores q_k (eq. 5)."""
    config = model.config
    w = weights_of(model)
    keypoints = keypoints_reference(x_s, config.keypoint_placement)
    if mutation == "no_plf":
        alpha = np.tile(np.linspace(0, 1, K), (x_s.shape[1], 1))
    z_s = calibrate_reference(x_s, keypoints, alpha, missing)
    z_q = calibrate_reference(x_q, keypoints, alpha, missing)
    tuples = tuples_reference(x_s.shape[1], config.order, model, x_s, y_s)
    if mutation == "first_tuples_only":
        tuples = tuples[:len(tuples) // 2]
    s = embedding_reference(w, z_s, y_s, tuples, config.head, mutation)
    if config.tuple_relevance:  # s^t carries q^t (its kernel stacked under phi_s in weights_of)
        s = [np.concatenate([s_t, relevance_reference(z_s, y_s, t, config.local_bandwidths,
                                                      config.balanced_relevance, mutation)])
             for s_t, t in zip(s, tuples)]
    if config.head == "binary":
        # feature_count_input: psi reads [Phi~, log d]
        extra = [np.log(x_s.shape[1])] if config.feature_count_input else []
        pooled = [pooled_reference(w, config, z_q[q], s, tuples, z_s, y_s, mutation) for q in range(len(z_q))]
        return np.array([mlp(np.concatenate([p, extra]), w["psi"])[0] for p in pooled])
    support = [pooled_reference(w, config, z_s[i], s, tuples) for i in range(len(y_s))]
    scores = np.empty((len(z_q), n_classes))
    for q in range(len(z_q)):
        query = pooled_reference(w, config, z_q[q], s, tuples)
        for k in range(n_classes):
            members = [i for i in range(len(y_s)) if y_s[i] == k]
            if mutation == "sum_over_class":
                scores[q, k] = sum(query @ support[i] for i in members)
            else:
                scores[q, k] = (np.mean([query @ support[i] for i in members]) if members
                                else ABSENT_CLASS_LOGIT)
    return scores


# -- the model under test ----------------------------------------------------------------
def make_data(d, head, n_classes, seed):
    """Support and query rows on different scales, a missing value in each set, query
    values outside the support's span; every class present (unless asked otherwise)."""
    rng = np.random.default_rng(seed)
    scale, shift = rng.uniform(0.5, 50, d), rng.uniform(-20, 20, d)
    x_s = shift + scale * rng.exponential(1.0, (12, d)) * rng.choice([-1, 1], d)
    x_q = shift + scale * rng.exponential(1.0, (5, d)) * rng.choice([-1, 1], d)
    x_s[2, 1] = np.nan
    x_q[0, 0] = np.nan
    x_q[1] = np.nanmax(x_s, axis=0) + 1.0
    x_q[2, -1] = np.nanmin(x_s[:, -1]) - 3.0
    if head == "binary":
        y_s = np.array([0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0], np.int32)
    else:
        y_s = rng.permutation(np.arange(12) % n_classes).astype(np.int32)
    return x_s, y_s, x_q


def model_logits(config, d, n_classes=2, seed=0, y_override=None):
    """A seeded random DEN (random biases too) and a task with random PLFs: the model's
    logits, what the reference needs to recompute them, and the ``TaskModel``."""
    model = DEN(config)
    rng = np.random.default_rng(seed + 100)
    for var in model.network.variables:
        name = var.name.split(":")[0].rsplit("/", 1)[-1]
        if name.endswith("kernel") or name in ("h_z", "h_v", "phi_z", "phi_s", "phi_l"):
            # 1.5 times Glorot's scale: through these small ReLU nets the logits then vary
            # visibly between query rows
            var.assign(1.5 * var.numpy())
        elif name.endswith("bias") or name in ("h_b", "phi_b"):  # zeros at start: make them count
            var.assign(rng.normal(0.0, 0.3, var.shape).astype(np.float32))
        elif name == "pool_rho":  # sharpness beta between 0.5 and 5 per unit
            var.assign(np.log(np.expm1(rng.uniform(0.5, 5.0, var.shape))).astype(np.float32))
        elif name == "phi_q":  # relevance is at most 1 in size: a larger kernel makes it count
            var.assign(10.0 * var.numpy())
        elif name == "attention":
            var.assign(rng.normal(0.0, 1.0, var.shape).astype(np.float32))
    x_s, y_s, x_q = make_data(d, config.head, n_classes, seed)
    if y_override is not None:
        y_s = y_override
    task = TaskModel(model, x_s, y_s, n_classes)
    alpha = rng.uniform(0.0, 1.0, (d, K))  # PLF outputs at the keypoints (not monotone)
    missing = rng.uniform(0.0, 1.0, d)
    # the lattice layer's parameters: output at the first keypoint, then the increments
    kernel = np.concatenate([alpha[:, :1], np.diff(alpha, axis=1)], axis=1).T
    task.calibration.layer.kernel.assign(kernel.astype(np.float32))
    task.calibration.layer.missing_output.assign(missing[None, :].astype(np.float32))
    task.invalidate()
    return task.predict_logits(x_q), (model, x_s, y_s, x_q, alpha, missing, n_classes), task


CASES = {
    "binary-r1-d4": (dict(head="binary", order=1), 4, 2),
    "binary-r2-d3": (dict(head="binary", order=2), 3, 2),
    "binary-r3-d3": (dict(head="binary", order=3), 3, 2),  # 9 of the 27 triples
    "binary-r2-d4-quantile-keypoints": (dict(head="binary", order=2, keypoint_placement="quantile"), 4, 2),
    "binary-r2-d3-local": (dict(head="binary", order=2, local_bandwidths=(0.2, 0.5)), 3, 2),
    "binary-r2-d3-attention": (dict(head="binary", order=2, tuple_attention=True), 3, 2),
    "binary-r2-d5-feature-count": (dict(head="binary", order=2, feature_count_input=True), 5, 2),
    "binary-r3-d4-local-gated": (dict(head="binary", order=3, local_bandwidths=(0.3,), gated_pooling=True),
                                 4, 2),
    "binary-r2-d3-local-relevance": (dict(head="binary", order=2, local_bandwidths=(0.2, 0.5),
                                          tuple_relevance=True), 3, 2),
    "binary-r3-d4-local-relevance-gated": (dict(head="binary", order=3, local_bandwidths=(0.3,),
                                                tuple_relevance=True, gated_pooling=True), 4, 2),
    # the binary support set has 5 rows of class 1 and 7 of class 0, so the weighting counts
    "binary-r2-d3-local-balanced-relevance": (dict(head="binary", order=2, local_bandwidths=(0.2, 0.5),
                                                   tuple_relevance=True, balanced_relevance=True), 3, 2),
    "binary-r3-d4-local-relevance-gated-evidence": (dict(head="binary", order=3, local_bandwidths=(0.3,),
                                                         tuple_relevance=True, gated_pooling=True,
                                                         linear_evidence=True), 4, 2),
    "multiclass-r2-d3-gated": (dict(head="multiclass", order=2, gated_pooling=True), 3, 3),
    "multiclass-r1-d4": (dict(head="multiclass", order=1), 4, 3),
    "multiclass-r2-d3": (dict(head="multiclass", order=2), 3, 3),
    "multiclass-r3-d3": (dict(head="multiclass", order=3), 3, 4),
}


@pytest.fixture(scope="module")
def computed():
    """Model logits per case, computed once (each case compiles its own model)."""
    return {name: model_logits(ModelConfig(**ARCH, **extra, seed=7 + i), d, n_classes, seed=i)
            for i, (name, (extra, d, n_classes)) in enumerate(CASES.items())}


@pytest.mark.parametrize("case", list(CASES))
def test_forward_pass_matches_the_paper(computed, case):
    ours, args, _ = computed[case]
    expected = reference_logits(*args)
    assert ours.shape == expected.shape
    assert np.ptp(expected, axis=0).min() > 100 * ATOL  # the output depends on the query row
    np.testing.assert_allclose(ours, expected, rtol=RTOL, atol=ATOL)


def test_multiclass_class_without_support_rows():
    """Eq. (5) is 0/0 for a class with no support row: the model scores it
    ``ABSENT_CLASS_LOGIT``; the present classes still follow eq. (5)."""
    y = np.array([0, 2, 2, 0, 0, 2, 0, 0, 2, 0, 2, 2], np.int32)  # class 1 absent
    ours, args, _ = model_logits(ModelConfig(**ARCH, head="multiclass", order=2, seed=5), 3, 3, seed=9,
                              y_override=y)
    expected = reference_logits(*args)
    assert np.all(ours[:, 1] == ABSENT_CLASS_LOGIT)
    np.testing.assert_allclose(ours[:, [0, 2]], expected[:, [0, 2]], rtol=RTOL, atol=ATOL)


MUTATIONS = [  # (case, mutation of the reference): each is a plausible bug the test must catch
    ("binary-r2-d3", "swap_s0_s1"),  # class-conditional means in the wrong order
    ("binary-r2-d3", "ybar_of_class_0"),  # label mean of the other class
    ("binary-r2-d3", "ybar_first"),  # s^t = (ybar, s0, s1)
    ("binary-r2-d3", "no_plf"),  # calibration not applied (identity PLFs)
    ("binary-r1-d4", "first_tuples_only"),  # pooling over part of the tuples
    ("binary-r2-d3-local-relevance", "relevance_includes_self"),  # a support row scores its own label
    ("binary-r2-d3-local-balanced-relevance", "relevance_unweighted"),  # rows weighed alike, not classes
    ("binary-r3-d4-local-relevance-gated-evidence", "evidence_total_variance"),  # not within-class
    ("multiclass-r2-d3", "reverse_labels"),  # v(y) of the wrong class in eq. (4)
    ("multiclass-r2-d3", "sum_over_class"),  # eq. (5) without the division by the class count
]


@pytest.mark.parametrize("case,mutation", MUTATIONS)
def test_reference_catches_wrong_equations(computed, case, mutation):
    """The comparison is sensitive: a reference with one equation changed disagrees."""
    ours, args, _ = computed[case]
    np.testing.assert_allclose(ours, reference_logits(*args), rtol=RTOL, atol=ATOL)
    wrong = reference_logits(*args, mutation=mutation)
    assert not np.allclose(ours, wrong, rtol=RTOL, atol=ATOL)
    assert np.abs(ours - wrong).max() > 1e-3  # far outside float32 rounding, not a near miss


@pytest.mark.parametrize("case", ["binary-r2-d3", "multiclass-r2-d3"])
def test_training_path_loss_matches_the_reference(computed, case):
    """Pre-training and fine-tuning run the support and query branches in one call
    (``DENNetwork.logits``): the fine-tuning loss there is the mean cross-entropy of the
    reference's logits (sigmoid for eq. 3, softmax over the q_k of eq. 5)."""
    _, args, task = computed[case]
    model, n_classes = args[0], args[6]
    y_q = np.arange(len(args[3]), dtype=np.int32) % n_classes
    q = reference_logits(*args)
    if model.config.head == "binary":
        expected = np.mean(np.logaddexp(0.0, q) - y_q * q)
    else:
        expected = np.mean([np.log(np.exp(row - row.max()).sum()) + row.max() - row[y]
                            for row, y in zip(q, y_q)])
    kernel, missing = task.calibration_parameters()
    loss = model.calibration_gradients_fn(
        tf.constant(to_unit(args[3], task.keypoints)), tf.constant(y_q), tf.constant(task.unit_support),
        tf.constant(task.y_support), kernel, missing, tf.constant(task.tuples),
        tf.constant(n_classes, tf.int32), tf.constant(0.0), tf.constant(0.0))[0].numpy()
    np.testing.assert_allclose(loss, expected, rtol=RTOL, atol=ATOL)


def test_linear_evidence_is_zero_without_both_classes_and_clipped():
    """e(z) (``DENNetwork.linear_evidence``) matches its reference, is 0 where the support set
    holds one class only (no class means to compare), and is clipped to +-10 where the classes
    are far apart with no spread within them."""
    net = DEN(ModelConfig(**ARCH, head="binary", order=2, linear_evidence=True, seed=3)).network
    rng = np.random.default_rng(11)
    z_s, z_q = rng.uniform(size=(12, 4)), rng.uniform(size=(5, 4))
    y_s = np.array([0, 1] * 6, np.int32)
    ours = net.linear_evidence(tf.constant(z_q, tf.float32), tf.constant(z_s, tf.float32),
                               tf.constant(y_s)).numpy()
    np.testing.assert_allclose(ours, evidence_reference(z_q, z_s, y_s), rtol=RTOL, atol=ATOL)
    assert np.abs(ours).max() > 100 * ATOL
    one_class = net.linear_evidence(tf.constant(z_q, tf.float32), tf.constant(z_s, tf.float32),
                                    tf.constant(np.ones(12, np.int32))).numpy()
    assert np.all(one_class == 0.0)
    apart = np.where(y_s[:, None] == 1, 1.0, 0.0) * np.ones((1, 4))  # class 0 at 0, class 1 at 1
    clipped = net.linear_evidence(tf.constant([[1.0] * 4, [0.0] * 4]), tf.constant(apart, tf.float32),
                                  tf.constant(y_s)).numpy()
    np.testing.assert_allclose(clipped, [[10.0] * 4, [-10.0] * 4])  # 0.5 / 0.01 = 50 unclipped
