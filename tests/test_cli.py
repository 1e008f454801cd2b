"""The command line: pretrain on a directory of CSVs, predict, info, help, errors."""

import json
import re
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from den.cli import build_parser, main
from den.data.synthetic import make_tasks
from den.errors import DENInputWarning


def test_pretrain_then_predict(tmp_path, csv_tasks, capsys):
    model = tmp_path / "model.npz"
    assert main(["pretrain", "--tasks", str(csv_tasks), "--out", str(model), "--steps", "15",
                 "--query-rows", "16", "--support-rows", "16", "--quiet"]) == 0
    assert model.is_file() and not (tmp_path / "model.npz.checkpoint").exists()
    assert main(["info", str(model)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["config"]["head"] == "binary" and len(info["metadata"]["pretrained_on"]) == 3
    generated = tmp_path / "generated.npz"
    assert main(["pretrain", "--tasks", str(csv_tasks), "--out", str(generated), "--steps", "2",
                 "--query-rows", "16", "--support-rows", "16", "--quiet", "--generated-tasks", "2"]) == 0
    assert main(["info", str(generated)]) == 0
    names = json.loads(capsys.readouterr().out)["metadata"]["pretrained_on"]
    assert len(names) == 5 and names[-2:] == ["gen-000", "gen-001"]
    assert main(["info", str(generated), "--preset", "paper"]) == 2  # which model: not silently PATH
    assert "give a model PATH or --preset" in capsys.readouterr().err
    # readable: a list of numbers (layer widths, a loss-curve point) is one line, not one per number
    assert main(["info", str(generated)]) == 0
    out = capsys.readouterr().out
    assert '"phi_units": [64, 64, 64],' in out and json.loads(out)["config"]["phi_units"] == [64, 64, 64]
    from den.cli import _readable_json

    value = {"curve": [[100, 0.5], [200, -2.5e-05]], "names": ["a[1,\n 2]", "b"], "flags": [True, None],
             "empty": [], "text": "[1,   2]"}
    assert json.loads(_readable_json(value)) == value and '[200, -2.5e-05]' in _readable_json(value)

    task = make_tasks(1, seed=9, rows=(120, 120), features=(3, 3))[0]
    frame = pd.DataFrame(task.x, columns=["a", "b", "c"])
    frame["label"] = np.where(task.y == 1, "pos", "neg")
    frame[:50].to_csv(tmp_path / "support.csv", index=False)
    frame[50:].to_csv(tmp_path / "query.csv", index=False)  # target column present: ignored
    out = tmp_path / "pred.csv"
    assert main(["predict", "--model", str(model), "--support", str(tmp_path / "support.csv"),
                 "--target", "label", "--query", str(tmp_path / "query.csv"), "--out", str(out),
                 "--preset", "paper", "--finetune-epochs", "1", "--keep-query-columns"]) == 0
    pred = pd.read_csv(out)
    assert len(pred) == 70
    assert list(pred.columns[-3:]) == ["prediction", "proba_neg", "proba_pos"]
    assert set(pred["prediction"]) <= {"pos", "neg"}
    np.testing.assert_allclose(pred["proba_neg"] + pred["proba_pos"], 1, atol=1e-6)
    # early stopping: K-fold over the support set, K = the ensemble, which must be >= 2
    common = ["predict", "--model", str(model), "--support", str(tmp_path / "support.csv"), "--target",
              "label", "--query", str(tmp_path / "query.csv"), "--preset", "paper", "--finetune-epochs", "2",
              "--finetune-early-stopping"]
    stopped = tmp_path / "stopped.csv"
    capsys.readouterr()
    # calibration options under the default preset (network adaptation) are an error, not ignored
    assert main([*common[:-5], "--finetune-epochs", "2", "--out", str(stopped)]) == 2 and not stopped.exists()
    # each setting is named as the option that sets it
    assert "--finetune-epochs given, but preset 'default' (variant 'adapt') does not use it: add " \
           "--variant den (or --preset paper)" in capsys.readouterr().err
    assert main(common + ["--out", str(stopped)]) == 2 and not stopped.exists()
    assert "needs --finetune-ensemble >= 2" in capsys.readouterr().err
    assert main(common + ["--out", str(stopped), "--finetune-ensemble", "2"]) == 0
    assert len(pd.read_csv(stopped)) == 70
    # a huge tolerance keeps the pre-trained PLFs: the predictions of --variant no_finetune
    frozen = tmp_path / "frozen.csv"
    assert main(common + ["--out", str(stopped), "--finetune-ensemble", "2",
                          "--finetune-early-stopping-tolerance", "1e6"]) == 0
    assert main(common[:-3] + ["--out", str(frozen), "--variant", "no_finetune"]) == 0
    np.testing.assert_allclose(pd.read_csv(stopped)["proba_pos"], pd.read_csv(frozen)["proba_pos"], atol=1e-6)
    # output scaling at the pre-trained PLFs: the same ranking through a fitted logit map
    scaled = tmp_path / "scaled.csv"
    assert main(common + ["--out", str(scaled), "--finetune-ensemble", "2",
                          "--finetune-early-stopping-tolerance", "1e6", "--finetune-output-scaling"]) == 0
    scaled_pos, frozen_pos = pd.read_csv(scaled)["proba_pos"], pd.read_csv(frozen)["proba_pos"]
    assert not np.allclose(scaled_pos, frozen_pos, atol=1e-3)
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    slope, intercept = np.polyfit(logit(frozen_pos), logit(scaled_pos), 1)
    assert slope > 0
    np.testing.assert_allclose(logit(scaled_pos), slope * logit(frozen_pos) + intercept, atol=1e-3)


def test_errors_name_the_problem_and_write_nothing(tmp_path, csv_tasks, capsys):
    support = next(csv_tasks.glob("*.csv"))
    out = tmp_path / "pred.csv"
    code = main(["predict", "--model", str(tmp_path / "none.npz"), "--support", str(support),
                 "--target", "target", "--query", str(support), "--out", str(out)])
    assert code == 2 and not out.exists()
    assert "none.npz" in capsys.readouterr().err
    code = main(["predict", "--model", "m", "--support", str(support), "--target", "label",
                 "--query", str(support), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "no column 'label'" in err and "'target'" in err
    assert main(["pretrain", "--tasks", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert not out.exists()


@pytest.mark.parametrize("command", ["predict", "pretrain", "info"])
def test_help_explains_every_option(command, capsys):
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args([command, "--help"])
    text = capsys.readouterr().out
    sub = parser._subparsers._group_actions[0].choices[command]
    for action in sub._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, f"{command} {action.option_strings} has no help"
            assert action.option_strings[-1] in text


def test_classifier_keywords_are_the_fit_settings():
    """DENClassifier's keywords and den.fitting.FitSettings's fields: the same names in the same
    order with the same defaults (``fit_table`` reads the defaults from FitSettings)."""
    import dataclasses
    import inspect

    from den.api import DENClassifier
    from den.fitting import FitSettings

    keywords = list(inspect.signature(DENClassifier.__init__).parameters.values())[1:]
    fields = dataclasses.fields(FitSettings)
    assert [p.name for p in keywords] == [f.name for f in fields]
    assert [p.default for p in keywords] == [f.default for f in fields]


def test_fit_table_passes_every_paper_setting_to_fine_tuning(monkeypatch, small_binary_model):
    """Variant "den": each finetune_* setting it reads reaches FinetuneConfig under its own name
    (without the prefix), the seed too; FitSettings' defaults are FinetuneConfig's."""
    import dataclasses

    import den.fitting
    from den.data.synthetic import make_task
    from den.fitting import VARIANT_SETTINGS, FitSettings, fit_table
    from den.pretrained import FINETUNE_TUPLES_PER_STEP
    from den.train.finetune import FinetuneConfig

    defaults = FitSettings()
    for name in VARIANT_SETTINGS["den"]:
        if name != "finetune_tuples_per_step":
            assert getattr(defaults, name) == getattr(FinetuneConfig(), name.removeprefix("finetune_")), name
    # the one exception: a fit reads a sample of the tuples a step; FinetuneConfig all of them
    assert defaults.finetune_tuples_per_step == FINETUNE_TUPLES_PER_STEP
    assert FinetuneConfig().tuples_per_step is None
    seen = []
    monkeypatch.setattr(den.fitting, "fit_task", lambda *args, **kwargs: seen.append(args[4]) or 1 / 0)
    changed = dict(finetune_epochs=3, finetune_steps_per_epoch=4, finetune_learning_rate=0.02,
                   finetune_ensemble=2, finetune_early_stopping=True,
                   finetune_early_stopping_tolerance=0.5, finetune_output_scaling=True,
                   finetune_output_scaling_learning_rate=0.3, finetune_feature_counts=(2,),
                   finetune_feature_counts_tolerance=0.25, finetune_tuples_per_step=64)
    assert sorted(changed) == sorted(VARIANT_SETTINGS["den"])  # every setting, each off its default
    task = make_task("settings", 40, 3, seed=1)
    with pytest.raises(ZeroDivisionError):
        fit_table(FitSettings(model=small_binary_model, variant="den", seed=7, **changed), task.x, task.y)
    expected = FinetuneConfig(seed=7, **{name.removeprefix("finetune_"): value
                                         for name, value in changed.items()})
    assert seen == [expected]
    # each value differs from its default, so a setting dropped on the way would show
    assert all(getattr(expected, f.name) != f.default for f in dataclasses.fields(FinetuneConfig)
               if "finetune_" + f.name in changed)


def test_predict_does_not_import_scikit_learn(model_and_tables, tmp_path):
    """`den predict` fits through den.fitting, so a cold command does not pay scikit-learn's
    import (issue 22); the predictions are DENClassifier's."""
    import subprocess
    import sys

    from den.api import DENClassifier

    model, support, query = model_and_tables
    out = tmp_path / "pred.csv"
    program = ("import sys; from den.cli import main; "
               f"code = main({_predict_args(model, support, query, out)!r}); "
               "print(code, 'sklearn' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert run.stdout.split() == ["0", "False"], run.stderr
    frame = pd.read_csv(support)
    clf = DENClassifier(model=str(model)).fit(frame.drop(columns="label"), frame["label"],
                                              X_unlabeled=pd.read_csv(query))
    expected = clf.predict_proba(pd.read_csv(query))
    written = pd.read_csv(out)
    np.testing.assert_allclose(written[[f"proba_{c}" for c in clf.classes_]].to_numpy(), expected,
                               rtol=1e-5, atol=1e-6)
    assert (written["prediction"] == clf.predict(pd.read_csv(query))).all()


def test_predict_reads_both_files_before_tensorflow_and_encodes_the_query_once(
        model_and_tables, tmp_path, monkeypatch, capsys):
    """`den predict` reads the support and query files before it imports TensorFlow, so that a
    large query file's reading peak does not add to TensorFlow's memory and a bad file is named
    at once; the query's features are encoded once (the fit's keypoints already need them);
    and an output column clash is refused before the query is scored (issue 22)."""
    import subprocess
    import sys

    from den.data.encoding import TabularEncoder
    from den.train.finetune import FittedTask

    model, support, query = model_and_tables
    lacking = tmp_path / "lacking.csv"
    pd.read_csv(query).drop(columns="b").to_csv(lacking, index=False)
    program = ("import sys; from den.cli import main; "
               f"code = main({_predict_args(model, support, lacking, tmp_path / 'o.csv')!r}); "
               "print(code, 'tensorflow' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert run.stdout.split() == ["2", "False"], run.stderr
    assert "lacks the support's feature column(s) ['b']" in run.stderr
    huge = tmp_path / "huge.csv"  # a value the encoding refuses: named before TensorFlow too
    pd.read_csv(query).assign(b=lambda f: f["b"].where(f.index != 3, 1e39)).to_csv(huge, index=False)
    run = subprocess.run([sys.executable, "-c", program.replace(repr(str(lacking)), repr(str(huge)))],
                         capture_output=True, text=True, timeout=300)
    assert run.stdout.split() == ["2", "False"], run.stderr
    assert "features column 'b' has values beyond float32 range" in run.stderr

    encoded = []
    transform = TabularEncoder.transform
    monkeypatch.setattr(TabularEncoder, "transform", lambda self, x, what="query features":
                        encoded.append(what) or transform(self, x, what))
    for options, name in (([], "transductive"), (["--keypoints-from", "support"], "own")):
        encoded.clear()
        assert main(_predict_args(model, support, query, tmp_path / f"{name}.csv") + options) == 0
        queries = [what for what in encoded if what.startswith("query")]  # not the support's
        assert queries == [f"query file {str(query)!r} features"], (name, encoded)
    clashing = tmp_path / "clashing.csv"
    pd.read_csv(query)[:25].assign(proba_yes=1.0).to_csv(clashing, index=False)
    scored = []  # the rows of each scoring: the fit scores its support rows (60), never the query's 25
    proba = FittedTask.proba
    monkeypatch.setattr(FittedTask, "proba",
                        lambda self, x, *a, **k: scored.append(len(x)) or proba(self, x, *a, **k))
    capsys.readouterr()
    assert main(_predict_args(model, support, clashing, tmp_path / "c.csv") + ["--keep-query-columns"]) == 2
    assert "has the column(s) ['proba_yes'], which the output adds" in capsys.readouterr().err
    assert 25 not in scored and not (tmp_path / "c.csv").exists()


def test_fine_tuning_defaults_agree_everywhere():
    from den.api import DENClassifier
    from den.pretrained import FINETUNE_TUPLES_PER_STEP
    from den.train.finetune import FinetuneConfig

    args = build_parser().parse_args(["predict", "--model", "m", "--support", "s", "--target", "t",
                                      "--query", "q", "--out", "o"])
    config, params = FinetuneConfig(), DENClassifier().get_params()
    assert args.finetune_epochs == params["finetune_epochs"] == config.epochs
    assert args.finetune_steps_per_epoch == params["finetune_steps_per_epoch"] == config.steps_per_epoch
    assert args.finetune_learning_rate == params["finetune_learning_rate"] == config.learning_rate
    for name in ("ensemble", "early_stopping", "early_stopping_tolerance", "output_scaling",
                 "output_scaling_learning_rate", "feature_counts", "feature_counts_tolerance"):
        assert getattr(args, f"finetune_{name}") == params[f"finetune_{name}"] == getattr(config, name), name
    # a fit reads a sample of the tuples a step (FinetuneConfig, the paper and the workflow: all)
    assert args.finetune_tuples_per_step == params["finetune_tuples_per_step"] == FINETUNE_TUPLES_PER_STEP
    assert config.tuples_per_step is None
    base = ["predict", "--model", "m", "--support", "s", "--target", "t", "--query", "q", "--out", "o"]
    for given, read in (("All", None), ("64", 64)):
        args = build_parser().parse_args(base + ["--finetune-tuples-per-step", given])
        assert args.finetune_tuples_per_step == read


def test_bad_fit_options_are_refused_before_any_file_is_read(model_and_tables, tmp_path, capsys):
    model, support, query = model_and_tables
    args = _predict_args(model, support, query, tmp_path / "p.csv")
    for given in ("half", "0", "-3"):  # refused as the command line is read, before any file
        with pytest.raises(SystemExit):
            main(args + ["--finetune-tuples-per-step", given])
        assert f"--finetune-tuples-per-step: a whole number of tuples (1 or more) or 'all', got {given!r}" \
            in capsys.readouterr().err
    assert not (tmp_path / "p.csv").exists()
    # a support file that does not exist: the setting, checked first, is what is named
    unread = _predict_args(model, tmp_path / "missing.csv", query, tmp_path / "p.csv")
    for option, value, message in (
            ("--seed", "-1", "--seed must be a non-negative integer, got -1"),
            ("--min-support-rows", "-3", "--min-support-rows must be an integer >= 1, got -3")):
        assert main(unread + [option, value]) == 2
        err = capsys.readouterr().err
        assert message in err and "missing.csv" not in err


@pytest.fixture()
def model_and_tables(tmp_path, small_binary_model):
    """A saved small model, a labelled support CSV and a query CSV."""
    model = small_binary_model.save(tmp_path / "model.npz")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(60, 2)), columns=["a", "b"])
    frame["label"] = np.where(frame["a"] > frame["b"], "yes", "no")
    frame.to_csv(tmp_path / "support.csv", index=False)
    frame.drop(columns="label").to_csv(tmp_path / "query.csv", index=False)
    return model, tmp_path / "support.csv", tmp_path / "query.csv"


def _predict_args(model, support, query, out):
    return ["predict", "--model", str(model), "--support", str(support), "--target", "label",
            "--query", str(query), "--out", str(out)]


def test_output_paths_are_checked_before_any_work(tmp_path, csv_tasks, model_and_tables, capsys,
                                                  monkeypatch):
    import den.fitting
    import den.train.pretrain

    def no_work(*args, **kwargs):
        raise AssertionError("the work started before the output path was checked")

    monkeypatch.setattr(den.fitting, "fit_table", no_work)
    monkeypatch.setattr(den.train.pretrain, "pretrain", no_work)
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "m.npz.checkpoint").write_text("x")
    folder = tmp_path / "folder"
    folder.mkdir()
    before = sorted(tmp_path.rglob("*"))
    bad = {folder: "is a directory; give the path of a file",
           tmp_path / "a_file" / "pred.csv": "lies under .*a_file', which is a file, not a directory",
           tmp_path / "a_file" / "deeper" / "pred.csv": "lies under .*a_file', which is a file"}
    for out, message in bad.items():
        assert main(_predict_args(*model_and_tables, out)) == 2
        assert re.search(f"den predict: error: --out '.*' {message}", capsys.readouterr().err)
        assert main(["pretrain", "--tasks", str(csv_tasks), "--out", str(out), "--quiet"]) == 2
        assert re.search(f"den pretrain: error: --out '.*' {message}", capsys.readouterr().err)
    assert main(["pretrain", "--tasks", str(csv_tasks), "--out", str(tmp_path / "m.npz"),
                 "--checkpoint-dir", str(tmp_path / "a_file")]) == 2
    assert "--checkpoint-dir" in capsys.readouterr().err
    # the default checkpoint directory, OUT.checkpoint, is a file
    assert main(["pretrain", "--tasks", str(csv_tasks), "--out", str(tmp_path / "m.npz")]) == 2
    assert "checkpoint directory (--checkpoint-dir)" in capsys.readouterr().err
    assert sorted(tmp_path.rglob("*")) == before


def test_values_beyond_float32_range_fail_the_command(tmp_path, model_and_tables, capsys):
    model, support, query = model_and_tables
    frame = pd.read_csv(query)
    frame.loc[4, "b"] = 1e39
    frame.to_csv(tmp_path / "huge.csv", index=False)
    out = tmp_path / "pred.csv"
    assert main(_predict_args(model, support, tmp_path / "huge.csv", out)) == 2 and not out.exists()
    assert "features column 'b' has values beyond float32 range" in capsys.readouterr().err


def test_model_and_support_errors_say_what_is_wrong(tmp_path, model_and_tables, capsys):
    import pickle

    model, support, query = model_and_tables
    out = tmp_path / "pred.csv"
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b,label\n")
    assert main(_predict_args(model, empty, query, out)) == 2
    assert "the support set has no rows" in capsys.readouterr().err
    spaced = tmp_path / "spaced.csv"
    pd.read_csv(support).rename(columns={"label": " Label "}).to_csv(spaced, index=False)
    assert main(_predict_args(model, spaced, query, out)) == 2
    assert (f"support file {str(spaced)!r} has no column 'label' (did you mean ' Label '?); its "
            f"columns are ['a', 'b', ' Label ']") in capsys.readouterr().err
    assert main(_predict_args(tmp_path, support, query, out)) == 2
    assert "is a directory, not a model file" in capsys.readouterr().err
    assert main(["info", str(tmp_path)]) == 2
    assert "is a directory, not a model file" in capsys.readouterr().err
    assert main(["info", ""]) == 2
    assert "the DEN model path is empty" in capsys.readouterr().err
    pickled = tmp_path / "pickled.npz"
    pickled.write_bytes(pickle.dumps({"weights": [1, 2]}))
    objects = tmp_path / "objects.npz"
    np.savez(objects, weights=np.array([{"a": 1}], dtype=object))
    for path in (pickled, objects):
        assert main(_predict_args(path, support, query, out)) == 2
        err = capsys.readouterr().err
        assert f"{str(path)!r} is not a DEN model file" in err and "allow_pickle" not in err
    assert not out.exists()
    # a model whose pre-training diverged (weights NaN) is refused where it is read
    with np.load(model) as data:
        arrays = {key: data[key] for key in data.files}
    weight = next(key for key in arrays if not key.startswith("__"))
    arrays[weight] = np.full_like(arrays[weight], np.nan)
    nan_model = tmp_path / "nan.npz"
    np.savez(nan_model, **arrays)
    assert main(_predict_args(nan_model, support, query, out)) == 2
    assert f"holds non-finite weights ([{weight!r}]): its pre-training diverged" in capsys.readouterr().err
    assert not out.exists()


def test_version_and_no_command(capsys):
    from den.cli import package_version

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"den {package_version()}"
    assert package_version() == "0.1.0"
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "usage: den" in err and all(f"den {cmd}" in err for cmd in ("pretrain", "predict", "info"))


def test_version_without_an_installed_distribution(monkeypatch):
    import importlib.metadata

    import den
    from den.cli import package_version

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert package_version() == den.__version__


def test_query_columns_other_than_the_features_are_ignored_and_a_missing_one_is_named(
        tmp_path, model_and_tables, capsys):
    """An id column in the query is no feature (kept with --keep-query-columns), and a query
    that lacks a feature column is refused with the query file's name."""
    model, support, query = model_and_tables
    frame = pd.read_csv(query)
    plain = tmp_path / "plain.csv"
    assert main(_predict_args(model, support, query, plain)) == 0
    with_id = tmp_path / "with_id.csv"
    ids = [f"{i:05d}" for i in range(len(frame))]  # copied as written: 00017, not 17
    frame.assign(id=ids)[["id", "b", "a"]].to_csv(with_id, index=False)
    out = tmp_path / "pred.csv"
    assert main(_predict_args(model, support, with_id, out) + ["--keep-query-columns"]) == 0
    written = pd.read_csv(out, dtype={"id": str})
    assert list(written.columns[:3]) == ["id", "b", "a"] and written["id"].tolist() == ids
    np.testing.assert_allclose(written[["proba_no", "proba_yes"]],
                               pd.read_csv(plain)[["proba_no", "proba_yes"]], atol=1e-6)
    # only the columns named, in the order named; a name the file lacks, or one named twice, is
    # refused before anything is fitted
    assert main(_predict_args(model, support, with_id, out) + ["--keep-query-columns", "id"]) == 0
    named = pd.read_csv(out, dtype={"id": str})
    assert list(named.columns) == ["id", "prediction", "proba_no", "proba_yes"]
    assert named["id"].tolist() == ids
    pd.testing.assert_frame_equal(named, written.drop(columns=["b", "a"]))
    assert main(_predict_args(model, support, with_id, out) + ["--keep-query-columns", "a", "id"]) == 0
    assert list(pd.read_csv(out).columns[:2]) == ["a", "id"]
    out.unlink()
    capsys.readouterr()
    assert main(_predict_args(model, support, with_id, out) + ["--keep-query-columns", "id", "ID"]) == 2
    assert f"--keep-query-columns: query file {str(with_id)!r} has no column(s) ['ID'] (did you mean " \
           f"'id'?); its columns are ['id', 'b', 'a']" in capsys.readouterr().err
    assert main(_predict_args(model, support, with_id, out) + ["--keep-query-columns", "id", "id"]) == 2
    assert "--keep-query-columns names ['id'] more than once" in capsys.readouterr().err
    assert not out.exists()
    lacking = tmp_path / "lacking.csv"
    frame.drop(columns="b").to_csv(lacking, index=False)
    capsys.readouterr()
    assert main(_predict_args(model, support, lacking, tmp_path / "none.csv")) == 2
    err = capsys.readouterr().err
    assert f"query file {str(lacking)!r} lacks the support's feature column(s) ['b']" in err
    assert "or leave them out of the fit: --ignore-columns b" in err
    assert not (tmp_path / "none.csv").exists()


def test_ignored_support_columns_are_not_features_and_the_query_need_not_have_them(
        tmp_path, model_and_tables, capsys):
    """--ignore-columns leaves an id out of the features: the predictions are those of the files
    without it (to the byte), whether the query has the id or not; a name that is the target,
    that the support lacks or that is given twice, or leaving no feature, is refused before
    any fit, naming the option and the file."""
    model, support, query = model_and_tables
    assert main(_predict_args(model, support, query, tmp_path / "plain.csv")) == 0
    with_id = tmp_path / "support_id.csv"
    frame = pd.read_csv(support)
    frame.insert(0, "id", np.arange(len(frame)) * 7 + 1000)
    frame.to_csv(with_id, index=False)
    query_id = tmp_path / "query_id.csv"
    pd.read_csv(query).assign(id=np.arange(60) + 5000).to_csv(query_id, index=False)
    assert main(_predict_args(model, with_id, query_id, tmp_path / "used.csv")) == 0
    assert (tmp_path / "used.csv").read_bytes() != (tmp_path / "plain.csv").read_bytes()  # id a feature
    for name, query_file in (("ignored", query_id), ("no_id", query)):
        out = tmp_path / f"{name}.csv"
        assert main(_predict_args(model, with_id, query_file, out) + ["--ignore-columns", "id"]) == 0
        assert out.read_bytes() == (tmp_path / "plain.csv").read_bytes(), name
    capsys.readouterr()
    for ignored, message in ((["label"], "names the target column 'label'"),
                             (["idd"], f"support file {str(with_id)!r} has no column(s) ['idd'] "
                                       f"(did you mean 'id'?)"),
                             (["id", "id"], "--ignore-columns names ['id'] more than once"),
                             (["id", "a", "b"], "leaves support file")):
        out = tmp_path / "refused.csv"
        assert main(_predict_args(model, with_id, query_id, out) + ["--ignore-columns", *ignored]) == 2
        assert message in capsys.readouterr().err and not out.exists(), ignored


def test_a_column_that_numbers_the_rows_is_named_with_the_option_that_leaves_it_out(
        tmp_path, model_and_tables, capsys):
    """A saved pandas index (a blank header read as "Unnamed: 0") or a running id is a feature
    unless --ignore-columns leaves it out: den predict says so, naming the column and the
    option; a column that does not rise by exactly 1 a row (an id 1000, 1007, ...) is not named."""
    from den.data.encoding import row_number_columns

    model, support, query = model_and_tables
    frame = pd.read_csv(support)
    indexed = tmp_path / "indexed.csv"
    frame.assign(order=np.arange(len(frame)) + 1001).to_csv(indexed)  # index=True: a blank header
    capsys.readouterr()
    assert main(_predict_args(model, indexed, query, tmp_path / "a.csv")) == 2  # the query lacks them
    err = capsys.readouterr().err
    assert (f"support file {str(indexed)!r} column 'Unnamed: 0' numbers the rows (0, 1, ..., "
            f"{len(frame) - 1}, a saved row index with no header): it is used as a feature") in err
    assert "column 'order' numbers the rows (1001, 1002, ..., " in err
    assert "pass --ignore-columns 'Unnamed: 0'" in err and "pass --ignore-columns order" in err
    assert main(_predict_args(model, indexed, query, tmp_path / "b.csv") +
                ["--ignore-columns", "Unnamed: 0", "order"]) == 0
    assert "numbers the rows" not in capsys.readouterr().err
    stepped = tmp_path / "stepped.csv"
    frame.assign(id=np.arange(len(frame)) * 7 + 1000).to_csv(stepped, index=False)
    main(_predict_args(model, stepped, query, tmp_path / "c.csv"))
    assert "numbers the rows" not in capsys.readouterr().err
    rising = pd.DataFrame({"n": np.arange(9.0), "gap": [0.0, 1, 2, 3, np.nan, 5, 6, 7, 8]})
    assert row_number_columns(rising) == []  # fewer than 10 rows
    assert row_number_columns(pd.concat([rising, rising + 9], ignore_index=True)) == [("n", 0, 17)]


def test_blank_lines_between_query_rows_are_named_as_skipped(tmp_path, model_and_tables, capsys):
    """pandas skips blank lines, so the output has fewer rows than the query file has lines:
    den predict says how many were skipped (none for blank lines after the last row, nor where
    a quoted cell spans lines)."""
    model, support, query = model_and_tables
    lines = query.read_text().splitlines()
    gapped = tmp_path / "gapped.csv"
    gapped.write_text("\n".join(lines[:3] + [""] + lines[3:10] + ["  ", ""] + lines[10:]) + "\n\n\n")
    capsys.readouterr()
    assert main(_predict_args(model, support, gapped, tmp_path / "out.csv")) == 0
    assert len(pd.read_csv(tmp_path / "out.csv")) == len(lines) - 1
    assert (f"query file {str(gapped)!r}: 3 blank line(s) between its rows are skipped, so the output "
            f"has a row for each of its {len(lines) - 1} other rows") in capsys.readouterr().err
    trailing = tmp_path / "trailing.csv"
    trailing.write_text("\n".join(lines) + "\n\n \n")
    assert main(_predict_args(model, support, trailing, tmp_path / "out2.csv")) == 0
    assert "blank line" not in capsys.readouterr().err
    from den.data.encoding import _blank_lines_between_rows

    assert _blank_lines_between_rows(b'a,b\n"x\n\ny",2\n3,4\n', rows=2) == 0  # a cell's blank line
    assert _blank_lines_between_rows(b"a,b\r\n1,2\r\n\r\n3,4\r\n", rows=2) == 1


def test_a_category_column_read_as_numbers_in_the_query_keeps_its_codes(tmp_path, model_and_tables):
    """pandas reads each CSV's types alone: a category column of "A", "B", "1", "2" in the
    support is text, the same column holding only 1 and 2 in the query is numbers. Those
    must be the support's categories "1" and "2", not unseen (missing) values."""
    model, _, _ = model_and_tables
    rng = np.random.default_rng(3)
    code = rng.choice(["A", "B", "1", "2"], 60)
    frame = pd.DataFrame({"a": rng.normal(size=60), "code": code})
    frame["label"] = np.where((frame["code"].isin(["1", "A"])) ^ (frame["a"] > 0), "yes", "no")
    frame.to_csv(tmp_path / "support.csv", index=False)
    query = pd.DataFrame({"a": rng.normal(size=30), "code": rng.choice(["1", "2"], 30)})
    query.to_csv(tmp_path / "digits.csv", index=False)
    assert pd.read_csv(tmp_path / "digits.csv")["code"].dtype.kind == "i"  # what pandas does
    query.assign(code=query["code"].map({"1": "x1", "2": "x2"})).to_csv(tmp_path / "unseen.csv", index=False)
    outs = {}
    for name in ("digits", "unseen"):
        outs[name] = tmp_path / f"{name}_pred.csv"
        assert main(_predict_args(model, tmp_path / "support.csv", tmp_path / f"{name}.csv", outs[name])
                    + ["--preset", "fast"]) == 0
    from den.api import DENClassifier

    read = pd.read_csv(tmp_path / "support.csv")
    clf = DENClassifier(model=str(model), preset="fast").fit(read[["a", "code"]], read["label"],
                                                             X_unlabeled=query)
    expected = clf.predict_proba(query)  # the query's codes as text, as in the support
    digits = pd.read_csv(outs["digits"])[["proba_no", "proba_yes"]].to_numpy()
    np.testing.assert_allclose(digits, expected, atol=1e-6)
    assert not np.allclose(pd.read_csv(outs["unseen"])[["proba_no", "proba_yes"]].to_numpy(), expected,
                           atol=1e-3)  # missing codes would give other probabilities


def test_output_to_stdout_links_devices_and_kept_permissions(tmp_path, model_and_tables, capsys):
    """--out - writes the CSV to standard output; a symbolic link's target is written and the
    link kept; a device is written in place, not replaced; a file written over keeps its
    permissions; a read-only one is refused before any work."""
    import os
    import stat

    assert main(_predict_args(*model_and_tables, "-")) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "prediction,proba_no,proba_yes"
    assert len(captured.out.splitlines()) == 61 and "standard output" in captured.err
    real = tmp_path / "real"
    real.mkdir()
    (real / "pred.csv").write_text("old\n")
    os.chmod(real / "pred.csv", 0o600)
    link = tmp_path / "pred.csv"
    link.symlink_to("real/pred.csv")
    assert main(_predict_args(*model_and_tables, link)) == 0
    assert link.is_symlink() and (real / "pred.csv").read_text().startswith("prediction,")
    assert stat.S_IMODE((real / "pred.csv").stat().st_mode) == 0o600
    assert main(_predict_args(*model_and_tables, os.devnull)) == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    os.chmod(real / "pred.csv", 0o444)
    capsys.readouterr()
    assert main(_predict_args(*model_and_tables, real / "pred.csv")) == 2
    assert "exists and is read-only" in capsys.readouterr().err
    os.chmod(real / "pred.csv", 0o600)


def test_a_failed_write_is_one_line_and_leaves_the_output(tmp_path, model_and_tables, capsys, monkeypatch):
    """A full disk or a file-size limit while writing: one line naming --out, exit 1, the old
    file untouched."""
    import errno

    out = tmp_path / "pred.csv"
    out.write_text("old\n")
    original = pd.DataFrame.to_csv

    def full(self, handle, **kwargs):
        if hasattr(handle, "write"):
            raise OSError(errno.EFBIG, "File too large")
        return original(self, handle, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    assert main(_predict_args(*model_and_tables, out)) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"den predict: error: writing --out {str(out)!r} failed (File "
                                        f"too large); nothing was written to it"]
    assert out.read_text() == "old\n" and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_diverging_fit_or_pretraining_is_an_error_not_nan_predictions(tmp_path, csv_tasks,
                                                                         model_and_tables, capsys):
    """An infinite learning rate is refused; a finite one so large that the weights overflow
    stops the fit (or pre-training) with an error instead of writing class 0 and blank
    probabilities for every row."""
    out = tmp_path / "pred.csv"
    args = _predict_args(*model_and_tables, out)
    assert main([*args, "--finetune-network-learning-rate", "inf"]) == 2
    assert "--finetune-network-learning-rate must be a finite number > 0, got inf" in capsys.readouterr().err
    assert main([*args, "--finetune-network-learning-rate", "1e6"]) == 2
    err = capsys.readouterr().err  # the rate the preset uses, named as the option that sets it
    assert "fine-tuning diverged" in err and not out.exists()
    assert err.rstrip().endswith("lower --finetune-network-learning-rate (now 1e+06)")
    model = tmp_path / "m.npz"
    common = ["pretrain", "--tasks", str(csv_tasks), "--out", str(model), "--steps", "5",
              "--query-rows", "16", "--support-rows", "16", "--quiet"]
    assert main([*common, "--learning-rate", "inf"]) == 2
    assert "--learning-rate must be a finite number > 0, got inf" in capsys.readouterr().err
    assert main([*common, "--learning-rate", "1e30"]) == 2
    assert "pre-training diverged" in capsys.readouterr().err and not model.exists()


def test_pretrain_takes_an_architecture_from_a_model_or_json_file(tmp_path, csv_tasks, capsys):
    """--model-config: the shipped model's architecture (gated pooling, tuple relevance, ...)
    from its file or `den info`'s JSON; options given explicitly override it; --seed sets the
    initialisation; a bad file is named."""
    from den.pretrained import shipped_model_path

    quick = ["--tasks", str(csv_tasks), "--steps", "2", "--query-rows", "16", "--support-rows", "16",
             "--quiet"]
    shipped = json.loads(_info(capsys, str(shipped_model_path())))["config"]
    assert shipped["gated_pooling"] and shipped["tuple_relevance"] and shipped["order"] == 3
    out = tmp_path / "like.npz"
    assert main(["pretrain", *quick, "--out", str(out), "--model-config", str(shipped_model_path())]) == 0
    like = json.loads(_info(capsys, str(out)))["config"]
    assert like == {**shipped, "seed": 0}  # --seed (default 0) starts the new run's weights
    info = tmp_path / "info.json"
    info.write_text(_info(capsys, str(shipped_model_path())))  # `den info`'s whole output
    out = tmp_path / "order2.npz"
    assert main(["pretrain", *quick, "--out", str(out), "--model-config", str(info), "--order", "2",
                 "--keypoints", "4", "--seed", "3"]) == 0
    changed = {**shipped, "order": 2, "n_keypoints": 4, "seed": 3}
    assert json.loads(_info(capsys, str(out)))["config"] == changed
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"phi_units": [32, 32], "gated_pooling": True}))
    assert main(["pretrain", *quick, "--out", str(out), "--model-config", str(keys)]) == 0
    small = json.loads(_info(capsys, str(out)))["config"]
    assert small["phi_units"] == [32, 32] and small["gated_pooling"] and small["order"] == 2
    for text, message in (('{"phi_unit": [3]}', r"\['phi_unit'\] not ModelConfig keys"),
                          ("phi_units: 3", "neither a model file .* nor JSON"),
                          ('{"tuple_relevance": true}', "tuple_relevance .* needs local_bandwidths")):
        keys.write_text(text)
        bad = ["--out", str(tmp_path / "bad.npz"), "--model-config", str(keys)]
        assert main(["pretrain", *quick, *bad]) == 2
        assert re.search(message, capsys.readouterr().err), message
        assert not (tmp_path / "bad.npz").exists()
    assert main(["pretrain", *quick, "--out", str(tmp_path / "bad.npz"), "--model-config", "nope.json"]) == 2
    assert "--model-config 'nope.json' does not exist" in capsys.readouterr().err
    bad = ["--out", str(tmp_path / "bad.npz"), "--model-config", str(tmp_path)]
    assert main(["pretrain", *quick, *bad]) == 2
    assert f"--model-config {str(tmp_path)!r} is a directory" in capsys.readouterr().err
    plain = tmp_path / "model"  # a model file named without .npz is read as one
    plain.write_bytes(shipped_model_path().read_bytes())
    assert main(["pretrain", *quick, "--out", str(tmp_path / "plain.npz"), "--model-config", str(plain)]) == 0
    saved = json.loads(_info(capsys, str(tmp_path / "plain.npz")))
    assert saved["config"] == {**shipped, "seed": 0}
    from den import __version__
    from den.model.den import COMPUTATION

    assert saved["saved_by"] == {"den": __version__, "computation": COMPUTATION}


def test_an_older_model_file_warns_in_one_line_and_not_when_only_its_architecture_is_read(
        tmp_path, csv_tasks, capsys):
    """A model file saved before a change to what it predicts: `den info` (as every command
    that loads it) warns in one line that names the file, without den's own file and line;
    `den pretrain --model-config` reads only its architecture, which no such change touches,
    and says nothing."""
    from den.model.config import ModelConfig
    from den.model.den import DEN

    from helpers import SMALL

    triples = ModelConfig(order=3, **{k: v for k, v in SMALL.items() if k != "seed"})
    old = DEN(triples).save(tmp_path / "old.npz")
    with np.load(old) as data:  # as a file of before den recorded its computation
        kept = {k: data[k] for k in data.files if k not in ("__den_computation__", "__den_version__")}
    np.savez(old, **kept)
    capsys.readouterr()
    assert main(["info", str(old)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"den info: warning: DEN model {str(old)!r} does not record the den that saved it")
    assert err.count("\n") == 1 and ".py:" not in err and "DENModelWarning" not in err
    quick = ["--tasks", str(csv_tasks), "--steps", "2", "--query-rows", "16", "--support-rows", "16",
             "--quiet"]
    assert main(["pretrain", *quick, "--out", str(tmp_path / "new.npz"), "--model-config", str(old)]) == 0
    assert "warning" not in capsys.readouterr().err
    assert json.loads(_info(capsys, str(tmp_path / "new.npz")))["config"]["order"] == 3


def _info(capsys, path: str) -> str:
    """`den info PATH`'s output."""
    capsys.readouterr()
    assert main(["info", path]) == 0
    return capsys.readouterr().out


def test_pretrain_refuses_continuous_labels_and_names_the_file(tmp_path, capsys):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=40), "target": rng.normal(size=40).round(1)})
    frame.to_csv(tasks / "reg.csv", index=False)
    assert main(["pretrain", "--tasks", str(tasks), "--out", str(tmp_path / "m.npz"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"task file {str(tasks / 'reg.csv')!r} column 'target' has continuous values" in err


def test_a_checkpoint_past_the_steps_damaged_or_of_other_data_is_refused(tmp_path, csv_tasks, capsys):
    """Resuming needs the checkpoint of this very run: not one already past --steps (which
    would write its weights as a model of fewer steps), not a damaged one (one line, not
    TensorFlow's traceback), not one of the same files with other contents."""
    checkpoint = tmp_path / "ck"
    common = ["pretrain", "--tasks", str(csv_tasks), "--out", str(tmp_path / "m.npz"), "--query-rows",
              "16", "--support-rows", "16", "--quiet", "--checkpoint-dir", str(checkpoint),
              "--checkpoint-every", "5"]
    assert main([*common, "--steps", "10"]) == 0
    assert main([*common, "--steps", "6"]) == 2
    assert "is at step 10, past the 6 steps asked for" in capsys.readouterr().err
    data = next(checkpoint.glob("ckpt-10.data-*"))
    kept = data.read_bytes()
    data.write_bytes(kept[:100])
    assert main([*common, "--steps", "20"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is damaged" in err[0] and "delete it" in err[0]
    data.write_bytes(kept)
    first = sorted(csv_tasks.glob("*.csv"))[0]
    frame = pd.read_csv(first)
    frame["target"] = frame["target"].map({"yes": "no", "no": "yes"})
    frame.to_csv(first, index=False)
    assert main([*common, "--steps", "20"]) == 2
    assert "holds a pre-training run with other data; delete it or choose another directory to start " \
           "over (--restart deletes it)" in capsys.readouterr().err
    assert main([*common, "--steps", "20", "--restart"]) == 0  # starts over on the new data


def test_pretrain_on_generated_tasks_alone_and_upper_case_csv_names(tmp_path, csv_tasks, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    model = tmp_path / "gen.npz"
    common = ["--out", str(model), "--steps", "2", "--query-rows", "16", "--support-rows", "16", "--quiet"]
    assert main(["pretrain", "--tasks", str(empty), *common]) == 2
    assert "--generated-tasks N to pre-train on generated tasks alone" in capsys.readouterr().err
    assert main(["pretrain", "--tasks", str(empty), *common, "--generated-tasks", "2"]) == 0
    assert main(["info", str(model)]) == 0
    assert json.loads(capsys.readouterr().out)["metadata"]["pretrained_on"] == ["gen-000", "gen-001"]
    first = sorted(csv_tasks.glob("*.csv"))[0]
    first.rename(first.with_suffix(".CSV"))
    assert main(["pretrain", "--tasks", str(csv_tasks), *common]) == 0
    assert main(["info", str(model)]) == 0
    assert len(json.loads(capsys.readouterr().out)["metadata"]["pretrained_on"]) == 3


def test_pretrain_setting_errors_name_the_options(tmp_path, csv_tasks, capsys):
    common = ["pretrain", "--tasks", str(csv_tasks), "--out", str(tmp_path / "m.npz"), "--quiet"]
    for options, message in ((["--keypoints", "1"], "--keypoints must be >= 2, got 1"),
                             (["--max-covariates", "0"], "--max-covariates must be >= 1, got 0"),
                             (["--support-rows", "4", "--support-rows-min", "9"],
                              "--support-rows-min must be in 1..--support-rows, got 9"),
                             (["--seed", "-1"], "--seed must be a non-negative integer, got -1")):
        assert main([*common, *options]) == 2
        err = capsys.readouterr().err
        assert message in err and "covariates_min" not in err, options  # one problem, said once
    # --out naming a task file: the model would have replaced the file
    task_file = sorted(csv_tasks.glob("*.csv"))[0]
    before = task_file.read_bytes()
    assert main(["pretrain", "--tasks", str(csv_tasks), "--out", str(task_file), "--quiet"]) == 2
    assert f"--out {str(task_file)!r} is the task file" in capsys.readouterr().err
    assert task_file.read_bytes() == before


def test_semicolon_tab_and_latin1_files_read_as_comma_separated_utf8(tmp_path, model_and_tables):
    """Excel in a decimal-comma locale writes "a;b" and 1,5 (or tabs and 1,5); other tools
    write tabs, Latin-1, UTF-16 or decomposed accents, or append lines of another encoding:
    the same table in any of these forms gives the same predictions."""
    model, _, _ = model_and_tables
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"a": rng.normal(size=60).round(3), "city": rng.choice(["Zürich", "Paris"], 60)})
    frame["label"] = np.where(frame["a"] + (frame["city"] == "Paris") > 0.5, "yes", "no")
    forms = {"comma": dict(sep=",", encoding="utf-8"), "tab": dict(sep="\t", encoding="utf-8"),
             "latin1": dict(sep=",", encoding="latin-1"), "bom": dict(sep=",", encoding="utf-8-sig")}
    outs = {}
    for name, form in forms.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False, **form)
    (tmp_path / "semicolon.csv").write_text(frame.to_csv(index=False, sep=";").replace(".", ","))
    (tmp_path / "tab_comma.csv").write_text(frame.to_csv(index=False, sep="\t").replace(".", ","))
    # Excel's "Unicode text"; accents as macOS writes them (e + a combining mark); a UTF-8 export
    # with a byte-order mark and Windows-1252 lines appended
    frame.to_csv(tmp_path / "utf16.csv", index=False, sep="\t", encoding="utf-16")
    import unicodedata

    (tmp_path / "nfd.csv").write_text(unicodedata.normalize("NFD", frame.to_csv(index=False)))
    lines = frame.to_csv(index=False).splitlines(keepends=True)
    (tmp_path / "mixed.csv").write_bytes("".join(lines[:30]).encode("utf-8-sig")
                                         + "".join(lines[30:]).encode("cp1252"))
    for name in [*forms, "semicolon", "tab_comma", "utf16", "nfd", "mixed"]:
        outs[name] = tmp_path / f"{name}_pred.csv"
        assert main(_predict_args(model, tmp_path / f"{name}.csv", tmp_path / f"{name}.csv", outs[name])
                    + ["--preset", "fast"]) == 0
    from den.data.encoding import read_table

    expected = pd.read_csv(outs["comma"])
    for name in outs:  # the table itself ("Zürich", 0.123 as a number), then what DEN makes of it
        pd.testing.assert_frame_equal(read_table(tmp_path / f"{name}.csv"), frame, check_dtype=False)
        pd.testing.assert_frame_equal(pd.read_csv(outs[name]), expected, atol=1e-6)


def test_duplicate_names_and_clashing_output_columns_are_named(tmp_path, model_and_tables, capsys):
    model, support, query = model_and_tables
    twice = tmp_path / "twice.csv"
    twice.write_text("a,b,a,label\n" + "\n".join(f"{i},{-i},{i},{'yes' if i % 2 else 'no'}"
                                                   for i in range(30)) + "\n")
    out = tmp_path / "pred.csv"
    assert main(_predict_args(model, twice, query, out)) == 2
    assert f"support file {str(twice)!r} has more than one column named 'a'; give each column its own " \
           f"name" in capsys.readouterr().err
    # in a query, only a column it is read for must be named once
    frame = pd.read_csv(query)
    assert main(_predict_args(model, support, query, tmp_path / "plain.csv")) == 0
    notes = tmp_path / "notes.csv"
    notes.write_text("note,a,b,note\n" + "".join(f"x,{a},{b},y\n" for a, b in frame.to_numpy()))
    assert main(_predict_args(model, support, notes, tmp_path / "notes_out.csv")) == 0
    assert (tmp_path / "notes_out.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()
    capsys.readouterr()
    for args in (["--keep-query-columns"], ["--keep-query-columns", "note"]):  # the output would
        assert main(_predict_args(model, support, notes, out) + args) == 2  # name "note.1"
        assert f"query file {str(notes)!r} has more than one column named 'note'" in capsys.readouterr().err
    features_twice = tmp_path / "features_twice.csv"
    features_twice.write_text("a,b,b\n" + "".join(f"{a},{b},{b}\n" for a, b in frame.to_numpy()))
    assert main(_predict_args(model, support, features_twice, out)) == 2
    assert f"query file {str(features_twice)!r} has more than one column named 'b'" in capsys.readouterr().err
    clashing = tmp_path / "clashing.csv"
    pd.read_csv(query).assign(prediction="old").to_csv(clashing, index=False)
    keep = ["--keep-query-columns", "--preset", "fast"]
    assert main(_predict_args(model, support, clashing, out) + keep) == 2
    assert "has the column(s) ['prediction'], which the output adds; rename them in the query file, or " \
           "leave out --keep-query-columns" in capsys.readouterr().err
    assert main(_predict_args(model, support, clashing, out) + ["--preset", "fast"]) == 0  # not kept: fine
    assert main(_predict_args(model, support, clashing, out) + ["--preset", "fast",
                                                                "--keep-query-columns", "a"]) == 0
    out.unlink()
    assert main(_predict_args(model, support, query, out) + ["--chunk-rows", "0"]) == 2
    assert "--chunk-rows must be an integer >= 1" in capsys.readouterr().err and not out.exists()


def test_a_stray_question_mark_and_text_dates_in_the_support_keep_the_query_readable(tmp_path,
                                                                                    model_and_tables):
    """One "?" in a numeric support column and dates as text: the query's numbers and later
    dates are read as numbers and days, so its predictions equal those of a support without
    the "?" row (which carries the same evidence but one cell)."""
    model, _, _ = model_and_tables
    rng = np.random.default_rng(7)
    days = rng.integers(0, 400, 90)
    frame = pd.DataFrame({"amount": rng.normal(size=90).round(2),
                          "when": pd.to_datetime(days, unit="D").strftime("%Y-%m-%d")})
    frame["label"] = np.where(frame["amount"] + days / 200 > 1, "yes", "no")
    marked = frame[:60].astype({"amount": object})
    marked.loc[3, "amount"] = "?"
    marked.to_csv(tmp_path / "marked.csv", index=False)
    frame[:60].assign(amount=frame["amount"][:60].where(frame.index[:60] != 3)).to_csv(
        tmp_path / "blank.csv", index=False)
    frame[60:].drop(columns="label").to_csv(tmp_path / "query.csv", index=False)
    preds = {}
    for name in ("marked", "blank"):
        out = tmp_path / f"{name}_pred.csv"
        assert main(_predict_args(model, tmp_path / f"{name}.csv", tmp_path / "query.csv", out)
                    + ["--preset", "fast"]) == 0
        preds[name] = pd.read_csv(out)
    pd.testing.assert_frame_equal(preds["marked"], preds["blank"])
    assert preds["blank"][["proba_no", "proba_yes"]].std().min() > 0.01  # the dates and amounts count


def test_a_query_of_another_separator_or_one_column_reads_its_numbers_as_written(tmp_path):
    """A ';' support with decimal commas (5,666) and a ',' query with decimal points (5.648):
    the query's numbers are its own, not thousands groups in the support's format (5648). A
    one-column ';' query (no separator to show) is read with its support's, its 0,648 a
    decimal comma (split on the comma, it was 0)."""
    from den.data.encoding import read_table

    (tmp_path / "support.csv").write_text("age;score;dose;label\n47;5,666;1,5;yes\n31;1,25;2;no\n"
                                          "52;4,5;0,25;yes\n")
    (tmp_path / "query.csv").write_text('age,score,dose\n69,5.648,"1,5"\n34,4.803,"2,25"\n')
    support = read_table(tmp_path / "support.csv", "support", target="label")
    assert support["score"].tolist() == [5.666, 1.25, 4.5]
    query = read_table(tmp_path / "query.csv", "query", like=support)
    assert query["score"].tolist() == [5.648, 4.803]
    assert query["dose"].tolist() == [1.5, 2.25]  # quoted text, in the support's format
    plain = read_table(tmp_path / "query.csv", "support")  # the other way round: a ',' support
    (tmp_path / "semi.csv").write_text("age;score;dose\n69;0,126;1,5\n34;4,803;2,25\n")
    semi = read_table(tmp_path / "semi.csv", "query", like=plain)  # another writer: its own formats
    assert semi["score"].tolist() == [0.126, 4.803] and semi["dose"].tolist() == [1.5, 2.25]
    (tmp_path / "one.csv").write_text("score;label\n0,666;yes\n1,524;no\n")
    (tmp_path / "one_query.csv").write_text("score\n0,648\n-0,197\n")
    one = read_table(tmp_path / "one.csv", "support", target="label")
    assert read_table(tmp_path / "one_query.csv", "query", like=one)["score"].tolist() == [0.648, -0.197]


def test_tab_files_with_decimal_commas_and_numbers_written_as_text_are_read_or_named(tmp_path):
    """A tab file as Excel exports it in a decimal-comma locale reads its numbers (they were
    categories, every query value unseen); 1,234 alone could group thousands and stays text.
    Numbers written with a unit or grouping that no reading makes numbers ("3,816" quoted in a
    ',' file, "10%") are categories, said at the fit; a ';' column mixing 2.816 and 528 says
    that its point may group thousands."""
    from den.data.encoding import TabularEncoder, read_table

    (tmp_path / "s.tsv").write_text("income\tscore\tcount\tlabel\n2816,12\t0,666\t1,234\tyes\n"
                                    "6176,5\t-1,5\t2,345\tno\n")
    (tmp_path / "q.tsv").write_text("income\tscore\tcount\n2851,2\t0,648\t3,456\n")
    support = read_table(tmp_path / "s.tsv", "support", target="label")
    assert support["income"].tolist() == [2816.12, 6176.5] and support["score"].tolist() == [0.666, -1.5]
    assert support["count"].tolist() == ["1,234", "2,345"]
    query = read_table(tmp_path / "q.tsv", "query", like=support)
    assert query["income"].tolist() == [2851.2] and query["score"].tolist() == [0.648]
    (tmp_path / "grouped.tsv").write_text("income\tlabel\n\"1,234.5\"\tyes\n12,345,678\tno\n")
    assert read_table(tmp_path / "grouped.tsv", target="label")["income"].tolist() == [1234.5, 12345678]
    for values in (["3,816", "1,527", "12,004"], ["10%", "9%", "100%"], ["€1,234", "€980", "€15"]):
        with pytest.warns(DENInputWarning, match=r"column 'x': its values are numbers written with a unit or "
                                                 r"grouping .* read as 3 categories, without their order"):
            TabularEncoder().fit(pd.DataFrame({"x": values}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TabularEncoder().fit(pd.DataFrame({"x": ["red", "blue", "10%"]}))  # categories that are words
    (tmp_path / "de.csv").write_text("income;label\n2.816;yes\n528;no\n1.523;yes\n")
    with pytest.warns(DENInputWarning, match=r"column 'income': '2.816' is read as 2.816 beside "
                                             r"whole numbers such as '528'; if its point groups "
                                             r"thousands \(2816\)"):
        german = read_table(tmp_path / "de.csv", "support", target="label")
    assert german["income"].tolist() == [2.816, 528, 1.523]


def test_labels_are_the_texts_written_where_numbers_would_merge_them(tmp_path, model_and_tables, capsys):
    """Labels '01' and '1' (a zip code, an id) are two classes, as DENClassifier keeps them, with
    a warning; read as numbers they silently were one. Plain numeric labels stay numbers; codes
    007 and 010 keep their spelling in the output (read as numbers, they were 7 and 10). A
    label that pandas reads as missing ('NA') is named in the error, with how to keep it."""
    model, _, query = model_and_tables
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(80, 2)), columns=["a", "b"])
    frame["label"] = rng.choice(["01", "1", "2"], 80)
    frame.to_csv(tmp_path / "zips.csv", index=False)
    out = tmp_path / "pred.csv"
    capsys.readouterr()
    assert main(_predict_args(model, tmp_path / "zips.csv", query, out) + ["--preset", "fast"]) == 0
    assert list(pd.read_csv(out, dtype=str).columns) == ["prediction", "proba_01", "proba_1", "proba_2"]
    err = capsys.readouterr().err
    assert ("den predict: warning: support file " in err and "zips.csv' labels: texts that read as one "
            "number ('01', '1') are read as written, different classes" in err)
    frame.assign(label=rng.integers(0, 2, 80)).to_csv(tmp_path / "plain.csv", index=False)
    assert main(_predict_args(model, tmp_path / "plain.csv", query, out) + ["--preset", "fast"]) == 0
    assert list(pd.read_csv(out).columns) == ["prediction", "proba_0", "proba_1"]
    assert "warning" not in capsys.readouterr().err
    # codes each written one way, but not as numbers are written back: the file's spelling
    frame.assign(label=rng.choice(["007", "010"], 80)).to_csv(tmp_path / "codes.csv", index=False)
    assert main(_predict_args(model, tmp_path / "codes.csv", query, out) + ["--preset", "fast"]) == 0
    written = pd.read_csv(out, dtype=str)
    assert list(written.columns) == ["prediction", "proba_007", "proba_010"]
    assert set(written["prediction"]) <= {"007", "010"} and "warning" not in capsys.readouterr().err
    frame.assign(label=rng.choice(["NA", "EU", ""], 80)).to_csv(tmp_path / "regions.csv", index=False)
    assert main(_predict_args(model, tmp_path / "regions.csv", query, out) + ["--preset", "fast"]) == 2
    assert re.search(r"column 'label': \d+ row\(s\) have the label 'NA', which reads as no label: drop "
                     r"those rows.*or, if it is a class, write it otherwise", capsys.readouterr().err)


def test_a_warning_of_den_predict_names_its_options_not_the_api_keywords(tmp_path, small_binary_model,
                                                                         capsys):
    """`den predict --finetune-network-steps 5` on a 3-class support file under the default
    preset (which does not adapt it) warns in the options the command was given."""
    model = small_binary_model.save(tmp_path / "model.npz")
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    frame["label"] = np.array(["x", "y", "z"])[np.argmax(frame.to_numpy(), axis=1)]
    frame.to_csv(tmp_path / "support.csv", index=False)
    frame.drop(columns="label").to_csv(tmp_path / "query.csv", index=False)
    assert main(_predict_args(model, tmp_path / "support.csv", tmp_path / "query.csv", tmp_path / "out.csv")
                + ["--finetune-network-steps", "5"]) == 0
    err = capsys.readouterr().err
    assert ("den predict: warning: --finetune-network-steps given, but preset 'default' does not adapt a "
            "task of 3 classes") in err and "--preset adapt adapts each class" in err, err


def test_text_among_numbers_and_unseen_query_categories_warn_once_in_one_line(tmp_path, model_and_tables,
                                                                           capsys):
    """A word among a support column's numbers and a query column of categories in capitals:
    `den predict` predicts, and says each once, in one line naming the file and column."""
    model, _, _ = model_and_tables
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"crp": rng.lognormal(size=90).round(2).astype(object),
                          "colour": rng.choice(["red", "blue"], 90)})
    frame["label"] = np.where(frame["crp"].astype(float) > 1, "yes", "no")
    frame.loc[5, "crp"] = "pending"
    frame[:60].to_csv(tmp_path / "support.csv", index=False)
    frame[60:].drop(columns="label").assign(colour=frame["colour"][60:].str.upper()).to_csv(
        tmp_path / "query.csv", index=False)
    out = tmp_path / "pred.csv"
    assert main(_predict_args(model, tmp_path / "support.csv", tmp_path / "query.csv", out)
                + ["--preset", "fast"]) == 0
    err = capsys.readouterr().err.splitlines()
    warned = [line for line in err if "warning" in line]
    assert len(warned) == 2
    assert warned[0] == (f"den predict: warning: support file {str(tmp_path / 'support.csv')!r} features "
                         f"column 'crp': 1 of 60 values are text among numbers ('pending'); they are "
                         f"read as missing values. To keep what they say, write them as numbers; to "
                         f"silence this, write them as '?'")
    assert warned[1].startswith(f"den predict: warning: query file {str(tmp_path / 'query.csv')!r} "
                                f"features column 'colour': 30 of 30 values are categories the support "
                                f"set did not have (")
    assert "'RED' for 'red'" in warned[1] and "'BLUE' for 'blue'" in warned[1]
    assert len(pd.read_csv(out)) == 30


def test_keypoints_from_support_scores_each_query_row_on_its_own(tmp_path, model_and_tables):
    """By default the query file's values widen the keypoints, so a row's probabilities move
    with the rest of the file; with --keypoints-from support a row gets the same ones in any
    file, e.g. when the query is split in parts (what DENClassifier.fit without X_unlabeled
    gives)."""
    from den.api import DENClassifier

    model, support, _ = model_and_tables
    rng = np.random.default_rng(9)
    query = pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"])
    query.to_csv(tmp_path / "all.csv", index=False)
    query[:10].to_csv(tmp_path / "part.csv", index=False)
    query[:10].assign(a=query["a"][:10] + np.r_[0, [4] * 9]).to_csv(tmp_path / "shifted.csv", index=False)

    def first_row(name, *options):
        out = tmp_path / f"{name}-{len(options)}.csv"
        assert main(_predict_args(model, support, tmp_path / f"{name}.csv", out) + ["--preset", "fast",
                                                                                   *options]) == 0
        return pd.read_csv(out)["proba_yes"][0]

    own = [first_row(name, "--keypoints-from", "support") for name in ("all", "part", "shifted")]
    assert own[0] == own[1] == own[2]
    frame = pd.read_csv(support)
    clf = DENClassifier(model=str(model), preset="fast").fit(frame.drop(columns="label"), frame["label"])
    assert own[0] == pytest.approx(clf.predict_proba(query[:1])[0, 1], abs=1e-6)
    assert abs(first_row("part") - first_row("shifted")) > 1e-3  # the default: the file counts


def test_pretrain_reads_gz_files_once_each_and_names_what_it_leaves_out(tmp_path, csv_tasks, capsys):
    import gzip

    first, second, third = sorted(csv_tasks.glob("*.csv"))
    (csv_tasks / f"{first.name}.gz").write_bytes(gzip.compress(first.read_bytes()))
    first.unlink()
    (csv_tasks / "again.csv").symlink_to(second)  # the same file twice: one task
    (csv_tasks / "README.txt").write_text("where the tasks come from")
    (csv_tasks / "old").mkdir()
    (csv_tasks / f"._{second.name}").write_bytes(b"\x00\x05\x16\x07 Mac OS X")  # macOS's AppleDouble
    model = tmp_path / "m.npz"
    common = ["pretrain", "--tasks", str(csv_tasks), "--out", str(model), "--steps", "2",
              "--query-rows", "16", "--support-rows", "16"]
    assert main(common) == 0
    assert (f"--tasks: left out 3 entries that are no *.csv or *.csv.gz file, or hidden: ._{second.name}, "
            f"README.txt, old/") in capsys.readouterr().err
    assert main(["info", str(model)]) == 0
    names = json.loads(capsys.readouterr().out)["metadata"]["pretrained_on"]
    assert len(names) == 3 and first.stem in names
    (csv_tasks / third.name.replace(".csv", ".CSV")).write_text(third.read_text())
    assert main(common) == 2
    assert f"holds two files of task {third.stem!r} ({third.stem}.CSV, {third.name}); rename or remove " \
           f"one" in capsys.readouterr().err


def test_pretrain_holds_the_checkpoint_lock_until_the_model_is_saved(tmp_path, csv_tasks, monkeypatch):
    """`den pretrain` saves the model and removes its checkpoints under the checkpoint lock: a
    second run on the same directory meanwhile would resume from checkpoints about to go."""
    import fcntl

    from den.model.den import DEN

    checkpoints = tmp_path / "m.npz.checkpoint"
    seen = []
    save = DEN.save

    def save_and_try_the_lock(self, path):
        with open(checkpoints / ".lock", "a+") as handle:  # as another run would, from its own file
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                seen.append("free")
            except BlockingIOError:
                seen.append("held")
        return save(self, path)

    monkeypatch.setattr(DEN, "save", save_and_try_the_lock)
    assert main(["pretrain", "--tasks", str(csv_tasks), "--out", str(tmp_path / "m.npz"), "--steps", "2",
                 "--query-rows", "16", "--support-rows", "16", "--quiet"]) == 0
    assert seen == ["held"] and (tmp_path / "m.npz").exists() and not checkpoints.exists()


def test_pretrain_errors_name_the_task_file_and_the_options_that_fix_them(tmp_path, csv_tasks, capsys):
    """A task that needs the multiclass head or cuts, or has one class, is named by its file,
    and the advice is in options (--head multiclass, --multiclass-cuts), which then work."""
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.normal(size=60), "target": np.repeat(["x", "y", "z"], 20)}).to_csv(
        csv_tasks / "three.csv", index=False)
    base = ["pretrain", "--tasks", str(csv_tasks), "--out", str(tmp_path / "m.npz"), "--steps", "2",
            "--query-rows", "16", "--support-rows", "16", "--quiet"]
    common = [*base, "--head", "binary"]
    assert main(common) == 2
    three = repr(str(csv_tasks / "three.csv"))
    assert f"task file {three} has 3 classes but the model's binary head supports 2; use --head " \
           f"multiclass with --max-classes >= 3 or cut it into binary tasks (--multiclass-cuts or " \
           f"--one-vs-rest-cuts > 0)" in capsys.readouterr().err
    assert main([*base, "--multiclass-cuts", "2", "--one-vs-rest-cuts", "1"]) == 0  # cuts: binary head
    assert "on 6 tasks (4 before cutting multiclass tasks), binary head;" in capsys.readouterr().err
    assert main(["info", str(tmp_path / "m.npz")]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["config"]["head"] == "binary" and len(info["metadata"]["pretrained_on"]) == 3 + 3
    assert main([*base, "--head", "multiclass", "--multiclass-cuts", "2"]) == 2  # not silently uncut
    assert "the multiclass head reads them whole: leave the cuts out, or give --head binary" \
        in capsys.readouterr().err
    assert main(base) == 0  # no head given: a task of three classes picks the multiclass head, said
    assert "multiclass head (a task has more than two classes; --multiclass-cuts K or --one-vs-rest-cuts " \
           "K gives the binary head)" in capsys.readouterr().err
    pd.DataFrame({"a": rng.normal(size=20), "target": "x"}).to_csv(csv_tasks / "three.csv", index=False)
    assert main(common) == 2
    assert f"task file {three} has a single class; pre-training needs >= 2 classes in every task: " \
           f"leave it out" in capsys.readouterr().err


def test_read_table_reads_a_pipe_once_and_finds_the_separator_by_fields(tmp_path):
    """A pipe (``<(command)``) can be read once; a comma inside a ';' file's header name does
    not make it a comma file; a single column whose name holds '|' stays one column;
    compressed files are known by their bytes, and a broken one is a one-line error."""
    import gzip
    import os

    from den.data.encoding import read_table
    from den.errors import DENInputError

    read, write = os.pipe()
    os.write(write, b"x;y\n1,5;2\n")
    os.close(write)
    try:
        assert read_table(f"/dev/fd/{read}").to_dict() == {"x": {0: 1.5}, "y": {0: 2}}
    finally:
        os.close(read)
    (tmp_path / "euro.csv").write_text("Preis (EUR, netto);Menge\n12,5;3\n7,25;4\n")
    assert list(read_table(tmp_path / "euro.csv").columns) == ["Preis (EUR, netto)", "Menge"]
    (tmp_path / "bar.csv").write_text("a|b\n1\n2\n")
    assert list(read_table(tmp_path / "bar.csv").columns) == ["a|b"]
    (tmp_path / "no_suffix").write_bytes(gzip.compress(b"a\tb\n1\t2\n"))
    assert read_table(tmp_path / "no_suffix").to_dict() == {"a": {0: 1}, "b": {0: 2}}
    (tmp_path / "broken.csv.gz").write_bytes(b"\x1f\x8b not gzip")
    with pytest.raises(DENInputError, match="broken.csv.gz' is not a readable CSV file: it looks "
                                            "gzip-compressed but cannot be decompressed"):
        read_table(tmp_path / "broken.csv.gz")
    import zipfile

    with zipfile.ZipFile(tmp_path / "book.xlsx", "w") as book:  # an .xlsx file's outline
        for part in ("[Content_Types].xml", "xl/workbook.xml", "xl/worksheets/sheet1.xml"):
            book.writestr(part, "<xml/>")
    (tmp_path / "book.xls").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    for name in ("book.xlsx", "book.xls"):
        with pytest.raises(DENInputError, match=rf"{name}' is not a readable CSV file: it is an Excel "
                                                r"workbook.*save the sheet as CSV"):
            read_table(tmp_path / name)
    from den.data.encoding import read_table_head

    with zipfile.ZipFile(tmp_path / "empty.zip", "w"):
        pass
    broken = bytearray(gzip.compress(b"a,b\n" + b"1,2\n" * 5000))
    broken[20:40] = bytes(20)
    (tmp_path / "broken.gz").write_bytes(bytes(broken))
    for name, message in (("empty.zip", "a zip file must hold one CSV file, this one holds 0"),
                          ("broken.gz", "is not a readable CSV file")):
        for read in (read_table, read_table_head):
            with pytest.raises(DENInputError, match=message):
                read(tmp_path / name)
    # a separator of several characters or a regular expression (UCI files), as pandas reads it
    (tmp_path / "spaced.data").write_text("a  b   target\n1.5 2 yes\n2.5  3 no\n")
    assert read_table(tmp_path / "spaced.data", sep=r"\s+", target="target").to_dict("list") == \
        {"a": [1.5, 2.5], "b": [2, 3], "target": ["yes", "no"]}
    (tmp_path / "colons.data").write_text("a::target\n1::yes\n2::no\n")
    assert list(read_table_head(tmp_path / "colons.data", sep="::").columns) == ["a", "target"]
    # a header written decomposed (e + a combining accent, as macOS writes it) names the composed
    # column; written both ways it is one name twice
    import unicodedata

    nfd = unicodedata.normalize("NFD", "café;Größe;label\n1,5;2;oui\n2,5;3;non\n")
    (tmp_path / "nfd.csv").write_text(nfd)
    frame, written = read_table(tmp_path / "nfd.csv", target="label", written=True)
    assert list(frame.columns) == list(written.columns) == ["café", "Größe", "label"]
    assert frame["café"].tolist() == [1.5, 2.5]
    assert list(read_table_head(tmp_path / "nfd.csv").columns)[0] == "café"
    # written as a list: those columns alone, in that order, as text
    frame, written = read_table(tmp_path / "nfd.csv", target="label", written=["label", "café"])
    assert written.to_dict("list") == {"label": ["oui", "non"], "café": ["1,5", "2,5"]}
    with pytest.raises(DENInputError, match=r"nfd.csv' has no column\(s\) \['cafe'\]; its columns are"):
        read_table(tmp_path / "nfd.csv", written=["cafe"])
    (tmp_path / "twice.csv").write_text("café," + unicodedata.normalize("NFD", "café") + "\n1,2\n")
    with pytest.raises(DENInputError, match="more than one column named 'café'"):
        read_table(tmp_path / "twice.csv")


def test_read_table_reads_rows_short_of_trailing_fields_and_keeps_missing_texts_in_text_columns(tmp_path):
    """A ';' or tab file whose rows leave out their trailing empty fields is read by its
    separator (it was one column, named by the whole header); the texts pandas reads as missing
    ("None", "NA", "null") stay categories in a column of text, as DENClassifier keeps them,
    and stay missing in a column of numbers; an empty cell is missing everywhere."""
    from den.data.encoding import read_table

    (tmp_path / "short.csv").write_text("x1;x2;label;note\n1,5;2;yes;checked\n2,5;3;no\n3,5;1;yes\n")
    frame = read_table(tmp_path / "short.csv", target="label")
    assert list(frame.columns) == ["x1", "x2", "label", "note"]
    assert frame["x1"].tolist() == [1.5, 2.5, 3.5] and frame["note"].isna().tolist() == [False, True, True]
    (tmp_path / "short.tsv").write_text("a\tb\tlabel\tcomment\n1\t2\tyes\tfine\n2\t3\tno\n")
    assert list(read_table(tmp_path / "short.tsv").columns) == ["a", "b", "label", "comment"]
    (tmp_path / "words.csv").write_text("severity,region,dose,label\nNone,NA,NA,yes\nMild,EU,1.5,no\n"
                                        "Severe,,null,yes\nnull,AS,2,no\n")
    frame = read_table(tmp_path / "words.csv", target="label")
    assert frame["severity"].tolist() == ["None", "Mild", "Severe", "null"]
    assert frame["region"].tolist()[:2] == ["NA", "EU"] and pd.isna(frame["region"][2])
    assert frame["dose"].dtype == float and frame["dose"].isna().tolist() == [True, False, True, False]
    query = read_table(tmp_path / "words.csv", "query", like=frame)
    assert query["severity"].tolist() == frame["severity"].tolist()
    assert read_table(tmp_path / "words.csv", na_values=["None"])["severity"].isna().tolist() == \
        [True, False, False, False]
    # the second read is of the text columns with missing cells alone
    import den.data.encoding as encoding

    reads = []
    original = encoding._parse
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encoding, "_parse", lambda *a, **k: reads.append(k) or original(*a, **k))
        read_table(tmp_path / "words.csv", target="label")
    assert [k.get("usecols") for k in reads[1:]] == [["severity", "region"]]


