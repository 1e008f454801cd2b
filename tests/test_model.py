"""The DEN model: tuples, calibration, invariances, fine-tuning, save/load."""

import numpy as np
import pytest

from den._tf import tf
from den.data.synthetic import make_task
from den.model.calibration import Calibration, calibrate, fit_keypoints, to_unit
from den.model.config import ModelConfig
from den.model.den import DEN
from den.model.task_model import TaskModel
from den.model.tuples import canonical_order, feature_tuples
from den.train.finetune import FinetuneConfig, finetune

from helpers import SMALL, split


# -- feature tuples ---------------------------------------------------------------------
@pytest.mark.parametrize("d,r,expected", [(1, 1, 1), (1, 4, 1), (5, 1, 5), (5, 2, 25), (3, 3, 9),
                                          (4, 4, 16), (30, 2, 900), (30, 3, 900)])
def test_tuple_counts(d, r, expected):
    tuples = feature_tuples(d, r, seed=0)
    assert tuples.shape == (expected, r)
    assert tuples.min() >= 0 and tuples.max() < d
    assert len({tuple(t) for t in tuples.tolist()}) == expected  # distinct


def test_tuples_enumerate_all_when_small_and_sample_with_seed_when_large():
    assert feature_tuples(3, 2, 0).tolist() == [[a, b] for a in range(3) for b in range(3)]
    a, b, c = feature_tuples(30, 3, 0), feature_tuples(30, 3, 0), feature_tuples(30, 3, 1)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_min_tuples_lets_narrow_tasks_pool_over_more_r_tuples():
    paper = feature_tuples(9, 3, 0)
    wider = feature_tuples(9, 3, 0, max_tuples=625, min_tuples=625)
    assert paper.shape == (81, 3) and wider.shape == (625, 3)  # of the 729 triples of 9 features
    assert len({tuple(t) for t in wider.tolist()}) == 625 and wider.max() == 8
    assert feature_tuples(4, 3, 0, min_tuples=625).shape == (64, 3)  # all of them, no more
    assert np.array_equal(feature_tuples(9, 2, 0, min_tuples=625), feature_tuples(9, 2, 0))  # r = 2: all
    assert feature_tuples(40, 3, 0, max_tuples=625, min_tuples=625).shape == (625, 3)  # d^2 > 625: capped
    assert DEN(ModelConfig(order=3, min_tuples=200, **SMALL)).tuples(9).shape == (200, 3)
    with pytest.raises(ValueError, match="min_tuples"):
        ModelConfig(min_tuples=0)


def test_max_tuples_caps_wide_tasks_with_a_fixed_subset():
    capped = feature_tuples(40, 2, 0, max_tuples=100)
    assert capped.shape == (100, 2) and len({tuple(t) for t in capped.tolist()}) == 100
    assert np.array_equal(capped, feature_tuples(40, 2, 0, max_tuples=100))
    assert set(np.unique(capped)) > set(range(30))  # spread over the features
    assert np.array_equal(feature_tuples(5, 2, 0, max_tuples=100), feature_tuples(5, 2, 0))
    assert DEN(ModelConfig(max_tuples=50, **SMALL)).tuples(12).shape == (50, 2)
    with pytest.raises(ValueError, match="max_tuples"):
        ModelConfig(max_tuples=0)


@pytest.mark.parametrize("d,expected", [(300, 625), (700, 625), (1500, 625)])
def test_every_feature_is_in_a_tuple_of_a_wide_task(d, expected):
    tuples = feature_tuples(d, 3, 0, max_tuples=625, min_tuples=625)
    assert tuples.shape == (expected, 3) and len({tuple(t) for t in tuples.tolist()}) == expected
    assert np.array_equal(np.unique(tuples), np.arange(d))  # 625 random triples of 700 miss ~5
    assert np.array_equal(tuples, tuples[np.lexsort(tuples.T[::-1])])  # sorted, as the draw
    wider = feature_tuples(2000, 3, 0, max_tuples=625, min_tuples=625)  # 625 triples cannot hold 2000
    assert len(wider) > 625 and np.array_equal(np.unique(wider), np.arange(2000))


def test_canonical_order_follows_columns_and_ignores_rows():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(50, 12)), rng.integers(0, 2, 50)
    x[rng.random(x.shape) < 0.1] = np.nan
    order, cols, rows = canonical_order(x, y), rng.permutation(12), rng.permutation(50)
    assert sorted(order.tolist()) == list(range(12))
    assert np.array_equal(cols[canonical_order(x[:, cols], y)], order)  # the same columns, wherever
    assert np.array_equal(canonical_order(x[rows], y[rows]), order)
    assert not np.array_equal(canonical_order(x, 1 - y), order)  # the labels count


def test_tuple_subset_follows_the_columns_not_their_order(binary_task):
    """A task's tuples are a subset of its r-tuples (max_tuples): permuting its columns (or its
    support rows) keeps the predictions, and a wide task pools over every column."""
    model = DEN(ModelConfig(order=3, max_tuples=40, **SMALL))
    (xs, ys), (xq, _) = split(binary_task)
    rng = np.random.default_rng(5)
    xs, xq = np.hstack([xs, rng.normal(size=(len(xs), 7))]), np.hstack([xq, rng.normal(size=(len(xq), 7))])
    cols, rows = rng.permutation(12), rng.permutation(len(ys))
    a = TaskModel(model, xs, ys)
    b = TaskModel(model, xs[:, cols], ys)
    c = TaskModel(model, xs[rows], ys[rows])
    assert a.tuples.shape == (40, 3)
    np.testing.assert_allclose(a.predict_logits(xq), b.predict_logits(xq[:, cols]), atol=1e-5)
    np.testing.assert_allclose(a.predict_logits(xq), c.predict_logits(xq), atol=1e-5)
    wide = TaskModel(model, rng.normal(size=(30, 90)), np.arange(30) % 2)
    assert np.array_equal(np.unique(wide.tuples), np.arange(90))  # 40 triples hold all 90 columns


