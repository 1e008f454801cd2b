"""How early stopping should choose the fine-tuning epoch, on the development split and on the
benchmark's own splits.

For every set of the local-copies development split (config/local-copies-dev.yaml), repeat
and epoch 0..10 it records the query probabilities of the 5 cross-validated fine-tuning runs
(``den.train.finetune.cross_validated_runs``, the benchmark's fine-tuning settings) and each
support row's probability from the run that did not train on it; then it scores selection
rules by the query AUC of the epoch each rule picks. Query rows are capped at 3,000 (the
first of the benchmark's query rows) to keep the analysis near 25 minutes on 2 cores.

    snakemake --cores 2 --configfile config/local-copies.yaml config/local-copies-dev.yaml \\
        --config data_dir=../shared/datasets/tabular -- \\
        results/models/dev_a/base/plf/all.npz results/models/dev_b/base/plf/all.npz
    python docs/benchmarks/early_stopping_rules.py collect dev_a OUT &
    python docs/benchmarks/early_stopping_rules.py collect dev_b OUT
    python docs/benchmarks/early_stopping_rules.py summarise OUT
    # repeated cross-validation: a second fold split of the same splits
    python docs/benchmarks/early_stopping_rules.py collect dev_a OUT2 --seed-offset 1000 &
    python docs/benchmarks/early_stopping_rules.py collect dev_b OUT2 --seed-offset 1000
    # fine-tuning with a learned output map (finetune.output_scaling)
    python docs/benchmarks/early_stopping_rules.py collect dev_a OUT3 --output-scaling &
    python docs/benchmarks/early_stopping_rules.py collect dev_b OUT3 --output-scaling
    python docs/benchmarks/early_stopping_rules.py summarise OUT --second OUT2 --scaled OUT3

The same records of the benchmark table ``local`` itself (leave-one-dataset-out: each set with
the model pre-trained on the other 15, results/models/local/base/plf/<set>.npz; about 15
minutes as two processes):

    python docs/benchmarks/early_stopping_rules.py collect local LOCAL --datasets adult churn \
        cleve irish phoneme australian breast_w credit_g &
    python docs/benchmarks/early_stopping_rules.py collect local LOCAL --datasets heart_statlog \
        fri_c3_250_10 fri_c2_250_25 cpu_act ada_prior sylvine default_credit_card wholesale_customers
    python docs/benchmarks/early_stopping_rules.py summarise LOCAL

The "out-of-fold AUC" rule scores support rows with the model of the run that did not train
on them, but that model's embedding still includes them (it is built from all support rows),
which flatters that rule a little.
"""

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow"))

from den.data.tasks import Task  # noqa: E402
from den.evaluate import support_query_split  # noqa: E402
from den.experiments import load_model, split_seed  # noqa: E402
from den.train.finetune import (  # noqa: E402
    FinetuneConfig,
    choose_epoch,
    cross_validated_runs,
    restore_epoch,
    stratified_folds,
)

QUERY_ROWS = 3000


def development_splits(experiment: str, out: Path, suffix: str, datasets: list[str] | None = None):
    """The benchmark's (dataset, repeat) splits of one development half (or of the benchmark
    table ``local`` itself), optionally only ``datasets``, not yet recorded under ``out``:
    yields (record path, task, fine-tuning settings with the split's seed, support rows, query
    rows, the first ``QUERY_ROWS`` query rows)."""
    config = {**yaml.safe_load((ROOT / "config" / "config.yaml").read_text()),
              **yaml.safe_load((ROOT / "config" / "local-copies.yaml").read_text())}
    specs = config["experiments"] if experiment == "local" else \
        yaml.safe_load((ROOT / "config" / "local-copies-dev.yaml").read_text())["experiments"]
    spec = specs[experiment]
    settings = {key: value for key, value in config["finetune"].items() if key != "early_stopping_tolerance"}
    out.mkdir(parents=True, exist_ok=True)
    for repeat in range(spec["repeats"]):
        for dataset in spec["datasets"]:
            if datasets and dataset not in datasets:
                continue
            path = out / f"{experiment}_{dataset}_{repeat}{suffix}"
            if path.exists():
                continue
            start = time.time()
            task = Task.load(ROOT / "results" / "data" / f"{dataset}.npz")
            seed = split_seed(config["seed"], task.name, repeat)
            support, query = support_query_split(task.y, spec["n_support"], seed, spec["max_query"])
            yield path, task, FinetuneConfig(**{**settings, "seed": seed}), support, query, query[:QUERY_ROWS]
            print(f"{dataset} repeat {repeat}: {time.time() - start:.0f} s", flush=True)


