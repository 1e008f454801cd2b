"""Command line: ``python -m den {predict,pretrain,info}`` (also installed as ``den``)."""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import sys
import warnings
from pathlib import Path

from den.errors import DENError, DENInputError, DENInputWarning, DENWarning, name_settings
from den.logs import on_sigterm
from den.pretrained import (
    ADAPT_NETWORK_LEARNING_RATE,
    ADAPT_NETWORK_STEPS,
    FINETUNE_TUPLES_PER_STEP,
    PRESETS,
    SHIPPED_MODELS,
)

# A query whose encoded features (float64) take more bytes than this waits for its scoring in an
# unnamed temporary file (``den.io.SpooledRows``, in $TMPDIR), not in memory beside TensorFlow:
# a 1M-row query of 20 features holds 160 MB.
SPOOL_QUERY_BYTES = 64 << 20

DESCRIPTION = """\
Distribution Embedding Networks (DEN) for classification with small data.

  den pretrain   pre-train a DEN on a directory of CSV tasks
  den predict    fine-tune a pre-trained DEN on a small labelled CSV and predict another CSV
  den info       show a saved model's hyperparameters and what it was pre-trained on

Run `den COMMAND --help` for the options of each command."""


def _tuples_per_step(text: str) -> int | None:
    """--finetune-tuples-per-step: a whole number >= 1, or 'all' (None: every tuple)."""
    if text.strip().lower() == "all":
        return None
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"a whole number of tuples (1 or more) or 'all', got {text!r}")
    return count


def _user_path(text: str) -> str:
    """A path option's value with a leading ``~`` or ``~user`` expanded, as the shell does for a
    word of its own but not after ``--out=``; pandas expands it on reading, and so must the files
    written and the checks that come first."""
    return os.path.expanduser(text)


def _add_finetune_options(parser):
    group = parser.add_argument_group("fine-tuning (the network's weights; with 'paper', the "
                                      "per-feature calibration PLFs)")
    group.add_argument("--preset", choices=list(PRESETS), default="default",
                       help="'default': the preset validated on held-back corpus sets (the shipped "
                            "PLF-free model; a two-class task adapts its network to the support "
                            "set, a task of more classes is not fine-tuned; docs/model-card.md); "
                            "'fast': no fine-tuning (a fit in milliseconds); 'paper': fine-tune the "
                            "shipped PLF model on the paper's schedule (the --finetune-* defaults: 10 x 10 "
                            "steps at 0.001, each on a sample of --finetune-tuples-per-step tuples); "
                            "'adapt': network adaptation on every task, each class of a multiclass "
                            "one too (--finetune-network-*). Default: default")
    group.add_argument("--variant", choices=["den", "no_finetune", "adapt"], default=None,
                       help="overrides the preset's variant (the preset still says whether a task of "
                            "3+ classes adapts: 'default' does not, 'adapt' does): 'den' fine-tunes the "
                            "calibration on the support "
                            "set with the --finetune-* settings; 'no_finetune' keeps identity PLFs "
                            "(DEN w/o fine-tuning); 'adapt' trains the task's own copy of the "
                            "network on the support set. Default: the preset's")
    group.add_argument("--finetune-epochs", type=int, default=10, metavar="N",
                       help="passes over the support set (default: 10, as in the paper)")
    group.add_argument("--finetune-steps-per-epoch", type=int, default=10, metavar="N",
                       help="random support/query halvings of the support set per epoch (default: 10)")
    group.add_argument("--finetune-learning-rate", type=float, default=0.001, metavar="LR",
                       help="Adam learning rate of the PLF parameters (default: 0.001)")
    group.add_argument("--finetune-ensemble", type=int, default=1, metavar="K",
                       help="fine-tune K times (seeds SEED..SEED+K-1) and average the predicted "
                            "probabilities (default: 1, as in the paper)")
    group.add_argument("--finetune-early-stopping", action="store_true",
                       help="choose the number of epochs (at most --finetune-epochs) by K-fold "
                            "cross-validation on the support set, K = --finetune-ensemble (>= 2); "
                            "default: off, as in the paper")
    group.add_argument("--finetune-early-stopping-tolerance", type=float, default=0.0, metavar="SE",
                       help="with --finetune-early-stopping, keep the earliest epoch within SE "
                            "standard errors of the best one (1: a paired one-standard-error rule; "
                            "default: 0, the best epoch)")
    group.add_argument("--finetune-output-scaling", action="store_true",
                       help="binary tasks: also learn a logit scale and bias, started from a Platt "
                            "fit of the pre-trained model's logits, so fine-tuning answers to "
                            "ranking (default: off, as in the paper)")
    group.add_argument("--finetune-output-scaling-learning-rate", type=float, default=0.1,
                       metavar="LR", help="learning rate of that scale and bias (default: 0.1)")
    group.add_argument("--finetune-feature-counts", type=int, nargs="+", default=(), metavar="K",
                       help="with --finetune-early-stopping, also cross-validate DEN on only the K "
                            "features that alone rank the support rows best, for each K given, and "
                            "keep the candidate with the lowest held-out loss (default: all "
                            "features only, as in the paper)")
    group.add_argument("--finetune-feature-counts-tolerance", type=float, default=0.0, metavar="SE",
                       help="a subset replaces all features only if its held-out loss is lower by "
                            "more than SE standard errors (default: 0, the lowest loss)")
    group.add_argument("--finetune-tuples-per-step", type=_tuples_per_step, metavar="T|all",
                       default=FINETUNE_TUPLES_PER_STEP,
                       help="each fine-tuning step reads a fresh random sample of T of the task's "
                            "feature tuples, about (tuples / T) times less work a step; prediction "
                            "still reads them all; 'all': every tuple, as in the paper (default: "
                            f"{FINETUNE_TUPLES_PER_STEP})")
    group.add_argument("--finetune-network-steps", type=int, default=ADAPT_NETWORK_STEPS, metavar="N",
                       help="presets 'default' and 'adapt': Adam steps of the network's weights, "
                            f"each on a random halving of the support set (default: {ADAPT_NETWORK_STEPS})")
    group.add_argument("--finetune-network-learning-rate", type=float, metavar="LR",
                       default=ADAPT_NETWORK_LEARNING_RATE,
                       help=f"their learning rate (default: {ADAPT_NETWORK_LEARNING_RATE:g})")
    group.add_argument("--seed", type=int, default=0, help="seed of fine-tuning (default: 0)")