# -- calibration ------------------------------------------------------------------------
def test_calibrate_matches_the_lattice_layer_including_missing_values():
    cal = Calibration(3, 10)
    rng = np.random.default_rng(0)
    cal.layer.kernel.assign(rng.uniform(0, 0.1, (10, 3)).astype(np.float32))
    cal.layer.missing_output.assign([[0.1, 0.7, 0.3]])
    x = rng.uniform(0, 1, (20, 3)).astype(np.float32)
    x[0, 1] = x[5, 2] = np.nan
    ours = cal(tf.constant(x)).numpy()
    layer = cal.layer(tf.constant(np.where(np.isnan(x), -1.0, x))).numpy()
    np.testing.assert_allclose(ours, layer, atol=1e-6)
    assert ours[0, 1] == pytest.approx(0.7)


def test_fresh_calibration_is_the_identity():
    cal = Calibration(2, 7)
    x = np.array([[0.0, 1.0], [0.25, 0.6], [np.nan, 0.1]], np.float32)
    kernel, missing = cal.parameters()
    out = calibrate(tf.constant(x), kernel, missing).numpy()
    np.testing.assert_allclose(out[:2], x[:2], atol=1e-6)
    assert out[2, 0] == pytest.approx(0.5)


def test_keypoints_span_the_domain_and_to_unit_maps_them_to_the_grid():
    x = np.array([[0.0, 5.0], [10.0, 5.0], [2.0, 5.0], [np.nan, 5.0]])
    kp = fit_keypoints(x, 5, "uniform")
    np.testing.assert_allclose(kp[0], [0, 2.5, 5, 7.5, 10])
    assert np.all(np.diff(kp[1]) > 0)  # constant column still gets increasing keypoints
    unit = to_unit(np.array([[2.5, 5.0], [-3.0, 5.0], [99.0, np.nan]]), kp)
    assert unit[0, 0] == pytest.approx(0.25)
    assert unit[1, 0] == 0.0 and unit[2, 0] == 1.0  # clamped
    assert np.isnan(unit[2, 1])


def test_quantile_keypoints_are_strictly_increasing_with_ties():
    x = np.r_[np.zeros(50), np.ones(50), np.arange(5)][:, None]
    kp = fit_keypoints(x, 10, "quantile")
    assert np.all(np.diff(kp[0]) > 0)
    assert kp[0, 0] == 0 and kp[0, -1] == 4


@pytest.mark.parametrize("placement", ["uniform", "quantile"])
def test_keypoints_of_further_rows_are_those_of_the_stacked_rows(placement):
    """x_more (e.g. unlabeled query rows) counts as rows stacked under x, NaN ignored, without
    the stacked copy; a column count other than x's is refused."""
    rng = np.random.default_rng(3)
    x, more = rng.normal(size=(50, 3)), rng.exponential(size=(400, 3))
    more[::7, 1] = np.nan
    more[:, 2] = 1.0
    stacked = fit_keypoints(np.vstack([x, more]), 10, placement)
    np.testing.assert_array_equal(fit_keypoints(x, 10, placement, x_more=more), stacked)
    assert not np.array_equal(fit_keypoints(x, 10, placement), stacked)
    with pytest.raises(ValueError, match="x_more must have x's 3 columns"):
        fit_keypoints(x, 10, placement, x_more=more[:, :2])


def test_model_config_rejects_bad_values():
    with pytest.raises(ValueError, match="order"):
        ModelConfig(order=9)
    with pytest.raises(ValueError, match="head"):
        ModelConfig(head="ternary")


# -- invariances ------------------------------------------------------------------------
def _randomise_calibration(task_model, seed):
    rng = np.random.default_rng(seed)
    k = task_model.calibration.layer.kernel
    k.assign(np.abs(rng.normal(0.1, 0.05, k.shape)).astype(np.float32) / 2)
    task_model.invalidate()


def test_permuting_query_rows_permutes_predictions(small_binary_model, binary_task):
    (xs, ys), (xq, _) = split(binary_task)
    tm = TaskModel(small_binary_model, xs, ys)
    perm = np.random.default_rng(1).permutation(len(xq))
    np.testing.assert_allclose(tm.predict_logits(xq)[perm], tm.predict_logits(xq[perm]), atol=1e-5)


def test_embedding_ignores_the_order_of_support_rows(small_binary_model, small_multiclass_model):
    task = make_task("mc", 120, 4, 3, seed=5)
    for model, y in ((small_binary_model, (task.y > 0).astype(np.int32)), (small_multiclass_model, task.y)):
        perm = np.random.default_rng(2).permutation(len(y))
        a = TaskModel(model, task.x, y)
        b = TaskModel(model, task.x[perm], y[perm], keypoints=a.keypoints)
        np.testing.assert_allclose(a.predict_logits(task.x), b.predict_logits(task.x), atol=1e-5)
        for ctx_a, ctx_b in zip(a.context()[:3], b.context()[:3]):  # then the support rows as given
            np.testing.assert_allclose(ctx_a.numpy(), ctx_b.numpy(), atol=1e-5)


def test_permuting_features_with_their_calibrations_keeps_predictions(small_binary_model, binary_task):
    (xs, ys), (xq, _) = split(binary_task)
    perm = np.array([3, 0, 4, 1, 2])
    a = TaskModel(small_binary_model, xs, ys)
    _randomise_calibration(a, 4)
    b = TaskModel(small_binary_model, xs[:, perm], ys)
    b.calibration.layer.kernel.assign(tf.gather(a.calibration.layer.kernel, perm, axis=1))
    b.invalidate()
    np.testing.assert_allclose(a.predict_logits(xq), b.predict_logits(xq[:, perm]), atol=1e-5)


def test_chunking_does_not_change_predictions(small_binary_model, binary_task):
    (xs, ys), (xq, _) = split(binary_task)
    tm = TaskModel(small_binary_model, xs, ys)
    np.testing.assert_allclose(tm.predict_logits(xq, chunk_rows=7), tm.predict_logits(xq, 4096), atol=1e-5)


