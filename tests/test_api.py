"""DENClassifier: scikit-learn behaviour, mixed-type tables and the documented errors."""

import pickle
import re
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import cross_val_score

from den.api import DENClassifier
from den.data.synthetic import make_task
from den.errors import DENInputError, DENInputWarning, DENModelError


def _frame(task):
    frame = pd.DataFrame(task.x, columns=[f"num{j}" for j in range(task.n_features)])
    rng = np.random.default_rng(0)
    frame["flag"] = frame["num0"] > frame["num0"].median()
    frame["colour"] = rng.choice(["red", "green", None], len(frame))
    frame.loc[::7, "num1"] = np.nan
    return frame


@pytest.fixture()
def table():
    task = make_task("tab", 160, 4, seed=21)
    labels = np.where(task.y == 1, "churn", "stay")
    return _frame(task), labels


def test_fit_predict_on_a_mixed_table_with_string_labels(small_binary_model, table):
    frame, labels = table
    clf = DENClassifier(model=small_binary_model, preset="paper", finetune_epochs=1,
                        finetune_steps_per_epoch=2)
    clf.fit(frame[:50], labels[:50], X_unlabeled=frame[50:])
    assert list(clf.classes_) == ["churn", "stay"]
    proba = clf.predict_proba(frame[50:])
    assert proba.shape == (110, 2) and np.allclose(proba.sum(axis=1), 1)
    pred = clf.predict(frame[50:])
    assert set(pred) <= {"churn", "stay"}
    assert np.array_equal(pred, clf.classes_[proba.argmax(axis=1)])
    # columns may come in another order; an unseen category is treated as missing
    shuffled = frame[50:][list(reversed(frame.columns))].copy()
    shuffled.iloc[0, shuffled.columns.get_loc("colour")] = "purple"
    assert np.isfinite(clf.predict_proba(shuffled)).all()
    np.testing.assert_allclose(clf.predict_proba(shuffled)[1:], proba[1:], atol=1e-6)


def test_numpy_input_and_model_path(tmp_path, small_binary_model):
    path = small_binary_model.save(tmp_path / "m.npz")
    task = make_task("np", 120, 3, seed=2)
    clf = DENClassifier(model=str(path), variant="no_finetune").fit(task.x[:50], task.y[:50])
    assert clf.finetune_losses_ == []
    assert clf.predict(task.x[50:]).shape == (70,)
    assert clf.n_features_in_ == 3


def test_finetune_ensemble_averages_its_runs(small_binary_model, table):
    frame, labels = table
    kwargs = dict(model=small_binary_model, preset="paper", finetune_epochs=2, finetune_steps_per_epoch=2,
                  finetune_learning_rate=0.05, seed=4)
    clf = DENClassifier(finetune_ensemble=3, **kwargs).fit(frame[:50], labels[:50], X_unlabeled=frame[50:])
    assert len(clf.task_models_) == 3 and clf.task_model_ is clf.task_models_[0]
    runs = [DENClassifier(**{**kwargs, "seed": 4 + j}).fit(frame[:50], labels[:50], X_unlabeled=frame[50:])
            for j in range(3)]
    probas = [run.predict_proba(frame[50:]) for run in runs]
    assert not np.allclose(probas[0], probas[2])
    np.testing.assert_allclose(clf.predict_proba(frame[50:]), np.mean(probas, axis=0), atol=1e-6)
    np.testing.assert_allclose(clf.finetune_losses_, runs[0].finetune_losses_, rtol=1e-6)


def test_finetune_early_stopping_chooses_one_epoch_count_for_all_runs(small_binary_model, table):
    frame, labels = table
    clf = DENClassifier(model=small_binary_model, preset="paper", finetune_epochs=4,
                        finetune_steps_per_epoch=2,
                        finetune_learning_rate=0.05, finetune_ensemble=3, finetune_early_stopping=True,
                        seed=4).fit(frame[:50], labels[:50])
    chosen = {model.finetune_epochs for model in clf.task_models_}
    assert len(clf.task_models_) == 3 and len(chosen) == 1 and chosen <= set(range(5))
    assert len(clf.finetune_losses_) == 8  # every run trains all epochs, then keeps the chosen one
    assert clf.predict_proba(frame[50:]).shape == (len(frame) - 50, 2)
    # a tolerance of many standard errors keeps the pre-trained PLFs: DEN w/o fine-tuning
    kept = clf.set_params(finetune_early_stopping_tolerance=1e6).fit(frame[:50], labels[:50])
    assert [model.finetune_epochs for model in kept.task_models_] == [0]  # one model: the runs agree
    frozen = DENClassifier(model=small_binary_model, variant="no_finetune").fit(frame[:50], labels[:50])
    np.testing.assert_allclose(kept.predict_proba(frame[50:]), frozen.predict_proba(frame[50:]), atol=1e-6)
    # the message names the keywords given, not FinetuneConfig's fields
    with pytest.raises(ValueError, match="^finetune_early_stopping cross.* finetune_ensemble >= 2"):
        DENClassifier(model=small_binary_model, preset="paper",
                      finetune_early_stopping=True).fit(frame[:50], labels[:50])


def test_finetune_output_scaling_with_early_stopping_restores_each_runs_map(small_binary_model, table):
    frame, labels = table
    clf = DENClassifier(model=small_binary_model, preset="paper", finetune_epochs=4,
                        finetune_steps_per_epoch=2,
                        finetune_learning_rate=0.05, finetune_ensemble=3, finetune_early_stopping=True,
                        finetune_output_scaling=True, seed=4).fit(frame[:50], labels[:50])
    maps = {(float(m.logit_scale.numpy()), float(m.logit_bias.numpy())) for m in clf.task_models_}
    assert (0.0, 0.0) not in maps and len(maps) == len(clf.task_models_)  # each fold's own fit
    proba = clf.predict_proba(frame[50:])
    assert proba.shape == (len(frame) - 50, 2) and np.all((proba > 0) & (proba < 1))
    plain = DENClassifier(**{**clf.get_params(), "finetune_output_scaling": False})
    plain.fit(frame[:50], labels[:50])
    assert all((float(m.logit_scale.numpy()), float(m.logit_bias.numpy())) == (0.0, 0.0)
               for m in plain.task_models_)


def test_finetune_feature_counts_reach_the_task_models(small_binary_model):
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 300)
    frame = pd.DataFrame(rng.normal(size=(300, 8)), columns=[f"c{j}" for j in range(8)])
    frame["c5"] += 2.0 * y  # the one informative column among eight
    params = dict(model=small_binary_model, preset="paper", finetune_epochs=2, finetune_steps_per_epoch=2,
                  finetune_learning_rate=0.05, finetune_ensemble=3, finetune_early_stopping=True, seed=4)
    clf = DENClassifier(**params, finetune_feature_counts=(1,)).fit(frame[:50], y[:50])
    assert [m.features.tolist() for m in clf.task_models_] == [[5]] * 3
    assert clf.predict_proba(frame[50:]).shape == (250, 2)
    with pytest.raises(ValueError, match="feature_counts.*early_stopping"):
        DENClassifier(**{**params, "finetune_early_stopping": False},
                      finetune_feature_counts=(1,)).fit(frame[:50], y[:50])


def test_sklearn_params_and_clone(small_binary_model):
    clf = DENClassifier(model=small_binary_model, preset="paper", finetune_epochs=3)
    assert clf.get_params()["finetune_epochs"] == 3
    clf.set_params(finetune_learning_rate=0.5, variant="no_finetune")
    copy = clone(clf)
    assert copy.get_params()["finetune_learning_rate"] == 0.5
    assert copy.variant == "no_finetune"


def test_more_classes_than_a_multiclass_head_supports_names_both_ways_out(small_multiclass_model):
    n = small_multiclass_model.config.n_classes_supported
    task = make_task("many", 120, 3, seed=5)
    labels = np.arange(120) % (n + 1)
    with pytest.raises(DENInputError, match=rf"has {n + 1} classes but the model supports at most {n} "
                                            rf"\(multiclass head\).*`den pretrain --head multiclass "
                                            rf"--max-classes {n + 1}`\), or one with the binary head"):
        DENClassifier(model=small_multiclass_model, preset="fast").fit(task.x, labels)


def test_multiclass_labels_map_back(small_multiclass_model):
    task = make_task("mc", 150, 4, 3, seed=4)
    names = np.array(["a", "b", "c"])[task.y]
    clf = DENClassifier(model=small_multiclass_model, preset="paper", finetune_epochs=1,
                        finetune_steps_per_epoch=1)
    clf.fit(task.x[:60], names[:60])
    assert clf.predict_proba(task.x[60:]).shape == (90, 3)
    assert set(clf.predict(task.x[60:])) <= {"a", "b", "c"}


@pytest.mark.parametrize("case", ["binary", "multiclass_head", "one_vs_rest"])
def test_a_fitted_classifier_survives_pickle_and_joblib(case, tmp_path, small_binary_model,
                                                       small_multiclass_model):
    model = small_multiclass_model if case == "multiclass_head" else small_binary_model
    task = make_task("saved", 150, 4, 2 if case == "binary" else 3, seed=8)
    names = np.array(["a", "b", "c"])[task.y]
    options = dict(finetune_output_scaling=True) if case == "binary" else {}
    clf = DENClassifier(model=model, preset="paper", finetune_epochs=1, finetune_steps_per_epoch=2,
                        finetune_learning_rate=0.05, **options).fit(task.x[:60], names[:60])
    assert clf.one_vs_rest_ == (case == "one_vs_rest")
    size = len(pickle.dumps(clf))
    expected = clf.predict_proba(task.x[60:])
    assert len(pickle.dumps(clf)) == size  # the support context a prediction caches is not saved
    joblib.dump(clf, tmp_path / "clf.joblib")
    for loaded in (pickle.loads(pickle.dumps(clf)), joblib.load(tmp_path / "clf.joblib")):
        assert loaded.task_model_.den is not model  # a rebuilt model, not the one in memory
        np.testing.assert_array_equal(loaded.predict_proba(task.x[60:]), expected)
        np.testing.assert_array_equal(loaded.predict(task.x[60:]), clf.predict(task.x[60:]))
        assert len({id(m.den) for m in loaded.task_models_}) == 1  # still one shared DEN