def collect(experiment: str, out: Path, seed_offset: int = 0, output_scaling: bool = False,
            datasets: list[str] | None = None) -> None:
    """Record the splits of ``experiment`` under ``out``; ``seed_offset`` shifts the
    fine-tuning seed (fold split and halvings) to record a second, independent fold split;
    ``output_scaling`` fine-tunes with ``FinetuneConfig.output_scaling``."""
    model_dir = ROOT / "results" / "models" / experiment / "base" / "plf"
    model = None if experiment == "local" else load_model(model_dir / "all.npz", {"kind": "den"})
    for path, task, finetune, support, query, rows in development_splits(experiment, out, ".npz", datasets):
        if experiment == "local":  # leave-one-dataset-out: the model pre-trained without this set
            model = load_model(model_dir / f"{task.name}.npz", {"kind": "den"})
        finetune = dataclasses.replace(finetune, seed=finetune.seed + seed_offset,
                                       output_scaling=output_scaling)
        xs, ys = task.x[support], task.y[support]
        models, _, held_out, snapshots = cross_validated_runs(model, xs, ys, task.n_classes, finetune,
                                                              x_unlabeled=task.x[query])
        folds = stratified_folds(np.asarray(ys), finetune.ensemble, np.random.default_rng(finetune.seed))
        epochs = held_out.shape[1]
        query_proba = np.zeros((epochs, len(models), len(rows)), np.float32)
        out_of_fold = np.zeros((epochs, len(ys)), np.float32)
        for epoch in range(epochs):
            restore_epoch(models, snapshots, epoch)
            for j, task_model in enumerate(models):
                if epoch == 0 and j > 0:  # the runs start from the same PLFs: DEN keeps run 0
                    query_proba[epoch, j] = query_proba[epoch, 0]
                else:
                    query_proba[epoch, j] = task_model.predict_proba(task.x[rows])[:, 1]
                out_of_fold[epoch, folds == j] = task_model.predict_proba(xs[folds == j])[:, 1]
        np.savez(path, held_out=held_out, qp=query_proba, oof=out_of_fold, yq=task.y[rows], ys=ys)


