"""Session 29's issue-19 try: the default preset averaged over random halves of the features
(docs/benchmarks/corpus-dev.md, section "Session 29"). It chooses nothing unless the rule
written there before the run holds.

Per split of the held-back binary sets (``corpus_dev.py``'s folds, 3 repeats, 50 support rows),
with the fold's ``ref_fF`` model (pre-trained with the shipped settings as ``blend_dev.py``
says), each record holds the query AUCs and fit seconds of:

- ``den``: the default preset (network adaptation, ``adapt_config``) on all columns;
- ``subspace`` (the candidate): the class probabilities of ``MEMBERS`` default-preset fits
  averaged, each on its own random ``half_columns`` of the columns;
- ``subspace_full`` (a diagnostic): the same average with ``den`` as one more member.

    python docs/benchmarks/subspace_dev.py F RECORDS.jsonl [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402

MEMBERS = 5
MIN_COLUMNS = 3
ALL_COLUMNS_UP_TO = 5


def half_columns(n_columns: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of a random ceil(d / 2) of ``n_columns`` = d columns (at least
    ``MIN_COLUMNS``); all of them when d <= ``ALL_COLUMNS_UP_TO``."""
    if n_columns <= ALL_COLUMNS_UP_TO:
        return np.arange(n_columns)
    count = max(MIN_COLUMNS, -(-n_columns // 2))
    return np.sort(rng.choice(n_columns, size=count, replace=False))


def main(argv=None) -> None:
    from den.evaluate import score
    from den.train.config import adapt_config
    from den.train.finetune import fit_task

    with corpus_dev.resumed_records(__doc__.splitlines()[0], argv) as (_, model, handle, splits):
        for task, repeat, seed, support, query in splits:
            started = time.time()
            x_support, y_support, x_query = task.x[support], task.y[support], task.x[query]
            rng = np.random.default_rng(seed)
            probas, seconds = [], []
            n_columns = task.x.shape[1]
            for member in range(MEMBERS + 1):
                columns = np.arange(n_columns) if member == MEMBERS else half_columns(n_columns, rng)
                fit_started = time.perf_counter()
                fitted = fit_task(model, x_support[:, columns], y_support, task.n_classes,
                                  adapt_config(seed=seed if member == MEMBERS else seed + 1 + member,
                                               one_vs_rest=False),
                                  x_unlabeled=x_query[:, columns])
                seconds.append(time.perf_counter() - fit_started)
                probas.append(fitted.proba(x_query[:, columns]))
            auc = {name: score(task.y[query], np.mean(members, axis=0))["auc"]
                   for name, members in (("den", probas[MEMBERS:]), ("subspace", probas[:MEMBERS]),
                                         ("subspace_full", probas))}
            record = {"dataset": task.name, "repeat": repeat, **auc, "den_seconds": seconds[MEMBERS],
                      "subspace_seconds": sum(seconds[:MEMBERS]), "n_columns": int(n_columns)}
            corpus_dev.write_record(handle, record, started)


if __name__ == "__main__":
    main()