def test_binary_decision_function_is_one_score_per_row_whatever_the_head(small_binary_model,
                                                                          small_multiclass_model):
    task = make_task("two", 160, 3, seed=13)
    names = np.array(["no", "yes"])[task.y]
    for model in (small_binary_model, small_multiclass_model):
        clf = DENClassifier(model=model).fit(task.x[:60], names[:60])
        scores = clf.decision_function(task.x[60:])
        proba = clf.predict_proba(task.x[60:])
        assert scores.shape == (100,), model.config.head
        # the score of classes_[1]: its log-odds
        np.testing.assert_allclose(scores, np.log(proba[:, 1] / proba[:, 0]), atol=1e-4)
        auc = cross_val_score(DENClassifier(model=model), task.x, names, cv=2, scoring="roc_auc")
        assert auc.shape == (2,) and np.isfinite(auc).all()


# -- documented errors ----------------------------------------------------------------------------
def test_support_with_one_class(small_binary_model, table):
    frame, _ = table
    with pytest.raises(DENInputError, match="single class"):
        DENClassifier(model=small_binary_model).fit(frame[:50], ["stay"] * 50)


def test_support_without_rows(small_binary_model, table):
    frame, labels = table
    with pytest.raises(DENInputError, match="the support set has no rows"):
        DENClassifier(model=small_binary_model).fit(frame[:0], labels[:0])


def test_prediction_before_fit_is_sklearns_not_fitted_error(table):
    frame, _ = table
    for method in ("predict", "predict_proba", "decision_function"):
        with pytest.raises(NotFittedError, match="not fitted yet; call fit"):
            getattr(DENClassifier(), method)(frame)


def test_sparse_and_complex_input_are_errors(small_binary_model):
    task = make_task("sp", 120, 3, seed=3)
    with pytest.raises(DENInputError, match="scipy.sparse csr_matrix; DEN needs dense input") as error:
        DENClassifier(model=small_binary_model).fit(scipy.sparse.csr_matrix(task.x[:60]), task.y[:60])
    assert "OneHotEncoder(sparse_output=False)" in str(error.value)  # the way out in a Pipeline
    with pytest.raises(DENInputError, match="labels are a scipy.sparse"):
        DENClassifier(model=small_binary_model).fit(task.x[:60], scipy.sparse.csr_matrix(task.y[:60]))
    clf = DENClassifier(model=small_binary_model).fit(task.x[:60], task.y[:60])
    with pytest.raises(DENInputError, match="query features is a scipy.sparse"):
        clf.predict(scipy.sparse.csr_matrix(task.x[60:]))
    complex_x = task.x[:60].astype(complex)
    complex_x[5, 1] += 1j
    with pytest.raises(DENInputError, match="column 'x0' has complex numbers"):
        DENClassifier(model=small_binary_model).fit(complex_x, task.y[:60])
    frame = pd.DataFrame({"a": task.x[:60, 0], "b": [1 + 2j] + [2.0] * 59})
    with pytest.raises(DENInputError, match="column 'b' has complex numbers"):
        DENClassifier(model=small_binary_model).fit(frame.astype({"b": object}), task.y[:60])


def test_too_few_support_rows(small_binary_model, table):
    frame, labels = table
    with pytest.raises(DENInputError, match="at least 10"):
        DENClassifier(model=small_binary_model).fit(frame[:6], labels[:6])


def test_infinite_values_name_the_column(small_binary_model, table):
    frame, labels = table
    frame = frame.copy()
    frame.loc[3, "num2"] = np.inf
    with pytest.raises(DENInputError, match="'num2'.*infinite"):
        DENClassifier(model=small_binary_model).fit(frame[:50], labels[:50])


def test_values_beyond_float32_range_name_the_column(small_binary_model, table):
    frame, labels = table
    clf = DENClassifier(model=small_binary_model).fit(frame[:50], labels[:50])
    frame = frame.astype({"num0": np.float64, "num2": np.float64})  # float32 would hold inf
    query = frame[50:].copy()
    query.loc[60, "num0"] = -1e39  # finite in float64, infinite in float32
    with pytest.raises(DENInputError, match="query features column 'num0' has values beyond float32 range"):
        clf.predict(query)
    support = frame[:50].copy()
    support.loc[3, "num2"] = 1e39
    with pytest.raises(DENInputError, match="'num2' has values beyond float32 range"):
        DENClassifier(model=small_binary_model).fit(support, labels[:50])
    support.loc[3, "num2"] = 3e38  # within range: fine
    DENClassifier(model=small_binary_model).fit(support, labels[:50])


def test_query_columns_must_match(small_binary_model, table):
    frame, labels = table
    clf = DENClassifier(model=small_binary_model, variant="no_finetune").fit(frame[:50], labels[:50])
    with pytest.raises(DENInputError, match=r"missing \['colour'\], unexpected \['color'\]"):
        clf.predict(frame[50:].rename(columns={"colour": "color"}))
    with pytest.raises(DENInputError, match="has 2 columns"), \
            pytest.warns(UserWarning, match="X does not have valid feature names"):
        clf.predict(np.zeros((3, 2)))


def test_a_class_too_small_to_fine_tune_one_against_the_rest_is_named(small_binary_model):
    """The paper's fine-tuning of a class's "this class or not" model needs two rows of the
    class: a class of one support row keeps the pre-trained PLFs, with a warning that names it
    (and only it); the other classes are fine-tuned."""
    task = make_task("four", 60, 3, 3, seed=5)
    labels = np.array(["a", "b", "c"])[task.y].astype(object)
    labels[0] = "lone"
    with pytest.warns(DENInputWarning, match=r"support labels: class\(es\) 'lone' \(1\) have fewer than "
                                             r"the 2 support rows that fine-tuning needs"):
        clf = DENClassifier(model=small_binary_model, preset="paper", finetune_epochs=1,
                            finetune_steps_per_epoch=2).fit(task.x, labels)
    epochs = {label: models[0].finetune_epochs for label, models in zip(clf.classes_, clf.class_models_)}
    assert epochs == {"a": 1, "b": 1, "c": 1, "lone": 0}


def test_more_classes_than_the_multiclass_head_supports(small_multiclass_model):
    task = make_task("seven", 140, 3, 7, seed=5)
    with pytest.raises(DENInputError, match="7 classes.*at most 6"):
        DENClassifier(model=small_multiclass_model).fit(task.x, task.y)


def test_a_binary_model_meets_more_classes_one_against_the_rest(small_binary_model):
    task = make_task("three", 150, 3, 3, seed=5)
    names = np.array(["a", "b", "c"])[task.y]
    clf = DENClassifier(model=small_binary_model, preset="fast").fit(task.x[:60], names[:60])
    assert clf.one_vs_rest_ and len(clf.class_models_) == 3 and len(clf.task_models_) == 3
    proba = clf.predict_proba(task.x[60:])
    assert proba.shape == (90, 3) and np.allclose(proba.sum(axis=1), 1)
    # each column is its class's binary DEN ("class k or not"), normalised over the classes
    alone = DENClassifier(model=small_binary_model, preset="fast").fit(task.x[:60], names[:60] == "b")
    p_b = alone.predict_proba(task.x[60:])[:, 1]
    raw = np.column_stack([m[0].predict_proba(clf.encoder_.transform(task.x[60:], "q"))[:, 1]
                           for m in clf.class_models_])
    np.testing.assert_allclose(raw[:, 1], p_b, atol=1e-6)
    np.testing.assert_allclose(proba, raw / raw.sum(axis=1, keepdims=True), atol=1e-6)
    assert np.array_equal(clf.predict(task.x[60:]), clf.classes_[proba.argmax(axis=1)])
    tuned = DENClassifier(model=small_binary_model, preset="paper", finetune_epochs=1,
                          finetune_steps_per_epoch=2).fit(task.x[:60], names[:60])
    assert len(tuned.finetune_losses_) == 2 and not np.allclose(tuned.predict_proba(task.x[60:]), proba)


def test_presets_set_the_variant(small_binary_model, table):
    frame, labels = table
    fast = DENClassifier(model=small_binary_model, preset="fast").fit(frame[:50], labels[:50])
    assert fast.finetune_losses_ == [] and fast.task_model_.finetune_epochs == 0
    assert fast.task_model_.network_weights is None
    paper = DENClassifier(model=small_binary_model, preset="paper", finetune_steps_per_epoch=2)
    assert len(paper.fit(frame[:50], labels[:50]).finetune_losses_) == 20  # 10 epochs x 2 steps
    overridden = DENClassifier(model=small_binary_model, preset="paper", variant="no_finetune")
    assert overridden.fit(frame[:50], labels[:50]).finetune_losses_ == []
    with pytest.raises(DENInputError, match="preset must be one of"):
        DENClassifier(model=small_binary_model, preset="magic").fit(frame[:50], labels[:50])
    adapt = DENClassifier(model=small_binary_model, preset="adapt", finetune_network_steps=4)
    adapt.fit(frame[:50], labels[:50])
    assert len(adapt.finetune_losses_) == 4 and adapt.task_model_.network_weights is not None
    assert adapt.task_model_.finetune_epochs == 0  # the calibration is left as it is
    assert not np.allclose(adapt.predict_proba(frame[50:]), fast.predict_proba(frame[50:]))
    # the default: on a two-class task, the adapt preset's 50 steps
    default = DENClassifier(model=small_binary_model).fit(frame[:50], labels[:50])
    assert len(default.finetune_losses_) == 50 and default.task_model_.network_weights is not None
    same = DENClassifier(model=small_binary_model, preset="adapt").fit(frame[:50], labels[:50])
    np.testing.assert_array_equal(default.predict_proba(frame[50:]), same.predict_proba(frame[50:]))