def test_read_table_reads_numbers_with_thousands_grouped_and_drops_a_trailing_separator(tmp_path):
    """Spreadsheets' number formats: in a ';' file 1.234,50 is 1234.5 (not a category), and
    2.500 in a file whose other columns write decimal commas is 2500, with a warning naming the
    column; 1.5 stays 1.5. In a ',' file a quoted "1,234.50" is 1234.5. Lines ending in the
    separator add no column (it would be a feature no query file has)."""
    from den.data.encoding import read_table
    from den.errors import DENInputWarning

    (tmp_path / "euro.csv").write_text("amount;count;share;ratio;label\n1.234,50;2.500;0,5;1.5;a\n"
                                       "987,25;800;0,25;2.75;b\n-12.000;1.200;?;3.0;a\n")
    with pytest.warns(DENInputWarning, match=r"column 'count': '2.500' is read as 2500, its point a "
                                             r"thousands separator, as other columns write decimal commas"):
        frame = read_table(tmp_path / "euro.csv", "support")
    assert frame["amount"].tolist() == [1234.5, 987.25, -12000.0]
    assert frame["count"].tolist() == [2500, 800, 1200]
    assert frame["share"].tolist()[:2] == [0.5, 0.25] and np.isnan(frame["share"][2])
    assert frame["ratio"].tolist() == [1.5, 2.75, 3.0] and frame["label"].tolist() == ["a", "b", "a"]
    (tmp_path / "points.csv").write_text("count;x\n2.500;1\n1.200;2\n")  # no decimal comma: as pandas reads
    assert read_table(tmp_path / "points.csv")["count"].tolist() == [2.5, 1.2]
    (tmp_path / "us.csv").write_text('amount,code,label\n"1,234.50",7,a\n"12,000",8,b\n15.5,9,a\n')
    us = read_table(tmp_path / "us.csv")
    assert us["amount"].tolist() == [1234.5, 12000.0, 15.5] and us["code"].tolist() == [7, 8, 9]
    (tmp_path / "trailing.csv").write_text("a,b,label,\n1,2,x,\n3,4,y,\n")
    assert list(read_table(tmp_path / "trailing.csv").columns) == ["a", "b", "label"]
    for sep in ",;":  # the data lines only: not row names in the first column, every column shifted
        lines = ["a", "b", "label"], ["1", "2", "x", ""], ["3", "4", "y", ""]
        (tmp_path / "data_only.csv").write_text("".join(sep.join(line) + "\n" for line in lines))
        assert read_table(tmp_path / "data_only.csv").to_dict("list") == {"a": [1, 3], "b": [2, 4],
                                                                          "label": ["x", "y"]}
    (tmp_path / "blank_named.csv").write_text("a,,label\n1,5,x\n3,6,y\n")  # a value: kept, as pandas names it
    support = read_table(tmp_path / "blank_named.csv")
    assert list(support.columns) == ["a", "Unnamed: 1", "label"]
    (tmp_path / "blank_query.csv").write_text("a,\n4,\n")  # the support's blank column, empty here
    assert read_table(tmp_path / "blank_query.csv", like=support).columns.tolist() == ["a", "Unnamed: 1"]


