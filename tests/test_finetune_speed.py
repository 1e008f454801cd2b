"""Fine-tuning in one compiled call per run (issue 22) gives what the step-by-step procedure
gave: ``_reference_finetune_rows`` below is that procedure as it was (a compiled gradient
per step, tf_keras's Adam applied eagerly, the loss read back every step), kept here only
as the reference; the fitted tasks' predictions, chosen epochs and features, losses and
held-out losses must agree within float32 rounding."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import den.train.finetune as finetune_module
from den._tf import tf, tf_keras
from den.data.synthetic import make_task
from den.model.config import ModelConfig
from den.model.den import DEN, adam_step_size, adam_update
from den.model.task_model import TaskModel
from den.pretrained import shipped_model_path
from den.train.episodes import halve_support
from den.train.finetune import FinetuneConfig, _finetune_rows, _roc_auc, _step_tuples, fit_task, platt_start

from helpers import SMALL


def _reference_finetune_rows(task_model, config, train_rows=None, validation_rows=None):
    """``den.train.finetune._finetune_rows`` before issue 22, unchanged but for
    ``tuples_per_step`` (session 28): an update step then reads its own sample of the tuples,
    drawn by ``_step_tuples``, step after step."""
    den = task_model.den
    if not den.config.use_calibration or config.epochs == 0:
        return [], [], []
    rng = np.random.default_rng(config.seed)
    steps = config.epochs * config.steps_per_epoch
    samples = _step_tuples(len(task_model.tuples), [True] * steps, config.tuples_per_step,
                           np.random.default_rng([config.seed, 2]))
    variables = task_model.calibration.variables_to_train
    optimizer = tf_keras.optimizers.Adam(learning_rate=config.learning_rate)
    optimizer.build(variables)
    rows = np.arange(len(task_model.y_support)) if train_rows is None else np.asarray(train_rows)
    u, y = task_model.unit_support[rows], task_model.y_support[rows]
    tuples = tf.constant(task_model.tuples)
    n_classes = tf.constant(task_model.n_classes, tf.int32)
    scale, bias = task_model.logit_scale, task_model.logit_bias
    if config.output_scaling:
        start_scale, start_bias = platt_start(task_model, rows, np.random.default_rng([config.seed, 1]))
        scale.assign(start_scale)
        bias.assign(start_bias)
        output_optimizer = tf_keras.optimizers.Adam(learning_rate=config.output_scaling_learning_rate)
        output_optimizer.build([scale, bias])
    losses, held_out, snapshots = [], [], []

    def validate():
        kernel, missing = task_model.calibration_parameters()
        loss = den.calibration_gradients_fn(
            tf.constant(task_model.unit_support[validation_rows]),
            tf.constant(task_model.y_support[validation_rows]), tf.constant(u), tf.constant(y),
            kernel, missing, tuples, n_classes, scale, bias)[0]
        held_out.append(float(loss))
        snapshots.append([v.numpy() for v in task_model.finetuned_variables])

    if validation_rows is not None:
        validate()
    for step in range(steps):
        embed_rows, loss_rows = halve_support(y, rng)
        if len(loss_rows) == 0:
            embed_rows = loss_rows = np.arange(len(y))
        kernel, missing = task_model.calibration_parameters()
        loss, grad_kernel, grad_missing, grad_scale, grad_bias = den.calibration_gradients_fn(
            tf.constant(u[loss_rows]), tf.constant(y[loss_rows]), tf.constant(u[embed_rows]),
            tf.constant(y[embed_rows]), kernel, missing, tf.gather(tuples, samples[step]), n_classes,
            scale, bias)
        optimizer.apply_gradients(zip([grad_kernel, grad_missing[None, :]], variables))
        if config.output_scaling:
            output_optimizer.apply_gradients(zip([grad_scale, grad_bias], [scale, bias]))
        losses.append(float(loss))
        if validation_rows is not None and (step + 1) % config.steps_per_epoch == 0:
            validate()
    task_model.finetune_epochs += config.epochs
    task_model.invalidate()
    return losses, held_out, snapshots


def _reference_informative_features(x, y, k):
    """``den.train.finetune.informative_features`` before issue 22 (scikit-learn's AUC)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y)
    scores = np.zeros(x.shape[1])
    for j in range(x.shape[1]):
        present = ~np.isnan(x[:, j])
        column, labels = x[present, j], y[present]
        if len(np.unique(column)) < 2:
            continue
        for label in np.unique(labels) if len(np.unique(labels)) > 1 else []:
            scores[j] = max(scores[j], abs(roc_auc_score(labels == label, column) - 0.5))
    return np.sort(np.argsort(-scores, kind="stable")[:k])


@pytest.fixture(scope="module")
def shipped_model():
    return DEN.load(shipped_model_path(finetune=True))


def _fit_both(monkeypatch, den, task, n_classes, config, n_support=50):
    x, y = task.x[:n_support], task.y[:n_support]
    new = fit_task(den, x, y, n_classes, config)
    with monkeypatch.context() as patch:
        patch.setattr(finetune_module, "_finetune_rows", _reference_finetune_rows)
        patch.setattr(finetune_module, "informative_features", _reference_informative_features)
        old = fit_task(den, x, y, n_classes, config)
    return new, old, task.x[n_support:]


def _assert_same_fit(new, old, x_query):
    assert [m.finetune_epochs for m in new.task_models] == [m.finetune_epochs for m in old.task_models]
    assert [None if m.features is None else m.features.tolist() for m in new.task_models] == \
        [None if m.features is None else m.features.tolist() for m in old.task_models]
    assert [len(run) for run in new.losses] == [len(run) for run in old.losses]
    for a, b in zip(new.losses, old.losses):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(new.task_models, old.task_models):
        for va, vb in zip(a.finetuned_variables, b.finetuned_variables):
            np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(new.proba(x_query), old.proba(x_query), rtol=1e-5, atol=1e-6)


def test_paper_finetuning_predicts_what_the_step_by_step_procedure_did(monkeypatch, shipped_model):
    """The paper's fine-tuning (``preset="paper"``: 10 epochs x 10 steps, lr 0.001) of the
    shipped model (order 3, local embedding) on 50 support rows."""
    task = make_task("speed_paper", 250, 6, seed=3)
    new, old, x_query = _fit_both(monkeypatch, shipped_model, task, 2, FinetuneConfig())
    assert len(new.task_models) == 1 and len(new.losses[0]) == 100
    _assert_same_fit(new, old, x_query)


def test_early_stopped_ensemble_with_feature_counts_predicts_what_it_did(monkeypatch, shipped_model):
    """The README's strong settings (cross-validated early stopping over an ensemble, feature
    subsets, lr 0.01), shortened: held-out losses pick the epoch and the features, so they
    and the snapshots they restore must agree too."""
    task = make_task("speed_strong", 250, 7, seed=5, missing_rate=0.1)
    config = FinetuneConfig(epochs=4, steps_per_epoch=5, learning_rate=0.01, ensemble=4,
                            early_stopping=True, feature_counts=(2, 4), feature_counts_tolerance=1)
    new, old, x_query = _fit_both(monkeypatch, shipped_model, task, 2, config)
    assert len(new.task_models) in (1, 4)
    _assert_same_fit(new, old, x_query)


def test_a_sample_of_tuples_a_step_is_what_each_step_reads(monkeypatch, shipped_model):
    """``tuples_per_step``: each update step's loss and gradients are those of its own sample
    of the task's tuples (the step-by-step reference reading the same samples agrees, early
    stopping's held-out losses included, which read every tuple); the fit is not the one over
    every tuple, it repeats with its seed, and a sample of T or more is every tuple, to the bit."""
    task = make_task("speed_sample", 250, 6, seed=4)  # 216 ordered triples
    sampled = FinetuneConfig(epochs=4, steps_per_epoch=5, learning_rate=0.01, ensemble=2,
                             early_stopping=True, tuples_per_step=40)
    new, old, x_query = _fit_both(monkeypatch, shipped_model, task, 2, sampled)
    _assert_same_fit(new, old, x_query)
    x, y = task.x[:50], task.y[:50]
    every = fit_task(shipped_model, x, y, 2, FinetuneConfig(epochs=4, steps_per_epoch=5,
                                                            learning_rate=0.01, ensemble=2,
                                                            early_stopping=True))
    assert np.abs(every.losses[0][0] - new.losses[0][0]) > 1e-4  # the first step's sample
    np.testing.assert_array_equal(fit_task(shipped_model, x, y, 2, sampled).proba(x_query),
                                  new.proba(x_query))
    paper, whole = FinetuneConfig(), FinetuneConfig(tuples_per_step=216)
    np.testing.assert_array_equal(fit_task(shipped_model, x, y, 2, paper).proba(x_query),
                                  fit_task(shipped_model, x, y, 2, whole).proba(x_query))


def test_step_tuples_draws_a_fresh_sample_for_each_update_step():
    rng = np.random.default_rng(0)
    updates = [False, True, True, False, True]
    samples = _step_tuples(30, updates, 7, rng)
    assert [len(s) for s in samples] == [30, 7, 7, 30, 7]
    for sample, update in zip(samples, updates):
        assert sample.dtype == np.int32 and (np.diff(sample) > 0).all() and sample.max() < 30
        if not update:
            assert sample.tolist() == list(range(30))
    assert samples[1].tolist() != samples[2].tolist()
    for per_step in (None, 30, 31):
        assert all(s.tolist() == list(range(30)) for s in _step_tuples(30, updates, per_step, rng))
    with pytest.raises(ValueError, match=r"tuples_per_step must be >= 1, got 0 \(None, null in a workflow "
                                         r"config, reads every tuple\)"):
        FinetuneConfig(tuples_per_step=0)
    with pytest.raises(ValueError, match="tuples_per_step must be"):
        FinetuneConfig(tuples_per_step=2.5)


@pytest.mark.parametrize("case", ["output_scaling", "multiclass", "monotone", "one_vs_rest"])
def test_other_heads_and_constraints_finetune_as_they_did(monkeypatch, case, small_binary_model,
                                                          small_multiclass_model):
    """The binary head's learned output map, the multiclass head, the increasing PLFs'
    projection (Dykstra's iterations inside tensorflow-lattice's constraint) and one binary
    DEN per class of a three-class task."""
    if case == "output_scaling":
        den, task, n_classes = small_binary_model, make_task("speed_out", 120, 4, seed=6), 2
        config = FinetuneConfig(epochs=3, steps_per_epoch=4, learning_rate=0.05, ensemble=3,
                                early_stopping=True, output_scaling=True)
    elif case == "multiclass":
        den, n_classes = small_multiclass_model, 3
        task = make_task("speed_mc", 120, 4, n_classes=3, seed=7)
        config = FinetuneConfig(epochs=2, steps_per_epoch=5, learning_rate=0.05, ensemble=2)
    elif case == "monotone":
        den = DEN(ModelConfig(monotonicity="increasing", **SMALL))
        task, n_classes = make_task("speed_mono", 120, 5, seed=8), 2
        config = FinetuneConfig(epochs=3, steps_per_epoch=4, learning_rate=0.2)
    else:
        den, n_classes = small_binary_model, 3
        task = make_task("speed_ovr", 120, 4, n_classes=3, seed=9)
        config = FinetuneConfig(epochs=2, steps_per_epoch=3, learning_rate=0.05, ensemble=2,
                                early_stopping=True)
    new, old, x_query = _fit_both(monkeypatch, den, task, n_classes, config)
    _assert_same_fit(new, old, x_query)
    if case == "monotone":
        kernel = new.task_models[0].calibration.layer.kernel.numpy()
        assert (kernel[1:] >= -1e-6).all()  # the projection ran: increasing PLFs


def test_one_trace_serves_every_task_and_setting(small_binary_model):
    """The fine-tuning function is traced once per model: other widths, support sizes,
    held-out rows or not, the output map learning or not do not retrace it."""
    den = small_binary_model
    _finetune_rows(TaskModel(den, *_xy(40, 3, 1)), FinetuneConfig(epochs=1, steps_per_epoch=2))
    traces = den.finetune_fn.experimental_get_tracing_count()
    assert traces == 1
    for n, d, seed in [(50, 5, 2), (23, 2, 3), (61, 8, 4)]:
        task_model = TaskModel(den, *_xy(n, d, seed))
        _finetune_rows(task_model, FinetuneConfig(epochs=2, steps_per_epoch=3, output_scaling=seed == 3),
                       train_rows=np.arange(n - 10), validation_rows=np.arange(n - 10, n))
        _finetune_rows(task_model, FinetuneConfig(epochs=1, steps_per_epoch=1, seed=seed))
    assert den.finetune_fn.experimental_get_tracing_count() == traces


def _xy(n, d, seed):
    task = make_task("speed_trace", n, d, seed=seed)
    return task.x, task.y, 2


def test_adam_update_is_tf_keras_adam_to_the_bit():
    rng = np.random.default_rng(0)
    start = rng.normal(size=(4, 3)).astype(np.float32)
    variable = tf.Variable(start)
    optimizer = tf_keras.optimizers.Adam(learning_rate=0.01)
    optimizer.build([variable])
    value, m, v = tf.constant(start), tf.zeros_like(start), tf.zeros_like(start)
    for step in range(1, 8):
        grad = tf.constant((rng.normal(size=(4, 3)) * 10.0 ** rng.integers(-4, 2)).astype(np.float32))
        optimizer.apply_gradients([(grad, variable)])
        alpha = adam_step_size(tf.constant(0.01, tf.float32), tf.constant(step, tf.float32))
        value, m, v = adam_update(value, grad, m, v, alpha)
        np.testing.assert_array_equal(value.numpy(), variable.numpy())


def test_roc_auc_is_scikit_learns_to_the_bit():
    """``informative_features`` ranks columns by scikit-learn's AUC without its input checks:
    the same value to the last bit, ties between values and columns included (columns whose
    AUCs tie exactly must keep scikit-learn's order)."""
    rng = np.random.default_rng(1)
    for trial in range(150):
        n = int(rng.integers(3, 60))
        column = rng.normal(size=n) if trial % 2 else rng.integers(0, int(rng.integers(2, 6)), n) * 1.0
        positive = rng.random(n) < rng.uniform(0.1, 0.9)
        if positive.all() or not positive.any() or len(np.unique(column)) < 2:
            continue
        values, where = np.unique(column, return_inverse=True)
        assert _roc_auc(positive, where, len(values)) == roc_auc_score(positive, column)
    for trial in range(25):
        n, d = int(rng.integers(10, 50)), int(rng.integers(2, 9))
        y = rng.integers(0, 2 + trial % 2, n)
        x = rng.integers(0, 3, (n, d)) * 1.0
        x[rng.random((n, d)) < 0.1] = np.nan
        for k in range(1, d + 1):
            assert finetune_module.informative_features(x, y, k).tolist() == \
                _reference_informative_features(x, y, k).tolist()
