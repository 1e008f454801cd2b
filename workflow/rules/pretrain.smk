# Pre-training: one job per model the experiments use (``wc.model_index``), written as
# results/models/pretrained/<kind>/<held-out dataset or "all">.<digest>.npz, the digest naming
# its training datasets and settings, so experiments that pre-train alike share the job and
# editing one experiment moves no other's model; with pretrain.seeds = S > 1, one more per
# further seed (members 1..S-1, "<held-out>.<digest>.seed<m>.npz"). An experiment's own path,
# results/models/<experiment>/<setting>/<kind>/<held-out>.npz, is a copy made on request.


rule pretrain:
    input:
        tasks=training_data,
    output:
        model="results/models/pretrained/{kind}/{heldout}.{digest}.npz",
    params:
        model=lambda wildcards: wc.model_params(config, *model_job(wildcards), wildcards.kind),
        pretrain=lambda wildcards: wc.pretrain_params(config, 0, model_job(wildcards)[0]),
    log:
        "results/logs/pretrain/{kind}/{heldout}.{digest}.log",
    benchmark:
        "results/benchmarks/pretrain/{kind}/{heldout}.{digest}.tsv"
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
        model="results/models/pretrained/{kind}/{heldout}.{digest}.seed{member}.npz",
    params:
        model=lambda wildcards: wc.model_params(config, *model_job(wildcards), wildcards.kind),
        pretrain=lambda wildcards: wc.pretrain_params(
            config, int(wildcards.member), model_job(wildcards)[0]
        ),
    log:
        "results/logs/pretrain/{kind}/{heldout}.{digest}.seed{member}.log",
    benchmark:
        "results/benchmarks/pretrain/{kind}/{heldout}.{digest}.seed{member}.tsv"


# An experiment's model under its own name (nothing depends on it: ask for it as a target).
rule model_copy:
    input:
        model=lambda wildcards: experiment_model(wildcards),
    output:
        model="results/models/{experiment}/{setting}/{kind}/{model}.npz",
    wildcard_constraints:
        model=rf"{NAME}(\.seed[1-9]\d*)?",
    log:
        "results/logs/model_copy/{experiment}/{setting}/{kind}/{model}.log",
    benchmark:
        "results/benchmarks/model_copy/{experiment}/{setting}/{kind}/{model}.tsv"
    threads: 1
    resources:
        mem_mb=200,
        runtime=5,
    conda:
        ENV
    shell:
        "cp {input.model} {output.model} 2> {log}"


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
