"""Methods of the experiments and one evaluation job: (method, dataset, repeat) -> metrics.

A method is a config entry: ``{kind: den, variant: den|no_finetune|no_plf|adapt}``,
``{kind: direct, model: logistic_regression|mlp|gradient_boosting|knn, hidden: [8]}`` or
``{kind: meta, model: proto_net|..., settings: {...}}`` (a baseline of
``den.baselines.meta``; ``settings`` overrides the config's ``baselines`` section). DEN
methods need a pre-trained model: ``den`` and ``no_finetune`` share the model pre-trained
with PLFs, ``no_plf`` uses one pre-trained without them, and so does ``adapt``, which adapts
its network to each task's support rows with the shipped settings
(``den.train.config.adapt_config``, every class of a multiclass task too); each meta method
has its own (``pretrained_model_kind``). A new kind of method plugs in here, not in the rules.
"""

from __future__ import annotations

import os
import zlib

import numpy as np

from den.data.tasks import Task
from den.evaluate import score, support_query_split

METHOD_KINDS = ("den", "direct", "meta")
DEN_VARIANTS = ("den", "no_finetune", "no_plf", "adapt")
# The FinetuneConfig settings a method of variant "adapt" may set in its ``finetune`` entry, over
# ``den.train.config.adapt_config`` (so one table compares adaptation settings as methods).
ADAPT_SETTINGS = ("network_steps", "network_learning_rate", "network_min_class_rows",
                  "network_one_vs_rest", "tuples_per_step")
META_PREFIX = "meta-"

# Rows whose covariates place DEN's PLF keypoints at evaluation: the support rows and the
# query rows' covariates (transductive, the default), or the support rows alone (as the
# baselines see a task; config/paper.yaml).
KEYPOINT_SOURCES = ("support_and_query", "support")
DEFAULT_KEYPOINTS_FROM = "support_and_query"


def _not_adaptation_settings(finetune: dict | None) -> list[str]:
    """The keys of a variant-adapt method's ``finetune`` that are not ``ADAPT_SETTINGS``, sorted."""
    return sorted(set(finetune or {}) - set(ADAPT_SETTINGS))


def check_method(name: str, spec: dict) -> None:
    """Raise ValueError naming the method when its config entry is invalid."""
    import dataclasses

    from den.baselines.direct import DIRECT_MODELS
    from den.baselines.meta import MetaConfig, baseline_names

    kind = spec.get("kind")
    if kind not in METHOD_KINDS:
        raise ValueError(f"method {name!r}: kind must be one of {METHOD_KINDS}, got {kind!r}")
    keys = {"den": {"kind", "variant", "label", "finetune"}, "direct": {"kind", "model", "hidden", "label"},
            "meta": {"kind", "model", "settings", "label"}}[kind]
    ignored = sorted(set(spec) - keys)
    if ignored or ("hidden" in spec and spec.get("model") != "mlp"):
        raise ValueError(f"method {name!r}: {ignored or ['hidden']} would be ignored by a "
                         f"{kind} method{'' if ignored else ' other than mlp'}; its keys are "
                         f"{sorted(keys)} (hidden: mlp only)")
    if kind == "den" and spec.get("variant", "den") not in DEN_VARIANTS:
        raise ValueError(f"method {name!r}: variant must be one of {DEN_VARIANTS}")
    if "finetune" in spec and not is_fine_tuned(spec):
        if spec.get("variant") != "adapt":
            raise ValueError(f"method {name!r}: finetune would be ignored: only variants 'den' (its "
                             f"fine-tuning) and 'adapt' (its network adaptation) read it (variant "
                             f"{spec.get('variant')!r} does not)")
        other = _not_adaptation_settings(spec["finetune"])
        if other:
            raise ValueError(f"method {name!r}: variant 'adapt' reads only the adaptation's settings "
                             f"{list(ADAPT_SETTINGS)} from finetune, not {other}")
    if kind == "direct" and spec.get("model") not in DIRECT_MODELS:
        raise ValueError(f"method {name!r}: model must be one of {DIRECT_MODELS}, got {spec.get('model')!r}")
    if kind == "meta":
        if spec.get("model") not in baseline_names():
            raise ValueError(f"method {name!r}: model must be one of {baseline_names()}, got "
                             f"{spec.get('model')!r} (a baseline of your own: see den.baselines.meta)")
        known = {f.name for f in dataclasses.fields(MetaConfig)} - {"head", "seed"}
        unknown = sorted(set(spec.get("settings") or {}) - known)
        if unknown:
            raise ValueError(f"method {name!r}: unknown settings {unknown}; known: {sorted(known)}")


