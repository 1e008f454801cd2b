# The CNN zoo: image datasets -> shards of CNN scores -> simulated aggregation tasks.
# {share} is a task's target positive share in percent (cnn_zoo.cutoffs 0.3 -> p30); its class
# cutoff follows from the image set's labels (den.simulate.cnn_zoo.class_cutoffs).


rule prepare_images:
    input:
        # the local files the job reads (an idx directory's files): an edit reruns the job;
        # none for bundled or downloaded sets
        files=lambda wildcards: wc.dataset_inputs(config, wildcards.images, "image_datasets"),
    output:
        images="results/images/{images}.npz",
    params:
        spec=lambda wildcards: wc.dataset_spec(config, wildcards.images, "image_datasets"),
        cache_dir="resources",
    log:
        "results/logs/prepare_images/{images}.log",
    benchmark:
        "results/benchmarks/prepare_images/{images}.tsv"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=60,
    conda:
        ENV
    script:
        "../scripts/prepare_images.py"


rule score_cnn_shard:
    input:
        images=lambda wildcards: wc.zoo_images_file(config, wildcards.images, wildcards.share),
    output:
        scores="results/zoo/{images}/p{share}/shard{shard}.npz",
    params:
        cnn_ids=lambda wildcards: wc.shard_cnns(config, int(wildcards.shard)),
        zoo=config.get("cnn_zoo", {}),
        seed=config["seed"],
    log:
        "results/logs/score_cnn_shard/{images}/p{share}/shard{shard}.log",
    benchmark:
        "results/benchmarks/score_cnn_shard/{images}/p{share}/shard{shard}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=240,
    conda:
        ENV
    script:
        "../scripts/score_cnn_shard.py"


rule simulated_task:
    input:
        images=lambda wildcards: wc.zoo_images_file(config, wildcards.images, wildcards.share),
        shards=lambda wildcards: [
            f"results/zoo/{wildcards.images}/p{wildcards.share}/shard{s}.npz"
            for s in range(wc.n_shards(config))
        ],
    output:
        data="results/data/sim-{images}-p{share}.npz",
    params:
        shares=config.get("cnn_zoo", {}).get("cutoffs", []),
    log:
        "results/logs/simulated_task/{images}/p{share}.log",
    benchmark:
        "results/benchmarks/simulated_task/{images}/p{share}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    conda:
        ENV
    script:
        "../scripts/simulated_task.py"


rule simulated_tasks_table:
    input:
        tasks=lambda wildcards: [wc.data_file(name) for name in wc.simulated_datasets(config)],
    output:
        csv="results/tables/simulated_tasks.csv",
        md="results/tables/simulated_tasks.md",
    log:
        "results/logs/simulated_tasks_table.log",
    benchmark:
        "results/benchmarks/simulated_tasks_table.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    conda:
        ENV
    script:
        "../scripts/simulated_tasks_table.py"
