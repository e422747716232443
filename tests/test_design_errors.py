"""Bad input at the library level: one ParameterError naming the parameter, its value and what
is allowed. The messages are checked exactly: the CLI prints them as they are."""

import pytest

from surveykit.designs import CheatingDetectionSymmetric
from surveykit.errors import ParameterError


def test_cdmsym_with_forced_answers_that_cannot_identify_pi_is_refused():
    # The same forced answers in both groups: P(yes | g) = pi (1 - no) + beta yes is the same
    # in both groups, and pi, beta and gamma cannot be told apart. It used to be accepted, and
    # 30/100 and 25/100 yes gave pi = 0.25, gamma = 0 with se None and no warning.
    with pytest.raises(ParameterError) as error:
        CheatingDetectionSymmetric(p=[0.1, 0.2, 0.1, 0.2])
    assert str(error.value) == (
        "p ([0.1, 0.2, 0.1, 0.2]): with p = [yes_1, no_1, yes_2, no_2], (1 - no_1) yes_2 must "
        "differ from (1 - no_2) yes_1, or compliant carriers, honest non-carriers and cheaters "
        "cannot be told apart; change one group's forced answers")
    # proportional, not equal: (1 - 0.5) 0.1 = (1 - 0.75) 0.2
    with pytest.raises(ParameterError, match="cannot be told apart"):
        CheatingDetectionSymmetric(p=[0.2, 0.5, 0.1, 0.75])
    assert CheatingDetectionSymmetric(p=[0.2, 0.1, 0.1, 0.2]).p == (0.2, 0.1, 0.1, 0.2)
