"""Session 21's validation of a "DEN + random forest" blend on the held-back corpus sets
(``corpus_dev.py``'s folds; docs/benchmarks/corpus-dev.md, section "Session 21").

Per split, DEN with the default preset (network adaptation on two-class tasks, none on more)
and the 500-tree random forest are fitted once on the same 50 support rows; the record holds
the query AUC (binary) or accuracy (multiclass) of each, of their probabilities averaged with
weights 0.5 (the one candidate, fixed before the run), 0.25 and 0.75 on DEN, and (binary) of
their ranks averaged. The models are ``corpus_dev.py``'s, pre-trained with the shipped settings:

    python docs/benchmarks/corpus_dev.py --fold F pretrain ref_fF --steps 6000 --binarized 4 \\
        --hold-mc-validation --model '{"order": 3, "use_calibration": false, "local_bandwidths":
        [0.05, 0.1, 0.2, 0.4], "max_tuples": 625, "min_tuples": 625, "gated_pooling": true,
        "tuple_relevance": true, "balanced_relevance": true}'
    python docs/benchmarks/blend_dev.py F binary|multiclass RECORDS.jsonl [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402


def main(argv=None) -> None:
    from scipy.stats import rankdata

    from den.baselines.direct import direct_predict_proba
    from den.evaluate import score
    from den.train.config import adapt_config
    from den.train.finetune import fit_task

    args = corpus_dev.dev_parser(__doc__.splitlines()[0],
                                 ("tasks", {"choices": ("binary", "multiclass")})).parse_args(argv)
    multiclass = args.tasks == "multiclass"
    model = corpus_dev.fold_model(args.out, args.fold)
    sets = corpus_dev.multiclass_split(args.data)[0] if multiclass else corpus_dev.split(args.data)[0]
    metric = "accuracy" if multiclass else "auc"
    with args.records.open("w") as handle:
        for task, repeat, seed, support, query in corpus_dev.held_back_splits(args, sets):
            started = time.time()
            fitted = fit_task(model, task.x[support], task.y[support], task.n_classes,
                              adapt_config(seed=seed, one_vs_rest=False), x_unlabeled=task.x[query])
            den = fitted.proba(task.x[query])
            forest = direct_predict_proba("random_forest", task.x[support], task.y[support],
                                          task.x[query], task.n_classes, seed=seed)
            y = task.y[query]
            record = {"dataset": task.name, "repeat": repeat}
            for label, proba in [("den", den), ("rf", forest), ("blend50", 0.5 * den + 0.5 * forest),
                                 ("blend25", 0.25 * den + 0.75 * forest),
                                 ("blend75", 0.75 * den + 0.25 * forest)]:
                record[label] = score(y, proba)[metric]
            if not multiclass:
                ranks = (rankdata(den[:, 1]) + rankdata(forest[:, 1])) / (2 * len(y))
                record["rank50"] = score(y, np.stack([1 - ranks, ranks], 1))["auc"]
            corpus_dev.write_record(handle, record, started)

if __name__ == "__main__":
    main()
