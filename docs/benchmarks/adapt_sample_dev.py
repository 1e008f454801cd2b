"""Session 28's issue-19 try: the default preset's network adaptation on a sample of the task's
feature tuples at each step (docs/benchmarks/corpus-dev.md, section "Session 28"). It chooses
nothing unless the rule written there before the run holds.

Per split of the held-back binary sets (``corpus_dev.py``'s folds, 3 repeats, 50 support rows),
the default preset (network adaptation, ``adapt_config``; the fold's ``ref_fF`` model,
pre-trained with the shipped settings as ``blend_dev.py`` says) is fitted as it is (``den``) and
with ``tuples_per_step`` 64 (the candidate, ``den_64``) and 128 (a diagnostic, ``den_128``) in
its adaptation steps; each record holds the query AUCs and fit seconds:

    python docs/benchmarks/adapt_sample_dev.py F RECORDS.jsonl [--data D] [--out O]
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402

SAMPLES = (64, 128)


def main(argv=None) -> None:
    from den.train.config import adapt_config

    with corpus_dev.resumed_records(__doc__.splitlines()[0], argv) as (_, model, handle, splits):
        for task, repeat, seed, support, query in splits:
            started = time.time()
            default = adapt_config(seed=seed, one_vs_rest=False)
            configs = {"den": default, **{f"den_{s}": dataclasses.replace(default, tuples_per_step=s)
                                          for s in SAMPLES}}
            record = {"dataset": task.name, "repeat": repeat,
                      **corpus_dev.timed_fits(model, task, support, query, configs)}
            corpus_dev.write_record(handle, record, started)


if __name__ == "__main__":
    main()
