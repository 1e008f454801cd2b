"""Columns that restate another column on the support rows, dropped at fit time (issue 19, session 50).

DEN reads features through quantile keypoints fitted on the support rows, so a column that is a
monotone function of another (a logarithm beside its level, a square beside its age, a charge
beside the minutes it is billed on) reaches the network as a copy of it. A forest does not care
about copies; DEN's pooling over feature tuples does: every tuple that holds the copied feature
counts twice as often, and tuples holding both copies spend their slots on one feature. Real
tables hold such columns often (8 of the 32 unseen sets have a pair whose rank correlation over
all rows is 0.99 or more).

The candidate, ``restated_columns``: on the support rows only, columns are taken in table order,
and one is dropped when the absolute value of its Spearman rank correlation with an earlier kept
column is ``THRESHOLD`` (0.99) or more, computed over the rows where both are present (at least
``MIN_COMMON`` of them). Columns constant on the support rows are left as they are (DEN handles
them today). The query rows lose the same columns. Nothing else changes: a split where no column
is dropped gets the very predictions of the default, so only such splits are fitted again.

Scored on every split of the 32 unseen sets (``unseen_dev.splits``) and of the Task files of a
directory (e.g. ``rdatasets_more_dev.py``'s 277 tasks, which the shipped models never saw), 3
splits of 50 support rows each, seeded as ``unseen_dev`` seeds them. Each affected split gets the
shipped model's default preset and "fast", with all columns and with the restated ones dropped.

    python docs/benchmarks/restated_columns_dev.py RECORDS.jsonl --unseen        # resumes
    python docs/benchmarks/restated_columns_dev.py RECORDS.jsonl --tasks DIR     # resumes
    python docs/benchmarks/restated_columns_dev.py RECORDS.jsonl [MORE.jsonl ...] --report   # read together
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

import corpus_dev  # noqa: E402
import unseen_dev  # noqa: E402

THRESHOLD = 0.99
MIN_COMMON = 10
PRESETS = ("default", "fast")


def restated_columns(x_support: np.ndarray, threshold: float = THRESHOLD,
                     min_common: int = MIN_COMMON) -> list[int]:
    """Indices of the columns of x_support (n, d; NaN missing) that restate an earlier kept column:
    |Spearman rho| >= threshold over the rows where both are present (>= min_common of them).
    Columns constant on those rows have no correlation and are never dropped."""
    frame = pd.DataFrame(np.asarray(x_support, dtype=float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = frame.corr(method="spearman", min_periods=min_common).abs().to_numpy()
    dropped, kept = [], []
    for j in range(frame.shape[1]):
        if any(np.isfinite(rho[i, j]) and rho[i, j] >= threshold for i in kept):
            dropped.append(j)
        else:
            kept.append(j)
    return dropped


def task_splits(directory: Path, done: set[tuple]):
    """(name, x, y, repeat, seed, support, query) of every split of every Task file in directory,
    seeded as ``unseen_dev.splits`` seeds the unseen sets'."""
    from den.data.tasks import Task
    from den.evaluate import support_query_split
    from den.experiments import split_seed

    for path in sorted(directory.glob("*.npz")):
        task = Task.load(path)
        for repeat in range(unseen_dev.REPEATS):
            if (task.name, repeat) in done:
                continue
            seed = split_seed(corpus_dev.EVAL_SEED, task.name, repeat)
            support, query = support_query_split(task.y, corpus_dev.N_SUPPORT, seed, corpus_dev.MAX_QUERY)
            yield task.name, task.x, task.y, repeat, seed, support, query


def class1_proba(preset: str, x_support: np.ndarray, y_support: np.ndarray, x_query: np.ndarray,
                 x_unlabeled: np.ndarray | None = None) -> np.ndarray:
    """(m,) class-1 probabilities of the query rows from the shipped model fitted on the support
    rows with ``preset``, the query rows (or x_unlabeled) passed as unlabelled rows, as
    ``unseen_dev`` fits; its input warnings silenced."""
    from den.api import DENClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DENClassifier(preset=preset).fit(x_support, y_support,
                                               X_unlabeled=x_query if x_unlabeled is None else x_unlabeled)
        return clf.predict_proba(x_query)[:, list(clf.classes_).index(1)]


def auc(y: np.ndarray, proba: np.ndarray) -> float:
    """The AUC of class-1 probabilities, as ``den.evaluate.score`` computes it."""
    from den.evaluate import score

    return score(y, np.column_stack([1 - proba, proba]))["auc"]


