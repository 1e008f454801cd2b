"""Evaluation jobs and the tables they aggregate into."""

import contextlib
import io

import numpy as np
import pandas as pd
import pytest

from den.data.synthetic import make_task
from den.errors import DENModelError
from den.evaluate import score, support_query_split
from den.experiments import evaluate_method, is_fine_tuned, pretrained_model_kind, score_record, split_seed
from den.report.tables import (
    dataset_summary,
    describe_run,
    latex_dataset_table,
    latex_method_table,
    markdown_dataset_table,
    method_summary,
    reference_differences,
    reference_note,
)
from den.workflow_config import ConfigError, experiments


def test_split_is_disjoint_has_every_class_and_depends_on_seed():
    y = np.r_[np.zeros(300, int), np.ones(4, int)]
    support, query = support_query_split(y, 50, seed=1)
    assert len(support) == 50 and len(query) == 254 and not set(support) & set(query)
    assert set(y[support]) == {0, 1}
    assert not np.array_equal(support, support_query_split(y, 50, seed=2)[0])
    assert split_seed(1, "a", 0) == split_seed(1, "a", 0) != split_seed(1, "a", 1)


def test_score_record_names_its_own_evaluation_over_a_copied_one():
    """A copied score file (rule evaluate, wc.score_index) keeps the other file's metrics and
    takes this file's experiment, setting, method, dataset and repeat."""
    computed = {"experiment": "bin", "setting": "base", "method": "lr", "dataset": "g1", "repeat": 0,
                "auc": 0.8, "accuracy": 0.7, "n_support": 30}
    record = score_record(computed, "again", "order-3", "lr2", "g1", "0")
    assert record == {"experiment": "again", "setting": "order-3", "method": "lr2", "dataset": "g1",
                      "repeat": 0, "auc": 0.8, "accuracy": 0.7, "n_support": 30}
    assert list(record)[:5] == ["experiment", "setting", "method", "dataset", "repeat"]
    assert score_record({"auc": 0.5}, "e", "s", "m", "d", 3) == {
        "experiment": "e", "setting": "s", "method": "m", "dataset": "d", "repeat": 3, "auc": 0.5}


def test_query_cap_draws_a_random_subset_of_the_rest():
    y = np.r_[np.zeros(300, int), np.ones(300, int)]
    support, query = support_query_split(y, 50, seed=1, max_query=100)
    same_support, _ = support_query_split(y, 50, seed=1)
    assert np.array_equal(support, same_support)  # the cap does not change the support set
    assert len(query) == 100 and len(np.unique(query)) == 100 and not set(support) & set(query)
    assert np.array_equal(query, support_query_split(y, 50, seed=1, max_query=100)[1])
    assert query.max() > 300  # spread over the rows, not the first 100 of them
    assert len(support_query_split(y, 50, seed=1, max_query=10_000)[1]) == 550


def test_direct_and_den_methods_score_the_same_split(small_binary_model):
    task = make_task("t", 300, 4, seed=3)
    direct = evaluate_method({"kind": "direct", "model": "logistic_regression"}, task, n_support=50,
                             seed=0, repeat=0)
    den = evaluate_method({"kind": "den", "variant": "no_finetune"}, task, n_support=50, seed=0, repeat=0,
                          model=small_binary_model)
    assert direct["split_seed"] == den["split_seed"] and den["n_query"] == 250
    capped = evaluate_method({"kind": "direct", "model": "logistic_regression"}, task, n_support=50,
                             seed=0, repeat=0, max_query=80)
    assert capped["n_query"] == 80 and capped["split_seed"] == direct["split_seed"]
    lr = {"kind": "direct", "model": "logistic_regression"}
    many = evaluate_method(lr, task, n_support=50, seed=0, repeat=0, subtasks=3, subtask_features=[2, 3])
    singles = [evaluate_method(lr, task, n_support=50, seed=0, repeat=0, subtask_features=[2, 3])]
    assert many["subtasks"] == 3 and many["split_seed"] == direct["split_seed"]
    assert many["auc"] != singles[0]["auc"]  # an average over three different sub-tasks
    assert 2 <= many["n_features"] <= 3
    with pytest.raises(ValueError, match="subtasks must be >= 1"):
        evaluate_method(lr, task, n_support=50, seed=0, repeat=0, subtasks=0)
    for metrics in (direct, den):
        assert 0.0 <= metrics["auc"] <= 1.0 and 0.0 <= metrics["accuracy"] <= 1.0
    assert direct["auc"] > 0.7  # a learnable task
    assert pretrained_model_kind("x", {"kind": "den", "variant": "no_plf"}) == "no_plf"
    assert pretrained_model_kind("x", {"kind": "den", "variant": "adapt"}) == "no_plf"
    assert pretrained_model_kind("x", {"kind": "direct", "model": "mlp"}) is None
    assert pretrained_model_kind("pn", {"kind": "meta", "model": "proto_net"}) == "meta-pn"


@pytest.mark.parametrize("variant", ["den", "no_finetune", "no_plf"])
def test_keypoints_from_support_keeps_the_query_rows_out_of_the_plf_spans(small_binary_model, monkeypatch,
                                                                          variant):
    """keypoints_from="support" spans each feature's keypoints over the support rows alone (what
    the baselines see); the default also spreads them over the query rows' covariates."""
    import den.train.finetune as finetune

    seen = []

    def spy(den, x_support, y_support, n_classes, config=None, x_unlabeled=None):
        fitted = fit_task(den, x_support, y_support, n_classes, config, x_unlabeled=x_unlabeled)
        seen.append((x_support, x_unlabeled, fitted.task_models[0].keypoints))
        return fitted

    fit_task = finetune.fit_task
    monkeypatch.setattr(finetune, "fit_task", spy)
    task = make_task("t", 300, 4, seed=3)
    spec = {"kind": "den", "variant": variant}
    settings = {"n_support": 50, "seed": 0, "repeat": 0, "model": small_binary_model,
                "finetune_config": {"epochs": 1, "steps_per_epoch": 1}}
    default = evaluate_method(spec, task, **settings)
    support_only = evaluate_method(spec, task, **settings, keypoints_from="support")
    (x_support, unlabeled, wide), (x_same, none, narrow) = seen
    np.testing.assert_array_equal(x_support, x_same)  # the same split
    assert unlabeled.shape == (default["n_query"], 4) and none is None
    np.testing.assert_allclose(narrow[:, [0, -1]], np.c_[x_support.min(0), x_support.max(0)])
    span = np.vstack([x_support, unlabeled])
    np.testing.assert_allclose(wide[:, [0, -1]], np.c_[span.min(0), span.max(0)])
    assert (wide[:, -1] - wide[:, 0] > narrow[:, -1] - narrow[:, 0]).all()
    assert support_only["split_seed"] == default["split_seed"]
    with pytest.raises(ValueError, match="keypoints_from must be one of"):
        evaluate_method(spec, task, **settings, keypoints_from="query")


def test_keypoints_from_reaches_only_den_evaluation_jobs_and_only_when_changed():
    from den.workflow_config import keypoint_options

    den, lr = {"kind": "den", "variant": "no_plf"}, {"kind": "direct", "model": "logistic_regression"}
    assert keypoint_options({}, den) == keypoint_options({"keypoints_from": "support_and_query"}, den) == {}
    assert keypoint_options({"keypoints_from": "support"}, den) == {"keypoints_from": "support"}
    assert keypoint_options({"keypoints_from": "support"}, lr) == {}


def test_meta_baselines_plug_into_the_same_evaluation():
    from den.baselines.meta import MetaConfig
    from den.experiments import check_method, pretrain_model

    check_method("pn", {"kind": "meta", "model": "proto_net", "settings": {"steps": 5}})
    with pytest.raises(ValueError, match="method 'pn': unknown settings \\['stepz'\\]"):
        check_method("pn", {"kind": "meta", "model": "proto_net", "settings": {"stepz": 5}})
    with pytest.raises(ValueError, match="method 'x': model must be one of"):
        check_method("x", {"kind": "meta", "model": "svm"})
    tasks = [make_task(f"t{i}", 300, 4 + i, seed=i) for i in range(3)]
    learner = pretrain_model(tasks, {"baseline": "proto_net", "steps": 20, "n_inputs": 8}, {})
    assert learner.config == MetaConfig(steps=20, n_inputs=8)
    held_out = make_task("held", 300, 5, seed=9)
    spec = {"kind": "meta", "model": "proto_net"}
    metrics = evaluate_method(spec, held_out, n_support=50, seed=0, repeat=0, model=learner)
    direct = evaluate_method({"kind": "direct", "model": "knn"}, held_out, n_support=50, seed=0, repeat=0)
    assert metrics["split_seed"] == direct["split_seed"] and 0 <= metrics["auc"] <= 1


