"""Episodically trained baselines that classify the query with the support set.

Shapes: xs (S, D) standardised support rows, ys (S, K) one-hot support labels, xq (Q, D)
query rows; ``scores`` returns (Q, K). Architectures follow appendix B of the paper.

- Matching Net (Vinyals et al. 2016): f, g 1-hidden-layer 64-unit DNNs with 64-d outputs;
  attention kernel = softmax over cosine similarities; p(y|x) = sum_i a(x, x_i) y_i.
- Proto Net (Snell et al. 2017): f 1-hidden-layer 32-unit DNN, 32-d; class prototypes;
  scores = -squared Euclidean distance.
- TADAM (Oreshkin et al. 2018): Proto Net whose embedding is FiLM-conditioned on the task
  representation (the mean prototype): gamma and beta nets (1 hidden layer of 32, 64 values
  each: scale and shift of the hidden and the output layer), post-multipliers gamma0, beta0
  with ridge weight 0.01, learned metric scale alpha.
- PMN (Wang et al. 2018, prototype matching with full context embeddings): f 3-hidden-layer
  32-unit DNN; support embeddings through a bidirectional LSTM (g_i = e_i + forward +
  backward), the query through an attention LSTM of K = 8 process steps; prototypes of the
  g_i, Euclidean distance.
- Relation Net (Sung et al. 2018): f 1-hidden-layer 32-unit DNN, 32-d; relation module g
  2-hidden-layer 16-unit DNN on [f(x), prototype] -> a score in (0, 1); mean squared error
  to the one-hot label, as in the original.
- CNP (Garnelo et al. 2018): h 1-hidden-layer 64-unit DNN on [x, y] -> 64-d, averaged into
  r; g 2-hidden-layer 8-unit DNN on [x, r] -> class logits.
- Iwata & Kumagai (2020): any number of features without repetition: each feature's
  representation v_j is a Deep Set over the support's (x_nj, y_n); each row's representation
  is a Deep Set over its features' (x_nj, v_j); classes by prototypes in that space.
"""

from __future__ import annotations

import numpy as np

from den.baselines.meta import MetaLearner, apply_dense, dense_params, glorot
from den.baselines.registry import register


def _tf():
    from den._tf import tf

    return tf


def prototypes(embedding_support, ys):
    """(S, E) embeddings and (S, K) one-hot labels -> (K, E) class means (zero if absent)."""
    tf = _tf()
    counts = tf.reduce_sum(ys, axis=0)[:, None]
    return tf.matmul(ys, embedding_support, transpose_a=True) / tf.maximum(counts, 1.0)


def neg_sq_distance(a, b):
    """(Q, E), (K, E) -> (Q, K) minus squared Euclidean distances."""
    tf = _tf()
    return -(tf.reduce_sum(a * a, 1)[:, None] - 2.0 * tf.matmul(a, b, transpose_b=True)
             + tf.reduce_sum(b * b, 1)[None, :])


class MatchingNet(MetaLearner):
    name = "matching_net"

    def init_params(self, rng):
        d = self.config.n_inputs
        return dense_params(rng, [d, 64, 64]) + dense_params(rng, [d, 64, 64])

    def scores(self, xs, ys, xq):
        tf = _tf()
        f, g = self.params[:4], self.params[4:]
        query = tf.math.l2_normalize(apply_dense(f, xq), axis=1)
        support = tf.math.l2_normalize(apply_dense(g, xs), axis=1)
        attention = tf.nn.softmax(tf.matmul(query, support, transpose_b=True), axis=1)  # (Q, S)
        return tf.math.log(tf.matmul(attention, ys) + 1e-6)


class ProtoNet(MetaLearner):
    name = "proto_net"

    def init_params(self, rng):
        return dense_params(rng, [self.config.n_inputs, 32, 32])

    def scores(self, xs, ys, xq):
        return neg_sq_distance(apply_dense(self.params, xq), prototypes(apply_dense(self.params, xs), ys))