def package_version() -> str:
    """The installed distribution's version; ``den.__version__`` in a source tree not installed."""
    try:
        return importlib.metadata.version("den-workflow")
    except importlib.metadata.PackageNotFoundError:
        from den import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="den", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}",
                        help="print the package version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "predict", help="fine-tune on a labelled CSV and predict the rows of another CSV",
        description="Fine-tune a pre-trained DEN on a small labelled table (the support set) "
                    "and write class predictions and probabilities for every row of a query "
                    "table. Feature columns may hold numbers, booleans, dates (2021-01-31), strings "
                    "(categories) and blanks or '?' (missing). Files may be comma-, semicolon-, tab- or "
                    "'|'-separated (decimal commas in ';' and tab files), UTF-8, Windows-1252 or "
                    "UTF-16, and compressed (gzip, zip, xz, bzip2). The query needs "
                    "the support's feature columns (any order); its other columns (a target, "
                    "an id) are ignored, and --keep-query-columns copies all of its columns (or "
                    "those it names), as written, to the output. Every support column but the "
                    "target is a feature, except those --ignore-columns names (an id).")
    p.add_argument("--model", metavar="PATH", type=_user_path,
                   help="pre-trained DEN model file (from `den pretrain`); default: the model "
                        "shipped with the package for --preset (docs/model-card.md)")
    p.add_argument("--support", required=True, metavar="CSV", type=_user_path,
                   help="labelled rows (with the target column)")
    p.add_argument("--target", required=True, metavar="COLUMN", help="name of the label column in --support")
    p.add_argument("--query", required=True, metavar="CSV", type=_user_path,
                   help="rows to predict; by default their feature values (no labels) also "
                        "set each feature's keypoint span with the support rows', as in the "
                        "benchmark (DENClassifier.fit's X_unlabeled), so a row's probabilities "
                        "depend on the other rows of the file too (see --keypoints-from)")
    p.add_argument("--keypoints-from", choices=("support_and_query", "support"),
                   default="support_and_query",
                   help="rows that set each feature's keypoints: support_and_query (default; "
                        "what the benchmark and docs/model-card.md measured) or support (the "
                        "support rows alone: each query row is scored on its own, the same "
                        "in any file, as when the query is split into parts)")
    p.add_argument("--out", required=True, metavar="CSV", type=_user_path,
                   help="output: one row per query row with 'prediction' and 'proba_<class>' "
                        "columns, written atomically (nothing is written on error); comma-"
                        "separated, tab-separated for a name ending .tsv; a name ending .gz, "
                        ".bz2, .xz or .zip is compressed so; '-' writes to standard output")
    p.add_argument("--ignore-columns", nargs="+", metavar="COLUMN", default=[],
                   help="support columns that are not features (an id, a row number, a date of "
                        "entry): DEN leaves them out, and the query need not have them (default: "
                        "every support column but --target is a feature)")
    p.add_argument("--keep-query-columns", nargs="*", metavar="COLUMN",
                   help="copy the query's columns into the output before the predictions, as the "
                        "query file writes them (an id 007 stays 007): all of them, or those named "
                        "(e.g. --keep-query-columns id), which on a large file takes far less memory")
    p.add_argument("--chunk-rows", type=int, metavar="N",
                   help="query rows the network scores at once, which bounds its working memory (default: "
                        "chosen from the numbers of feature tuples and support rows); the query file itself "
                        "is read whole and encoded before TensorFlow loads, and encoded rows over 64 MiB (8 "
                        "bytes a feature) wait for their scoring in a temporary file in $TMPDIR")
    p.add_argument("--min-support-rows", type=int, default=10, metavar="N",
                   help="refuse support sets with fewer labelled rows (default: 10)")
    _add_finetune_options(p)

    p = sub.add_parser(
        "pretrain", help="pre-train a DEN on a directory of CSV tasks",
        description="Pre-train DEN episodically on every *.csv and *.csv.gz file of a directory, "
                    "each a classification task with its own number of features (read as `den "
                    "predict` reads its files). Progress goes to stderr; a checkpoint directory "
                    "lets a stopped run resume where it stopped.")
    p.add_argument("--tasks", required=True, metavar="DIR", type=_user_path,
                   help="directory of CSV files (.csv, .csv.gz), one task each; other entries are "
                        "left out, with a line that names them")
    p.add_argument("--target", default="target", metavar="COLUMN",
                   help="label column, the same name in every file (default: target)")
    p.add_argument("--out", required=True, metavar="PATH", type=_user_path, help="model file to write (.npz)")
    p.add_argument("--checkpoint-dir", metavar="DIR", type=_user_path,
                   help="checkpoints for resuming (default: OUT.checkpoint, removed after success); "
                        "a new or empty directory, or one of an earlier run's: one holding other "
                        "files is refused; "
                        "Ctrl-C (or SIGTERM) finishes the step under way, checkpoints it and exits "
                        "with 130")
    p.add_argument("--checkpoint-every", type=int, default=500, metavar="N",
                   help="steps between checkpoints (default: 500)")
    p.add_argument("--restart", action="store_true",
                   help="a checkpoint directory of another run (other tasks, data or settings) is "
                        "deleted and the run starts over (default: such a directory is an error "
                        "that says what differs)")
    p.add_argument("--generated-tasks", type=int, default=0, metavar="N",
                   help="also pre-train on N generated tasks (den.data.synthetic: 500-2000 rows, "
                        "3-25 features, seeded by --seed); worth it with few tasks of your own: "
                        "40 lifted DEN with 8 real tasks, not with 15 (config/README.md; default: 0)")
    g = p.add_argument_group("model (defaults: the paper's appendix B)")
    g.add_argument("--head", choices=["binary", "multiclass"],
                   help="classifier head (default: binary if every task has 2 classes or cuts are "
                        "asked for, else multiclass)")
    g.add_argument("--model-config", metavar="FILE", type=_user_path,
                   help="the architecture of a model file (.npz, e.g. the shipped one: `den info` "
                        "prints it) or of a JSON file of its keys (den.model.config.ModelConfig, as "
                        "`den info` prints them under \"config\"); the options below that are given "
                        "override it, and --seed (default 0) sets the initial weights (without this "
                        "option: the paper's architecture)")
    g.add_argument("--max-classes", type=int, default=None, metavar="L",
                   help="most classes the multiclass head predicts (default: 10)")
    g.add_argument("--order", type=int, default=None, metavar="R",
                   help="dependency order r, 1..8 (default: 2)")
    g.add_argument("--keypoints", type=int, default=None, metavar="K",
                   help="PLF keypoints per feature (default: 10)")
    g.add_argument("--keypoint-placement", choices=["uniform", "quantile"], default=None,
                   help="keypoints evenly over each feature's range or at its quantiles (default: uniform)")
    g.add_argument("--no-calibration", action="store_true", default=None,
                   help="no PLF block (the 'DEN w/o PLF' variant)")
    g.add_argument("--multiclass-cuts", type=int, default=0, metavar="K",
                   help="binary head: each task of more than two classes becomes K binary tasks, "
                        "random bipartitions of its classes (the shipped models: 4; default: 0, "
                        "such a task is an error)")
    g.add_argument("--one-vs-rest-cuts", type=int, default=0, metavar="J",
                   help="binary head: each task of more than two classes also gives J tasks of "
                        "one class against the rest (default: 0)")
    t = p.add_argument_group("training")
    t.add_argument("--steps", type=int, default=10000, help="gradient steps (default: 10000)")
    t.add_argument("--query-rows", type=int, default=256, metavar="N", help="batch A size (default: 256)")
    t.add_argument("--support-rows", type=int, default=256, metavar="N", help="batch B size (default: 256)")
    t.add_argument("--support-rows-min", type=int, metavar="N",
                   help="draw batch B's size from [N, --support-rows] each step (default: fixed)")
    t.add_argument("--max-covariates", type=int, default=25, metavar="C",
                   help="covariate sampling: at most C features per step (default: 25)")
    t.add_argument("--learning-rate", type=float, default=1e-3, metavar="LR",
                   help="Adam learning rate (default: 0.001)")
    t.add_argument("--seed", type=int, default=0, help="seed of initialisation and episodes (default: 0)")
    t.add_argument("--quiet", action="store_true", help="no progress lines")

    p = sub.add_parser("info", help="show a saved model's settings",
                       description="Print a saved model's hyperparameters and metadata as JSON.")
    p.add_argument("model", metavar="PATH", nargs="?", type=_user_path,
                   help="model file (default: the model shipped with the package that --preset uses)")
    p.add_argument("--preset", choices=list(PRESETS), default=None,
                   help="without PATH: the shipped model of this preset ('paper': with the PLFs it "
                        "fine-tunes; the others: PLF-free). Default: default")
    return parser


