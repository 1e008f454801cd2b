import sys
from pathlib import Path

from snakemake.utils import validate

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))  # the den package

from den.workflow_config import experiments, model_kinds, score_files  # noqa: E402


validate(config, "../schemas/config.schema.yaml")
EXPERIMENTS = experiments(config)

ENV = "../../environment.yml"
NAME = "[A-Za-z0-9][A-Za-z0-9_-]*"


wildcard_constraints:
    dataset=NAME,
    experiment=NAME,
    method=NAME,
    heldout=NAME,
    kind="plf|no_plf",
    repeat=r"\d+",


def training_data(wildcards):
    """Data files of the experiment's datasets other than the held-out one."""
    names = EXPERIMENTS[wildcards.experiment]["datasets"]
    return [f"results/data/{d}.npz" for d in names if d != wildcards.heldout]


def evaluation_inputs(wildcards):
    """The dataset file and, for DEN methods, the model pre-trained without that dataset."""
    from den.experiments import pretrained_model_kind

    inputs = {"data": f"results/data/{wildcards.dataset}.npz"}
    kind = pretrained_model_kind(config["methods"][wildcards.method])
    if kind:
        inputs["model"] = f"results/models/{wildcards.experiment}/{kind}/{wildcards.dataset}.npz"
    return inputs
