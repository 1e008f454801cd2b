import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))  # the den package

from den import workflow_config as wc  # noqa: E402


wc.check_repeated_options(sys.argv)  # Snakemake keeps the last of a repeated --configfile
SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"
try:
    validate(config, str(SCHEMA))  # also fills in the schema's defaults
except WorkflowError:  # its message dumps the whole schema and config: name the key instead
    raise wc.ConfigError(f"config does not fit {SCHEMA.name} (see config/README.md): "
                         f"{wc.schema_error(config, SCHEMA)}") from None
wc.expand_dataset_directories(config)  # a directory of CSV files: one dataset per file
EXPERIMENTS = wc.experiments(config)
MODEL_FILES = wc.model_index(config)  # experiment's model file -> the one job that trains that model
MODEL_JOBS = wc.model_jobs(MODEL_FILES)  # that job's file -> (experiment, setting) whose settings it reads
SCORE_FILES = wc.score_index(config, MODEL_FILES)  # repeated evaluation -> the job that does it

ENV = "../../environment.yml"
NAME = wc.NAME


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
    digest=f"[0-9a-f]{{{wc.MODEL_DIGEST_CHARS}}}",


def model_job(wildcards):
    """(experiment spec, setting) whose settings a pre-training job (rule pretrain's
    wildcards) reads (``wc.model_jobs``); a model no experiment pre-trains is an error that
    names it."""
    member = f".seed{wildcards.member}" if "member" in wildcards.keys() else ""
    path = f"{wc.PRETRAINED_DIR}/{wildcards.kind}/{wildcards.heldout}.{wildcards.digest}{member}.npz"
    wc.planned_model_file(MODEL_FILES, path)
    experiment, setting = MODEL_JOBS[path]
    return EXPERIMENTS[experiment], setting


def training_data(wildcards):
    """Data files of the datasets a pre-training run learns from."""
    spec, _ = model_job(wildcards)
    return [wc.data_file(d) for d in wc.training_datasets(config, spec, wildcards.heldout)]


def experiment_model(wildcards):
    """The pre-trained file an experiment's model file is a copy of (rule model_copy)."""
    path = f"results/models/{wildcards.experiment}/{wildcards.setting}/{wildcards.kind}/{wildcards.model}.npz"
    wc.planned_model_file(MODEL_FILES, path)
    return MODEL_FILES[path]


def evaluation_protocol(wildcards):
    """The keyword arguments of ``evaluate_method`` (``wc.evaluation_protocol``): one
    parameter, as snakemake's cost per parameter adds up over the paper's ~14,000 evaluation
    jobs."""
    return wc.evaluation_protocol(config, EXPERIMENTS[wildcards.experiment], wildcards.method)


def evaluation_inputs(wildcards):
    """The dataset file and, for DEN and meta-learned methods, the model that did not see the
    dataset (with ``pretrain.seeds`` > 1, a list: every pre-training member of it); for an
    evaluation another score file already does (``SCORE_FILES``), only that file."""
    spec = wc.planned_score_file(EXPERIMENTS, wildcards.experiment, wildcards.setting, wildcards.method,
                                 wildcards.dataset, wildcards.repeat)
    path = wc.score_file(wildcards.experiment, wildcards.setting, wildcards.method, wildcards.dataset,
                         wildcards.repeat)
    if path in SCORE_FILES:
        return {"computed": SCORE_FILES[path]}
    inputs = {"data": wc.data_file(wildcards.dataset)}
    members = wc.evaluation_model_files(config, MODEL_FILES, wildcards.experiment, spec,
                                        wildcards.setting, wildcards.method, wildcards.dataset)
    if members:
        inputs["model"] = members if len(members) > 1 else members[0]
    return inputs