# ModelConfig and PretrainConfig settings -> the `den pretrain` options that set them
PRETRAIN_OPTIONS = {"n_keypoints": "--keypoints", "covariates_max": "--max-covariates",
                    "checkpoint_every": "--checkpoint-every", "query_rows": "--query-rows",
                    "support_rows_min": "--support-rows-min", "support_rows": "--support-rows",
                    "learning_rate": "--learning-rate", "max_classes": "--max-classes", "steps": "--steps",
                    "multiclass_cuts": "--multiclass-cuts", "one_vs_rest_cuts": "--one-vs-rest-cuts",
                    "head 'multiclass'": "--head multiclass", "restart_other_run=True": "--restart",
                    "order (dependency order r)": "--order (the dependency order r)"}


def _predict_options() -> dict[str, str]:
    """fit_table's words for its settings -> the `den predict` options: each FitSettings
    keyword (finetune_learning_rate; every field is the dest of the option of the same name
    with dashes), and variant='den' / preset='paper' as --variant den / --preset paper."""
    import dataclasses

    from den.fitting import VARIANTS, FitSettings

    options = {f.name: "--" + f.name.replace("_", "-") for f in dataclasses.fields(FitSettings)
               if "_" in f.name}
    return {**options, **{f"variant={v!r}": f"--variant {v}" for v in VARIANTS},
            **{f"preset={p!r}": f"--preset {p}" for p in PRESETS}}


