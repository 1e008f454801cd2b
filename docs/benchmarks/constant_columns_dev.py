"""Session 24's check: does DEN lose AUC on columns that are constant on the support rows, and
would leaving them out at fit time cost anything? (docs/benchmarks/corpus-dev.md, section
"Session 24"). It chooses no setting unless the rule written there before the run holds.

Per split of the held-back binary sets (``corpus_dev.py``'s folds, 3 repeats, 50 support rows,
seeded as ``corpus_dev.py``'s), the default preset (network adaptation; ``blend_dev.py``'s
models, pre-trained with the shipped settings on each fold's training part) is fitted three
times: on the task as it is (``den``), with 5 appended columns that are 0 everywhere
(``den_const5``), and without the columns that are constant on the support rows
(``den_drop``, the same as ``den`` where there are none). Each record holds the three query
AUCs and ``n_const``, the number of support-constant columns:

    python docs/benchmarks/constant_columns_dev.py F RECORDS.jsonl [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402

CONSTANT_COLUMNS = 5


def query_auc(model, x_support, y_support, x_query, y_query, n_classes: int, seed: int) -> float:
    """The default preset's query AUC after fitting on (x_support, y_support)."""
    from den.evaluate import score
    from den.train.config import adapt_config
    from den.train.finetune import fit_task

    fitted = fit_task(model, x_support, y_support, n_classes, adapt_config(seed=seed, one_vs_rest=False),
                      x_unlabeled=x_query)
    return score(y_query, fitted.proba(x_query))["auc"]


def main(argv=None) -> None:
    with corpus_dev.resumed_records(__doc__.splitlines()[0], argv) as (_, model, handle, splits):
        for task, repeat, seed, support, query in splits:
            started = time.time()
            x, y, x_query = task.x[support], task.y[support], task.x[query]

            def auc(x_fit, x_scored, y=y, y_query=task.y[query], n_classes=task.n_classes, seed=seed):
                return query_auc(model, x_fit, y, x_scored, y_query, n_classes, seed)

            record = {"dataset": task.name, "repeat": repeat, "den": auc(x, x_query)}
            record["den_const5"] = auc(np.hstack([x, np.zeros((len(x), CONSTANT_COLUMNS))]),
                                       np.hstack([x_query, np.zeros((len(x_query), CONSTANT_COLUMNS))]))
            varies = np.array([np.isfinite(c).any() and np.nanmin(c) < np.nanmax(c) for c in x.T])
            record["n_const"] = int((~varies).sum())
            record["den_drop"] = record["den"] if varies.all() else auc(x[:, varies], x_query[:, varies])
            corpus_dev.write_record(handle, record, started)

if __name__ == "__main__":
    main()
