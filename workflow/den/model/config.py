"""Hyperparameters of a DEN model (what a saved model carries with it)."""

from __future__ import annotations

import dataclasses
from typing import Any

from den.errors import setting_type_problems

HEADS = ("binary", "multiclass")
# Here, not in den.model.calibration, so that a config is checked without TensorFlow (the
# workflow's dry run builds every experiment's ModelConfig).
KEYPOINT_PLACEMENTS = ("uniform", "quantile")
MONOTONICITIES = ("none", "increasing")


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Architecture of DEN; defaults are the paper's appendix B.

    Attributes:
        head: "binary" (embedding eq. 2, Deep Sets classifier eq. 3) or "multiclass"
            (embedding eq. 4 with a label encoding v(y), matching head eq. 5).
        order: dependency order r (remark 1), 1..8.
        n_keypoints: K, keypoints of each feature's PLF.
        keypoint_placement: "uniform" over the feature's domain (paper) or "quantile".
        monotonicity: "none" or "increasing" for every PLF.
        use_calibration: False builds "DEN w/o PLF": features only mapped onto [0, 1].
        h_units: hidden layers of h (ReLU); ``embedding_dim`` is its linear output.
        embedding_dim: output size of h.
        phi_units: hidden layers of phi (ReLU), then a linear layer of the last width;
            that linear layer commutes with mean pooling and is applied after it.
        psi_units: hidden layers of psi (ReLU) followed by one logit (binary head only).
        max_classes: most classes a multiclass model predicts (rows of v); a binary-head
            model ignores it and predicts any number of classes, one against the rest.
        label_dim: m, size of the label encoding v(y) (multiclass).
        local_bandwidths: bandwidths (on the calibrated [0, 1] scale) of the local
            embedding, binary head only: for each query row and tuple, the support set's
            class-conditional Gaussian kernel density at the query's tuple, as a log ratio of
            the two classes and a log density level per bandwidth, feeds phi's first layer
            beside [z^t, s^t] (``DENNetwork.local_features``). Empty (the paper): s^t alone.
        max_tuples: most feature tuples a task pools over (a fixed random subset of them
            beyond, ``den.model.tuples.feature_tuples``); None (the paper): d^2.
        min_tuples: r > 2 only: a task with d^r > d^2 pools over min(d^r, min_tuples) tuples
            where that exceeds d^2 (then capped by ``max_tuples``); None (the paper): d^2.
        tuple_attention: pool phi over tuples with weights computed from each tuple's
            embedding s^t (``DENNetwork.pooled``) instead of the paper's plain mean.
        gated_pooling: pool each unit of phi's last hidden layer over tuples as
            g * mean + (1 - g) * log-mean-exp (a soft maximum with a learnt sharpness per
            unit), where the gate g is read from the support set's tuple embeddings
            (``DENNetwork.pooled``), so a task can lean towards its strongest tuples (not in
            the paper; False is its mean).
        feature_count_input: binary head only: psi also reads log d, the task's number of
            features, so it can scale the mean over tuples towards a sum of evidence (not in
            the paper).
        tuple_relevance: with the local embedding: each tuple's embedding also carries, per
            bandwidth, how well the support set's own kernel classifier in that tuple's
            features predicts the support labels leave-one-out
            (``DENNetwork.tuple_relevance``), which class means cannot show, so phi can weigh
            tuples by the evidence they carry on this task (not in the paper).
        balanced_relevance: with ``tuple_relevance``: average the support rows' signed
            margins with equal weight per class (each row of class c weighs 1 / (2 m_c))
            instead of per row, so the rows of a rare class count as much as the common
            one's (one class against the rest, imbalanced tasks); the same on a balanced
            support set.
        linear_evidence: binary head only: phi's first layer also reads, for each of a
            tuple's r features at the query, its Gaussian naive-Bayes term from the support
            rows (``DENNetwork.linear_evidence``), a low-variance reader of evidence that
            adds up over features (not in the paper).
        kernel_pseudo_rows: with ``local_bandwidths``: the kernel log ratios of the local
            embedding and of tuple relevance shrink toward 0 where few support rows lie near,
            as if ``kernel_pseudo_rows`` rows at the support set's class rates lay at every
            point (``DENNetwork.local_features``); 0: no shrinkage (not in the paper).
        seed: initialisation seed, and the seed of the tuple subsets when d^r > d^2.
    """

    head: str = "binary"
    order: int = 2
    n_keypoints: int = 10
    keypoint_placement: str = "uniform"
    monotonicity: str = "none"
    use_calibration: bool = True
    h_units: tuple[int, ...] = (16, 16, 16)
    embedding_dim: int = 16
    phi_units: tuple[int, ...] = (64, 64, 64)
    psi_units: tuple[int, ...] = (64, 64, 64, 64)
    max_classes: int = 10
    label_dim: int = 8
    local_bandwidths: tuple[float, ...] = ()
    max_tuples: int | None = None
    min_tuples: int | None = None
    tuple_attention: bool = False
    gated_pooling: bool = False
    feature_count_input: bool = False
    tuple_relevance: bool = False
    balanced_relevance: bool = False
    linear_evidence: bool = False
    kernel_pseudo_rows: float = 0.0
    seed: int = 91620

    def __post_init__(self):
        problems = setting_type_problems(self)
        if problems:  # the checks below compare numbers
            raise ValueError("invalid DEN model config: " + "; ".join(problems))
        if self.head not in HEADS:
            problems.append(f"head must be one of {HEADS}, got {self.head!r}")
        if not 1 <= self.order <= 8:
            problems.append(f"order (dependency order r) must be in 1..8, got {self.order}")
        if self.n_keypoints < 2:
            problems.append(f"n_keypoints must be >= 2, got {self.n_keypoints}")
        if self.keypoint_placement not in KEYPOINT_PLACEMENTS:
            problems.append(f"keypoint_placement must be one of {KEYPOINT_PLACEMENTS}, "
                            f"got {self.keypoint_placement!r}")
        if self.monotonicity not in MONOTONICITIES:
            problems.append(f"monotonicity must be one of {MONOTONICITIES}, got {self.monotonicity!r}")
        for name in ("h_units", "phi_units", "psi_units"):
            units = getattr(self, name)
            if len(units) < 1 or any(u < 1 for u in units):
                problems.append(f"{name} must be a non-empty list of positive sizes, got {units}")
        if self.embedding_dim < 1 or self.label_dim < 1:
            problems.append("embedding_dim and label_dim must be >= 1")
        if self.max_classes < 2:
            problems.append(f"max_classes must be >= 2, got {self.max_classes}")
        if any(not b > 0 for b in self.local_bandwidths):
            problems.append(f"local_bandwidths must be > 0, got {list(self.local_bandwidths)}")
        if self.max_tuples is not None and self.max_tuples < 1:
            problems.append(f"max_tuples must be >= 1 or null, got {self.max_tuples}")
        if self.min_tuples is not None and self.min_tuples < 1:
            problems.append(f"min_tuples must be >= 1 or null, got {self.min_tuples}")
        if self.local_bandwidths and self.head != "binary":
            problems.append("local_bandwidths (the local embedding) needs the binary head")
        if self.feature_count_input and self.head != "binary":
            problems.append("feature_count_input (an input of psi) needs the binary head")
        if self.tuple_relevance and not self.local_bandwidths:
            problems.append("tuple_relevance (leave-one-out kernel margins of the support rows) needs "
                            "local_bandwidths")
        if self.balanced_relevance and not self.tuple_relevance:
            problems.append("balanced_relevance (a weighting of tuple relevance) needs tuple_relevance")
        if self.linear_evidence and self.head != "binary":
            problems.append("linear_evidence (an input of phi at the query) needs the binary head")
        if self.kernel_pseudo_rows < 0:
            problems.append(f"kernel_pseudo_rows must be >= 0, got {self.kernel_pseudo_rows}")
        if self.kernel_pseudo_rows and not self.local_bandwidths:
            problems.append("kernel_pseudo_rows (a shrinkage of kernel log ratios) needs local_bandwidths")
        if self.tuple_attention and self.gated_pooling:
            problems.append("tuple_attention and gated_pooling are two ways to pool over tuples: set one")
        if self.seed < 0:
            problems.append(f"seed must be >= 0, got {self.seed}")
        if problems:
            raise ValueError("invalid DEN model config: " + "; ".join(problems))

    @property
    def n_classes_supported(self) -> int:
        """Largest number of classes a task may have for this model."""
        return 2 if self.head == "binary" else self.max_classes

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        for name in ("h_units", "phi_units", "psi_units", "local_bandwidths"):
            out[name] = list(out[name])
        return out

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ModelConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown DEN model config keys {unknown}; known keys: {sorted(known)}")
        return cls(**values)