def pretrained_model_kind(name: str, spec: dict) -> str | None:
    """Which pre-trained model method ``name`` needs: "plf" or "no_plf" (DEN), "meta-<name>"
    (its own baseline model) or None (direct methods)."""
    kind = spec.get("kind")
    if kind == "meta":
        return META_PREFIX + name
    if kind != "den":
        return None
    return "no_plf" if spec.get("variant", "den") in ("no_plf", "adapt") else "plf"


def is_fine_tuned(spec: dict) -> bool:
    """Whether method ``spec`` (a config entry) fine-tunes DEN's PLFs on the support rows: the
    ``den`` variant of ``kind: den``, the only method the fine-tuning settings apply to."""
    return spec.get("kind") == "den" and spec.get("variant", "den") == "den"


def pretrain_model(tasks: list[Task], params: dict, pretrain: dict, checkpoint_dir=None,
                   restart_other_run: bool = False):
    """Pre-train the model of one pre-training job.

    Args:
        params: ``workflow_config.model_params``: DEN's ModelConfig keywords, or a baseline's
            MetaConfig keywords plus ``baseline`` (its name).
        pretrain: DEN's PretrainConfig keywords (unused by baselines, whose steps and batch
            sizes are MetaConfig fields).
        checkpoint_dir: DEN resumes an interrupted run from here.
        restart_other_run: a checkpoint there of other settings or data is deleted and the run
            starts over (``den.train.pretrain.pretrain``), instead of raising.

    Returns:
        the model (``DEN`` or ``MetaLearner``), with ``save(path)``.
    """
    if "baseline" in params:
        from den.baselines.meta import MetaConfig, make_baseline
        from den.progress import Progress

        settings = dict(params)
        learner = make_baseline(settings.pop("baseline"), MetaConfig(**settings))
        return learner.pretrain(tasks, Progress(learner.config.steps, f"pretrain {learner.name}"))
    from den.model.config import ModelConfig
    from den.train import pretrain as den_pretrain

    return den_pretrain.pretrain(tasks, ModelConfig(**params), den_pretrain.PretrainConfig(**pretrain),
                                 checkpoint_dir=checkpoint_dir, restart_other_run=restart_other_run)


def load_model(path, spec: dict):
    """The pre-trained model a method evaluates with: a ``MetaLearner``, a ``DEN``, or for a
    list of paths (DEN pre-trained with several seeds, ``pretrain.seeds``) a list of ``DEN``.

    Raises:
        DENModelError: a file is missing or not a model; the message ends with how the
            workflow pre-trains it again (``DEN.load``'s own advice is a practitioner's).
    """
    from den.errors import DENModelError

    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    try:
        if spec.get("kind") == "meta":
            from den.baselines.meta import MetaLearner

            return MetaLearner.load(path)
        from den.model.den import DEN

        models = [DEN.load(member) for member in paths]
    except DENModelError as err:
        raise DENModelError(f"{err}. In the workflow: pre-train it again with `snakemake --forcerun "
                            f"{' '.join(map(str, paths))}` (and the run's --configfile options)") from None
    return models[0] if isinstance(path, (str, os.PathLike)) else models


SCORE_KEYS = ("experiment", "setting", "method", "dataset", "repeat")  # what a score file is of