def test_config_model_keys_of_the_local_embedding_reach_pre_training(tmp_path):
    """model.local_bandwidths, model.max_tuples, model.gated_pooling and model.tuple_relevance pass
    the schema and arrive in the DEN a pre-training job builds, and its evaluations use them (a
    30-feature task pools over 100 tuples)."""
    from pathlib import Path

    import yaml
    from snakemake.utils import validate

    from den.experiments import load_model, pretrain_model
    from den.workflow_config import model_params

    root = Path(__file__).resolve().parents[1]
    config = yaml.safe_load((root / "config" / "config.yaml").read_text())
    config["model"].update(local_bandwidths=[0.1, 0.3], max_tuples=100, gated_pooling=True,
                           tuple_relevance=True)
    validate(config, str(root / "workflow" / "schemas" / "config.schema.yaml"))
    spec = experiments(config)["openml"]
    params = model_params(config, spec, "base", "plf")
    assert params["local_bandwidths"] == [0.1, 0.3] and params["max_tuples"] == 100
    assert params["gated_pooling"] is True and params["tuple_relevance"] is True
    small = {"h_units": [8], "embedding_dim": 8, "phi_units": [16], "psi_units": [16]}
    tasks = [make_task(f"t{i}", 200, 4, seed=i) for i in range(2)]
    model = pretrain_model(tasks, {**params, **small}, {"steps": 3, "query_rows": 16, "support_rows": 16})
    model.save(tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz", {"kind": "den"})
    assert loaded.config.local_bandwidths == (0.1, 0.3) and loaded.tuples(30).shape == (100, 2)
    assert [m.config for m in load_model([tmp_path / "m.npz"] * 2, {"kind": "den"})] == [loaded.config] * 2
    (tmp_path / "bad.npz").write_text("not a model")
    for spec in ({"kind": "den"}, {"kind": "meta"}):  # the workflow's advice, not `den pretrain`
        with pytest.raises(DENModelError, match=r"In the workflow: pre-train it again with `snakemake "
                                                r"--forcerun .*bad\.npz`"):
            load_model(tmp_path / "bad.npz", spec)
    assert loaded.config.gated_pooling and "den/pool_rho" in loaded.network.weights_dict()
    assert loaded.config.tuple_relevance and "den/phi_q" in loaded.network.weights_dict()
    metrics = evaluate_method({"kind": "den", "variant": "no_finetune"}, make_task("w", 300, 30, seed=5),
                              n_support=50, seed=0, repeat=0, model=loaded)
    assert 0 <= metrics["auc"] <= 1


def test_method_summary_and_latex():
    scores = pd.DataFrame({
        "dataset": ["a", "a", "b", "b"] * 2,
        "repeat": [0, 1, 0, 1] * 2,
        "method": ["den"] * 4 + ["lr"] * 4,
        "auc": [0.9, 0.8, 0.7, 0.6, 0.8, 0.8, 0.75, 0.5],
    })
    summary = method_summary(scores, "auc", ["den", "lr"])
    assert summary.loc["den", "mean"] == pytest.approx(75.0)
    # (a, 1) is a tie: it counts as best for both methods
    assert summary.loc["den", "best_pct"] == 75.0 and summary.loc["lr", "best_pct"] == 50.0
    tex = latex_method_table(summary, "auc", {"den": "DEN", "lr": "Direct LR"}, "cap", "table:x")
    assert "\\textbf{75.00} (" in tex and "\\textbf{75.00\\%}" in tex and "Direct LR & 71.25" in tex
    assert "\\toprule" in tex and "\\bottomrule" in tex
    assert "tied methods count each" in tex  # 75% + 50%: the tie on (a, 1) counts twice
    untied = latex_method_table(summary.assign(best_pct=[75.0, 25.0]), "auc", {}, "cap", "table:x")
    assert "tied methods" not in untied
    assert describe_run(scores) == "2 datasets (a, b) $\\times$ 2 repeats"
    one = scores[(scores["dataset"] == "a") & (scores["repeat"] == 0)]
    assert describe_run(one, latex=False) == "1 dataset (a) x 1 repeat"
    scores["dataset"] = scores["dataset"].map({"a": "gen_a", "b": "b"})
    assert "(b, gen\\_a)" in describe_run(scores)


def test_the_best_is_judged_among_the_papers_methods_where_a_table_says_so():
    """best_among: the paper's tables count "% Best" over the paper's methods; a random forest
    row added for comparison, best on every split, takes no share and no bold, and says so."""
    from den.report.tables import latex_dataset_columns_table

    scores = pd.DataFrame({
        "dataset": ["a", "a", "b", "b"] * 3, "repeat": [0, 1, 0, 1] * 3,
        "method": ["den"] * 4 + ["lr"] * 4 + ["rf"] * 4,
        "auc": [0.9, 0.8, 0.7, 0.6, 0.8, 0.8, 0.75, 0.5, 0.95, 0.95, 0.95, 0.95]})
    methods, labels = ["den", "lr", "rf"], {"den": "DEN", "lr": "Direct LR", "rf": "Forest"}
    everyone = method_summary(scores, "auc", methods)
    assert everyone["best_pct"].tolist() == [0.0, 0.0, 100.0]
    paper = method_summary(scores, "auc", methods, best_among=["den", "lr"])
    assert paper.loc["den", "best_pct"] == 75.0 and paper.loc["lr", "best_pct"] == 50.0
    assert np.isnan(paper.loc["rf", "best_pct"]) and paper.loc["rf", "mean"] == pytest.approx(95.0)
    tex = latex_method_table(paper, "auc", labels, "cap", "t", best_among=["den", "lr"])
    rows = {line.split(" & ")[0]: line for line in tex.splitlines() if " & " in line}
    assert rows["DEN"] == "DEN & \\textbf{75.00} (6.45) & \\textbf{75.00\\%} \\\\"
    assert rows["Forest"] == "Forest & 95.00 (0.00) & -- \\\\"
    assert "taken among DEN, Direct LR; the other rows are for comparison" in tex
    assert "taken among" not in latex_method_table(everyone, "auc", labels, "cap", "t")
    # the paper's tables 5, 7 and 8: a row per method, a column per dataset, bold per column
    columns = latex_dataset_columns_table(dataset_summary(scores, "auc"), methods, labels, "cap", "t",
                                          best_among=["den", "lr"])
    rows = {line.split(" & ")[0]: line for line in columns.splitlines() if " & " in line}
    assert rows["Method"] == "Method & a & b \\\\"
    assert rows["DEN"] == "DEN & \\textbf{85.00} (5.00) & \\textbf{65.00} (5.00) \\\\"
    assert rows["Direct LR"] == "Direct LR & 80.00 (0.00) & 62.50 (12.50) \\\\"
    assert rows["Forest"] == "Forest & 95.00 (0.00) & 95.00 (0.00) \\\\"
    assert "taken among DEN, Direct LR;" in columns
    plain = latex_dataset_columns_table(dataset_summary(scores, "auc"), methods, labels, "cap", "t")
    assert "Forest & \\textbf{95.00} (0.00) & \\textbf{95.00} (0.00)" in plain and "taken among" not in plain
    by_dataset = latex_dataset_table(dataset_summary(scores, "auc"), methods, labels, "cap", "t",
                                     best_among=["den", "lr"])
    rows = {line.split(" & ")[0]: line for line in by_dataset.splitlines() if " & " in line}
    assert rows["Best on"] == "Best on & \\textbf{2} & 0 & -- \\\\"


def test_sets_that_share_rows_are_held_out_together():
    """dataset_groups: leave-one-dataset-out keeps a set's near copies out of the model that is
    tested on it; pre-training on a copy of an evaluated set is refused; names are checked."""
    from den.workflow_config import training_datasets

    config = {"datasets": {name: {"source": "sklearn"} for name in ("cleve", "heart", "adult", "irish")},
              "dataset_groups": [["cleve", "heart"]], "methods": {"den": {"kind": "den"}},
              "experiments": {"t": {"datasets": ["cleve", "heart", "adult", "irish"], "methods": ["den"]}}}
    spec = experiments(config)["t"]
    assert training_datasets(config, spec, "cleve") == ["adult", "irish"]
    assert training_datasets(config, spec, "heart") == ["adult", "irish"]
    assert training_datasets(config, spec, "adult") == ["cleve", "heart", "irish"]
    assert training_datasets({**config, "dataset_groups": []}, spec, "cleve") == ["heart", "adult", "irish"]
    transfer = {"datasets": ["cleve", "adult"], "methods": ["den"], "pretrain_on": ["heart", "irish"]}
    for bad, message in (
            ({"experiments": {"t": transfer}}, r"pretrain_on: \['heart'\] share rows with evaluated"),
            ({"dataset_groups": [["cleve", "hart"]]}, r"dataset_groups: \['hart'\] are not datasets"),
            ({"experiments": {"t": {**config["experiments"]["t"], "datasets": ["cleve", "heart"]}}},
             "holding out 'cleve' and its group .* leaves no dataset")):
        with pytest.raises(ConfigError, match=message):
            experiments({**config, **bad})


def test_layout_keys_are_checked():
    config = {"datasets": {"a": {"source": "sklearn"}, "p": {"source": "sklearn"}},
              "methods": {"den": {"kind": "den"}, "rf": {"kind": "direct", "model": "random_forest"}},
              "experiments": {"t": {"datasets": ["a"], "methods": ["den", "rf"], "pretrain_on": ["p"],
                                    "per_dataset": "columns", "best_among": ["den"]}}}
    assert experiments(config)["t"]["best_among"] == ["den"]
    for change, message in (({"best_among": ["knn"]}, "best_among: 'knn' is not one of the methods"),
                            ({"sweep": {"order": [1, 2]}}, "per_dataset: a sweep's table"),
                            ({"sweep": {"order": [1, 2]}, "per_dataset": False}, "best_among: a sweep's"),
                            ({"reference": ["rf"]}, "reference needs per_dataset: true")):
        bad = {**config, "experiments": {"t": {**config["experiments"]["t"], **change}}}
        with pytest.raises(ConfigError, match=message):
            experiments(bad)


def test_a_sweep_tables_csv_holds_the_numbers_of_its_tex():
    """Percent means and standard errors over repeats, per swept value, method and dataset,
    in the CSV as in the LaTeX table (the CSV held fractions and standard deviations)."""
    from den.report.tables import latex_sweep_table, sweep_summary

    scores = pd.DataFrame({"setting": ["order-1"] * 4 + ["order-3"] * 4, "dataset": ["a", "a", "b", "b"] * 2,
                           "repeat": [0, 1] * 4, "method": "den",
                           "auc": [0.9, 0.8, 0.7, 0.7, 0.6, 0.7, 0.9, 0.8]})
    summary = sweep_summary(scores, "auc")
    assert list(summary.columns) == ["mean", "se", "n"]
    assert summary.loc[(1, "den", "a")].tolist() == pytest.approx([85.0, 5.0, 2])
    assert summary.loc[(3, "den", "b")].tolist() == pytest.approx([85.0, 5.0, 2])
    tex = latex_sweep_table(scores, "auc", ["den"], "cap", "table:r")
    assert "1 & \\textbf{85.00} (5.00) & 70.00 (0.00) \\\\" in tex
    assert "3 & 65.00 (5.00) & \\textbf{85.00} (5.00) \\\\" in tex
    from den.report.tables import note_single_repeats

    assert note_single_repeats(tex) == tex  # every cell has its standard error
    single = latex_sweep_table(scores[scores["repeat"] == 0], "auc", ["den"], "cap", "table:r")
    noted = note_single_repeats(single)
    assert "(--)" in single and noted.count("(--): one scored repeat, so no standard error") == 1
    assert noted.index("(--): one scored repeat") < noted.index("\\end{center}")
    # a method the sweep leaves alone (a classical reference) gets a block of its own rows
    reference = scores.assign(method="rf", auc=[0.8, 0.8, 0.95, 0.95] * 2)
    both = latex_sweep_table(pd.concat([scores, reference]), "auc", ["den", "rf"], "cap", "table:r")
    rows = [line for line in both.splitlines() if " & " in line]
    assert rows == ["Method & order & a & b \\\\",
                    "den & 1 & \\textbf{85.00} (5.00) & 70.00 (0.00) \\\\",
                    " & 3 & 65.00 (5.00) & 85.00 (5.00) \\\\",
                    "rf & 1 & 80.00 (0.00) & \\textbf{95.00} (0.00) \\\\",
                    " & 3 & 80.00 (0.00) & \\textbf{95.00} (0.00) \\\\"]
    assert both.count("\\midrule") == 2


def test_per_dataset_table_counts_datasets_won():
    # den wins a (85 vs 80) and c; lr wins b; c is a tie on the mean as printed (70.00 vs
    # 70.0004: the same model ranking through a float32 output map), counted for both
    scores = pd.DataFrame({
        "dataset": ["a", "a", "b", "b", "c", "c"] * 2,
        "repeat": [0, 1] * 6,
        "method": ["den"] * 6 + ["lr"] * 6,
        "auc": [0.9, 0.8, 0.6, 0.6, 0.7, 0.7, 0.8, 0.8, 0.9, 0.7, 0.6, 0.800008],
    })
    tex = latex_dataset_table(dataset_summary(scores, "auc"), ["den", "lr"], {"lr": "Direct LR & co"},
                              "cap", "table:x")
    rows = {line.split(" & ")[0]: line for line in tex.splitlines() if " & " in line}
    assert "Direct LR \\& co" in rows["Dataset"]
    assert rows["a"] == "a & \\textbf{85.00 (5.00)} & 80.00 (0.00) \\\\"
    assert rows["b"].startswith("b & 60.00 (0.00) & \\textbf{80.00 (10.00)}")
    assert rows["c"].count("\\textbf") == 2
    assert rows["Mean"] == "Mean & 71.67 & \\textbf{76.67} \\\\"
    assert rows["Best on"] == "Best on & \\textbf{2} & \\textbf{2} \\\\"
    assert "\\bottomrule" in tex and tex.count("\\midrule") == 2
    md = markdown_dataset_table(dataset_summary(scores, "auc"), ["den", "lr"], {"lr": "LR"}).splitlines()
    assert md[0] == "| Dataset | den | LR |" and md[2] == "| a | **85.00 (5.00)** | 80.00 (0.00) |"
    assert md[-2:] == ["| Mean | 71.67 | **76.67** |", "| Best on | **2** | **2** |"]


@pytest.mark.parametrize("metric", ["auc", "accuracy"])
def test_reference_method_is_paired_with_the_best_classical_method_of_the_whole_table(metric):
    """3 datasets x 2 repeats, classical methods a and b. Means (%): a 75, 70, 82.5 (overall
    75.83); b 67.5, 77.5, 70 (71.67): a is the table's best classical method although b is
    better on d2 and on split (d1, 0). DEN - a per split: d1 10, 10; d2 -5, -5; d3 5, 10."""
    values = {"den": [0.80, 0.90, 0.60, 0.70, 0.90, 0.90],
              "a": [0.70, 0.80, 0.65, 0.75, 0.85, 0.80],
              "b": [0.75, 0.60, 0.75, 0.80, 0.70, 0.70]}
    scores = pd.DataFrame([{"dataset": d, "repeat": r, "method": m, metric: values[m][2 * i + r]}
                           for m in values for i, d in enumerate(["d1", "d2", "d3"]) for r in (0, 1)])
    per, summary = reference_differences(scores, metric, "den", ["a", "b"])
    assert summary["best"] == "a" and summary["datasets"] == 3
    assert per["diff"].tolist() == pytest.approx([10.0, -5.0, 7.5])
    assert per["diff_se"].tolist() == pytest.approx([0.0, 0.0, 2.5])  # d3: std(5, 10) / sqrt(2)
    # chosen per split (b on (d1, 0), (d2, 0), (d2, 1)) the mean would be 0.83, per dataset 2.5
    assert summary["diff"] == pytest.approx(12.5 / 3)
    # datasets are the unit: std(10, -5, 7.5) / sqrt(3) = 4.64 (over the 6 splits it would be 3.00)
    assert summary["diff_se"] == pytest.approx(np.std([10, -5, 7.5], ddof=1) / np.sqrt(3))
    assert summary["diff_se"] == pytest.approx(4.6398, abs=1e-4)
    assert per["beats"].tolist() == [True, False, True] and summary["beats"] == 2  # d2: b 77.5 > DEN 65
    labels = {"den": "DEN", "a": "Forest_A"}
    tex = latex_dataset_table(dataset_summary(scores, metric), ["den", "a", "b"], labels, "cap", "t",
                              reference=(per, summary))
    rows = {line.split(" & ")[0]: line for line in tex.splitlines() if " & " in line}
    assert rows["Dataset"].endswith("& DEN $-$ Forest\\_A \\\\") and "{lcccc}" in tex
    assert rows["d1"].endswith("& +10.00 (0.00) \\\\") and rows["d2"].endswith("& -5.00 (0.00) \\\\")
    assert rows["Mean"].endswith("& +4.17 (4.64) \\\\")
    assert rows["Best on"].endswith("& beats all on 2 of 3 \\\\")
    md = markdown_dataset_table(dataset_summary(scores, metric), ["den", "a", "b"], labels, (per, summary))
    md = md.splitlines()
    assert md[0] == "| Dataset | DEN | Forest_A | b | DEN - Forest_A |" and md[1].count("---:") == 4
    assert md[2].endswith("| +10.00 (0.00) |") and md[-2].endswith("| +4.17 (4.64) |")
    assert md[-1].endswith("| beats all on 2 of 3 |")
    # the CSVs: the reference method's rows get the numbers, the others stay empty
    from den.report.tables import with_reference

    by_method, by_dataset = with_reference(method_summary(scores, metric, ["den", "a", "b"]),
                                           dataset_summary(scores, metric), (per, summary))
    assert by_method.loc["den", "best_classical"] == "a" and by_method.loc["den", "beats_all_classical"] == 2
    assert by_method.loc["den", "diff_to_best_classical"] == pytest.approx(12.5 / 3)
    assert by_method["diff_to_best_classical"].isna().tolist() == [False, True, True]
    den_rows = by_dataset[by_dataset["method"] == "den"].set_index("dataset")
    assert den_rows["diff_to_best_classical"].tolist() == pytest.approx([10.0, -5.0, 7.5])
    assert by_dataset.loc[by_dataset["method"] != "den", "diff_to_best_classical"].isna().all()
    assert len(by_dataset) == 9
    note = reference_note(summary, labels)
    assert "DEN minus the classical method with the highest mean (Forest_A, of Forest_A, b)" in note
    with pytest.raises(ValueError, match="no .* scores for \\['c'\\]"):
        reference_differences(scores, metric, "den", ["a", "c"])


def test_reference_keys_are_checked():
    config = {"datasets": {"a": {"source": "sklearn"}, "p": {"source": "sklearn"}},
              "methods": {"den": {"kind": "den"}, "rf": {"kind": "direct", "model": "random_forest"}},
              "experiments": {"t": {"datasets": ["a"], "methods": ["den", "rf"], "pretrain_on": ["p"],
                                    "per_dataset": True, "reference": ["rf"]}}}
    spec = experiments(config)["t"]
    assert spec["reference"] == ["rf"] and spec["reference_method"] == "den"
    assert experiments({**config, "experiments": {"t": {**config["experiments"]["t"], "reference": None}}})
    for change, message in (({"reference": ["knn"]}, "reference: 'knn' is not one of the methods"),
                            ({"reference_method": "nn"}, "reference_method: 'nn' is not one of the methods"),
                            ({"reference": ["den", "rf"]}, "reference_method 'den' is also in reference"),
                            ({"per_dataset": False}, "reference needs per_dataset: true")):
        bad = {**config, "experiments": {"t": {**config["experiments"]["t"], **change}}}
        with pytest.raises(ConfigError, match=message):
            experiments(bad)


def test_support_sizes_beyond_a_declared_dataset_and_empty_zoo_lists_are_config_errors():
    """A synthetic dataset declares its rows: an experiment's n_support must leave query rows,
    said when the workflow is planned, not after its data is built; likewise a compare_to
    without a shared method and a declared multiclass set among a binary head's pre-training
    sets (without cuts). An empty cnn_zoo list is named as such."""
    config = {"datasets": {"g": {"source": "synthetic", "rows": 300}, "p": {"source": "sklearn"}},
              "methods": {"den": {"kind": "den"}},
              "experiments": {"t": {"datasets": ["g"], "methods": ["den"], "pretrain_on": ["p"],
                                    "n_support": 300}}}
    with pytest.raises(ConfigError, match=r"experiments.t.n_support: 300 support rows, but dataset 'g' has "
                                          r"300 rows \(datasets.g.rows\) .* give 2..299"):
        experiments(config)
    config["experiments"]["t"]["n_support"] = 299
    assert experiments(config)["t"]["n_support"] == 299
    config["methods"]["rf"] = {"kind": "direct", "model": "random_forest"}
    config["experiments"]["u"] = {"datasets": ["g"], "methods": ["rf"], "pretrain_on": ["p"],
                                  "n_support": 299, "compare_to": "t"}
    with pytest.raises(ConfigError, match="experiments.u.compare_to: 't' evaluates none of this "
                                          "experiment's methods"):
        experiments(config)
    del config["experiments"]["u"]
    # a set the config declares multiclass among a binary head's pre-training sets
    config["datasets"]["m"] = {"source": "synthetic", "rows": 300, "classes": 3}
    config["experiments"]["t"]["pretrain_on"] = ["p", "m"]
    with pytest.raises(ConfigError, match="experiments.t: DEN's binary head would pre-train on 'm', which "
                                          "has 3 classes; give the experiment head: multiclass"):
        experiments(config)
    config["experiments"]["t"]["pretrain"] = {"multiclass_cuts": 2}  # cut into binary tasks: fine
    assert experiments(config)["t"]["pretrain_on"] == ["p", "m"]
    config["experiments"]["t"]["pretrain"] = {}
    config["experiments"]["t"]["head"] = "multiclass"
    assert experiments(config)["t"]["head"] == "multiclass"
    config["experiments"]["t"].update(head="binary", pretrain_on=["p"])
    config["datasets"]["p"] = {"source": "sklearn", "name": "wine"}
    with pytest.raises(ConfigError, match="would pre-train on 'p', which has 3 classes"):
        experiments(config)
    config["datasets"]["p"] = {"source": "sklearn"}
    zoo = {**config, "cnn_zoo": {"images": ["digits"], "cutoffs": []}, "image_datasets": {"digits": {}},
           "experiments": {"t": {"datasets": ["g"], "methods": ["den"], "pretrain_on": ["simulated"]}}}
    with pytest.raises(ConfigError, match=r"'simulated' needs a 'cnn_zoo' section with at least one entry "
                                          r"in cutoffs \(empty there\)"):
        experiments(zoo)


def test_a_small_csv_file_of_more_classes_among_a_binary_heads_pretraining_sets_stops_the_dry_run(
        tmp_path, monkeypatch):
    """A csv file (e.g. of a dataset directory) is read at planning where a binary head would
    pre-train on it: three classes there are a config error, as for a declared multiclass set,
    not a failed pre-training job for each held-out set; a file over the size limit is left to
    its job."""
    import den.workflow_config as wc

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(60, 2)), columns=["a", "b"]).assign(target=rng.integers(0, 3, 60))
    frame.to_csv(tmp_path / "three.csv", index=False)
    config = {"datasets": {"g": {"source": "synthetic", "rows": 300},
                           "c": {"source": "csv", "path": str(tmp_path / "three.csv")}},
              "methods": {"den": {"kind": "den"}},
              "experiments": {"t": {"datasets": ["g"], "methods": ["den"], "pretrain_on": ["c"]}}}
    with pytest.raises(ConfigError, match="experiments.t: DEN's binary head would pre-train on 'c', which "
                                          "has 3 classes"):
        experiments(config)
    monkeypatch.setattr(wc, "CLASS_COUNT_MAX_BYTES", 100)  # a large file: its job reads it
    assert experiments(config)["t"]["pretrain_on"] == ["c"]
    monkeypatch.undo()
    frame.assign(target=frame["target"] % 2).to_csv(tmp_path / "three.csv", index=False)  # now two
    assert experiments(config)["t"]["pretrain_on"] == ["c"]


