"""Fitting a pre-trained DEN to a labelled support table: the one implementation behind
``DENClassifier.fit`` and ``den predict``.

    table = fit_table(FitSettings(preset="fast"), X_support, y_support)
    proba = table.proba(X_query)                    # (m, L), columns in table.classes order

``fit_table`` checks the settings and labels, encodes the support table (``TabularEncoder``),
loads the model (the shipped one when none is given) and fits it to the task
(``den.train.finetune.fit_task``). Nothing here imports scikit-learn, so ``den predict``
does not pay its import on a cold start (issue 22); ``den.api.DENClassifier`` is the
scikit-learn face of the same fit.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from pathlib import Path
from typing import TextIO

import numpy as np

from den.data.encoding import TabularEncoder, encode_labels, encode_query
from den.errors import DENError, DENInputError, DENInputWarning, DENModelError, name_settings, plain_value
from den.model.den import DEN
from den.model.tuples import count_multisets
from den.pretrained import (
    ADAPT_NETWORK_LEARNING_RATE,
    ADAPT_NETWORK_STEPS,
    FINETUNE_TUPLES_PER_STEP,
    PRESETS,
    shipped_model_path,
)
from den.train.config import adapt_config
from den.train.finetune import (
    FinetuneConfig,
    FittedTask,
    fit_task,
    learning_rates_used,
    one_vs_rest_min_rows,
)

VARIANTS = ("den", "no_finetune", "adapt")
# Bytes per pair of support rows and feature multiset that tuple relevance holds at its peak
# (about six float32 (m, m, U) tensors: 5.2 GB for 1,000 rows of 10 features, 21.7 GB for 2,000).
RELEVANCE_PAIR_BYTES = 24
# Support rows above which a fit warns that it was not what DEN is for (pre-training drew
# support sets of 25-128 rows: this is twice the largest) and that its cost grows with the square
# of the rows (the default preset's fit, 2 cores: 0.5 s at 50 rows, 15 s at 500, 50 s at 1,000).
LARGE_SUPPORT_ROWS = 256
# The share of the free memory a support set's pairwise kernels may take: the rest is for
# TensorFlow's working memory and the process itself (measured: the first prediction of 1,500
# rows of 10 features peaked 0.8 GB above RELEVANCE_PAIR_BYTES' 11.5 GB).
USABLE_MEMORY_SHARE = 0.8
# The ``finetune_*`` settings each variant reads (``fit_table`` refuses others changed under a
# preset).
VARIANT_SETTINGS = {
    "den": (
        "finetune_epochs", "finetune_steps_per_epoch", "finetune_learning_rate", "finetune_ensemble",
        "finetune_early_stopping", "finetune_early_stopping_tolerance", "finetune_output_scaling",
        "finetune_output_scaling_learning_rate", "finetune_feature_counts",
        "finetune_feature_counts_tolerance", "finetune_tuples_per_step"),
    "adapt": ("finetune_ensemble", "finetune_network_steps", "finetune_network_learning_rate"),
    "no_finetune": (),
}


# FinetuneConfig's defaults (the paper's fine-tuning), which FitSettings' finetune_* fields share.
_FINETUNE_DEFAULTS = {field.name: field.default for field in dataclasses.fields(FinetuneConfig)}


@dataclasses.dataclass(frozen=True)
class FitSettings:
    """How a pre-trained DEN meets a task: the keywords of ``den.api.DENClassifier``, with the
    same names, defaults and meanings (its docstring says what each does; a test checks that
    the two agree). A ``finetune_<name>`` field the paper's fine-tuning reads
    (``VARIANT_SETTINGS["den"]``) is ``FinetuneConfig.<name>``, default included, but one:
    ``finetune_tuples_per_step`` defaults to ``den.pretrained.FINETUNE_TUPLES_PER_STEP`` (a
    sample of the tuples a step, validated on held-back sets), where FinetuneConfig's default,
    None, reads every tuple as the paper does."""

    model: str | os.PathLike | DEN | None = None
    preset: str = "default"
    variant: str | None = None
    finetune_epochs: int = _FINETUNE_DEFAULTS["epochs"]
    finetune_steps_per_epoch: int = _FINETUNE_DEFAULTS["steps_per_epoch"]
    finetune_learning_rate: float = _FINETUNE_DEFAULTS["learning_rate"]
    chunk_rows: int | None = None
    min_support_rows: int = 10
    seed: int = _FINETUNE_DEFAULTS["seed"]
    finetune_ensemble: int = _FINETUNE_DEFAULTS["ensemble"]
    finetune_early_stopping: bool = _FINETUNE_DEFAULTS["early_stopping"]
    finetune_early_stopping_tolerance: float = _FINETUNE_DEFAULTS["early_stopping_tolerance"]
    finetune_output_scaling: bool = _FINETUNE_DEFAULTS["output_scaling"]
    finetune_output_scaling_learning_rate: float = _FINETUNE_DEFAULTS["output_scaling_learning_rate"]
    finetune_feature_counts: tuple[int, ...] = _FINETUNE_DEFAULTS["feature_counts"]
    finetune_feature_counts_tolerance: float = _FINETUNE_DEFAULTS["feature_counts_tolerance"]
    finetune_tuples_per_step: int | None = FINETUNE_TUPLES_PER_STEP
    finetune_network_steps: int = ADAPT_NETWORK_STEPS
    finetune_network_learning_rate: float = ADAPT_NETWORK_LEARNING_RATE

    def __post_init__(self):
        # a tuple, whatever sequence was given, so [] is the default (), not a changed setting
        object.__setattr__(self, "finetune_feature_counts", tuple(self.finetune_feature_counts))


# "fine-tuning learning_rate ..." (or "learning_rate") in FinetuneConfig's messages ->
# "finetune_learning_rate ...", the FitSettings keyword that sets it (``name_settings``)
_FINETUNE_KEYWORDS = {f"{prefix}{f.name.removeprefix('finetune_')}": f.name
                      for f in dataclasses.fields(FitSettings) if f.name.startswith("finetune_")
                      for prefix in ("", "fine-tuning ")}


@dataclasses.dataclass
class FittedTable:
    """A pre-trained DEN fitted to a support table (``fit_table``).

    Attributes:
        fitted: the fitted task (its task models, one-vs-rest class models, losses).
        encoder: the support table's column encoding, applied to query tables.
        classes: (L,) the labels, sorted; ``proba``'s columns follow this order.
        n_features: number of feature columns.
    """

    fitted: FittedTask
    encoder: TabularEncoder
    classes: np.ndarray
    n_features: int

    def proba(self, X, chunk_rows: int | None = None, query_name: str = "query",
              progress: TextIO | str | None = None) -> np.ndarray:
        """(m, L) class probabilities of the query table X (m rows, the support's columns);
        warnings and errors about its values name it ``query_name`` (e.g. its file).
        ``progress``: a stream (or "stderr") for a progress line on a large query
        (``FittedTask.proba``); None is silent."""
        return self.fitted.proba(encode_query(self.encoder, X, query_name=query_name), chunk_rows,
                                 progress=progress)


_LOADED: dict[tuple[str, float, int], DEN] = {}


def load_model(model: str | os.PathLike | DEN) -> DEN:
    """A ``DEN`` from a path (cached per file: its inode, modification time and size) or as given.

    Raises:
        DENModelError: naming the path: it does not exist, is a directory or is not a DEN
            model file.
    """
    if isinstance(model, DEN):
        return model
    if not str(model).strip():  # Path("") is ".", the working directory
        raise DENModelError("the DEN model path is empty; give the .npz file written by `den pretrain` "
                            "(or DEN.save), or leave the model out for the shipped one")
    path = Path(model).expanduser()  # "~/models/den.npz"
    try:
        stat = path.stat()
        # the inode too: a save renames a new file into place, and two models of one architecture
        # have one size, so a file replaced within the clock's resolution (or copied keeping its
        # time, cp -p) is still read anew
        key = (str(path.resolve()), stat.st_ino, stat.st_mtime_ns, stat.st_size)
    except OSError:
        return DEN.load(path)  # raises DENModelError naming the path
    if key not in _LOADED:
        _LOADED[key] = DEN.load(path)
    return _LOADED[key]


def fit_table(settings: FitSettings, X, y, X_unlabeled=None, *, support_name: str = "support",
              unlabeled_name: str = "unlabeled", encoder: TabularEncoder | None = None) -> FittedTable:
    """Fit a pre-trained DEN to the support table (X, y).

    Args:
        settings: the model, preset, variant and fine-tuning settings.
        X: (n, d) array or DataFrame; NaN/None = missing; booleans and strings allowed.
        y: (n,) labels of any type (at least two classes), except continuous numbers
            (floats not all whole numbers: a regression target) and complex numbers.
        support_name, unlabeled_name: how errors name the two tables (e.g. their files).
        X_unlabeled: optional rows without labels (e.g. the query set); they only widen
            each feature's keypoint span.
        encoder: a ``TabularEncoder`` already fitted to the support table; X and X_unlabeled
            are then its (n, d) and (m, d) float64 features (``encoder.fit_transform`` and
            ``encode_query``). ``den predict`` encodes its files so before TensorFlow is
            imported, and drops each table once it is encoded: a large query's table and its
            features are then never held at once beside TensorFlow.

    Raises:
        DENInputError: no labels (y None), continuous labels, one class, too few rows,
            infinite values, more classes than the model supports, a bad preset or variant,
            or fine-tuning settings the preset's variant would ignore.
        DENModelError: the model path is not a readable DEN model.
    """
    if settings.preset not in PRESETS:
        raise DENInputError(f"preset must be one of {tuple(PRESETS)}, got {settings.preset!r}")
    if plain_value(settings.seed, "int") is None or settings.seed < 0:
        raise DENInputError(f"seed must be a non-negative integer, got {settings.seed!r}: DEN's "
                            f"fits are seeded so that they repeat (e.g. 0)")
    if plain_value(settings.min_support_rows, "int") is None or settings.min_support_rows < 1:
        raise DENInputError(f"min_support_rows must be an integer >= 1, got {settings.min_support_rows!r}: "
                            f"a support set with fewer labelled rows is refused (e.g. 10)")
    if settings.chunk_rows is not None and (plain_value(settings.chunk_rows, "int") is None
                                            or settings.chunk_rows < 1):
        raise DENInputError(f"chunk_rows must be an integer >= 1 (leave it unset to choose it "
                            f"from the numbers of features and support rows), got {settings.chunk_rows!r}")
    variant = PRESETS[settings.preset]["variant"] if settings.variant is None else settings.variant
    if variant not in VARIANTS:
        raise DENInputError(f"variant must be one of {VARIANTS} (or None: the preset's), "
                            f"got {settings.variant!r}")
    # settings the variant (the preset's, or the one given) would silently ignore
    changed = [name for name in _finetune_settings_given(settings) if name not in VARIANT_SETTINGS[variant]]
    if changed:
        users = [v for v in VARIANTS if set(changed) <= set(VARIANT_SETTINGS[v])]
        presets = [p for v in users for p, entry in PRESETS.items() if entry["variant"] == v]
        each = ", ".join(f"{v}: {list(VARIANT_SETTINGS[v])}" for v in VARIANTS if VARIANT_SETTINGS[v])
        if not users:
            advice = f"no one variant uses them all: give those of one variant ({each})"
        elif settings.variant is None:
            advice = f"add variant={users[0]!r} (or preset={presets[0]!r})"
        else:
            advice = f"use variant={users[0]!r}, or leave {'them' if len(changed) > 1 else 'it'} out"
        what = (f"preset {settings.preset!r} (variant {variant!r})" if settings.variant is None
                else f"variant {variant!r}")
        raise DENInputError(f"{', '.join(changed)} given, but {what} does not use "
                            f"{'them' if len(changed) > 1 else 'it'}: {advice}")
    den = load_model(shipped_model_path(finetune=variant == "den") if settings.model is None
                     else settings.model)
    if variant == "den" and not den.config.use_calibration:
        asked = f"preset {settings.preset!r}" if settings.variant is None else f"variant {variant!r}"
        warnings.warn(f"{asked} fine-tunes the PLFs, but this model has none (pre-trained without "
                      f"the PLF block): it is used as pre-trained, as preset 'fast' fits; a model "
                      f"with PLFs (e.g. `den pretrain` without --no-calibration) is what it fine-tunes",
                      DENInputWarning, stacklevel=3)
    if y is None:
        raise DENInputError("DENClassifier requires y to be passed, but the target y is None: "
                            "give the support set's labels, one per row of X")
    codes, classes = encode_labels(y, f"{support_name} labels")
    if len(codes) == 0:
        raise DENInputError("the support set has no rows; DEN needs labelled rows of at least "
                            "two classes")
    if len(classes) < 2:
        raise DENInputError(f"the support set has a single class ({classes.tolist()}); with "
                            f"one class there is nothing to classify: DEN needs labelled rows "
                            f"of at least two classes")
    if len(codes) < settings.min_support_rows:
        raise DENInputError(f"the support set has {len(codes)} rows; at least "
                            f"{settings.min_support_rows} are needed (min_support_rows)")
    if den.config.head != "binary" and len(classes) > den.config.n_classes_supported:
        raise DENInputError(
            f"the support set has {len(classes)} classes but the model supports at most "
            f"{den.config.n_classes_supported} ({den.config.head} head); use a model pre-trained "
            f"with the multiclass head and max_classes >= {len(classes)} (`den pretrain --head "
            f"multiclass --max-classes {len(classes)}`), or one with the binary head, such as the "
            f"shipped default (no model given), which fits one class against the rest for any "
            f"number of classes")
    if encoder is None:
        encoder = TabularEncoder()
        x = encoder.fit_transform(X, f"{support_name} features")
        unlabeled = None if X_unlabeled is None else \
            encoder.transform(X_unlabeled, f"{unlabeled_name} features")
    else:  # both already the encoder's features
        x = np.asarray(X, dtype=np.float64)
        unlabeled = None if X_unlabeled is None else np.asarray(X_unlabeled, dtype=np.float64)
    if x.shape[0] != len(codes):
        raise DENInputError(f"{x.shape[0]} support rows but {len(codes)} labels")
    check_support_size(den, *x.shape)
    _warn_unused_adaptation(settings, variant, classes)
    config = None
    try:
        if variant == "den":
            config = FinetuneConfig(seed=settings.seed, **{
                name.removeprefix("finetune_"): getattr(settings, name) for name in VARIANT_SETTINGS["den"]})
        elif variant == "adapt":
            config = adapt_config(settings.seed, settings.finetune_ensemble, settings.finetune_network_steps,
                                  settings.finetune_network_learning_rate,
                                  one_vs_rest=PRESETS[settings.preset].get("one_vs_rest", True))
    except ValueError as err:  # FinetuneConfig's field names -> the keywords that set them
        raise DENInputError(name_settings(str(err), _FINETUNE_KEYWORDS)) from None
    try:
        fitted = fit_task(den, x, codes, len(classes), config, x_unlabeled=unlabeled)
    except DENError as err:  # FinetuneConfig's names for what the keywords set
        raise type(err)(name_settings(str(err), _FINETUNE_KEYWORDS)) from None
    _warn_collapsed(config, den, fitted, x, f"{support_name} rows")
    _warn_unadapted(config, fitted, codes, classes, f"{support_name} labels")
    _warn_not_fine_tuned(config, den, fitted, codes, classes, f"{support_name} labels")
    return FittedTable(fitted, encoder, classes, x.shape[1])


def _warn_not_fine_tuned(config: FinetuneConfig | None, den: DEN, fitted: FittedTask, codes: np.ndarray,
                         classes: np.ndarray, what: str) -> None:
    """Warn where the settings fine-tune the PLFs one class against the rest but some classes'
    models keep the pre-trained PLFs, for want of support rows (``one_vs_rest_min_rows``, in
    the class or in the rest)."""
    if config is None or not config.epochs or not den.config.use_calibration or not fitted.one_vs_rest:
        return
    folds = one_vs_rest_min_rows(config)
    counts = np.bincount(codes, minlength=len(classes))
    short = [k for k in range(len(classes)) if 0 < min(counts[k], len(codes) - counts[k]) < folds]
    if short:
        named = ", ".join(f"{label!r} ({counts[k]})" for label, k in zip(classes[short].tolist(), short))
        warnings.warn(f"{what}: class(es) {named} have fewer than the {folds} support rows that "
                      f"fine-tuning needs, so the class-against-the-rest model of each keeps the "
                      f"pre-trained PLFs, not fine-tuned", DENInputWarning, stacklevel=3)


def _warn_collapsed(config: FinetuneConfig | None, den: DEN, fitted: FittedTask, x: np.ndarray,
                    what: str) -> None:
    """Warn where fine-tuning (or network adaptation) left every support row with the same class
    probabilities although the rows differ: a learning rate too large drives the weights to a
    fit that predicts one class for every row, with finite weights, so nothing else stops it.
    Two rows that differ are scored first (about 14 ms against 33 for 50 rows); all of them only
    where those two agree."""
    if config is None or not any(fitted.losses):
        return
    x = np.asarray(x, dtype=np.float64)
    other = np.flatnonzero(~np.all((x == x[0]) | (np.isnan(x) & np.isnan(x[0])), axis=1))
    if not other.size or np.ptp(fitted.proba(x[[0, other[0]]]), axis=0).max() > 1e-6:
        return  # the rows are alike, or two of them already score apart
    proba = fitted.proba(x)
    if np.ptp(proba, axis=0).max() > 1e-6:
        return
    rates = " and ".join(f"{keyword} (now {getattr(config, name):g}; --{keyword.replace('_', '-')} in "
                         f"den predict)" for name in learning_rates_used(den, config)
                         for keyword in [_FINETUNE_KEYWORDS[name]])
    warnings.warn(f"{what}: after fine-tuning, every support row gets the same class probabilities "
                  f"({', '.join(f'{p:.3g}' for p in proba[0])}), so every prediction is one class; "
                  f"fine-tuning diverged: lower {rates}", DENInputWarning, stacklevel=3)


def _finetune_settings_given(settings: FitSettings) -> list[str]:
    """The ``finetune_*`` settings given other values than their defaults, in field order."""
    return [field.name for field in dataclasses.fields(FitSettings)
            if field.name.startswith("finetune_") and getattr(settings, field.name) != field.default]


def _warn_unused_adaptation(settings: FitSettings, variant: str, classes: np.ndarray) -> None:
    """Warn where adaptation settings were given for a task of 3+ classes that the preset
    leaves as pre-trained (preset "default": ``PRESETS[...]["one_vs_rest"]`` False), so they
    change nothing."""
    if variant != "adapt" or len(classes) <= 2 or PRESETS[settings.preset].get("one_vs_rest", True):
        return
    given = [name for name in _finetune_settings_given(settings) if name in VARIANT_SETTINGS["adapt"]]
    if given:
        warnings.warn(f"{', '.join(given)} given, but preset {settings.preset!r} does not adapt a task of "
                      f"{len(classes)} classes (it fits one class against the rest as pre-trained), so "
                      f"{'they change' if len(given) > 1 else 'it changes'} nothing; preset='adapt' "
                      f"adapts each class", DENInputWarning, stacklevel=4)


def _warn_unadapted(config: FinetuneConfig | None, fitted: FittedTask, codes: np.ndarray,
                    classes: np.ndarray, what: str) -> None:
    """Warn where the settings adapt the network but the fit left it as pre-trained, for
    want of support rows (``FinetuneConfig.network_min_class_rows`` of each class): the two
    classes' network, or (one class against the rest) the classes whose model it is."""
    if config is None or not config.network_steps or (fitted.one_vs_rest and not config.network_one_vs_rest):
        return  # nothing to adapt, or a multiclass task's class models left as pre-trained by design
    groups = fitted.class_models if fitted.one_vs_rest else [fitted.task_models]
    unadapted = [k for k, models in enumerate(groups)
                 if models and all(model.network_weights is None for model in models)]
    if not unadapted:
        return
    counts = np.bincount(codes, minlength=len(classes))
    short = unadapted if fitted.one_vs_rest else \
        [k for k in range(len(classes)) if counts[k] < config.network_min_class_rows]  # which class
    named = ", ".join(f"{label!r} ({counts[k]})" for label, k in zip(classes[short].tolist(), short))
    models = "the class-against-the-rest model of each" if fitted.one_vs_rest else "the network"
    warnings.warn(f"{what}: class(es) {named} have fewer than the {config.network_min_class_rows} "
                  f"support rows that network adaptation needs, so {models} is used as pre-trained, "
                  f"not adapted (as preset 'fast' fits)", DENInputWarning, stacklevel=3)


def check_support_size(den: DEN, n_rows: int, n_features: int, available: float | None = None) -> None:
    """Refuse a support set whose tuple relevance or local embedding (kernels of every pair
    of support rows, per feature multiset) would need more than ``USABLE_MEMORY_SHARE`` of
    ``available`` bytes (default: what this process may still take, ``_available_memory``),
    naming a sample size that fits in half of it; warn above ``LARGE_SUPPORT_ROWS`` rows. The
    memory is taken where the whole support set is embedded: by the first prediction, which a
    fit that fine-tunes or adapts makes itself (it checks that it does not predict one class
    for every row), and by a fine-tuning or adaptation step on halves of it, a quarter as much.

    Raises:
        DENInputError: the support set is too large for this machine.
    """
    if not (den.config.tuple_relevance or den.config.local_bandwidths):
        return
    multisets = count_multisets(den.tuples(n_features))
    need = RELEVANCE_PAIR_BYTES * multisets * float(n_rows) ** 2
    available = _available_memory() if available is None else available
    advice = ("DEN was pre-trained on support sets of 25-128 rows, and a table this large suits a "
              "random forest better")
    if available is not None and need > USABLE_MEMORY_SHARE * available:
        available = max(available, 0.0)  # a group over its cap (its page cache counted as used)
        fit = int(np.sqrt(available / 2 / (RELEVANCE_PAIR_BYTES * multisets)))  # half: a margin
        raise DENInputError(f"a support set of {n_rows} rows and {n_features} features needs about "
                            f"{need / 1e9:.1f} GB for DEN's tuple relevance (it compares every pair "
                            f"of support rows, when the model first predicts), and {available / 1e9:.1f} "
                            f"GB are free, of which DEN uses at most {USABLE_MEMORY_SHARE:.0%} (the rest is "
                            f"TensorFlow's working memory): fit on a sample of at most {fit} rows (a "
                            f"pandas frame: X.sample({fit}, random_state=0) and y at the same rows; an "
                            f"array: rows = np.random.default_rng(0).choice(len(X), {fit}, replace=False), "
                            f"then X[rows] and y[rows]; den predict: a support file of {fit} of its "
                            f"rows); {advice}")
    if n_rows > LARGE_SUPPORT_ROWS:
        warnings.warn(f"a support set of {n_rows} rows: DEN's tuple relevance compares every pair "
                      f"of support rows, so the model's first prediction takes about {need / 1e9:.1f} "
                      f"GB, and the fit and each prediction take time that grows with the square "
                      f"of the rows (the default preset's fit on 2 cores: 0.5 s at 50 rows, about "
                      f"15 s at 500 and 50 s at 1,000; preset 'fast' does not adapt, so its fit is "
                      f"instant); {advice}", DENInputWarning, stacklevel=3)


def _available_memory(root: Path = Path("/sys/fs/cgroup"),
                      membership: Path = Path("/proc/self/cgroup")) -> float | None:
    """Bytes of memory this process may still take: Linux's MemAvailable, or less where a
    control group (a container, a SLURM job) caps the memory, at the process's own group or
    one above it (``membership`` says which, under ``root``): cgroup v2 (memory.max less
    memory.current) or v1 (memory.limit_in_bytes less memory.usage_in_bytes under
    ``root``/memory; "no limit" there is a number near 2^63). None where none is known."""
    free = []
    try:
        with open("/proc/meminfo") as meminfo:
            free += [float(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemAvailable:")]
    except (OSError, ValueError):
        pass
    groups = [(root, "memory.max", "memory.current"),
              (root / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes")]
    try:
        lines = membership.read_text().splitlines()  # "2:memory:/slurm/job_7" or "0::/user.slice"
    except OSError:
        lines = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, group = fields
        if controllers == "":
            groups.append((root / group.lstrip("/"), "memory.max", "memory.current"))
        elif "memory" in controllers.split(","):
            groups.append((root / "memory" / group.lstrip("/"), "memory.limit_in_bytes",
                           "memory.usage_in_bytes"))
    for directory, limit_file, usage_file in groups:
        while True:  # the group and those above it, to the root of its hierarchy
            try:
                limit = (directory / limit_file).read_text().strip()
                if limit != "max" and float(limit) < 2.0**60:
                    free.append(float(limit) - float((directory / usage_file).read_text()))
            except (OSError, ValueError):
                pass
            if directory in (root, root / "memory") or directory.parent == directory:
                break
            directory = directory.parent
    return min(free) if free else None
