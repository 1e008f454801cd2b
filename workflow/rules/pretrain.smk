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
        pretrain=lambda wildcards: wc.pretrain_params(config),
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
        pretrain=lambda wildcards: wc.pretrain_params(config, int(wildcards.member)),
    log:
        "results/logs/pretrain/{experiment}/{setting}/{kind}/{heldout}.seed{member}.log",
    benchmark:
        "results/benchmarks/pretrain/{experiment}/{setting}/{kind}/{heldout}.seed{member}.tsv"
