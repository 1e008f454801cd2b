"""How early stopping should choose the fine-tuning epoch: a development-split analysis.

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

The "out-of-fold AUC" rule scores support rows with the model of the run that did not train
on them, but that model's embedding still includes them (it is built from all support rows),
which flatters that rule a little.
"""

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


def development_splits(experiment: str, out: Path, suffix: str):
    """The benchmark's (dataset, repeat) splits of one development half not yet recorded under
    ``out``: yields (record path, task, fine-tuning settings with the split's seed, support
    rows, query rows, the first ``QUERY_ROWS`` query rows)."""
    config = {**yaml.safe_load((ROOT / "config" / "config.yaml").read_text()),
              **yaml.safe_load((ROOT / "config" / "local-copies.yaml").read_text())}
    spec = yaml.safe_load((ROOT / "config" / "local-copies-dev.yaml").read_text())["experiments"][experiment]
    settings = {key: value for key, value in config["finetune"].items() if key != "early_stopping_tolerance"}
    out.mkdir(parents=True, exist_ok=True)
    for repeat in range(spec["repeats"]):
        for dataset in spec["datasets"]:
            path = out / f"{experiment}_{dataset}_{repeat}{suffix}"
            if path.exists():
                continue
            start = time.time()
            task = Task.load(ROOT / "results" / "data" / f"{dataset}.npz")
            seed = split_seed(config["seed"], task.name, repeat)
            support, query = support_query_split(task.y, spec["n_support"], seed, spec["max_query"])
            yield path, task, FinetuneConfig(**{**settings, "seed": seed}), support, query, query[:QUERY_ROWS]
            print(f"{dataset} repeat {repeat}: {time.time() - start:.0f} s", flush=True)


def collect(experiment: str, out: Path) -> None:
    model = load_model(ROOT / "results" / "models" / experiment / "base" / "plf" / "all.npz", {"kind": "den"})
    for path, task, finetune, support, query, rows in development_splits(experiment, out, ".npz"):
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
                if epoch == 0 and j > 0:  # every run starts from the same pre-trained PLFs
                    query_proba[epoch, j] = query_proba[epoch, 0]
                else:
                    query_proba[epoch, j] = task_model.predict_proba(task.x[rows])[:, 1]
                out_of_fold[epoch, folds == j] = task_model.predict_proba(xs[folds == j])[:, 1]
        np.savez(path, held_out=held_out, qp=query_proba, oof=out_of_fold, yq=task.y[rows], ys=ys)


def summarise(out: Path) -> pd.DataFrame:
    """Mean query AUC per set (over repeats) of each rule, and the mean over sets."""
    from sklearn.metrics import roc_auc_score

    rows = []
    for path in sorted(out.glob("dev_*.npz")):
        dataset, repeat = path.stem.split("_", 2)[2].rsplit("_", 1)
        data = np.load(path)
        held_out, ensemble = data["held_out"], data["qp"].mean(axis=1)

        epochs = range(held_out.shape[1])
        query_auc = [roc_auc_score(data["yq"], ensemble[e]) for e in epochs]
        oof_auc = [roc_auc_score(data["ys"], data["oof"][e]) for e in epochs]
        rows.append({"dataset": dataset, "repeat": int(repeat),
                     "pre-trained (epoch 0)": query_auc[0],
                     "lowest held-out loss": query_auc[choose_epoch(held_out)],
                     "one-standard-error rule": query_auc[choose_epoch(held_out, 1.0)],
                     "highest out-of-fold AUC": query_auc[int(np.argmax(oof_auc))],
                     "best epoch in hindsight": max(query_auc)})
    per_set = pd.DataFrame(rows).groupby("dataset").mean().drop(columns="repeat")
    per_set.loc["Mean"] = per_set.mean()
    return per_set


if __name__ == "__main__":
    if sys.argv[1:2] == ["collect"] and len(sys.argv) == 4:
        collect(sys.argv[2], Path(sys.argv[3]))
    elif sys.argv[1:2] == ["summarise"] and len(sys.argv) == 3:
        print(summarise(Path(sys.argv[2])).round(3).to_string())
    else:
        sys.exit(__doc__)
