"""Optimisation-based baselines: MAML, BMAML and T-Net (appendix B of the paper).

Each is meta-trained with an inner loop on an episode's support batch (``inner_steps``
full-batch steps of size ``inner_lr``) and an outer loss on its query batch, averaged over
``meta_batch`` episodes and minimised with Adam at ``outer_lr``. At evaluation the last
layer is fine-tuned on the support set for ``finetune_epochs`` epochs (mini-batches of
``finetune_batch``, SGD at ``finetune_lr``), as the paper does, then the query is predicted.

- MAML (Finn et al. 2017): a 4-hidden-layer 64-unit ReLU DNN; the inner loop adapts every
  layer (second-order gradients).
- BMAML (Yoon et al. 2018): ``particles`` copies of the same DNN; the inner loop is a Stein
  variational gradient step over the particles (RBF kernel, median bandwidth) and the
  outer loss the negative log-likelihood of the particles' averaged prediction on the query
  batch (the paper's chaser loss is not used).
- T-Net (Lee and Choi 2018): 4 layers of a 32-unit W (adapted in the inner loop) followed
  by a 32-unit T (meta-learned only, initialised to the identity); the last T maps to the
  classes.

Shapes: x (N, D) standardised rows, y (N, K) one-hot labels, ``present`` (K,) the classes of
the support set; logits (N, K) (BMAML: (M, N, K) for M particles).
"""

from __future__ import annotations

import abc

import numpy as np

from den.baselines.meta import MetaLearner, apply_dense, dense_params, glorot, one_hot
from den.baselines.registry import register


def masked_cross_entropy(logits, y, present):
    """Mean softmax cross-entropy over rows whose class is in ``present``; other classes'
    logits are masked out. logits (..., N, K), y (N, K), present (K,) bool."""
    from den._tf import tf

    logits = tf.where(present, logits, -1e9)
    weight = tf.reduce_sum(y * tf.cast(present, tf.float32), axis=-1)
    ce = tf.nn.softmax_cross_entropy_with_logits(labels=tf.broadcast_to(y, tf.shape(logits)), logits=logits)
    return tf.reduce_sum(ce * weight) / tf.maximum(tf.reduce_sum(weight * tf.ones_like(ce)), 1.0)


