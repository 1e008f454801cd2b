"""Do generated pre-training tasks help? The development-split measurement behind
config/README.md's "Generated pre-training tasks".

For each half of the development split (config/local-copies-dev.yaml) it pre-trains DEN on
the other half's real sets plus the 40 generated tasks of config/local-copies.yaml (the
benchmark's model and pre-training settings), then scores DEN w/o fine-tuning and DEN (the
benchmark's fine-tuning, early stopping included) on the half's sets: 3 repeats, the
benchmark's support/query splits, query capped at 3,000 rows. The comparison without the
generated tasks comes from early_stopping_rules.py's records (epoch 0 and the
lowest-held-out-loss epoch) on the same splits.

    python docs/benchmarks/generated_tasks_dev.py pretrain dev_a MODELS &
    python docs/benchmarks/generated_tasks_dev.py pretrain dev_b MODELS
    python docs/benchmarks/generated_tasks_dev.py evaluate dev_a MODELS OUT &
    python docs/benchmarks/generated_tasks_dev.py evaluate dev_b MODELS OUT
    python docs/benchmarks/generated_tasks_dev.py compare OUT RULES_OUT

(``pretrain`` needs results/data/ of the local-copies benchmark; RULES_OUT is the folder of
``early_stopping_rules.py collect``.)
"""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow"))

from early_stopping_rules import development_splits  # noqa: E402  (this folder: the same splits)

from den.data.synthetic import make_tasks  # noqa: E402
from den.data.tasks import Task  # noqa: E402
from den.evaluate import score  # noqa: E402
from den.experiments import load_model, pretrain_model  # noqa: E402
from den.train.finetune import choose_epoch, fine_tuned_models, mean_proba  # noqa: E402


def _configs():
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    local = yaml.safe_load((ROOT / "config" / "local-copies.yaml").read_text())
    dev = yaml.safe_load((ROOT / "config" / "local-copies-dev.yaml").read_text())["experiments"]
    return base, local, dev


def pretrain(experiment: str, models: Path) -> None:
    base, local, dev = _configs()
    generated = local["generated_tasks"]
    params = {**base.get("model", {}), "head": "binary", "use_calibration": True, "seed": base["seed"]}
    tasks = [Task.load(ROOT / "results" / "data" / f"{d}.npz") for d in dev[experiment]["pretrain_on"]]
    tasks += make_tasks(generated["count"], seed=generated["seed"], rows=tuple(generated["rows"]),
                        features=tuple(generated["features"]))
    models.mkdir(parents=True, exist_ok=True)
    model = pretrain_model(tasks, params, {**base["pretrain"], **local["pretrain"]})
    model.save(models / f"{experiment}.npz")


def evaluate(experiment: str, models: Path, out: Path) -> None:
    model = load_model(models / f"{experiment}.npz", {"kind": "den"})
    for path, task, finetune, support, query, rows in development_splits(experiment, out, ".json"):
        result = {}
        for name, config in (("no_ft", None), ("den", finetune)):
            task_models, _ = fine_tuned_models(model, task.x[support], task.y[support], task.n_classes,
                                               config, x_unlabeled=task.x[query])
            result[name] = score(task.y[rows], mean_proba(task_models, task.x[rows]))["auc"]
            result[name + "_epochs"] = task_models[0].finetune_epochs
        path.write_text(json.dumps(result))


def compare(out: Path, rules_out: Path) -> pd.DataFrame:
    """Query AUC per set (mean over repeats) without and with the generated tasks."""
    from sklearn.metrics import roc_auc_score

    rows = []
    for path in sorted(out.glob("dev_*.json")):
        dataset, repeat = path.stem.split("_", 2)[2].rsplit("_", 1)
        new = json.loads(path.read_text())
        old = np.load(rules_out / f"{path.stem}.npz")
        ensemble = old["qp"].mean(axis=1)
        rows.append({"dataset": dataset,
                     "DEN w/o fine-tuning": roc_auc_score(old["yq"], ensemble[0]),
                     "DEN": roc_auc_score(old["yq"], ensemble[choose_epoch(old["held_out"])]),
                     "DEN w/o fine-tuning, + generated": new["no_ft"], "DEN, + generated": new["den"]})
    per_set = pd.DataFrame(rows).groupby("dataset").mean()
    per_set.loc["Mean"] = per_set.mean()
    return per_set


if __name__ == "__main__":
    command, args = sys.argv[1:2], sys.argv[2:]
    if command == ["pretrain"] and len(args) == 2:
        pretrain(args[0], Path(args[1]))
    elif command == ["evaluate"] and len(args) == 3:
        evaluate(args[0], Path(args[1]), Path(args[2]))
    elif command == ["compare"] and len(args) == 2:
        print(compare(Path(args[0]), Path(args[1])).round(3).to_string())
    else:
        sys.exit(__doc__)