class TADAM(MetaLearner):
    name = "tadam"

    def init_params(self, rng):
        d = self.config.n_inputs
        return (dense_params(rng, [d, 32, 32])          # f: 0-3
                + dense_params(rng, [32, 32, 64])      # gamma net: 4-7
                + dense_params(rng, [32, 32, 64])      # beta net: 8-11
                + [np.zeros((), np.float32), np.zeros((), np.float32),  # gamma0, beta0: 12, 13
                   np.ones((), np.float32)])           # metric scale alpha: 14

    def _embed(self, x, gamma, beta):
        tf = _tf()
        w0, b0, w1, b1 = self.params[:4]
        hidden = tf.nn.relu((tf.matmul(x, w0) + b0) * gamma[:32] + beta[:32])
        return (tf.matmul(hidden, w1) + b1) * gamma[32:] + beta[32:]

    def scores(self, xs, ys, xq):
        tf = _tf()
        ones, zeros = tf.ones(64), tf.zeros(64)
        task = tf.reduce_mean(prototypes(self._embed(xs, ones, zeros), ys), axis=0, keepdims=True)
        gamma0, beta0, alpha = self.params[12], self.params[13], self.params[14]
        gamma = 1.0 + gamma0 * apply_dense(self.params[4:8], task)[0]
        beta = beta0 * apply_dense(self.params[8:12], task)[0]
        centres = prototypes(self._embed(xs, gamma, beta), ys)
        return alpha * neg_sq_distance(self._embed(xq, gamma, beta), centres)

    def regularization(self):
        return 0.01 * (self.params[12] ** 2 + self.params[13] ** 2)


def lstm_params(rng, n_in: int, units: int) -> list[np.ndarray]:
    bias = np.zeros(4 * units, np.float32)
    bias[units:2 * units] = 1.0  # forget gate
    return [np.concatenate([glorot(rng, n_in, 4 * units), glorot(rng, units, 4 * units)]), bias]


def lstm_cell(params, x, h, c):
    """One LSTM step for a batch: x (B, n_in), h, c (B, units) -> new (h, c)."""
    tf = _tf()
    gates = tf.matmul(tf.concat([x, h], axis=1), params[0]) + params[1]
    i, f, g, o = tf.split(gates, 4, axis=1)
    c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
    return tf.sigmoid(o) * tf.tanh(c), c


def lstm_sequence(params, sequence, units: int):
    """Run an LSTM over (S, n_in) rows in order; returns (S, units) hidden states."""
    tf = _tf()

    def step(state, x):
        h, c = lstm_cell(params, x[None, :], state[0], state[1])
        return h, c

    zero = tf.zeros((1, units))
    hs, _ = tf.scan(step, sequence, initializer=(zero, zero))
    return hs[:, 0, :]


class PMN(MetaLearner):
    name = "pmn"
    units = 32
    process_steps = 8

    def init_params(self, rng):
        u = self.units
        return (dense_params(rng, [self.config.n_inputs, 32, 32, 32, 32])   # f: 0-7
                + lstm_params(rng, 32, u) + lstm_params(rng, 32, u)         # forward, backward: 8-11
                + lstm_params(rng, 64, u))                                  # attention LSTM: 12-13

    def scores(self, xs, ys, xq):
        tf = _tf()
        u = self.units
        es, eq = apply_dense(self.params[:8], xs), apply_dense(self.params[:8], xq)
        forward = lstm_sequence(self.params[8:10], es, u)
        backward = tf.reverse(lstm_sequence(self.params[10:12], tf.reverse(es, [0]), u), [0])
        g = es + forward + backward                                    # (S, 32)
        h, c, read = tf.zeros_like(eq), tf.zeros_like(eq), tf.zeros_like(eq)
        for _ in range(self.process_steps):
            h, c = lstm_cell(self.params[12:14], tf.concat([eq, read], axis=1), h, c)
            h = h + eq
            attention = tf.nn.softmax(tf.matmul(h, g, transpose_b=True), axis=1)
            read = tf.matmul(attention, g)
        return neg_sq_distance(h, prototypes(g, ys))


