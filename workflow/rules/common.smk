import sys
from pathlib import Path

from snakemake.utils import validate

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))  # the den package

from den import workflow_config as wc  # noqa: E402
from den.experiments import is_fine_tuned, pretrained_model_kind  # noqa: E402


validate(config, "../schemas/config.schema.yaml")
EXPERIMENTS = wc.experiments(config)
MODEL_FILES = wc.model_index(config)  # model file -> the one job that trains that model

ENV = "../../environment.yml"
NAME = "[A-Za-z0-9][A-Za-z0-9_-]*"


wildcard_constraints:
    dataset=NAME,
    experiment=NAME,
    method=NAME,
    heldout=NAME,
    setting=NAME,
    images=NAME,
    kind=f"plf|no_plf|meta-{NAME}",
    repeat=r"\d+",
    share=r"[1-9][0-9]?",
    shard=r"\d+",
    member=r"[1-9]\d*",


def training_data(wildcards):
    """Data files of the datasets a pre-training run learns from."""
    spec = EXPERIMENTS[wildcards.experiment]
    return [wc.data_file(d) for d in wc.training_datasets(config, spec, wildcards.heldout)]


def evaluation_protocol(wildcards):
    """The method's config entry and the keyword arguments of ``evaluate_method`` (split
    settings, seed, fine-tuning): one parameter, as snakemake's cost per parameter adds up
    over the paper's ~12,000 evaluation jobs. Only the fine-tuned DEN variant gets the
    fine-tuning settings, so changing them reruns only its evaluations; DEN methods get
    keypoints_from only where the config changes it from the default."""
    spec = EXPERIMENTS[wildcards.experiment]
    method = config["methods"][wildcards.method]
    return {"method": method, "n_support": spec["n_support"],
            "subtask_features": spec["subtask_features"], "max_query": spec["max_query"],
            "subtasks": spec["subtasks"], "seed": config["seed"],
            "finetune_config": config.get("finetune", {}) if is_fine_tuned(method) else None,
            **wc.keypoint_options(config, method)}


def evaluation_inputs(wildcards):
    """The dataset file and, for DEN methods, the model that did not see the dataset (with
    ``pretrain.seeds`` > 1, a list: every pre-training member of it)."""
    spec = EXPERIMENTS[wildcards.experiment]
    inputs = {"data": wc.data_file(wildcards.dataset)}
    kind = pretrained_model_kind(wildcards.method, config["methods"][wildcards.method])
    if kind:
        held_out = wc.held_out_name(spec, wildcards.dataset)
        path = f"results/models/{wildcards.experiment}/{wildcards.setting}/{kind}/{held_out}.npz"
        members = [MODEL_FILES[member] for member in wc.member_files(config, path, kind)]
        inputs["model"] = members if len(members) > 1 else members[0]
    return inputs