def test_fine_tuning_the_plfs_of_a_model_without_them_warns(binary_tasks, table):
    """preset 'paper' (or variant 'den') fine-tunes PLFs: with a model pre-trained without the
    PLF block the fit is preset 'fast''s, and says so instead of passing for fine-tuned."""
    from den.errors import DENInputWarning
    from den.model.config import ModelConfig
    from den.train.pretrain import PretrainConfig, pretrain

    from helpers import SMALL

    frame, labels = table
    no_plf = pretrain(binary_tasks, ModelConfig(**SMALL, use_calibration=False),
                      PretrainConfig(steps=5, query_rows=16, support_rows=16, seed=1), progress=None)
    fast = DENClassifier(model=no_plf, preset="fast").fit(frame[:50], labels[:50])
    for settings in ({"preset": "paper"}, {"variant": "den"}):
        with pytest.warns(DENInputWarning, match="fine-tunes the PLFs, but this model has none"):
            paper = DENClassifier(model=no_plf, **settings).fit(frame[:50], labels[:50])
        np.testing.assert_array_equal(paper.predict_proba(frame[50:]), fast.predict_proba(frame[50:]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DENInputWarning)
        DENClassifier(model=no_plf).fit(frame[:50], labels[:50])  # the default adapts the network


def test_the_default_preset_adapts_two_class_tasks_only(small_binary_model):
    """On three classes the default fits every class's binary task as pre-trained (the preset
    "fast" does the same), where the preset "adapt" adapts each one."""
    task = make_task("three", 160, 4, seed=21)
    y = np.digitize(task.x[:, 0] + task.x[:, 1], np.quantile(task.x[:, 0] + task.x[:, 1], [1 / 3, 2 / 3]))
    fits = {preset: DENClassifier(model=small_binary_model, preset=preset,
                                  finetune_network_steps=3).fit(task.x[:60], y[:60])
            for preset in ("default", "adapt")}
    fits["fast"] = DENClassifier(model=small_binary_model, preset="fast").fit(task.x[:60], y[:60])
    assert all(fit.one_vs_rest_ and len(fit.task_models_) == 3 for fit in fits.values())
    assert all(m.network_weights is None for m in fits["default"].task_models_)
    assert all(m.network_weights is not None for m in fits["adapt"].task_models_)
    np.testing.assert_array_equal(fits["default"].predict_proba(task.x[60:]),
                                  fits["fast"].predict_proba(task.x[60:]))


def test_a_class_too_small_for_network_adaptation_is_named_and_the_fit_is_fasts(small_binary_model):
    """Adaptation needs 4 support rows of each class: with 3 the default warns, naming the
    class, and fits as preset "fast"; with 4 it adapts without a word; preset "adapt" on three
    classes names the class whose class-against-the-rest model it leaves as pre-trained."""
    task = make_task("rare", 200, 4, seed=23)
    x, y = task.x, np.where(task.y == 1, "yes", "no")
    rows = np.r_[np.flatnonzero(y == "no")[:47], np.flatnonzero(y == "yes")[:4]]
    with pytest.warns(DENInputWarning, match=r"class\(es\) 'yes' \(3\) have fewer than the 4 support rows"):
        rare = DENClassifier(model=small_binary_model).fit(x[rows[:-1]], y[rows[:-1]])
    fast = DENClassifier(model=small_binary_model, preset="fast").fit(x[rows[:-1]], y[rows[:-1]])
    np.testing.assert_array_equal(rare.predict_proba(x[100:]), fast.predict_proba(x[100:]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DENInputWarning)
        assert len(DENClassifier(model=small_binary_model).fit(x[rows], y[rows]).finetune_losses_) == 50
    three = np.where(np.arange(51) < 2, "c", y[rows])
    with pytest.warns(DENInputWarning, match="'c' \\(2\\) have fewer.*class-against-the-rest model"):
        DENClassifier(model=small_binary_model, preset="adapt", finetune_network_steps=2).fit(x[rows], three)
    with warnings.catch_warnings():  # the default leaves a multiclass task's models as they are anyway
        warnings.simplefilter("error", DENInputWarning)
        DENClassifier(model=small_binary_model).fit(x[rows], three)


@pytest.mark.parametrize("preset, setting, advice", [
    ("default", {"finetune_epochs": 3}, "add variant='den' (or preset='paper')"),  # a calibration setting
    ("fast", {"finetune_network_steps": 5}, "add variant='adapt' (or preset='default')"),
    ("paper", {"finetune_network_learning_rate": 0.01}, "add variant='adapt' (or preset='default')"),
    ("fast", {"finetune_epochs": 3, "finetune_network_steps": 5}, "no one variant uses them all"),
])
def test_a_setting_the_presets_variant_ignores_is_refused(small_binary_model, table, preset, setting, advice):
    """A setting the preset's variant would ignore is refused, with the variant (and preset)
    that reads it: the network settings of adaptation were sent to the paper's preset."""
    frame, labels = table
    them = "them" if len(setting) > 1 else "it"
    with pytest.raises(DENInputError, match=rf"{next(iter(setting))}.* given, but preset '{preset}'.*"
                                            rf"does not use {them}: {re.escape(advice)}"):
        DENClassifier(model=small_binary_model, preset=preset, **setting).fit(frame[:50], labels[:50])


@pytest.mark.parametrize("variant, setting, advice", [
    ("adapt", {"finetune_tuples_per_step": 4}, "use variant='den', or leave it out"),
    ("no_finetune", {"finetune_tuples_per_step": None}, "use variant='den', or leave it out"),
    ("den", {"finetune_network_steps": 5, "finetune_network_learning_rate": 0.01},
     "use variant='adapt', or leave them out"),
])
def test_a_setting_the_given_variant_ignores_is_refused(small_binary_model, table, variant, setting, advice):
    """An explicit variant refuses the settings it would ignore, as a preset's variant does
    (variant='adapt' with finetune_tuples_per_step fitted without them, silently)."""
    frame, labels = table
    with pytest.raises(DENInputError, match=rf"{next(iter(setting))}.* given, but variant '{variant}' "
                                            rf"does not use (it|them): {re.escape(advice)}"):
        DENClassifier(model=small_binary_model, variant=variant, **setting).fit(frame[:50], labels[:50])


def test_adaptation_settings_for_a_task_the_default_preset_leaves_as_pre_trained_warn(small_binary_model):
    """Preset "default" does not adapt a task of 3 classes, so finetune_network_steps there
    changed nothing, silently; it now says so and names preset 'adapt'. Two classes, or preset
    'adapt', or no such setting: no warning."""
    import warnings

    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 3))
    three = np.array(["a", "b", "c"])[np.argmax(x, axis=1)]
    with pytest.warns(DENInputWarning, match=r"finetune_network_steps given, but preset 'default' does not "
                                             r"adapt a task of 3 classes .* so it changes nothing; "
                                             r"preset='adapt' adapts each class"):
        DENClassifier(model=small_binary_model, finetune_network_steps=5).fit(x, three)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DENInputWarning)
        DENClassifier(model=small_binary_model).fit(x, three)
        two = np.where(x[:, 0] > 0, "p", "q")
        DENClassifier(model=small_binary_model, finetune_network_steps=5).fit(x, two)
        DENClassifier(model=small_binary_model, preset="adapt", finetune_network_steps=5).fit(x, three)


def test_a_model_path_that_is_a_directory_says_so(tmp_path):
    from den.model.den import DEN

    with pytest.raises(DENModelError, match=r"is a directory, not a model file; give the \.npz file in it"):
        DEN.load(tmp_path)


def test_an_empty_feature_count_list_is_the_default_not_a_setting(small_binary_model, table):
    """finetune_feature_counts=[] (an empty list, as a grid search may give) equals the default
    (), so a preset that does not read it accepts it; [3] under that preset is refused."""
    frame, labels = table
    DENClassifier(model=small_binary_model, preset="fast", finetune_feature_counts=[]).fit(
        frame[:50], labels[:50])
    with pytest.raises(DENInputError, match="finetune_feature_counts given, but preset 'fast'"):
        DENClassifier(model=small_binary_model, preset="fast", finetune_feature_counts=[3]).fit(
            frame[:50], labels[:50])


