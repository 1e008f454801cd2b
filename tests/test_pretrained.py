"""The models shipped as package data (den.pretrained): they load, they are what
docs/model-card.md says, and DENClassifier() / `den predict` use them with no model given (the
PLF-free one by default, the PLF one where the fit fine-tunes), on binary and 5-class tasks they
never saw, and learn them."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

from den.api import DENClassifier
from den.cli import main
from den.data.synthetic import make_task
from den.model.den import DEN
from den.pretrained import PRESETS, SHIPPED_MODELS, shipped_model_path


@pytest.mark.parametrize("finetune", [False, True])
def test_the_shipped_models_load_and_are_the_validated_preset(finetune):
    path = shipped_model_path(finetune=finetune)
    assert path == SHIPPED_MODELS[finetune] and path.stat().st_size < 400_000  # small package data
    model = DEN.load(path)
    config = model.config
    assert config.use_calibration == finetune  # the default preset's model has no PLF block
    assert config.head == "binary" and config.order == 3 and config.max_tuples == config.min_tuples == 625
    assert config.local_bandwidths == (0.05, 0.1, 0.2, 0.4) and config.keypoint_placement == "quantile"
    # chosen on the held-back corpus sets
    assert config.gated_pooling and config.tuple_relevance and config.balanced_relevance
    # chosen on the 32 unseen real sets, tested on the benchmark (session 39)
    assert config.linear_evidence and "den/phi_e" in model.network.weights_dict()
    # the 71 binary sets of corpus/ and tabular/ and the 42 binary R datasets (since session 34),
    # and 4 binary cuts of each of their 55 + 18 multiclass sets
    names = model.metadata["pretrained_on"]
    cuts = [name for name in names if "~b" in name]
    assert len(names) == 71 + 42 + (55 + 18) * 4 and len(cuts) == (55 + 18) * 4
    assert sum(name.startswith("corpus-") for name in names) == 55 + 51 * 4
    assert sum(name.startswith("r-") for name in names) == 42 + 18 * 4
    assert model.metadata["pretrain"]["steps"] == 6000 and model.metadata["pretrain"]["multiclass_cuts"] == 4
    assert PRESETS["default"] == {"variant": "adapt", "one_vs_rest": False}
    assert PRESETS["fast"] == {"variant": "no_finetune"} and PRESETS["paper"] == {"variant": "den"}
    assert PRESETS["adapt"] == {"variant": "adapt", "one_vs_rest": True}


def test_the_dev_pretraining_reads_the_settings_the_shipped_model_was_built_with():
    """docs/benchmarks/shipped_dev.py pre-trains candidates "as the shipped model is": its
    settings (config/corpus.yaml through the schema and rule shipped_model's functions) are the
    shipped PLF-free model's own, and a seed or setting asked for changes only that."""
    import importlib.util
    from dataclasses import asdict
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "shipped_dev.py"
    spec = importlib.util.spec_from_file_location("shipped_dev", script)
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    model = DEN.load(shipped_model_path(finetune=False))
    names, model_params, pretrain_params = dev.shipped_settings()
    # the binary sets by name, each multiclass one as its binary cuts NAME~bK
    assert {name.split("~b")[0] for name in model.metadata["pretrained_on"]} == set(names)
    assert len(names) == 186
    saved = asdict(model.config)
    assert {key: saved[key] for key in model_params} == {
        key: tuple(value) if isinstance(value, list) else value for key, value in model_params.items()}
    assert {key: model.metadata["pretrain"][key] for key in pretrain_params} == pretrain_params
    _, changed, changed_pretrain = dev.shipped_settings(seed=2, pretrain={"steps": 10})
    assert changed == {**model_params, "seed": 2}
    assert changed_pretrain == {**pretrain_params, "seed": 2, "steps": 10}
    # --leave-out (session 46) drops exactly the sets named, and refuses a name it does not list
    fewer, *_ = dev.shipped_settings(leave_out=["corpus-ring", "fri_c2_250_25"])
    assert fewer == [name for name in names if name not in ("corpus-ring", "fri_c2_250_25")]
    assert len(fewer) == 184
    with pytest.raises(SystemExit, match="corpus-rings not among the shipped pre-training sets"):
        dev.shipped_settings(leave_out=["corpus-ring", "corpus-rings"])


def test_the_classifier_picks_the_shipped_model_its_fit_needs(monkeypatch):
    """No model given: the default preset (network adaptation) and preset "fast" load the
    PLF-free model, a fine-tuning fit (preset "paper", or variant "den") the PLF model whose
    calibration it tunes."""
    import den.fitting

    loaded = []
    real = den.fitting.load_model
    monkeypatch.setattr(den.fitting, "load_model", lambda path: loaded.append(path) or real(path))
    task = make_task("pick", 120, 4, seed=5)
    default = DENClassifier(finetune_network_steps=2).fit(task.x[:50], task.y[:50])
    paper = DENClassifier(preset="paper", finetune_epochs=1, finetune_steps_per_epoch=1)
    paper.fit(task.x[:50], task.y[:50])
    DENClassifier(variant="den", finetune_epochs=1).fit(task.x[:50], task.y[:50])
    fast = DENClassifier(preset="fast").fit(task.x[:50], task.y[:50])
    assert loaded == [SHIPPED_MODELS[False], SHIPPED_MODELS[True], SHIPPED_MODELS[True],
                      SHIPPED_MODELS[False]]
    assert len(paper.finetune_losses_) == 1  # the PLFs were tuned
    assert len(default.finetune_losses_) == 2  # the PLF-free model's network was adapted
    assert fast.finetune_losses_ == []


def test_default_classifier_learns_a_binary_task_it_never_saw():
    task = make_task("unseen", 600, 7, seed=123)
    clf = DENClassifier().fit(task.x[:50], task.y[:50])
    assert not clf.one_vs_rest_ and len(clf.finetune_losses_) == 50  # the preset: 50 adaptation steps
    proba = clf.predict_proba(task.x[50:])
    assert proba.shape == (550, 2)
    auc = roc_auc_score(task.y[50:], proba[:, 1])
    forest = RandomForestClassifier(200, random_state=0).fit(task.x[:50], task.y[:50])
    assert auc > 0.75 and auc > roc_auc_score(task.y[50:], forest.predict_proba(task.x[50:])[:, 1]) - 0.05


def test_default_classifier_on_five_classes_one_against_the_rest():
    task = make_task("five", 700, 6, 5, seed=321)
    labels = np.array(["a", "b", "c", "d", "e"])[task.y]
    clf = DENClassifier().fit(task.x[:100], labels[:100])
    assert clf.one_vs_rest_ and len(clf.class_models_) == 5
    proba = clf.predict_proba(task.x[100:])
    assert proba.shape == (600, 5) and np.allclose(proba.sum(axis=1), 1)
    accuracy = np.mean(clf.predict(task.x[100:]) == labels[100:])
    assert accuracy > 0.5, accuracy  # chance is about 0.2


def test_predict_and_info_without_a_model_use_the_shipped_one(tmp_path, capsys):
    task = make_task("cli", 200, 4, seed=8)
    # float64 values, which a CSV file holds exactly (float32 ones it rounds to their shortest
    # decimal, a float64 1e-8 away: adaptation's 50 Adam steps would carry that to 1e-4)
    frame = pd.DataFrame(task.x.astype(np.float64), columns=["a", "b", "c", "d"])
    frame["label"] = np.where(task.y == 1, "yes", "no")
    frame[:50].to_csv(tmp_path / "support.csv", index=False)
    frame[50:].drop(columns="label").to_csv(tmp_path / "query.csv", index=False)
    out = tmp_path / "pred.csv"
    assert main(["predict", "--support", str(tmp_path / "support.csv"), "--target", "label",
                 "--query", str(tmp_path / "query.csv"), "--out", str(out)]) == 0
    pred = pd.read_csv(out)
    assert list(pred.columns) == ["prediction", "proba_no", "proba_yes"] and len(pred) == 150
    features = frame.drop(columns="label")
    expected = DENClassifier().fit(features[:50], frame["label"][:50], X_unlabeled=features[50:])
    np.testing.assert_allclose(pred["proba_yes"], expected.predict_proba(features[50:])[:, 1], atol=1e-5)
    capsys.readouterr()
    assert main(["info"]) == 0
    config = json.loads(capsys.readouterr().out)["config"]
    assert config["order"] == 3 and not config["use_calibration"]
    assert main(["info", "--preset", "paper"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["use_calibration"]


def test_a_missing_shipped_model_says_how_to_build_it(monkeypatch, tmp_path):
    import den.pretrained
    from den.errors import DENModelError

    monkeypatch.setitem(den.pretrained.SHIPPED_MODELS, False, tmp_path / "gone.npz")
    with pytest.raises(DENModelError, match="gone.npz is missing; build it with `make shipped-model`"):
        shipped_model_path()
    assert shipped_model_path(finetune=True).is_file()


def test_the_extra_real_tasks_leave_out_near_copies_and_restatements(monkeypatch):
    """docs/benchmarks/rdatasets_more_dev.py (session 49) must not hand pre-training a copy of a
    set that a model is scored on: a subset of a protected set's rows with its columns reordered
    and one dropped is found, a set of other values is not; and a label's restatement (its
    logarithm) is dropped from the features while a column that is not one stays."""
    import importlib.util
    from pathlib import Path

    import pandas as pd

    folder = Path(__file__).resolve().parents[1] / "docs" / "benchmarks"
    monkeypatch.syspath_prepend(str(folder))  # the script imports its neighbour rdatasets_dev
    spec = importlib.util.spec_from_file_location("rdatasets_more_dev", folder / "rdatasets_more_dev.py")
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    rng = np.random.default_rng(0)
    protected = pd.DataFrame({"age": rng.normal(50, 10, 300).round(1), "income": rng.lognormal(10, 1, 300),
                              "score": rng.uniform(0, 1, 300), "group": rng.integers(0, 3, 300)})
    index = dev.CopyIndex()
    index.add("tabular/protected", protected)
    copy = protected.sample(240, random_state=1)[["score", "age", "group"]]
    assert index.near_copy(copy) == "tabular/protected"
    other = pd.DataFrame({"a": rng.normal(0, 1, 300), "b": rng.uniform(5, 9, 300),
                          "c": rng.integers(0, 2, 300)})
    assert index.near_copy(other) is None

    size = rng.lognormal(3, 1, 400)
    frame = pd.DataFrame({"rownames": np.arange(1, 401), "size": size, "log_size": np.log(size),
                          "noise": rng.normal(0, 1, 400), "other": rng.normal(0, 1, 400),
                          "kind": rng.choice(["x", "y"], 400), "id": [f"n{i}" for i in range(400)]})
    assert dev.label_candidates(dev.clean(frame)) == ["size", "log_size", "noise", "other", "kind"]
    drawn = dev.label_candidates
    monkeypatch.setattr(dev, "label_candidates", lambda table: ["size"])  # the draw, made certain
    task, label = dev.build_task("rx_test_set", frame)
    assert label == "size" and task.feature_names == ["noise", "other", "kind"]
    assert task.n_classes == 2 and task.n_rows == 400 and abs(task.y.mean() - 0.5) < 0.01
    monkeypatch.setattr(dev, "label_candidates", drawn)

    # --labels outcome: the documented formula's response first, else an outcome-named column of
    # two values; follow-up times leave the features
    study = pd.DataFrame({"futime": rng.exponential(100, 400), "status": rng.integers(0, 2, 400),
                          "age": rng.normal(60, 8, 400), "dose": rng.normal(5, 1, 400),
                          "bmi": rng.normal(25, 3, 400)})
    assert dev.outcome_label(study, "fit <- lm(dose ~ age + bmi, data = study)") == "dose"
    assert dev.outcome_label(study, "no model here") == "status"
    assert dev.outcome_label(study.drop(columns="status"), "") is None
    task, label = dev.build_task("rx_test_study", study, documentation="")
    assert label == "status" and task.feature_names == ["age", "dose", "bmi"]


def test_the_column_rule_tries_drop_monotone_copies_only_and_skip_one_row_classes(monkeypatch):
    """docs/benchmarks/restated_columns_dev.py (session 50) drops a column that a monotone map of an
    earlier one restates (rising or falling, missing values aside) and keeps an unrelated column and
    a constant one; feature_selection_dev.py keeps all features, without fitting anything, where a
    class has a single support row (a cross-validation fold would train on one class)."""
    import importlib.util
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "docs" / "benchmarks"
    monkeypatch.syspath_prepend(str(folder))  # the scripts import their neighbours

    def load(name):
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    restated, selection = load("restated_columns_dev"), load("feature_selection_dev")
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=50), rng.normal(size=50)
    log_copy = np.log(a + 10.0)
    log_copy[:3] = np.nan  # a copy with a few values missing is still a copy
    x = np.column_stack([a, b, log_copy, -a ** 3, np.full(50, 2.0), b + 0.8 * rng.normal(size=50)])
    assert restated.restated_columns(x) == [2, 3]
    assert restated.restated_columns(x[:, [1, 5]]) == []  # correlated (about 0.8) is not restated

    y = np.zeros(50, dtype=int)
    y[7] = 1
    assert selection.chosen_features(x, y, x) is None
