"""Settings of pre-training (``PretrainConfig``) and fine-tuning (``FinetuneConfig``).

TensorFlow-free, so that the workflow can build them when it plans a run and a bad
combination of settings (e.g. ``early_stopping`` with ``ensemble`` 1) stops the dry run, not
the first job that meets it. ``den.train.pretrain`` and ``den.train.finetune`` use them.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

from den.errors import setting_type_problems
from den.pretrained import ADAPT_NETWORK_LEARNING_RATE, ADAPT_NETWORK_STEPS


def _finite_positive(value) -> bool:
    """A learning rate Adam can use: a finite number above 0 (an infinite one makes every
    weight NaN at the first step)."""
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0)


@dataclasses.dataclass(frozen=True)
class PretrainConfig:
    """Settings of a pre-training run (defaults: the paper's appendix B).

    Attributes:
        steps: gradient steps.
        query_rows: size of batch A (the loss).
        support_rows: size of batch B (the embedding).
        support_rows_min: if set, B's size is drawn uniformly from
            [support_rows_min, support_rows] each step (closer to small support sets).
        covariates_min, covariates_max: C, the number of covariates sampled per step, is
            drawn uniformly from [covariates_min, min(d, covariates_max)].
        learning_rate: Adam's learning rate.
        flip_rate: probability that a sampled covariate is mirrored (u -> 1 - u on the unit
            scale) in an episode. 0 is the paper; > 0 teaches the network to read each
            feature's direction from the class-conditional embedding, which matters when
            almost every training covariate rises with the positive class (the CNN-zoo tasks).
        multiclass_cuts: binary head only: each task of more than two classes is replaced by
            this many binary tasks, random bipartitions of its classes
            (``den.data.tasks.binary_cuts``, seeded by ``seed``), so multiclass datasets
            widen a binary model's pre-training; 0 (the paper): such a task is refused.
        one_vs_rest_cuts: binary head only: besides those, each task of more than two
            classes gives this many tasks of one of its classes against the rest
            (``den.data.tasks.one_vs_rest_cuts``, seeded by ``seed``): the imbalanced shape of
            the binary tasks that fitting a multiclass task one class against the rest makes.
        seed: seed of the episodes.
        checkpoint_every: steps between checkpoints (with ``checkpoint_dir``).
    """

    steps: int = 10000
    query_rows: int = 256
    support_rows: int = 256
    support_rows_min: int | None = None
    covariates_min: int = 1
    covariates_max: int = 25
    learning_rate: float = 1e-3
    flip_rate: float = 0.0
    multiclass_cuts: int = 0
    one_vs_rest_cuts: int = 0
    seed: int = 0
    checkpoint_every: int = 500

    def __post_init__(self):
        problems = setting_type_problems(self)
        if problems:  # the checks below compare numbers
            raise ValueError("invalid pre-training config: " + "; ".join(problems))
        for name in ("steps", "query_rows", "support_rows", "covariates_min", "covariates_max",
                     "checkpoint_every"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.support_rows_min is not None and not 1 <= self.support_rows_min <= self.support_rows:
            problems.append(f"support_rows_min must be in 1..support_rows, got {self.support_rows_min}")
        if 1 <= self.covariates_max < self.covariates_min:  # (below 1: said above)
            problems.append(f"covariates_min {self.covariates_min} > covariates_max {self.covariates_max}")
        if not _finite_positive(self.learning_rate):
            problems.append(f"learning_rate must be a finite number > 0, got {self.learning_rate}")
        for name in ("multiclass_cuts", "one_vs_rest_cuts"):
            if getattr(self, name) < 0:
                problems.append(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0.0 <= self.flip_rate <= 1.0:
            problems.append(f"flip_rate must be in [0, 1], got {self.flip_rate}")
        if self.seed < 0:
            problems.append(f"seed must be >= 0, got {self.seed}")
        if problems:
            raise ValueError("invalid pre-training config: " + "; ".join(problems))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class FinetuneConfig:
    """Settings of fine-tuning.

    Attributes:
        epochs: passes over the support set (paper: 10).
        steps_per_epoch: random support/query halvings per epoch.
        learning_rate: Adam's learning rate for the PLF parameters.
        seed: seed of the halvings.
        ensemble: independent fine-tuning runs whose class probabilities are averaged
            (``fine_tuned_models`` + ``mean_proba``); run j starts from the pre-trained PLFs
            with halving seed ``seed + j``. 1 is the paper.
        early_stopping: choose the number of epochs per task by ``ensemble``-fold
            cross-validation on the support set: run j fine-tunes on every fold but fold j,
            the held-out loss of fold j is measured before the first and after every epoch,
            and all runs keep their PLFs from the epoch (0 = pre-trained) with the lowest
            held-out loss summed over the folds. ``epochs`` is then the most fine-tuning a
            task can get. False (the paper) fine-tunes every run on all support rows for
            ``epochs``.
        early_stopping_tolerance: with ``early_stopping``, keep the earliest epoch within
            this many standard errors of the best one (``choose_epoch``); 0 keeps the best.
        output_scaling: also learn the binary head's output map logit -> exp(s) * logit + b
            (``TaskModel.logit_scale``/``logit_bias``), started from a Platt fit of the
            pre-trained model's logits on the training rows (``platt_start``), so that
            the PLFs (and early stopping's held-out loss) answer to how the rows are ranked
            rather than to how confident the pre-trained model happens to be. False is the
            paper; the multiclass head has no such map.
        output_scaling_learning_rate: Adam's learning rate for s and b.
        feature_counts: with ``early_stopping``, also cross-validate DEN on only the k most
            informative features for each k here (``informative_features``, ranked on each
            run's training folds, so the held-out fold does not choose them; k >= the
            task's d is the same as all features); the candidate, all features or one k,
            with the lowest held-out loss at its chosen epoch is kept, a subset only by the
            margin ``feature_counts_tolerance`` asks (``choose_features``). Empty (all
            features only) is the paper.
        feature_counts_tolerance: a subset replaces all features only if its held-out loss
            is lower by more than this many standard errors of the fold-by-fold difference
            (``choose_features``); 0 keeps whichever is lowest.
        network_steps: after the calibration's fine-tuning, Adam steps of network adaptation
            (``adapt_network``): every weight of h, phi and psi learns on the support set's
            halvings, in a copy of the task's own; 0 (the paper) leaves the network as
            pre-trained. Needs ``early_stopping`` off.
        network_learning_rate: Adam's learning rate for network adaptation.
        network_min_class_rows: network adaptation runs only where every class has at least
            this many support rows (2 in each half of a halving); with fewer, a step's loss
            rests on one or two rows of a class and adaptation lowered held-back AUC (a
            thyroid set with 1-3 positive rows in 50: -3 AUC), so the network stays as
            pre-trained.
        tuples_per_step: each update step of the calibration's fine-tuning (and of network
            adaptation) reads a fresh random sample of this many of the task's feature tuples
            (seeded by ``seed``), not all T of them: the step's gradient is then an estimate
            from a sample of the tuples the model pools over, for about T /
            ``tuples_per_step`` times less work a step. None (the paper), or any number >= T,
            reads every tuple; early stopping's held-out losses always read every tuple, as
            prediction does.
        network_one_vs_rest: where a binary DEN meets more than two classes
            (``one_vs_rest_models``), also adapt each class's binary task; False leaves them
            as pre-trained (the default preset: on held-back multiclass sets adaptation was
            within noise, at one adaptation per class).
    """

    epochs: int = 10
    steps_per_epoch: int = 10
    learning_rate: float = 0.001
    seed: int = 0
    ensemble: int = 1
    early_stopping: bool = False
    early_stopping_tolerance: float = 0.0
    output_scaling: bool = False
    output_scaling_learning_rate: float = 0.1
    feature_counts: tuple[int, ...] = ()
    feature_counts_tolerance: float = 0.0
    network_steps: int = 0
    network_learning_rate: float = ADAPT_NETWORK_LEARNING_RATE
    network_min_class_rows: int = 4
    network_one_vs_rest: bool = True
    tuples_per_step: int | None = None

    def __post_init__(self):
        problems = setting_type_problems(self, prefix="fine-tuning ")
        if problems:  # the checks below compare numbers
            raise ValueError("; ".join(problems))
        if any(k < 1 for k in self.feature_counts):
            raise ValueError(f"fine-tuning feature_counts must be >= 1, got {list(self.feature_counts)}")
        if not self.feature_counts_tolerance >= 0:
            raise ValueError("fine-tuning feature_counts_tolerance must be >= 0, got "
                             f"{self.feature_counts_tolerance}")
        # a setting of a switch that is off would be ignored: a grid over it repeats one fit
        for setting, switch, state, needs in (
                ("early_stopping_tolerance", "early_stopping", "off", "turn early_stopping on"),
                ("output_scaling_learning_rate", "output_scaling", "off", "turn output_scaling on"),
                ("feature_counts_tolerance", "feature_counts", "empty", "give feature_counts")):
            default = type(self).__dataclass_fields__[setting].default
            if getattr(self, setting) != default and not getattr(self, switch):
                raise ValueError(f"fine-tuning {setting} {getattr(self, setting)} is given, but "
                                 f"{switch} is {state}, so it would be ignored: {needs} (or leave "
                                 f"{setting} at {default})")
        if self.feature_counts and not self.early_stopping:
            raise ValueError("fine-tuning feature_counts are chosen among by early_stopping's "
                             "cross-validation: turn early_stopping on (it needs ensemble >= 2), or "
                             "leave feature_counts empty")
        if self.ensemble < 1:
            raise ValueError(f"fine-tuning ensemble must be >= 1, got {self.ensemble}")
        if self.early_stopping and self.ensemble < 2:
            raise ValueError("fine-tuning early_stopping cross-validates over the ensemble's "
                             f"runs and needs ensemble >= 2, got {self.ensemble}")
        if self.epochs < 0 or self.steps_per_epoch < 1:
            raise ValueError(f"fine-tuning needs epochs >= 0 and steps_per_epoch >= 1, got "
                             f"{self.epochs} and {self.steps_per_epoch}")
        if not self.early_stopping_tolerance >= 0:
            raise ValueError("fine-tuning early_stopping_tolerance must be >= 0, got "
                             f"{self.early_stopping_tolerance}")
        if not _finite_positive(self.learning_rate):
            raise ValueError("fine-tuning learning_rate must be a finite number > 0, got "
                             f"{self.learning_rate}")
        if self.tuples_per_step is not None and self.tuples_per_step < 1:
            raise ValueError(f"fine-tuning tuples_per_step must be >= 1, got {self.tuples_per_step} "
                             f"(None, null in a workflow config, reads every tuple)")
        if self.network_steps < 0:
            raise ValueError(f"fine-tuning network_steps must be >= 0, got {self.network_steps}")
        if self.network_steps and self.early_stopping:
            raise ValueError("fine-tuning network_steps (network adaptation) is not cross-validated "
                             "by early_stopping: set one of them")
        if self.network_min_class_rows < 1:
            raise ValueError("fine-tuning network_min_class_rows must be >= 1, got "
                             f"{self.network_min_class_rows}")
        if not _finite_positive(self.network_learning_rate):
            raise ValueError("fine-tuning network_learning_rate must be a finite number > 0, got "
                             f"{self.network_learning_rate}")
        if not _finite_positive(self.output_scaling_learning_rate):
            raise ValueError("fine-tuning output_scaling_learning_rate must be a finite number > 0, got "
                             f"{self.output_scaling_learning_rate}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def adapt_config(seed: int = 0, ensemble: int = 1, steps: int = ADAPT_NETWORK_STEPS,
                 learning_rate: float = ADAPT_NETWORK_LEARNING_RATE,
                 one_vs_rest: bool = True) -> FinetuneConfig:
    """The fine-tuning of variant "adapt" (presets "default" and "adapt" of ``DENClassifier``,
    the workflow's ``adapt`` variant): no PLF epochs, ``steps`` steps of network adaptation at
    ``learning_rate`` (defaults: the settings chosen on held-back corpus sets,
    ``den.pretrained``); ``one_vs_rest`` False leaves a multiclass task's class models as
    pre-trained (``FinetuneConfig.network_one_vs_rest``)."""
    return FinetuneConfig(epochs=0, seed=seed, ensemble=ensemble, network_steps=steps,
                          network_learning_rate=learning_rate, network_one_vs_rest=one_vs_rest)