class GradientMetaLearner(MetaLearner):
    """Shared meta-training (inner/outer loop) and last-layer fine-tuning."""

    @abc.abstractmethod
    def forward(self, params, x):
        """Logits of the base model with weights ``params``: (N, D) -> (N, K) (BMAML: (M, N, K))."""

    def scores(self, xs, ys, xq):
        """Log-probabilities of the query rows before any adaptation (the pre-trained model)."""
        from den._tf import tf

        present = tf.reduce_max(ys, axis=0) > 0
        return tf.math.log(self.query_probabilities(self.params, xq, present) + 1e-12)

    def inner_indices(self) -> list[int]:
        """Parameters the inner loop adapts."""
        return list(range(len(self.params)))

    def last_layer(self) -> list[int]:
        """Parameters fine-tuned at evaluation."""
        return [len(self.params) - 2, len(self.params) - 1]

    def loss(self, params, x, y, present):
        return masked_cross_entropy(self.forward(params, x), y, present)

    def inner_update(self, params, xs, ys, present):
        from den._tf import tf

        params = list(params)
        adapted = self.inner_indices()
        for _ in range(self.config.inner_steps):
            with tf.GradientTape() as tape:
                tape.watch([params[i] for i in adapted])
                loss = self.loss(params, xs, ys, present)
            grads = tape.gradient(loss, [params[i] for i in adapted])
            for i, g in zip(adapted, grads):
                params[i] = params[i] - self.config.inner_lr * g
        return params

    def outer_loss(self, params, xq, yq, present):
        return self.loss(params, xq, yq, present)

    def make_optimizer(self):
        from den._tf import tf_keras

        return tf_keras.optimizers.Adam(self.config.outer_lr)

    def train_step(self, tasks, rng) -> float:
        from den._tf import tf

        if self._step_fn is None:
            self._optimizer = self.make_optimizer()

            @tf.function(reduce_retracing=True)
            def episode_gradients(xs, ys, xq, yq):
                present = tf.reduce_max(ys, axis=0) > 0
                with tf.GradientTape() as tape:
                    fast = self.inner_update(self.params, xs, ys, present)
                    loss = self.outer_loss(fast, xq, yq, present)
                return loss, tape.gradient(loss, self.params)

            self._step_fn = episode_gradients
        total, losses = None, []
        for _ in range(self.config.meta_batch):
            loss, grads = self._step_fn(*self.sample_episode(tasks, rng))
            grads = [tf.zeros_like(v) if g is None else g for g, v in zip(grads, self.params)]
            total = grads if total is None else [a + b for a, b in zip(total, grads)]
            losses.append(float(loss))
        self._optimizer.apply_gradients([(g / self.config.meta_batch, v) for g, v in zip(total, self.params)])
        return float(np.mean(losses))

    def adapt(self, x_support, y_support, n_classes: int, seed: int = 0) -> GradientMetaLearner:
        """Fine-tune a copy of the last layer on the support set (the paper: 5 epochs)."""
        from den._tf import tf

        x_support, y_support = self._check_support(x_support, y_support, n_classes)
        xs, _ = self._prepare(x_support, x_support[:1], np.random.default_rng([seed, 3]))
        ys = one_hot(y_support, self.config.n_classes)
        present = tf.constant(ys.max(axis=0) > 0)
        tuned = {i: tf.Variable(self.params[i]) for i in self.last_layer()}
        params = [tuned.get(i, p) for i, p in enumerate(self.params)]
        variables = list(tuned.values())

        @tf.function(reduce_retracing=True)
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = self.loss(params, x, y, present)
            for v, g in zip(variables, tape.gradient(loss, variables)):
                v.assign_sub(self.config.finetune_lr * g)

        rng = np.random.default_rng([seed, 5])
        for _ in range(self.config.finetune_epochs):
            order = rng.permutation(len(xs))
            for start in range(0, len(xs), self.config.finetune_batch):
                rows = order[start:start + self.config.finetune_batch]
                step(tf.constant(xs[rows]), tf.constant(ys[rows]))
        self._support = (x_support, y_support, n_classes, seed)
        self._adapted = (params, present)
        return self

    def probabilities(self, params, x, present):
        from den._tf import tf

        return tf.nn.softmax(tf.where(present, self.forward(params, x), -1e9))

    def query_probabilities(self, params, x, present):
        """(N, K) class probabilities of the adapted model."""
        return self.probabilities(params, x, present)

    def predict_proba(self, x_query, chunk_rows: int = 4096) -> np.ndarray:
        from den._tf import tf
        from den.errors import DENInputError

        if self._support is None:
            raise DENInputError(f"{self.name}: call adapt() with a support set first")
        x_support, _, n_classes, seed = self._support
        _, xq = self._prepare(x_support, np.asarray(x_query, np.float64), np.random.default_rng([seed, 3]))
        params, present = self._adapted
        out = [self.query_probabilities(params, tf.constant(xq[i:i + chunk_rows]), present).numpy()
               for i in range(0, len(xq), chunk_rows)]
        proba = np.concatenate(out)[:, :n_classes] if out else np.zeros((0, n_classes))
        return proba / np.maximum(proba.sum(axis=1, keepdims=True), 1e-12)


class MAML(GradientMetaLearner):
    name = "maml"

    def init_params(self, rng):
        return dense_params(rng, [self.config.n_inputs, 64, 64, 64, 64, self.config.n_classes])

    def forward(self, params, x):
        return apply_dense(params, x)