# -- dependency order and widths ------------------------------------------------------------
@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("d", [1, 3])
def test_any_order_and_width_runs_and_finetunes(order, d):
    model = DEN(ModelConfig(order=order, **SMALL))
    task = make_task("t", 80, d, seed=order * 10 + d)
    tm = TaskModel(model, task.x[:40], task.y[:40])
    assert tm.tuples.shape == (min(d**order, d * d), order)
    losses = finetune(tm, FinetuneConfig(epochs=1, steps_per_epoch=2))
    assert len(losses) == 2 and np.all(np.isfinite(losses))
    proba = tm.predict_proba(task.x[40:])
    assert proba.shape == (40, 2) and np.allclose(proba.sum(axis=1), 1)


def test_thirty_features_use_d_squared_tuples():
    model = DEN(ModelConfig(order=3, **SMALL))
    task = make_task("wide", 60, 30, seed=1)
    tm = TaskModel(model, task.x, task.y)
    assert tm.tuples.shape == (900, 3)
    assert np.isfinite(tm.predict_logits(task.x)).all()


# -- fine-tuning, variants, persistence -------------------------------------------------------
def test_finetuning_changes_only_the_calibration(small_binary_model, binary_task):
    (xs, ys), (xq, _) = split(binary_task)
    before = small_binary_model.network.weights_dict()
    tm = TaskModel(small_binary_model, xs, ys)
    cal_before = [v.numpy().copy() for v in tm.calibration.variables_to_train]
    logits_before = tm.predict_logits(xq)
    finetune(tm, FinetuneConfig(epochs=2, steps_per_epoch=3, learning_rate=0.05))
    after = small_binary_model.network.weights_dict()
    assert before.keys() == after.keys()
    for key in before:
        assert np.array_equal(before[key], after[key]), key  # bit-identical
    trained = tm.calibration.variables_to_train
    assert any(not np.array_equal(a, v.numpy()) for a, v in zip(cal_before, trained))
    assert not np.allclose(logits_before, tm.predict_logits(xq))


def test_finetuned_calibration_stays_a_valid_plf(small_binary_model, binary_task):
    (xs, ys), _ = split(binary_task)
    tm = TaskModel(DEN(ModelConfig(monotonicity="increasing", **SMALL)), xs, ys)
    finetune(tm, FinetuneConfig(epochs=3, steps_per_epoch=5, learning_rate=0.2))
    grid = np.linspace(0, 1, 50, dtype=np.float32)[:, None].repeat(tm.n_features, axis=1)
    out = tm.calibration(tf.constant(grid)).numpy()
    assert out.min() >= -1e-5 and out.max() <= 1 + 1e-5
    assert np.all(np.diff(out, axis=0) >= -1e-5)  # monotone


def _halving_loss(tm, scale, bias, seed):
    """Mean cross-entropy over 20 random halvings of the support set (embed one half, score
    the other) with the output map exp(scale) * logit + bias."""
    from den.train.episodes import halve_support

    rng, u, y = np.random.default_rng(seed), tm.unit_support, tm.y_support
    kernel, missing = tm.calibration_parameters()
    losses = []
    for _ in range(20):
        embed, loss_rows = halve_support(y, rng)
        losses.append(float(tm.den.calibration_gradients_fn(
            tf.constant(u[loss_rows]), tf.constant(y[loss_rows]), tf.constant(u[embed]),
            tf.constant(y[embed]), kernel, missing, tf.constant(tm.tuples),
            tf.constant(2, tf.int32), tf.constant(scale), tf.constant(bias))[0]))
    return np.mean(losses)


def test_output_scaling_starts_from_a_platt_fit_and_predicts_through_the_learned_map(
        small_binary_model, binary_task):
    from den.train.finetune import platt_start

    (xs, ys), (xq, _) = split(binary_task)
    tm = TaskModel(small_binary_model, xs, ys)
    scale, bias = platt_start(tm, np.arange(len(ys)), np.random.default_rng(0))
    # the fitted map lowers the loss on fresh halvings, and it is not the identity
    assert (scale, bias) != (0.0, 0.0)
    assert _halving_loss(tm, scale, bias, seed=5) < _halving_loss(tm, 0.0, 0.0, seed=5)
    # labels the features cannot explain: a flatter map
    noise = np.random.default_rng(3).permutation(ys)
    flat_scale, _ = platt_start(TaskModel(small_binary_model, xs, noise), np.arange(len(ys)),
                                np.random.default_rng(0))
    assert flat_scale < scale
    before = small_binary_model.network.weights_dict()
    finetune(tm, FinetuneConfig(epochs=2, steps_per_epoch=3, learning_rate=0.05, output_scaling=True))
    assert all(np.array_equal(v, small_binary_model.network.weights_dict()[k]) for k, v in before.items())
    s, b = float(tm.logit_scale.numpy()), float(tm.logit_bias.numpy())
    assert (s, b) != (0.0, 0.0)
    scaled = tm.predict_logits(xq)
    tm.logit_scale.assign(0.0)
    tm.logit_bias.assign(0.0)
    np.testing.assert_allclose(scaled, np.exp(s) * tm.predict_logits(xq) + b, rtol=1e-5, atol=1e-5)


def test_output_scaling_runs_start_from_their_own_training_rows_platt_fit(small_binary_model, binary_task):
    """Each cross-validated run's epoch-0 snapshot holds platt_start of its training folds
    (seed ``seed + j``, generator ``[seed + j, 1]``); later epochs move the map."""
    from den.train.finetune import cross_validated_runs, platt_start, stratified_folds

    (xs, ys), _ = split(binary_task)
    config = FinetuneConfig(epochs=2, steps_per_epoch=2, learning_rate=0.05, seed=3, ensemble=2,
                            early_stopping=True, output_scaling=True)
    _, _, _, snapshots = cross_validated_runs(small_binary_model, xs, ys, 2, config)
    folds = stratified_folds(ys, 2, np.random.default_rng(3))
    for j, kept in enumerate(snapshots):
        expected = platt_start(TaskModel(small_binary_model, xs, ys), np.nonzero(folds != j)[0],
                               np.random.default_rng([3 + j, 1]))
        np.testing.assert_allclose([kept[0][-2], kept[0][-1]], expected, rtol=1e-5)
        assert not np.allclose([kept[-1][-2], kept[-1][-1]], expected)