def test_an_adapted_classifier_pickles_with_its_own_network_weights(small_binary_model, table):
    """The adapted weights travel with the fitted classifier, the shared DEN keeps its own: an
    unpickled adapted classifier predicts what it did, and a plain one beside it is unchanged."""
    import pickle

    frame, labels = table
    plain = DENClassifier(model=small_binary_model, preset="fast").fit(frame[:50], labels[:50])
    before = plain.predict_proba(frame[50:])
    adapt = DENClassifier(model=small_binary_model, preset="adapt", finetune_network_steps=5,
                          finetune_network_learning_rate=0.01).fit(frame[:50], labels[:50])
    proba = adapt.predict_proba(frame[50:])
    again = pickle.loads(pickle.dumps(adapt))
    np.testing.assert_allclose(again.predict_proba(frame[50:]), proba, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(plain.predict_proba(frame[50:]), before)


def test_unreadable_model_paths(tmp_path):
    task = make_task("t", 60, 3, seed=6)
    with pytest.raises(DENModelError, match="does not exist"):
        DENClassifier(model=tmp_path / "missing.npz").fit(task.x, task.y)
    junk = tmp_path / "junk.npz"
    junk.write_text("not a model")
    with pytest.raises(DENModelError, match="junk.npz' is not a DEN model file") as error:
        DENClassifier(model=junk).fit(task.x, task.y)
    assert "allow_pickle" not in str(error.value)  # numpy's advice does not apply to a DEN model


def test_missing_labels_and_bad_variant(small_binary_model, table):
    frame, labels = table
    labels = labels[:50].astype(object)
    labels[4] = None
    with pytest.raises(DENInputError, match=r"1 row\(s\) have no label: row\(s\) 4 \(counted from 0\)"):
        DENClassifier(model=small_binary_model).fit(frame[:50], labels)
    with pytest.raises(DENInputError, match=r"1 row\(s\) have no label \(empty, NaN or '\?'\)"):
        DENClassifier(model=small_binary_model).fit(frame[:3], np.array([b"a", b"b", b"?"]))
    labels[4], labels[7] = "?", " ?"  # UCI's missing label: not a third class
    with pytest.raises(DENInputError, match=r"2 row\(s\) have no label \(empty, NaN or '\?'\): "
                                            r"row\(s\) 4, 7"):
        DENClassifier(model=small_binary_model).fit(frame[:50], labels)
    with pytest.raises(DENInputError, match="variant"):
        DENClassifier(model=small_binary_model, variant="magic").fit(frame[:50], labels)


def _clusters(seed, centres, n=210, noise=0.3):
    """Rows in tight clusters, one cluster per class: (x, class index)."""
    rng = np.random.default_rng(seed)
    k = rng.permutation(np.arange(n) % len(centres))
    return np.asarray(centres, float)[k] + noise * rng.normal(size=(n, len(centres[0]))), k


@pytest.fixture(scope="module")
def trained_multiclass_model():
    """A multiclass-head model trained long enough to separate clear clusters (the session's
    small_multiclass_model is near chance there); seconds."""
    from den.data.synthetic import make_tasks
    from den.model.config import ModelConfig
    from den.train.pretrain import PretrainConfig, pretrain

    from helpers import SMALL

    tasks = make_tasks(6, seed=12, rows=(150, 200), features=(2, 6), classes=(2, 4), separation=3.0)
    config = PretrainConfig(steps=1500, query_rows=32, support_rows=32, seed=1)
    return pretrain(tasks, ModelConfig(head="multiclass", max_classes=6, **SMALL), config, progress=None)


def test_string_labels_are_predicted_right_on_a_separable_task(small_binary_model, trained_multiclass_model):
    """Accuracy, not just the label set: a swapped label <-> class mapping would score about 0
    (binary) or at most about 1/3 (three classes). The class names sort in another order than
    the clusters, so a mapping by sorted name, by first appearance and by index all differ."""
    x, k = _clusters(0, [[2.0] * 3, [-2.0] * 3])
    labels = np.array(["yes", "no"])[k]  # cluster 0 is "yes": index order is not name order
    clf = DENClassifier(model=small_binary_model).fit(x[:60], labels[:60])
    assert list(clf.classes_) == ["no", "yes"]
    assert np.mean(clf.predict(x[60:]) == labels[60:]) > 0.95
    proba = clf.predict_proba(x[60:])
    assert proba[labels[60:] == "yes", 1].mean() > proba[labels[60:] == "no", 1].mean()

    names = np.array(["zebra", "ant", "moth"])
    x, k = _clusters(1, 4.0 * np.eye(3))  # one high feature per class
    one_vs_rest = DENClassifier(model=small_binary_model, preset="paper", finetune_steps_per_epoch=5,
                                finetune_learning_rate=0.01).fit(x[:60], names[k][:60])
    assert one_vs_rest.one_vs_rest_ and list(one_vs_rest.classes_) == ["ant", "moth", "zebra"]
    assert np.mean(one_vs_rest.predict(x[60:]) == names[k][60:]) > 0.9

    x, k = _clusters(2, [[-3.0, -3.0], [0.0, 0.0], [3.0, 3.0]])
    head = DENClassifier(model=trained_multiclass_model).fit(x[:60], names[k][:60])
    assert not head.one_vs_rest_
    assert np.mean(head.predict(x[60:]) == names[k][60:]) > 0.9


def test_labels_that_mix_types_or_are_infinite_are_named_errors(small_binary_model, table):
    frame, _ = table
    mixed = np.array([0, "a"] * 25, dtype=object)
    with pytest.raises(DENInputError, match=r"support labels mix types \(int, str\)"):
        DENClassifier(model=small_binary_model).fit(frame[:50], mixed)
    # a list too, where numpy would have read 1 and "1" as one text class
    with pytest.raises(DENInputError, match=r"support labels mix types \(int, str\)"):
        DENClassifier(model=small_binary_model).fit(frame[:50], [1, "1", 0, "0"] * 12 + [1, 0])
    with pytest.raises(DENInputError, match=r"support labels has infinite values \(inf\)"):
        DENClassifier(model=small_binary_model).fit(frame[:50], np.array([0.0, np.inf] * 25))
    with pytest.raises(DENInputError, match=r"support labels has continuous values \(0.5 is not a whole"):
        DENClassifier(model=small_binary_model).fit(frame[:50], np.array([0.0, 0.5] * 25))
    assert DENClassifier(model=small_binary_model, preset="fast").fit(
        frame[:50], np.array([0.0, 2.0] * 25)).classes_.tolist() == [0.0, 2.0]  # whole floats are classes


def test_a_list_of_labels_is_never_rewritten_as_texts_that_are_not_its_own():
    """numpy reads a list of texts beside NaN, bytes or members of a (str, Enum) as texts:
    NaN became the class 'nan', b"a" merged with "a", and enum members became 'C'."""
    import enum

    from den.data.encoding import encode_labels

    with pytest.raises(DENInputError, match=r"1 row\(s\) have no label: row\(s\) 2 "):
        encode_labels(["a", "b", np.nan, "a"])
    with pytest.raises(DENInputError, match=r"1 row\(s\) have no label: row\(s\) 0 "):
        encode_labels((None, "a", "b"))
    for mixed in (["a", b"a", "b"], [b"\xe9", "a", "b"]):  # merged, or a UnicodeDecodeError
        with pytest.raises(DENInputError, match=r"support labels mix types \(bytes, str\)"):
            encode_labels(mixed)

    class Colour(str, enum.Enum):  # noqa: UP042 (as users write it; numpy cut its names)
        RED = "red"
        GREEN = "green"

    codes, classes = encode_labels([Colour.RED, Colour.GREEN, Colour.RED])
    assert codes.tolist() == [1, 0, 1] and classes.tolist() == [Colour.GREEN, Colour.RED]

    class Size(enum.Enum):
        S = 1
        L = 2

    with pytest.raises(DENInputError, match=r"support labels are Size values, which cannot be sorted"):
        encode_labels([Size.S, Size.L])

    class Grade(enum.IntEnum):
        LOW = 0
        HIGH = 1

    codes, classes = encode_labels([Grade.LOW, 1, Grade.HIGH])  # numbers, read as numpy does
    assert codes.tolist() == [0, 1, 1] and classes.dtype.kind == "i"
    # texts alone still read as numpy's texts
    codes, classes = encode_labels(["b", np.str_("a"), "b"])
    assert codes.tolist() == [1, 0, 1] and classes.dtype.kind == "U"


@pytest.mark.parametrize("seed", [None, -1, 1.5, True])
def test_a_seed_that_is_not_a_non_negative_integer_is_refused(small_binary_model, table, seed):
    frame, labels = table
    with pytest.raises(DENInputError, match=f"seed must be a non-negative integer, got {seed!r}"):
        DENClassifier(model=small_binary_model, seed=seed).fit(frame[:50], labels[:50])
    DENClassifier(model=small_binary_model, seed=np.int64(3), preset="fast").fit(frame[:50], labels[:50])


@pytest.mark.parametrize("rows", ["5", None, -3, 0, 2.5])
def test_min_support_rows_that_is_not_a_positive_integer_is_named(small_binary_model, table, rows):
    frame, labels = table
    clf = DENClassifier(model=small_binary_model, preset="fast", min_support_rows=rows)
    given = re.escape(repr(rows))
    with pytest.raises(DENInputError, match=rf"min_support_rows must be an integer >= 1, got {given}"):
        clf.fit(frame[:50], labels[:50])


def test_early_stopping_with_more_folds_than_support_rows_is_a_named_setting_error(small_binary_model):
    """Each fold is held out in turn, so ensemble k needs k rows: 13 folds of 12 rows stopped
    in TensorFlow with 'Matrix size-incompatible'."""
    task = make_task("folds", 60, 3, seed=8)
    x, y = task.x[:12], task.y[:12]
    clf = DENClassifier(model=small_binary_model, preset="paper", finetune_early_stopping=True,
                        finetune_epochs=1, finetune_ensemble=13)
    with pytest.raises(DENInputError, match="^finetune_early_stopping holds out each of finetune_ensemble 13 "
                                            "folds of the support rows in turn, but there are 12 rows: "
                                            "set finetune_ensemble to at most 12"):
        clf.fit(x, y)
    assert len(clf.set_params(finetune_ensemble=12).fit(x, y).task_models_) in (1, 12)


def test_a_fit_that_leaves_every_row_with_the_same_probabilities_warns(small_binary_model):
    """A learning rate so large that the weights, still finite, predict one class for every
    row: a warning names the rate to lower (before, the fit was silent and every prediction
    the same); a sound fit of the same rows does not warn."""
    task = make_task("collapse", 120, 4, seed=2)
    x, y = task.x[:50], task.y[:50]
    with pytest.warns(DENInputWarning, match=r"support rows: after fine-tuning, every support row gets "
                                             r"the same class probabilities .* lower "
                                             r"finetune_network_learning_rate \(now 0.3; "
                                             r"--finetune-network-learning-rate in den predict\)"):
        clf = DENClassifier(model=small_binary_model, finetune_network_learning_rate=0.3,
                            finetune_network_steps=20).fit(x, y)
    assert len(np.unique(clf.predict_proba(task.x[50:])[:, 1])) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DENClassifier(model=small_binary_model, finetune_network_steps=20).fit(x, y)


def test_dates_are_days_whatever_their_unit_and_missing_dates_stay_numbers():
    from den.data.encoding import TabularEncoder

    days = np.array([0, 1, 365, 18262], dtype="int64")
    stamps = pd.to_datetime(days, unit="D")
    support = pd.DataFrame({"when": stamps.astype("datetime64[us]"),
                            "took": pd.to_timedelta(days, unit="D")})
    support.loc[1, "when"] = pd.NaT  # a missing date does not make the column categorical
    encoder = TabularEncoder().fit(support)
    assert encoder.temporal == {"when": "datetime", "took": "timedelta"} and encoder.categories == {}
    x = encoder.transform(support)
    np.testing.assert_allclose(x[[0, 2, 3], 0], days[[0, 2, 3]])
    assert np.isnan(x[1, 0])
    np.testing.assert_allclose(x[:, 1], days)
    query = pd.DataFrame({"when": stamps.astype("datetime64[ns]").tz_localize("UTC"),
                          "took": pd.to_timedelta(days * 24, unit="h")})
    np.testing.assert_allclose(encoder.transform(query), np.stack([days, days], axis=1))
    as_text = pd.DataFrame({"when": ["1971-01-01", "not a date"], "took": ["1 days", "2 days"]})
    with pytest.raises(DENInputError, match="'when' has 'not a date' where the support set had a date"):
        encoder.transform(as_text)
    np.testing.assert_allclose(encoder.transform(as_text[:1])[0], [365, 1])


def test_a_category_given_as_a_number_is_found_by_its_text():
    from den.data.encoding import TabularEncoder

    support = pd.DataFrame({"size": ["small", "large", "small", "huge", "small"],
                            "code": ["1", "2", "A", "2.5", "1"]})
    encoder = TabularEncoder().fit(support)
    assert encoder.categories["code"] == ["1", "2", "2.5", "A"]
    codes = encoder.transform(support)[:, 1]
    # the same categories given as numbers (as a CSV of digits reads), and an unseen one
    query = pd.DataFrame({"size": ["large", "tiny"], "code": [1, 2.0]})
    np.testing.assert_array_equal(encoder.transform(query)[:, 1], codes[:2])
    assert encoder.transform(query)[0, 0] == 1 and np.isnan(encoder.transform(query)[1, 0])
    assert np.isnan(encoder.transform(pd.DataFrame({"size": ["small"], "code": [3]}))[0, 1])


def test_feature_names_are_recorded_and_an_array_after_a_frame_is_warned_about(small_binary_model,
                                                                               table):
    import warnings

    frame, labels = table
    clf = DENClassifier(model=small_binary_model, preset="fast").fit(frame[:50], labels[:50])
    assert clf.feature_names_in_.dtype == object and list(clf.feature_names_in_) == list(frame.columns)
    numeric = frame[["num0", "num1", "num2", "num3"]]
    clf = DENClassifier(model=small_binary_model, preset="fast").fit(numeric[:50], labels[:50])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = clf.predict_proba(numeric[50:])  # a frame after a frame: no warning
    with pytest.warns(UserWarning, match="X does not have valid feature names, but DENClassifier "
                                         "was fitted with feature names"):
        np.testing.assert_allclose(clf.predict_proba(numeric[50:].to_numpy()), expected, atol=1e-6)
    clf.fit(numeric[:50].to_numpy(), labels[:50])  # refitted on an array: no names
    assert not hasattr(clf, "feature_names_in_")
    with pytest.warns(UserWarning, match="X has feature names, but DENClassifier was fitted without"):
        clf.predict_proba(numeric[50:])


def test_a_column_without_values_in_the_support_is_missing_whatever_the_query_holds():
    from den.data.encoding import TabularEncoder

    support = pd.DataFrame({"a": [1.0, 2.0, 3.0], "note": [None, None, None]})
    encoder = TabularEncoder().fit(support)
    assert encoder.empty == {"note"} and encoder.categories == {}
    x = encoder.transform(pd.DataFrame({"a": [2.0, 5.0], "note": ["late", 7]}))
    np.testing.assert_array_equal(x[:, 0], [2.0, 5.0])
    assert np.isnan(x[:, 1]).all()


def test_missing_markers_in_a_numeric_column_are_missing_values_not_categories():
    """One "?" among numbers (as spreadsheets and UCI files write a blank) leaves the column
    numbers, in the support and the query alike; another word is an error that says what to
    do. In a column of words, "?" stays a category of its own."""
    from den.data.encoding import TabularEncoder

    support = pd.DataFrame({"amount": ["12", "?", "10000", " 7.5 ", "N/A"],
                            "colour": ["red", "?", "blue", "red", "blue"]})
    encoder = TabularEncoder().fit(support)
    assert encoder.categories == {"colour": ["?", "blue", "red"]}
    x = encoder.transform(support)
    np.testing.assert_array_equal(x[[0, 2, 3], 0], [12, 10000, 7.5])
    assert np.isnan(x[[1, 4], 0]).all() and x[1, 1] == 0
    query = pd.DataFrame({"amount": [3.0, np.nan], "colour": ["blue", "red"]})
    np.testing.assert_array_equal(encoder.transform(query.assign(amount=["-", "3"]))[1], [3, 2])
    assert np.isnan(encoder.transform(query.assign(amount=["?", "3"]))[0, 0])
    with pytest.raises(DENInputError, match="column 'amount' has non-numeric value 'n.a.' in a numeric "
                                            "column; give a number there, or leave the cell empty"):
        encoder.transform(query.assign(amount=["n.a.", "3"]))
    only_markers = TabularEncoder().fit(pd.DataFrame({"a": [1.0, 2.0], "note": ["?", "-"]}))
    assert only_markers.empty == {"note"}


def test_numbers_written_as_text_in_a_category_column_sort_by_value_and_match_numbers():
    """A column that is numbers but for one word ("3+") holds categories: "2" sorts before "10"
    (DEN reads the codes' order), and the query's 12.0 (a CSV file of numbers) is the
    support's "12.0" (a CSV file of text), not an unseen value."""
    from den.data.encoding import TabularEncoder

    encoder = TabularEncoder().fit(pd.DataFrame({"children": ["10", "2", "many", "12.0", "1", "few"]}))
    assert encoder.categories["children"] == ["1", "2", "10", "12.0", "few", "many"]
    query = pd.DataFrame({"children": [12.0, 2, "1.0", "many"]})
    np.testing.assert_array_equal(encoder.transform(query)[:, 0], [3, 1, 0, 5])


def test_bins_of_pd_cut_sort_by_position_and_a_boolean_column_reads_true_and_false_text():
    """pd.cut's intervals are coded in their order on the number line, not their text's
    ("(-0.1, 0.9]" sorted before "(-1.2, -0.1]"); a query's "True"/" false" in a column the
    support held as booleans (JSON payloads, frames read with dtype=str) are 1 and 0, and
    another word there says the column was booleans."""
    from den.data.encoding import TabularEncoder

    rng = np.random.default_rng(0)
    values = rng.normal(size=40)
    support = pd.DataFrame({"bin": pd.cut(values, [-np.inf, -1, 0, 1, np.inf]), "flag": values > 0,
                            "maybe": pd.array([True, None] * 20, dtype="boolean")})
    encoder = TabularEncoder().fit(support)
    assert [i.left for i in encoder.categories["bin"]] == [-np.inf, -1, 0, 1]
    codes = encoder.transform(support)[:, 0]
    assert (np.diff(codes[np.argsort(values)]) >= 0).all()  # monotone in the binned value
    assert encoder.boolean == {"flag", "maybe"}
    query = pd.DataFrame({"bin": support["bin"][:3], "flag": ["True", " false", "1"],
                          "maybe": ["TRUE", "", "0"]})
    x = encoder.transform(query)
    np.testing.assert_array_equal(x[:, 1], [1, 0, 1])
    np.testing.assert_array_equal(x[[0, 2], 2], [1, 0])
    assert np.isnan(x[1, 2])
    with pytest.raises(DENInputError, match="column 'flag' has value 'maybe' in a column the support "
                                            "set held as booleans; give True or False"):
        encoder.transform(query.assign(flag="maybe"))
    old = TabularEncoder().fit(support)  # an encoder pickled before it recorded booleans
    del old.boolean
    with pytest.raises(DENInputError, match="non-numeric value 'True' in a numeric column"):
        old.transform(query)


def test_pyarrow_text_periods_and_mixed_numbers_encode_as_their_plain_forms():
    """A frame as read_csv(dtype_backend="pyarrow") gives it encodes as the plain frame (its
    text columns were refused as 'non-numeric value in a numeric column'); periods are the
    days of their start, a missing one missing (it was -9.2e18); a category column of real
    numbers and words sorts the numbers by value, as the same column read as text does."""
    import io

    from den.data.encoding import TabularEncoder

    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    plain = pd.DataFrame({"a": rng.normal(size=20), "colour": rng.choice(["red", "blue"], 20),
                          "day": pd.date_range("2020-01-01", periods=20).astype(str)})
    arrow = pd.read_csv(io.StringIO(plain.to_csv(index=False)), dtype_backend="pyarrow")
    arrow["code"] = arrow["colour"].astype(pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string())))
    expected = TabularEncoder().fit_transform(plain.assign(code=plain["colour"]))
    np.testing.assert_array_equal(TabularEncoder().fit_transform(arrow), expected)
    months = pd.Series(pd.period_range("2020-01", periods=6, freq="M"))
    months[1] = pd.NaT
    encoded = TabularEncoder().fit_transform(pd.DataFrame({"month": months}))[:, 0]
    starts = (months.dt.to_timestamp() - pd.Timestamp(0)) / pd.Timedelta(days=1)
    np.testing.assert_array_equal(encoded, starts.to_numpy(dtype=float, na_value=np.nan))
    assert np.isnan(encoded[1]) and encoded[0] == 18262  # 2020-01-01
    mixed = pd.Series([1, 2, 10, "a"] * 3, dtype=object)
    assert TabularEncoder().fit(pd.DataFrame({"m": mixed})).categories["m"] == [1, 2, 10, "a"]
    np.testing.assert_array_equal(TabularEncoder().fit_transform(pd.DataFrame({"m": mixed})),
                                  TabularEncoder().fit_transform(pd.DataFrame({"m": mixed.astype(str)})))


