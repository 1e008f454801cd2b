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


def method_summary(scores: pd.DataFrame, metric: str, methods: list[str],
                   best_among: list[str] | None = None) -> pd.DataFrame:
    """Per method: mean and standard error (in %) over all (dataset, repeat) pairs, and the
    share of pairs where the method scores best (ties count for every tied method).

    Args:
        best_among: the methods the best is taken among (the paper's tables count "% Best"
            over the paper's methods only); a method outside them gets best_pct NaN. None:
            all of ``methods``.

    Returns:
        DataFrame indexed by method with columns mean, se, best_pct, n.
    """
    wide = scores.pivot_table(index=["dataset", "repeat"], columns="method", values=metric)
    wide = wide[[m for m in methods if m in wide.columns]]
    among = [m for m in (best_among or methods) if m in wide.columns]
    best = wide[among].max(axis=1)
    best_pct = 100 * wide.eq(best, axis=0).sum() / len(wide)
    out = pd.DataFrame({
        "mean": 100 * wide.mean(),
        "se": 100 * wide.std(ddof=1) / np.sqrt(wide.count()),
        "best_pct": best_pct.where(best_pct.index.isin(among)),
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
        DataFrame indexed by method with columns improvement, improvement_se and
        improvement_n (the splits paired).
    """
    keys = ["dataset", "repeat", "method"]
    both = scores[keys + [metric]].merge(baseline[keys + [metric]], on=keys, suffixes=("", "_base"))
    diff = 100 * (both[metric] - both[f"{metric}_base"])
    grouped = diff.groupby(both["method"])
    out = pd.DataFrame({"improvement": grouped.mean(),
                        "improvement_se": grouped.std(ddof=1) / np.sqrt(grouped.count()),
                        "improvement_n": grouped.count()})
    return out.reindex(methods)


def dataset_summary(scores: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per dataset and method: mean and standard error of ``metric`` (in %) over repeats."""
    keys = (["setting"] if "setting" in scores.columns else []) + ["dataset", "method"]
    grouped = scores.groupby(keys)[metric]
    out = pd.DataFrame({"mean": 100 * grouped.mean(),
                        "se": 100 * grouped.std(ddof=1) / np.sqrt(grouped.count()),
                        "repeats": grouped.count()})
    return out.reset_index()


def reference_differences(scores: pd.DataFrame, metric: str, method: str,
                          classical: list[str]) -> tuple[pd.DataFrame, dict]:
    """How a per-dataset table's reference method (DEN) compares with its classical methods.

    The best classical method is chosen once for the whole table: the classical method with the
    highest mean over the table's datasets of its per-dataset means (its "Mean" cell; a tie goes
    to the one listed first), not split by split nor dataset by dataset. The reference method is
    then paired with it split by split (the same dataset and repeat: splits are seeded by both).

    Args:
        scores: one row per evaluation of one setting: columns dataset, repeat, method and
            ``metric`` (values in [0, 1]), holding ``method`` and every ``classical`` method.
        metric: "auc" or "accuracy".
        method: the reference method, e.g. "den".
        classical: the classical methods it is compared with (at least one).

    Returns:
        (per_dataset, summary). per_dataset: DataFrame indexed by dataset (sorted, as the
        table's rows) with columns
            diff: the mean over repeats of the paired per-split difference ``method`` minus the
                best classical method, in points (% of the metric);
            diff_se: its standard error over those repeats;
            beats: whether ``method``'s mean over repeats, as printed (2 decimals), is above
                every classical method's.
        summary: dict with
            method: ``method``; best: the best classical method; classical: ``classical``;
            diff, diff_se: the mean of the per-dataset diffs and its standard error with
                datasets as the unit (their standard deviation / sqrt(datasets), NaN for one);
            beats: on how many datasets ``method`` beats every classical method;
            datasets: how many datasets there are.
    """
    classical = list(classical)
    if not classical:
        raise ValueError("reference_differences needs at least one classical method")
    means = 100 * scores.groupby(["dataset", "method"])[metric].mean().unstack("method")
    missing = [m for m in [method, *classical] if m not in means.columns]
    if missing:
        raise ValueError(f"no {metric} scores for {missing}")
    overall = means[classical].mean(axis=0)
    best = classical[int(np.argmax(overall.to_numpy()))]
    keys = ["dataset", "repeat"]
    mine = scores.loc[scores["method"] == method, keys + [metric]]
    theirs = scores.loc[scores["method"] == best, keys + [metric]]
    paired = mine.merge(theirs, on=keys, suffixes=("", "_best"))
    diff = 100 * (paired[metric] - paired[f"{metric}_best"])
    grouped = diff.groupby(paired["dataset"])
    shown = as_printed(means)
    per_dataset = pd.DataFrame({"diff": grouped.mean(),
                                "diff_se": grouped.std(ddof=1) / np.sqrt(grouped.count()),
                                "beats": shown[method] > shown[classical].max(axis=1)}).sort_index()
    per_dataset.index.name = "dataset"
    diffs = per_dataset["diff"].dropna()
    summary = {"method": method, "best": best, "classical": classical, "diff": float(diffs.mean()),
               "diff_se": float(diffs.std(ddof=1) / np.sqrt(len(diffs))) if len(diffs) > 1 else float("nan"),
               "beats": int(per_dataset["beats"].sum()), "datasets": len(per_dataset)}
    return per_dataset, summary


def reference_note(summary: dict, labels: dict[str, str]) -> str:
    """What the last column of a table with ``reference_differences`` holds (for its caption)."""
    def name(method):
        return labels.get(method, method)

    return (f"last column: {name(summary['method'])} minus the classical method with the highest mean "
            f"({name(summary['best'])}, of {', '.join(name(m) for m in summary['classical'])}), the mean "
            f"paired difference over splits (s.e. over repeats; on the Mean row mean and s.e. over "
            f"datasets), and on how many datasets {name(summary['method'])} beats every classical method")


REFERENCE_COLUMNS = {"diff": "diff_to_best_classical", "diff_se": "diff_to_best_classical_se",
                     "beats": "beats_all_classical"}


def with_reference(summary: pd.DataFrame, per_dataset: pd.DataFrame,
                   reference: tuple[pd.DataFrame, dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table's two CSVs with ``reference_differences``' numbers on the reference method's
    rows (empty on the others).

    Args:
        summary: ``method_summary`` (indexed by method): gets best_classical,
            diff_to_best_classical, diff_to_best_classical_se (datasets as the unit),
            beats_all_classical (a count) and datasets.
        per_dataset: ``dataset_summary`` rows (dataset, method, ...): get
            diff_to_best_classical, diff_to_best_classical_se (over repeats) and
            beats_all_classical (true/false).
    """
    per, info = reference
    row = pd.DataFrame({"best_classical": [info["best"]], REFERENCE_COLUMNS["diff"]: [info["diff"]],
                        REFERENCE_COLUMNS["diff_se"]: [info["diff_se"]],
                        REFERENCE_COLUMNS["beats"]: pd.array([info["beats"]], dtype="Int64"),
                        "datasets": pd.array([info["datasets"]], dtype="Int64")},
                       index=pd.Index([info["method"]], name=summary.index.name))
    rows = per.rename(columns=REFERENCE_COLUMNS).assign(method=info["method"]).reset_index()
    return summary.join(row), per_dataset.merge(rows, on=["dataset", "method"], how="left")


def _reference_cells(reference, labels: dict[str, str], datasets) -> tuple | None:
    """The last column of a per-dataset table with ``reference``: its head, a cell per dataset,
    the Mean cell and the Best on cell."""
    if reference is None:
        return None
    per_dataset, summary = reference

    def signed(value, se):
        if not np.isfinite(value):
            return "--"
        text = f"{value:+.2f}"  # a difference that prints as zero has no sign (float noise)
        return f"{'+0.00' if text == '-0.00' else text} ({_fmt(se)})"

    method, best = summary["method"], summary["best"]
    rows = {d: signed(per_dataset.at[d, "diff"], per_dataset.at[d, "diff_se"]) if d in per_dataset.index
            else "--" for d in datasets}
    beats = f"beats all on {summary['beats']} of {summary['datasets']}"
    return (f"{labels.get(method, method)} - {labels.get(best, best)}", rows,
            signed(summary["diff"], summary["diff_se"]), beats)


def _fmt(value: float, digits: int = 2) -> str:
    return "--" if not np.isfinite(value) else f"{value:.{digits}f}"


def as_printed(values):
    """``values`` (a number, Series or DataFrame) as a table prints them, 2 decimals, back as
    floats (``_fmt``'s text read back): the best of a row or column is judged on these, so two
    cells that print alike tie and a bold cell never prints below another. (pandas' ``round``
    scales by 100 and rounds halves to even, which disagrees with the printed text for about a
    quarter of the means of two repeats that end in 5.)"""
    def one(value):
        return float(_fmt(value)) if np.isfinite(value) else np.nan

    if isinstance(values, pd.DataFrame):
        return values.apply(lambda column: column.map(one))
    if isinstance(values, pd.Series):
        return values.map(one)
    return one(values)


def _note(text: str) -> str:
    """A small line of text under a LaTeX table."""
    return f"\\\\[2pt]{{\\footnotesize {text}}}"


def _booktabs(caption: str, label: str, align: str, head: str, body: list[str], notes=()) -> str:
    """A booktabs table: ``head`` and the ``body`` lines (rows ending in ``\\\\``, or rules)
    between the rules, column alignment ``align`` (e.g. "lcc"), then each note that is not
    None on a small line under it."""
    lines = ["\\begin{table}[t]", f"\\caption{{{caption}}}", f"\\label{{{label}}}", "\\begin{center}",
             f"\\begin{{tabular}}{{{align}}}", "\\toprule", head + " \\\\", "\\midrule", *body,
             "\\bottomrule", "\\end{tabular}", *(_note(note) for note in notes if note),
             "\\end{center}", "\\end{table}", ""]
    return "\n".join(lines)


def _among_note(methods: list[str], best_among: list[str] | None, labels: dict[str, str],
                judged: str = "bold") -> str | None:
    """The note under a table that names the methods its best (``judged``: what marks it) is
    taken among, where that is not all of them (None otherwise)."""
    if not best_among or set(methods) <= set(best_among):
        return None
    names = ", ".join(latex_escape(labels.get(m, m)) for m in methods if m in best_among)
    return f"The best ({judged}) is taken among {names}; the other rows are for comparison."


def latex_method_table(summary: pd.DataFrame, metric: str, labels: dict[str, str], caption: str,
                       label: str, best_among: list[str] | None = None) -> str:
    """A booktabs table like the paper's: method, "mean (s.e.)", % best; best in bold. With
    "improvement" columns in ``summary`` (see ``improvement``), a last column "Improv.". Where
    ties make the % best column add up to more than 100, a line under the table says why.

    Args:
        best_among: the methods the bold mean is chosen among (``method_summary``'s
            best_among, whose % best the others lack: "--"); a line under the table names
            them. None: all methods.
    """
    among = summary.index.isin(best_among) if best_among else np.ones(len(summary), bool)
    best_mean, best_pct = as_printed(summary["mean"][among]).max(), as_printed(summary["best_pct"]).max()
    extra = "improvement" in summary.columns
    ranked = len(summary) > 1  # one method is best everywhere: no % Best column
    head = f"Method & {METRIC_LABELS[metric]}" + (" & \\% Best" if ranked else "") + \
        (" & Improv. (\\%)" if extra else "")
    body = []
    for (method, row), judged in zip(summary.iterrows(), among):
        mean = _fmt(row["mean"])
        if judged and np.isfinite(row["mean"]) and as_printed(row["mean"]) == best_mean:
            mean = f"\\textbf{{{mean}}}"
        pct = _fmt(row["best_pct"]) + ("\\%" if np.isfinite(row["best_pct"]) else "")
        if as_printed(row["best_pct"]) == best_pct:
            pct = f"\\textbf{{{pct}}}"
        name = latex_escape(labels.get(method, method))
        cells = f"{name} & {mean} ({_fmt(row['se'])})" + (f" & {pct}" if ranked else "")
        if extra:
            cells += f" & {_fmt(row['improvement'])} ({_fmt(row['improvement_se'])})"
        body.append(cells + " \\\\")
    n = summary["improvement_n"].max() if "improvement_n" in summary.columns else np.nan
    notes = [extra and ("Improv.: the mean paired difference to the compared table over the splits both "
                        f"ran{f' ({n:g} per method)' if np.isfinite(n) else ''}, so it can differ from the "
                        "difference of the two tables' means."),
             ranked and summary["best_pct"].sum() > 100 + 1e-9 and (
                 "\\% Best: the share of splits where a method scores best; tied methods count each, so "
                 "the column adds up to more than 100\\%."),
             _among_note(list(summary.index), best_among, labels, "bold, \\% Best")]
    align = "lc" + "c" * ranked + ("c" if extra else "")
    return _booktabs(caption, label, align, head, body, notes)


def _dataset_grid(per_dataset: pd.DataFrame, methods: list[str], best_among: list[str] | None = None):
    """Means, standard errors, the bold mask (row best) and "datasets won" of a per-dataset table,
    each indexed by dataset (rows) and method (columns). The best is judged on the means as
    printed (2 decimals): equal as shown counts for each; with ``best_among``, among those
    methods only (the others are never bold and win nothing)."""
    means = per_dataset.pivot(index="dataset", columns="method", values="mean").reindex(columns=methods)
    ses = per_dataset.pivot(index="dataset", columns="method", values="se").reindex(columns=methods)
    shown = as_printed(means)
    judged = [m for m in methods if not best_among or m in best_among]
    best = shown.eq(shown[judged].max(axis=1), axis=0) & np.isin(methods, judged)[None, :]
    return means, ses, best, best.sum(axis=0)


def latex_dataset_columns_table(per_dataset: pd.DataFrame, methods: list[str], labels: dict[str, str],
                                caption: str, label: str, best_among: list[str] | None = None) -> str:
    """A booktabs table like the paper's tables 5, 7 and 8: a row per method, a column per
    dataset with the method's "mean (s.e.)" over repeats, the column's best mean in bold (as
    printed; among ``best_among`` where given, named in a line under the table).

    Args:
        per_dataset: ``dataset_summary`` of one setting: columns dataset, method, mean, se.
        methods: the methods, in row order.
    """
    means, ses, best, _ = _dataset_grid(per_dataset, methods, best_among)
    heads = [latex_escape(str(d)) for d in means.index]
    body = []
    for method in methods:
        shown = [_fmt(means.at[d, method]) for d in means.index]
        cells = [(f"\\textbf{{{mean}}}" if best.at[d, method] else mean) + f" ({_fmt(ses.at[d, method])})"
                 for mean, d in zip(shown, means.index)]
        body.append(latex_escape(labels.get(method, method)) + " & " + " & ".join(cells) + " \\\\")
    return _booktabs(caption, label, "l" + "c" * len(heads), "Method & " + " & ".join(heads), body,
                     [_among_note(methods, best_among, labels)])


def latex_dataset_table(per_dataset: pd.DataFrame, methods: list[str], labels: dict[str, str],
                        caption: str, label: str, reference: tuple[pd.DataFrame, dict] | None = None,
                        best_among: list[str] | None = None) -> str:
    """A booktabs table per dataset: a row each with every method's "mean (s.e.)" over repeats
    (the row's best in bold), then "Mean" (each method's mean over datasets) and "Best on"
    (on how many datasets the method has the row's best mean; ties count for each).

    Args:
        per_dataset: ``dataset_summary`` of one setting: columns dataset, method, mean, se.
        methods: the methods, in column order.
        reference: ``reference_differences``' (per_dataset, summary), or None: adds a last column
            "<reference method> - <best classical method>" with the mean paired difference per
            dataset (s.e. over repeats), on the Mean row its mean over datasets (s.e. over
            datasets) and on the Best on row "beats all on k of n" (datasets where the
            reference method beats every classical method).
        best_among: the methods the bold and "Best on" are judged among (a line under the
            table names them); None: all.
    """
    means, ses, best, wins = _dataset_grid(per_dataset, methods, best_among)
    overall = means.mean(axis=0)
    extra = _reference_cells(reference, labels, means.index)
    bold = "\\textbf{{{}}}".format
    heads = [latex_escape(labels.get(m, m)) for m in methods]
    heads += [latex_escape(extra[0]).replace(" - ", " $-$ ")] if extra else []
    body = []
    for dataset in means.index:
        cells = [f"{_fmt(means.at[dataset, m])} ({_fmt(ses.at[dataset, m])})" for m in methods]
        cells = [bold(c) if best.at[dataset, m] else c for c, m in zip(cells, methods)]
        cells += [extra[1][dataset]] if extra else []
        body.append(latex_escape(dataset) + " & " + " & ".join(cells) + " \\\\")
    body.append("\\midrule")
    judged = [m for m in methods if not best_among or m in best_among]
    shown = as_printed(overall)
    mean_cells = [bold(_fmt(overall[m])) if m in judged and shown[m] == shown[judged].max()
                  else _fmt(overall[m]) for m in methods]
    body.append("Mean & " + " & ".join(mean_cells + ([extra[2]] if extra else [])) + " \\\\")
    win_cells = [bold(wins[m]) if m in judged and wins[m] == wins.max() else
                 (str(wins[m]) if m in judged else "--") for m in methods]
    body.append("Best on & " + " & ".join(win_cells + ([extra[3]] if extra else [])) + " \\\\")
    return _booktabs(caption, label, "l" + "c" * len(heads), "Dataset & " + " & ".join(heads), body,
                     [_among_note(methods, best_among, labels)])


def markdown_dataset_table(per_dataset: pd.DataFrame, methods: list[str], labels: dict[str, str],
                           reference: tuple[pd.DataFrame, dict] | None = None) -> str:
    """The table of ``latex_dataset_table`` in Markdown (for docs): mean (s.e.) per dataset and
    method, the row's best in bold, then "Mean" and "Best on"; ``reference`` adds the same last
    column as there."""
    means, ses, best, wins = _dataset_grid(per_dataset, methods)
    overall = means.mean(axis=0)
    extra = _reference_cells(reference, labels, means.index)
    heads = [_markdown_cell(h) for h in [labels.get(m, m) for m in methods] + ([extra[0]] if extra else [])]
    lines = ["| Dataset | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for dataset in means.index:
        cells = [f"{_fmt(means.at[dataset, m])} ({_fmt(ses.at[dataset, m])})" for m in methods]
        cells = [f"**{c}**" if best.at[dataset, m] else c for c, m in zip(cells, methods)]
        cells += [extra[1][dataset]] if extra else []
        lines.append(f"| {_markdown_cell(dataset)} | " + " | ".join(cells) + " |")
    shown = as_printed(overall)
    mean_cells = [f"**{_fmt(overall[m])}**" if shown[m] == shown.max() else _fmt(overall[m])
                  for m in methods]
    lines.append("| Mean | " + " | ".join(mean_cells + ([extra[2]] if extra else [])) + " |")
    win_cells = [f"**{wins[m]}**" if wins[m] == wins.max() else str(wins[m]) for m in methods]
    lines.append("| Best on | " + " | ".join(win_cells + ([extra[3]] if extra else [])) + " |")
    return "\n".join(lines) + "\n"


def _markdown_cell(text) -> str:
    """Text for a Markdown table cell: a "|" would end the cell, so it is escaped."""
    return str(text).replace("|", "\\|")


def note_single_repeats(tex: str) -> str:
    """``tex`` with a line under its table saying what "(--)" means where a cell has no
    standard error (a single repeat), so a reader does not take it for a failure."""
    if "(--)" not in tex:
        return tex
    note = _note("(--): one scored repeat, so no standard error; such a cell is a single split's score.")
    return tex.replace("\\end{center}\n", note + "\n\\end{center}\n", 1)


def note_unscored(tex: str, scores: pd.DataFrame, metric: str) -> str:
    """``tex`` with a line under its table naming the splits that have no ``metric`` (e.g. an
    AUC where the query rows hold one class), which every mean and count leaves out; ``tex``
    unchanged when every split is scored."""
    missing = scores[scores[metric].isna()]
    if missing.empty:
        return tex
    where = missing.groupby("dataset")["repeat"].unique()
    listed = "; ".join(f"{latex_escape(d)} repeat{'s' if len(r) > 1 else ''} "
                       f"{', '.join(str(x) for x in sorted(r))}" for d, r in where.items())
    note = _note(f"{len(missing)} of {len(scores)} evaluations have no {metric} ({listed}) and are "
                 f"left out of every mean and count.")
    return tex.replace("\\end{center}\n", note + "\n\\end{center}\n", 1)


def describe_run(scores: pd.DataFrame, latex: bool = True, metric: str | None = None) -> str:
    """'k datasets (a, b, ...) x R repeats', so a small run is never taken for the paper's.
    With ``metric``, R counts the repeats scored on it (``note_unscored`` says what was not)."""
    datasets = sorted(scores["dataset"].unique())
    keys = (["setting"] if "setting" in scores.columns else []) + ["dataset", "method"]
    grouped = scores.groupby(keys)
    repeats = grouped.size() if metric is None else grouped[metric].count()  # count: not NaN
    r = f"{repeats.min()}" if repeats.min() == repeats.max() else f"{repeats.min()}-{repeats.max()}"
    sets = "dataset" if len(datasets) == 1 else "datasets"
    times = "repeat" if r == "1" else "repeats"
    if not latex:
        return f"{len(datasets)} {sets} ({', '.join(datasets)}) x {r} {times}"
    names = ", ".join(latex_escape(d) for d in datasets)
    return f"{len(datasets)} {sets} ({names}) $\\times$ {r} {times}"


_LATEX_SPECIAL = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#",
                  "_": "\\_", "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"}


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text (names of datasets and methods)."""
    return "".join(_LATEX_SPECIAL.get(char, char) for char in str(text))


def sweep_values(scores: pd.DataFrame) -> pd.DataFrame:
    """Split the "setting" column ("<key>-<value>", ``den.workflow_config.setting_name``) into
    key and value columns: the value as a number where every swept value is one (order-3,
    learning_rate-1e-05, shift--0.5), else as its text (gated_pooling-True, max_tuples-None).
    A key holds no "-" (settings are identifiers), so the value is whatever follows the first
    one."""
    parts = scores["setting"].str.split("-", n=1, expand=True)
    out = scores.copy()
    numbers = pd.to_numeric(parts[1], errors="coerce")
    out["sweep_key"] = parts[0]
    out["sweep_value"] = numbers if numbers.notna().all() else parts[1]
    return out


def _swept(value) -> str:
    """A swept value as a table row names it: a number compactly (1e-05, 3), a text as is."""
    return f"{value:g}" if isinstance(value, (int, float, np.number)) else latex_escape(value)


def sweep_summary(scores: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per (sweep_value, method, dataset): mean, se (standard error over repeats; NaN with
    one) and n of the metric in percent, as ``method_summary`` and the sweep table give them
    (a sweep table's CSV)."""
    grouped = (100 * sweep_values(scores).set_index(["sweep_value", "method", "dataset"])[metric]).groupby(
        level=[0, 1, 2])
    n = grouped.count()
    return pd.DataFrame({"mean": grouped.mean(), "se": grouped.std(ddof=1) / np.sqrt(n), "n": n})


def latex_sweep_table(scores: pd.DataFrame, metric: str, methods: list[str], caption: str, label: str,
                      labels: dict[str, str] | None = None) -> str:
    """Rows: swept values (one block of them per method, the method named in a first column
    where there are several); columns: datasets; cells "mean (s.e.)" (``sweep_summary``), the
    best mean of each column in bold (the ablation table of the dependency order r).

    A method the sweep does not change (a classical baseline) shows the same scores on each of
    its rows: a reference for the swept one.
    """
    key = sweep_values(scores)["sweep_key"].iloc[0]
    summary = sweep_summary(scores[scores["method"].isin(methods)], metric)
    mean, se = summary["mean"].unstack("dataset"), summary["se"].unstack("dataset")
    datasets, named = list(mean.columns), len(methods) > 1
    best = as_printed(mean).max(axis=0)
    head = " & ".join(["Method"] * named + [latex_escape(key)] + [latex_escape(d) for d in datasets])
    body = []
    for number, method in enumerate(methods):
        if number:
            body.append("\\midrule")
        rows = mean.xs(method, level="method")
        for row, value in enumerate(rows.index):
            cells = []
            for d in datasets:
                shown = _fmt(mean.loc[(value, method), d])
                if as_printed(mean.loc[(value, method), d]) == best[d]:
                    shown = f"\\textbf{{{shown}}}"
                cells.append(f"{shown} ({_fmt(se.loc[(value, method), d])})")
            name = latex_escape((labels or {}).get(method, method)) if row == 0 else ""
            first = f"{name} & " if named else ""
            body.append(f"{first}{_swept(value)} & " + " & ".join(cells) + " \\\\")
    return _booktabs(caption, label, "l" + "l" * named + "c" * len(datasets), head, body)


def plot_sweep(scores: pd.DataFrame, metric: str, methods: list[str], title: str):
    """Line plot of the metric against the swept value, one line per dataset (with s.e.), and
    per method where there are several (a method the sweep does not change is flat)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = sweep_values(scores[scores["method"].isin(methods)])
    fig, ax = plt.subplots(figsize=(5, 3.5))
    present = [m for m in methods if (data["method"] == m).any()]
    for method in present:
        for dataset, rows in data[data["method"] == method].groupby("dataset"):
            grouped = rows.groupby("sweep_value")[metric]
            mean, se = 100 * grouped.mean(), 100 * grouped.std(ddof=1).fillna(0) / np.sqrt(grouped.count())
            name = f"{dataset}, {method}" if len(methods) > 1 else dataset
            ax.errorbar(mean.index, mean.values, yerr=se.values, marker="o", capsize=3, label=name,
                        linestyle="-" if method == present[0] else "--")
    from matplotlib.ticker import MaxNLocator

    if pd.api.types.is_numeric_dtype(data["sweep_value"]):  # text values are categories
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # swept counts are whole numbers
    ax.set_xlabel(data["sweep_key"].iloc[0].replace("n_keypoints", "number of PLF keypoints"))
    ax.set_ylabel(f"average test {metric.upper() if metric == 'auc' else metric} (%)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def markdown_simulated_tasks(summaries: pd.DataFrame) -> str:
    """The report of the CNN zoo in Markdown: one row per simulated task (``summaries``: one
    ``den.simulate.cnn_zoo.task_summary`` per row) with its class cutoff, target and realised
    positive shares (train and test images) and its CNNs' accuracy and AUC as
    min / median / max, in percent."""
    def spread(row, name):
        return " / ".join(f"{100 * row[f'{name}_{s}']:.1f}" for s in ("min", "median", "max"))

    lines = ["| Task | Cutoff | Target share | Train share | Test share | CNNs | "
             "Accuracy % (min / median / max) | AUC % (min / median / max) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for _, row in summaries.iterrows():
        share = row["target_share"]
        target = "" if share is None or pd.isna(share) else f"{share:.2f}"
        lines.append(f"| {row['task']} | {row['class_cutoff']} of {row['n_classes']} | {target} | "
                     f"{row['train_share']:.3f} | {row['test_share']:.3f} | {row['cnns']} | "
                     f"{spread(row, 'accuracy')} | {spread(row, 'auc')} |")
    return "\n".join(lines) + "\n"