class _Interrupted(Exception):
    """Ctrl-C during a command; the message says what was kept and how to go on."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM during a command (a scheduler's time limit or cancel, a ``kill``)."""


def _terminated(signum: int):
    """SIGTERM during a command (``den.logs.on_sigterm``): stop it as Ctrl-C would, so that an
    output being written is removed, and let ``main`` say so in one line (exit code 143)."""
    raise _Terminated


def _write_error(what: str, path, err: OSError) -> OSError:
    """An OSError that names the output, why writing it failed, and that it is unchanged."""
    return OSError(f"writing {what} {str(path)!r} failed ({err.strerror or err}); nothing was "
                   f"written to it")


# Output names whose ending asks for compression (pandas' names for the methods).
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}


def _compression(path: str) -> dict | None:
    """pandas' ``compression`` for an output name by its ending (None: plain text); a zip
    archive holds one file named as the output less ".zip" (preds.csv.zip: preds.csv), with
    ".csv" added where that leaves no ending (preds.zip: preds.csv)."""
    method = _COMPRESSION.get(Path(path).suffix.lower())
    if method is None:
        return None
    if method != "zip":
        return {"method": method}
    member = Path(Path(path).stem)
    return {"method": method, "archive_name": str(member if member.suffix else member.with_suffix(".csv"))}


# Output endings of formats other than delimited text: `den predict` writes CSV (or TSV) only.
_NOT_TEXT = {".xlsx": "an Excel workbook", ".xlsm": "an Excel workbook", ".xls": "an Excel workbook",
             ".ods": "an OpenDocument spreadsheet", ".parquet": "a Parquet file",
             ".feather": "a Feather file", ".arrow": "an Arrow file", ".json": "JSON",
             ".jsonl": "JSON lines", ".pkl": "a pickle", ".pickle": "a pickle", ".npz": "a NumPy archive",
             ".npy": "a NumPy array", ".h5": "an HDF5 file", ".hdf5": "an HDF5 file"}
_TAB_SEPARATED = (".tsv", ".tab")


def _output_separator(path: str) -> str:
    """The column separator of the output ``path`` by its name: a tab for .tsv and .tab (also
    compressed: preds.tsv.gz), else a comma.

    Raises:
        DENInputError: the name asks for a format that is not delimited text (preds.xlsx).
    """
    name = Path(path)
    if name.suffix.lower() in _COMPRESSION:
        name = Path(name.stem)
    suffix = name.suffix.lower()
    if suffix in _NOT_TEXT:
        raise DENInputError(f"--out {path!r} asks for {_NOT_TEXT[suffix]}, but den predict writes "
                            f"comma-separated text: name the output .csv (or .tsv for tabs; "
                            f".gz, .bz2, .xz or .zip to compress it), and open that file in the "
                            f"program that wants {suffix}")
    return "\t" if suffix in _TAB_SEPARATED else ","