def test_records_a_dict_and_one_row_as_a_series_are_named_with_the_table_to_give(small_binary_model, table):
    """A list of dicts, a dict of columns and one row given as a Series (frame.iloc[0]) are
    named as such, with the DataFrame to give (numpy's advice to reshape did not help)."""
    from den.errors import DENInputError

    X, y = table
    with pytest.raises(DENInputError, match=r"is a list of dicts \(records\); give a table: pd.DataFrame"):
        DENClassifier(model=small_binary_model, preset="fast").fit(X.to_dict("records"), y)
    with pytest.raises(DENInputError, match="is a dict of columns; give a table"):
        DENClassifier(model=small_binary_model, preset="fast").fit(X.to_dict("list"), y)
    fitted = DENClassifier(model=small_binary_model, preset="fast").fit(X, y)
    with pytest.raises(DENInputError, match=r"Series whose index is the .* feature names: one row .*"
                                            r"frame.iloc\[\[0\]\]"):
        fitted.predict_proba(X.iloc[0])
    np.testing.assert_array_equal(fitted.predict_proba(X.iloc[[0]]), fitted.predict_proba(X)[:1])


def test_text_among_numbers_is_missing_with_a_warning_and_bounds_are_numbers():
    """A lab value with a detection limit ("<0.5") and a word among 20 numbers stays a numeric
    column: the bound is its number, the word missing, with a warning that names the column and
    the word, and the query's own numbers (none of them in the support) are numbers, not unseen
    categories. A column of words stays categories."""
    from den.data.encoding import TabularEncoder
    from den.errors import DENInputWarning

    crp = [f"{v:.2f}" for v in np.linspace(0.6, 9.0, 18)] + ["<0.5", "pending"]
    support = pd.DataFrame({"crp": crp, "colour": ["red", "blue"] * 10})
    with pytest.warns(DENInputWarning, match=r"column 'crp': 1 of 20 values are text among numbers "
                                             r"\('pending'\); they are read as missing"):
        encoder = TabularEncoder().fit(support)
    assert list(encoder.categories) == ["colour"] and encoder.stray_text == {"crp": ["pending"]}
    x = encoder.transform(support)
    assert x[18, 0] == 0.5 and np.isnan(x[19, 0])
    query = encoder.transform(pd.DataFrame({"crp": [1.234, "7.77", ">10", "pending", "later"],
                                            "colour": ["blue"] * 5}))
    np.testing.assert_allclose(query[:3, 0], [1.234, 7.77, 10.0])
    assert np.isnan(query[3:, 0]).all()
    with pytest.warns(DENInputWarning, match=r"query features column 'crp': 2 of 2 values are text in "
                                             r"a column of numbers \('positive', 'negative'\), read as "
                                             r"missing"):
        encoder.transform(pd.DataFrame({"crp": ["positive", "negative"], "colour": ["red"] * 2}))
    bands = TabularEncoder().fit(pd.DataFrame({"age": ["<=50", ">50", "18+", "<=50"]}))
    assert bands.categories == {"age": ["18+", "<=50", ">50"]}  # bands are categories, not 50, 50, 18
    clean = TabularEncoder().fit(support.assign(crp=np.arange(20.0)))  # a column of numbers only
    with pytest.raises(DENInputError, match="non-numeric value 'later'"):  # the query's all text there
        clean.transform(pd.DataFrame({"crp": ["later"], "colour": ["red"]}))
    crp = [str(v) for v in range(19)] + ["pending"]  # a word among numbers: missing, as in a support set
    with pytest.warns(DENInputWarning, match=r"query features column 'crp': 1 of 20 values are text in a "
                                             r"column of numbers \('pending'\), read as missing; the "
                                             r"support set had numbers only there"):
        query = clean.transform(pd.DataFrame({"crp": crp, "colour": ["red"] * 20}))
    assert np.isnan(query[19, 0]) and query[18, 0] == 18


