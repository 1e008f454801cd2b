"""Session 43 (issue 19): the two shipped models averaged, and the default preset bagged over
support subsamples, on the 32 real sets no model has seen (``unseen_dev.py``'s sets and splits).

Evaluation only: both shipped models (``den.pretrained``) are fitted as ``DENClassifier`` fits
them, on the splits of ``unseen_dev.py`` (3 per set, 50 support rows, the query rows as unlabeled
rows). Each split's record holds the AUC of:

- ``den_default``: the default preset (the PLF-free model, network adaptation at 1e-4);
- ``den_plf_fast``, ``den_plf_paper``: the PLF model unadapted ("fast") and fine-tuned as the
  paper does ("paper");
- ``ens_fast``, ``ens_paper``: the default's class-1 probabilities averaged with each of those;
- ``bag8``: the default preset fitted on 8 stratified subsamples of 80% of the support rows
  (a class of one row keeps it), seeds 0-7, probabilities averaged.

    python docs/benchmarks/shipped_ensemble_dev.py results/unseen_dev/shipped_ensemble   # resumes
    python docs/benchmarks/shipped_ensemble_dev.py results/unseen_dev/shipped_ensemble --report
    python docs/benchmarks/shipped_ensemble_dev.py docs/benchmarks/unseen_dev_candidates/shipped_ensemble \
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

BAG_MEMBERS = 8
BAG_FRACTION = 0.8
CANDIDATES = ("ens_fast", "ens_paper", "bag8")


def subsample(y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of a stratified subsample of ``BAG_FRACTION`` of each class's rows of ``y``
    (at least one row a class)."""
    rows = []
    for label in np.unique(y):
        members = np.flatnonzero(y == label)
        take = max(1, int(round(BAG_FRACTION * len(members))))
        rows.append(rng.choice(members, take, replace=False))
    return np.sort(np.concatenate(rows))


def class1(clf, x) -> np.ndarray:
    return clf.predict_proba(x)[:, list(clf.classes_).index(1)]


def run(records: Path, group: str) -> None:
    from den.api import DENClassifier
    from den.evaluate import score
    from den.pretrained import shipped_model_path

    plf = str(shipped_model_path(finetune=True))
    records.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()

    def auc(y, proba):
        return score(y, np.column_stack([1 - proba, proba]))["auc"]

    with records.open("a") as handle:
        for name, x, y, repeat, seed, support, query in unseen_dev.splits(corpus_dev.recorded(records),
                                                                           group):
            xs, ys, xq, yq = x[support], y[support], x[query], y[query]
            record = {"dataset": name, "repeat": repeat, "split_seed": seed}
            probas, seconds = {}, {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for column, keywords in {"den_default": {}, "den_plf_fast": {"model": plf, "preset": "fast"},
                                         "den_plf_paper": {"model": plf, "preset": "paper"}}.items():
                    t0 = time.perf_counter()
                    probas[column] = class1(DENClassifier(**keywords).fit(xs, ys, X_unlabeled=xq), xq)
                    seconds[column] = time.perf_counter() - t0
                t0 = time.perf_counter()
                rng = np.random.default_rng([seed, 43])
                members = []
                for member in range(BAG_MEMBERS):
                    rows = subsample(ys, rng)
                    clf = DENClassifier(seed=member).fit(xs[rows], ys[rows], X_unlabeled=xq)
                    members.append(class1(clf, xq))
                probas["bag8"] = np.mean(members, axis=0)
                seconds["bag8"] = time.perf_counter() - t0
            probas["ens_fast"] = (probas["den_default"] + probas["den_plf_fast"]) / 2
            probas["ens_paper"] = (probas["den_default"] + probas["den_plf_paper"]) / 2
            for column, proba in probas.items():
                record[column] = auc(yq, proba)
            record.update({f"{column}_seconds": value for column, value in seconds.items()})
            corpus_dev.write_record(handle, record, started)


def report(prefix: Path) -> None:
    frame = unseen_dev.records_frame(prefix.name, prefix.parent)
    columns = ["den_default", "den_plf_fast", "den_plf_paper", *CANDIDATES]
    means = frame.groupby("dataset")[columns].mean() * 100
    forest = unseen_dev.per_set(None)["random_forest"]
    print(f"{len(means)} sets, {len(frame)} splits; seconds a split: "
          + ", ".join(f"{c} {frame[c + '_seconds'].mean():.2f}" for c in
                      ("den_default", "den_plf_fast", "den_plf_paper", "bag8")))
    for column in columns:
        line = f"{column}: {means[column].mean():.2f}"
        if column != "den_default":
            line += f"; - den_default {unseen_dev.paired(means[column] - means['den_default'])}"
        common = means.index.intersection(forest.index)
        line += f"; - random_forest {unseen_dev.paired(means.loc[common, column] - forest.loc[common])}"
        print(line)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", type=Path, help="records prefix: PREFIX_GROUP.jsonl per group")
    parser.add_argument("--report", action="store_true")
    args = parser.parse_args(argv)
    if args.report:
        report(args.prefix)
        return
    for group in unseen_dev.GROUPS:
        run(Path(f"{args.prefix}_{group}.jsonl"), group)
    report(args.prefix)


if __name__ == "__main__":
    main()