def _same_file(path: str, other: str) -> bool:
    """Whether ``path`` exists and is the file ``other`` (links and other spellings followed)."""
    try:
        return os.path.samefile(path, other)
    except (OSError, ValueError):
        return False


def _check_named_once(names: list[str], option: str) -> None:
    """Refuse an option (e.g. "--ignore-columns") that names a column more than once."""
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise DENInputError(f"{option} names {twice} more than once; name each column once")


def _check_kept_columns(keep: list[str], head, query: str) -> None:
    """Refuse --keep-query-columns names that the query file (``head``: its first row, as
    ``read_table_head`` reads it) lacks, before the file is read whole (names given twice are
    ``_check_named_once``'s)."""
    from den.data.encoding import meant_columns

    lacking = [c for c in keep if c not in head.columns]
    if lacking:
        raise DENInputError(f"--keep-query-columns: query file {query!r} has no column(s) {lacking}"
                            f"{meant_columns(lacking, head.columns)}; its columns are "
                            f"{[str(c) for c in head.columns]}")


def _without_ignored(features, ignored: list[str], target: str, support: str):
    """The support's feature columns less those --ignore-columns names; a name that is the
    target, that the support file lacks or that is given twice is refused, and so is leaving
    no feature column."""
    from den.data.encoding import meant_columns

    _check_named_once(ignored, "--ignore-columns")
    if target in ignored:
        raise DENInputError(f"--ignore-columns names the target column {target!r}; the target is "
                            f"never a feature: leave it out of --ignore-columns")
    lacking = [c for c in ignored if c not in features.columns]
    if lacking:
        raise DENInputError(f"--ignore-columns: support file {support!r} has no column(s) {lacking}"
                            f"{meant_columns(lacking, features.columns)}; its feature columns are "
                            f"{[str(c) for c in features.columns]}")
    if len(ignored) == features.shape[1]:
        raise DENInputError(f"--ignore-columns leaves support file {support!r} no feature column; "
                            f"DEN needs at least one")
    return features.drop(columns=ignored)