def test_output_scaling_needs_the_binary_head(small_multiclass_model):
    task = make_task("mc", 120, 3, 3, seed=2)
    tm = TaskModel(small_multiclass_model, task.x[:50], task.y[:50])
    with pytest.raises(ValueError, match="output_scaling.*binary head.*multiclass"):
        finetune(tm, FinetuneConfig(epochs=1, steps_per_epoch=1, output_scaling=True))
    with pytest.raises(ValueError, match="output_scaling_learning_rate"):
        FinetuneConfig(output_scaling_learning_rate=0)


def test_model_without_calibration_ignores_finetuning(binary_tasks, binary_task):
    model = DEN(ModelConfig(use_calibration=False, **SMALL))
    (xs, ys), (xq, _) = split(binary_task)
    tm = TaskModel(model, xs, ys)
    assert finetune(tm) == []
    assert np.isfinite(tm.predict_logits(xq)).all()


def test_save_load_round_trip_gives_identical_predictions(tmp_path, small_multiclass_model):
    task = make_task("mc", 200, 4, 3, seed=8)
    path = small_multiclass_model.save(tmp_path / "sub" / "model.npz")
    loaded = DEN.load(path)
    assert loaded.config == small_multiclass_model.config
    assert loaded.metadata["pretrained_on"] == small_multiclass_model.metadata["pretrained_on"]
    a = TaskModel(small_multiclass_model, task.x[:50], task.y[:50])
    b = TaskModel(loaded, task.x[:50], task.y[:50])
    assert np.array_equal(a.predict_logits(task.x[50:]), b.predict_logits(task.x[50:]))
    assert not list(tmp_path.glob("sub/.*tmp"))  # no temporary file left


def _resave(path, drop=(), **arrays):
    """Rewrite the model file at ``path`` without the keys ``drop``, with ``arrays`` set."""
    with np.load(path) as data:
        kept = {k: data[k] for k in data.files if k not in drop}
    np.savez(path, **{**kept, **{k: np.array(v) for k, v in arrays.items()}})


