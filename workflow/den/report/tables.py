"""Aggregating evaluation results into the paper's tables (LaTeX, booktabs) and CSVs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

METRIC_LABELS = {"auc": "Average Test AUC (\\%)", "accuracy": "Average Test Accuracy (\\%)"}


def collect(paths) -> pd.DataFrame:
    """One row per evaluation JSON (keys: method, dataset, repeat and the metrics)."""
    rows = []
    for path in paths:
        with open(path) as handle:
            rows.append(json.load(handle))
    if not rows:
        raise ValueError("no evaluation results to aggregate")
    return pd.DataFrame(rows)


def method_summary(scores: pd.DataFrame, metric: str, methods: list[str]) -> pd.DataFrame:
    """Per method: mean and standard error (in %) over all (dataset, repeat) pairs, and the
    share of pairs where the method scores best (ties count for every tied method).

    Returns:
        DataFrame indexed by method with columns mean, se, best_pct, n.
    """
    wide = scores.pivot_table(index=["dataset", "repeat"], columns="method", values=metric)
    wide = wide[[m for m in methods if m in wide.columns]]
    best = wide.max(axis=1)
    out = pd.DataFrame({
        "mean": 100 * wide.mean(),
        "se": 100 * wide.std(ddof=1) / np.sqrt(wide.count()),
        "best_pct": 100 * wide.eq(best, axis=0).sum() / len(wide),
        "n": wide.count(),
    })
    out.index.name = "method"
    return out


def dataset_summary(scores: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per dataset and method: mean and standard error of ``metric`` (in %) over repeats."""
    grouped = scores.groupby(["dataset", "method"])[metric]
    out = pd.DataFrame({"mean": 100 * grouped.mean(),
                        "se": 100 * grouped.std(ddof=1) / np.sqrt(grouped.count()),
                        "repeats": grouped.count()})
    return out.reset_index()


def _fmt(value: float, digits: int = 2) -> str:
    return "--" if not np.isfinite(value) else f"{value:.{digits}f}"


def latex_method_table(summary: pd.DataFrame, metric: str, labels: dict[str, str], caption: str,
                       label: str) -> str:
    """A booktabs table like the paper's: method, "mean (s.e.)", % best; best in bold."""
    best_mean, best_pct = summary["mean"].max(), summary["best_pct"].max()
    lines = ["\\begin{table}[t]", f"\\caption{{{caption}}}", f"\\label{{{label}}}", "\\begin{center}",
             "\\begin{tabular}{lcc}", "\\toprule",
             f"Method & {METRIC_LABELS[metric]} & \\% Best \\\\", "\\midrule"]
    for method, row in summary.iterrows():
        mean = _fmt(row["mean"])
        if np.isfinite(row["mean"]) and row["mean"] == best_mean:
            mean = f"\\textbf{{{mean}}}"
        pct = _fmt(row["best_pct"]) + "\\%"
        if row["best_pct"] == best_pct:
            pct = f"\\textbf{{{pct}}}"
        name = labels.get(method, method).replace("_", "\\_")
        lines.append(f"{name} & {mean} ({_fmt(row['se'])}) & {pct} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{center}", "\\end{table}", ""]
    return "\n".join(lines)


def describe_run(scores: pd.DataFrame) -> str:
    """'k datasets (a, b, ...) x R repeats', so a small run is never taken for the paper's."""
    datasets = sorted(scores["dataset"].unique())
    repeats = scores.groupby(["dataset", "method"]).size()
    r = f"{repeats.min()}" if repeats.min() == repeats.max() else f"{repeats.min()}-{repeats.max()}"
    return f"{len(datasets)} datasets ({', '.join(datasets)}) $\\times$ {r} repeats"
