"""The task-independent blocks of DEN: distribution embedding and classifier (section 4).

Shapes used throughout:
    n      rows (support or query), d features, r dependency order,
    T      feature tuples (``den.model.tuples.feature_tuples``), shape (T, r),
    E      output size of h, S size of one tuple's embedding s^{t},
    P      width of phi, L number of classes of the task.

Binary head (eq. 2 and 3):
    s^t   = (mean_{y=0} h(z^t), mean_{y=1} h(z^t), mean y)           S = 2E + 1
    logit = psi( mean_t phi([z^t, s^t]) )
Multiclass head (eq. 4 and 5):
    s^t   = mean_i h([z_i^t, v(y_i)])                                S = E
    Phi~(z) = mean_t phi([z^t, s^t]);  q_k = Phi~(z) . mean_{i: y_i = k} Phi~(z_i)

Local embedding (``ModelConfig.local_bandwidths``, binary head; not in the paper):
    l^t(z) = per bandwidth b, with k_b(z^t, z_i^t) = exp(-|z^t - z_i^t|^2 / (2 b^2)):
             (log mean_{y_i=1} k_b - log mean_{y_i=0} k_b,  log mean_i k_b)     2B values
    logit = psi( mean_t phi([z^t, s^t, l^t(z)]) )
    s^t summarises the support set once; l^t reads it around each query row, so the
    classifier sees the class-conditional densities of every tuple where the query lies.

Tuple relevance (``ModelConfig.tuple_relevance``, with the local embedding; not in the paper):
    q^t   = per bandwidth b, mean_i (2 y_i - 1) r_i^t / 5 over the support rows, with
            r_i^t = clip(log mean_{j!=i, y_j=1} k_b(z_i^t, z_j^t) - log mean_{j!=i, y_j=0} k_b, +-5)
            the leave-one-out kernel log ratio of row i in tuple t's features          B values
    With ``ModelConfig.balanced_relevance`` the mean over rows weighs each class equally,
    q_b^t = sum_i w_i (2 y_i - 1) r_i^t / 5 with w_i = 1 / (2 m_{y_i}) (m_c support rows of
    class c), so a rare class's rows count as much as the common class's.
    phi's first layer reads [z^t, s^t, q^t, l^t(z)]: s^t only holds class means, so it cannot
    tell a tuple whose neighbourhoods separate the classes (an interaction) from one that
    carries nothing; q^t can, and phi (and gated pooling's gate) can weigh tuples by it.

Kernel pseudo-rows (``ModelConfig.kernel_pseudo_rows`` = a > 0; not in the paper): the log ratios
of the local embedding and of tuple relevance become
    log (S_1 + a pi_1) - log (S_0 + a pi_0) - log (pi_1 / pi_0)
with S_c the kernel sum over class c's support rows and pi_c the class rates, as if a rows at
the class rates lay at every point: the plain ratio where many support rows lie near, 0 where
none does (the plain ratio there is the nearest row's class at full strength).

Linear evidence (``ModelConfig.linear_evidence``, binary head; not in the paper):
    e_j(z) = clip((z_j - (mu0_j + mu1_j) / 2) (mu1_j - mu0_j) / (v_j + 0.01), +-10) per feature,
    with mu_c the support rows' class means and v_j their pooled within-class variance (0 when
    a class has no support row); phi's first layer also reads the tuple's r terms e^t(z).

Feature count (``ModelConfig.feature_count_input``, binary head; not in the paper): psi reads
[Phi~, log d], so the evidence of d features, averaged over tuples, can be scaled back up.

Tuple attention (``ModelConfig.tuple_attention``; not in the paper): the mean over tuples
becomes a weighted mean, w = softmax_t(u . relu(s^t W_s + b)), so a task's informative tuples
can outweigh the rest; u starts at 0 (the mean).

Gated pooling (``ModelConfig.gated_pooling``; not in the paper): each unit j of phi's last
hidden layer a_j^t pools over tuples as
    g_j mean_t a_j^t + (1 - g_j) (1 / beta_j) log mean_t exp(beta_j a_j^t),
the second term a soft maximum with learnt sharpness beta_j = softplus(rho_j) > 0 (starting at
``GATED_POOLING_BETA0``), and the gate g = sigmoid(mean_t relu(s^t W_s + b) G + c) read from
the support set's tuple embeddings, so one model can pool tasks whose evidence adds up over
many tuples by the mean and tasks that hinge on a few interactions nearer the maximum.

Mean pooling over tuples (appendix B) keeps the scale independent of d. phi's first layer
acts on [z^t, s^t]; s^t is the same for every query row, so its part (s^t W_s + b) is
computed once per tuple, not once per row. phi's last layer is linear and commutes with
the mean, so it is applied after pooling. Both are exact rewrites of the paper's model.
"""