def test_planning_reads_a_small_csvs_rows_and_labels_and_classical_tables_need_no_pretraining_checks(
        tmp_path):
    """A csv file of fewer rows than n_support stops the dry run naming the file (its job failed
    with a bare ValueError); a binary head's pre-training set whose labels differ only in case or
    spaces is named as such, not sent to a multiclass head; a columns mapping that gives two
    columns one name is a planning error; an experiment of classical methods alone pre-trains
    nothing, so one csv dataset, or two names for one file, are fine there."""
    import warnings

    from den.errors import DENInputWarning

    rng = np.random.default_rng(0)
    x = rng.normal(size=(30, 2))
    frame = pd.DataFrame(x, columns=["a", "b"]).assign(target=np.where(x[:, 0] > 0, "pos", "neg"))
    frame.to_csv(tmp_path / "small.csv", index=False)
    spelt = frame.assign(target=[{"pos": ["pos", "Pos", "pos "][i % 3]}.get(t, t)
                                 for i, t in enumerate(frame["target"])])
    spelt.to_csv(tmp_path / "spelt.csv", index=False)
    methods = {"den": {"kind": "den"}, "lr": {"kind": "direct", "model": "logistic_regression"}}
    config = {"datasets": {"g": {"source": "synthetic", "rows": 300},
                           "small": {"source": "csv", "path": str(tmp_path / "small.csv")},
                           "copy": {"source": "csv", "path": str(tmp_path / "small.csv")},
                           "spelt": {"source": "csv", "path": str(tmp_path / "spelt.csv")}},
              "methods": methods,
              "experiments": {"t": {"datasets": ["small", "g"], "methods": ["lr"]}}}
    with pytest.raises(ConfigError, match=r"experiments.t.n_support: 50 support rows, but dataset 'small' "
                                          r"has 30 rows \(file '.*small.csv'\) .* give 2..29, or leave"):
        experiments(config)
    config["experiments"]["t"]["n_support"] = 20
    assert experiments(config)["t"]["n_support"] == 20
    # classical methods alone: one dataset, leave-one-out, and a file under two names plan
    config["experiments"]["t"] = {"datasets": ["small"], "methods": ["lr"], "n_support": 20}
    assert experiments(config)["t"]["datasets"] == ["small"]
    config["experiments"]["t"] = {"datasets": ["small"], "pretrain_on": ["copy"], "methods": ["lr"],
                                  "n_support": 20}
    assert experiments(config)["t"]["pretrain_on"] == ["copy"]
    config["experiments"]["t"]["methods"] = ["den", "lr"]  # DEN pre-trains on it: a leak
    with pytest.raises(ConfigError, match="'copy' and evaluated dataset 'small' are the same file"):
        experiments(config)
    config["experiments"]["t"] = {"datasets": ["g"], "pretrain_on": ["spelt"], "methods": ["den"]}
    with pytest.raises(ConfigError, match=r"would pre-train on 'spelt', which has 4 classes \('Pos', 'neg', "
                                          r"'pos', 'pos '\), some of them differing only in case or spaces \("
                                          r"'Pos', 'pos', 'pos '\); if each such group is one class, write"):
        experiments(config)
    config["experiments"]["t"] = {"datasets": ["spelt"], "methods": ["lr"], "n_support": 20}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        experiments(config)
    assert any(issubclass(w.category, DENInputWarning) and "'spelt' has class labels that differ only "
               "in case or spaces ('Pos', 'pos', 'pos ')" in str(w.message) for w in caught)
    config["datasets"]["small"]["columns"] = {"a": "z", "b": "z"}
    config["experiments"]["t"] = {"datasets": ["small"], "methods": ["lr"], "n_support": 20}
    from den.data.sources import DENDataError, load_tabular, select_columns

    with pytest.raises(DENDataError, match="columns gives more than one column the name 'z'"):
        select_columns(frame, "target", config["datasets"]["small"], "dataset 'small'")
    with pytest.raises(DENDataError, match="columns gives more than one column the name 'z'"):
        load_tabular("small", config["datasets"]["small"])


