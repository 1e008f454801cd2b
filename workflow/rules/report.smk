# Tables and figures: every evaluation of an experiment -> LaTeX (booktabs) + CSVs, figures.


rule table:
    input:
        scores=lambda wildcards: wc.score_files(config, wildcards.experiment),
        baseline=lambda wildcards: wc.comparison_score_files(config, wildcards.experiment),
    output:
        tex=report("results/tables/{experiment}.tex", category="Tables"),
        csv="results/tables/{experiment}.csv",
        per_dataset="results/tables/{experiment}_datasets.csv",
    params:
        experiment=lambda wildcards: EXPERIMENTS[wildcards.experiment],
        labels=lambda wildcards: wc.table_labels(config, wildcards.experiment),
    log:
        "results/logs/table/{experiment}.log",
    benchmark:
        "results/benchmarks/table/{experiment}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV
    script:
        "../scripts/table.py"


rule figure:
    input:
        scores=lambda wildcards: wc.figure_score_files(config, wildcards.experiment),
    output:
        pdf=report("results/figures/{experiment}.pdf", category="Figures"),
        png=report("results/figures/{experiment}.png", category="Figures"),
    params:
        experiment=lambda wildcards: EXPERIMENTS[wildcards.experiment],
    log:
        "results/logs/figure/{experiment}.log",
    benchmark:
        "results/benchmarks/figure/{experiment}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV
    script:
        "../scripts/figure.py"
