"""DENClassifier against scikit-learn's estimator checks (the "sklearn contract" of issue 21).

DENClassifier() is the shipped pre-trained model with the default preset (network adaptation of
two-class tasks, 50 steps), so each fit takes a second or less.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from den.api import DENClassifier

# The checks DENClassifier is expected to fail, each with its reason; the same list is in the
# DENClassifier docstring ("scikit-learn compatibility"). Either may pass on a given run
# (xfail is not strict).
EXPECTED_FAILED_CHECKS = {
    "check_methods_subset_invariance":
        "scores are float32 TensorFlow arithmetic whose rounding depends on the batch size "
        "(one row at a time vs 20: ~1e-7 relative differences, above the check's atol 1e-7)",
    "check_methods_sample_order_invariance":
        "the same float32 rounding depends on the rows' order too and varies between runs "
        "(~1e-7 relative differences; fails about one run in seven)",
}


@parametrize_with_checks([DENClassifier()], expected_failed_checks=lambda _: EXPECTED_FAILED_CHECKS,
                         xfail_strict=False)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("check_name", sorted(EXPECTED_FAILED_CHECKS))
def test_expected_failures_are_documented(check_name):
    assert check_name in DENClassifier.__doc__