def _platt_scaled_loss(proba: np.ndarray, y: np.ndarray) -> float:
    """Log loss of (n,) probabilities after the best logistic map a * logit + b (fitted on the
    same rows): how well they rank, whatever their scale."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss

    logit = np.log(np.clip(proba, 1e-6, 1 - 1e-6) / np.clip(1 - proba, 1e-6, 1))[:, None]
    fitted = LogisticRegression(C=1e6).fit(logit, y)
    return float(log_loss(y, fitted.predict_proba(logit)[:, 1]))


def summarise(out: Path, second: Path | None = None, scaled: Path | None = None) -> pd.DataFrame:
    """Mean query AUC per set (over repeats) of each rule, and the mean over sets. With
    ``second`` (records of the same splits with another fold split, ``collect`` with a seed
    offset) also repeated cross-validation: the epoch of the lowest held-out loss over both
    splits' folds, both splits' runs averaged; with ``scaled`` (``collect`` with output
    scaling) the lowest-held-out-loss epoch of fine-tuning with a learned output map."""
    from sklearn.metrics import roc_auc_score

    rows = []
    for path in sorted([*out.glob("dev_*.npz"), *out.glob("local_*.npz")]):
        dataset, repeat = path.stem.removeprefix("local_").removeprefix("dev_a_").removeprefix(
            "dev_b_").rsplit("_", 1)
        data = np.load(path)
        held_out, ensemble = data["held_out"], data["qp"].mean(axis=1)

        epochs = range(held_out.shape[1])
        query_auc = [roc_auc_score(data["yq"], ensemble[e]) for e in epochs]
        oof_auc = [roc_auc_score(data["ys"], data["oof"][e]) for e in epochs]
        platt_loss = [_platt_scaled_loss(data["oof"][e], data["ys"]) for e in epochs]
        chosen = choose_epoch(held_out)
        with_pretrained = 0.8 * ensemble[chosen] + 0.2 * ensemble[0]
        own_epochs = np.argmin(held_out, axis=1)  # each run stopped at its own fold's best epoch
        own_stopping = data["qp"][own_epochs, np.arange(len(own_epochs))].mean(axis=0)
        rows.append({"dataset": dataset, "repeat": int(repeat),
                     "pre-trained (epoch 0)": query_auc[0],
                     "lowest held-out loss": query_auc[chosen],
                     "one-standard-error rule": query_auc[choose_epoch(held_out, 1.0)],
                     "highest out-of-fold AUC": query_auc[int(np.argmax(oof_auc))],
                     "lowest Platt-scaled out-of-fold loss": query_auc[int(np.argmin(platt_loss))],
                     "0.8 lowest held-out loss + 0.2 pre-trained": roc_auc_score(data["yq"], with_pretrained),
                     "0.9 lowest held-out loss + 0.1 pre-trained": roc_auc_score(
                         data["yq"], 0.9 * ensemble[chosen] + 0.1 * ensemble[0]),
                     "each run at its own fold's lowest loss": roc_auc_score(data["yq"], own_stopping),
                     "all epochs averaged": roc_auc_score(data["yq"], ensemble.mean(axis=0)),
                     "best epoch in hindsight": max(query_auc)})
        if second is not None:
            other = np.load(second / path.name)
            both = choose_epoch(np.vstack([held_out, other["held_out"]]))
            rows[-1]["lowest held-out loss, two fold splits"] = roc_auc_score(
                data["yq"], ensemble[both] + other["qp"][both].mean(axis=0))
        if scaled is not None:
            other = np.load(scaled / path.name)
            rows[-1]["output scaling, lowest held-out loss"] = roc_auc_score(
                data["yq"], other["qp"][choose_epoch(other["held_out"])].mean(axis=0))
    per_set = pd.DataFrame(rows).groupby("dataset").mean().drop(columns="repeat")
    per_set.loc["Mean"] = per_set.mean()
    return per_set


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("collect", help="record one development half's splits (or table local's)")
    recording.add_argument("experiment", choices=["dev_a", "dev_b", "local"])
    recording.add_argument("--datasets", nargs="+", help="only these sets")
    recording.add_argument("out", type=Path)
    recording.add_argument("--seed-offset", type=int, default=0, help="shift the fine-tuning seed")
    recording.add_argument("--output-scaling", action="store_true", help="fine-tune with output scaling")
    summary = commands.add_parser("summarise", help="mean query AUC of each rule per set")
    summary.add_argument("out", type=Path)
    summary.add_argument("--second", type=Path, help="records of a second fold split")
    summary.add_argument("--scaled", type=Path, help="records of fine-tuning with output scaling")
    args = parser.parse_args(argv)
    if args.command == "collect":
        collect(args.experiment, args.out, args.seed_offset, args.output_scaling, args.datasets)
    else:
        print(summarise(args.out, args.second, args.scaled).round(3).to_string())


if __name__ == "__main__":
    main(sys.argv[1:])
