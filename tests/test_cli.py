"""The command line: pretrain on a directory of CSVs, predict, info, help, errors."""

import json

import numpy as np
import pandas as pd
import pytest

from den.cli import build_parser, main
from den.data.synthetic import make_tasks


@pytest.fixture()
def csv_tasks(tmp_path):
    directory = tmp_path / "tasks"
    directory.mkdir()
    for task in make_tasks(3, seed=5, rows=(80, 120), features=(2, 4)):
        frame = pd.DataFrame(task.x, columns=[f"c{j}" for j in range(task.n_features)])
        frame["target"] = np.where(task.y == 1, "yes", "no")
        frame.to_csv(directory / f"{task.name}.csv", index=False)
    return directory


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
    # fine-tuning options under the default preset (no fine-tuning) are an error, not ignored
    assert main([*common[:-5], "--finetune-epochs", "2", "--out", str(stopped)]) == 2 and not stopped.exists()
    assert "finetune_epochs given, but preset 'default' does not fine-tune" in capsys.readouterr().err
    assert main(common + ["--out", str(stopped)]) == 2 and not stopped.exists()
    assert "needs ensemble >= 2" in capsys.readouterr().err
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


def test_fine_tuning_defaults_agree_everywhere():
    from den.api import DENClassifier
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