from __future__ import annotations

import math

import numpy as np

from den._tf import tf
from den.model.config import ModelConfig

# Score given to a class that has no row in the support set (multiclass head).
ABSENT_CLASS_LOGIT = -1e9
# Starting sharpness beta of gated pooling's log-mean-exp: between the mean (beta -> 0) and the
# maximum (beta -> inf) over tuples; started near 0 it stays there (docs/benchmarks/corpus-dev.md).
GATED_POOLING_BETA0 = 3.0


def _glorot(rng: np.random.Generator, n_in: int, n_out: int) -> np.ndarray:
    limit = np.sqrt(6.0 / (n_in + n_out))
    return rng.uniform(-limit, limit, size=(n_in, n_out)).astype(np.float32)


class _Dense(tf.Module):
    """y = x W + b on the last axis, optionally ReLU (2-d inputs keep TF's fused kernels)."""

    def __init__(self, rng, n_in, n_out, relu, name):
        super().__init__(name=name)
        self.kernel = tf.Variable(_glorot(rng, n_in, n_out), name=f"{name}_kernel")
        self.bias = tf.Variable(np.zeros(n_out, np.float32), name=f"{name}_bias")
        self.relu = relu

    def __call__(self, x):
        shape = tf.shape(x)
        flat = tf.reshape(x, [-1, self.kernel.shape[0]])
        out = tf.nn.bias_add(tf.matmul(flat, self.kernel), self.bias)
        if self.relu:
            out = tf.nn.relu(out)
        return tf.reshape(out, tf.concat([shape[:-1], [self.kernel.shape[1]]], axis=0))


