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


def improvement(scores: pd.DataFrame, baseline: pd.DataFrame, metric: str,
                methods: list[str]) -> pd.DataFrame:
    """Per method: mean and standard error (in %) of the paired difference ``scores - baseline``
    over the (dataset, repeat) pairs both hold (the same splits: splits are seeded by dataset
    and repeat). Methods missing from ``baseline`` get NaN.

    Returns:
        DataFrame indexed by method with columns improvement, improvement_se.
    """
    keys = ["dataset", "repeat", "method"]
    both = scores[keys + [metric]].merge(baseline[keys + [metric]], on=keys, suffixes=("", "_base"))
    diff = 100 * (both[metric] - both[f"{metric}_base"])
    grouped = diff.groupby(both["method"])
    out = pd.DataFrame({"improvement": grouped.mean(),
                        "improvement_se": grouped.std(ddof=1) / np.sqrt(grouped.count())})
    return out.reindex(methods)


def dataset_summary(scores: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per dataset and method: mean and standard error of ``metric`` (in %) over repeats."""
    keys = (["setting"] if "setting" in scores.columns else []) + ["dataset", "method"]
    grouped = scores.groupby(keys)[metric]
    out = pd.DataFrame({"mean": 100 * grouped.mean(),
                        "se": 100 * grouped.std(ddof=1) / np.sqrt(grouped.count()),
                        "repeats": grouped.count()})
    return out.reset_index()


def _fmt(value: float, digits: int = 2) -> str:
    return "--" if not np.isfinite(value) else f"{value:.{digits}f}"


def latex_method_table(summary: pd.DataFrame, metric: str, labels: dict[str, str], caption: str,
                       label: str) -> str:
    """A booktabs table like the paper's: method, "mean (s.e.)", % best; best in bold. With
    "improvement" columns in ``summary`` (see ``improvement``), a last column "Improv.".
    """
    best_mean, best_pct = summary["mean"].max(), summary["best_pct"].max()
    extra = "improvement" in summary.columns
    head = f"Method & {METRIC_LABELS[metric]} & \\% Best" + (" & Improv. (\\%)" if extra else "")
    lines = ["\\begin{table}[t]", f"\\caption{{{caption}}}", f"\\label{{{label}}}", "\\begin{center}",
             "\\begin{tabular}{lcc" + ("c" if extra else "") + "}", "\\toprule", head + " \\\\", "\\midrule"]
    for method, row in summary.iterrows():
        mean = _fmt(row["mean"])
        if np.isfinite(row["mean"]) and row["mean"] == best_mean:
            mean = f"\\textbf{{{mean}}}"
        pct = _fmt(row["best_pct"]) + "\\%"
        if row["best_pct"] == best_pct:
            pct = f"\\textbf{{{pct}}}"
        name = latex_escape(labels.get(method, method))
        cells = f"{name} & {mean} ({_fmt(row['se'])}) & {pct}"
        if extra:
            cells += f" & {_fmt(row['improvement'])} ({_fmt(row['improvement_se'])})"
        lines.append(cells + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{center}", "\\end{table}", ""]
    return "\n".join(lines)


def _dataset_grid(per_dataset: pd.DataFrame, methods: list[str]):
    """Means, standard errors, the bold mask (row best) and "datasets won" of a per-dataset table.
    The best is judged on the means as printed (2 decimals): equal as shown counts for each."""
    means = per_dataset.pivot(index="dataset", columns="method", values="mean").reindex(columns=methods)
    ses = per_dataset.pivot(index="dataset", columns="method", values="se").reindex(columns=methods)
    shown = means.round(2)
    best = shown.eq(shown.max(axis=1), axis=0)
    return means, ses, best, best.sum(axis=0)


def latex_dataset_table(per_dataset: pd.DataFrame, methods: list[str], labels: dict[str, str],
                        caption: str, label: str) -> str:
    """A booktabs table per dataset: a row each with every method's "mean (s.e.)" over repeats
    (the row's best in bold), then "Mean" (each method's mean over datasets) and "Best on"
    (on how many datasets the method has the row's best mean; ties count for each).

    Args:
        per_dataset: ``dataset_summary`` of one setting: columns dataset, method, mean, se.
        methods: the methods, in column order.
    """
    means, ses, best, wins = _dataset_grid(per_dataset, methods)
    overall = means.mean(axis=0)
    bold = "\\textbf{{{}}}".format
    head = "Dataset & " + " & ".join(latex_escape(labels.get(m, m)) for m in methods)
    lines = ["\\begin{table}[t]", f"\\caption{{{caption}}}", f"\\label{{{label}}}", "\\begin{center}",
             "\\begin{tabular}{l" + "c" * len(methods) + "}", "\\toprule", head + " \\\\", "\\midrule"]
    for dataset in means.index:
        cells = [f"{_fmt(means.at[dataset, m])} ({_fmt(ses.at[dataset, m])})" for m in methods]
        cells = [bold(c) if best.at[dataset, m] else c for c, m in zip(cells, methods)]
        lines.append(latex_escape(dataset) + " & " + " & ".join(cells) + " \\\\")
    lines.append("\\midrule")
    lines.append("Mean & " + " & ".join(bold(_fmt(overall[m])) if overall[m] == overall.max()
                                        else _fmt(overall[m]) for m in methods) + " \\\\")
    lines.append("Best on & " + " & ".join(bold(wins[m]) if wins[m] == wins.max() else str(wins[m])
                                           for m in methods) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{center}", "\\end{table}", ""]
    return "\n".join(lines)


def markdown_dataset_table(per_dataset: pd.DataFrame, methods: list[str], labels: dict[str, str]) -> str:
    """The table of ``latex_dataset_table`` in Markdown (for docs): mean (s.e.) per dataset and
    method, the row's best in bold, then "Mean" and "Best on"."""
    means, ses, best, wins = _dataset_grid(per_dataset, methods)
    overall = means.mean(axis=0)
    lines = ["| Dataset | " + " | ".join(labels.get(m, m) for m in methods) + " |",
             "|---|" + "---:|" * len(methods)]
    for dataset in means.index:
        cells = [f"{_fmt(means.at[dataset, m])} ({_fmt(ses.at[dataset, m])})" for m in methods]
        cells = [f"**{c}**" if best.at[dataset, m] else c for c, m in zip(cells, methods)]
        lines.append(f"| {dataset} | " + " | ".join(cells) + " |")
    lines.append("| Mean | " + " | ".join(f"**{_fmt(overall[m])}**" if overall[m] == overall.max()
                                          else _fmt(overall[m]) for m in methods) + " |")
    lines.append("| Best on | " + " | ".join(f"**{wins[m]}**" if wins[m] == wins.max() else str(wins[m])
                                             for m in methods) + " |")
    return "\n".join(lines) + "\n"


def describe_run(scores: pd.DataFrame, latex: bool = True) -> str:
    """'k datasets (a, b, ...) x R repeats', so a small run is never taken for the paper's."""
    datasets = sorted(scores["dataset"].unique())
    keys = (["setting"] if "setting" in scores.columns else []) + ["dataset", "method"]
    repeats = scores.groupby(keys).size()
    r = f"{repeats.min()}" if repeats.min() == repeats.max() else f"{repeats.min()}-{repeats.max()}"
    if not latex:
        return f"{len(datasets)} datasets ({', '.join(datasets)}) x {r} repeats"
    names = ", ".join(latex_escape(d) for d in datasets)
    return f"{len(datasets)} datasets ({names}) $\\times$ {r} repeats"


_LATEX_SPECIAL = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#",
                  "_": "\\_", "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"}


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text (names of datasets and methods)."""
    return "".join(_LATEX_SPECIAL.get(char, char) for char in str(text))


def sweep_values(scores: pd.DataFrame) -> pd.DataFrame:
    """Split the "setting" column ("<key>-<value>") into key and numeric value columns."""
    parts = scores["setting"].str.rsplit("-", n=1, expand=True)
    out = scores.copy()
    out["sweep_key"], out["sweep_value"] = parts[0], pd.to_numeric(parts[1])
    return out


def latex_sweep_table(scores: pd.DataFrame, metric: str, method: str, caption: str, label: str) -> str:
    """Rows: swept values; columns: datasets; cells "mean (s.e.)" of ``method``, best per
    column in bold (the ablation table of the dependency order r)."""
    data = sweep_values(scores[scores["method"] == method])
    key = data["sweep_key"].iloc[0]
    grouped = data.groupby(["sweep_value", "dataset"])[metric]
    mean = (100 * grouped.mean()).unstack("dataset")
    se = (100 * grouped.std(ddof=1) / np.sqrt(grouped.count())).unstack("dataset")
    datasets = list(mean.columns)
    lines = ["\\begin{table}[t]", f"\\caption{{{caption}}}", f"\\label{{{label}}}", "\\begin{center}",
             "\\begin{tabular}{l" + "c" * len(datasets) + "}", "\\toprule",
             latex_escape(key) + " & " + " & ".join(latex_escape(d) for d in datasets) + " \\\\", "\\midrule"]
    for value in mean.index:
        cells = []
        for d in datasets:
            text = f"{_fmt(mean.loc[value, d])} ({_fmt(se.loc[value, d])})"
            if mean.loc[value, d] == mean[d].max():
                text = f"\\textbf{{{_fmt(mean.loc[value, d])}}} ({_fmt(se.loc[value, d])})"
            cells.append(text)
        label_value = f"{value:g}"
        lines.append(f"{label_value} & " + " & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{center}", "\\end{table}", ""]
    return "\n".join(lines)


def plot_sweep(scores: pd.DataFrame, metric: str, method: str, title: str):
    """Line plot of the metric against the swept value, one line per dataset (with s.e.)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = sweep_values(scores[scores["method"] == method])
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for dataset, rows in data.groupby("dataset"):
        grouped = rows.groupby("sweep_value")[metric]
        mean, se = 100 * grouped.mean(), 100 * grouped.std(ddof=1).fillna(0) / np.sqrt(grouped.count())
        ax.errorbar(mean.index, mean.values, yerr=se.values, marker="o", capsize=3, label=dataset)
    ax.set_xlabel(data["sweep_key"].iloc[0].replace("n_keypoints", "number of PLF keypoints"))
    ax.set_ylabel(f"average test {metric.upper() if metric == 'auc' else metric} (%)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
