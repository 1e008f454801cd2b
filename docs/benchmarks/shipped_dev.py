"""Pre-train a model as the shipped PLF-free one is pre-trained, or with a seed or a setting
changed, to score it on real sets nobody pre-trained on (``unseen_dev.py --model``; session 38).

The shipped models (``den.pretrained``) are pre-trained on every corpus set, the benchmark's 20
and 60 R datasets (rule ``shipped_model``, ``make shipped-model``), so no held-back corpus set can
test a change of their pre-training; the held-back protocol of ``corpus_dev.py`` pre-trains dev
models on part of the corpus instead. The unseen groups of ``unseen_dev.py`` (32 real sets in four
groups) were seen by no model, so a model pre-trained on the shipped data can be scored on them
directly. This script reads the settings and datasets exactly as the rule does
(``den.workflow_config.shipped_model_params`` and ``shipped_pretrain_params`` on
``config/config.yaml`` with ``config/corpus.yaml`` over it, checked against the workflow's
schema, which fills in its defaults), changes what is asked, and pre-trains on the tasks the
workflow built under ``results/data/`` (``snakemake ... results/shipped/den-binary-no-plf.npz``
builds any that are missing, or their data rule alone).

    python docs/benchmarks/shipped_dev.py NAME [--seed S] [--model JSON] [--pretrain JSON]
        [--leave-out NAME,NAME...] [--extra-tasks DIR]
        # -> results/shipped_dev/NAME.npz; with no option, the shipped no-PLF settings

A pre-training seed is also the model's initialisation seed, as in the rule. On a machine other
than the shipped model's, the same settings and seed end elsewhere (the CPU computes in another
order), so a candidate is paired with the shipped settings pre-trained on the same machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # corpus_tables


def shipped_config(data_dir: str = "../shared/datasets") -> dict:
    """The workflow's config as ``make shipped-model`` sees it: ``config/config.yaml``, then
    ``config/corpus.yaml`` over it (``corpus_tables.load_config``), ``data_dir`` set, checked and
    completed by the schema."""
    from corpus_tables import load_config
    from snakemake.utils import validate

    config = load_config()
    config["data_dir"] = data_dir
    validate(config, str(ROOT / "workflow" / "schemas" / "config.schema.yaml"))
    return config


def shipped_settings(seed: int | None = None, model: dict | None = None,
                     pretrain: dict | None = None, leave_out: list[str] | None = None
                     ) -> tuple[list[str], dict, dict]:
    """(dataset names, ModelConfig keywords, PretrainConfig keywords) of the shipped PLF-free
    model, with ``seed`` (model and pre-training both; None: the config's), the ``model`` and
    ``pretrain`` keywords over them, and the config dataset names ``leave_out`` dropped from
    its pre-training sets (a name not among them stops it)."""
    from den import workflow_config as wc

    config = shipped_config()
    model_params = wc.shipped_model_params(config, use_calibration=False)
    pretrain_params = wc.shipped_pretrain_params(config)
    if seed is not None:
        model_params["seed"] = pretrain_params["seed"] = seed
    names, left_out = wc.shipped_datasets(config), set(leave_out or ())
    unknown = sorted(left_out - set(names))
    if unknown:
        raise SystemExit(f"--leave-out: {', '.join(unknown)} not among the shipped pre-training sets "
                         f"(config names, e.g. {names[0]})")
    return ([name for name in names if name not in left_out], {**model_params, **(model or {})},
            {**pretrain_params, **(pretrain or {})})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the model is saved as results/shipped_dev/NAME.npz")
    parser.add_argument("--seed", type=int, help="model and pre-training seed (default: the shipped one)")
    parser.add_argument("--model", default="{}", help="ModelConfig keywords over the shipped ones (JSON)")
    parser.add_argument("--pretrain", default="{}",
                        help="PretrainConfig keywords over the shipped ones (JSON)")
    parser.add_argument("--leave-out", default="", metavar="NAME,NAME...",
                        help="config dataset names (e.g. corpus-ring) left out of the shipped pre-training "
                        "sets (session 46)")
    parser.add_argument("--extra-tasks", type=Path, metavar="DIR",
                        help="also pre-train on every Task .npz in DIR (rdatasets_more_dev.py; session 49)")
    args = parser.parse_args(argv)
    from den import workflow_config as wc
    from den.data.tasks import Task
    from den.experiments import pretrain_model
    from den.model.config import ModelConfig
    from den.train.pretrain import PretrainConfig

    names, model_params, pretrain_params = shipped_settings(
        args.seed, json.loads(args.model), json.loads(args.pretrain),
        [name for name in args.leave_out.split(",") if name])
    try:  # a misspelt setting stops here, before the tasks are read
        ModelConfig(**model_params), PretrainConfig(**pretrain_params)
    except (TypeError, ValueError) as error:
        raise SystemExit(f"--model / --pretrain: {error}") from None
    missing = [wc.data_file(name) for name in names if not (ROOT / wc.data_file(name)).is_file()]
    if missing:
        raise SystemExit(f"{len(missing)} task files are missing (e.g. {missing[0]}); build them (every "
                         f"set of config/corpus.yaml, 2 minutes on 2 cores) with: snakemake --cores 2 "
                         f"--configfile config/corpus.yaml --config data_dir=../shared/datasets "
                         f"--until prepare_dataset")
    out = ROOT / "results" / "shipped_dev" / f"{args.name}.npz"
    print(f"{args.name}: {len(names)} datasets; model {model_params}; pretrain {pretrain_params}", flush=True)
    started = time.time()
    tasks = [Task.load(ROOT / wc.data_file(name)) for name in names]
    extra = sorted(args.extra_tasks.glob("*.npz")) if args.extra_tasks else []
    if args.extra_tasks and not extra:
        raise SystemExit(f"--extra-tasks: no .npz task files in {args.extra_tasks}")
    tasks += [Task.load(path) for path in extra]
    if extra:
        print(f"{args.name}: {len(extra)} extra tasks from {args.extra_tasks}", flush=True)
    model = pretrain_model(tasks, model_params, pretrain_params)
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save(out)
    print(f"{args.name}: pre-trained in {time.time() - started:.0f} s -> {out}")


if __name__ == "__main__":
    main()