def score_record(metrics: dict, experiment: str, setting: str, method: str, dataset: str,
                 repeat: int) -> dict:
    """A score file's record: which evaluation it is (``SCORE_KEYS``), then its metrics.

    ``metrics`` is ``evaluate_method``'s result, or another score file's record of the same
    evaluation (rule evaluate copies those, ``den.workflow_config.score_index``): its own
    ``SCORE_KEYS`` are replaced by these."""
    return {"experiment": experiment, "setting": setting, "method": method, "dataset": dataset,
            "repeat": int(repeat), **{k: v for k, v in metrics.items() if k not in SCORE_KEYS}}


MEMBER_SEED_STRIDE = 1000  # fine-tuning seeds of pre-training member m: split seed + m * stride


def split_seed(seed: int, dataset: str, repeat: int) -> int:
    """The seed of a (dataset, repeat) split: the same for every method, so they compare."""
    return int(np.random.default_rng([seed, zlib.crc32(dataset.encode()), repeat]).integers(2**31))


def subtask(task: Task, features: tuple[int, int], seed: int) -> Task:
    """A random subset of C of the task's features, C uniform in ``features`` = (lo, hi)
    (capped by d): the aggregation sub-tasks of the fixed- and variable-length tables."""
    rng = np.random.default_rng([seed, 7])
    hi = min(task.n_features, features[1])
    c = int(rng.integers(min(features[0], hi), hi + 1))
    keep = np.sort(rng.choice(task.n_features, c, replace=False))
    return Task(name=task.name, x=task.x[:, keep], y=task.y,
                feature_names=[task.feature_names[j] for j in keep], classes=task.classes,
                metadata=task.metadata)


def evaluate_method(spec: dict, task: Task, *, n_support: int, seed: int, repeat: int,
                    model=None, finetune_config=None, subtask_features=None,
                    max_query: int | None = None, subtasks: int = 1,
                    keypoints_from: str = DEFAULT_KEYPOINTS_FROM) -> dict:
    """Split ``task``, fit the method on the support rows, score the query rows. A task with
    ``metadata["support_pool"]`` = P draws its support rows from rows 0..P-1 and queries the
    rest (``support_query_split``).

    With ``subtasks`` = k > 1 this is done k times on independent splits (and feature
    subsets) and the metrics are averaged: one repeat of the paper's aggregation tables
    holds 100 sub-tasks. Sub-task 0 is the single evaluation of ``subtasks`` = 1.

    Args:
        spec: the method's config entry.
        subtask_features: (lo, hi) to evaluate on a random sub-task of C in [lo, hi] features
            (drawn per repeat and sub-task, the same for every method); None uses every feature.
        max_query: at most this many query rows (a random subset, the same for every method);
            None uses every non-support row.
        model: the pre-trained ``DEN`` or a list of them (DEN methods: members pre-trained
            with different seeds, each fine-tuned on its own, their class probabilities
            averaged), or the ``MetaLearner`` (meta methods).
        finetune_config: ``FinetuneConfig`` (or its keyword arguments) for the ``den`` variant;
            for the ``adapt`` variant, keyword arguments (``ADAPT_SETTINGS``) over
            ``adapt_config()``'s; TensorFlow is imported only for DEN and meta methods.
        keypoints_from: DEN methods: "support_and_query" places each feature's PLF keypoints
            over the support rows and the query rows' covariates (transductive: the query's
            values widen the span, its labels are not used); "support" over the support rows
            only, the information the other methods get. Other methods ignore it.

    Returns:
        dict with auc, accuracy, n_support, n_query, n_features, split_seed (of sub-task 0)
        and subtasks; DEN methods add finetune_epochs (epochs of fine-tuning the task models
        had, averaged over the members: 0 without it, fewer than configured where early
        stopping chose so), members (pre-trained models averaged) and features_read (columns
        the task models read, averaged: fewer than n_features where ``feature_counts`` chose so).
    """
    if subtasks < 1:
        raise ValueError(f"subtasks must be >= 1, got {subtasks}")
    if keypoints_from not in KEYPOINT_SOURCES:
        raise ValueError(f"keypoints_from must be one of {KEYPOINT_SOURCES}, got {keypoints_from!r}")
    if subtask_features is not None and subtask_features[1] > task.n_features:  # to the job's log
        print(f"note: subtask_features {list(subtask_features)} reach past {task.name}'s "
              f"{task.n_features} features: its sub-tasks take at most {task.n_features}")
    runs = [_evaluate_once(spec, task, n_support=n_support, seed=seed, repeat=repeat, k=k, model=model,
                           finetune_config=finetune_config, subtask_features=subtask_features,
                           max_query=max_query, keypoints_from=keypoints_from) for k in range(subtasks)]
    out = dict(runs[0])
    for key in ("auc", "accuracy", "n_query", "n_features", "finetune_epochs"):
        if key in out:
            out[key] = float(np.mean([run[key] for run in runs]))
    return {**out, "subtasks": subtasks}