def _predict(args) -> None:
    import dataclasses

    import pandas as pd

    from den.data.encoding import (
        TabularEncoder,
        encode_query,
        meant_columns,
        read_table,
        read_table_head,
        row_number_columns,
        split_target,
    )
    from den.io import SpooledRows, atomic_write, check_output_path

    if args.seed < 0:  # refused before any file is read
        raise DENInputError(f"--seed must be a non-negative integer, got {args.seed} (e.g. --seed 0)")
    if args.min_support_rows < 1:
        raise DENInputError(f"--min-support-rows must be an integer >= 1, got {args.min_support_rows}")
    for option, path in (("--support", args.support), ("--query", args.query)):
        if path == "-":
            raise DENInputError(f"{option} '-': den predict reads its tables from files; to read "
                                f"one from a pipe, give {option} /dev/stdin")
    to_stdout = args.out == "-"
    if not to_stdout:
        check_output_path(args.out, "--out")
        models = (("model", args.model),) if args.model else \
            tuple(("shipped model", path) for path in SHIPPED_MODELS.values())
        for what, path in (("support", args.support), ("query", args.query), *models):
            if _same_file(args.out, path):
                raise DENInputError(f"--out {args.out!r} is the {what} file; the predictions would "
                                    f"replace it: write them to another file")
    separator = "," if to_stdout else _output_separator(args.out)
    # Both files are read before TensorFlow is imported: reading a large query file peaks at a few
    # times its size, which then does not add to TensorFlow's few hundred MB (and a file that
    # cannot be read is named at once).
    support = read_table(args.support, "support", target=args.target)
    features, labels = split_target(support, args.target, f"support file {args.support!r}")
    if args.ignore_columns:
        features = _without_ignored(features, args.ignore_columns, args.target, args.support)
    for name, first, last in row_number_columns(features):
        index = ", a saved row index with no header" if name.startswith("Unnamed: ") else ""
        warnings.warn(f"support file {args.support!r} column {name!r} numbers the rows ({first}, "
                      f"{first + 1}, ..., {last}{index}): it is used as a feature, though a row's "
                      f"number says nothing of its class unless the rows' order does; if it is an "
                      f"id, pass --ignore-columns {shlex.quote(name)}", DENInputWarning, stacklevel=2)
    # the support's number formats; columns copied to the output as the file writes them (an id 007)
    keep = args.keep_query_columns  # None: no column; []: every column; else those named
    if keep:
        _check_named_once(keep, "--keep-query-columns")
        if os.path.isfile(args.query):  # a pipe (/dev/stdin) is read once: read_table checks it then
            _check_kept_columns(keep, read_table_head(args.query, "query"), args.query)
    query = read_table(args.query, "query", like=support, written=True if keep == [] else keep or False)
    query_written = None
    if keep is not None:
        query, query_written = query
    missing = [c for c in features.columns if c not in query.columns]
    if missing:
        raise DENInputError(f"query file {args.query!r} lacks the support's feature column(s) "
                            f"{[str(c) for c in missing]}{meant_columns(missing, query.columns)}; "
                            f"its columns are {[str(c) for c in query.columns]}. Add the column(s) "
                            f"to the query (an empty cell is a missing value), or leave them out of "
                            f"the fit: --ignore-columns {' '.join(shlex.quote(str(c)) for c in missing)}")
    query_features = query[list(features.columns)]  # others (the target, an id) are not features
    query_name = f"query file {args.query!r}"
    del query
    # Both tables are encoded before TensorFlow is imported too, and each is dropped once encoded:
    # a large query's table and its features are never held at once beside TensorFlow.
    encoder = TabularEncoder()
    x_support = encoder.fit_transform(features, f"support file {args.support!r} features")
    x_query = encode_query(encoder, query_features, query_name=query_name)
    del features, query_features

    from den.fitting import FitSettings, fit_table  # TensorFlow

    # every FitSettings field is a `den predict` option of the same name (dest)
    settings = FitSettings(**{field.name: getattr(args, field.name)
                              for field in dataclasses.fields(FitSettings)})
    transductive = args.keypoints_from == "support_and_query"
    try:
        table = fit_table(settings, x_support, labels, X_unlabeled=x_query if transductive else None,
                          encoder=encoder, support_name=f"support file {args.support!r}",
                          unlabeled_name=query_name)
    except DENError as err:  # keywords as the options that set them (name_settings)
        raise type(err)(name_settings(str(err), _predict_options())) from None
    columns = ["prediction"] + [f"proba_{label}" for label in table.classes]
    if keep is not None:  # refused before the query is scored, which may take minutes
        clash = [str(c) for c in columns if c in query_written.columns]
        if clash:
            raise DENInputError(f"query file {args.query!r} has the column(s) {clash}, which the "
                                f"output adds; rename them in the query file, or leave out "
                                f"--keep-query-columns")
    if x_query.nbytes > SPOOL_QUERY_BYTES:  # scored a block at a time, read from a file
        with contextlib.suppress(OSError):  # no room there: scored from memory
            x_query = SpooledRows(x_query)
    try:
        proba = table.fitted.proba(x_query, args.chunk_rows, progress="stderr")
    finally:
        if isinstance(x_query, SpooledRows):
            x_query.close()
    del x_query
    out = pd.DataFrame(dict(zip(columns, [table.classes[proba.argmax(axis=1)], *proba.T])))
    if keep is not None:
        out = pd.concat([query_written.reset_index(drop=True), out], axis=1)
    if to_stdout:
        out.to_csv(sys.stdout, index=False)
    else:  # CSV, or TSV by the name (_output_separator)
        compression = _compression(args.out)
        try:
            with atomic_write(args.out, "w" if compression is None else "wb") as handle:
                out.to_csv(handle, index=False, sep=separator, compression=compression)
        except OSError as err:  # e.g. a full disk or a file-size limit
            raise _write_error("--out", args.out, err) from None
    print(f"wrote {len(out)} predictions to {'standard output' if to_stdout else args.out}",
          file=sys.stderr)


def _model_config_file(path: str) -> dict:
    """``ModelConfig``'s keyword arguments from ``--model-config``: a DEN model file's
    architecture, or a JSON object of ModelConfig keys (a model's ``den info`` "config").

    Raises:
        DENInputError: the file is missing or unreadable, or names keys ModelConfig lacks.
    """
    import dataclasses

    from den.errors import DENInputError, DENModelError
    from den.model.config import ModelConfig

    if not Path(path).is_file():
        what = "is a directory" if Path(path).is_dir() else "does not exist"
        raise DENInputError(f"--model-config {path!r} {what}: give a model file (.npz) or a "
                            f"JSON file of ModelConfig keys")
    with open(path, "rb") as handle:
        is_model = handle.read(4) == b"PK\x03\x04"  # a model file is a zip archive, whatever its name
    if is_model:
        from den.errors import DENModelWarning
        from den.model.den import DEN

        try:
            with warnings.catch_warnings():  # only the architecture is read, not the weights whose
                warnings.simplefilter("ignore", DENModelWarning)  # predictions a newer den changed
                return dataclasses.asdict(DEN.load(path).config)
        except DENModelError as err:
            raise DENInputError(f"--model-config: {err}") from None
    try:
        keys = json.loads(Path(path).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DENInputError(f"--model-config {path!r} is neither a model file (.npz) nor JSON: "
                            f"{err}") from None
    if isinstance(keys, dict) and isinstance(keys.get("config"), dict):
        keys = keys["config"]  # `den info`'s whole output works too
    known = {f.name for f in dataclasses.fields(ModelConfig)}
    if not isinstance(keys, dict) or set(keys) - known:
        unknown = sorted(set(keys) - known) if isinstance(keys, dict) else type(keys).__name__
        raise DENInputError(f"--model-config {path!r}: {unknown} not ModelConfig keys; its keys are "
                            f"{sorted(known)}")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in keys.items()}


