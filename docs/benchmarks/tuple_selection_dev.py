"""Development experiment (issue 19, 2026-11-25; result in corpus-dev.md: it did not help):
DEN w/o fine-tuning pooling over only the feature tuples most relevant to a task's support
labels, on the held-back corpus sets of ``corpus_dev.py``.

A triple's relevance is the leave-one-out AUC, over the support rows, of a Gaussian-kernel
estimate of the label from that triple's calibrated features (``relevance``). ``--top Q`` keeps
the best fraction Q of the tuples (at least 25) on every binary task. ``--cv 1,0.5,0.25``
chooses the fraction per task by 5-fold CV log loss on the support rows (each fold's relevance
from its training rows only), a subset only where its mean loss is lower than all tuples' by
more than ``--tol`` standard errors.

    python docs/benchmarks/tuple_selection_dev.py --top 0.5 -- \
        evaluate local_r3_min625_3k tsel_q50 --no-finetune
    python docs/benchmarks/tuple_selection_dev.py --cv 1,0.5,0.25 --tol 1 -- \
        evaluate local_r3_min625_3k tcv_t1 --no-finetune

Everything after ``--`` goes to ``corpus_dev.py``; ``corpus_dev.py report`` compares the records.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "workflow"))
sys.path.insert(0, str(HERE))

BANDWIDTH = 0.2
MIN_TUPLES = 25


def relevance(z: np.ndarray, y: np.ndarray, tuples: np.ndarray, bandwidth: float = BANDWIDTH) -> np.ndarray:
    """(T,) leave-one-out AUC of each tuple's kernel label estimate over the (n, d) rows ``z``
    (missing values at the column mean) with labels ``y`` (n,) in {0, 1}."""
    z = np.where(np.isnan(z), np.nanmean(z, axis=0, keepdims=True), z)
    z = np.nan_to_num(z, nan=0.5)
    n, d = z.shape
    incidence = np.zeros((d, len(tuples)))
    for t, features in enumerate(tuples):
        for f in features:
            incidence[f, t] += 1
    dist = (((z[:, None, :] - z[None, :, :]) ** 2).reshape(n * n, d) @ incidence).reshape(n, n, -1)
    k = np.exp(-dist / (2 * bandwidth**2))
    k[np.arange(n), np.arange(n), :] = 0.0
    estimate = np.einsum("ijt,j->it", k, y.astype(float)) / np.maximum(k.sum(axis=1), 1e-300)
    n1 = int(y.sum())
    n0 = n - n1
    if n1 == 0 or n0 == 0:
        return np.zeros(len(tuples))
    ranks = rankdata(estimate, axis=0)
    return (ranks[y == 1].sum(axis=0) - n1 * (n1 + 1) / 2) / (n1 * n0)


def subset(tuples: np.ndarray, score: np.ndarray, fraction: float) -> np.ndarray:
    """The best ``fraction`` of ``tuples`` by ``score`` (at least ``MIN_TUPLES``), in order."""
    keep = max(MIN_TUPLES, int(round(fraction * len(tuples))))
    if keep >= len(tuples):
        return tuples
    return np.ascontiguousarray(tuples[np.sort(np.argsort(-score, kind="stable")[:keep])])


def install(top: float | None, fractions: list[float] | None, tol: float, folds: int = 5) -> None:
    """Patch ``TaskModel`` so that every binary task model built afterwards pools over the
    chosen tuples (an experiment, not a feature of the package)."""
    from den.model import task_model as tm
    from den.train.finetune import stratified_folds

    original = tm.TaskModel.__init__
    inner = [False]

    def select(model, fraction):
        score = relevance(np.asarray(model.unit_support, float), model.y_support, model.tuples)
        model.tuples = subset(model.tuples, score, fraction)
        model.invalidate()

    def patched(self, den, x_support, y_support, n_classes=None, **kw):
        original(self, den, x_support, y_support, n_classes, **kw)
        if inner[0] or den.config.head != "binary" or self.n_classes != 2:
            return
        if top is not None:
            select(self, top)
            return
        x, y = np.asarray(x_support, float), np.asarray(y_support).astype(int)
        if min(y.sum(), len(y) - y.sum()) < folds:
            return
        fold = stratified_folds(y, folds, np.random.default_rng(0))
        losses = np.zeros((folds, len(fractions)))
        inner[0] = True
        try:
            for f in range(folds):
                train, test = fold != f, fold == f
                model = tm.TaskModel(den, x[train], y[train], 2, keypoints=self.keypoints)
                score = relevance(np.asarray(model.unit_support, float), model.y_support, model.tuples)
                every = model.tuples
                for c, fraction in enumerate(fractions):
                    model.tuples = subset(every, score, fraction)
                    model.invalidate()
                    p = np.clip(model.predict_proba(x[test])[:, 1], 1e-6, 1 - 1e-6)
                    losses[f, c] = -np.mean(y[test] * np.log(p) + (1 - y[test]) * np.log(1 - p))
        finally:
            inner[0] = False
        gap = losses - losses[:, [0]]
        se = gap.std(axis=0, ddof=1) / np.sqrt(folds)
        allowed = (np.arange(len(fractions)) == 0) | (gap.mean(axis=0) < -tol * se)
        best = int(np.argmin(np.where(allowed, losses.mean(axis=0), np.inf)))
        if fractions[best] < 1.0:
            select(self, fractions[best])

    tm.TaskModel.__init__ = patched


def main() -> int:
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--top", type=float, help="keep this fraction of the tuples on every task")
    group.add_argument("--cv", help="fractions to choose among per task, the first 1 (all)")
    parser.add_argument("--tol", type=float, default=0.0)
    args = parser.parse_args(own)
    fractions = [float(q) for q in args.cv.split(",")] if args.cv else None
    install(args.top, fractions, args.tol)
    import corpus_dev

    sys.argv = [str(HERE / "corpus_dev.py"), *rest]
    return corpus_dev.main()


if __name__ == "__main__":
    sys.exit(main())
