# Pre-training: one job per (experiment, setting, model kind, held-out dataset or "all").


rule pretrain:
    input:
        tasks=training_data,
    output:
        model="results/models/{experiment}/{setting}/{kind}/{heldout}.npz",
    params:
        model=lambda wildcards: wc.model_params(
            config, EXPERIMENTS[wildcards.experiment], wildcards.setting, wildcards.kind
        ),
        pretrain=lambda wildcards: {**config.get("pretrain", {}), "seed": config["seed"]},
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
