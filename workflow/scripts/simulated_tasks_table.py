"""Rule simulated_tasks_table: every CNN-zoo task -> its positive shares and the spread of its
CNNs' accuracy and AUC (CSV and Markdown)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

import pandas as pd  # noqa: E402

from den.data.tasks import Task  # noqa: E402
from den.io import atomic_write  # noqa: E402
from den.logs import log_to  # noqa: E402
from den.report.tables import markdown_simulated_tasks  # noqa: E402
from den.simulate.cnn_zoo import task_summary  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    summaries = pd.DataFrame([task_summary(Task.load(path)) for path in sm.input.tasks])
    with atomic_write(sm.output.csv, "w") as handle:
        summaries.to_csv(handle, index=False)
    with atomic_write(sm.output.md, "w") as handle:
        handle.write(markdown_simulated_tasks(summaries))
    print(f"{len(summaries)} simulated tasks; CNN accuracy from {100 * summaries['accuracy_min'].min():.1f}% "
          f"to {100 * summaries['accuracy_max'].max():.1f}%")