def test_config_cross_references_are_checked():
    config = {"datasets": {"a": {"source": "sklearn"}}, "methods": {"den": {"kind": "den"}},
              "experiments": {"t": {"datasets": ["a", "b"], "methods": ["den"]}}}
    with pytest.raises(ConfigError, match="experiments.t.datasets: unknown dataset 'b'"):
        experiments(config)
    config["experiments"]["t"] = {"datasets": ["a"], "methods": ["knn"]}
    with pytest.raises(ConfigError, match="unknown method 'knn'"):
        experiments(config)
    config["experiments"]["t"] = {"datasets": ["a"], "methods": ["den"]}
    with pytest.raises(ConfigError, match="leave-one-dataset-out needs >= 2 datasets"):
        experiments(config)
    config["experiments"]["t"] = {"datasets": ["a"], "methods": ["den"], "pretrain_on": ["a"]}
    with pytest.raises(ConfigError, match=r"experiments.t.pretrain_on: \['a'\] are also evaluated"):
        experiments(config)  # pre-training on an evaluation set
    config["datasets"]["p"] = {"source": "sklearn"}
    config["experiments"]["t"] = {"datasets": ["a"], "methods": ["den"], "pretrain_on": ["p"]}
    assert experiments(config)["t"]["repeats"] == 20  # defaults filled in
    for change, message in (
            ({"figure": True}, "experiments.t.figure: a figure plots the metric against the swept values"),
            ({"sweep": {"order": [1, 2], "steps": [1]}},
             r"give exactly one key to sweep, not \['order', 'steps'\]"),
            ({"sweep": {"order": []}}, r"experiments.t.sweep.order: give a list of one or more values"),
            ({"sweep": {"order": 3}}, r"experiments.t.sweep.order: give a list .* not 3"),
            ({"subtask_features": [8, 3]}, r"subtask_features: \[8, 3\] is not a range")):
        bad = {**config, "experiments": {"t": {**config["experiments"]["t"], **change}}}
        with pytest.raises(ConfigError, match=message):
            experiments(bad)
    with pytest.raises(ConfigError, match=r"generated_tasks.rows: \[2000, 500\] is not a range"):
        experiments({**config, "generated_tasks": {"count": 2, "seed": 1, "rows": [2000, 500]}})


def test_method_keys_its_kind_ignores_and_empty_comparisons_are_refused():
    config = {"datasets": {name: {"source": "sklearn"} for name in ("a", "b", "p")},
              "methods": {"den": {"kind": "den"}, "knn": {"kind": "direct", "model": "knn"}},
              "experiments": {"t": {"datasets": ["a"], "methods": ["den", "knn"], "pretrain_on": ["p"]},
                              "u": {"datasets": ["b"], "methods": ["den"], "pretrain_on": ["p"]}}}
    assert set(experiments(config)) == {"t", "u"}
    for method, message in (({"kind": "direct", "model": "knn", "variant": "den"},
                             r"method 'knn': \['variant'\] would be ignored by a direct method"),
                            ({"kind": "direct", "model": "knn", "hidden": [8]},
                             r"\['hidden'\] would be ignored by a direct method other than mlp"),
                            ({"kind": "den", "model": "mlp"},
                             r"\['model'\] would be ignored by a den method")):
        with pytest.raises(ConfigError, match=message):
            experiments({**config, "methods": {**config["methods"], "knn": method}})
    for other, message in (("t", "compared with itself"), ("u", "'u' evaluates none of this experiment's")):
        bad = {**config, "experiments": {**config["experiments"],
                                         "t": {**config["experiments"]["t"], "compare_to": other}}}
        with pytest.raises(ConfigError, match=f"experiments.t.compare_to: .*{message}"):
            experiments(bad)


