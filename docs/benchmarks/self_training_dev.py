"""Session 29's third issue-19 try: the default preset refitted with query rows it labels
itself (docs/benchmarks/corpus-dev.md, section "Session 29 (third try)"). It chooses nothing
unless the rule written there before the run holds.

Per split of the held-back binary sets (``corpus_dev.py``'s folds, 3 repeats, 50 support rows),
with the fold's ``ref_fF`` model (pre-trained with the shipped settings as ``blend_dev.py``
says), each record holds the query AUCs and fit seconds of:

- ``den``: the default preset (network adaptation, ``adapt_config``) on the support rows;
- ``self_trained`` (the candidate): refitted on the support rows plus, for each class c with
  n_c support rows, the n_c query rows ``den`` gives the highest probability of c, labelled c;
- ``self_trained_half`` (a diagnostic): the same with n_c / 2 rows per class.

    python docs/benchmarks/self_training_dev.py F RECORDS.jsonl [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402


def pseudo_labelled(proba: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, labels): for each class c, the ``counts[c]`` rows of ``proba`` (m, L) with the
    highest probability of c, no row twice (classes in order, each from the rows left)."""
    taken, rows, labels = np.zeros(len(proba), bool), [], []
    for c, count in enumerate(counts):
        order = [i for i in np.argsort(-proba[:, c], kind="stable") if not taken[i]][:count]
        taken[order] = True
        rows += order
        labels += [c] * len(order)
    return np.asarray(rows, dtype=np.int64), np.asarray(labels, dtype=np.int64)


def main(argv=None) -> None:
    from den.evaluate import score
    from den.train.config import adapt_config
    from den.train.finetune import fit_task

    with corpus_dev.resumed_records(__doc__.splitlines()[0], argv) as (_, model, handle, splits):
        for task, repeat, seed, support, query in splits:
            started = time.time()
            x_support, y_support, x_query = task.x[support], task.y[support], task.x[query]
            config = adapt_config(seed=seed, one_vs_rest=False)
            record = {"dataset": task.name, "repeat": repeat}
            fit_started = time.perf_counter()
            proba = fit_task(model, x_support, y_support, 2, config, x_unlabeled=x_query).proba(x_query)
            record["den_seconds"] = time.perf_counter() - fit_started
            record["den"] = score(task.y[query], proba)["auc"]
            counts = np.bincount(y_support, minlength=2)
            for name, share in (("self_trained", 1.0), ("self_trained_half", 0.5)):
                rows, labels = pseudo_labelled(proba, np.maximum(1, np.round(counts * share)).astype(int))
                fit_started = time.perf_counter()
                refitted = fit_task(model, np.concatenate([x_support, x_query[rows]]),
                                    np.concatenate([y_support, labels]), 2, config, x_unlabeled=x_query)
                record[f"{name}_seconds"] = time.perf_counter() - fit_started
                record[name] = score(task.y[query], refitted.proba(x_query))["auc"]
                record[f"{name}_label_accuracy"] = float(np.mean(task.y[query][rows] == labels))
            corpus_dev.write_record(handle, record, started)


if __name__ == "__main__":
    main()