def run_rule(records: Path, splits, rule) -> None:
    """Score a fit-time column rule on every split of ``splits`` and append one JSON line each.

    ``rule(x_support, y_support, x_query)`` returns ``(fields, candidate)``: ``fields`` is a dict
    of what the rule chose, holding at least ``dropped`` (the columns it leaves out; [] where it
    leaves the default's predictions as they are), and ``candidate(preset, proba)`` gives the
    rule's (m,) class-1 probabilities, ``proba`` being the preset's on all columns. Where anything
    is dropped, the record holds each preset's AUC on all columns (``den_P``) and the rule's
    (``dropped_P``), as ``report`` reads them."""
    records.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    with records.open("a") as handle:
        for name, x, y, repeat, seed, support, query in splits:
            fields, candidate = rule(x[support], y[support], x[query])
            record = {"dataset": name, "repeat": repeat, "split_seed": seed, "features": x.shape[1], **fields}
            if fields["dropped"]:
                for preset in PRESETS:
                    proba = class1_proba(preset, x[support], y[support], x[query])
                    record[f"den_{preset}"] = auc(y[query], proba)
                    record[f"dropped_{preset}"] = auc(y[query], candidate(preset, proba))
            corpus_dev.write_record(handle, record, started)


def on_columns(columns: list[int], x_support: np.ndarray, y_support: np.ndarray, x_query: np.ndarray):
    """A ``run_rule`` candidate: each preset refitted on ``columns`` alone."""
    return lambda preset, _: class1_proba(preset, x_support[:, columns], y_support, x_query[:, columns])


def rule(x_support: np.ndarray, y_support: np.ndarray, x_query: np.ndarray):
    """This script's rule for ``run_rule``: the restated columns dropped."""
    dropped = restated_columns(x_support)
    kept = [j for j in range(x_support.shape[1]) if j not in set(dropped)]
    return {"dropped": dropped}, on_columns(kept, x_support, y_support, x_query)


def run(records: Path, splits) -> None:
    """One JSON line per split (``run_rule`` with ``rule``)."""
    run_rule(records, splits, rule)


def report(records: list[Path]) -> None:
    """Per preset: the paired difference (dropped - all columns) over every set (0 where no split
    drops a column) and over the sets where some split does, s.e. over sets; several records files
    are read as one."""
    frame = pd.DataFrame([{**json.loads(line), "records": str(path)} for path in records
                          for line in path.open()])
    # a set of two files (the same table with another label) is another task
    frame["dataset"] = frame["dataset"] + (" (" + frame["records"] + ")" if len(records) > 1 else "")
    frame["affected"] = frame["dropped"].map(bool)
    print(f"{', '.join(map(str, records))}: {frame['dataset'].nunique()} sets, {len(frame)} splits; "
          f"a column dropped in "
          f"{int(frame['affected'].sum())} splits of {frame[frame['affected']]['dataset'].nunique()} sets; "
          f"columns dropped per affected split: median "
          f"{frame[frame['affected']]['dropped'].map(len).median() if frame['affected'].any() else 0}")
    for preset in PRESETS:
        if f"den_{preset}" not in frame:
            continue
        diff = (frame[f"dropped_{preset}"] - frame[f"den_{preset}"]).fillna(0.0) * 100
        per_set = diff.groupby(frame["dataset"]).mean()
        touched = frame.groupby("dataset")["affected"].any()
        print(f"  {preset:8s} every set: {unseen_dev.paired(per_set)}")
        print(f"  {preset:8s} affected sets: {unseen_dev.paired(per_set[touched])}")
        if preset == "default":
            print("  per affected set (AUC x 100):", ", ".join(
                f"{name} {value:+.2f}" for name, value in per_set[touched].sort_values().items()))


def command(description: str, run_splits, argv=None) -> None:
    """The command line of the column-rule scripts: score ``run_splits(records, splits)`` on the
    unseen sets (``--unseen``) or a directory's Task files (``--tasks``), resuming, or ``--report``
    their records (several files read as one)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("records", type=Path, nargs="+", help="one records file (several with --report)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--unseen", action="store_true", help="the 32 unseen sets (unseen_dev.GROUPS)")
    mode.add_argument("--tasks", type=Path, metavar="DIR", help="every Task .npz in DIR")
    mode.add_argument("--report", action="store_true")
    args = parser.parse_args(argv)
    if args.report:
        report(args.records)
        return
    if len(args.records) > 1:
        parser.error("one records file to write; several only with --report")
    records = args.records[0]
    done = corpus_dev.recorded(records) if records.exists() else set()
    if args.unseen:
        splits = (s for group in unseen_dev.GROUPS for s in unseen_dev.splits(done, group))
    else:
        splits = task_splits(args.tasks, done)
    run_splits(records, splits)


def main(argv=None) -> None:
    command(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    main()
