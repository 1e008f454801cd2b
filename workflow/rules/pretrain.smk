# Pre-training: one job per (experiment, setting, model kind, held-out dataset or "all") and,
# with pretrain.seeds = S > 1, one more per further seed (members 1..S-1, "<held-out>.seed<m>.npz").


rule pretrain:
    input:
        tasks=training_data,
    output:
        model="results/models/{experiment}/{setting}/{kind}/{heldout}.npz",
    params:
        model=lambda wildcards: wc.model_params(
            config, EXPERIMENTS[wildcards.experiment], wildcards.setting, wildcards.kind
        ),
        pretrain=lambda wildcards: wc.pretrain_params(config, 0, EXPERIMENTS[wildcards.experiment]),
    log:
        "results/logs/pretrain/{experiment}/{setting}/{kind}/{heldout}.log",
    benchmark:
        "results/benchmarks/pretrain/{experiment}/{setting}/{kind}/{heldout}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    conda:
        ENV
    script:
        "../scripts/pretrain.py"


use rule pretrain as pretrain_member with:
    output:
        model="results/models/{experiment}/{setting}/{kind}/{heldout}.seed{member}.npz",
    params:
        model=lambda wildcards: wc.model_params(
            config, EXPERIMENTS[wildcards.experiment], wildcards.setting, wildcards.kind
        ),
        pretrain=lambda wildcards: wc.pretrain_params(
            config, int(wildcards.member), EXPERIMENTS[wildcards.experiment]
        ),
    log:
        "results/logs/pretrain/{experiment}/{setting}/{kind}/{heldout}.seed{member}.log",
    benchmark:
        "results/benchmarks/pretrain/{experiment}/{setting}/{kind}/{heldout}.seed{member}.tsv"


# The pre-trained models shipped as package data (den.pretrained; `make shipped-model` copies them
# there): the config's model and pretrain settings (the `shipped` section's own over them) on the
# datasets of that section, once without the PLF block (no-plf: the validated default, no
# fine-tuning) and once with it (plf: the calibration that the paper's fine-tuning tunes).
rule shipped_model:
    input:
        tasks=lambda wildcards: [wc.data_file(d) for d in wc.shipped_datasets(config)],
    output:
        model="results/shipped/den-binary-{calibration}.npz",
    wildcard_constraints:
        calibration="plf|no-plf",
    params:
        model=lambda wildcards: wc.shipped_model_params(config, wildcards.calibration == "plf"),
        pretrain=lambda wildcards: wc.shipped_pretrain_params(config),
    log:
        "results/logs/shipped_model/{calibration}.log",
    benchmark:
        "results/benchmarks/shipped_model/{calibration}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    conda:
        ENV
    script:
        "../scripts/pretrain.py"
