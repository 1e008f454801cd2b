"""Rule simulated_task: CNN-zoo shards of one (image set, target positive share) -> a task file."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.logs import log_to  # noqa: E402
from den.simulate.cnn_zoo import share_cutoff, simulated_task, task_name  # noqa: E402
from den.simulate.images import ImageData  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    shares = list(sm.params.shares)
    share = int(sm.wildcards.share) / 100
    name = task_name(sm.wildcards.images, share)
    images = ImageData.load(sm.input.images)
    cutoff = share_cutoff(images, shares, int(sm.wildcards.share))
    task = simulated_task(name, images, cutoff, list(sm.input.shards), target_share=share)
    meta = task.metadata
    print(f"{name}: {task.n_rows} rows, {task.n_features} CNN scores, class cutoff {cutoff} of "
          f"{meta['n_classes']}, positive share {meta['train_share']:.3f} (train) "
          f"{meta['test_share']:.3f} (test), target {share:.2f}")
    task.save(sm.output.data)
