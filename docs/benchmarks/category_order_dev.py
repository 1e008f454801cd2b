"""Session 27's issue-19 try: discrete columns re-ordered by their class rate on the support rows
(docs/benchmarks/corpus-dev.md, section "Session 27"). It chooses no setting unless the rule
written there before the run holds.

DEN reads every column as ordered numbers. A category column is coded in an order that means
nothing (``TabularEncoder`` sorts texts alphabetically; PMLB's files hold such codes), so its
kernels and its tuples' relevance see a category's neighbours where there are none. A random
forest does not care: its splits cut any order. The candidate (``ordered``): on a two-class task,
each column with 3 to ``MAX_VALUES`` distinct values on the support rows has each value replaced
by its class-1 rate there, smoothed towards the support's rate p, (n1 + p) / (n + 1); a query
value the support never held is p, a missing one stays missing. Two-valued columns are left as
they are (any order of two values is the same to DEN). ``appended`` (a diagnostic, not a
candidate): the rate columns appended beside the columns as they are.

Per split of the held-back binary sets (``corpus_dev.py``'s folds, 3 repeats, 50 support rows,
seeded as ``corpus_dev.py``'s), the default preset (network adaptation; ``corpus_dev.py``'s
``ref_fF`` models, pre-trained with the shipped settings as ``blend_dev.py`` says) is fitted on
the task as it is (``den``), ``ordered`` and ``appended``; the random forest on the task as it
is (``forest``). Each record holds the query AUCs and ``n_ordered``, the number of columns
re-ordered:

    python docs/benchmarks/category_order_dev.py F RECORDS.jsonl [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402
from constant_columns_dev import query_auc  # noqa: E402

MAX_VALUES = 10


def class_rate_columns(x_support: np.ndarray, y_support: np.ndarray, x_query: np.ndarray,
                       max_values: int = MAX_VALUES) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The support's discrete columns as class rates.

    Args:
        x_support: (n, d) support features; y_support: (n,) labels 0/1; x_query: (m, d).

    Returns:
        (columns j with 3..max_values distinct finite values on the support rows,
         their rates on the support rows (n, k), on the query rows (m, k)).
    """
    prior = float(np.mean(y_support))
    columns, support_rates, query_rates = [], [], []
    for j in range(x_support.shape[1]):
        values = x_support[:, j]
        finite = np.isfinite(values)
        distinct = np.unique(values[finite])
        if not 3 <= len(distinct) <= max_values:
            continue
        rate = {v: (y_support[finite][values[finite] == v].sum() + prior) / ((values[finite] == v).sum() + 1)
                for v in distinct}

        def as_rate(column, rate=rate):
            return np.array([np.nan if not np.isfinite(v) else rate.get(v, prior) for v in column])

        columns.append(j)
        support_rates.append(as_rate(values))
        query_rates.append(as_rate(x_query[:, j]))
    if not columns:
        return [], np.empty((len(x_support), 0)), np.empty((len(x_query), 0))
    return columns, np.stack(support_rates, axis=1), np.stack(query_rates, axis=1)


def main(argv=None) -> None:
    from den.baselines.direct import direct_predict_proba
    from den.evaluate import score

    with corpus_dev.resumed_records(__doc__.splitlines()[0], argv) as (_, model, handle, splits):
        for task, repeat, seed, support, query in splits:
            started = time.time()
            x, y, x_query, y_query = task.x[support], task.y[support], task.x[query], task.y[query]

            def auc(x_fit, x_scored, y=y, y_query=y_query, n_classes=task.n_classes, seed=seed):
                return query_auc(model, x_fit, y, x_scored, y_query, n_classes, seed)

            record = {"dataset": task.name, "repeat": repeat, "den": auc(x, x_query)}
            columns, rates, query_rates = class_rate_columns(x, y, x_query)
            record["n_ordered"] = len(columns)
            if columns:
                ordered, ordered_query = x.copy(), x_query.copy()
                ordered[:, columns], ordered_query[:, columns] = rates, query_rates
                record["ordered"] = auc(ordered, ordered_query)
                record["appended"] = auc(np.hstack([x, rates]), np.hstack([x_query, query_rates]))
            else:
                record["ordered"] = record["appended"] = record["den"]
            record["forest"] = score(y_query, direct_predict_proba(
                "random_forest", x, y, x_query, task.n_classes, seed=seed))["auc"]
            corpus_dev.write_record(handle, record, started)

if __name__ == "__main__":
    main()