def _pretrain(args) -> None:
    from den.data.encoding import read_table, task_from_frame
    from den.data.sources import task_files
    from den.data.synthetic import GENERATED_FEATURES, GENERATED_ROWS, make_tasks
    from den.errors import DENInputError
    from den.io import check_output_path
    from den.model.config import ModelConfig
    from den.train.pretrain import PretrainConfig, PretrainInterrupted, checkpoint_lock, pretrain

    check_output_path(args.out, "--out")
    if args.seed < 0:
        raise DENInputError(f"--seed must be a non-negative integer, got {args.seed}")
    checkpoint_dir = Path(args.checkpoint_dir or f"{args.out}.checkpoint")
    check_output_path(checkpoint_dir, "--checkpoint-dir" if args.checkpoint_dir else
                      "the checkpoint directory (--checkpoint-dir)", directory=True)
    if args.generated_tasks < 0:
        raise DENInputError(f"--generated-tasks must be >= 0, got {args.generated_tasks}")
    directory = Path(args.tasks)
    files, left_out = task_files(directory, "--tasks") if directory.is_dir() else ({}, [])
    if not files and not (directory.is_dir() and args.generated_tasks > 0):
        raise DENInputError(f"--tasks {args.tasks!r} is not a directory holding *.csv or *.csv.gz "
                            f"files (or give --generated-tasks N to pre-train on generated tasks alone)")
    if left_out and not args.quiet:
        print(f"--tasks: left out {len(left_out)} entries that are no *.csv or *.csv.gz file, or hidden: "
              f"{', '.join(left_out[:5])}{' ...' if len(left_out) > 5 else ''}", file=sys.stderr)
    clobbered = [str(f) for f in files.values() if _same_file(args.out, f)]
    if clobbered:
        raise DENInputError(f"--out {args.out!r} is the task file {clobbered[0]!r}; the model would "
                            f"replace it: write the model to another file (e.g. model.npz)")
    for what, path in (("--model-config", args.model_config),
                       *(("the shipped model", p) for p in SHIPPED_MODELS.values())):
        if path and _same_file(args.out, path):
            raise DENInputError(f"--out {args.out!r} is {what} file {str(path)!r}; the new model would "
                                f"replace it: write the model to another file (e.g. model.npz)")
    tasks = [task_from_frame(read_table(f, "task", target=args.target), args.target, name,
                             f"task file {str(f)!r}")
             for name, f in files.items()]
    tasks += make_tasks(args.generated_tasks, seed=args.seed, rows=GENERATED_ROWS,
                        features=GENERATED_FEATURES, prefix="gen-")
    cuts = args.multiclass_cuts or args.one_vs_rest_cuts
    architecture = _model_config_file(args.model_config) if args.model_config else {}
    head = args.head or architecture.get("head") or \
        ("binary" if cuts or all(t.n_classes == 2 for t in tasks) else "multiclass")
    if cuts and head == "multiclass":
        raise DENInputError("--multiclass-cuts and --one-vs-rest-cuts cut tasks of more than two classes "
                            "into binary tasks for the binary head; the multiclass head reads them "
                            f"whole{'' if args.head else ' (the head of --model-config)'}: leave the "
                            "cuts out, or give --head binary")
    given = {"order": args.order, "n_keypoints": args.keypoints,
             "keypoint_placement": args.keypoint_placement, "max_classes": args.max_classes,
             "use_calibration": None if args.no_calibration is None else False}
    try:
        model_config = ModelConfig(**{**architecture, **{k: v for k, v in given.items() if v is not None},
                                      "head": head, "seed": args.seed})
        config = PretrainConfig(steps=args.steps, query_rows=args.query_rows, support_rows=args.support_rows,
                                support_rows_min=args.support_rows_min, covariates_max=args.max_covariates,
                                learning_rate=args.learning_rate, seed=args.seed,
                                checkpoint_every=args.checkpoint_every, multiclass_cuts=args.multiclass_cuts,
                                one_vs_rest_cuts=args.one_vs_rest_cuts)
    except ValueError as err:  # the settings' names as the options that set them
        raise DENInputError(name_settings(str(err), PRETRAIN_OPTIONS)) from None
    # a task by its file, a setting by its option, in pre-training's errors ("steps" there is
    # the word: "past the 6 steps asked for")
    names = {**{k: v for k, v in PRETRAIN_OPTIONS.items() if k != "steps"},
             **{f"task {name!r}": f"task file {str(f)!r}" for name, f in files.items()}}
    # held until the model is saved and the checkpoints are removed: a second run on the same
    # directory meanwhile would resume from checkpoints about to go
    with checkpoint_lock(checkpoint_dir):
        try:
            model = pretrain(tasks, model_config, config, checkpoint_dir=checkpoint_dir,
                             progress=None if args.quiet else sys.stderr, restart_other_run=args.restart)
        except PretrainInterrupted as stop:
            raise _Interrupted(f"interrupted after step {stop.step}/{stop.total}; checkpoint saved in "
                               f"{str(checkpoint_dir)!r}; run the same command again to resume") from None
        except KeyboardInterrupt:  # a second Ctrl-C, within a step: the last checkpoint stays valid
            raise _Interrupted(f"interrupted; run the same command again to resume from the last "
                               f"checkpoint in {str(checkpoint_dir)!r}, if one was saved") from None
        except DENInputError as err:
            raise DENInputError(name_settings(str(err), names)) from None
        except DENError as err:
            raise DENError(name_settings(str(err), names)) from None
        try:
            model.save(args.out)
        except OSError as err:
            raise _write_error("--out", args.out, err) from None
        if not args.checkpoint_dir:
            shutil.rmtree(checkpoint_dir, ignore_errors=True)
    trained = len(model.metadata["pretrained_on"])  # after cuts of multiclass tasks
    cut = f" ({len(tasks)} before cutting multiclass tasks)" if trained != len(tasks) else ""
    why = "" if args.head or architecture.get("head") or head == "binary" else \
        (" (a task has more than two classes; --multiclass-cuts K or --one-vs-rest-cuts K gives the "
         "binary head)")
    print(f"pre-trained on {trained} task{'' if trained == 1 else 's'}{cut}, {head} head{why}; model "
          f"written to {args.out}", file=sys.stderr)