class DENNetwork(tf.Module):
    """Embedding block h (and v) plus classifier block phi, psi; shared by all tasks."""

    def __init__(self, config: ModelConfig):
        super().__init__(name="den")
        self.config = config
        rng = np.random.default_rng(config.seed)
        r, e = config.order, config.embedding_dim
        binary = config.head == "binary"
        self.tuple_dim = 2 * e + 1 if binary else e
        with self.name_scope:
            # h: first layer split into its z part and (multiclass) its v(y) part.
            h0 = config.h_units[0]
            self.h_z = tf.Variable(_glorot(rng, r, h0), name="h_z")
            self.h_b = tf.Variable(np.zeros(h0, np.float32), name="h_b")
            if not binary:
                self.label_encoding = tf.Variable(
                    rng.normal(0.0, 1.0, (config.max_classes, config.label_dim)).astype(np.float32),
                    name="label_encoding")
                self.h_v = tf.Variable(_glorot(rng, config.label_dim, h0), name="h_v")
            sizes = list(config.h_units)
            self.h_layers = [_Dense(rng, a, b, True, f"h{i + 1}") for i, (a, b) in
                             enumerate(zip(sizes[:-1], sizes[1:]))]
            self.h_out = _Dense(rng, sizes[-1], e, False, "h_out")
            # phi: first layer split into its z part (per row) and s part (per tuple).
            p = list(config.phi_units)
            self.phi_z = tf.Variable(_glorot(rng, r, p[0]), name="phi_z")
            self.phi_s = tf.Variable(_glorot(rng, self.tuple_dim, p[0]), name="phi_s")
            self.phi_b = tf.Variable(np.zeros(p[0], np.float32), name="phi_b")
            if config.tuple_attention:  # zeros: uniform weights, the paper's mean pooling at start
                self.attention = tf.Variable(np.zeros(p[0], np.float32), name="attention")
            if config.local_bandwidths:
                self.phi_l = tf.Variable(_glorot(rng, 2 * len(config.local_bandwidths), p[0]), name="phi_l")
            if config.linear_evidence:
                self.phi_e = tf.Variable(_glorot(rng, r, p[0]), name="phi_e")
            if config.tuple_relevance:
                self.phi_q = tf.Variable(_glorot(rng, len(config.local_bandwidths), p[0]), name="phi_q")
            self.phi_layers = [_Dense(rng, a, b, True, f"phi{i + 1}") for i, (a, b) in
                               enumerate(zip(p[:-1], p[1:]))]
            self.phi_out = _Dense(rng, p[-1], p[-1], False, "phi_out")
            if config.gated_pooling:  # beta_j = softplus(rho_j) starts at GATED_POOLING_BETA0
                rho = np.log(np.expm1(GATED_POOLING_BETA0))
                self.pool_rho = tf.Variable(np.full(p[-1], rho, np.float32), name="pool_rho")
                self.gate = _Dense(rng, p[0], p[-1], False, "gate")
            if binary:  # psi only exists for the binary head (eq. 3)
                q = [p[-1] + int(config.feature_count_input)] + list(config.psi_units)
                self.psi_layers = [_Dense(rng, a, b, True, f"psi{i}") for i, (a, b) in
                                   enumerate(zip(q[:-1], q[1:]))]
                self.psi_out = _Dense(rng, q[-1], 1, False, "psi_out")

    # -- embedding block ---------------------------------------------------------------
    def _h(self, z_tuples, label_part=None):
        """h on (n, T, r) tuples (plus an (n, 1, H0) label term) -> (n, T, E)."""
        n, t = tf.shape(z_tuples)[0], tf.shape(z_tuples)[1]
        a = tf.reshape(tf.matmul(tf.reshape(z_tuples, [-1, self.config.order]), self.h_z),
                       [n, t, -1]) + self.h_b
        if label_part is not None:
            a = a + label_part
        a = tf.nn.relu(a)
        for layer in self.h_layers:
            a = layer(a)
        return self.h_out(a)

    def embedding(self, z_support, y_support, tuples):
        """Distribution embedding s of the support set.

        Args:
            z_support: (n, d) float32 calibrated support features.
            y_support: (n,) int32 labels in 0..L-1.
            tuples: (T, r) int32 feature tuples.

        Returns:
            (T, S) float32, one embedding s^t per tuple.
        """
        z_t = tf.gather(z_support, tuples, axis=1)  # (n, T, r)
        if self.config.head == "binary":
            hz = self._h(z_t)  # (n, T, E)
            y1 = tf.cast(y_support, tf.float32)
            y0 = 1.0 - y1
            s1 = tf.math.divide_no_nan(tf.tensordot(y1, hz, axes=[[0], [0]]), tf.reduce_sum(y1))
            s0 = tf.math.divide_no_nan(tf.tensordot(y0, hz, axes=[[0], [0]]), tf.reduce_sum(y0))
            ybar = tf.fill([tf.shape(tuples)[0], 1], tf.reduce_mean(y1))
            return tf.concat([s0, s1, ybar], axis=1)
        v = tf.gather(self.label_encoding, y_support)  # (n, m)
        label_part = tf.matmul(v, self.h_v)[:, None, :]  # (n, 1, H0)
        return tf.reduce_mean(self._h(z_t, label_part), axis=0)

    # -- classification block -----------------------------------------------------------
    def tuple_bias(self, s):
        """The s-part of phi's first layer, once per tuple: (T, S) -> (T, P0)."""
        return tf.matmul(s, self.phi_s) + self.phi_b

    def tuple_relevance(self, z_support, y_support, tuples):
        """Leave-one-out relevance of each tuple on the support set (module docstring).

        Per bandwidth b, every support row i is scored by the kernel classifier of the other
        support rows in the tuple's features, r_i^t = log mean_{j!=i, y_j=1} k_b - log
        mean_{j!=i, y_j=0} k_b (clipped to [-5, 5]); the relevance is the mean signed margin
        q_b^t = mean_i (2 y_i - 1) r_i^t / 5, in [-1, 1]: near 0 for a tuple that says nothing
        about the labels, positive where the tuple's neighbourhoods separate the classes.
        With ``config.balanced_relevance`` the mean weighs row i by 1 / (2 m_{y_i}) instead of
        1 / m (m_c: support rows of class c), each class's rows summing to one half.

        Args:
            z_support: (m, d) calibrated support features; y_support: (m,) int32 labels 0/1;
            tuples: (T, r).

        Returns:
            (T, B) float32.
        """
        m = tf.shape(z_support)[0]
        multisets, index = _tuple_multisets(tuples)
        dist = _tuple_sq_distances(z_support, z_support, multisets)  # (m, m, U)
        is_self = tf.eye(m, dtype=tf.bool)[:, :, None]  # (m, m, 1)
        labels = _class_columns(y_support)  # (m, 2)
        counts = tf.reduce_sum(labels, axis=0)[None, :] - labels  # (m, 2): the others of each class
        sign = 2.0 * labels[:, 1] - 1.0
        if self.config.balanced_relevance:  # row i weighs 1 / (2 m_{y_i}): each class half
            per_class = tf.maximum(2.0 * tf.reduce_sum(labels, axis=0), 1.0)  # (2,)
            signed = sign * tf.reduce_sum(labels / per_class[None, :], axis=1)  # (m,)
            scale = 5.0
        else:  # the mean over rows, in the arithmetic the models pre-trained with it used
            signed, scale = sign, 5.0 * tf.cast(m, tf.float32)
        class_rows = tf.transpose(labels)[None]  # (1, 2, m)
        out = []
        for b in self.config.local_bandwidths:
            # a row never scores itself: its own log kernel is -1e30, so the scale of the others
            # (top) comes from the nearest other row, however far
            logk = tf.where(is_self, -1e30, -dist / (2.0 * b * b))
            top = tf.stop_gradient(tf.reduce_max(logk, axis=1, keepdims=True))
            k = tf.exp(logk - top)  # (m, m, U), 0 on the diagonal
            sums = tf.matmul(class_rows, k)  # (m, 2, U): each class's kernel sums
            if self.config.kernel_pseudo_rows:
                ratio = _shrunk_log_ratio(sums, top, counts[:, :, None], self.config.kernel_pseudo_rows)
            else:
                logs = tf.math.log(sums + 1e-30) - tf.math.log(tf.maximum(counts, 1.0))[:, :, None]
                log_0, log_1 = tf.unstack(logs, axis=1)  # (not slices: their gradients are full-size)
                ratio = log_1 - log_0
            ratio = tf.clip_by_value(ratio, -5.0, 5.0)  # (m, U)
            ratio = tf.where(tf.reduce_min(counts, axis=1, keepdims=True) > 0, ratio, 0.0)
            out.append(tf.tensordot(signed, ratio, axes=[[0], [0]]) / scale)
        return tf.gather(tf.stack(out, axis=1), index)  # (U, B) -> (T, B)

    def local_features(self, z, z_support, y_support, tuples):
        """The local embedding l^t(z) of query rows (module docstring).

        Args:
            z: (n, d) calibrated query features; z_support: (m, d) calibrated support
                features; y_support: (m,) int32 labels 0/1; tuples: (T, r).

        Returns:
            (n, T, 2B) float32: per bandwidth the log ratio of the class-1 and class-0 kernel
            densities (0 when a class has no support row) and the log of the overall one.
        """
        m = tf.shape(z_support)[0]
        multisets, index = _tuple_multisets(tuples)
        dist = _tuple_sq_distances(z, z_support, multisets)  # (n, m, U)
        labels = _class_columns(y_support)  # (m, 2)
        counts = tf.reduce_sum(labels, axis=0)  # (2,)
        class_rows = tf.transpose(labels)[None]  # (1, 2, m)
        out = []
        for b in self.config.local_bandwidths:
            logk = -dist / (2.0 * b * b)
            top = tf.stop_gradient(tf.reduce_max(logk, axis=1, keepdims=True))
            k = tf.exp(logk - top)
            sums = tf.matmul(class_rows, k)  # (n, 2, U): class-0 and class-1 kernel sums
            if self.config.kernel_pseudo_rows:
                ratio = _shrunk_log_ratio(sums, top[:, 0, None, :], counts[None, :, None],
                                          self.config.kernel_pseudo_rows)
            else:
                logs = tf.math.log(sums + 1e-30) - tf.math.log(tf.maximum(counts, 1.0))[None, :, None]
                log_0, log_1 = tf.unstack(logs, axis=1)
                ratio = log_1 - log_0
            ratio = tf.where(tf.reduce_min(counts) > 0, ratio, 0.0)
            sums_0, sums_1 = tf.unstack(sums, axis=1)
            level = tf.math.log(sums_0 + sums_1 + 1e-30) + top[:, 0, :] \
                - tf.math.log(tf.cast(m, tf.float32))
            out += [tf.clip_by_value(ratio, -10.0, 10.0), tf.maximum(level, -10.0)]
        return tf.gather(tf.stack(out, axis=2), index, axis=1)  # (n, U, 2B) -> (n, T, 2B)

    def linear_evidence(self, z, z_support, y_support):
        """Each feature's Gaussian naive-Bayes term at the query rows (module docstring).

        Args:
            z: (n, d) calibrated query features; z_support: (m, d) calibrated support
                features; y_support: (m,) int32 labels 0/1.

        Returns:
            (n, d) float32 e_j(z), 0 when a class has no support row.
        """
        labels = _class_columns(y_support)  # (m, 2)
        counts = tf.reduce_sum(labels, axis=0)  # (2,)
        means = tf.matmul(labels, z_support, transpose_a=True) / tf.maximum(counts, 1.0)[:, None]  # (2, d)
        spread = z_support - tf.matmul(labels, means)  # (m, d): each row against its class mean
        variance = tf.reduce_mean(spread * spread, axis=0)  # (d,)
        term = (z - 0.5 * (means[0] + means[1])) * (means[1] - means[0]) / (variance + 0.01)
        return tf.where(tf.reduce_min(counts) > 0, tf.clip_by_value(term, -10.0, 10.0), 0.0)

    def pooled(self, z, bias, tuples, local=None, evidence=None):
        """Phi~(z, s) = mean over tuples of phi([z^t, s^t]) (with the local embedding:
        phi([z^t, s^t, l^t(z)]), with linear evidence e^t(z) beside them; with tuple attention
        or gated pooling, their pooling in place of the mean, module docstring).

        Args:
            z: (n, d) calibrated features.
            bias: (T, P0) from ``tuple_bias``.
            tuples: (T, r).
            local: (n, T, 2B) from ``local_features``, or None.
            evidence: (n, d) from ``linear_evidence``, or None.

        Returns:
            (n, P) float32.
        """
        n, t = tf.shape(z)[0], tf.shape(tuples)[0]
        z_t = tf.reshape(tf.gather(z, tuples, axis=1), [-1, self.config.order])  # (n*T, r)
        a = tf.reshape(tf.matmul(z_t, self.phi_z), [n, t, -1]) + bias
        if evidence is not None:
            e_t = tf.reshape(tf.gather(evidence, tuples, axis=1), [-1, self.config.order])  # (n*T, r)
            a = a + tf.reshape(tf.matmul(e_t, self.phi_e), [n, t, -1])
        if local is not None:
            a = a + tf.reshape(tf.matmul(tf.reshape(local, [n * t, -1]), self.phi_l), [n, t, -1])
        a = tf.reshape(tf.nn.relu(a), [n * t, -1])
        for layer in self.phi_layers:
            a = layer(a)
        a = tf.reshape(a, [n, t, -1])
        if self.config.tuple_attention:  # weights of the tuples from their embeddings s^t alone
            weights = tf.nn.softmax(tf.linalg.matvec(tf.nn.relu(bias), self.attention))  # (T,)
            return self.phi_out(tf.tensordot(a, weights, axes=[[1], [0]]))
        mean = tf.reduce_mean(a, axis=1)  # (n, P)
        if self.config.gated_pooling:
            beta = tf.nn.softplus(self.pool_rho)  # (P,)
            log_t = tf.math.log(tf.cast(t, tf.float32))
            soft_max = (tf.reduce_logsumexp(a * beta, axis=1) - log_t) / beta  # (n, P)
            gate = tf.sigmoid(self.gate(tf.reduce_mean(tf.nn.relu(bias), axis=0, keepdims=True)))  # (1, P)
            return self.phi_out(gate * mean + (1.0 - gate) * soft_max)
        return self.phi_out(mean)

    def context(self, z_support, y_support, tuples, n_classes):
        """Everything the query rows need from the support set, computed once.

        Returns:
            dict with "bias" (T, P0); for the binary head "z_support" (n, d) and "y_support"
            (n,) (the local embedding reads them); for the multiclass head "prototypes"
            (L, P) and "present" (L,) bool (classes with at least one support row).
        """
        s = self.embedding(z_support, y_support, tuples)
        bias = self.tuple_bias(s)
        if self.config.tuple_relevance:
            bias = bias + tf.matmul(self.tuple_relevance(z_support, y_support, tuples), self.phi_q)
        if self.config.head == "binary":
            return {"bias": bias, "z_support": z_support, "y_support": y_support}
        support_embed = self.pooled(z_support, bias, tuples)  # (n, P)
        onehot = tf.one_hot(y_support, n_classes, dtype=tf.float32)  # (n, L)
        counts = tf.reduce_sum(onehot, axis=0)
        prototypes = tf.math.divide_no_nan(tf.matmul(onehot, support_embed, transpose_a=True),
                                           counts[:, None])
        return {"bias": bias, "prototypes": prototypes, "present": counts > 0}

    def query_logits(self, z_query, context, tuples):
        """Logits of query rows given a support ``context``.

        Returns:
            binary head: (n,) logit of class 1; multiclass head: (n, L) class scores q_k.
        """
        local = None
        if self.config.local_bandwidths:
            local = self.local_features(z_query, context["z_support"], context["y_support"], tuples)
        evidence = None
        if self.config.linear_evidence:
            evidence = self.linear_evidence(z_query, context["z_support"], context["y_support"])
        pooled = self.pooled(z_query, context["bias"], tuples, local, evidence)
        if self.config.head == "binary":
            a = pooled
            if self.config.feature_count_input:  # log d beside the pooled representation
                log_d = tf.math.log(tf.cast(tf.shape(z_query)[1], tf.float32))
                a = tf.concat([a, tf.fill([tf.shape(a)[0], 1], log_d)], axis=1)
            for layer in self.psi_layers:
                a = layer(a)
            return self.psi_out(a)[:, 0]
        scores = tf.matmul(pooled, context["prototypes"], transpose_b=True)
        return tf.where(context["present"][None, :], scores, ABSENT_CLASS_LOGIT)

    def logits(self, z_query, z_support, y_support, tuples, n_classes):
        """Support embedding then query logits in one call (training)."""
        return self.query_logits(z_query, self.context(z_support, y_support, tuples, n_classes),
                                 tuples)

    # -- weights ------------------------------------------------------------------------
    def weights_dict(self) -> dict[str, np.ndarray]:
        """All weights by their variable path (stable across builds of one config)."""
        return {_var_key(v): v.numpy() for v in self.variables}

    def set_weights_dict(self, weights: dict[str, np.ndarray]) -> None:
        own = {_var_key(v): v for v in self.variables}
        missing, extra = sorted(set(own) - set(weights)), sorted(set(weights) - set(own))
        if missing or extra:
            raise ValueError(f"weights do not fit this DEN config: missing {missing}, unexpected {extra}")
        for key, var in own.items():
            if tuple(var.shape) != tuple(weights[key].shape):
                raise ValueError(f"weight {key}: expected shape {tuple(var.shape)}, "
                                 f"got {tuple(weights[key].shape)}")
            var.assign(weights[key])


