"""Rule prepare_images: image dataset config entry -> results/images/<images>.npz."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.logs import log_to  # noqa: E402
from den.simulate.images import load_images  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    images = load_images(sm.wildcards.images, sm.params.spec, cache_dir=sm.params.cache_dir)
    print(f"{images.name}: {len(images.x_train)} train and {len(images.x_test)} test images "
          f"{images.x_train.shape[1:]}, {images.n_classes} classes")
    images.save(sm.output.images)
