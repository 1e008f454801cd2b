"""Session 28's check of ``FinetuneConfig.tuples_per_step`` (issue 22: the paper preset's fit
within 0.5 s; docs/benchmarks/speed.md, section "Session 28"). It chooses nothing unless the
rule written there before the run holds.

The paper's fine-tuning takes 100 Adam steps of the task's PLFs, each over every one of the
task's feature tuples (625 triples at d = 20). With ``tuples_per_step`` each step reads a fresh
random sample of them instead; prediction still pools over all of them. Per split of the
held-back binary sets (``corpus_dev.py``'s folds, 3 repeats, 50 support rows), the PLF model of
the fold (``plf_fF``: the shipped settings with the PLF block, pre-trained on the fold's
training part) is fitted with the paper's fine-tuning over every tuple (``paper``), over a
sample of ``SAMPLES`` tuples a step (``paper_S``) and without fine-tuning (``none``); each
record holds their query AUCs and fit seconds:

    python docs/benchmarks/corpus_dev.py --fold F pretrain plf_fF --steps 6000 --binarized 4 \\
        --hold-mc-validation --model '{"order": 3, "use_calibration": true, "local_bandwidths":
        [0.05, 0.1, 0.2, 0.4], "max_tuples": 625, "min_tuples": 625, "gated_pooling": true,
        "tuple_relevance": true, "balanced_relevance": true}'
    python docs/benchmarks/tuple_sample_dev.py F RECORDS.jsonl [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402

SAMPLES = (128, 64)


def main(argv=None) -> None:
    from den.train.config import FinetuneConfig

    with corpus_dev.resumed_records(__doc__.splitlines()[0], argv, model_name="plf") as (
            _, model, handle, splits):
        for task, repeat, seed, support, query in splits:
            started = time.time()
            configs = {"paper": FinetuneConfig(seed=seed), "none": None,
                       **{f"paper_{s}": FinetuneConfig(seed=seed, tuples_per_step=s) for s in SAMPLES}}
            record = {"dataset": task.name, "repeat": repeat,
                      **corpus_dev.timed_fits(model, task, support, query, configs)}
            corpus_dev.write_record(handle, record, started)

if __name__ == "__main__":
    main()
