"""Session 31's issue-19 try: the default preset averaged over mirrored views of a task's
features (docs/benchmarks/corpus-dev.md, section "Session 31"). It chooses nothing unless the
rule written there before the run holds.

Pre-training mirrors each sampled column at random (``flip_rate`` 0.5: u -> 1 - u), so the
network has learnt to read a column either way up. Per split of the held-back binary sets
(``corpus_dev.py``'s folds, 3 repeats, 50 support rows), with the fold's ``ref_fF`` model, each
record holds the query AUCs and fit seconds of:

- ``den``: the default preset (network adaptation, ``adapt_config``) on the features as given;
- ``mirrored`` (a diagnostic): the mean class-1 probability of ``MEMBERS`` - 1 fits, each on
  the features with a random half of the columns negated (x -> -x, which the quantile
  keypoints read as z -> 1 - z), each column independently with probability 1/2, seeded by the
  split and the member;
- ``mirror_avg`` (the candidate): the mean of all ``MEMBERS`` class-1 probabilities.

    python docs/benchmarks/mirror_dev.py F RECORDS.jsonl [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402

MEMBERS = 4  # the features as given and three mirrored views


def main(argv=None) -> None:
    from den.evaluate import score
    from den.train.config import adapt_config
    from den.train.finetune import fit_task

    records = corpus_dev.resumed_records(__doc__.splitlines()[0], argv)
    with records as (_, model, handle, splits):
        for task, repeat, seed, support, query in splits:
            started = time.time()
            probas, seconds = [], 0.0
            for member in range(MEMBERS):
                sign = np.ones(task.x.shape[1])
                if member:
                    rng = np.random.default_rng([seed, member])
                    sign = np.where(rng.random(task.x.shape[1]) < 0.5, -1.0, 1.0)
                fit_started = time.perf_counter()
                fitted = fit_task(model, task.x[support] * sign, task.y[support], 2,
                                  adapt_config(seed=seed, one_vs_rest=False),
                                  x_unlabeled=task.x[query] * sign)
                probas.append(fitted.proba(task.x[query] * sign)[:, 1])
                seconds += time.perf_counter() - fit_started
            p1 = {"den": probas[0], "mirrored": np.mean(probas[1:], axis=0),
                  "mirror_avg": np.mean(probas, axis=0)}
            record = {"dataset": task.name, "repeat": repeat,
                      **{name: score(task.y[query], np.stack([1.0 - p, p], axis=1))["auc"]
                         for name, p in p1.items()}, "mirror_avg_seconds": seconds}
            corpus_dev.write_record(handle, record, started)


if __name__ == "__main__":
    main()
