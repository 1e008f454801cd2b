"""Session 22's diagnostic: DEN against the classical methods by support-set size, on the
held-back corpus sets (``corpus_dev.py``'s folds; docs/benchmarks/corpus-dev.md, section
"Session 22"). It chooses no setting: the shipped settings and the default preset are
measured at 20, 30, 50 and 100 support rows, so the model card can say from how many rows
on a classical method catches up.

Per split (seeded as ``corpus_dev.py``'s, by set, repeat and support size), DEN with the
default preset (network adaptation on two-class tasks) and the random forest, small-data
gradient boosting and logistic regression with C by CV are fitted on the same support rows;
the record holds each one's query AUC, or with ``--multiclass`` (the 8 held-back multiclass
sets, fold 0's model, one class against the rest, not adapted, as the default preset fits
them) each one's accuracy. A support size that would leave fewer than 50 query rows is
skipped. The models are ``blend_dev.py``'s (pre-trained with the shipped settings on
each fold's training part):

    python docs/benchmarks/support_size_dev.py F RECORDS.jsonl [--multiclass] [--sizes 20,30,50,100]
        [--model NAME] [--data D] [--out O]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import corpus_dev  # noqa: E402

MIN_QUERY = 50


def main(argv=None) -> None:
    from den.evaluate import score, support_query_split
    from den.experiments import split_seed
    from den.train.config import adapt_config
    from den.train.finetune import fit_task

    parser = corpus_dev.dev_parser(__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20,30,50,100")
    parser.add_argument("--multiclass", action="store_true")
    parser.add_argument("--model", help="the model NAME under OUT/models (default: ref_fF)")
    args = parser.parse_args(argv)
    metric = "accuracy" if args.multiclass else "auc"
    model = corpus_dev.fold_model(args.out, args.fold, args.model)
    done = corpus_dev.recorded(args.records, ("dataset", "repeat", "n_support"))
    with args.records.open("a") as handle:
        for n_support in map(int, args.sizes.split(",")):
            split = corpus_dev.multiclass_split if args.multiclass else corpus_dev.split
            for name in split(args.data)[0]:
                task = corpus_dev.load(args.data, args.out, name)
                if len(task.y) - n_support < MIN_QUERY:
                    continue
                for repeat in range(corpus_dev.REPEATS):
                    if (name, repeat, n_support) in done:
                        continue
                    started = time.time()
                    seed = split_seed(corpus_dev.EVAL_SEED, f"{task.name}/{n_support}", repeat)
                    support, query = support_query_split(task.y, n_support, seed, corpus_dev.MAX_QUERY)
                    x, y = task.x[support], task.y[support]
                    record = {"dataset": name, "repeat": repeat, "n_support": n_support}
                    fitted = fit_task(model, x, y, task.n_classes, adapt_config(seed=seed, one_vs_rest=False),
                                      x_unlabeled=task.x[query])
                    record["den"] = score(task.y[query], fitted.proba(task.x[query]))[metric]
                    record.update(corpus_dev.classical_scores(x, y, task.x[query], task.y[query],
                                                              task.n_classes, seed, metric))
                    corpus_dev.write_record(handle, record, started)


if __name__ == "__main__":
    main()
