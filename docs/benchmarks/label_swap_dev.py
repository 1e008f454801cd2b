"""Session 29's second issue-19 try: the default preset fitted on both codings of a binary
task's labels, averaged (docs/benchmarks/corpus-dev.md, section "Session 29 (second try)"). It
chooses nothing unless the rule written there before the run holds.

Per split of the held-back binary sets (``corpus_dev.py``'s folds, 3 repeats, 50 support rows),
with the fold's ``ref_fF`` model (pre-trained with the shipped settings as ``blend_dev.py``
says), each record holds the query AUCs and fit seconds of:

- ``den``: the default preset (network adaptation, ``adapt_config``) on the labels as coded;
- ``swapped`` (a diagnostic): the same fit on the labels swapped, 0 <-> 1, scored by 1 - p';
- ``symmetric`` (the candidate): the mean of the two class-1 probabilities.

    python docs/benchmarks/label_swap_dev.py F RECORDS.jsonl [--model NAME] [--data D] [--out O]

``--model NAME`` reads the fold's model ``NAME_fF`` instead of the reference (session 30's third
try: the weight-averaged ``ema`` models).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402


def main(argv=None) -> None:
    from den.evaluate import score
    from den.train.config import adapt_config
    from den.train.finetune import fit_task

    argv = list(sys.argv[1:] if argv is None else argv)
    name = None
    if "--model" in argv:  # before resumed_records' own arguments
        at = argv.index("--model")
        name = argv[at + 1]
        del argv[at:at + 2]
    records = corpus_dev.resumed_records(__doc__.splitlines()[0], argv, model_name=name)
    with records as (_, model, handle, splits):
        for task, repeat, seed, support, query in splits:
            started = time.time()
            p1, seconds = {}, {}
            for name, labels in (("den", task.y[support]), ("swapped", 1 - task.y[support])):
                fit_started = time.perf_counter()
                fitted = fit_task(model, task.x[support], labels, 2,
                                  adapt_config(seed=seed, one_vs_rest=False), x_unlabeled=task.x[query])
                seconds[f"{name}_seconds"] = time.perf_counter() - fit_started
                proba = fitted.proba(task.x[query])[:, 1]
                p1[name] = proba if name == "den" else 1.0 - proba
            p1["symmetric"] = (p1["den"] + p1["swapped"]) / 2
            record = {"dataset": task.name, "repeat": repeat,
                      **{name: score(task.y[query], np.stack([1.0 - p, p], axis=1))["auc"]
                         for name, p in p1.items()}, **seconds}
            corpus_dev.write_record(handle, record, started)


if __name__ == "__main__":
    main()