def test_large_offsets_keep_their_resolution():
    """Dates as YYYYMMDD numbers, epoch milliseconds and times seconds apart on one day are
    features that differ as the values do: float32 (24 bits) would make 20240101 and 20240102
    one value, and one morning's seconds a few steps of 128 s."""
    from den.data.encoding import TabularEncoder

    frame = pd.DataFrame({"yyyymmdd": [20240101, 20240102, 20240103, 20240104, 20240105],
                          "ms": 1.7e12 + np.arange(5.0),
                          "time": pd.Timestamp("2024-01-01 08:00")
                          + pd.to_timedelta(np.arange(5) * 7, unit="s")})
    x = TabularEncoder().fit_transform(frame)
    np.testing.assert_array_equal(x[:, 0], frame["yyyymmdd"])
    np.testing.assert_array_equal(np.diff(x[:, 1]), 1.0)
    np.testing.assert_allclose(np.diff(x[:, 2]) * 86400, 7.0, rtol=1e-6)


def test_a_query_of_unseen_categories_warns_and_names_near_matches():
    """Query categories the support set did not have are missing; where they are many (here
    all), a warning names the column and those that differ from a known one only in case or
    spaces. An odd unseen value among many known ones says nothing."""
    import warnings

    from den.data.encoding import TabularEncoder
    from den.errors import DENInputWarning

    encoder = TabularEncoder().fit(pd.DataFrame({"colour": ["red", "blue", "green"] * 4}))
    with pytest.warns(DENInputWarning, match=r"column 'colour': 3 of 3 values are categories the "
                                             r"support set did not have .* read as missing; some "
                                             r"differ .* only in case or spaces \('RED' for 'red'"):
        x = encoder.transform(pd.DataFrame({"colour": ["RED", "blue ", "teal"]}))
    assert np.isnan(x).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DENInputWarning)
        x = encoder.transform(pd.DataFrame({"colour": ["red", "blue"] * 10 + ["teal", None]}))
    assert np.isnan(x[20:, 0]).all() and not np.isnan(x[:20]).any()


