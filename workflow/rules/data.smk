# Datasets: download (or generate) and preprocess into one normalised file each.


rule prepare_dataset:
    wildcard_constraints:
        dataset="(?!sim-)[A-Za-z0-9][A-Za-z0-9_-]*",  # sim-* come from the CNN zoo
    input:
        # the local files the job reads (a CSV, local Puzzles files): an edit reruns the job;
        # none for sets that are downloaded or generated
        files=lambda wildcards: wc.dataset_inputs(config, wildcards.dataset),
    output:
        data="results/data/{dataset}.npz",
    params:
        spec=lambda wildcards: wc.dataset_spec(config, wildcards.dataset),
        cache_dir="resources",
    log:
        "results/logs/prepare_dataset/{dataset}.log",
    benchmark:
        "results/benchmarks/prepare_dataset/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        ENV
    script:
        "../scripts/prepare_dataset.py"
