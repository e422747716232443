"""Bad input at the library level: one ParameterError naming the parameter, its value and what
is allowed. The messages are checked exactly: the CLI prints them as they are."""

import numpy as np
import pytest

from surveykit.designs import (
    CheatingDetection,
    CheatingDetectionSymmetric,
    Crosswise,
    Custom,
    ForcedResponse,
    GeneralizedRandomizedResponse,
    GeneralizedWarner,
    Kuk,
    Mangat,
    StochasticLieDetector,
    Triangular,
    UnrelatedQuestionKnown,
    UnrelatedQuestionUnknown,
    Warner,
    make_design,
)
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation import estimate, estimate_from_labels
from surveykit.simulation import simulate_counts


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


# (what to call, the exact message). Each names the parameter, repeats its value and says what
# is allowed; most say why.
BAD_DESIGNS = [
    # probabilities outside [0, 1]
    (lambda: Warner(p=1.2), "p (1.2) must be a probability between 0 and 1"),
    (lambda: Warner(p=-0.1), "p (-0.1) must be a probability between 0 and 1"),
    (lambda: Warner(p=float("nan")), "p (nan) must be a probability between 0 and 1"),
    (lambda: Warner(p="0.7"), "p ('0.7') must be a number between 0 and 1"),
    (lambda: Kuk(p=[0.3, 1.3]), "p[2] (1.3) must be a probability between 0 and 1"),
    (lambda: Warner(p=0.7, dont_know=1.5),
     "dont_know (1.5) must be a probability between 0 and 1"),
    (lambda: Warner(p=0.7, dont_know=1),
     "dont_know (1) must be below 1: with dont_know = 1 nobody answers the question"),
    (lambda: StochasticLieDetector(p=[0.2, 0.8]).matrix([1.5]),
     "t (1.5) must be between 0 and 1"),
    # forced answers summing above 1
    (lambda: ForcedResponse(p=[0.6, 0.5]),
     "p ([0.6, 0.5]): the forced-answer probabilities sum to 1.1, above 1; they must leave a "
     "chance to answer truthfully"),
    (lambda: ForcedResponse(p=[0.2, 0.3, 0.6]),
     "p ([0.2, 0.3, 0.6]): the forced-answer probabilities sum to 1.1, above 1; they must "
     "leave a chance to answer truthfully"),
    (lambda: CheatingDetectionSymmetric(p=[0.6, 0.5, 0.1, 0.2]),
     "p ([0.6, 0.5, 0.1, 0.2]): in group 1 forced yes (0.6) and forced no (0.5) sum above 1"),
    (lambda: GeneralizedWarner(p=0.7, q=0.4),
     "p + q (0.7 + 0.4 = 1.1) must be at most 1: 1 - p - q is the probability of answering "
     "\"don't know\""),
    # designs that cannot identify pi
    (lambda: Warner(p=0.5),
     "p (0.5) must not be 0.5: respondents with and without the trait would then answer yes "
     "equally often and the answers identify nothing"),
    (lambda: Kuk(p=[0.3, 0.3], repetitions=3),
     "p ([0.3, 0.3]): the two decks must have different shares of red cards; with equal shares "
     "the cards drawn say nothing about the trait"),
    (lambda: ForcedResponse(p=[0.5, 0.5]),
     "p ([0.5, 0.5]): the forced-answer probabilities sum to 1, so nobody answers truthfully "
     "and the answers identify nothing; lower them"),
    (lambda: StochasticLieDetector(p=[0.3, 0.3]),
     "p ([0.3, 0.3]): the two groups must answer truthfully with different probabilities; with "
     "equal ones pi and the honesty t cannot be told apart"),
    (lambda: UnrelatedQuestionUnknown(p=[0.4, 0.4]),
     "p ([0.4, 0.4]): the two groups must answer the sensitive question with different "
     "probabilities; with equal ones the innocuous share and pi cannot be told apart"),
    (lambda: CheatingDetection(p=[0.4, 0.4]),
     "p ([0.4, 0.4]): the two groups must be told to answer yes with different probabilities; "
     "with equal ones cheaters and honest respondents cannot be told apart"),
    (lambda: Crosswise(p=0.5),
     "p (0.5) must not be 0.5: with an innocuous yes share of one half, \"same\" and "
     "\"different\" are equally likely whatever the truth"),
    (lambda: Triangular(p=1),
     "p (1) must be below 1: if everybody answers the innocuous question yes, everybody is in "
     "the triangle and the answers identify nothing"),
    (lambda: Mangat(p=0),
     "p (0) must be above 0: with p = 0 everybody answers yes and the answers identify nothing"),
    (lambda: UnrelatedQuestionKnown(p=[0, 0.3]),
     "p[1] (0), the probability of answering the sensitive question, must be above 0: "
     "otherwise the answers identify nothing"),
    (lambda: GeneralizedRandomizedResponse(p=0.3, k=3),
     "p (0.3) must be above 1/k = 0.3333: otherwise the true category is reported no more "
     "often than any other and the answers identify nothing"),
    (lambda: GeneralizedWarner(p=0.3, q=0.3),
     "p (0.3) must be greater than q (0.3): with p <= q the answers carry no information about "
     "pi (not identifiable) or point the wrong way"),
    (lambda: Custom(matrix=[[0.5, 0.5], [0.5, 0.5]]),
     "matrix does not identify the shares of the true states: some states (or mixtures of "
     "them) give the same response probabilities; change the matrix"),
    # the wrong number of parameters or groups
    (lambda: make_design("sld", p=[0.1, 0.2, 0.3]), "p ([0.1, 0.2, 0.3]) must have 2 entries, "
                                                      "not 3"),
    (lambda: make_design("sld", p=0.2), "p (0.2) must be a list of 2 probabilities, e.g. "
                                        "[0.2, 0.8]"),
    (lambda: make_design("sld"), "design 'sld' needs p (e.g. p=0.1667,0.8333)"),
    (lambda: make_design("sld", q=0.2),
     "design 'sld' has no parameter 'q'; its parameters are p, dont_know, groups"),
    (lambda: StochasticLieDetector(p=[0.2, 0.8], groups=["a", "b", "c"]),
     "groups (['a', 'b', 'c']) must name the 2 group(s) of design 'sld'"),
    # an unknown design lists the known ones
    (lambda: make_design("lie_detector"),
     "unknown design 'lie_detector'; the designs are warner, generalized_warner, fr, uqtknown, "
     "uqtunknown, mangat, kuk, crosswise, triangular, cdm, cdmsym, sld, grr, direct, custom "
     "(long names: cheater_detection, cheater_detection_symmetric, cheating_detection, "
     "cheating_detection_symmetric, direct_question, forced_response, "
     "generalized_randomized_response, gw, k_rr, krr, stochastic_lie_detector, "
     "unrelated_question, unrelated_question_known, unrelated_question_unknown)"),
]


