"""Session 45's two readings and session 46's (``corpus-dev.md``, "Session 45" and "Session 46"),
from the kept per-split scores alone, so they rerun without the run's score files:

    python docs/benchmarks/seed_draws.py

Reading 1: three pre-training draws of the shipped settings (``corpus_rdata_linev``, then
``pretrain_seed`` 1 and 2) on the same splits: each draw's mean and its paired difference to
draw 1 and to the random forest, the standard deviation of the three means, and the average
per-set standard deviation over the draws. Reading 2: the shrink (``kernel_pseudo_rows`` 1)
minus the reference of the same draw, for both pairs and averaged per set. Differences are AUC
or accuracy x 100, paired split by split (the split seeds must agree), then averaged per set;
the standard error is over sets. Reading 3 (session 46): five draws on the multiclass sets (the
three above, then ``pretrain_seed`` 3 and 4), each draw's margin over the forest, their mean and
its standard error over draws, and the verdict of the rule fixed before the run (met / not met
when the mean is beyond twice that standard error, else level).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_tables import read_kept_scores  # noqa: E402

HERE = Path(__file__).resolve().parent
KEPT = [HERE / name for name in ("corpus_seed_draws.csv", "corpus_rdata_linev.csv",
                                 "corpus_rdata_shrink.csv", "corpus_meta_baselines.csv")]
DRAWS = {"auc": [("corpus_rdata_linev", "den_adapt_slow"), ("corpus_rdata_seed2", "den_adapt_slow"),
                 ("corpus_rdata_seed3", "den_adapt_slow")],
         "accuracy": [("corpus_mc_rdata_linev", "den_no_plf"), ("corpus_mc_rdata_seed2", "den_no_plf"),
                      ("corpus_mc_rdata_seed3", "den_no_plf")]}
BINARY, MC = "den_adapt_slow", "den_no_plf"  # the default preset's rows
MC_DRAWS = DRAWS["accuracy"] + [("corpus_mc_rdata_seed4", MC), ("corpus_mc_rdata_seed5", MC)]
SHRINK_PAIRS = {"auc": [(("corpus_rdata_shrink", BINARY), ("corpus_rdata_linev", BINARY)),
                        (("corpus_rdata_shrink_seed2", BINARY), ("corpus_rdata_seed2", BINARY))],
                "accuracy": [(("corpus_mc_rdata_shrink", MC), ("corpus_mc_rdata_linev", MC)),
                             (("corpus_mc_rdata_shrink_seed2", MC), ("corpus_mc_rdata_seed2", MC))]}


def rows(scores: pd.DataFrame, experiment: str, method: str) -> pd.DataFrame:
    """One row's per-split scores; an empty selection is an error naming it."""
    out = scores[(scores.experiment == experiment) & (scores.method == method)]
    if out.empty:
        raise SystemExit(f"no kept scores for {experiment}:{method} in {[str(p) for p in KEPT]}")
    return out


def per_set_difference(a: pd.DataFrame, b: pd.DataFrame, metric: str) -> pd.Series:
    """(sets,) mean over each set's common splits of (a - b) x 100, paired by split."""
    both = a.merge(b, on=["dataset", "repeat"], suffixes=("_a", "_b"))
    if both.empty:
        raise SystemExit("the two rows share no split")
    if not (both.split_seed_a == both.split_seed_b).all():
        raise SystemExit("the two rows' split seeds differ: they are not paired")
    return ((both[f"{metric}_a"] - both[f"{metric}_b"]) * 100).groupby(both.dataset).mean()


def summary(diff: pd.Series) -> str:
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    return f"{diff.mean():+.2f} (s.e. {se:.2f}), above on {(diff > 0).sum()} of {len(diff)}"


def forest_margins(scores: pd.DataFrame, forest: pd.DataFrame, draws: list[tuple[str, str]],
                   metric: str) -> tuple[list[pd.DataFrame], list[pd.Series]]:
    """Each draw's per-split scores, and its per-set paired difference to the forest (x 100)."""
    frames = [rows(scores, *draw) for draw in draws]
    return frames, [per_set_difference(frame, forest[forest.dataset.isin(frame.dataset)], metric)
                    for frame in frames]


def main() -> int:
    scores = read_kept_scores(KEPT)
    # the forest's rows of any table (the binary and multiclass sets are in different ones); a
    # split's scores are the same in each table that holds it
    forest = scores[scores.method == "random_forest"].drop_duplicates(["dataset", "repeat"])
    for metric, draws in DRAWS.items():
        frames, vs_forest = forest_margins(scores, forest, draws, metric)
        print(f"== reading 1, {metric}: three pre-training draws of the shipped settings")
        means = [frame[metric].mean() * 100 for frame in frames]
        for k, (frame, to_forest) in enumerate(zip(frames, vs_forest)):
            to_first = "" if k == 0 else \
                f"; vs draw 1 {summary(per_set_difference(frame, frames[0], metric))}"
            print(f"draw {k + 1} ({draws[k][0]}): mean {means[k]:.2f}; "
                  f"vs forest {summary(to_forest)}{to_first}")
        per_set = pd.concat(vs_forest, axis=1)  # the forest is common, so this spread is DEN's
        print(f"s.d. of the three means {np.std(means, ddof=1):.2f}; per-set s.d. over draws, averaged "
              f"{per_set.std(axis=1, ddof=1).mean():.2f}; mean of the three vs forest "
              f"{np.mean([d.mean() for d in vs_forest]):+.2f}")
    for metric, pairs in SHRINK_PAIRS.items():
        print(f"== reading 2, {metric}: the shrink minus the reference of the same draw")
        diffs = [per_set_difference(rows(scores, *shrink), rows(scores, *reference), metric)
                 for shrink, reference in pairs]
        for k, diff in enumerate(diffs):
            print(f"pair {k + 1}: {summary(diff)}")
        print(f"the two pairs averaged per set: {summary((diffs[0] + diffs[1]) / 2)}")
    print("== reading 3, accuracy: five pre-training draws of the shipped settings against the forest")
    frames, margins = forest_margins(scores, forest, MC_DRAWS, "accuracy")
    for k, (frame, to_forest) in enumerate(zip(frames, margins)):
        print(f"draw {k + 1} ({MC_DRAWS[k][0]}): mean {frame.accuracy.mean() * 100:.2f}; "
              f"vs forest {summary(to_forest)}")
    draw_means = np.array([m.mean() for m in margins])
    mean, se = draw_means.mean(), draw_means.std(ddof=1) / np.sqrt(len(draw_means))
    verdict = "met" if mean > 2 * se else "not met" if mean < -2 * se else "level"
    print(f"mean of the five margins {mean:+.2f} (s.e. over draws {se:.2f}): {verdict}")
    per_set = pd.concat(margins, axis=1)
    print("per set, the five draws' mean margin: " + ", ".join(
        f"{name} {value:+.2f}" for name, value in per_set.mean(axis=1).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
