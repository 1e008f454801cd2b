# Pre-train DEN on generated tasks, evaluate it on bundled datasets, summarise.


rule pretrain_synthetic:
    output:
        model="results/models/synthetic.npz",
    params:
        model=config["model"],
        pretrain=config["pretrain"],
        seed=config["seed"],
    log:
        "results/logs/pretrain_synthetic.log",
    benchmark:
        "results/benchmarks/pretrain_synthetic.tsv"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        ENV
    script:
        "../scripts/pretrain_synthetic.py"


rule evaluate_bundled:
    input:
        model="results/models/synthetic.npz",
    output:
        scores="results/demo/scores/{dataset}.csv",
    params:
        evaluate=config["evaluate"],
        finetune=config["finetune"],
        seed=config["seed"],
    log:
        "results/logs/evaluate_bundled/{dataset}.log",
    benchmark:
        "results/benchmarks/evaluate_bundled/{dataset}.tsv"
    threads: 2
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        ENV
    script:
        "../scripts/evaluate_bundled.py"


rule summarize_demo:
    input:
        scores=expand("results/demo/scores/{dataset}.csv", dataset=config["evaluate"]["datasets"]),
    output:
        summary="results/demo/summary.csv",
    log:
        "results/logs/summarize_demo.log",
    benchmark:
        "results/benchmarks/summarize_demo.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        ENV
    script:
        "../scripts/summarize_demo.py"