@pytest.mark.parametrize(("call", "message"), BAD_DESIGNS,
                         ids=[m.split(":")[0][:40] for _, m in BAD_DESIGNS])
def test_bad_design_parameters_get_one_line_naming_the_parameter(call, message):
    with pytest.raises(ParameterError) as error:
        call()
    assert str(error.value) == message
    assert "\n" not in str(error.value)


SLD = StochasticLieDetector(p=[0.2, 0.8])

BAD_COUNTS = [
    # a group the design lacks
    (lambda: estimate(design=SLD, counts={1: {"yes": 3}, 2: {"yes": 4}, 3: {"yes": 1}}),
     "group '3' is not a group of design 'sld', which has 2 groups: 1, 2"),
    (lambda: estimate(design=SLD, counts={"a": {"yes": 3}}),
     "group 'a' is not a group of design 'sld', which has 2 groups: 1, 2"),
    (lambda: estimate(design=Warner(p=0.7), counts={1: {"yes": 3}, 2: {"no": 3}}),
     "group '2' is not a group of design 'warner', which has 1 group: 1"),
    (lambda: estimate_from_labels(["yes", "no"], design=SLD, groups=[1, 3]),
     "group 3 is not a group of design 'sld', which has 2 groups: 1, 2"),
    (lambda: estimate_from_labels(["yes", "no"], design=SLD, groups=["a", "1"]),
     "group 'a' is not a group of design 'sld', which has 2 groups: 1, 2"),
    # the wrong number of groups
    (lambda: estimate(design=SLD, counts={"yes": 30, "no": 70}),
     "counts ({'yes': 30, 'no': 70}) are one group's; design 'sld' has 2 groups (1, 2): give "
     "counts per group, e.g. {1: {'yes': 60, 'no': 40}, 2: {'yes': 35, 'no': 65}}"),
    (lambda: estimate_from_labels(["yes", "no"], design=SLD),
     "design 'sld' has 2 groups: give groups, the group of each response"),
    (lambda: simulate_counts(SLD, shares=0.3, n=[100, 200, 300], reps=2,
                             rng=np.random.default_rng(1)),
     "n ([100, 200, 300]) must be a whole number of respondents per group, or one for each of "
     "the 2 group(s) of design 'sld'"),
    # a response label the design does not have
    (lambda: estimate(design=Warner(p=0.7), counts={"maybe": 3, "yes": 2}),
     "response 'maybe' is not an answer of design 'warner'; its answers are yes, no, dont_know"),
    (lambda: estimate(design=Kuk(p=[0.7, 0.3], repetitions=2), counts={"3": 3, "1": 2}),
     "response '3' is not an answer of design 'kuk'; its answers are 0, 1, 2, dont_know"),
    (lambda: estimate(design=Kuk(p=[0.7, 0.3], repetitions=2), counts={"yes": 3, "1": 2}),
     "response 'yes' is not an answer of design 'kuk'; its answers are 0, 1, 2, dont_know"),
    (lambda: estimate_from_labels(["yes", "maybe"], design=Warner(p=0.7)),
     "label 'maybe' is not an answer of design 'warner'; its answers are yes, no, dont_know "
     "(or the codes 0 to 2)"),
    (lambda: estimate_from_labels(np.array([0, 5]), design=Warner(p=0.7)),
     "label 5 is not an answer of design 'warner'; its answers are yes, no, dont_know (or the "
     "codes 0 to 2)"),
    (lambda: estimate_from_labels(["a", "d"], design=ForcedResponse(p=[0.1, 0.1, 0.1],
                                                                    categories=["a", "b", "c"])),
     "label 'd' is not an answer of design 'fr'; its answers are a, b, c, dont_know (or the "
     "codes 0 to 3)"),
]