def test_read_table_number_formats_are_the_supports_in_its_query_and_never_misread(tmp_path):
    """A query file is read in its support file's number formats (``like``), so the same text is
    the same number in both (2.500 is 2500 in a query whose other columns have no decimal
    comma); decimals with a leading 0 group (0,125) are never thousands; digits of other
    scripts, integers beyond float precision and repeated row names neither crash nor
    misread."""
    import warnings

    from den.data.encoding import read_table
    from den.errors import DENInputWarning

    (tmp_path / "s.csv").write_text("amount;count\n0,5;2.500\n1,5;800\n")
    with pytest.warns(DENInputWarning, match="'2.500' is read as 2500"):
        support = read_table(tmp_path / "s.csv", "support")
    (tmp_path / "q.csv").write_text("amount;count\n3;2.500\n4;1.200\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DENInputWarning)  # said once, of the support file
        query = read_table(tmp_path / "q.csv", "query", like=support)
    assert query["count"].tolist() == [2500, 1200] and query["amount"].tolist() == [3, 4]
    assert read_table(tmp_path / "q.csv")["count"].tolist() == [2.5, 1.2]  # alone: as pandas reads it
    # grouped numbers in the query only: read so where that reads the support's numbers alike
    (tmp_path / "s2.csv").write_text("income,n,x\n950.5,7,1.5\n20.25,8,2.5\n")
    (tmp_path / "q2.csv").write_text('income,n,x\n"2,000.5",9,"1,5"\n7.5,"1,200",3\n')
    query = read_table(tmp_path / "q2.csv", like=read_table(tmp_path / "s2.csv"))
    assert query["income"].tolist() == [2000.5, 7.5] and query["x"].tolist() == ["1,5", "3"]
    (tmp_path / "s3.csv").write_text("n;x\n800;2.5\n950;1.5\n")
    (tmp_path / "q3.csv").write_text("n;x\n1.234,5;1,5\n7;3\n")
    query = read_table(tmp_path / "q3.csv", like=read_table(tmp_path / "s3.csv"))
    assert query["n"].tolist() == [1234.5, 7] and query["x"].tolist() == ["1,5", "3"]  # 2.5 read the point
    (tmp_path / "decimals.csv").write_text('x,y\n"0,125",1\n"1,250",2\n"2,375",3\n')
    assert read_table(tmp_path / "decimals.csv")["x"].tolist() == ["0,125", "1,250", "2,375"]
    (tmp_path / "zero.csv").write_text("x;y\n0.125;1,5\n")
    assert read_table(tmp_path / "zero.csv").iloc[0].tolist() == [0.125, 1.5]
    (tmp_path / "odd.csv").write_text('a,b\n"١,٢٣٤.5","123,456,789,012,345,678,901.5"\n"7","1,000.5"\n',
                                      encoding="utf-8")
    odd = read_table(tmp_path / "odd.csv")
    assert odd["a"].tolist() == ["١,٢٣٤.5", "7"] and odd["b"].tolist() == [1.2345678901234568e20, 1000.5]
    (tmp_path / "rownames.csv").write_text('x,y\nr1,"1,234.5",2\nr1,"2,000.5",3\n')  # R's row names, twice
    assert read_table(tmp_path / "rownames.csv")["x"].tolist() == [1234.5, 2000.5]


def test_out_may_not_be_the_support_or_the_query_file(tmp_path, model_and_tables, capsys):
    """`--out` naming an input (or a link to it) would replace the labelled rows with predictions."""
    model, support, query = model_and_tables
    (tmp_path / "link.csv").symlink_to(support)
    kept = {path: path.read_bytes() for path in (support, query)}
    for out, what in ((support, "support"), (query, "query"), (tmp_path / "link.csv", "support")):
        assert main(_predict_args(model, support, query, out)) == 2
        assert re.search(f"--out '.*' is the {what} file; the predictions would replace it",
                         capsys.readouterr().err)
    assert {path: path.read_bytes() for path in kept} == kept


def test_out_may_not_be_a_model_file(tmp_path, model_and_tables, csv_tasks, capsys):
    """`den predict --out` naming the model it reads (or, without --model, a shipped model), or
    `den pretrain --out` naming its --model-config file, would replace a model file with
    predictions or with a new model."""
    from den.pretrained import SHIPPED_MODELS

    model, support, query = model_and_tables
    kept = model.read_bytes()
    unsuffixed = tmp_path / "den-model"
    unsuffixed.write_bytes(kept)
    for path in (model, unsuffixed):
        assert main(_predict_args(path, support, query, path)) == 2
        assert re.search(f"--out '.*{path.name}' is the model file; the predictions would replace it",
                         capsys.readouterr().err)
    assert unsuffixed.read_bytes() == kept
    shipped = SHIPPED_MODELS[False]
    args = ["predict", "--support", str(support), "--target", "label", "--query", str(query),
            "--out", str(shipped)]
    shipped_bytes = shipped.read_bytes()
    assert main(args) == 2
    assert "is the shipped model file; the predictions would replace it" in capsys.readouterr().err
    assert main(["pretrain", "--tasks", str(csv_tasks), "--out", str(model), "--model-config", str(model),
                 "--steps", "2", "--quiet"]) == 2
    assert re.search("--out '.*model.npz' is --model-config file '.*model.npz'; the new model would "
                     "replace it", capsys.readouterr().err)
    assert model.read_bytes() == kept and shipped.read_bytes() == shipped_bytes


def test_out_names_its_format_and_paths_name_what_they_mean(tmp_path, model_and_tables, monkeypatch, capsys):
    """An output named .tsv (also compressed) is tab-separated; one named for a format that is not
    delimited text (.xlsx, .parquet) is refused before any work, and so are an empty --out and
    '-' (standard input) for an input file. A path beginning with ~ is in the home directory,
    also after --out= (where the shell leaves it)."""
    model, support, query = model_and_tables
    assert main(_predict_args(model, support, query, tmp_path / "plain.csv")) == 0
    plain = pd.read_csv(tmp_path / "plain.csv")
    for name in ("pred.tsv", "pred.tsv.gz", "pred.TAB"):
        assert main(_predict_args(model, support, query, tmp_path / name)) == 0
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / name, sep="\t"), plain)
    capsys.readouterr()
    for name, kind in (("pred.xlsx", "an Excel workbook"), ("pred.parquet.gz", "a Parquet file")):
        assert main(_predict_args(model, support, query, tmp_path / name)) == 2
        assert f"{name}' asks for {kind}, but den predict writes comma-separated " \
               f"text: name the output .csv" in capsys.readouterr().err
        assert not (tmp_path / name).exists()
    assert main(_predict_args(model, support, query, "")) == 2
    assert "--out is empty; give the path of a file to write" in capsys.readouterr().err
    assert main(_predict_args(model, "-", query, tmp_path / "x.csv")) == 2
    assert "--support '-': den predict reads its tables from files; to read one from a pipe, give " \
           "--support /dev/stdin" in capsys.readouterr().err
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)  # where a literal "~" directory would appear
    (home / "support.csv").write_bytes(support.read_bytes())
    args = _predict_args(model, "~/support.csv", query, "unused")[:-2] + ["--out=~/pred.csv"]
    assert main(args) == 0
    pd.testing.assert_frame_equal(pd.read_csv(home / "pred.csv"), plain)
    assert not (tmp_path / "~").exists()