def test_rows_given_as_unlabeled_and_then_predicted_are_warned_about_once(small_binary_model):
    """fit(X, y, X_unlabeled=Xq) then predict(Xq): the unseen categories of Xq are named once
    (by the fit); other unseen values, or a new fit, warn again."""
    import warnings

    from den.errors import DENInputWarning

    support = pd.DataFrame({"colour": ["red", "blue"] * 15, "size": np.arange(30.0)})
    labels = np.arange(30) % 2
    query = pd.DataFrame({"colour": ["RED", "teal"] * 5, "size": np.arange(10.0)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = DENClassifier(model=small_binary_model, preset="fast").fit(support, labels, X_unlabeled=query)
        clf.predict(query)
        clf.predict(query.assign(colour=["mauve"] * 10))
    said = [str(w.message) for w in caught if issubclass(w.category, DENInputWarning)]
    assert len(said) == 2 and "'RED'" in said[0] and "'mauve'" in said[1], said
    with pytest.warns(DENInputWarning, match="'RED'"):
        DENClassifier(model=small_binary_model, preset="fast").fit(support, labels).predict(query)


def test_dates_written_as_text_or_as_date_objects_are_days():
    """CSV files hold dates as ISO 8601 text and Python code as datetime.date: both are days
    since 1970-01-01, so a query's dates after the support's are later days, not unseen
    categories; "?" is a missing date, and a word where a date belongs is an error."""
    import datetime

    from den.data.encoding import TabularEncoder

    support = pd.DataFrame({"when": ["1970-01-02", "1971-01-01 12:00", None, "?"],
                            "born": [datetime.date(1970, 1, 1), datetime.date(1970, 1, 11), None, None]})
    encoder = TabularEncoder().fit(support)
    assert encoder.temporal == {"when": "datetime", "born": "datetime"} and encoder.categories == {}
    x = encoder.transform(support)
    np.testing.assert_allclose(x[:2], [[1, 0], [365.5, 10]])
    assert np.isnan(x[2:]).all()
    query = pd.DataFrame({"when": ["2000-01-01T00:00:00Z", datetime.date(1970, 1, 3)],
                          "born": ["1970-01-21", pd.Timestamp("1970-01-31")]})
    np.testing.assert_allclose(encoder.transform(query), [[10957, 20], [2, 30]])
    with pytest.raises(DENInputError, match="'when' has 'soon' where the support set had a date"):
        encoder.transform(query.assign(when=["soon", None]))


def test_query_dates_written_day_first_or_month_first_read_by_one_convention_per_column():
    """A support column of dates meets query dates as text in another form: each column is
    read by one convention, day first where some date reads only so (13/09/2021), so 11/07/2021
    in the same column is 11 July, not 7 November; where every date reads both ways, month first
    with a warning that names the column and the ISO form."""
    from den.data.encoding import TabularEncoder
    from den.errors import DENInputWarning

    when = pd.to_datetime(["2021-09-13", "2021-07-11", "2021-01-05"])
    encoder = TabularEncoder().fit(pd.DataFrame({"when": when}))
    days = encoder.transform(pd.DataFrame({"when": when}))[:, 0]
    for form in ("%d/%m/%Y", "%m/%d/%Y", "%b %d, %Y", "%Y/%m/%d"):
        np.testing.assert_array_equal(encoder.transform(pd.DataFrame({"when": when.strftime(form)}))[:, 0],
                                      days, err_msg=form)
    mixed = pd.DataFrame({"when": ["13/09/2021", "14/09/2021 10:30", "Jul 11 2021", "11/07/2021"]})
    np.testing.assert_allclose(encoder.transform(mixed)[:, 0] - days[0], [0, 1.4375, -64, -64])
    repeated = pd.DataFrame({"when": ["2021-09-13", "13/09/2021", "11/07/2021"]}, index=[0, 0, 0])
    np.testing.assert_array_equal(encoder.transform(repeated)[:, 0], days[[0, 0, 1]])  # pd.concat's index
    with pytest.warns(DENInputWarning, match=r"query features column 'when': dates such as '11/07/2021' "
                                             r"read month first \(2021-11-07\); if the day comes first, "
                                             r"write them as ISO 8601"):
        x = encoder.transform(pd.DataFrame({"when": ["11/07/2021", "01/05/2021"]}))
    assert x[0, 0] == (pd.Timestamp("2021-11-07") - pd.Timestamp(0)).days


def test_duplicate_column_names_are_named(small_binary_model):
    from den.data.encoding import TabularEncoder

    twice = pd.DataFrame([[1.0, 2.0, 3.0]] * 4, columns=["a", "b", "a"])
    with pytest.raises(DENInputError, match="support features has more than one column named 'a'; give "
                                            "each column its own name"):
        TabularEncoder().fit(twice)
    encoder = TabularEncoder().fit(twice.iloc[:, :2])
    with pytest.raises(DENInputError, match="query features has more than one column named 'a'"):
        encoder.transform(twice)


@pytest.mark.parametrize("chunk_rows", [0, -5, 2.5, True])
def test_a_chunk_size_that_is_not_a_positive_integer_is_refused_before_the_fit(small_binary_model, table,
                                                                               chunk_rows):
    frame, labels = table
    with pytest.raises(DENInputError, match=f"chunk_rows must be an integer >= 1 .*got {chunk_rows!r}"):
        DENClassifier(model=small_binary_model, chunk_rows=chunk_rows).fit(frame[:50], labels[:50])


def test_dates_beyond_pandas_nanoseconds_or_not_dates_and_look_alike_codes():
    """9999-12-31 ("no end date") and 1500-01-01 are days, not an overflow; "0000-00-00" (no
    date) keeps the column categories; a datetime column's query may write dates as pandas
    reads them (01/03/2021); category "1" beside "01" is still found by the number 1, and a
    long numeric ID as an int finds its text."""
    from den.data.encoding import TabularEncoder

    far = TabularEncoder().fit(pd.DataFrame({"until": ["2021-01-01", "9999-12-31", "1500-01-01"]}))
    np.testing.assert_allclose(far.transform(pd.DataFrame({"until": ["9999-12-31", "1500-01-01"]}))[:, 0],
                               [2932896, -171664])
    zero = TabularEncoder().fit(pd.DataFrame({"when": ["0000-00-00", "2021-01-01"]}))
    assert zero.temporal == {} and zero.categories == {"when": ["0000-00-00", "2021-01-01"]}
    stamps = TabularEncoder().fit(pd.DataFrame({"when": pd.to_datetime(["2021-01-01", "2021-01-02"])}))
    with pytest.warns(DENInputWarning, match="'01/03/2021' read month first"):  # it reads both ways
        x = stamps.transform(pd.DataFrame({"when": ["01/03/2021", "2021-01-05"]}))
    np.testing.assert_allclose(x[:, 0], [18630, 18632])
    long_id = "12345678901234567890"
    codes = TabularEncoder().fit(pd.DataFrame({"c": ["1", "01", "x"], "id": [long_id, "7", "x"]}))
    x = codes.transform(pd.DataFrame({"c": [1, "01", 1.0], "id": [int(long_id), 7, "x"]}))
    np.testing.assert_array_equal(x, [[1, 1], [0, 0], [1, 2]])  # "01" < "1" (both 1) < "x"; 7 < 1.2e19


def test_settings_lists_and_switches_are_checked_item_by_item():
    """A list setting holds numbers of its kind (16.9 units is no width); a switch is a
    boolean, or 0 / 1 as scikit-learn grids give them."""
    from den.model.config import ModelConfig
    from den.train.config import FinetuneConfig

    assert FinetuneConfig(early_stopping=1, ensemble=2).early_stopping is True
    counts = FinetuneConfig(feature_counts=np.array([3, 6]), early_stopping=True, ensemble=2).feature_counts
    assert counts == (3, 6) and all(type(k) is int for k in counts)
    for make, setting, message in (
            (FinetuneConfig, {"early_stopping": 2}, "early_stopping must be True or False"),
            (ModelConfig, {"h_units": (16.9,)}, "h_units must be a list of integers"),
            (ModelConfig, {"h_units": "64"}, "h_units must be a list of integers, got '64'"),
            (ModelConfig, {"local_bandwidths": ("0.1",)}, "must be a list of numbers")):
        with pytest.raises(ValueError, match=message):
            make(**setting)
    assert ModelConfig(local_bandwidths=[0.1, 1]).local_bandwidths == (0.1, 1.0)


def test_labels_that_differ_only_in_case_or_spaces_are_warned_about():
    """"yes", "yes " and "Yes" are three classes, as written; a warning says so, naming them.
    Distinct labels say nothing."""
    import warnings

    from den.data.encoding import encode_labels
    from den.errors import DENInputWarning

    with pytest.warns(DENInputWarning, match=r"support labels: classes that differ only in case or "
                                             r"spaces \('Yes', 'yes', 'yes '\) are different classes"):
        codes, classes = encode_labels(["yes", "yes ", "no", "Yes", "no"])
    assert classes.tolist() == ["Yes", "no", "yes", "yes "] and codes.tolist() == [2, 3, 1, 0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DENInputWarning)
        encode_labels(["yes", "no", "maybe"])


def test_a_support_set_too_large_for_the_memory_is_refused_before_the_fit():
    """Tuple relevance compares every pair of support rows: 5,000 rows of 10 features would
    need about 128 GB. With 24 GB free the fit is refused up front, naming a sample size that
    fits in half of them, for a frame, an array and a CSV file; 1,500 rows (11.5 GB) and 257
    fit with a warning of what they cost, unless the memory is smaller; 256 rows (twice
    pre-training's largest support set) say nothing."""
    import warnings

    from den.errors import DENInputWarning
    from den.fitting import check_support_size
    from den.model.config import ModelConfig
    from den.model.den import DEN

    from helpers import SMALL

    den = DEN(ModelConfig(order=3, min_tuples=625, max_tuples=625, local_bandwidths=(0.1,),
                          tuple_relevance=True, **SMALL))
    with pytest.raises(DENInputError, match=r"a support set of 5000 rows and 10 features needs about "
                                            r"1\d\d.\d GB .*when the model first predicts\), and 24.0 GB "
                                            r"are free, of which DEN uses at most 80% .*: fit on a sample of "
                                            r"at most 15\d\d rows \(a pandas frame: X.sample\(15\d\d, "
                                            r"random_state=0\) and y at the same rows; an array: rows = "
                                            r"np.random.default_rng\(0\).choice\(len\(X\), 15\d\d, "
                                            r"replace=False\), then X\[rows\] and y\[rows\]; den predict: "
                                            r"a support file of 15\d\d of its rows\)"):
        check_support_size(den, 5000, 10, available=24e9)
    with pytest.warns(DENInputWarning, match=r"a support set of 1500 rows: .* the model's first prediction "
                                             r"takes about 1\d.\d GB, .*preset 'fast' does not adapt.*; "
                                             r"DEN was pre-trained on support sets of 25-128 rows"):
        check_support_size(den, 1500, 10, available=24e9)
    with pytest.warns(DENInputWarning, match=r"a support set of 257 rows: .* takes about 0.3 GB"):
        check_support_size(den, 257, 10, available=24e9)
    with pytest.raises(DENInputError, match=r"support set of 1000 rows and 10 features needs about 5.\d GB"):
        check_support_size(den, 1000, 10, available=1e9)  # a small machine (or a cgroup's cap)
    with pytest.raises(DENInputError, match=r"needs about 5.\d GB .* and 6.0 GB are free"):
        check_support_size(den, 1000, 10, available=6e9)  # a fifth is kept for TensorFlow itself
    with pytest.raises(DENInputError, match="and 0.0 GB are free, .* at most 0 rows"):
        check_support_size(den, 1000, 10, available=-1e6)  # a control group over its cap
    with warnings.catch_warnings():
        warnings.simplefilter("error", DENInputWarning)
        check_support_size(den, 256, 10, available=24e9)
        check_support_size(DEN(ModelConfig(**SMALL)), 5000, 10, available=1e9)  # no pairs of rows


def test_available_memory_reads_the_control_group_of_the_process_v1_and_v2(tmp_path):
    """A SLURM job or container caps memory in its control group: cgroup v2 (memory.max) or
    v1 (memory.limit_in_bytes under memory/), at the process's own group (/proc/self/cgroup) or
    one above it; v1's "no limit" (about 2^63) and v2's "max" are no cap."""
    from den.fitting import _available_memory

    root = tmp_path / "cgroup"
    job = root / "memory" / "slurm" / "job_7" / "step_0"
    job.mkdir(parents=True)
    (job / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # the step: no limit
    (job.parent / "memory.limit_in_bytes").write_text(f"{3 * 2**30}\n")  # the job: 3 GiB
    (job.parent / "memory.usage_in_bytes").write_text(f"{2**30}\n")
    membership = tmp_path / "self_cgroup"
    membership.write_text("5:devices:/\nnot a line\n4:memory:/slurm/job_7/step_0\n1:name=systemd:/\n")
    assert _available_memory(root, membership) == 2 * 2**30
    (job.parent / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (job.parent / "memory.usage_in_bytes").write_text("9223372036854000000\n")  # 0.8 MB under "no limit"
    free = _available_memory(root, membership)  # MemAvailable alone (None off Linux)
    assert free is None or free > 2**20
    v2 = root / "system.slice" / "job.scope"
    v2.mkdir(parents=True)
    (v2 / "memory.max").write_text("max\n")
    (v2.parent / "memory.max").write_text(f"{2**30}\n")
    (v2.parent / "memory.current").write_text(f"{2**28}\n")
    membership.write_text("0::/system.slice/job.scope\n")
    assert _available_memory(root, membership) == 3 * 2**28


def test_query_chunks_shrink_as_the_support_set_grows():
    """The local embedding holds (chunk rows x support rows x tuples) kernels: up to 64 support
    rows a chunk is 2^17 tuple-rows, as before; with 1,000 it is 64/1000 of that."""
    from den.model.task_model import auto_chunk_rows

    assert auto_chunk_rows(625) == auto_chunk_rows(625, 50) == auto_chunk_rows(625, 64) == 209
    assert auto_chunk_rows(625, 1000) == 13 and auto_chunk_rows(625, 100000) == 1
    assert auto_chunk_rows(9) == 14563 and auto_chunk_rows(1) == 65536



class _InterchangeOnly:
    """A table known only by the dataframe interchange protocol (as a polars DataFrame is)."""

    def __init__(self, frame):
        self.frame = frame

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self.frame.__dataframe__(nan_as_null=nan_as_null, allow_copy=allow_copy)


@pytest.mark.parametrize("library", ["pyarrow", "interchange"])
def test_tables_of_other_libraries_are_matched_by_column_name(small_binary_model, library):
    """A pyarrow Table (or any table with the interchange protocol) keeps its column names: a
    query with its columns in another order is read by name, as a pandas frame is, not by
    position, and a missing column is an error."""
    if library == "pyarrow":
        pa = pytest.importorskip("pyarrow")
        to_table = pa.Table.from_pandas
    else:
        to_table = _InterchangeOnly
    task = make_task("arrow", 120, 4, seed=8)
    frame = pd.DataFrame(task.x, columns=["a", "b", "c", "d"])
    expected = DENClassifier(model=small_binary_model, preset="fast").fit(frame[:50], task.y[:50]) \
        .predict_proba(frame[50:])
    order = np.random.default_rng(0).permutation(50)  # an index pyarrow keeps as a column of its own
    clf = DENClassifier(model=small_binary_model, preset="fast").fit(to_table(frame.iloc[order]),
                                                                     task.y[order])
    assert list(clf.feature_names_in_) == ["a", "b", "c", "d"] and clf.n_features_in_ == 4
    reordered = frame[50:][["d", "c", "b", "a"]].reset_index(drop=True)
    np.testing.assert_allclose(clf.predict_proba(to_table(reordered)), expected, atol=1e-6)
    with pytest.raises(DENInputError, match=r"missing \['b'\], unexpected \[\]; give the support's columns"):
        clf.predict_proba(to_table(reordered.drop(columns="b")))


def test_composed_and_decomposed_accents_are_the_same_names_and_categories(small_binary_model):
    """"é" typed as e + a combining accent (as macOS writes it) is the support's "é" in a column
    name and in a category, as it is when the CLI reads a file: not a missing column or an
    unseen (missing) category."""
    import unicodedata

    def nfd(text):
        return unicodedata.normalize("NFD", text)

    task = make_task("accents", 120, 2, seed=9)
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"température": task.x[:, 0], "x": task.x[:, 1],
                          "ville": rng.choice(["Zürich", "Genève", "Bern"], 120)})
    clf = DENClassifier(model=small_binary_model, preset="fast").fit(frame[:50], task.y[:50])
    expected = clf.predict_proba(frame[50:])
    decomposed = frame[50:].rename(columns={"température": nfd("température")})
    decomposed["ville"] = decomposed["ville"].map(nfd)
    assert decomposed.columns[0] != "température" and decomposed["ville"].isin(["Zürich"]).sum() == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no unseen category
        np.testing.assert_array_equal(clf.predict_proba(decomposed), expected)
    refitted = DENClassifier(model=small_binary_model, preset="fast").fit(decomposed[:50], task.y[50:100])
    assert refitted.encoder_.columns[0] == "température"
    assert "Zürich" in refitted.encoder_.categories["ville"]


def test_model_paths_may_start_with_the_home_directory(tmp_path, monkeypatch, small_binary_model):
    """model="~/den.npz" (and DEN.save to such a path) means the home directory, as pandas reads it."""
    from den.model.den import DEN

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)  # where a literal "~" directory would appear
    assert small_binary_model.save("~/den.npz") == tmp_path / "home" / "den.npz"
    assert DEN.load("~/den.npz").config == small_binary_model.config
    task = make_task("home", 60, 3, seed=6)
    assert DENClassifier(model="~/den.npz", preset="fast").fit(task.x, task.y).predict(task.x).shape == (60,)
    assert not (tmp_path / "~").exists()


def test_a_text_column_of_another_value_in_every_row_is_named_at_fit(small_binary_model):
    """An id or free-text column (another text in each of 50 support rows) is named when the
    model is fitted, with the way to leave it out; long texts are cut in messages, and what a
    query's unseen texts were is not kept in the encoder (a million sentences)."""
    task = make_task("ids", 150, 2, seed=4)
    sentence = "the customer called twice about a late delivery and asked for a refund"
    frame = pd.DataFrame({"a": task.x[:, 0], "b": task.x[:, 1],
                          "note": [f"call {i:03d}: {sentence}" for i in range(150)]})
    with pytest.warns(DENInputWarning, match=r"column 'note': each of its 50 values is another text "
                                             r"\('call 000: the customer called twice abou\.\.\.', .*\): an "
                                             r"identifier or free text\? .*--ignore-columns note"):
        clf = DENClassifier(model=small_binary_model, preset="fast").fit(frame[:50], task.y[:50])
    with pytest.warns(DENInputWarning, match=r"column 'note': 100 of 100 values are categories the "
                                             r"support set did not have \('call 050: the customer "
                                             r"called twice abou\.\.\.'"):
        clf.predict_proba(frame[50:])
    assert all(len(str(key)) < 200 for key in clf.encoder_.warned)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DENInputWarning)
        few = frame[:15].assign(note=[f"n{i}" for i in range(15)])  # too few rows to tell
        DENClassifier(model=small_binary_model, preset="fast", min_support_rows=10).fit(few, task.y[:15])
        repeated = frame[:50].assign(note=["x", "y"] * 25)
        DENClassifier(model=small_binary_model, preset="fast").fit(repeated, task.y[:50])


