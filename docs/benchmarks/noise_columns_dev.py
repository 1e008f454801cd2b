"""Session 24's diagnostic: how fast DEN and the classical methods lose AUC when a task gains
irrelevant columns (docs/benchmarks/corpus-dev.md, section "Session 24"). It chooses no
setting; the model card quotes it.

Per split of the held-back binary sets (``corpus_dev.py``'s folds, 3 repeats, 50 support rows,
seeded as ``corpus_dev.py``'s), k columns of independent standard normal noise (drawn per split
from the split's seed, the same for every method) are appended to every row, for each k in
``--noise`` (default 0, 20, 100). The default preset (network adaptation; ``blend_dev.py``'s
models, pre-trained with the shipped settings on each fold's training part), the random forest,
small-data gradient boosting and logistic regression with C by CV are fitted on the same
support rows; each record holds one split and one k, with every method's query AUC:

    python docs/benchmarks/noise_columns_dev.py F RECORDS.jsonl [--noise 0,20,100] [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402


def main(argv=None) -> None:
    from den.evaluate import score
    from den.train.config import adapt_config
    from den.train.finetune import fit_task

    parser = corpus_dev.dev_parser(__doc__.splitlines()[0])
    parser.add_argument("--noise", default="0,20,100")
    args = parser.parse_args(argv)
    model = corpus_dev.fold_model(args.out, args.fold)
    done = corpus_dev.recorded(args.records, ("dataset", "repeat", "noise"))
    with args.records.open("a") as handle:
        for task, repeat, seed, support, query in corpus_dev.held_back_splits(args):
            rows = np.concatenate([support, query])
            for k in map(int, args.noise.split(",")):
                if (task.name, repeat, k) in done:
                    continue
                started = time.time()
                noise = np.random.default_rng([seed, k]).standard_normal((len(rows), k))
                x = np.hstack([task.x[rows], noise])
                x_support, x_query = x[:len(support)], x[len(support):]
                y_support, y_query = task.y[support], task.y[query]
                record = {"dataset": task.name, "repeat": repeat, "noise": k}
                fitted = fit_task(model, x_support, y_support, task.n_classes,
                                  adapt_config(seed=seed, one_vs_rest=False), x_unlabeled=x_query)
                record["den"] = score(y_query, fitted.proba(x_query))["auc"]
                record.update(corpus_dev.classical_scores(x_support, y_support, x_query, y_query,
                                                          task.n_classes, seed))
                corpus_dev.write_record(handle, record, started)

if __name__ == "__main__":
    main()
