# den-workflow: `snakemake --cores N` runs the default config (offline, minutes on 2 cores).
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/report.smk"


# Cheap rules (seconds, little memory) run on the submitting host, not as cluster jobs
# (profiles/slurm); simulated_task stays a cluster job: it loads a whole image set.
localrules:
    all,
    table,
    figure,
    model_copy,
    simulated_tasks_table,


rule all:
    default_target: True
    input:
        expand("results/tables/{experiment}.tex", experiment=EXPERIMENTS),
        wc.figure_targets(config),
        wc.simulated_report_targets(config),