def test_labels_scikit_learn_cannot_score_are_refused_at_fit(small_binary_model, table):
    """Integers or booleans held as Python objects, and bytes, fitted, but scikit-learn's
    scores cannot read them: score raised and cross_val_score / a grid search gave NaN for
    every candidate, silently picking the first. They are refused at fit with the conversion."""
    frame, texts = table
    labels = (texts == "churn").astype(int)
    clf = DENClassifier(model=small_binary_model, preset="fast")
    held = r"held as Python objects .* convert them first: y\.astype"
    cases = ((pd.Series(labels[:50], dtype=object), rf"integers {held}\(int\)"),
             (pd.Series(labels[:50] == 1, dtype=object), rf"booleans {held}\(bool\)"),
             (pd.Series(labels[:50] + 0.0, dtype=object), rf"numbers {held}\(float\)"),
             (np.where(labels[:50] == 1, b"y", b"n"), r"Unknown label type: support labels are bytes"))
    for y, message in cases:
        with pytest.raises(DENInputError, match=message):
            clf.fit(frame[:50], y)
    for y in (pd.Series(np.where(labels[:50] == 1, "y", "n"), dtype=object), labels[:50].astype(object) > 0):
        assert len(clf.fit(frame[:50], y).classes_) == 2  # texts, and numpy booleans


def test_bytes_in_feature_columns_are_read_as_text(small_binary_model, table):
    """scipy.io.arff gives nominal columns as bytes; they are categories like their texts (a
    pandas error before, with no column named)."""
    frame, labels = table
    texts = np.where(np.arange(len(frame)) % 3 == 0, "red", "blue")
    as_text = frame.assign(shade=texts)
    as_bytes = frame.assign(shade=[t.encode() for t in texts])
    clf = DENClassifier(model=small_binary_model, preset="fast")
    expected = clf.fit(as_text[:50], labels[:50]).predict_proba(as_text[50:])
    np.testing.assert_array_equal(clf.fit(as_bytes[:50], labels[:50]).predict_proba(as_bytes[50:]), expected)
    np.testing.assert_array_equal(clf.predict_proba(as_text[50:]), expected)  # a query in texts
    as_bytes, as_text = np.array([[t.encode()] for t in texts]), np.array([[t] for t in texts])
    assert as_bytes.dtype.kind == "S"  # a numpy bytes array reads as its texts do
    expected = clf.fit(as_text[:50], labels[:50]).predict_proba(as_text[50:])
    np.testing.assert_array_equal(clf.fit(as_bytes[:50], labels[:50]).predict_proba(as_bytes[50:]), expected)


def test_labels_that_read_as_one_number_warn_in_the_api_too(small_binary_model, table):
    frame, labels = table
    y = np.where(labels[:50] == "churn", "01", "1")
    with pytest.warns(DENInputWarning, match=r"support labels: texts that read as one number "
                                             r"\('01', '1'\) are read as written, different classes"):
        clf = DENClassifier(model=small_binary_model, preset="fast").fit(frame[:50], y)
    assert clf.classes_.tolist() == ["01", "1"]


@pytest.mark.parametrize(("setting", "value", "switch"), [
    ("finetune_early_stopping_tolerance", 2.0, "finetune_early_stopping is off"),
    ("finetune_output_scaling_learning_rate", 5.0, "finetune_output_scaling is off"),
    ("finetune_feature_counts_tolerance", 3.0, "finetune_feature_counts is empty")])
def test_a_setting_of_a_fine_tuning_switch_that_is_off_is_refused(small_binary_model, table, setting, value,
                                                                   switch):
    """These were ignored without a word (a grid over them repeated one fit)."""
    frame, labels = table
    clf = DENClassifier(model=small_binary_model, preset="paper", **{setting: value})
    with pytest.raises(DENInputError, match=f"{setting} {value} is given, but {switch}, so it would be "):
        clf.fit(frame[:50], labels[:50])