def _info(args) -> None:
    from den.fitting import load_model
    from den.pretrained import shipped_model_path

    if args.model is not None and args.preset:
        raise DENInputError("give a model PATH or --preset (which shipped model), not both")
    finetune = PRESETS[args.preset or "default"]["variant"] == "den"
    model = load_model(args.model if args.model is not None else shipped_model_path(finetune=finetune))
    saved_by = {"saved_by": model.saved_by} if model.saved_by else {}
    print(_readable_json({"config": model.config.to_dict(), "metadata": model.metadata, **saved_by}))


_SCALAR = r"(?:-?[0-9][0-9.eE+-]*|true|false|null)"
# as json.dumps(indent=...) writes a list: a newline after "[" and each ","; strings hold none
_SCALAR_LIST = re.compile(rf"\[\n\s*({_SCALAR}(?:,\n\s*{_SCALAR})*)\n\s*\]")


def _readable_json(value) -> str:
    """JSON indented by 2, with each list of numbers (layer widths, a loss-curve point) on one
    line instead of one number per line; ``json.loads`` reads it back unchanged."""
    return _SCALAR_LIST.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m[1]) + "]", json.dumps(value, indent=2))


def _show_warning(command, message, category, filename, lineno, file=None, line=None) -> None:
    """Print a warning as one line, "den predict: warning: ...", the package's own (``DENWarning``)
    without the file and line it came from, naming `den predict`'s options where it names
    DENClassifier's keywords (finetune_network_steps -> --finetune-network-steps)."""
    text = str(message) if issubclass(category, DENWarning) else \
        warnings.formatwarning(message, category, filename, lineno, line="").rstrip()
    if command == "predict" and issubclass(category, DENWarning):  # the options, not the keywords
        text = name_settings(text, _predict_options())
    print(f"den {command}: warning: {text}", file=sys.stderr if file is None else file)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 done, 2 an error, 130 interrupted by
    Ctrl-C, 143 stopped by SIGTERM; 1 a system error such as a full disk; no command: the help
    and 2). Errors and
    interruptions print one line, no traceback."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    handler = {"predict": _predict, "pretrain": _pretrain, "info": _info}[args.command]
    try:
        with on_sigterm(_terminated), warnings.catch_warnings():  # a warning about the input: one line
            warnings.simplefilter("always", DENInputWarning)
            warnings.showwarning = functools.partial(_show_warning, args.command)
            handler(args)
    except (DENError, ValueError) as err:
        print(f"den {args.command}: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of stdout stopped (`den info | head`): no message, and
        # status 1 as Python's documentation advises (a shell's `pipefail` sees it, as with `yes | head`)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that Python's exit flush does not fail again
        return 1
    except OSError as err:  # the disk, a quota or a file-size limit; the output is untouched
        print(f"den {args.command}: error: {err}", file=sys.stderr)
        return 1
    except _Terminated:
        print(f"den {args.command}: stopped by SIGTERM (a scheduler's limit or cancel, or a kill); "
              f"nothing was written", file=sys.stderr)
        return 143
    except (_Interrupted, KeyboardInterrupt) as stop:
        newline = "\n" if sys.stderr.isatty() else ""  # after a progress line redrawn in place
        print(f"{newline}den {args.command}: {str(stop) or 'interrupted'}", file=sys.stderr)
        return 130
    return 0