def test_kept_query_columns_named_from_a_pipe(tmp_path, model_and_tables):
    """--keep-query-columns NAME checks the names on the file's first line before reading it
    whole; a pipe (/dev/stdin) can be read once, so there the whole read checks them."""
    import os

    model, support, query = model_and_tables
    frame = pd.read_csv(query).assign(id=lambda f: [f"{i:04d}" for i in range(len(f))])
    data = frame.to_csv(index=False).encode()
    assert len(data) < 60_000  # fits the pipe's buffer, so it is written before it is read
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    try:
        assert main(_predict_args(model, support, f"/dev/fd/{read}", tmp_path / "pred.csv") +
                    ["--keep-query-columns", "id"]) == 0
    finally:
        os.close(read)
    written = pd.read_csv(tmp_path / "pred.csv", dtype={"id": str})
    assert written["id"].tolist() == frame["id"].tolist() and len(written) == len(frame)


def test_an_out_name_ending_gz_bz2_xz_or_zip_is_compressed_so(tmp_path, model_and_tables):
    import zipfile

    model, support, query = model_and_tables
    assert main(_predict_args(model, support, query, tmp_path / "plain.csv")) == 0
    plain = pd.read_csv(tmp_path / "plain.csv")
    for ending, magic in ((".gz", b"\x1f\x8b"), (".bz2", b"BZh"), (".xz", b"\xfd7zXZ"), (".zip", b"PK")):
        out = tmp_path / f"pred.csv{ending}"
        assert main(_predict_args(model, support, query, out)) == 0
        assert out.read_bytes().startswith(magic), ending
        pd.testing.assert_frame_equal(pd.read_csv(out), plain)
    assert zipfile.ZipFile(tmp_path / "pred.csv.zip").namelist() == ["pred.csv"]
    assert main(_predict_args(model, support, query, tmp_path / "pred.zip")) == 0  # no ".csv" given
    assert zipfile.ZipFile(tmp_path / "pred.zip").namelist() == ["pred.csv"]


