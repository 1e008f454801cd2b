"""Rule table: an experiment's evaluation JSONs -> LaTeX table and CSVs (den.report.tables)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.io import atomic_write  # noqa: E402
from den.logs import log_to  # noqa: E402
from den.report import tables  # noqa: E402

sm = snakemake  # noqa: F821
spec = sm.params.experiment
with log_to(sm.log[0]):
    scores = tables.collect(sm.input.scores)
    run = tables.describe_run(scores, metric=spec["metric"])  # the repeats scored
    caption = f"{spec['caption']} ({run}; {spec['n_support']} support rows)".lstrip()
    label = spec["latex_label"] or f"table:{sm.wildcards.experiment}"
    datasets, reference = tables.dataset_summary(scores, spec["metric"]), None
    if spec["sweep"]:
        summary = tables.sweep_summary(scores, spec["metric"])
        tex = tables.latex_sweep_table(scores, spec["metric"], spec["methods"], caption, label,
                                        dict(sm.params.labels))
    else:
        among = spec["best_among"]
        summary = tables.method_summary(scores, spec["metric"], spec["methods"], among)
        if spec["compare_to"]:
            baseline = tables.collect(sm.input.baseline)
            summary = summary.join(tables.improvement(scores, baseline, spec["metric"], spec["methods"]))
        labels = dict(sm.params.labels)
        if spec["per_dataset"] == "columns":
            tex = tables.latex_dataset_columns_table(datasets, spec["methods"], labels, caption, label, among)
        elif spec["per_dataset"]:
            if spec["reference"]:  # DEN against the best classical method of the table
                reference = tables.reference_differences(scores, spec["metric"], spec["reference_method"],
                                                         spec["reference"])
                note = tables.reference_note(reference[1], labels)
                caption = f"{caption}; {tables.latex_escape(note)}"
                summary, datasets = tables.with_reference(summary, datasets, reference)
            tex = tables.latex_dataset_table(tables.dataset_summary(scores, spec["metric"]), spec["methods"],
                                             labels, caption, label, reference, among)
        else:
            tex = tables.latex_method_table(summary, spec["metric"], labels, caption, label, among)
    tex = tables.note_unscored(tables.note_single_repeats(tex), scores, spec["metric"])
    with atomic_write(sm.output.tex, "w") as handle:
        handle.write(tex)
    with atomic_write(sm.output.csv, "w") as handle:
        summary.to_csv(handle)
    with atomic_write(sm.output.per_dataset, "w") as handle:
        datasets.to_csv(handle, index=False)
    print(tex)