class RelationNet(MetaLearner):
    name = "relation_net"

    def init_params(self, rng):
        return dense_params(rng, [self.config.n_inputs, 32, 32]) + dense_params(rng, [64, 16, 16, 1])

    def scores(self, xs, ys, xq):
        """(Q, K) relation scores in (0, 1)."""
        tf = _tf()
        f, g = self.params[:4], self.params[4:]
        eq = apply_dense(f, xq)
        centres = prototypes(apply_dense(f, xs), ys)
        q, k = tf.shape(eq)[0], tf.shape(centres)[0]
        pairs = tf.concat([tf.repeat(eq[:, None, :], k, axis=1), tf.repeat(centres[None], q, axis=0)], axis=2)
        return tf.reshape(tf.sigmoid(apply_dense(g, tf.reshape(pairs, (-1, 64)))), (q, k))

    def episode_loss(self, xs, ys, xq, yq):
        tf = _tf()
        present = tf.cast(tf.reduce_max(ys, axis=0) > 0, tf.float32)[None, :]
        return tf.reduce_sum(present * (self.scores(xs, ys, xq) - yq) ** 2) / tf.maximum(
            tf.reduce_sum(present) * tf.cast(tf.shape(yq)[0], tf.float32), 1.0)

    def class_probabilities(self, xs, ys, xq):
        tf = _tf()
        present = tf.cast(tf.reduce_max(ys, axis=0) > 0, tf.float32)[None, :]
        relation = self.scores(xs, ys, xq) * present + 1e-6 * present
        return relation / tf.reduce_sum(relation, axis=1, keepdims=True)


class CNP(MetaLearner):
    name = "cnp"

    def init_params(self, rng):
        d, k = self.config.n_inputs, self.config.n_classes
        return dense_params(rng, [d + k, 64, 64]) + dense_params(rng, [d + 64, 8, 8, k])

    def scores(self, xs, ys, xq):
        tf = _tf()
        r = tf.reduce_mean(apply_dense(self.params[:4], tf.concat([xs, ys], axis=1)), axis=0, keepdims=True)
        return apply_dense(self.params[4:], tf.concat([xq, tf.repeat(r, tf.shape(xq)[0], axis=0)], axis=1))


class IwataKumagai(MetaLearner):
    name = "iwata"
    fixed_length = False
    hidden = 32

    def init_params(self, rng):
        h, k = self.hidden, self.config.n_classes
        return dense_params(rng, [1 + k, h, h]) + dense_params(rng, [1 + h, h, h])

    def _rows(self, x, features):
        """(N, d) values and (d, H) feature representations -> (N, H) row representations."""
        tf = _tf()
        n, d = tf.shape(x)[0], tf.shape(x)[1]
        pairs = tf.concat([x[:, :, None], tf.repeat(features[None], n, axis=0)], axis=2)
        encoded = apply_dense(self.params[4:], tf.reshape(pairs, (-1, 1 + self.hidden)))
        return tf.reduce_mean(tf.reshape(encoded, (n, d, self.hidden)), axis=1)

    def scores(self, xs, ys, xq):
        tf = _tf()
        s, d, k = tf.shape(xs)[0], tf.shape(xs)[1], self.config.n_classes
        cells = tf.concat([xs[:, :, None], tf.repeat(ys[:, None, :], d, axis=1)], axis=2)  # (S, d, 1+K)
        encoded = apply_dense(self.params[:4], tf.reshape(cells, (-1, 1 + k)))
        features = tf.reduce_mean(tf.reshape(encoded, (s, d, self.hidden)), axis=0)        # (d, H)
        return neg_sq_distance(self._rows(xq, features), prototypes(self._rows(xs, features), ys))


METHODS = register(MatchingNet, ProtoNet, TADAM, PMN, RelationNet, CNP, IwataKumagai)
