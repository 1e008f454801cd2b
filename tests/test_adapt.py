"""Network adaptation (``FinetuneConfig.network_steps``): a task's own copy of every network
weight learns on its support set, while the shared pre-trained DEN stays as it was."""

import numpy as np
import pytest

from den._tf import tf
from den.model.task_model import TaskModel
from den.train.finetune import FinetuneConfig, adapt_network, fit_task

from helpers import split

ADAPT = FinetuneConfig(epochs=0, network_steps=30, network_learning_rate=0.01, seed=4)


def _support_log_loss(task_model, x, y):
    p = np.clip(task_model.predict_proba(x)[np.arange(len(y)), y], 1e-7, 1.0)
    return float(-np.mean(np.log(p)))


def test_adaptation_trains_the_task_s_copy_and_leaves_the_shared_network_as_it_was(
        small_binary_model, binary_task):
    den = small_binary_model
    (xs, ys), (xq, _) = split(binary_task)
    before = den.network.weights_dict()
    plain = TaskModel(den, xs, ys)
    plain_proba = plain.predict_proba(xq)
    adapted = TaskModel(den, xs, ys)
    losses = adapt_network(adapted, ADAPT)

    assert len(losses) == ADAPT.network_steps and np.all(np.isfinite(losses))
    after = den.network.weights_dict()
    assert all(np.array_equal(before[key], after[key]) for key in before)
    own = [v.numpy() for v in den.network.trainable_variables]
    assert len(adapted.network_weights) == len(own)
    assert any(not np.array_equal(a, b) for a, b in zip(adapted.network_weights, own))
    # the adapted model predicts differently; the plain one, sharing the DEN, as before
    assert np.abs(adapted.predict_proba(xq) - plain_proba).max() > 1e-3
    np.testing.assert_array_equal(plain.predict_proba(xq), plain_proba)
    assert all(np.array_equal(before[key], value) for key, value in den.network.weights_dict().items())


def test_adaptation_lowers_the_loss_on_the_support_rows(small_binary_model, binary_task):
    (xs, ys), _ = split(binary_task)
    plain = TaskModel(small_binary_model, xs, ys)
    adapted = TaskModel(small_binary_model, xs, ys)
    adapt_network(adapted, FinetuneConfig(epochs=0, network_steps=60, network_learning_rate=0.01))
    assert _support_log_loss(adapted, xs, ys) < 0.9 * _support_log_loss(plain, xs, ys)


def test_adaptation_is_seeded(small_binary_model, binary_task):
    (xs, ys), _ = split(binary_task)
    runs = []
    for seed in (4, 4, 5):
        task_model = TaskModel(small_binary_model, xs, ys)
        adapt_network(task_model, FinetuneConfig(epochs=0, network_steps=5, network_learning_rate=0.01,
                                                 seed=seed))
        runs.append(task_model.network_weights)
    assert all(np.array_equal(a, b) for a, b in zip(runs[0], runs[1]))
    assert any(not np.array_equal(a, b) for a, b in zip(runs[0], runs[2]))


def test_adaptation_on_a_sample_of_tuples_a_step(small_binary_model, binary_task, monkeypatch):
    """With tuples_per_step each adaptation step reads its own sample of the task's tuples (and
    still lowers the support loss); a sample of T or more is every tuple, to the bit."""
    (xs, ys), _ = split(binary_task)
    den = small_binary_model
    n_tuples = len(TaskModel(den, xs, ys).tuples)
    assert n_tuples > 6
    read, step = [], den.network_step_fn
    monkeypatch.setattr(den, "network_step_fn", lambda *a: read.append(a[4].numpy().tolist()) or step(*a))
    config = FinetuneConfig(epochs=0, network_steps=40, network_learning_rate=0.01, seed=4, tuples_per_step=6)
    plain, sampled = TaskModel(den, xs, ys), TaskModel(den, xs, ys)
    adapt_network(sampled, config)
    every = TaskModel(den, xs, ys).tuples.tolist()
    assert len(read) == 40 and all(len(r) == 6 and all(t in every for t in r) for r in read)
    assert len({str(r) for r in read}) > 30  # a fresh sample each step
    assert _support_log_loss(sampled, xs, ys) < 0.9 * _support_log_loss(plain, xs, ys)
    runs = []
    for per_step in (None, n_tuples):
        task_model = TaskModel(den, xs, ys)
        adapt_network(task_model, FinetuneConfig(epochs=0, network_steps=5, network_learning_rate=0.01,
                                                 seed=4, tuples_per_step=per_step))
        runs.append(task_model.network_weights)
    assert all(np.array_equal(a, b) for a, b in zip(*runs))