def test_a_large_query_shows_progress_and_the_same_predictions(tmp_path, model_and_tables, capsys,
                                                               monkeypatch):
    import den.train.finetune

    model, support, query = model_and_tables
    assert main(_predict_args(model, support, query, tmp_path / "whole.csv")) == 0
    assert "predict " not in capsys.readouterr().err  # 60 rows: one block, no progress line
    monkeypatch.setattr(den.train.finetune, "PROGRESS_BLOCK_ROWS", 16)
    assert main(_predict_args(model, support, query, tmp_path / "blocks.csv")) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("predict ")]
    assert lines and lines[-1].startswith("predict 60/60 100% |") and "rows/s" in lines[-1], lines
    whole, blocks = pd.read_csv(tmp_path / "whole.csv"), pd.read_csv(tmp_path / "blocks.csv")
    assert (whole["prediction"] == blocks["prediction"]).all()
    np.testing.assert_allclose(blocks.filter(like="proba_").to_numpy(),
                               whole.filter(like="proba_").to_numpy(), rtol=1e-5, atol=1e-6)


def test_a_large_query_is_scored_from_a_spool_file_with_the_same_output(tmp_path, model_and_tables,
                                                                        capsys, monkeypatch):
    """A query whose features pass SPOOL_QUERY_BYTES waits for its scoring in a temporary file
    (den.io.SpooledRows), block by block: the output is the same to the byte, the file is
    closed after scoring, and where it cannot be written the query is scored from memory."""
    import den.cli
    import den.io
    import den.train.finetune

    model, support, query = model_and_tables
    monkeypatch.setattr(den.train.finetune, "PROGRESS_BLOCK_ROWS", 16)  # 60 rows: 4 blocks
    assert main(_predict_args(model, support, query, tmp_path / "memory.csv")) == 0
    spools, reads = [], []

    class Recorded(den.io.SpooledRows):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            spools.append(self)

        def __getitem__(self, rows):
            reads.append(rows)
            return super().__getitem__(rows)

    monkeypatch.setattr(den.io, "SpooledRows", Recorded)
    monkeypatch.setattr(den.cli, "SPOOL_QUERY_BYTES", 60 * 2 * 8 - 1)  # 60 rows x 2 features
    assert main(_predict_args(model, support, query, tmp_path / "spooled.csv")) == 0
    assert len(spools) == 1 and spools[0]._file.closed
    assert reads == [slice(start, start + 16) for start in range(0, 60, 16)]
    assert (tmp_path / "spooled.csv").read_bytes() == (tmp_path / "memory.csv").read_bytes()
    monkeypatch.setattr(den.cli, "SPOOL_QUERY_BYTES", 60 * 2 * 8)  # not more: held in memory
    spools.clear()
    assert main(_predict_args(model, support, query, tmp_path / "held.csv")) == 0 and spools == []

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(den.cli, "SPOOL_QUERY_BYTES", 0)
    monkeypatch.setattr(den.io, "SpooledRows", type("Full", (Recorded,), {"__init__": full}))
    assert main(_predict_args(model, support, query, tmp_path / "full.csv")) == 0
    assert (tmp_path / "full.csv").read_bytes() == (tmp_path / "memory.csv").read_bytes()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_while_writing_leaves_nothing_behind(tmp_path):
    """SIGTERM (a scheduler's limit, a kill) while `den predict` writes its output ends the
    command with 143 and one line, and leaves neither the output nor its temporary file."""
    import subprocess

    out = tmp_path / "pred.csv"
    program = f"""
import os, signal
import den.cli
from den.io import atomic_write

def predict(args):
    with atomic_write(args.out, "w") as handle:
        handle.write("prediction\\n")
        handle.flush()
        os.kill(os.getpid(), signal.SIGTERM)
        handle.write("never\\n")

den.cli._predict = predict
print(den.cli.main({_predict_args("m.npz", "s.csv", "q.csv", out)!r}))
"""
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.split() == ["143"], (run.returncode, run.stdout, run.stderr)
    assert run.stderr.strip().splitlines()[-1].startswith("den predict: stopped by SIGTERM")
    assert list(tmp_path.iterdir()) == []