def _class_columns(y_support):
    """(m,) int labels 0/1 -> (m, 2) float32 indicator columns of class 0 and class 1."""
    y1 = tf.cast(y_support, tf.float32)
    return tf.stack([1.0 - y1, y1], axis=1)


def _shrunk_log_ratio(sums, top, counts, pseudo_rows):
    """Class-1 against class-0 kernel log density ratio, shrunk toward 0 where the kernel mass
    is small (``ModelConfig.kernel_pseudo_rows``).

    With S_c the kernel sum over the class-c support rows and pi_c = m_c / (m_0 + m_1) the
    class rates, the ratio is logit of (S_1 + a pi_1) / (S_0 + S_1 + a) minus logit pi_1, i.e.
    log (S_1 + a pi_1) - log (S_0 + a pi_0) - log (pi_1 / pi_0), with a = ``pseudo_rows``: the
    plain log (S_1 / m_1) - log (S_0 / m_0) where the kernel mass S_0 + S_1 is large against a,
    and 0 where no support row lies near. Computed in logs, as the sums are stored relative to
    the largest kernel value of their row.

    Args:
        sums: (N, 2, T) kernel sums of each class divided by exp(top).
        top: (N, 1, T) or broadcastable: the log of that divisor.
        counts: broadcastable to (N, 2, T): m_c, the support rows of each class (a row's own
            left out, for relevance).
        pseudo_rows: a > 0.

    Returns:
        (N, T) float32 log ratios (meaningless where a class has no row; callers mask them).
    """
    counts = tf.maximum(counts, 1.0)
    log_rate = tf.math.log(counts) - tf.math.log(tf.reduce_sum(counts, axis=1, keepdims=True))  # log pi_c
    log_mass = tf.math.log(sums + 1e-30) + top  # log S_c
    shrunk = tf.reduce_logsumexp(tf.stack([log_mass, math.log(pseudo_rows) + log_rate
                                           + tf.zeros_like(log_mass)]), axis=0)  # log(S_c + a pi_c)
    return shrunk[:, 1] - shrunk[:, 0] - (log_rate[:, 1] - log_rate[:, 0])


