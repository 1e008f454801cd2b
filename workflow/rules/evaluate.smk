# One job per (experiment, setting, method, dataset, repeat): split, fit on the support set, score.


rule evaluate:
    input:
        unpack(evaluation_inputs),
    output:
        scores="results/scores/{experiment}/{setting}/{method}/{dataset}/{repeat}.json",
    params:
        protocol=evaluation_protocol,
    log:
        "results/logs/evaluate/{experiment}/{setting}/{method}/{dataset}/{repeat}.log",
    benchmark:
        "results/benchmarks/evaluate/{experiment}/{setting}/{method}/{dataset}/{repeat}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        ENV
    script:
        "../scripts/evaluate.py"
