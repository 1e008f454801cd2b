"""The benchmark page's Markdown tables (``docs/benchmarks/corpus.md``), from the score files of
a run of ``config/corpus.yaml``: per set, each method's mean (s.e.) over the repeats, the mean
and the sets won, and DEN's paired difference to the best classical method, exactly as rule
table computes them for the LaTeX tables (``den.report.tables``).

    python docs/benchmarks/corpus_tables.py [--results results] [--methods M ...]
        [--add EXPERIMENT:METHOD ...] [--reference-method M] corpus corpus_mc

Only splits that every listed method has finished count (a partial run is reported on the
splits it completed, and says how many); ``--methods`` (default: the table's methods that have
scores) restricts the columns. ``--add corpus_rdata:den_adapt`` adds another table's method as
a column named ``corpus_rdata:den_adapt``, on the same splits (its records must carry the same
split seeds, else it stops); ``--reference-method`` (e.g. that name) is the method paired with
the best classical one in the last column instead of the table's own. It prints the tables and
how many splits each covers.

``--scores FILE.csv`` adds kept per-split scores (columns ``SCORE_COLUMNS``, e.g.
``docs/benchmarks/corpus_meta_baselines.csv``) to the score files: a split that a run's files
hold is read from the files, the others from the CSV, so a run of the later splits is reported
with the earlier ones without rerunning them (a split seed that differs from another record of
the same dataset and repeat stops it). ``--write-scores FILE.csv`` writes the per-split scores
behind the printed tables in the same columns.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow"))

from den.report import tables  # noqa: E402
from den.workflow_config import experiments  # noqa: E402


def load_config() -> dict:
    """config/config.yaml with config/corpus.yaml merged over it, as snakemake merges them."""
    from snakemake.utils import update_config

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    update_config(config, yaml.safe_load((ROOT / "config" / "corpus.yaml").read_text()))
    return config


SCORE_COLUMNS = ["experiment", "method", "dataset", "repeat", "split_seed", "n_query", "auc", "accuracy"]


def experiment_scores(results: Path, experiment: str, kept: pd.DataFrame | None,
                      method: str | None = None) -> pd.DataFrame:
    """The per-split scores of ``experiment`` (setting base; one ``method`` or all): its score
    files under ``results``, plus the rows of ``kept`` (columns ``SCORE_COLUMNS``) for splits
    the files do not hold. Empty when there are none.

    Raises:
        SystemExit: two records of one dataset and repeat carry different split seeds.
    """
    pattern = "*/*.json" if method else "*/*/*.json"
    root = results / "scores" / experiment / "base" / (method or "")
    paths = sorted(root.glob(pattern))
    files = (tables.collect(paths).assign(experiment=experiment) if paths
             else pd.DataFrame(columns=SCORE_COLUMNS))
    scores = files
    if kept is not None:
        rows = kept[(kept["experiment"] == experiment) & ((kept["method"] == method) if method else True)]
        key = ["method", "dataset", "repeat"]
        held = pd.MultiIndex.from_frame(files[key]) if len(files) else None
        if held is not None:
            rows = rows[~pd.MultiIndex.from_frame(rows[key]).isin(held)]
        scores = pd.concat([files, rows], ignore_index=True) if len(rows) else files
    # every row is setting base (den.report.tables groups by setting, which kept rows lack)
    scores = scores.assign(setting="base", source_method=scores["method"])
    seeds = scores.groupby(["dataset", "repeat"])["split_seed"].nunique()
    if (seeds > 1).any():
        dataset, repeat = seeds[seeds > 1].index[0]
        raise SystemExit(f"{experiment}: {dataset} split {repeat} has two split seeds across the score "
                         f"files and --scores: not the same rows")
    return scores


def complete_splits(scores: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """The rows of ``scores`` on the (dataset, repeat) splits that every method has."""
    scores = scores[scores["method"].isin(methods)]
    counts = scores.groupby(["dataset", "repeat"])["method"].nunique()
    complete = counts[counts == len(methods)].index
    return scores.set_index(["dataset", "repeat"]).loc[complete].reset_index()


def added_scores(results: Path, scores: pd.DataFrame, added: list[str], labels: dict,
                 kept: pd.DataFrame | None = None) -> pd.DataFrame:
    """``scores`` with the rows of each ``EXPERIMENT:METHOD`` in ``added`` (that table's score
    files, setting base, and its rows of ``kept``) as method ``EXPERIMENT:METHOD``; ``labels``
    gains its label.

    Raises:
        SystemExit: a name without ':', no score files, or a split whose seed differs from the
            main table's for the same dataset and repeat (not the same rows).
    """
    frames = [scores]
    seeds = scores.groupby(["dataset", "repeat"])["split_seed"].first()
    for name in added:
        experiment, sep, method = name.partition(":")
        if not sep:
            raise SystemExit(f"--add {name}: write EXPERIMENT:METHOD, e.g. corpus_rdata:den_adapt")
        extra = experiment_scores(results, experiment, kept, method)
        if extra.empty:
            raise SystemExit(f"--add {name}: no score files under "
                             f"{results}/scores/{experiment}/base/{method}")
        key = extra.set_index(["dataset", "repeat"])["split_seed"]
        common = key.index.intersection(seeds.index)
        if (key.loc[common] != seeds.loc[common]).any():
            raise SystemExit(f"--add {name}: its splits are not the main table's (split seeds differ)")
        frames.append(extra.assign(method=name))
        labels[name] = f"{labels.get(method, method)} ({experiment})"
    return pd.concat(frames, ignore_index=True)


def table_scores(results: Path, name: str, spec: dict, labels: dict, methods: list[str] | None,
                 added: tuple[str, ...] | list[str] = (), kept: pd.DataFrame | None = None):
    """The per-split scores of table ``name`` on the splits every listed method completed, and
    those methods: (scores, methods). Every row keeps the experiment and method that scored it
    in columns ``experiment`` and ``source_method`` (an added method's ``method`` is its
    ``EXPERIMENT:METHOD`` name)."""
    scores = experiment_scores(results, name, kept)
    if scores.empty:
        raise SystemExit(f"{name}: no score files under {results}/scores/{name}/base and no rows in --scores")
    if added:
        scores = added_scores(results, scores, list(added), labels, kept)
    methods = [m for m in (methods or [*spec["methods"], *added]) if m in set(scores["method"])]
    scores = complete_splits(scores, methods)
    return scores, methods


def markdown_table(results: Path, name: str, spec: dict, labels: dict, methods: list[str] | None,
                   added: tuple[str, ...] | list[str] = (), reference_method: str | None = None,
                   kept: pd.DataFrame | None = None) -> str:
    scores, methods = table_scores(results, name, spec, labels, methods, added, kept)
    return render_table(scores, methods, name, spec, labels, reference_method)


def render_table(scores: pd.DataFrame, methods: list[str], name: str, spec: dict, labels: dict,
                 reference_method: str | None = None) -> str:
    """The Markdown table of ``table_scores``'s output, with its heading line."""
    metric = spec["metric"]
    reference = None
    reference_method = reference_method or spec["reference_method"]
    if spec["reference"] and reference_method in methods and set(spec["reference"]) <= set(methods):
        reference = tables.reference_differences(scores, metric, reference_method, spec["reference"])
    table = tables.markdown_dataset_table(tables.dataset_summary(scores, metric), methods, labels, reference)
    splits = scores.groupby("dataset")["repeat"].nunique()
    return (f"### {name}: {metric}, {len(splits)} sets, {int(splits.sum())} splits complete for all "
            f"{len(methods)} methods ({int(splits.min())}-{int(splits.max())} per set)\n\n{table}")


