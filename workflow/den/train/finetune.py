"""Fine-tuning (section 4.4): only the task's calibration block learns; h, v, phi and psi stay
bit-identical.

Each step splits the support set into two stratified random halves, embeds one half and
takes the loss on the other, exactly like a pre-training episode.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from den._tf import tf, tf_keras
from den.model.task_model import TaskModel
from den.train.episodes import halve_support


@dataclasses.dataclass(frozen=True)
class FinetuneConfig:
    """Settings of fine-tuning.

    Attributes:
        epochs: passes over the support set (paper: 10).
        steps_per_epoch: random support/query halvings per epoch.
        learning_rate: Adam's learning rate for the PLF parameters.
        seed: seed of the halvings.
    """

    epochs: int = 10
    steps_per_epoch: int = 10
    learning_rate: float = 0.001
    seed: int = 0

    def __post_init__(self):
        if self.epochs < 0 or self.steps_per_epoch < 1:
            raise ValueError(f"fine-tuning needs epochs >= 0 and steps_per_epoch >= 1, got "
                             f"{self.epochs} and {self.steps_per_epoch}")
        if not self.learning_rate > 0:
            raise ValueError(f"fine-tuning learning_rate must be > 0, got {self.learning_rate}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def finetune(task_model: TaskModel, config: FinetuneConfig | None = None) -> list[float]:
    """Fine-tune ``task_model``'s calibration on its support set, in place.

    A model without a calibration block (``use_calibration=False``) is left unchanged.

    Returns:
        the loss of every step.
    """
    config = config or FinetuneConfig()
    den = task_model.den
    if not den.config.use_calibration or config.epochs == 0:
        return []
    rng = np.random.default_rng(config.seed)
    variables = task_model.calibration.variables_to_train
    optimizer = tf_keras.optimizers.Adam(learning_rate=config.learning_rate)
    optimizer.build(variables)
    u, y = task_model.unit_support, task_model.y_support
    tuples = tf.constant(task_model.tuples)
    n_classes = tf.constant(task_model.n_classes, tf.int32)
    losses = []
    for _ in range(config.epochs * config.steps_per_epoch):
        embed_rows, loss_rows = halve_support(y, rng)
        if len(loss_rows) == 0:
            embed_rows = loss_rows = np.arange(len(y))
        kernel, missing = task_model.calibration_parameters()
        loss, grad_kernel, grad_missing = den.calibration_gradients_fn(
            tf.constant(u[loss_rows]), tf.constant(y[loss_rows]), tf.constant(u[embed_rows]),
            tf.constant(y[embed_rows]), kernel, missing, tuples, n_classes)
        # The lattice layer stores missing outputs as (1, d).
        optimizer.apply_gradients(zip([grad_kernel, grad_missing[None, :]], variables))
        losses.append(float(loss))
    task_model.invalidate()
    return losses