@pytest.mark.parametrize(("call", "message"), BAD_COUNTS,
                         ids=[m.split(";")[0][:40] for _, m in BAD_COUNTS])
def test_bad_counts_get_one_line_naming_the_group_or_label(call, message):
    with pytest.raises(ParameterError) as error:
        call()
    assert str(error.value) == message


def test_a_group_without_answers_is_a_data_problem_not_a_parameter_error():
    # counts per group, but group 2 has no answers yet: the estimator cannot run (exit 1 on
    # the CLI), and says which group is missing
    with pytest.raises(EstimationError) as error:
        estimate(design=SLD, counts={1: {"yes": 30, "no": 70}, 2: {}})
    assert str(error.value) == ("design 'sld' needs answers from every group to estimate pi; "
                                "group 2 has none (other than \"don't know\")")


def test_a_group_that_answered_only_dont_know_counts_as_a_group_without_answers():
    # It used to pass the check (it had counts), and pi came from group 1 alone, which cannot
    # identify it: pi = 0.4951 with no standard error and a warning about t instead.
    design = StochasticLieDetector(p=[0.2, 0.8], dont_know=0.2)
    with pytest.raises(EstimationError, match="group 2 has none"):
        estimate(design=design, counts={1: {"yes": 50, "no": 50, "dont_know": 10},
                                        2: {"dont_know": 20}})
