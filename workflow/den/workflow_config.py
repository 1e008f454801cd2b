"""Checks of the workflow config beyond its schema, and the job lists the rules expand."""

from __future__ import annotations

from den.experiments import check_method, pretrained_model_kind

EXPERIMENT_DEFAULTS = {"caption": "", "head": "binary", "metric": "auc", "n_support": 50, "repeats": 20}


class ConfigError(ValueError):
    """A config that names things that do not exist; the message names the key."""


def experiments(config: dict) -> dict[str, dict]:
    """The experiments with defaults filled in, after checking every cross-reference.

    Raises:
        ConfigError: an experiment names an unknown dataset or method, or a method entry
            is invalid.
    """
    out = {}
    for name, spec in config["experiments"].items():
        full = {**EXPERIMENT_DEFAULTS, **spec}
        for dataset in full["datasets"]:
            if dataset not in config["datasets"]:
                raise ConfigError(f"experiments.{name}.datasets: unknown dataset {dataset!r}; "
                                  f"define it under 'datasets' (known: {sorted(config['datasets'])})")
        for method in full["methods"]:
            if method not in config["methods"]:
                raise ConfigError(f"experiments.{name}.methods: unknown method {method!r}; "
                                  f"define it under 'methods' (known: {sorted(config['methods'])})")
            try:
                check_method(method, config["methods"][method])
            except ValueError as err:
                raise ConfigError(f"methods.{method}: {err}") from err
        out[name] = full
    return out


def model_kinds(config: dict, experiment: str) -> list[str]:
    """Pre-trained model kinds ("plf", "no_plf") the experiment's methods need."""
    spec = config["experiments"][experiment]
    kinds = {pretrained_model_kind(config["methods"][m]) for m in spec["methods"]}
    return sorted(k for k in kinds if k)


def score_files(config: dict, experiment: str) -> list[str]:
    """Every evaluation JSON of an experiment: one per (method, dataset, repeat)."""
    spec = experiments(config)[experiment]
    return [f"results/scores/{experiment}/{m}/{d}/{r}.json" for m in spec["methods"]
            for d in spec["datasets"] for r in range(spec["repeats"])]