def _evaluate_once(spec, task, *, n_support, seed, repeat, k, model, finetune_config, subtask_features,
                   max_query, keypoints_from) -> dict:
    s = split_seed(seed, task.name, repeat) if k == 0 else split_seed(seed, f"{task.name}#{k}", repeat)
    if subtask_features is not None:
        task = subtask(task, tuple(subtask_features), s)
    try:
        support, query = support_query_split(task.y, n_support, s, max_query,
                                             support_pool=task.metadata.get("support_pool"))
    except ValueError as err:  # the workflow plans most such tasks away; a download can't be
        raise ValueError(f"task {task.name!r}: {err}; lower the experiment's n_support or leave "
                         f"{task.name!r} out of it") from None
    extra = {}
    if spec["kind"] == "den":
        from den.train.config import FinetuneConfig, adapt_config
        from den.train.finetune import fit_task

        base = None
        if is_fine_tuned(spec):
            base = finetune_config or FinetuneConfig()
            base = FinetuneConfig(**base) if isinstance(base, dict) else base
        elif spec.get("variant") == "adapt":
            base = adapt_config()
            if finetune_config:  # a method's own adaptation settings (its config entry's finetune)
                other = _not_adaptation_settings(finetune_config)
                if other:
                    raise ValueError(f"variant adapt reads only {list(ADAPT_SETTINGS)} of finetune_config, "
                                     f"not {other} (the den variant's fine-tuning)")
                base = FinetuneConfig(**{**base.to_dict(), **dict(finetune_config)})
        members = model if isinstance(model, (list, tuple)) else [model]
        unlabeled = task.x[query] if keypoints_from == "support_and_query" else None
        probas, epochs, read = [], [], []
        for m, den in enumerate(members):  # member m's folds and halvings: seed s + m * stride
            config = None if base is None else FinetuneConfig(**{**base.to_dict(),
                                                                  "seed": s + m * MEMBER_SEED_STRIDE})
            fitted = fit_task(den, task.x[support], task.y[support], task.n_classes, config,
                              x_unlabeled=unlabeled)  # a binary head on > 2 classes: one-vs-rest
            probas.append(fitted.proba(task.x[query]))
            epochs.append(np.mean([task_model.finetune_epochs for task_model in fitted.task_models]))
            read.append(np.mean([task_model.n_features for task_model in fitted.task_models]))
        proba = np.mean(probas, axis=0)
        extra = {"finetune_epochs": float(np.mean(epochs)), "members": len(members),
                 "features_read": float(np.mean(read))}
    elif spec["kind"] == "meta":
        model.adapt(task.x[support], task.y[support], task.n_classes, seed=s)
        proba = model.predict_proba(task.x[query])
    else:
        from den.baselines.direct import direct_predict_proba

        proba = direct_predict_proba(spec["model"], task.x[support], task.y[support], task.x[query],
                                     task.n_classes, hidden=spec.get("hidden", (8,)), seed=s)
    return {**score(task.y[query], proba), "n_support": int(len(support)), "n_query": int(len(query)),
            "n_features": task.n_features, "split_seed": s, **extra}
