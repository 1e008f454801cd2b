"""The default preset on a subset of the features chosen by cross-validation on the support rows
(issue 19, session 50's second try).

Session 43's diagnostic on fertil2 found that DEN on a few strong columns matches or beats the
forest, and that the weaker columns cost DEN 5-8 AUC and the forest almost nothing: the pooled
evidence is diluted by the tuples that hold only weak columns. The feature counts of the old
"strong" preset (PLF fine-tuning) chose a subset by cross-validation; the default preset since
session 9 (the PLF-free model, network adaptation) never did, and no subset rule was read on the
unseen sets.

The candidate: the support rows are dealt into ``FOLDS`` stratified folds
(``den.train.finetune.stratified_folds``, seed 0). Each candidate (all features, or the k most
informative for each k in ``COUNTS`` below d: ``den.train.finetune.informative_features``,
ranked on each fold's training rows) is fitted with preset "fast" (the shipped model unadapted:
milliseconds) on the training rows and scored by the log loss of the held-out rows.
``den.train.finetune.choose_features`` with tolerance 1 keeps all features unless a subset's
mean held-out loss is below theirs by more than one standard error of the fold-by-fold
difference. All features are kept, too, where a class has a single support row (a fold would train
on one class). The chosen subset (ranked on all 50 support rows) is then fitted with the default
preset and with "fast". Where all features are kept, the predictions are the default's, so only
the splits where a subset is chosen are fitted again.

    python docs/benchmarks/feature_selection_dev.py RECORDS.jsonl --unseen       # resumes
    python docs/benchmarks/feature_selection_dev.py RECORDS.jsonl --tasks DIR    # resumes
    python docs/benchmarks/feature_selection_dev.py RECORDS.jsonl [MORE.jsonl ...] --report
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

from restated_columns_dev import class1_proba, command, on_columns, run_rule  # noqa: E402

COUNTS = (3, 6, 10)
FOLDS = 5
TOLERANCE = 1.0
PRESETS = ("default", "fast")


def chosen_features(x_support: np.ndarray, y_support: np.ndarray,
                    x_unlabeled: np.ndarray) -> list[int] | None:
    """The candidate's choice on one support set (binary y 0/1): None for all features, else the
    sorted column indices of the chosen k most informative ones."""
    from den.train.finetune import choose_features, informative_features, stratified_folds

    d = x_support.shape[1]
    counts = [None, *[k for k in COUNTS if k < d]]
    if len(counts) == 1:
        return None
    folds = stratified_folds(y_support, FOLDS, np.random.default_rng(0))
    if any(len(np.unique(y_support[folds != j])) < 2 for j in range(FOLDS)):
        return None  # a class of one row: some fold trains on one class, nothing to compare
    held_out = np.zeros((FOLDS, len(counts)))
    for j in range(FOLDS):
        train, test = folds != j, folds == j
        for c, count in enumerate(counts):
            cols = np.arange(d) if count is None else informative_features(x_support[train], y_support[train],
                                                                            count)
            p = np.clip(class1_proba("fast", x_support[train][:, cols], y_support[train],
                                     x_support[test][:, cols], x_unlabeled[:, cols]), 1e-6, 1 - 1e-6)
            y = y_support[test]
            held_out[j, c] = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    count = counts[choose_features(held_out, TOLERANCE)]
    if count is None:
        return None
    return informative_features(x_support, y_support, count).tolist()


def rule(x_support: np.ndarray, y_support: np.ndarray, x_query: np.ndarray):
    """This script's rule for ``restated_columns_dev.run_rule``: the chosen columns (``dropped``
    lists the others), each preset refitted on them."""
    chosen = chosen_features(x_support, y_support, x_query)
    dropped = [] if chosen is None else [j for j in range(x_support.shape[1]) if j not in set(chosen)]
    return {"chosen": chosen, "dropped": dropped}, on_columns(chosen, x_support, y_support, x_query)


def run(records: Path, splits) -> None:
    """One JSON line per split (``restated_columns_dev.run_rule`` with ``rule``)."""
    run_rule(records, splits, rule)


def main(argv=None) -> None:
    command(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    main()