def read_kept_scores(paths: list[Path]) -> pd.DataFrame | None:
    """The rows of the ``--scores`` CSV files (None when there are none).

    Raises:
        SystemExit: a file that is missing or lacks one of ``SCORE_COLUMNS``.
    """
    if not paths:
        return None
    frames = []
    for path in paths:
        if not path.is_file():
            raise SystemExit(f"--scores {path}: no such file")
        frame = pd.read_csv(path)
        missing = [c for c in SCORE_COLUMNS if c not in frame.columns]
        if missing:
            raise SystemExit(f"--scores {path}: lacks column(s) {', '.join(missing)} "
                             f"(a file that --write-scores wrote has them)")
        frames.append(frame[SCORE_COLUMNS])
    return pd.concat(frames, ignore_index=True).drop_duplicates(["experiment", "method", "dataset", "repeat"])


def write_scores(scores: pd.DataFrame, path: Path) -> None:
    """Write the per-split rows of ``scores`` (each under the experiment and method that scored
    it, one row per evaluation) to ``path`` in ``SCORE_COLUMNS``, sorted; written whole or not
    at all."""
    out = scores.assign(method=scores["source_method"]).reindex(columns=SCORE_COLUMNS)
    out = out.drop_duplicates(["experiment", "method", "dataset", "repeat"])
    out = out.sort_values(["experiment", "method", "dataset", "repeat"])
    partial = path.with_name(path.name + ".partial")
    out.to_csv(partial, index=False, float_format="%.6f")
    partial.replace(path)
    print(f"wrote {len(out)} per-split scores to {path}", file=sys.stderr)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="+")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--methods", nargs="+")
    parser.add_argument("--add", nargs="+", default=[], metavar="EXPERIMENT:METHOD")
    parser.add_argument("--reference-method")
    parser.add_argument("--scores", nargs="+", type=Path, default=[], metavar="FILE.csv")
    parser.add_argument("--write-scores", type=Path, metavar="FILE.csv")
    args = parser.parse_args(argv)
    config = load_config()
    specs = experiments(config)
    labels = {m: s.get("label", m) for m, s in config["methods"].items()}
    kept = read_kept_scores(args.scores)
    written = []
    for name in args.experiments:
        scores, methods = table_scores(args.results, name, specs[name], labels, args.methods, args.add, kept)
        print(render_table(scores, methods, name, specs[name], labels, args.reference_method))
        written.append(scores)
    if args.write_scores:
        write_scores(pd.concat(written, ignore_index=True), args.write_scores)
    return 0


if __name__ == "__main__":
    sys.exit(main())