def _tuple_multisets(tuples):
    """The distinct feature multisets of ``tuples`` (T, r): (U, r) sorted multisets, U <= T,
    and the (T,) index of each tuple's multiset. A squared distance over a tuple's features
    does not depend on their order, so the kernel work of the local embedding and of tuple
    relevance is done once per multiset and gathered back to the tuples: exact, and with
    all r! orders of a few features among the tuples (every narrow task) several times less
    work."""
    multisets, index = tf.raw_ops.UniqueV2(x=tf.sort(tuples, axis=1), axis=tf.constant([0], tf.int64),
                                           out_idx=tf.int32)
    return multisets, index


def _tuple_sq_distances(a, b, tuples):
    """Squared distances between the rows of ``a`` (n, d) and ``b`` (m, d) over each tuple's
    features (a repeated feature counts again): (n, m, T). One matmul of the (n*m, d) squared
    differences with the (d, T) incidence counts, not a gathered (n, m, T, r) tensor; the local
    embedding (query against support rows) and tuple relevance (support against itself) share it."""
    n, m, d = tf.shape(a)[0], tf.shape(b)[0], tf.shape(a)[1]
    diff = tf.square(a[:, None, :] - b[None, :, :])  # (n, m, d)
    incidence = tf.transpose(tf.reduce_sum(tf.one_hot(tuples, d, dtype=tf.float32), axis=1))  # (d, T)
    return tf.reshape(tf.matmul(tf.reshape(diff, [n * m, d]), incidence), [n, m, -1])


def _var_key(var) -> str:
    return var.name.split(":")[0]
