"""Session 43 (issue 19): missing-value indicator columns, on the unseen sets that have missing
values (``unseen_dev.py``'s sets and splits).

The PLF-free shipped model reads a missing value as 0.5, the middle of a feature's quantile
scale (``den.model.calibration.impute_unit``), so "missing" looks like a median value. Here each
column with a missing value among a split's support or query rows gains a 0/1 column, "is
missing" (the column itself is left as it is). Evaluation only, the shipped model; each split's
record holds the AUC of the default preset and of "fast" without (``den_default``, ``den_fast``)
and with the indicator columns (``den_mi_default``, ``den_mi_fast``).

    python docs/benchmarks/missing_indicator_dev.py results/unseen_dev/missing_indicator   # resumes
    python docs/benchmarks/missing_indicator_dev.py results/unseen_dev/missing_indicator --report
    python docs/benchmarks/missing_indicator_dev.py docs/benchmarks/unseen_dev_candidates/missing_indicator \
        --report   # the kept records
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus_dev  # noqa: E402
import unseen_dev  # noqa: E402

PRESETS = ("default", "fast")


def with_indicators(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(n, d + k): ``x`` and a 0/1 "is missing" column for each of the k columns with a NaN among
    ``rows`` (the split's support and query rows)."""
    columns = np.flatnonzero(np.isnan(x[rows]).any(axis=0))
    return np.hstack([x, np.isnan(x[:, columns]).astype(float)])


def run(records: Path, group: str) -> None:
    from den.api import DENClassifier
    from den.evaluate import score

    records.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    with records.open("a") as handle:
        for name, x, y, repeat, seed, support, query in unseen_dev.splits(corpus_dev.recorded(records),
                                                                           group):
            if not np.isnan(x).any():
                continue
            record = {"dataset": name, "repeat": repeat, "split_seed": seed}
            x_mi = with_indicators(x, np.concatenate([support, query]))
            record["indicators"] = x_mi.shape[1] - x.shape[1]
            for tag, data in (("", x), ("mi_", x_mi)):
                for preset in PRESETS:
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        clf = DENClassifier(preset=preset).fit(data[support], y[support],
                                                               X_unlabeled=data[query])
                        proba = clf.predict_proba(data[query])[:, list(clf.classes_).index(1)]
                    record[f"den_{tag}{preset}"] = score(y[query], np.column_stack([1 - proba, proba]))["auc"]
                    record[f"den_{tag}{preset}_seconds"] = time.perf_counter() - t0
            corpus_dev.write_record(handle, record, started)


def report(prefix: Path) -> None:
    frame = unseen_dev.records_frame(prefix.name, prefix.parent)
    columns = [f"den_{t}{p}" for t in ("", "mi_") for p in PRESETS]
    means = frame.groupby("dataset")[columns].mean() * 100
    forest = unseen_dev.per_set(None)["random_forest"].loc[means.index]
    means["random_forest"] = forest
    means["indicators"] = frame.groupby("dataset")["indicators"].mean()
    print(f"{len(means)} sets, {len(frame)} splits")
    print(means.round(2).to_string())
    for preset in PRESETS:
        diff = means[f"den_mi_{preset}"] - means[f"den_{preset}"]
        print(f"{preset}: indicators - without {unseen_dev.paired(diff)}; without - forest "
              f"{unseen_dev.paired(means[f'den_{preset}'] - forest)}; with - forest "
              f"{unseen_dev.paired(means[f'den_mi_{preset}'] - forest)}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", type=Path, help="records prefix: PREFIX_GROUP.jsonl per group")
    parser.add_argument("--report", action="store_true")
    args = parser.parse_args(argv)
    if not args.report:
        for group in unseen_dev.GROUPS:
            run(Path(f"{args.prefix}_{group}.jsonl"), group)
    report(args.prefix)


if __name__ == "__main__":
    main()