def test_model_settings_are_checked_when_the_jobs_are_planned():
    """A model, pre-training or fine-tuning setting (or combination) that a job would refuse
    stops model_index (the dry run), with where it came from, without importing TensorFlow."""
    import subprocess
    import sys

    from den.workflow_config import model_index

    config = {"datasets": {name: {"source": "sklearn"} for name in ("a", "p")},
              "methods": {"den": {"kind": "den"}},
              "experiments": {"t": {"datasets": ["a"], "methods": ["den"], "pretrain_on": ["p"],
                                    "repeats": 1}}}
    assert model_index(config)
    for model, sweep, message in (
            ({"ordr": 3}, None, r"experiments.t \(model, then sweep 'base'\): .*'ordr'.*ModelConfig's keys"),
            ({"gated_pooling": True, "tuple_attention": True}, None, "experiments.t .*gated_pooling"),
            ({}, {"order": [1, 20]}, r"experiments.t \(model, then sweep 'order-20'\): .*order"),
            ({"tuple_relevance": True}, None, "tuple_relevance")):
        spec = {**config["experiments"]["t"], "model": model, "sweep": sweep}
        with pytest.raises(ConfigError, match=message):
            model_index({**config, "experiments": {"t": spec}})
    with pytest.raises(ConfigError, match="shipped.model: .*'gated_pool'"):
        model_index({**config, "shipped": {"pretrain_on": ["p"], "model": {"gated_pool": True}}})
    # combinations of pre-training and fine-tuning settings, which their classes refuse
    for bad, message in (
            ({"finetune": {"early_stopping": True, "ensemble": 1}}, "finetune: .*ensemble >= 2"),
            ({"finetune": {"feature_counts": [3]}}, "finetune: .*turn early_stopping on"),
            ({"finetune": {"early_stopping": True, "ensemble": 3, "network_steps": 5}},
             "finetune: .*network_steps"),
            # the top-level section is named as itself, not as an experiment that has none
            ({"pretrain": {"covariates_min": 30}}, r"^pretrain: .*covariates_min 30 > covariates_max 25"),
            ({"pretrain": {"support_rows": 64, "support_rows_min": 100}}, r"^pretrain: .*support_rows_min"),
            ({"experiments": {"t": {**config["experiments"]["t"], "pretrain": {"support_rows_min": 300}}}},
             r"^experiments.t.pretrain \(over the pretrain section\): .*support_rows_min"),
            ({"shipped": {"pretrain_on": ["p"], "pretrain": {"query_rows": 0}}},
             r"shipped.pretrain .*query_rows must be >= 1"),
            # a method's own fine-tuning, over the section
            ({"finetune": {"ensemble": 1},
              "methods": {"den": {"kind": "den", "finetune": {"early_stopping": True}}}},
             r"methods.den.finetune \(over the finetune section\): .*ensemble >= 2"),
            ({"methods": {"den": {"kind": "den", "finetune": {"epoch": 3}}}},
             r"methods.den.finetune .*'epoch'.*FinetuneConfig's keys")):
        with pytest.raises(ConfigError, match=message):
            model_index({**config, **bad})
    program = ("import sys; from den.workflow_config import model_index; "
               f"model_index({config!r}); print('tensorflow' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert run.stdout.split() == ["False"], run.stderr


def test_a_method_fine_tunes_with_its_own_settings_over_the_section():
    """methods.<name>.finetune: two fine-tuned DEN methods of one table compare fine-tuning
    settings; each evaluation gets the section with the method's keys over it, a method
    without its own gets the section, and no other method carries fine-tuning settings."""
    from den.workflow_config import evaluation_protocol, score_index

    config = {"seed": 1, "finetune": {"epochs": 10, "learning_rate": 0.001},
              "datasets": {name: {"source": "sklearn"} for name in ("a", "p")},
              "methods": {"den": {"kind": "den"},
                          "den_fast_lr": {"kind": "den", "finetune": {"learning_rate": 0.01}},
                          "den_same": {"kind": "den", "finetune": {"learning_rate": 0.001}, "label": "again"},
                          "no_ft": {"kind": "den", "variant": "no_finetune"}},
              "experiments": {"t": {"datasets": ["a"], "methods": ["den", "den_fast_lr", "den_same", "no_ft"],
                                    "pretrain_on": ["p"], "repeats": 1}}}
    spec = experiments(config)["t"]
    protocols = {m: evaluation_protocol(config, spec, m) for m in spec["methods"]}
    assert protocols["den_fast_lr"]["finetune_config"] == {"epochs": 10, "learning_rate": 0.01}
    assert protocols["den"]["finetune_config"] == {"epochs": 10, "learning_rate": 0.001}
    assert protocols["no_ft"]["finetune_config"] is None
    assert "finetune" not in protocols["den_fast_lr"]["method"]
    # the method whose settings are the section's is the same evaluation as den: copied
    from den.workflow_config import model_index

    index = score_index(config, model_index(config))
    assert index == {"results/scores/t/base/den_same/a/0.json": "results/scores/t/base/den/a/0.json"}
    bad = {**config, "methods": {**config["methods"], "no_ft": {"kind": "den", "variant": "no_finetune",
                                                               "finetune": {"epochs": 3}}}}
    with pytest.raises(ConfigError, match="methods.no_ft: .*finetune would be ignored"):
        experiments(bad)
    # variant adapt: its own adaptation settings alone (not the section's), checked at planning
    adapt = {**config, "methods": {**config["methods"],
                                   "slow": {"kind": "den", "variant": "adapt",
                                            "finetune": {"network_learning_rate": 1e-4}},
                                   "plain": {"kind": "den", "variant": "adapt"}},
             "experiments": {"t": {**config["experiments"]["t"], "methods": ["slow", "plain"]}}}
    spec = experiments(adapt)["t"]
    assert evaluation_protocol(adapt, spec, "slow")["finetune_config"] == {"network_learning_rate": 1e-4}
    assert evaluation_protocol(adapt, spec, "plain")["finetune_config"] is None
    for wrong, message in (({"epochs": 3}, r"reads only the adaptation's settings .* not \['epochs'\]"),
                           ({"network_learning_rate": -1.0}, "network_learning_rate")):
        bad = {**adapt, "methods": {**adapt["methods"], "slow": {"kind": "den", "variant": "adapt",
                                                                 "finetune": wrong}}}
        with pytest.raises(ConfigError, match=f"methods.slow.*{message}"):
            model_index(bad)  # the planning's checks (experiments' own, then the settings')


def test_a_target_of_no_experiment_names_the_experiments_there_are():
    from den.workflow_config import comparison_score_files, figure_score_files, score_files

    config = {"datasets": {"a": {"source": "sklearn"}, "p": {"source": "sklearn"}},
              "methods": {"den": {"kind": "den"}},
              "experiments": {"t": {"datasets": ["a"], "methods": ["den"], "pretrain_on": ["p"],
                                    "repeats": 2},
                              "s": {"datasets": ["a"], "methods": ["den"], "pretrain_on": ["p"],
                                    "repeats": 1, "sweep": {"order": [1, 2]}, "figure": True}}}
    assert len(score_files(config, "t")) == 2 and comparison_score_files(config, "t") == []
    assert len(figure_score_files(config, "s")) == 2
    for call, target in ((score_files, "tables"), (comparison_score_files, "tables"),
                         (figure_score_files, "figures")):
        with pytest.raises(ConfigError, match=rf"results/{target}/nonexistent: the config has no experiment "
                                              r"'nonexistent'; its experiments are \['s', 't'\]"):
            call(config, "nonexistent")
    with pytest.raises(ConfigError, match=r"results/figures/t: experiment 't' has no sweep to plot against; "
                                          r"the experiments with one are \['s'\]"):
        figure_score_files(config, "t")


def test_repeated_config_options_are_found_in_every_spelling():
    """Snakemake keeps the last of a repeated --configfile/--config, in any spelling argparse
    takes (=value, an abbreviation, -C); targets after '--' and other programs' command lines
    are not options."""
    from den.workflow_config import ConfigError, check_repeated_options

    for argv in (["snakemake", "--configfile=a.yaml", "--configfiles", "b.yaml"],
                 ["/x/snakemake/__main__.py", "--configf", "a", "--configfile", "b"],
                 ["snakemake", "-Ca=1", "--config", "b=2"]):
        with pytest.raises(ConfigError, match="is given 2 times; Snakemake keeps only the last one"):
            check_repeated_options(argv)
    for argv in (["snakemake", "--configfile", "a.yaml", "b.yaml", "--config", "x=1", "y=2"],
                 ["snakemake", "--", "--configfile", "--configfile"],
                 ["pytest", "--config", "a", "--config", "b"], []):
        check_repeated_options(argv)


def test_a_dataset_key_its_source_does_not_read_stops_the_planning():
    """rows on a csv entry (it even entered the support-size check) or path on a sklearn one
    would be ignored: the dry run names the key and the source's keys."""
    from pathlib import Path

    import yaml

    from den.workflow_config import ConfigError, experiments

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml").read_text())
    experiments(config)
    for name, extra, source in (("breast_cancer", {"path": "foo.csv"}, "sklearn"),
                                ("gen_b1", {"target": "y"}, "synthetic")):
        bad = {**config, "datasets": {**config["datasets"], name: {**config["datasets"][name], **extra}}}
        with pytest.raises(ConfigError, match=rf"datasets.{name}: \[{list(extra)[0]!r}\] would be ignored by "
                                              rf"a {source} dataset; its keys are"):
            experiments(bad)
    own = {**config, "datasets": {**config["datasets"],
                                  "mine": {"source": "csv", "path": "m.csv", "rows": 500, "seed": 3}}}
    with pytest.raises(ConfigError, match=r"datasets.mine: \['rows', 'seed'\] would be ignored by a csv"):
        experiments(own)


def test_a_schema_error_is_one_line_that_names_the_key():
    from pathlib import Path

    import yaml

    from den.workflow_config import schema_error

    schema = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"
    config = yaml.safe_load((schema.parents[2] / "config" / "config.yaml").read_text())
    assert schema_error(config, schema) is None
    assert schema_error({**config, "pretrian": 5}, schema) == \
        "the config's top level: Additional properties are not allowed ('pretrian' was unexpected)"
    assert schema_error({**config, "seed": -5}, schema) == "seed: -5 is less than the minimum of 0"
    bad = {**config, "pretrain": {**config.get("pretrain", {}), "steps": "ten"}}
    assert schema_error(bad, schema) == "pretrain.steps: 'ten' is not of type 'integer'"
    nested = {**config, "finetune": {"epochs": "5"}}  # what --config 'finetune={epochs: 5}' gives
    assert schema_error(nested, schema).startswith("finetune.epochs: '5' is not of type 'integer'; a quoted "
                                                   "number is text: in a config file write it without "
                                                   "quotes; `--config` reads values inside a nested "
                                                   "mapping as text")
    exponent = {**config, "finetune": {"learning_rate": "1e-3"}}  # YAML 1.1 reads 1e-3 as text
    assert schema_error(exponent, schema) == ("finetune.learning_rate: '1e-3' is not of type 'number'; "
                                              "YAML reads 1e-3 as text (an exponent needs a point before "
                                              "the e): write 0.001 or 1.0e-3")


def test_simulated_plus_others_holds_each_dataset_out_and_data_dir_resolves_paths():
    from den.workflow_config import dataset_spec, held_out_name, model_index, training_datasets

    config = {"datasets": {n: {"source": "csv", "path": f"{n}.csv.gz"} for n in ("a", "b", "c")},
              "image_datasets": {"digits": {"source": "sklearn"}},
              "cnn_zoo": {"images": ["digits"], "cutoffs": [0.3]},
              "methods": {"den": {"kind": "den"}},
              "experiments": {"t": {"datasets": ["a", "b", "c"], "methods": ["den"],
                                    "pretrain_on": ["simulated", "others"]}}}
    spec = experiments(config)["t"]
    assert training_datasets(config, spec, "b") == ["sim-digits-p30", "a", "c"]
    assert held_out_name(spec, "b") == "b"
    assert "results/models/t/base/plf/c.npz" in model_index(config)
    config["experiments"]["t"]["datasets"] = ["a"]
    with pytest.raises(ConfigError, match="leave-one-dataset-out needs >= 2 datasets"):
        experiments(config)
    assert dataset_spec(config, "a")["path"] == "a.csv.gz"  # no data_dir: as written
    config["data_dir"] = "/data/copies"
    assert dataset_spec(config, "a")["path"] == "/data/copies/a.csv.gz"
    assert config["datasets"]["a"]["path"] == "a.csv.gz"  # the config itself is left alone
    config["datasets"]["a"]["path"] = "/abs/a.csv"
    assert dataset_spec(config, "a")["path"] == "/abs/a.csv"


def test_generated_tasks_join_pre_training_as_datasets_of_their_own():
    from den.data.sources import load_tabular
    from den.data.synthetic import generated_task_specs, make_tasks
    from den.workflow_config import dataset_spec, model_index, training_datasets

    config = {"datasets": {n: {"source": "csv", "path": f"{n}.csv"} for n in ("a", "b")},
              "generated_tasks": {"count": 3, "seed": 4, "rows": [50, 80], "features": [2, 5],
                                  "missing_rate": 0.1},
              "methods": {"den": {"kind": "den"}},
              "experiments": {"t": {"datasets": ["a", "b"], "methods": ["den"],
                                    "pretrain_on": ["generated", "others"]}}}
    spec = experiments(config)["t"]
    assert training_datasets(config, spec, "a") == ["gen-000", "gen-001", "gen-002", "b"]
    assert "results/models/t/base/plf/b.npz" in model_index(config)
    # each generated task is a synthetic dataset entry, prepared like any other
    entry = dataset_spec(config, "gen-001")
    assert entry["source"] == "synthetic" and 50 <= entry["rows"] <= 80 and 2 <= entry["features"] <= 5
    assert entry["missing_rate"] == 0.1
    task = load_tabular("gen-001", entry)
    assert task.n_rows == entry["rows"] and 0 < np.isnan(task.x).mean() < 0.2
    # the same tasks make_tasks generates, and a different seed gives different ones
    made = make_tasks(3, seed=4, rows=(50, 80), features=(2, 5), prefix="gen-", missing_rate=0.1)
    np.testing.assert_array_equal(made[1].x, task.x)
    assert generated_task_specs(3, seed=5, rows=(50, 80), features=(2, 5)) != \
        generated_task_specs(3, seed=4, rows=(50, 80), features=(2, 5))
    # 'generated' without the section, and a dataset named like a generated task, are errors
    del config["generated_tasks"]
    with pytest.raises(ConfigError, match="'generated' needs a 'generated_tasks' section"):
        experiments(config)
    config["generated_tasks"] = {"count": 1, "seed": 0}
    config["datasets"]["gen-000"] = {"source": "sklearn"}
    with pytest.raises(ConfigError, match=r"\['gen-000'\] clash with the names of generated_tasks"):
        experiments(config)


def test_subtasks_settings_and_transfer_protocol():
    from den.data.synthetic import make_task
    from den.experiments import subtask
    from den.workflow_config import experiments, settings, training_datasets

    task = make_task("t", 50, 10, seed=1)
    small = subtask(task, (3, 5), seed=4)
    assert 3 <= small.n_features <= 5
    assert small.feature_names == sorted(small.feature_names, key=lambda n: int(n[1:]))  # original order
    assert subtask(task, (3, 5), seed=4).feature_names == small.feature_names  # same for every method
    assert subtask(task, (12, 20), seed=4).n_features == 10  # capped by d; the job's log says so:
    from den.experiments import evaluate_method

    lr = {"kind": "direct", "model": "logistic_regression"}
    with contextlib.redirect_stdout(io.StringIO()) as log:
        evaluate_method(lr, task, n_support=20, seed=1, repeat=0, subtask_features=(12, 20))
    assert "subtask_features [12, 20] reach past t's 10 features" in log.getvalue()
    with contextlib.redirect_stdout(io.StringIO()) as log:
        evaluate_method(lr, task, n_support=20, seed=1, repeat=0, subtask_features=(3, 5))
    assert "reach past" not in log.getvalue()
    assert settings({"sweep": {"order": [1, 3]}}) == {"order-1": {"order": 1}, "order-3": {"order": 3}}
    assert settings({"sweep": None}) == {"base": {}}
    config = {"datasets": {"a": {"source": "sklearn"}, "b": {"source": "sklearn"}},
              "image_datasets": {"digits": {"source": "sklearn"}},
              "cnn_zoo": {"images": ["digits"], "cutoffs": [0.1, 0.2]},
              "methods": {"den": {"kind": "den"}},
              "experiments": {"lodo": {"datasets": ["a", "b"], "methods": ["den"]},
                              "transfer": {"pretrain_on": ["simulated", "b"], "datasets": ["a"],
                                           "methods": ["den"]}}}
    specs = experiments(config)
    assert training_datasets(config, specs["lodo"], "a") == ["b"]
    assert training_datasets(config, specs["transfer"], "all") == ["sim-digits-p10", "sim-digits-p20", "b"]


def test_an_experiments_pretrain_and_baselines_settings_reach_only_its_own_pre_training():
    """experiments.<name>.pretrain/baselines apply over the top-level sections (the paper's
    real-data tables pre-train without covariate sampling), keep their models apart from
    other experiments' in the model index, are checked, and are not filled in by the schema,
    so a config without them keeps its job parameters."""
    from pathlib import Path

    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    from den.workflow_config import model_index, model_params, pretrain_params, shipped_pretrain_params

    schema = str(Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml")
    same = {"pretrain_on": ["b"], "datasets": ["a"], "methods": ["den", "pn", "maml"]}
    config = {"seed": 1, "pretrain": {"steps": 5, "covariates_max": 50},
              "baselines": {"covariates_max": 50},
              "datasets": {"a": {"source": "sklearn"}, "b": {"source": "sklearn"}},
              "methods": {"den": {"kind": "den"}, "pn": {"kind": "meta", "model": "proto_net"},
                          "maml": {"kind": "meta", "model": "maml", "settings": {"covariates_min": 2}}},
              "experiments": {"sampled": dict(same), "twin": dict(same),
                              "whole": {**same, "pretrain": {"covariates_min": 25, "covariates_max": 25},
                                        "baselines": {"covariates_min": 25, "covariates_max": 25}}}}
    validate(config, schema)
    specs = experiments(config)
    assert "pretrain" not in specs["sampled"] and "baselines" not in specs["sampled"]  # not filled in
    top = {key: value for key, value in config["pretrain"].items() if key != "seeds"}
    assert pretrain_params(config, 0, specs["sampled"]) == pretrain_params(config) == {**top, "seed": 1}
    whole = pretrain_params(config, 1, specs["whole"])
    assert (whole["covariates_min"], whole["covariates_max"], whole["steps"], whole["seed"]) == (25, 25, 5, 2)
    # the shipped models: the pretrain section as it is, or with shipped.pretrain over it (member 0)
    assert shipped_pretrain_params(config) == pretrain_params(config)
    shipped = {**config, "shipped": {"pretrain_on": ["b"], "pretrain": {"steps": 9, "multiclass_cuts": 4}}}
    validate(shipped, schema)
    assert shipped_pretrain_params(shipped) == {**top, "steps": 9, "multiclass_cuts": 4, "seed": 1}
    for kind in ("meta-pn", "meta-maml"):  # over the top-level baselines and the method's settings
        params = model_params(config, specs["whole"], "base", kind)
        assert (params["covariates_min"], params["covariates_max"]) == (25, 25)
    assert model_params(config, specs["sampled"], "base", "meta-maml")["covariates_min"] == 2
    index = model_index(config)
    for kind in ("plf", "meta-pn"):
        path = "results/models/{}/base/" + kind + "/all.npz"
        assert index[path.format("twin")] == index[path.format("sampled")]  # alike: one job
        assert index[path.format("whole")] != index[path.format("sampled")]
        assert index[path.format("whole")].startswith(f"results/models/pretrained/{kind}/all.")
    config["experiments"]["whole"]["pretrain"] = {"covariates_min": 60}  # merged over the top level's 50
    with pytest.raises(ConfigError, match=r"experiments.whole.pretrain \(over the pretrain section\): "
                                          r"invalid pre-training config: covariates_min 60 > "
                                          r"covariates_max 50"):
        model_index(config)
    config["experiments"]["whole"]["pretrain"] = {"seeds": 2}  # members are a top-level setting
    with pytest.raises(WorkflowError):
        validate(config, schema)


def test_an_experiments_pretrain_seed_draws_another_pre_training_on_the_same_splits():
    """experiments.<name>.pretrain_seed (session 45: the benchmark's pre-training-seed noise)
    seeds that experiment's models (initial weights, tuple subsets) and pre-training episodes,
    members counting up from it; its splits and fine-tuning keep the config's seed, so its
    evaluations pair split by split with a twin's. Absent, nothing moves: the config's seed."""
    from pathlib import Path

    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    from den.workflow_config import evaluation_protocol, model_index, model_params, pretrain_params

    schema = str(Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml")
    same = {"pretrain_on": ["b"], "datasets": ["a"], "methods": ["den", "pn"]}
    config = {"seed": 7, "pretrain": {"steps": 5},
              "datasets": {"a": {"source": "sklearn"}, "b": {"source": "sklearn"}},
              "methods": {"den": {"kind": "den"}, "pn": {"kind": "meta", "model": "proto_net"}},
              "experiments": {"first": dict(same), "second": {**same, "pretrain_seed": 3}}}
    validate(config, schema)
    specs = experiments(config)
    assert specs["first"]["pretrain_seed"] is None and specs["second"]["pretrain_seed"] == 3
    for kind in ("plf", "no_plf", "meta-pn"):
        assert model_params(config, specs["first"], "base", kind)["seed"] == 7
        assert model_params(config, specs["second"], "base", kind)["seed"] == 3
    assert pretrain_params(config, 0, specs["first"])["seed"] == 7
    assert [pretrain_params(config, m, specs["second"])["seed"] for m in (0, 1)] == [3, 4]
    for method in ("den", "pn"):  # the same splits and fine-tuning seed
        assert evaluation_protocol(config, specs["second"], method) == \
            evaluation_protocol(config, specs["first"], method)
    index = model_index(config)
    for kind in ("no_plf", "meta-pn"):  # a model of their own, each
        path = "results/models/{}/base/" + kind + "/all.npz"
        assert index[path.format("second")] != index[path.format("first")]
    config["experiments"]["second"]["pretrain_seed"] = 7  # the config's seed: the same model
    index = model_index(config)
    path = "results/models/{}/base/no_plf/all.npz"
    assert index[path.format("second")] == index[path.format("first")]
    config["experiments"]["second"]["pretrain_seed"] = -1
    with pytest.raises(WorkflowError):
        validate(config, schema)


def test_improvement_is_paired_over_common_splits():
    from den.report.tables import improvement

    scores = pd.DataFrame({"dataset": ["a", "a", "b"], "repeat": [0, 1, 0], "method": ["den"] * 3,
                           "auc": [0.80, 0.90, 0.70]})
    baseline = pd.DataFrame({"dataset": ["a", "b", "c"], "repeat": [0, 0, 0], "method": ["den"] * 3,
                             "auc": [0.75, 0.60, 0.99]})
    out = improvement(scores, baseline, "auc", ["den", "lr"])
    assert out.loc["den", "improvement"] == pytest.approx(7.5)  # (5 + 10) / 2: only (a,0) and (b,0)
    assert out.loc["den", "improvement_se"] == pytest.approx(np.std([5, 10], ddof=1) / np.sqrt(2))
    assert np.isnan(out.loc["lr", "improvement"])
    summary = pd.DataFrame({"mean": [80.0], "se": [1.0], "best_pct": [100.0], "n": [2]}, index=["den"])
    summary = summary.join(out)
    assert out.loc["den", "improvement_n"] == 2
    tex = latex_method_table(summary, "auc", {}, "c", "t")
    # one method: no % Best column (it would be 100 everywhere); a line says what Improv. pairs
    assert "Improv." in tex and "& 7.50 (2.50)" in tex and "{lcc}" in tex and "% Best" not in tex
    assert "over the splits both ran (2 per method), so it can differ" in tex
    two = latex_method_table(pd.concat([summary, summary.rename(index={"den": "lr"})]), "auc", {}, "c", "t")
    assert "{lccc}" in two and "\\% Best & Improv." in two


@pytest.mark.parametrize("model", ["logistic_regression", "mlp", "gradient_boosting", "knn"])
def test_direct_baselines_learn_and_handle_missing_values(model):
    from den.baselines.direct import direct_predict_proba

    task = make_task("t", 400, 5, seed=11, missing_rate=0.1)
    proba = direct_predict_proba(model, task.x[:50], task.y[:50], task.x[50:], 2)
    assert proba.shape == (350, 2) and np.allclose(proba.sum(axis=1), 1)
    from sklearn.metrics import roc_auc_score

    assert roc_auc_score(task.y[50:], proba[:, 1]) > 0.65


def test_finetune_ensemble_averages_runs_with_their_own_seeds(small_binary_model):
    from den.train.finetune import FinetuneConfig, fine_tuned_models, mean_proba

    task = make_task("ens", n_rows=300, n_features=5, seed=3)
    support, query = support_query_split(task.y, 40, 0)
    config = FinetuneConfig(epochs=2, steps_per_epoch=3, learning_rate=0.01, seed=5, ensemble=3)
    models, losses = fine_tuned_models(small_binary_model, task.x[support], task.y[support], 2, config,
                                       x_unlabeled=task.x[query])
    probas = [m.predict_proba(task.x[query]) for m in models]
    assert len(models) == len(losses) == 3 and len(losses[2]) == 6
    assert not np.allclose(probas[0], probas[1])
    np.testing.assert_allclose(mean_proba(models, task.x[query]), np.mean(probas, axis=0), rtol=1e-6)
    # run j is the single run with seed + j
    (single,), _ = fine_tuned_models(small_binary_model, task.x[support], task.y[support], 2,
                                     FinetuneConfig(epochs=2, steps_per_epoch=3, learning_rate=0.01, seed=6),
                                     x_unlabeled=task.x[query])
    np.testing.assert_allclose(single.predict_proba(task.x[query]), probas[1], rtol=1e-5)
    # nothing to fine-tune: one model, not k identical ones
    frozen, frozen_losses = fine_tuned_models(small_binary_model, task.x[support], task.y[support], 2,
                                              FinetuneConfig(epochs=0, ensemble=4))
    assert len(frozen) == 1 and frozen_losses == [[]]
    with pytest.raises(ValueError, match="ensemble"):
        FinetuneConfig(ensemble=0)


def test_den_pretrained_with_several_seeds_averages_its_members(small_binary_model):
    """``model`` a list (pretrain.seeds > 1): each member is fine-tuned on its own (member m
    with seeds split seed + m * MEMBER_SEED_STRIDE) and the class probabilities averaged."""
    from den.experiments import MEMBER_SEED_STRIDE
    from den.model.config import ModelConfig
    from den.train.finetune import FinetuneConfig, fine_tuned_models, mean_proba
    from den.train.pretrain import PretrainConfig, pretrain

    from helpers import SMALL

    other = pretrain([make_task(f"p{i}", 200, 3 + i, seed=40 + i) for i in range(4)], ModelConfig(**SMALL),
                     PretrainConfig(steps=40, query_rows=32, support_rows=32, seed=2), progress=None)
    task = make_task("members", 300, 4, seed=8)
    s = split_seed(0, task.name, 0)
    support, query = support_query_split(task.y, 50, s)
    finetune = FinetuneConfig(epochs=2, steps_per_epoch=3, learning_rate=0.05, ensemble=2)

    def member_proba(den, variant, m):
        config = None if variant == "no_finetune" else FinetuneConfig(**{**finetune.to_dict(),
                                                                          "seed": s + m * MEMBER_SEED_STRIDE})
        models, _ = fine_tuned_models(den, task.x[support], task.y[support], 2, config,
                                      x_unlabeled=task.x[query])
        return mean_proba(models, task.x[query])

    for variant in ("no_finetune", "den"):
        spec = {"kind": "den", "variant": variant}
        both = evaluate_method(spec, task, n_support=50, seed=0, repeat=0, model=[small_binary_model, other],
                               finetune_config=finetune)
        single = evaluate_method(spec, task, n_support=50, seed=0, repeat=0, model=small_binary_model,
                                 finetune_config=finetune)
        alone = evaluate_method(spec, task, n_support=50, seed=0, repeat=0, model=other,
                                finetune_config=finetune)
        expected = np.mean([member_proba(small_binary_model, variant, 0), member_proba(other, variant, 1)],
                           axis=0)
        assert both["auc"] == pytest.approx(score(task.y[query], expected)["auc"], abs=1e-9)
        assert both["members"] == 2 and single["members"] == 1 and both["features_read"] == 4
        assert both["auc"] not in (single["auc"], alone["auc"])  # neither member on its own
        # member 0 of a list is the single model: raising pretrain.seeds keeps its evaluation
        assert evaluate_method(spec, task, n_support=50, seed=0, repeat=0, model=[small_binary_model],
                               finetune_config=finetune)["auc"] == single["auc"]


def test_stratified_folds_spread_every_class_evenly():
    from den.train.finetune import stratified_folds

    y = np.r_[np.zeros(37, int), np.ones(8, int), np.full(3, 2)]
    folds = stratified_folds(y, 5, np.random.default_rng(0))
    assert sorted(np.bincount(folds, minlength=5)) == [9, 9, 10, 10, 10]
    for label, n in ((0, 37), (1, 8), (2, 3)):
        per_fold = np.bincount(folds[y == label], minlength=5)
        assert per_fold.max() - per_fold.min() <= 1 and per_fold.sum() == n
    assert np.array_equal(folds, stratified_folds(y, 5, np.random.default_rng(0)))
    assert not np.array_equal(folds, stratified_folds(y, 5, np.random.default_rng(1)))


def test_early_stopping_keeps_the_epoch_with_the_lowest_cross_validated_loss(small_binary_model):
    """Rebuilt from public pieces: fold j's run is a task model of the other folds' rows
    (same keypoints) fine-tuned for e epochs with seed + j; the chosen e minimises the summed
    held-out cross-entropy, and each returned model's PLFs are that run's."""
    from den.model.task_model import TaskModel
    from den.train.finetune import FinetuneConfig, fine_tuned_models, finetune, stratified_folds

    task = make_task("es", n_rows=300, n_features=4, seed=5)
    support, query = support_query_split(task.y, 20, 0)
    xs, ys = task.x[support], task.y[support]
    config = FinetuneConfig(epochs=6, steps_per_epoch=2, learning_rate=0.3, seed=7, ensemble=3,
                            early_stopping=True)
    models, losses = fine_tuned_models(small_binary_model, xs, ys, 2, config, x_unlabeled=task.x[query])
    assert len(models) == len(losses) == 3 and all(len(run) == 12 for run in losses)
    folds = stratified_folds(ys, 3, np.random.default_rng(7))
    held_out = np.zeros(7)
    runs = {}
    for j in range(3):
        train, valid = folds != j, folds == j
        for epochs in range(7):
            run = TaskModel(small_binary_model, xs[train], ys[train], 2, keypoints=models[j].keypoints)
            finetune(run, FinetuneConfig(epochs=epochs, steps_per_epoch=2, learning_rate=0.3, seed=7 + j))
            p = run.predict_proba(xs[valid])[np.arange(valid.sum()), ys[valid]]
            held_out[epochs] += -np.mean(np.log(p))
            runs[j, epochs] = run
    best = int(np.argmin(held_out))
    assert 0 < best < 6  # this task overfits: neither the pre-trained PLFs nor every epoch
    for j, model in enumerate(models):
        assert model.finetune_epochs == best
        np.testing.assert_allclose(model.calibration_parameters()[0].numpy(),
                                   runs[j, best].calibration_parameters()[0].numpy(), atol=1e-5)
    # the runs differ (their own folds and seeds)
    assert not np.allclose(models[0].predict_proba(task.x[query]), models[1].predict_proba(task.x[query]))
    with pytest.raises(ValueError, match="early_stopping.*ensemble >= 2"):
        FinetuneConfig(early_stopping=True)


def test_choose_epoch_with_a_tolerance_keeps_the_earliest_epoch_the_folds_cannot_tell_apart():
    from den.train.finetune import FinetuneConfig, choose_epoch

    # 4 folds x epochs 0..3; mean loss 1.00, 0.70, 0.68, 0.69: epoch 2 is the best
    held_out = np.array([[1.0, 0.70, 0.64, 0.66],
                         [0.9, 0.60, 0.62, 0.63],
                         [1.1, 0.80, 0.76, 0.75],
                         [1.0, 0.70, 0.70, 0.72]])
    assert choose_epoch(held_out) == choose_epoch(held_out, 0.0) == 2
    # epoch 1 - epoch 2 per fold: 0.06, -0.02, 0.04, 0.00: mean 0.02, standard error 0.0183
    assert choose_epoch(held_out, 1.0) == 2
    assert choose_epoch(held_out, 1.2) == 1
    # epoch 0 is 0.32 worse with the same standard error: only a tolerance of 17.5+ keeps it
    assert choose_epoch(held_out, 17.0) == 1 and choose_epoch(held_out, 18.0) == 0
    with pytest.raises(ValueError, match="folds >= 2"):
        choose_epoch(held_out[:1])
    with pytest.raises(ValueError, match="early_stopping_tolerance"):
        FinetuneConfig(ensemble=2, early_stopping=True, early_stopping_tolerance=-1)


def test_the_adapt_variant_adapts_the_network_to_each_split_s_support_rows(small_binary_model, monkeypatch):
    """Variant adapt fits with ``adapt_config`` (50 steps, seeded by the split), with a method's
    own adaptation settings over it and the den variant's fine-tuning settings refused; no_plf
    does not adapt."""
    import den.train.finetune as finetune
    from den.pretrained import ADAPT_NETWORK_LEARNING_RATE, ADAPT_NETWORK_STEPS

    configs = []
    fit_task = finetune.fit_task

    def spy(den, x_support, y_support, n_classes, config=None, x_unlabeled=None):
        configs.append(config)
        return fit_task(den, x_support, y_support, n_classes, config, x_unlabeled=x_unlabeled)

    monkeypatch.setattr(finetune, "fit_task", spy)
    task = make_task("adapt", 200, 4, seed=8)
    settings = {"n_support": 50, "seed": 0, "repeat": 1, "model": small_binary_model}
    adapted = evaluate_method({"kind": "den", "variant": "adapt"}, task, **settings)
    plain = evaluate_method({"kind": "den", "variant": "no_plf"}, task, **settings)
    assert configs[0].network_steps == ADAPT_NETWORK_STEPS and configs[0].epochs == 0
    assert configs[0].network_learning_rate == ADAPT_NETWORK_LEARNING_RATE
    assert configs[0].seed == adapted["split_seed"] and configs[1] is None
    assert adapted["split_seed"] == plain["split_seed"] and adapted["auc"] != plain["auc"]
    assert ADAPT_NETWORK_LEARNING_RATE == 1e-4  # the default preset's rate since session 42
    faster = evaluate_method({"kind": "den", "variant": "adapt"}, task, **settings,
                             finetune_config={"network_learning_rate": 3e-4})
    assert configs[2].network_learning_rate == 3e-4 and configs[2].network_steps == ADAPT_NETWORK_STEPS
    assert faster["auc"] != adapted["auc"]
    with pytest.raises(ValueError, match=r"not \['epochs'\]"):
        evaluate_method({"kind": "den", "variant": "adapt"}, task, **settings, finetune_config={"epochs": 3})



def test_only_the_den_variant_is_fine_tuned():
    assert is_fine_tuned({"kind": "den"}) and is_fine_tuned({"kind": "den", "variant": "den"})
    assert not is_fine_tuned({"kind": "den", "variant": "no_finetune"})
    assert not is_fine_tuned({"kind": "den", "variant": "no_plf"})
    assert not is_fine_tuned({"kind": "den", "variant": "adapt"})  # its settings are adapt_config
    assert not is_fine_tuned({"kind": "direct", "model": "knn"})
    assert not is_fine_tuned({"kind": "meta", "model": "maml"})


def test_informative_features_rank_columns_by_how_well_they_alone_rank_the_labels():
    from den.train.finetune import informative_features

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    x = rng.normal(size=(200, 5))
    x[:, 1] += 2.0 * y  # strong, rising with the label
    x[:, 3] -= 1.0 * y  # weaker, falling: counts as much as rising would
    x[:, 2] = 7.0  # constant: never chosen before a column that ranks at all
    x[rng.random(200) < 0.3, 1] = np.nan  # missing values are left out, not ranked
    assert informative_features(x, y, 1).tolist() == [1]
    assert informative_features(x, y, 2).tolist() == [1, 3]
    assert informative_features(x, y, 9).tolist() == [0, 1, 2, 3, 4]
    # multiclass: a column that singles out one class of three is informative
    y3 = rng.integers(0, 3, 300)
    x3 = rng.normal(size=(300, 4))
    x3[:, 2] += 3.0 * (y3 == 1)
    assert informative_features(x3, y3, 1).tolist() == [2]


def test_task_model_with_features_reads_only_those_columns(small_binary_model):
    from den.errors import DENInputError
    from den.model.task_model import TaskModel

    task = make_task("cols", 300, 5, seed=4)
    support, query = support_query_split(task.y, 40, 0)
    xs, xq = task.x[support], task.x[query]
    subset = TaskModel(small_binary_model, xs, task.y[support], 2, x_unlabeled=xq, features=[3, 1])
    sliced = TaskModel(small_binary_model, xs[:, [1, 3]], task.y[support], 2, x_unlabeled=xq[:, [1, 3]])
    assert subset.features.tolist() == [1, 3] and subset.n_features == 2 and subset.n_inputs == 5
    np.testing.assert_allclose(subset.predict_proba(xq), sliced.predict_proba(xq[:, [1, 3]]), rtol=1e-6)
    with pytest.raises(DENInputError, match="5 columns"):
        subset.predict_proba(xq[:, [1, 3]])
    with pytest.raises(DENInputError, match="column indices in 0..4"):
        TaskModel(small_binary_model, xs, task.y[support], 2, features=[5])


def test_feature_counts_cross_validate_a_subset_of_informative_features(small_binary_model):
    """One strong feature among nine noise columns: cross-validation keeps the runs on the
    k most informative features (each run's own, ranked on its training folds), which rank
    the query rows better than DEN on all ten."""
    from den.train.finetune import (
        FinetuneConfig,
        cross_validated_runs,
        fine_tuned_models,
        informative_features,
        mean_proba,
        stratified_folds,
    )

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 600)
    x = rng.normal(size=(600, 10))
    x[:, 6] += 1.5 * y
    support, query = support_query_split(y, 50, 1)
    xs, ys, xq = x[support], y[support], x[query]
    base = dict(epochs=3, steps_per_epoch=3, learning_rate=0.05, seed=2, ensemble=3, early_stopping=True)
    every, _ = fine_tuned_models(small_binary_model, xs, ys, 2, FinetuneConfig(**base), x_unlabeled=xq)
    subsets = FinetuneConfig(**base, feature_counts=(2, 20))  # 20 > d: the same as all features
    chosen, _ = fine_tuned_models(small_binary_model, xs, ys, 2, subsets, x_unlabeled=xq)
    assert all(m.features is None for m in every)
    assert len(chosen) == 3 and all(m.features is not None and 6 in m.features and len(m.features) == 2
                                    for m in chosen)
    auc_every = score(y[query], mean_proba(every, xq))["auc"]
    auc_chosen = score(y[query], mean_proba(chosen, xq))["auc"]
    assert auc_chosen > 0.84 and auc_chosen > auc_every + 0.08, (auc_chosen, auc_every)  # 0.867, 0.752
    # run j reads the informative features of the folds it trains on
    folds = stratified_folds(ys, 3, np.random.default_rng(2))
    models = cross_validated_runs(small_binary_model, xs, ys, 2, FinetuneConfig(**base), xq,
                                  n_informative=2)[0]
    for j, model in enumerate(models):
        assert model.features.tolist() == informative_features(xs[folds != j], ys[folds != j], 2).tolist()
    with pytest.raises(ValueError, match="feature_counts.*early_stopping"):
        FinetuneConfig(feature_counts=(3,))
    with pytest.raises(ValueError, match="feature_counts must be >= 1"):
        FinetuneConfig(early_stopping=True, ensemble=2, feature_counts=(0,))


def test_choose_features_lets_a_subset_replace_all_features_only_by_a_clear_margin():
    from den.train.finetune import choose_features

    # (folds, candidates): all features, then two subsets
    held_out = np.array([[0.60, 0.55, 0.40], [0.50, 0.52, 0.45], [0.70, 0.62, 0.80], [0.55, 0.50, 0.50]])
    assert choose_features(held_out) == 2  # the lowest mean (0.5375 against 0.5475 and 0.5875)
    # subset 2 wins on the mean but not on every fold: one standard error rules it out, and
    # subset 1, lower on 3 of 4 folds by a steadier margin, stays allowed
    assert choose_features(held_out, 1.0) == 1
    assert choose_features(held_out, 10.0) == 0
    assert choose_features(held_out[:, :1], 1.0) == 0
    with pytest.raises(ValueError, match="folds >= 2"):
        choose_features(np.zeros((1, 3)))


def test_score_by_hand():
    """den.evaluate.score against values counted by hand (AUC = the share of positive-negative
    pairs ranked right): binary AUC of column 1, macro (unweighted) one-vs-rest AUC for
    multiclass, accuracy of the argmax; AUC is NaN where it is undefined (a query without some
    class), while accuracy is still given."""
    y = np.array([0, 0, 1, 1])
    p1 = np.array([0.1, 0.6, 0.4, 0.8])
    binary = score(y, np.c_[1 - p1, p1])
    # positives 0.4 and 0.8 against negatives 0.1 and 0.6: 3 of 4 pairs ranked right
    # (column 0 would give 1 of 4); argmax right on rows 0 and 3
    assert binary == {"auc": pytest.approx(0.75), "accuracy": pytest.approx(0.5)}

    y = np.array([0, 0, 0, 1, 1, 2])
    proba = np.array([[0.6, 0.3, 0.1], [0.5, 0.2, 0.3], [0.2, 0.5, 0.3],
                      [0.3, 0.4, 0.3], [0.1, 0.7, 0.2], [0.3, 0.3, 0.4]])
    # class 0 vs rest 7/9 pairs, class 1 vs rest 7/8, class 2 vs rest 5/5; the macro mean, not
    # weighted by prevalence ((3 * 7/9 + 2 * 7/8 + 1) / 6)
    multiclass = score(y, proba)
    assert multiclass["auc"] == pytest.approx((7 / 9 + 7 / 8 + 1) / 3)
    assert multiclass["accuracy"] == pytest.approx(5 / 6)  # row 2 (class 0) is taken for class 1

    missing = score(np.array([0, 0, 0, 1]), proba[:4])  # class 2 is not in the query
    assert np.isnan(missing["auc"]) and missing["accuracy"] == pytest.approx(3 / 4)
    one_class = score(np.array([1, 1, 1]), np.c_[1 - p1[:3], p1[:3]])
    assert np.isnan(one_class["auc"]) and one_class["accuracy"] == pytest.approx(1 / 3)


def test_a_methods_label_is_not_part_of_its_evaluation():
    """Renaming a table row (a method's label) reruns the tables, not the evaluations: the
    evaluate rule's params leave the label out, and two methods that differ only in it are
    one evaluation (score_index copies the second's scores)."""
    from den.workflow_config import evaluation_protocol, model_index, score_index

    config = {"seed": 1, "datasets": {name: {"source": "sklearn"} for name in ("a", "b")},
              "methods": {"lr": {"kind": "direct", "model": "logistic_regression", "label": "LR"},
                          "lr2": {"kind": "direct", "model": "logistic_regression", "label": "Other"}},
              "experiments": {"t": {"datasets": ["a", "b"], "methods": ["lr", "lr2"], "repeats": 1}}}
    spec = experiments(config)["t"]
    assert evaluation_protocol(config, spec, "lr") == evaluation_protocol(config, spec, "lr2")
    assert "label" not in evaluation_protocol(config, spec, "lr")["method"]
    renamed = {**config, "methods": {**config["methods"], "lr": {**config["methods"]["lr"], "label": "New"}}}
    assert evaluation_protocol(renamed, spec, "lr") == evaluation_protocol(config, spec, "lr")
    index = score_index(config, model_index(config))
    assert index["results/scores/t/base/lr2/a/0.json"] == "results/scores/t/base/lr/a/0.json"


def test_targets_the_config_does_not_plan_are_named_errors(tmp_path, monkeypatch):
    """A score, model or data file that no experiment makes (a typo in a target) stops the
    dry run with a line that names the part that is off, not a KeyError or a job that runs."""
    from den.workflow_config import dataset_spec, model_index, planned_model_file, planned_score_file

    config = {"seed": 1, "datasets": {name: {"source": "sklearn"} for name in ("a", "b", "p")},
              "methods": {"den": {"kind": "den"}, "lr": {"kind": "direct", "model": "logistic_regression"}},
              "experiments": {"t": {"datasets": ["a", "b"], "methods": ["den", "lr"], "pretrain_on": ["p"],
                                    "repeats": 2}}}
    specs = experiments(config)
    assert planned_score_file(specs, "t", "base", "lr", "a", "1")["repeats"] == 2
    for parts, message in ((("u", "base", "lr", "a", 0), "has no experiment 'u'"),
                           (("t", "order-3", "lr", "a", 0), r"no setting 'order-3'; its settings are \[.b"),
                           (("t", "base", "knn", "a", 0), "no method 'knn'"),
                           (("t", "base", "lr", "p", 0), r"no dataset 'p'; its datasets are \['a', 'b'\]"),
                           (("t", "base", "lr", "a", 2), r"no repeat 2; its repeats are \[0, 1\]")):
        with pytest.raises(ConfigError, match=message):
            planned_score_file(specs, *parts)
    models = model_index(config)
    planned_model_file(models, "results/models/t/base/plf/all.npz")
    with pytest.raises(ConfigError, match="^results/models/t/base/plf/a.npz: the config pre-trains no such "
                                          r"model .* include \['results/models/t/base/no_plf/all.npz'"):
        planned_model_file(models, "results/models/t/base/plf/a.npz")
    with pytest.raises(ConfigError, match="^results/data/c.npz: the config defines no dataset 'c'"):
        dataset_spec(config, "c")
    monkeypatch.setenv("HOME", str(tmp_path))
    config["datasets"]["f"] = {"source": "csv", "path": "~/f.csv", "target": "y"}
    assert dataset_spec(config, "f")["path"] == str(tmp_path / "f.csv")  # ~ is the user's home


def test_dataset_entries_and_comparisons_a_job_would_refuse_stop_the_plan(tmp_path):
    """Entries whose prepare job could only fail (a scikit-learn name it does not bundle, an
    idx set without its directory, a name the CNN zoo owns) and a compare_to whose splits
    differ are refused when the workflow is planned, naming the key."""
    from den.workflow_config import dataset_inputs

    config = {"seed": 1, "datasets": {name: {"source": "sklearn"} for name in ("iris", "wine", "p")},
              "image_datasets": {"digits": {"source": "sklearn"}},
              "methods": {"lr": {"kind": "direct", "model": "logistic_regression"}},
              "experiments": {"t": {"datasets": ["iris", "wine"], "methods": ["lr"], "pretrain_on": ["p"]}}}
    assert dataset_inputs(config, "iris") == [] and dataset_inputs(config, "digits", "image_datasets") == []
    with pytest.raises(ConfigError, match=r"datasets.p: scikit-learn bundles no 'p' here; choose a"):
        dataset_inputs(config, "p")
    config["image_datasets"]["digits"]["name"] = "digitz"
    with pytest.raises(ConfigError, match=r"image_datasets.digits: .* no 'digitz'.*\['digits'\]"):
        dataset_inputs(config, "digits", "image_datasets")
    config["image_datasets"]["mnist"] = {"source": "idx"}
    with pytest.raises(ConfigError, match="image_datasets.mnist: source 'idx' needs a path"):
        dataset_inputs(config, "mnist", "image_datasets")
    config["image_datasets"]["mnist"]["path"] = "images/mnist"
    with pytest.raises(ConfigError, match=r"image_datasets.mnist.path: .*train-images.* does not exist"):
        dataset_inputs(config, "mnist", "image_datasets")
    with pytest.raises(ConfigError, match=r"datasets: \['sim-x'\] start with 'sim-'"):
        experiments({**config, "datasets": {**config["datasets"], "sim-x": {"source": "sklearn"}}})
    other = {**config["experiments"]["t"], "n_support": 20}
    with pytest.raises(ConfigError, match=r"experiments.u.compare_to: 't' splits the data otherwise "
                                          r"\(n_support 20 here, 50 there\)"):
        experiments({**config, "experiments": {**config["experiments"], "u": {**other, "compare_to": "t"}}})
    assert experiments({**config, "experiments": {**config["experiments"],
                                                  "u": {**other, "n_support": 50, "compare_to": "t"}}})


def _bold_cells(rows: dict, dataset: str) -> list[tuple[str, bool]]:
    """(printed mean, bold) of each method cell of a LaTeX per-dataset table's row."""
    cells = rows[dataset].rstrip(" \\").split(" & ")[1:]
    return [(c.replace("\\textbf{", "").split(" (")[0].rstrip("}"), c.startswith("\\textbf")) for c in cells]


def test_bold_and_wins_follow_the_means_as_printed():
    """The best of a row is judged on the printed means: every cell printing the highest value
    is bold and no bold cell prints below another (pandas' round, used before, judged 51.225 as
    51.22 while it printed 51.23, and so bolded a lower number and counted a win it was not)."""
    rng = np.random.default_rng(5)
    datasets = [f"d{i}" for i in range(60)]
    values = rng.integers(1020, 1040, size=(3, 60, 2)) / 2000  # means of two end in 5 at the 3rd decimal
    scores = pd.DataFrame([{"dataset": d, "repeat": r, "method": m, "auc": values[k, i, r]}
                           for k, m in enumerate(["den", "rf", "lr"]) for i, d in enumerate(datasets)
                           for r in (0, 1)])
    # den's 51.225 prints 51.23 (pandas rounds it to 51.22, rf's value); its 51.575 prints 51.57
    # (pandas: 51.58, rf's value)
    cases = {"p1": {"den": (0.512, 0.5125), "rf": (0.5122, 0.5122), "lr": (0.4, 0.4)},
             "p2": {"den": (0.5155, 0.516), "rf": (0.5158, 0.5158), "lr": (0.4, 0.4)}}
    scores = pd.concat([scores, pd.DataFrame([{"dataset": d, "repeat": r, "method": m, "auc": v[r]}
                                              for d, case in cases.items() for m, v in case.items()
                                              for r in (0, 1)])])
    datasets += list(cases)
    per, summary = reference_differences(scores, "auc", "den", ["rf", "lr"])
    tex = latex_dataset_table(dataset_summary(scores, "auc"), ["den", "rf", "lr"], {}, "cap", "t",
                              reference=(per, summary))
    rows = {line.split(" & ")[0]: line for line in tex.splitlines() if " & " in line}
    beats = 0
    for d in datasets:
        cells = _bold_cells(rows, d)[:3]
        top = max(float(text) for text, _ in cells)
        assert [bold for _, bold in cells] == [float(text) == top for text, _ in cells], rows[d]
        beats += float(cells[0][0]) > max(float(cells[1][0]), float(cells[2][0]))
        assert per.at[d, "beats"] == (float(cells[0][0]) > max(float(cells[1][0]), float(cells[2][0])))
    assert summary["beats"] == beats and f"beats all on {beats} of 62" in tex
    assert _bold_cells(rows, "p1")[:3] == [("51.23", True), ("51.22", False), ("40.00", False)]
    assert _bold_cells(rows, "p2")[:3] == [("51.57", False), ("51.58", True), ("40.00", False)]
    md = markdown_dataset_table(dataset_summary(scores, "auc"), ["den", "rf", "lr"], {}).splitlines()
    for line in md[2:-2]:
        cells = [c.strip() for c in line.strip("|").split("|")][1:]
        printed = [float(c.strip("*").split(" (")[0]) for c in cells]
        assert [c.startswith("**") for c in cells] == [p == max(printed) for p in printed], line


def test_means_that_print_alike_are_both_bold_in_the_mean_rows_and_method_tables():
    """77.5 and 77.49999999999999 (the same four AUCs summed in another order) print alike and
    are both the best: both bold (only the first was)."""
    scores = pd.DataFrame({"dataset": ["a", "a", "b", "b"] * 2, "repeat": [0, 1] * 4,
                           "method": ["den"] * 4 + ["lr"] * 4,
                           "auc": [0.71, 0.83, 0.94, 0.62, 0.83, 0.62, 0.94, 0.71]})
    summary = method_summary(scores, "auc", ["den", "lr"])
    assert summary.loc["den", "mean"] != summary.loc["lr", "mean"]  # the float noise this is about
    tex = latex_method_table(summary, "auc", {}, "cap", "t")
    assert "den & \\textbf{77.50}" in tex and "lr & \\textbf{77.50}" in tex
    per_dataset = dataset_summary(scores.assign(dataset="a"), "auc")
    rows = {line.split(" & ")[0]: line for line in
            latex_dataset_table(per_dataset, ["den", "lr"], {}, "cap", "t").splitlines() if " & " in line}
    assert rows["Mean"] == "Mean & \\textbf{77.50} & \\textbf{77.50} \\\\"
    md = markdown_dataset_table(per_dataset, ["den", "lr"], {}).splitlines()
    assert md[-2] == "| Mean | **77.50** | **77.50** |"


def test_a_difference_that_prints_as_zero_has_no_minus_sign_and_labels_keep_markdown_cells():
    scores = pd.DataFrame({"dataset": ["a", "a"] * 2, "repeat": [0, 1] * 2,
                           "method": ["den"] * 2 + ["rf"] * 2, "auc": [0.7, 0.1 + 0.2, 0.7, 0.3]})
    scores.loc[1, "auc"], scores.loc[3, "auc"] = 0.3, 0.1 + 0.2  # now -5.6e-17
    per, summary = reference_differences(scores, "auc", "den", ["rf"])
    assert per.at["a", "diff"] < 0
    md = markdown_dataset_table(dataset_summary(scores, "auc"), ["den", "rf"], {"den": "DEN | PLF"},
                                (per, summary)).splitlines()
    assert md[0] == "| Dataset | DEN \\| PLF | rf | DEN \\| PLF - rf |"
    assert md[2].endswith("| +0.00 (0.00) |") and "-0.00" not in "\n".join(md)
    assert all(line.replace("\\|", "").count("|") == 5 for line in md)


def test_a_sweep_over_flags_texts_or_small_numbers_makes_its_table_and_figure():
    """Swept values that are not plain numbers (true/false, null, 1e-05, -0.5) are kept, as
    labels where not numbers; the table and figure jobs failed on them after every
    evaluation had run."""
    from den.report.tables import latex_sweep_table, plot_sweep, sweep_summary, sweep_values

    def scores(settings):
        return pd.DataFrame({"setting": [s for s in settings for _ in range(2)], "dataset": "a",
                             "repeat": [0, 1] * len(settings), "method": "den",
                             "auc": np.linspace(0.6, 0.9, 2 * len(settings))})

    flags = scores(["gated_pooling-False", "gated_pooling-True"])
    assert sweep_values(flags)["sweep_value"].tolist() == ["False", "False", "True", "True"]
    tex = latex_sweep_table(flags, "auc", ["den"], "cap", "t")
    assert "\nFalse & 65.00 (5.00) \\\\" in tex and "\nTrue & \\textbf{85.00} (5.00) \\\\" in tex
    assert sweep_summary(flags, "auc").index.get_level_values(0).tolist() == ["False", "True"]
    plot_sweep(flags, "auc", ["den"], "title")
    small = scores(["learning_rate-1e-05", "learning_rate-0.001"])
    assert sweep_values(small)["sweep_key"].unique().tolist() == ["learning_rate"]
    assert sweep_values(small)["sweep_value"].tolist() == [1e-05, 1e-05, 0.001, 0.001]
    assert "\n1e-05 & 65.00" in latex_sweep_table(small, "auc", ["den"], "cap", "t")
    assert sweep_values(scores(["shift--0.5"]))["sweep_value"].tolist() == [-0.5, -0.5]
    nulls = scores(["max_tuples-None", "max_tuples-625"])
    assert sweep_values(nulls)["sweep_value"].tolist() == ["None", "None", "625", "625"]
    assert "\nNone & 65.00" in latex_sweep_table(nulls, "auc", ["den"], "cap", "t")


def test_unscored_splits_are_named_under_the_table_and_not_counted_as_repeats():
    from den.report.tables import note_unscored

    scores = pd.DataFrame({"dataset": ["a"] * 3 + ["b"] * 3, "repeat": [0, 1, 2] * 2, "method": "den",
                           "auc": [0.8, np.nan, np.nan, 0.7, 0.6, 0.9]})
    assert describe_run(scores, latex=False) == "2 datasets (a, b) x 3 repeats"
    assert describe_run(scores, latex=False, metric="auc") == "2 datasets (a, b) x 1-3 repeats"
    tex = latex_dataset_table(dataset_summary(scores, "auc"), ["den"], {}, "cap", "t")
    noted = note_unscored(tex, scores, "auc")
    assert "2 of 6 evaluations have no auc (a repeats 1, 2) and are left out of every mean" in noted
    assert noted.index("have no auc") < noted.index("\\end{center}")
    assert note_unscored(tex, scores.fillna(0.5), "auc") == tex


def test_compare_to_a_sweep_is_refused():
    """A sweep scores each split once per swept value, so an improvement over it (or of it)
    mixed every value into one number, counting each split once per value."""
    config = {"datasets": {name: {"source": "sklearn"} for name in ("a", "p")},
              "methods": {"den": {"kind": "den"}},
              "experiments": {"sw": {"datasets": ["a"], "methods": ["den"], "pretrain_on": ["p"],
                                     "sweep": {"order": [1, 2, 3]}, "per_dataset": False},
                              "t": {"datasets": ["a"], "methods": ["den"], "pretrain_on": ["p"],
                                    "compare_to": "sw"}}}
    with pytest.raises(ConfigError, match="experiments.t.compare_to: 'sw' sweeps order, so its splits"):
        experiments(config)
    config["experiments"]["sw"]["compare_to"], config["experiments"]["t"]["compare_to"] = "t", None
    with pytest.raises(ConfigError, match="experiments.sw.compare_to: 'sw' sweeps order"):
        experiments(config)
    del config["experiments"]["sw"]["compare_to"]
    assert set(experiments(config)) == {"sw", "t"}


def test_a_sweep_value_that_cannot_name_a_folder_or_repeats_is_refused_at_planning():
    """A list value ("h_units-[16, 16]") matched no rule's wildcard, so the dry run failed with
    a missing-input error naming no key; a repeated value ran the same pre-training twice."""
    config = {"datasets": {name: {"source": "sklearn"} for name in ("a", "p")},
              "methods": {"den": {"kind": "den"}},
              "experiments": {"sw": {"datasets": ["a"], "methods": ["den"], "pretrain_on": ["p"],
                                     "per_dataset": False}}}

    def swept(sweep):
        return {**config, "experiments": {"sw": {**config["experiments"]["sw"], "sweep": sweep}}}

    with pytest.raises(ConfigError, match=r"experiments.sw.sweep.h_units: the value \[16, 16\] cannot name "
                                          r"its setting's folder .*model: \{h_units: \[16, 16\]\}"):
        experiments(swept({"h_units": [[16, 16], [32]]}))
    with pytest.raises(ConfigError, match=r"experiments.sw.sweep.order: \[1, 1\] repeats a value"):
        experiments(swept({"order": [1, 1]}))
    for sweep in ({"gated_pooling": [False, True]}, {"max_tuples": [None, 625]}, {"order": [1, 3]}):
        assert experiments(swept(sweep))["sw"]["sweep"] == sweep
    # a value after a repeated one is named as itself, not as the value beside it
    with pytest.raises(ConfigError, match=r"the value \[32\] cannot name its setting's folder "
                                          r"\('h_units-\[32\]'"):
        experiments(swept({"h_units": [3, 3, [32]]}))