class TNet(GradientMetaLearner):
    name = "tnet"
    layers = 4
    units = 32

    def init_params(self, rng):
        u, params, n_in = self.units, [], self.config.n_inputs
        for layer in range(self.layers):
            params += [glorot(rng, n_in, u), np.zeros(u, np.float32)]                      # W, b
            last = layer == self.layers - 1
            params.append(glorot(rng, u, self.config.n_classes) if last else np.eye(u, dtype=np.float32))  # T
            n_in = u
        return params + [np.zeros(self.config.n_classes, np.float32)]                     # output bias

    def inner_indices(self):
        return [i for layer in range(self.layers) for i in (3 * layer, 3 * layer + 1)]

    def last_layer(self):
        return [3 * self.layers - 1, 3 * self.layers]

    def forward(self, params, x):
        from den._tf import tf

        for layer in range(self.layers):
            w, b, t = params[3 * layer:3 * layer + 3]
            x = tf.matmul(tf.matmul(x, w) + b, t)
            if layer < self.layers - 1:
                x = tf.nn.relu(x)
        return x + params[-1]


class BMAML(GradientMetaLearner):
    name = "bmaml"

    def init_params(self, rng):
        sizes = [self.config.n_inputs, 64, 64, 64, 64, self.config.n_classes]
        particles = [dense_params(rng, sizes) for _ in range(self.config.particles)]
        return [np.stack(tensors) for tensors in zip(*particles)]  # each (M, ...)

    def forward(self, params, x):
        """(N, D) -> (M, N, K) logits of every particle."""
        from den._tf import tf

        h = tf.repeat(x[None], self.config.particles, axis=0)
        n = len(params) // 2
        for i in range(n):
            h = tf.matmul(h, params[2 * i]) + params[2 * i + 1][:, None, :]
            if i < n - 1:
                h = tf.nn.relu(h)
        return h

    def loss(self, params, x, y, present):
        """Sum over particles of each particle's mean cross-entropy."""
        return masked_cross_entropy(self.forward(params, x), y, present) * self.config.particles

    def inner_update(self, params, xs, ys, present):
        """Stein variational gradient steps: phi_m = mean_j [k_jm grad log p_j + grad_j k_jm]."""
        from den._tf import tf

        params = list(params)
        m = self.config.particles
        for _ in range(self.config.inner_steps):
            with tf.GradientTape() as tape:
                tape.watch(params)
                loss = self.loss(params, xs, ys, present)
            grads = tape.gradient(loss, params)
            theta = tf.concat([tf.reshape(p, (m, -1)) for p in params], axis=1)
            score = -tf.concat([tf.reshape(g, (m, -1)) for g in grads], axis=1)   # grad log-likelihood
            sq = tf.reduce_sum((theta[:, None, :] - theta[None, :, :]) ** 2, axis=2)
            flat = tf.reshape(sq, (-1,))
            median = tf.stop_gradient(tf.sort(flat)[tf.size(flat) // 2])
            h = median / np.log(m + 1.0) + 1e-8
            kernel = tf.exp(-sq / h)
            repulsion = (2.0 / h) * (theta * tf.reduce_sum(kernel, axis=1, keepdims=True)
                                     - tf.matmul(kernel, theta))
            phi = (tf.matmul(kernel, score) + repulsion) / m
            offset = 0
            for i, p in enumerate(params):
                size = int(np.prod(p.shape[1:]))
                params[i] = p + self.config.inner_lr * tf.reshape(phi[:, offset:offset + size], tf.shape(p))
                offset += size
        return params

    def outer_loss(self, params, xq, yq, present):
        """Negative log-likelihood of the particle-averaged prediction."""
        from den._tf import tf

        proba = tf.reduce_mean(self.probabilities(params, xq, present), axis=0)
        weight = tf.reduce_sum(yq * tf.cast(present, tf.float32), axis=1)
        nll = -tf.math.log(tf.reduce_sum(proba * yq, axis=1) + 1e-7)
        return tf.reduce_sum(nll * weight) / tf.maximum(tf.reduce_sum(weight), 1.0)

    def probabilities(self, params, x, present):
        """(M, N, K) per particle; ``predict_proba`` averages them."""
        from den._tf import tf

        return tf.nn.softmax(tf.where(present, self.forward(params, x), -1e9))

    def query_probabilities(self, params, x, present):
        from den._tf import tf

        return tf.reduce_mean(self.probabilities(params, x, present), axis=0)


METHODS = register(MAML, BMAML, TNet)
