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


def complete_splits(scores: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """The rows of ``scores`` on the (dataset, repeat) splits that every method has."""
    scores = scores[scores["method"].isin(methods)]
    counts = scores.groupby(["dataset", "repeat"])["method"].nunique()
    complete = counts[counts == len(methods)].index
    return scores.set_index(["dataset", "repeat"]).loc[complete].reset_index()


def added_scores(results: Path, scores: pd.DataFrame, added: list[str], labels: dict) -> pd.DataFrame:
    """``scores`` with the rows of each ``EXPERIMENT:METHOD`` in ``added`` (that table's score
    files, setting base) as method ``EXPERIMENT:METHOD``; ``labels`` gains its label.

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
        paths = sorted((results / "scores" / experiment / "base" / method).glob("*/*.json"))
        if not paths:
            raise SystemExit(f"--add {name}: no score files under "
                             f"{results}/scores/{experiment}/base/{method}")
        extra = tables.collect(paths)
        key = extra.set_index(["dataset", "repeat"])["split_seed"]
        common = key.index.intersection(seeds.index)
        if (key.loc[common] != seeds.loc[common]).any():
            raise SystemExit(f"--add {name}: its splits are not the main table's (split seeds differ)")
        frames.append(extra.assign(method=name))
        labels[name] = f"{labels.get(method, method)} ({experiment})"
    return pd.concat(frames, ignore_index=True)


def markdown_table(results: Path, name: str, spec: dict, labels: dict, methods: list[str] | None,
                   added: tuple[str, ...] | list[str] = (), reference_method: str | None = None) -> str:
    paths = sorted((results / "scores" / name / "base").glob("*/*/*.json"))
    scores = tables.collect(paths)
    if added:
        scores = added_scores(results, scores, list(added), labels)
    methods = [m for m in (methods or [*spec["methods"], *added]) if m in set(scores["method"])]
    scores = complete_splits(scores, methods)
    metric = spec["metric"]
    reference = None
    reference_method = reference_method or spec["reference_method"]
    if spec["reference"] and reference_method in methods and set(spec["reference"]) <= set(methods):
        reference = tables.reference_differences(scores, metric, reference_method, spec["reference"])
    table = tables.markdown_dataset_table(tables.dataset_summary(scores, metric), methods, labels, reference)
    splits = scores.groupby("dataset")["repeat"].nunique()
    return (f"### {name}: {metric}, {len(splits)} sets, {int(splits.sum())} splits complete for all "
            f"{len(methods)} methods ({int(splits.min())}-{int(splits.max())} per set)\n\n{table}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="+")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--methods", nargs="+")
    parser.add_argument("--add", nargs="+", default=[], metavar="EXPERIMENT:METHOD")
    parser.add_argument("--reference-method")
    args = parser.parse_args(argv)
    config = load_config()
    specs = experiments(config)
    labels = {m: s.get("label", m) for m, s in config["methods"].items()}
    for name in args.experiments:
        print(markdown_table(args.results, name, specs[name], labels, args.methods, args.add,
                             args.reference_method))
    return 0


if __name__ == "__main__":
    sys.exit(main())