def test_adapted_one_vs_rest_and_ensemble_fits_predict_probabilities(small_binary_model, rng):
    x = rng.normal(size=(60, 4))
    y = np.argmax(x[:, :3], axis=1)  # three classes: a binary head meets them one against the rest
    fitted = fit_task(small_binary_model, x, y, 3,
                      FinetuneConfig(epochs=0, network_steps=3, network_learning_rate=0.01, ensemble=2))
    proba = fitted.proba(rng.normal(size=(7, 4)))
    assert fitted.one_vs_rest and len(fitted.task_models) == 6
    assert all(m.network_weights is not None for m in fitted.task_models)
    assert all(len(losses) == 3 for losses in fitted.losses)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)


def test_the_network_step_is_one_adam_step_of_the_support_loss(small_binary_model, binary_task):
    """One adaptation step moves each weight by Adam's first step, -lr * sign(gradient) (to
    Adam's epsilon), of the loss of the halving's loss half given its embedding half."""
    den = small_binary_model
    (xs, ys), _ = split(binary_task)
    task_model = TaskModel(den, xs, ys)
    config = FinetuneConfig(epochs=0, network_steps=1, network_learning_rate=1e-3, seed=2)
    from den.train.finetune import support_halvings

    embed_rows, loss_rows = support_halvings(task_model.y_support, 1, np.random.default_rng(2))[0]
    kernel, missing = task_model.calibration_parameters()
    z = den.transform(tf.constant(task_model.unit_support), kernel, missing)
    variables = den.network.trainable_variables
    with tf.GradientTape() as tape:
        logits = den.network.logits(tf.gather(z, loss_rows), tf.gather(z, embed_rows),
                                    tf.constant(task_model.y_support[embed_rows]),
                                    tf.constant(task_model.tuples), tf.constant(2))
        loss = den.loss(logits, tf.constant(task_model.y_support[loss_rows]), 2)
    grads = tape.gradient(loss, variables, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    adapt_network(task_model, config)
    for variable, grad, new in zip(variables, grads, task_model.network_weights):
        g = grad.numpy()
        expected = variable.numpy() - 1e-3 * g / (np.abs(g) + 1e-7 / np.sqrt(1 - 0.999))
        np.testing.assert_allclose(new, expected, atol=2e-6)


def test_a_class_with_too_few_support_rows_is_not_adapted(small_binary_model, binary_task):
    (xs, ys), _ = split(binary_task)
    positives = np.nonzero(ys == 1)[0]
    keep = np.concatenate([np.nonzero(ys == 0)[0], positives[:3]])  # 3 rows of class 1
    task_model = TaskModel(small_binary_model, xs[keep], ys[keep])
    assert adapt_network(task_model, ADAPT) == [] and task_model.network_weights is None
    lenient = TaskModel(small_binary_model, xs[keep], ys[keep])
    config = FinetuneConfig(epochs=0, network_steps=3, network_min_class_rows=3)
    assert len(adapt_network(lenient, config)) == 3 and lenient.network_weights is not None


def test_an_ensemble_that_cannot_adapt_is_one_pre_trained_model(small_binary_model, binary_task):
    """Where a class is below network_min_class_rows, k runs would be k identical pre-trained
    models: the fit keeps one (as it does for a config that cannot change the PLFs)."""
    (xs, ys), _ = split(binary_task)
    keep = np.concatenate([np.nonzero(ys == 0)[0], np.nonzero(ys == 1)[0][:3]])
    fitted = fit_task(small_binary_model, xs[keep], ys[keep], 2,
                      FinetuneConfig(epochs=0, network_steps=5, ensemble=3))
    assert len(fitted.task_models) == 1 and fitted.losses == [[]]
    assert fitted.task_models[0].network_weights is None


def test_weight_swaps_nest_and_restore(small_binary_model):
    den = small_binary_model
    variables = den.network.trainable_variables
    own = [v.numpy() for v in variables]
    first = [w + 1.0 for w in own]
    second = [w + 2.0 for w in own]
    with den.network_weights(first):
        with den.network_weights(first):  # the same values: nothing to swap
            assert all(np.array_equal(v.numpy(), w) for v, w in zip(variables, first))
        assert all(np.array_equal(v.numpy(), w) for v, w in zip(variables, first))
        with den.network_weights(second):
            assert all(np.array_equal(v.numpy(), w) for v, w in zip(variables, second))
        assert all(np.array_equal(v.numpy(), w) for v, w in zip(variables, first))
    assert all(np.array_equal(v.numpy(), w) for v, w in zip(variables, own))
    with pytest.raises(RuntimeError), den.network_weights(first):
        raise RuntimeError("a failed prediction")
    assert all(np.array_equal(v.numpy(), w) for v, w in zip(variables, own))


@pytest.mark.parametrize("settings, message", [
    (dict(network_min_class_rows=0), "network_min_class_rows must be >= 1"),
    (dict(network_steps=-1), "network_steps must be >= 0"),
    (dict(network_steps=5, early_stopping=True, ensemble=2), "set one of them"),
    (dict(network_steps=5, network_learning_rate=0.0), "network_learning_rate must be a finite number > 0"),
    (dict(network_steps=5, network_learning_rate=float("inf")), "must be a finite number > 0, got inf"),
])
def test_bad_adaptation_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        FinetuneConfig(**settings)
