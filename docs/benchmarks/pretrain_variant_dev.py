"""The default preset with a fold's pre-trained model NAME_fF on the held-back binary sets
(``corpus_dev.py``'s folds, 3 repeats, 50 support rows): each record holds the query AUC and fit
seconds of ``den`` (network adaptation, ``adapt_config``), to be paired with the reference's
records of another script on the same splits (session 29's fourth issue-19 try read its
``swap`` models, pre-trained with a patch kept outside the repository, so;
docs/benchmarks/corpus-dev.md):

    python docs/benchmarks/pretrain_variant_dev.py F NAME RECORDS.jsonl [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402


def main(argv=None) -> None:
    from den.train.config import adapt_config

    argv = list(sys.argv[1:] if argv is None else argv)
    name = argv.pop(1)  # F NAME RECORDS ...: the model name, then resumed_records' arguments
    records = corpus_dev.resumed_records(__doc__.splitlines()[0], argv, model_name=name)
    with records as (_, model, handle, splits):
        for task, repeat, seed, support, query in splits:
            started = time.time()
            record = {"dataset": task.name, "repeat": repeat, **corpus_dev.timed_fits(
                model, task, support, query, {"den": adapt_config(seed=seed, one_vs_rest=False)})}
            corpus_dev.write_record(handle, record, started)


if __name__ == "__main__":
    main()