def test_model_files_replaced_read_only_newer_or_cut_short(tmp_path):
    """A model file replaced by another of the same size and time is read anew (the cache went by
    path, time and size); DEN.save refuses a read-only file and a path under a file before
    writing; a file of a newer den that this one cannot read says "upgrade den"; a file cut short
    says it looks incomplete."""
    import json
    import os

    from den.errors import DENInputError, DENModelError
    from den.fitting import load_model

    small = dict(h_units=(4,), embedding_dim=4, phi_units=(8,), psi_units=(8,))
    path = tmp_path / "m.npz"
    DEN(ModelConfig(seed=1, **small)).save(path)
    assert load_model(path).config.seed == 1
    before = path.stat()
    DEN(ModelConfig(seed=2, **small)).save(path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # cp -p, or within the clock's tick
    assert path.stat().st_size == before.st_size and load_model(path).config.seed == 2
    os.chmod(path, 0o444)
    try:
        with pytest.raises(DENInputError, match="'.*m.npz' exists and is read-only"):
            DEN(ModelConfig(seed=3, **small)).save(path)
    finally:
        os.chmod(path, 0o644)
    assert DEN.load(path).config.seed == 2
    (tmp_path / "afile").write_text("x")
    with pytest.raises(DENInputError, match="lies under '.*afile', which is a file"):
        DEN(ModelConfig(**small)).save(tmp_path / "afile" / "m.npz")
    arrays = dict(np.load(path))
    config = json.loads(str(arrays["__den_config__"]))
    arrays["__den_config__"] = np.array(json.dumps({**config, "future_option": 1}))
    np.savez(tmp_path / "future.npz", **{**arrays, "__den_version__": np.array("99.0.0")})
    with pytest.raises(DENModelError, match=r"saved by a newer den \(99.0.0, .*cannot read its model "
                                            r"settings .*future_option.*; upgrade den"):
        DEN.load(tmp_path / "future.npz")
    np.savez(tmp_path / "same.npz", **arrays)  # the same version: damaged, as before
    with pytest.raises(DENModelError, match="damaged or from an incompatible version: its model settings"):
        DEN.load(tmp_path / "same.npz")
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[:len(data) // 2])
    with pytest.raises(DENModelError, match="it looks incomplete"):
        DEN.load(tmp_path / "cut.npz")


def test_a_model_file_records_the_den_that_saved_it_and_an_older_one_warns(tmp_path):
    """A file saved before a change to what a saved model predicts (a new feature-tuple rule
    for tasks pooling over a subset of their tuples) loads with a warning that names the
    change; a file of this den, or one the change does not touch, loads without one."""
    import pickle
    import warnings

    from den import __version__
    from den.errors import DENModelError, DENModelWarning
    from den.model import den as den_module

    triples = DEN(ModelConfig(order=3, **{k: v for k, v in SMALL.items() if k != "seed"}))
    path = triples.save(tmp_path / "m.npz")
    with np.load(path) as data:
        assert int(data["__den_computation__"]) == den_module.COMPUTATION
        assert str(data["__den_version__"]) == __version__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DEN.load(path)  # this den's own file: no warning
    _resave(path, drop=("__den_computation__", "__den_version__"))
    with pytest.warns(DENModelWarning, match="does not record the den that saved it. If that was "
                                             "before 2026-11-27, this den predicts otherwise"):
        DEN.load(path)
    _resave(path, __den_computation__=1, __den_version__="0.0.9")
    with pytest.warns(DENModelWarning, match=r"was saved by den 0.0.9 \(computation 1\); this den \(.*, "
                                             rf"computation {den_module.COMPUTATION}\) predicts otherwise "
                                             r"on some tasks \(since 2026-11-27, which feature tuples"):
        DEN.load(path)
    _resave(path, __den_computation__=den_module.COMPUTATION + 1, __den_version__="9.0")
    with pytest.warns(DENModelWarning, match=r"saved by a newer den \(9.0, computation "
                                             rf"{den_module.COMPUTATION + 1}\) than this one"):
        DEN.load(path)
    pairs = DEN(ModelConfig(**SMALL)).save(tmp_path / "pairs.npz")  # order 2, every pair: untouched
    _resave(pairs, drop=("__den_computation__", "__den_version__"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DEN.load(pairs)
    _resave(path, __den_format__="den-model-v2")
    with pytest.raises(DENModelError, match="is a den-model-v2 file, written by another version of den; "
                                            "this one reads den-model-v1 files"):
        DEN.load(path)
    state = triples.__getstate__()
    state["config"] = {**state["config"], "a_later_setting": 1}
    with pytest.raises(DENModelError, match="a pickled DEN that this den .* cannot read"):
        pickle.loads(pickle.dumps(triples)).__setstate__(state)


def test_multiclass_probabilities_and_absent_classes(small_multiclass_model):
    task = make_task("mc", 200, 4, 4, seed=9)
    ys = task.y[:60].copy()
    ys[ys == 2] = 3  # class 2 has no support row
    tm = TaskModel(small_multiclass_model, task.x[:60], ys, n_classes=4)
    proba = tm.predict_proba(task.x[60:])
    assert proba.shape == (140, 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1, atol=1e-6)
    assert proba[:, 2].max() < 1e-6


# -- local embedding (ModelConfig.local_bandwidths) --------------------------------------
def _local_reference(z, z_support, y_support, tuples, bandwidths):
    """l^t(z) written out row by row from its definition (network module docstring)."""
    out = np.zeros((len(z), len(tuples), 2 * len(bandwidths)))
    for q in range(len(z)):
        for t, tup in enumerate(tuples):
            dist = ((z[q, tup][None, :] - z_support[:, tup]) ** 2).sum(axis=1)
            for b, width in enumerate(bandwidths):
                k = np.exp(-dist / (2 * width ** 2))
                ratio = np.log(k[y_support == 1].mean()) - np.log(k[y_support == 0].mean())
                out[q, t, 2 * b] = np.clip(ratio, -10, 10)
                out[q, t, 2 * b + 1] = max(np.log(k.mean()), -10)
    return out


def test_local_features_match_a_numpy_reference():
    model = DEN(ModelConfig(local_bandwidths=(0.15, 0.4), **SMALL))
    rng = np.random.default_rng(3)
    z, z_support = rng.uniform(0, 1, (4, 3)), rng.uniform(0, 1, (7, 3))
    y_support = np.array([0, 1, 1, 0, 1, 0, 0], np.int32)
    tuples = model.tuples(3)
    ours = model.network.local_features(tf.constant(z, tf.float32), tf.constant(z_support, tf.float32),
                                        tf.constant(y_support), tf.constant(tuples)).numpy()
    np.testing.assert_allclose(ours, _local_reference(z, z_support, y_support, tuples, (0.15, 0.4)),
                               rtol=1e-4, atol=1e-4)
    one_class = model.network.local_features(tf.constant(z, tf.float32), tf.constant(z_support, tf.float32),
                                             tf.zeros(7, tf.int32), tf.constant(tuples)).numpy()
    assert np.all(one_class[:, :, 0::2] == 0)  # no class-1 rows: no evidence either way


def test_tuple_multisets_name_each_tuple_by_its_sorted_features():
    """The kernel work is done once per multiset of features: every tuple maps to the sorted
    copy of itself, and no multiset repeats (r = 3, d = 5: 125 ordered tuples, 35 multisets)."""
    from den.model.network import _tuple_multisets

    tuples = feature_tuples(5, 3, seed=0, min_tuples=625)
    multisets, index = (a.numpy() for a in _tuple_multisets(tf.constant(tuples)))
    assert tuples.shape == (125, 3) and multisets.shape == (35, 3)
    np.testing.assert_array_equal(multisets[index], np.sort(tuples, axis=1))
    assert len({tuple(t) for t in multisets.tolist()}) == 35
    wide = np.array([[0] * 8, [0] * 7 + [2], [0] * 7 + [511], [511] + [0] * 7], np.int32)  # r = 8, d = 512
    multisets, index = (a.numpy() for a in _tuple_multisets(tf.constant(wide)))
    np.testing.assert_array_equal(multisets[index], np.sort(wide, axis=1))
    assert len(multisets) == 3


@pytest.mark.parametrize("balanced", [False, True])
def test_kernel_work_per_multiset_equals_the_work_per_tuple_with_gradients(balanced):
    """The local embedding and tuple relevance of all tuples at once (their kernels computed
    once per feature multiset) equal, values and gradients to the calibrated rows, the same
    computed one tuple at a time (where nothing is shared)."""
    config = ModelConfig(order=3, local_bandwidths=(0.1, 0.3), tuple_relevance=True,
                         balanced_relevance=balanced, **SMALL)
    net = DEN(config).network
    rng = np.random.default_rng(4)
    z = tf.constant(rng.uniform(0, 1, (6, 4)), tf.float32)
    z_support = tf.constant(rng.uniform(0, 1, (9, 4)), tf.float32)
    y_support = tf.constant([0, 1, 1, 0, 1, 0, 0, 1, 1], tf.int32)
    tuples = feature_tuples(4, 3, seed=0, min_tuples=625)  # 64 ordered triples, 20 multisets
    w_local = tf.constant(rng.normal(size=(6, len(tuples), 4)), tf.float32)
    w_relevance = tf.constant(rng.normal(size=(len(tuples), 2)), tf.float32)

    def values_and_gradients(one_at_a_time):
        with tf.GradientTape() as tape:
            tape.watch([z, z_support])
            parts = [tuples[t:t + 1] for t in range(len(tuples))] if one_at_a_time else [tuples]
            local = tf.concat([net.local_features(z, z_support, y_support, tf.constant(p))
                               for p in parts], axis=1)
            relevance = tf.concat([net.tuple_relevance(z_support, y_support, tf.constant(p))
                                   for p in parts], axis=0)
            loss = tf.reduce_sum(local * w_local) + tf.reduce_sum(relevance * w_relevance)
        return [local, relevance, *tape.gradient(loss, [z, z_support])]

    for shared, alone in zip(values_and_gradients(False), values_and_gradients(True)):
        np.testing.assert_allclose(shared.numpy(), alone.numpy(), rtol=1e-5, atol=1e-5)


def test_local_embedding_in_prediction_equals_the_training_path(binary_task):
    """TaskModel's compiled context/query pass gives the local embedding the calibrated support
    rows: its logits equal one call of the network on calibrated rows, and depend on phi_l."""
    model = DEN(ModelConfig(local_bandwidths=(0.1, 0.3), **SMALL))
    (xs, ys), (xq, _) = split(binary_task)
    task_model = TaskModel(model, xs, ys)
    _randomise_calibration(task_model, 5)
    kernel, missing = task_model.calibration_parameters()
    z_s = calibrate(tf.constant(task_model.unit_support), kernel, missing)
    z_q = calibrate(tf.constant(to_unit(xq, task_model.keypoints)), kernel, missing)
    direct = model.network.logits(z_q, z_s, tf.constant(task_model.y_support), tf.constant(task_model.tuples),
                                  tf.constant(2)).numpy()
    np.testing.assert_allclose(task_model.predict_logits(xq), direct, atol=1e-4)
    model.network.phi_l.assign(tf.zeros_like(model.network.phi_l))
    task_model.invalidate()
    assert not np.allclose(task_model.predict_logits(xq), direct, atol=1e-3)
    with pytest.raises(ValueError, match="binary head"):
        ModelConfig(head="multiclass", local_bandwidths=(0.1,))


def test_tuple_attention_starts_as_the_mean_and_weights_tuples_by_their_embedding(binary_task):
    (xs, ys), (xq, _) = split(binary_task)
    plain = DEN(ModelConfig(**SMALL))
    attending = DEN(ModelConfig(tuple_attention=True, **SMALL))
    attending.network.set_weights_dict({**plain.network.weights_dict(),
                                        "den/attention": np.zeros(SMALL["phi_units"][0], np.float32)})
    a, b = TaskModel(plain, xs, ys), TaskModel(attending, xs, ys, keypoints=None)
    np.testing.assert_allclose(a.predict_logits(xq), b.predict_logits(xq), atol=1e-5)
    attending.network.attention.assign(np.random.default_rng(1).normal(0, 3, SMALL["phi_units"][0]))
    b.invalidate()
    assert not np.allclose(a.predict_logits(xq), b.predict_logits(xq), atol=1e-3)


def test_gated_pooling_is_the_mean_when_the_gate_is_open_and_reads_the_gate_from_the_support(binary_task):
    """Gated pooling (ModelConfig.gated_pooling) with its gate held at 1 is the paper's mean
    (same predictions as a plain model with the same other weights); held at 0 with a sharp
    beta it pools by the maximum over tuples; and its gate differs between support sets."""
    (xs, ys), (xq, _) = split(binary_task)
    plain = DEN(ModelConfig(**SMALL))
    gated = DEN(ModelConfig(gated_pooling=True, **SMALL))
    width, last = SMALL["phi_units"][0], SMALL["phi_units"][-1]
    open_gate = {"den/gate_kernel": np.zeros((width, last), np.float32),
                 "den/gate_bias": np.full(last, 30.0, np.float32),
                 "den/pool_rho": np.zeros(last, np.float32)}
    gated.network.set_weights_dict({**plain.network.weights_dict(), **open_gate})
    a, b = TaskModel(plain, xs, ys), TaskModel(gated, xs, ys)
    np.testing.assert_allclose(a.predict_logits(xq), b.predict_logits(xq), atol=1e-5)

    net = gated.network
    z = tf.constant(np.random.default_rng(0).uniform(0, 1, (7, xs.shape[1])).astype(np.float32))
    tuples = tf.constant(gated.tuples(xs.shape[1]))
    bias = tf.constant(np.random.default_rng(1).normal(0, 1, (len(tuples), width)).astype(np.float32))
    net.gate.bias.assign(np.full(last, -30.0, np.float32))
    net.pool_rho.assign(np.full(last, 200.0, np.float32))  # beta = 200
    hidden = _phi_hidden(net, z, bias, tuples)  # (7, T, P)
    np.testing.assert_allclose(net.pooled(z, bias, tuples).numpy(),
                               net.phi_out(tf.reduce_max(hidden, axis=1)).numpy(), atol=0.05)

    net.gate.kernel.assign(np.random.default_rng(2).normal(0, 1, (width, last)).astype(np.float32))
    net.gate.bias.assign(np.zeros(last, np.float32))
    gates = [tf.sigmoid(net.gate(tf.reduce_mean(tf.nn.relu(net.tuple_bias(
        net.embedding(tf.constant(x, tf.float32), tf.constant(y), tuples))), axis=0, keepdims=True))).numpy()
        for x, y in ((np.clip(xs / 10, 0, 1), ys), (np.clip(xs / 10, 0, 1), 1 - ys))]
    assert np.abs(gates[0] - gates[1]).max() > 1e-3
    with pytest.raises(ValueError, match="set one"):
        ModelConfig(gated_pooling=True, tuple_attention=True)


def test_tuple_relevance_reads_which_tuples_separate_the_support_labels(binary_task):
    """Tuple relevance (ModelConfig.tuple_relevance): on a support set whose label is set by
    feature 0, tuples holding feature 0 score far above the others, and every tuple scores
    near 0 when the labels are shuffled (a leave-one-out margin, so a row's own label never
    counts). With its kernel phi_q at zero the model predicts as the same model without it."""
    rng = np.random.default_rng(0)
    z = rng.uniform(0, 1, (60, 3)).astype(np.float32)
    y = (z[:, 0] > 0.5).astype(np.int32)
    config = dict(local_bandwidths=(0.05, 0.2), **SMALL)
    net = DEN(ModelConfig(tuple_relevance=True, **config)).network
    tuples = feature_tuples(3, 2, 0)
    relevance = net.tuple_relevance(tf.constant(z), tf.constant(y), tf.constant(tuples)).numpy()  # (T, B)
    assert relevance.shape == (len(tuples), 2) and np.all(np.abs(relevance) <= 1)
    has_0 = (tuples == 0).any(axis=1)
    assert relevance[has_0].min() > 0.4 and np.abs(relevance[~has_0]).max() < 0.1
    shuffled = net.tuple_relevance(tf.constant(z), tf.constant(rng.permutation(y)),
                                   tf.constant(tuples)).numpy()
    assert np.abs(shuffled).mean() < 0.06 and np.abs(shuffled).max() < 0.25

    (xs, ys), (xq, _) = split(binary_task)
    plain = DEN(ModelConfig(**config))
    relevant = DEN(ModelConfig(tuple_relevance=True, **config))
    zero = {"den/phi_q": np.zeros((2, SMALL["phi_units"][0]), np.float32)}
    relevant.network.set_weights_dict({**plain.network.weights_dict(), **zero})
    a, b = TaskModel(plain, xs, ys), TaskModel(relevant, xs, ys)
    np.testing.assert_allclose(a.predict_logits(xq), b.predict_logits(xq), atol=1e-5)
    relevant.network.phi_q.assign(np.random.default_rng(1).normal(0, 3, (2, SMALL["phi_units"][0])))
    b.invalidate()
    assert not np.allclose(a.predict_logits(xq), b.predict_logits(xq), atol=1e-3)
    with pytest.raises(ValueError, match="needs local_bandwidths"):
        ModelConfig(tuple_relevance=True)


def test_balanced_relevance_counts_a_rare_class_as_much_as_the_common_one():
    """ModelConfig.balanced_relevance: with 6 positive rows among 60, which feature 0 marks
    out (and feature 1 does not), the plain mean over rows is 90% the negatives' margins;
    weighing each class by one half moves feature 0's relevance (the positives' margins,
    with 5 other positives to lean on, are smaller) and leaves feature 1's near 0. On a
    balanced support set both weightings agree. (test_equations pins the formula.)"""
    rng = np.random.default_rng(3)
    z = rng.uniform(0, 1, (60, 2)).astype(np.float32)
    y = np.zeros(60, np.int32)
    y[np.argsort(z[:, 0])[-6:]] = 1  # the 6 rows with the largest feature 0
    config = dict(local_bandwidths=(0.05, 0.2), tuple_relevance=True, **SMALL)
    plain = DEN(ModelConfig(**config)).network
    balanced = DEN(ModelConfig(balanced_relevance=True, **config)).network
    tuples = feature_tuples(2, 1, 0)  # (0,), (1,)
    q_plain = plain.tuple_relevance(tf.constant(z), tf.constant(y), tf.constant(tuples)).numpy()
    q_balanced = balanced.tuple_relevance(tf.constant(z), tf.constant(y), tf.constant(tuples)).numpy()
    assert np.all(q_balanced[0] > 0.2) and np.all(np.abs(q_balanced[0] - q_plain[0]) > 0.03)
    assert np.abs(q_balanced[1]).max() < 0.15 and np.abs(q_plain[1]).max() < 0.15  # feature 1
    even = (z[:, 0] > np.median(z[:, 0])).astype(np.int32)  # 30 and 30
    np.testing.assert_allclose(
        balanced.tuple_relevance(tf.constant(z), tf.constant(even), tf.constant(tuples)).numpy(),
        plain.tuple_relevance(tf.constant(z), tf.constant(even), tf.constant(tuples)).numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="needs tuple_relevance"):
        ModelConfig(local_bandwidths=(0.1,), balanced_relevance=True)


def test_kernel_pseudo_rows_shrink_the_kernel_log_ratios_where_no_support_row_lies_near():
    """ModelConfig.kernel_pseudo_rows: the local embedding's log ratio is log (S_1 + a pi_1) -
    log (S_0 + a pi_0) - log (pi_1 / pi_0) (S_c absolute kernel sums, pi_c class rates),
    against a NumPy reference; a query far from every support row gets 0 where the plain
    ratio is a full-strength nearest-row vote, and with many rows near the shrinkage fades.
    Tuple relevance's leave-one-out ratios shrink alike (the tuples of the feature that marks the
    labels stay relevant); the level outputs do not change."""
    rng = np.random.default_rng(5)
    z_support = rng.uniform(0, 1, (40, 3)).astype(np.float32)
    y_support = (z_support[:, 0] > 0.5).astype(np.int32)
    far = np.array([[3.0, 3.0, 3.0]], np.float32)  # no support row near at any bandwidth
    z = np.concatenate([rng.uniform(0, 1, (5, 3)).astype(np.float32), far])
    tuples = feature_tuples(3, 3, seed=0, min_tuples=625)
    config = dict(order=3, local_bandwidths=(0.1, 0.3), tuple_relevance=True, **SMALL)
    plain = DEN(ModelConfig(**config)).network
    shrunk = DEN(ModelConfig(kernel_pseudo_rows=1.0, **config)).network
    args = (tf.constant(z), tf.constant(z_support), tf.constant(y_support), tf.constant(tuples))
    ours, theirs = shrunk.local_features(*args).numpy(), plain.local_features(*args).numpy()
    rate = y_support.mean()
    for t in (0, len(tuples) - 1):
        for b, bandwidth in enumerate((0.1, 0.3)):
            cols = list(tuples[t])
            dist = ((z[:, None, cols] - z_support[None, :, cols]) ** 2).sum(-1)
            kernel = np.exp(-dist / (2 * bandwidth ** 2))
            s1, s0 = kernel[:, y_support == 1].sum(1), kernel[:, y_support == 0].sum(1)
            expected = np.log(s1 + rate) - np.log(s0 + 1 - rate) - np.log(rate / (1 - rate))
            np.testing.assert_allclose(ours[:, t, 2 * b], expected, atol=1e-4)
    np.testing.assert_allclose(ours[:, :, 1::2], theirs[:, :, 1::2], atol=1e-5)  # levels unchanged
    assert np.abs(ours[-1, :, 0::2]).max() < 1e-4 and np.abs(theirs[-1, :, 0::2]).max() > 1.0
    faint = DEN(ModelConfig(kernel_pseudo_rows=1e-6, **config)).network.local_features(*args).numpy()
    near = np.abs(theirs[:-1, :, 2]) < 5  # the wide bandwidth, away from the clip
    np.testing.assert_allclose(faint[:-1, :, 2][near], theirs[:-1, :, 2][near], atol=1e-3)
    q_shrunk = shrunk.tuple_relevance(*args[1:]).numpy()
    q_plain = plain.tuple_relevance(*args[1:]).numpy()
    marked = np.array([0 in t for t in tuples])  # tuples that hold feature 0, which marks the labels
    assert np.all(q_shrunk[marked] > 0) and np.all(q_plain[marked] > 0)
    assert np.abs(q_shrunk - q_plain).max() > 0.01
    with pytest.raises(ValueError, match="kernel_pseudo_rows must be >= 0"):
        ModelConfig(local_bandwidths=(0.1,), kernel_pseudo_rows=-1.0)
    with pytest.raises(ValueError, match="needs local_bandwidths"):
        ModelConfig(kernel_pseudo_rows=1.0)


def _phi_hidden(net, z, bias, tuples):
    """phi's last hidden layer on every (row, tuple): (n, T, P), as ``DENNetwork.pooled`` forms it."""
    n, t = z.shape[0], tuples.shape[0]
    z_t = tf.reshape(tf.gather(z, tuples, axis=1), [n * t, -1])
    a = tf.reshape(tf.nn.relu(tf.reshape(tf.matmul(z_t, net.phi_z), [n, t, -1]) + bias), [n * t, -1])
    for layer in net.phi_layers:
        a = layer(a)
    return tf.reshape(a, [n, t, -1])


# -- eager small predictions -----------------------------------------------------------
@pytest.mark.parametrize("config", [
    ModelConfig(order=3, local_bandwidths=(0.1, 0.3), tuple_relevance=True, gated_pooling=True,
                use_calibration=False, **SMALL),
    ModelConfig(head="multiclass", max_classes=4, **SMALL)])
def test_small_predictions_run_eagerly_with_the_compiled_results(config, monkeypatch):
    """A small prediction skips tracing (``DEN.prediction_functions``) and scores as the
    compiled functions do; a prediction of ``EAGER_TUPLE_ROWS`` or more traces them."""
    import den.model.den as den_module

    task = make_task("eager", 160, 5, seed=4, n_classes=2 if config.head == "binary" else 3)
    (xs, ys), (xq, _) = split(task)
    den = DEN(config)
    tuple_rows = len(xq) * len(den.tuples(5))
    got = [TaskModel(den, xs, ys).predict_logits(xq) for _ in range(2)]
    assert den.query_fn.experimental_get_tracing_count() == 0
    np.testing.assert_array_equal(got[0], got[1])
    monkeypatch.setattr(den_module, "EAGER_TUPLE_ROWS", tuple_rows)  # now just too large
    want = TaskModel(den, xs, ys).predict_logits(xq)
    assert den.query_fn.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)


def test_the_programmatic_api_names_what_is_wrong(tmp_path, binary_task):
    """TaskModel, finetune, pretrain, make_task, DEN.load and DEN.save used directly (a
    researcher's path, not DENClassifier): each bad argument is a DENInputError/ValueError that
    names it, not a raw numpy or TensorFlow error or a silently meaningless model."""
    import contextlib
    import io

    from den.errors import DENInputError, DENModelError
    from den.train.pretrain import PretrainConfig, pretrain

    model = DEN(ModelConfig(**SMALL))
    (xs, ys), (xq, _) = split(binary_task)
    bad_models = [
        (lambda: TaskModel("m.npz", xs, ys), "TaskModel needs a pre-trained DEN .* not a str"),
        (lambda: TaskModel(model, xs, ys - 1), "class codes 0..L-1 of at least one row, got -1"),
        (lambda: TaskModel(model, xs, np.zeros(len(ys), int)),
         "has 1 class\\(es\\); DEN needs .* two classes"),
        (lambda: TaskModel(model, xs, np.where(ys == 1, np.nan, 0.0)), "missing or fractional"),
        (lambda: TaskModel(model, xs, ys.astype(str)), "integer class codes 0..L-1, got <U"),
        (lambda: TaskModel(model, xs, ys * 3, n_classes=2), "0..n_classes-1 = 0..1, got 3"),
        (lambda: TaskModel(model, np.where(np.arange(len(xs))[:, None] == 0, np.inf, xs), ys),
         "support feature 0 has infinite values"),
        (lambda: TaskModel(model, xs, ys, x_unlabeled=xq[:, :1]), "x_unlabeled must have the support's"),
    ]
    for make, message in bad_models:
        with pytest.raises(DENInputError, match=message):
            make()
    tm = TaskModel(model, xs, ys.astype(float))  # whole-number floats are class codes
    with pytest.raises(DENInputError, match="chunk_rows must be an integer >= 1, got 3.5"):
        tm.predict_proba(xq, chunk_rows=3.5)
    with pytest.raises(DENInputError, match="finetune's config must be a FinetuneConfig .* not a dict"):
        finetune(tm, {"epochs": 1})
    with pytest.raises(DENInputError, match="would ignore ensemble, network_steps; use "
                                            "den.train.finetune.fit_task"):
        finetune(tm, FinetuneConfig(ensemble=2, network_steps=5))
    from den.data.tasks import Task

    with pytest.raises(DENInputError, match="task 's': labels must be integer class codes 0..L-1, got <U"):
        Task("s", xs, ys.astype(str))  # the one check of class codes, shared with TaskModel
    assert Task("s", xs, ys.astype(float)).y.dtype == np.int32
    task = make_task("t", 60, 3, seed=1)
    with pytest.raises(DENInputError, match="got the one task 't': pass \\[task\\]"):
        pretrain(task, ModelConfig(**SMALL), PretrainConfig(steps=1))
    with pytest.raises(ValueError, match="progress must be a stream, None .* got 'stdout2'"):
        pretrain([task], ModelConfig(**SMALL), PretrainConfig(steps=1), progress="stdout2")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        pretrain([task], ModelConfig(**SMALL), PretrainConfig(steps=1, query_rows=8, support_rows=8),
                 progress="stdout")
    assert "pretrain" in out.getvalue()
    with pytest.raises(ValueError, match="at least 1 row and 1 feature, got n_rows=10, n_features=0"):
        make_task("x", 10, 0, seed=0)
    text = tmp_path / "notes.npz"
    text.write_text("not a model")
    with pytest.raises(DENModelError, match="notes.npz' is not a DEN model file") as error:
        DEN.load(text)
    assert "allow_pickle" not in str(error.value)
    with pytest.raises(DENInputError, match="is a directory; give the path of a file"):
        model.save(tmp_path)

