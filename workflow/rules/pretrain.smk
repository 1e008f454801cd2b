# Leave-one-dataset-out pre-training: one job per (experiment, model kind, held-out dataset).


rule pretrain_lodo:
    input:
        tasks=training_data,
    output:
        model="results/models/{experiment}/{kind}/{heldout}.npz",
    params:
        model=lambda wildcards: {
            **config.get("model", {}),
            "head": EXPERIMENTS[wildcards.experiment]["head"],
            "use_calibration": wildcards.kind == "plf",
            "seed": config["seed"],
        },
        pretrain=lambda wildcards: {**config.get("pretrain", {}), "seed": config["seed"]},
    log:
        "results/logs/pretrain_lodo/{experiment}/{kind}/{heldout}.log",
    benchmark:
        "results/benchmarks/pretrain_lodo/{experiment}/{kind}/{heldout}.tsv"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
    conda:
        ENV
    script:
        "../scripts/pretrain_lodo.py"
