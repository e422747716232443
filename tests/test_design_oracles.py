"""The general estimator against closed forms: every preset that has one, to 1e-8.

The oracles (tests/closed_forms.py) are written from each design's model and
import nothing from surveykit. Count tables are drawn at random (seeded) over
the whole range, so each design meets both interior tables (the maximum-
likelihood estimate *is* the closed form, and its standard error the
closed-form one with divisor n) and boundary tables (the closed form leaves
the parameter space: ``pi_hat`` is still the closed form, the estimate is the
constrained maximum, checked against scipy). The generalized Warner's Eq. 2
and exact conditional variance are checked in tests/test_estimation.py.
"""

from __future__ import annotations

import math
import zlib

import closed_forms as cf
import numpy as np
import pytest

from surveykit.designs import (
    CheatingDetection,
    CheatingDetectionSymmetric,
    Crosswise,
    Custom,
    Direct,
    ForcedResponse,
    GeneralizedRandomizedResponse,
    Kuk,
    Mangat,
    StochasticLieDetector,
    Triangular,
    UnrelatedQuestionKnown,
    UnrelatedQuestionUnknown,
    Warner,
)
from surveykit.estimation import estimate

TOLERANCE = 1e-8
#: random tables per design and don't-know share: at least 20 interior and 5 boundary tables
#: each (asserted; the seeded draws give 25-65 of each), where 150 tables took twice the time
#: for no case the first 75 miss (estimate() is ~0.1 s per two-group table)
TABLES = 75


# -- one group, yes/no ------------------------------------------------------------------------

# (design with don't-know share d, oracle(yes, no) -> (pi, variance)): yes is the design's first
# answer (red for Kuk, "same" for crosswise, the triangle for triangular).
ONE_GROUP = {
    "warner p=0.7": (lambda d: Warner(p=0.7, dont_know=d), lambda y, n: cf.warner(y, n, 0.7)),
    "warner p=0.2": (lambda d: Warner(p=0.2, dont_know=d), lambda y, n: cf.warner(y, n, 0.2)),
    "crosswise p=0.25": (lambda d: Crosswise(p=0.25, dont_know=d),
                         lambda y, n: cf.crosswise(y, n, 0.25)),
    "crosswise p=0.8": (lambda d: Crosswise(p=0.8, dont_know=d),
                        lambda y, n: cf.crosswise(y, n, 0.8)),
    "triangular p=0.25": (lambda d: Triangular(p=0.25, dont_know=d),
                          lambda y, n: cf.triangular(y, n, 0.25)),
    "triangular p=0.6": (lambda d: Triangular(p=0.6, dont_know=d),
                         lambda y, n: cf.triangular(y, n, 0.6)),
    "uqtknown p=[0.7, 1/12]": (lambda d: UnrelatedQuestionKnown(p=[0.7, 1 / 12], dont_know=d),
                               lambda y, n: cf.uqt_known(y, n, 0.7, 1 / 12)),
    "uqtknown p=[0.4, 0.5]": (lambda d: UnrelatedQuestionKnown(p=[0.4, 0.5], dont_know=d),
                              lambda y, n: cf.uqt_known(y, n, 0.4, 0.5)),
    "mangat p=0.7": (lambda d: Mangat(p=0.7, dont_know=d), lambda y, n: cf.mangat(y, n, 0.7)),
    "mangat p=0.3": (lambda d: Mangat(p=0.3, dont_know=d), lambda y, n: cf.mangat(y, n, 0.3)),
    "kuk p=[0.7, 0.3]": (lambda d: Kuk(p=[0.7, 0.3], dont_know=d),
                         lambda y, n: cf.kuk_one_card(y, n, 0.7, 0.3)),
    "kuk p=[0.2, 0.9]": (lambda d: Kuk(p=[0.2, 0.9], dont_know=d),
                         lambda y, n: cf.kuk_one_card(y, n, 0.2, 0.9)),
    # forced response lists p and the counts in RRreg's order: no (0), then yes (1)
    "fr p=[0.1, 0.2]": (lambda d: ForcedResponse(p=[0.1, 0.2], dont_know=d),
                        lambda y, n: _second(cf.forced_response([n, y], [0.1, 0.2]))),
    "fr p=[0.3, 0.05]": (lambda d: ForcedResponse(p=[0.3, 0.05], dont_know=d),
                         lambda y, n: _second(cf.forced_response([n, y], [0.3, 0.05]))),
    "direct": (lambda d: Direct(dont_know=d), cf.direct),
    "custom 2x2": (
        lambda d: Custom(matrix=[[0.8, 0.3], [0.2, 0.7]], states=["no", "yes"],
                         responses=["no", "yes"], dont_know=d),
        lambda y, n: _custom_yes([n, y], [[0.8, 0.3], [0.2, 0.7]])),
    "grr k=2 p=0.8": (
        lambda d: GeneralizedRandomizedResponse(p=0.8, categories=["yes", "no"], dont_know=d),
        lambda y, n: _custom_yes([n, y], cf.grr_matrix(0.8, 2))),
}


def _second(pair):
    estimates, variances = pair
    return float(estimates[1]), float(variances[1])


def _custom_yes(counts, matrix):
    estimates, cov = cf.custom(counts, matrix)
    return float(estimates[1]), float(cov[1, 1])


def _tables(seed: int, dont_know: bool):
    """(yes, no, don't know) tables over the whole range: uniform yes share, n from 5 to 5000."""
    rng = np.random.default_rng(seed)
    for _ in range(TABLES):
        answered = int(rng.integers(5, 5000))
        yes = int(rng.integers(0, answered + 1))
        dk = int(rng.integers(0, answered)) if dont_know else 0
        if 0 < yes < answered or rng.random() < 0.1:  # a few all-yes / all-no tables too
            yield yes, answered - yes, dk


@pytest.mark.parametrize("dont_know", [0.0, 0.2], ids=["no-dk", "dk=0.2"])
@pytest.mark.parametrize("name", list(ONE_GROUP))
def test_one_group_estimate_equals_the_closed_form(name, dont_know):
    make, oracle = ONE_GROUP[name]
    design = make(dont_know)
    interior = boundary = 0
    for yes, no, dk in _tables(zlib.crc32(name.encode()), dont_know > 0):
        result = estimate(design=design, counts={"yes": yes, "no": no, "dont_know": dk})
        pi, variance = oracle(yes, no)
        # pi_hat is the unconstrained root (the closed form) wherever it lies
        assert result.pi_hat == pytest.approx(pi, abs=TOLERANCE)
        assert result.pi_mle == pytest.approx(min(max(pi, 0.0), 1.0), abs=TOLERANCE)
        if 0 < pi < 1:
            interior += 1
            n = yes + no + dk
            # Var(pi_hat | M > 0): the closed form's lambda (1 - lambda) / slope^2 times
            # E[1/M | M > 0] (M answered of n), which is 1/m without a don't-know branch:
            # divisor n, where RRreg's standard errors divide by n - 1
            factor = cf.inverse_moment(n, 1 - dont_know) * (yes + no) if dont_know else 1.0
            assert result.se == pytest.approx(math.sqrt(variance * factor), abs=TOLERANCE)
        else:
            boundary += 1
    # the direct question's estimate, the share of yes, never leaves [0, 1]
    assert interior >= 20 and (boundary >= 5 or name == "direct"), (interior, boundary)


# -- forced response with m categories, custom and k-RR matrices ---------------------------------

CATEGORICAL = {
    "fr m=3": (lambda d: ForcedResponse(p=[0.1, 0.1, 0.2], dont_know=d),
               lambda counts: cf.forced_response(counts, [0.1, 0.1, 0.2])),
    "fr m=4": (lambda d: ForcedResponse(p=[0.05, 0.1, 0.15, 0.1], dont_know=d),
               lambda counts: cf.forced_response(counts, [0.05, 0.1, 0.15, 0.1])),
    "custom 3x3": (
        lambda d: Custom(matrix=[[0.7, 0.1, 0.2], [0.2, 0.8, 0.1], [0.1, 0.1, 0.7]],
                         states=["a", "b", "c"], responses=["a", "b", "c"], dont_know=d),
        lambda counts: _diag(cf.custom(counts, [[0.7, 0.1, 0.2], [0.2, 0.8, 0.1],
                                                [0.1, 0.1, 0.7]]))),
    "grr k=3 p=0.6": (
        lambda d: GeneralizedRandomizedResponse(p=0.6, categories=["a", "b", "c"], dont_know=d),
        lambda counts: _diag(cf.custom(counts, cf.grr_matrix(0.6, 3)))),
    "grr k=5 p=0.7": (
        lambda d: GeneralizedRandomizedResponse(p=0.7, k=5, dont_know=d),
        lambda counts: _diag(cf.custom(counts, cf.grr_matrix(0.7, 5)))),
}


def _diag(pair):
    estimates, cov = pair
    return estimates, np.diag(cov)


def _categorical_tables(seed: int, m: int):
    rng = np.random.default_rng(seed)
    for _ in range(TABLES):
        n = int(rng.integers(200, 5000))
        shares = rng.dirichlet(np.full(m, 3.0))
        yield rng.multinomial(n, shares)


@pytest.mark.parametrize("dont_know", [0.0, 0.15], ids=["no-dk", "dk=0.15"])
@pytest.mark.parametrize("name", list(CATEGORICAL))
def test_categorical_estimate_equals_the_closed_form(name, dont_know):
    make, oracle = CATEGORICAL[name]
    design = make(dont_know)
    labels = design.answer_labels
    # counts in the oracle's order: RRreg's category order, which is the design's here
    assert list(labels) == list(design.category_labels)
    interior = boundary = 0
    for seed, counts in enumerate(_categorical_tables(zlib.crc32(name.encode()), len(labels))):
        dk = seed * 7 if dont_know else 0
        result = estimate(design=design,
                          counts={**dict(zip(labels, map(int, counts), strict=True)),
                                  "dont_know": dk})
        shares, variances = oracle(counts)
        if np.all(counts > 0):
            # the unconstrained maximum (P^-1 lambda); with an empty cell there is none: the
            # other cells' probabilities could grow without bound
            assert np.asarray(result.unconstrained) == pytest.approx(shares, abs=TOLERANCE)
        if np.all((shares > 0) & (shares < 1)):
            interior += 1
            assert result.shares == pytest.approx(shares, abs=TOLERANCE)
            for category, variance in zip(labels, variances, strict=True):
                assert result.share_se(category) == pytest.approx(math.sqrt(variance),
                                                                  abs=TOLERANCE)
        else:
            boundary += 1
            _check_constrained_categorical(design, counts, result)
    assert interior >= 20, interior


def _check_constrained_categorical(design, counts, result, global_check=False):
    """The maximum on the simplex: the KKT conditions, which suffice because the
    log-likelihood is concave in the shares; with ``global_check`` also scipy's maximum over
    a parametrization of the simplex."""
    matrix = design.matrix()[0, :-1] / design.matrix()[0, :-1].sum(axis=0)
    counts = np.asarray(counts, dtype=float)
    shares = np.asarray(result.shares)
    assert np.all(shares >= 0) and shares.sum() == pytest.approx(1, abs=1e-12)
    gradient = matrix.T @ (counts / (matrix @ shares))
    # sum(gradient * shares) = n; positive shares have gradient n, the others at most n
    n = counts.sum()
    assert gradient[shares > 0] == pytest.approx(n, rel=1e-9)
    assert np.all(gradient[shares == 0] <= n * (1 + 1e-9))
    if not global_check:
        return

    def loglik(b):
        return float(counts @ cf.log_or_floor(matrix @ cf.stick_breaking(b)))

    x, best = cf.maximize_on_box(loglik, len(counts) - 1)
    ours = float(counts @ np.log(matrix @ shares))
    assert ours >= best - 1e-9
    if ours - best < 1e-9:  # scipy found the maximum too; it is unique (concave)
        assert shares == pytest.approx(cf.stick_breaking(x), abs=1e-5)


# -- two groups -------------------------------------------------------------------------------

# (design, oracle(y1, m1, y2, m2) -> {name: (estimate, variance)}, where the names are in the
# estimate: "pi" is pi_mle, a state label is its share, others are result.parameters)
TWO_GROUP = {
    "sld p=[0.2, 0.8]": (lambda d: StochasticLieDetector(p=[0.2, 0.8], dont_know=d),
                         lambda *c: cf.sld(*c, 0.2, 0.8)),
    "sld p=[5/6, 1/6]": (lambda d: StochasticLieDetector(p=[5 / 6, 1 / 6], dont_know=d),
                         lambda *c: cf.sld(*c, 5 / 6, 1 / 6)),
    "uqtunknown p=[0.8, 0.3]": (lambda d: UnrelatedQuestionUnknown(p=[0.8, 0.3], dont_know=d),
                                lambda *c: cf.uqt_unknown(*c, 0.8, 0.3)),
    "uqtunknown p=[0.25, 0.9]": (
        lambda d: UnrelatedQuestionUnknown(p=[0.25, 0.9], dont_know=d),
        lambda *c: cf.uqt_unknown(*c, 0.25, 0.9)),
    "cdm p=[0.3, 0.7]": (lambda d: CheatingDetection(p=[0.3, 0.7], dont_know=d),
                         lambda *c: cf.cdm(*c, 0.3, 0.7)),
    "cdm p=[0.6, 0.2]": (lambda d: CheatingDetection(p=[0.6, 0.2], dont_know=d),
                         lambda *c: cf.cdm(*c, 0.6, 0.2)),
    "cdmsym p=[0.2, 0.1, 0.1, 0.2]": (
        lambda d: CheatingDetectionSymmetric(p=[0.2, 0.1, 0.1, 0.2], dont_know=d),
        lambda *c: cf.cdm_symmetric(*c, [0.2, 0.1, 0.1, 0.2])),
    "cdmsym p=[0.5, 0.1, 0.1, 0.3]": (
        lambda d: CheatingDetectionSymmetric(p=[0.5, 0.1, 0.1, 0.3], dont_know=d),
        lambda *c: cf.cdm_symmetric(*c, [0.5, 0.1, 0.1, 0.3])),
}

#: estimate name -> how to read it from an Estimate
_READ = {
    "pi": lambda r: (r.pi_mle, r.se),
    "beta": lambda r: (r.share("no"), r.share_se("no")),
    "gamma": lambda r: (r.parameters["gamma"]["estimate"], r.parameters["gamma"]["se"]),
    "t": lambda r: (r.parameters["t"]["estimate"], r.parameters["t"]["se"]),
    "pi_innocuous": lambda r: (r.parameters["pi_innocuous"]["estimate"],
                               r.parameters["pi_innocuous"]["se"]),
}


def _two_group_tables(design, seed: int, dont_know: bool, tables: int = TABLES):
    """Tables over the whole range (uniform yes counts) and, alternately, tables drawn from the
    design at random interior parameters (so that every design meets interior tables)."""
    rng = np.random.default_rng(seed)
    states = len(design.state_labels)
    for i in range(tables):
        m1, m2 = (int(v) for v in rng.integers(5, 3000, size=2))
        if i % 2:
            shares = rng.dirichlet(np.ones(states))
            nuisance = rng.uniform(0.05, 0.95, size=len(design.nuisance))
            answers = design.matrix(nuisance)[:, :2, :]
            lam = (answers @ shares)[:, 0] / answers[:, :, 0].sum(axis=1)
            y1, y2 = int(rng.binomial(m1, lam[0])), int(rng.binomial(m2, lam[1]))
        else:
            y1, y2 = int(rng.integers(0, m1 + 1)), int(rng.integers(0, m2 + 1))
        dk1, dk2 = (int(v) for v in rng.integers(0, 500, size=2)) if dont_know else (0, 0)
        yield (y1, m1, y2, m2), (dk1, dk2)


def _counts(y1, m1, y2, m2, dk1=0, dk2=0):
    return {1: {"yes": y1, "no": m1 - y1, "dont_know": dk1},
            2: {"yes": y2, "no": m2 - y2, "dont_know": dk2}}


@pytest.mark.parametrize("dont_know", [0.0, 0.2], ids=["no-dk", "dk=0.2"])
@pytest.mark.parametrize("name", list(TWO_GROUP))
def test_two_group_estimate_equals_the_closed_form(name, dont_know):
    make, oracle = TWO_GROUP[name]
    design = make(dont_know)
    interior = boundary = 0
    for table, dks in _two_group_tables(design, zlib.crc32(name.encode()),
                                         dont_know > 0):
        y1, m1, y2, m2 = table
        reference = oracle(*table)
        inside = all(0 < value < 1 for value, _ in reference.values())
        if not inside and not (0 < y1 < m1 and 0 < y2 < m2):
            continue  # an all-yes or all-no group: no unconstrained maximum to compare
        result = estimate(design=design, counts=_counts(*table, *dks))
        # pi_hat, the unconstrained maximum, is the closed form wherever it lies
        assert result.pi_hat == pytest.approx(reference["pi"][0], abs=TOLERANCE)
        if inside:
            interior += 1
            for key, (value, variance) in reference.items():
                got, se = _READ[key](result)
                assert got == pytest.approx(value, abs=TOLERANCE), key
                # divisor n: the answers of each group (don't know carries no information);
                # RRreg divides by n - 1, so its standard errors are sqrt(n / (n - 1)) larger
                assert se == pytest.approx(math.sqrt(variance), abs=TOLERANCE), key
        else:
            boundary += 1
            _check_constrained_two_group(design, table, result)
    assert interior >= 20 and boundary >= 5, (interior, boundary)


def _two_group_model(design):
    """(loglik(pi, other, table), feasible(pi, other), unpack(box point), read(result)),
    written from the design's description: "other" is t (SLD), the innocuous share (UQT) or
    beta (CDM, CDMsym: honest non-carriers; cheaters say no)."""
    p = np.asarray(design.p, dtype=float)
    if isinstance(design, StochasticLieDetector):
        def yes_share(pi, t):
            return pi * t + (1 - pi) * (1 - p)
        other = "t"
    elif isinstance(design, UnrelatedQuestionUnknown):
        def yes_share(pi, u):
            return p * pi + (1 - p) * u
        other = "pi_innocuous"
    else:
        cdm = isinstance(design, CheatingDetection)
        forced_yes = p if cdm else p[[0, 2]]
        forced_no = np.zeros(2) if cdm else p[[1, 3]]

        def yes_share(pi, beta):
            return pi * (1 - forced_no) + beta * forced_yes
        other = None

    def loglik(pi, value, table):
        y1, m1, y2, m2 = table
        share = yes_share(pi, value)
        return float(np.array([y1, y2]) @ cf.log_or_floor(share)
                     + np.array([m1 - y1, m2 - y2]) @ cf.log_or_floor(1 - share))

    if other is None:
        def feasible(pi, beta):
            return pi >= 0 and beta >= 0 and pi + beta <= 1

        def unpack(b):
            return b[0], (1 - b[0]) * b[1]

        def read(result):
            return result.pi_mle, result.share("no")
    else:
        def feasible(pi, value):
            return 0 <= pi <= 1 and 0 <= value <= 1

        def unpack(b):
            return b[0], b[1]

        def read(result):
            return result.pi_mle, result.parameters[other]["estimate"]
    return loglik, feasible, unpack, read


def _check_constrained_two_group(design, table, result, global_check=False):
    """The estimate on the boundary is a maximum: no feasible step of 1e-7 in any of eight
    directions raises the design's own likelihood (for the CDMs and the unrelated question
    the log-likelihood is concave, so that makes it the maximum); with ``global_check`` also
    against scipy's maximum (L-BFGS-B on a box that maps onto the parameter space)."""
    loglik, feasible, unpack, read = _two_group_model(design)
    pi, other = read(result)
    # the SLD's t is not identified at pi = 0: the likelihood must not rise for any t
    candidates = [(pi, other)] if other is not None else [(0.0, t) for t in (0.0, 0.5, 1.0)]
    assert other is not None or result.pi_mle == 0
    for point in candidates:
        value = loglik(*point, table)
        for angle in np.arange(8) * np.pi / 4:
            step = (point[0] + 1e-7 * np.cos(angle), point[1] + 1e-7 * np.sin(angle))
            if feasible(*step):
                assert loglik(*step, table) <= value + 1e-9, (point, angle)
    if not global_check:
        return
    x, best = cf.maximize_on_box(lambda b: loglik(*unpack(b), table), 2)
    ours = max(loglik(*point, table) for point in candidates)
    assert ours >= best - 1e-9
    if other is not None and ours - best < 1e-9:
        assert (pi, other) == pytest.approx(unpack(x), abs=1e-5)


# -- Kuk with several cards: the MLE has no closed form ----------------------------------------


@pytest.mark.parametrize(("p", "repetitions"), [((0.7, 0.3), 2), ((0.7, 0.3), 3),
                                                 ((0.2, 0.9), 5), ((0.55, 0.45), 4)])
def test_kuk_with_several_cards_equals_an_independent_likelihood_maximum(p, repetitions):
    design = Kuk(p=list(p), repetitions=repetitions)
    rng = np.random.default_rng(repetitions)
    checked = 0
    for _ in range(60):
        n = int(rng.integers(20, 3000))
        pi = float(rng.uniform(-0.2, 1.2))  # outside [0, 1] too: data that point past the edge
        mix = np.clip(pi, 0, 1)
        red = rng.binomial(repetitions, np.where(rng.random(n) < mix, p[0], p[1]))
        counts = np.bincount(red, minlength=repetitions + 1)
        result = estimate(design=design, counts=dict(zip(design.answer_labels,
                                                         map(int, counts), strict=True)))
        reference, variance = cf.kuk_mle(list(counts), *p)
        assert result.pi_mle == pytest.approx(reference, abs=TOLERANCE)
        assert result.loglik >= cf.kuk_loglik(reference, list(counts), *p) - 1e-9
        if 1e-6 < reference < 1 - 1e-6:
            assert result.se == pytest.approx(math.sqrt(variance), abs=TOLERANCE)
            checked += 1
    assert checked >= 20
    # with one card the moment estimator is the MLE; with several it is not (it ignores how
    # the red cards spread), so the two differ at a generic table
    counts = [10, 30, 40, 20][:repetitions + 1] + [5] * max(0, repetitions - 3)
    mle = estimate(design=design, counts=dict(zip(design.answer_labels, counts, strict=True)))
    assert abs(mle.pi_hat - cf.kuk_moment(counts, *p)) > 1e-4


def test_kuk_likelihood_oracle_is_the_one_card_closed_form_with_one_card():
    # the independent likelihood (scipy) agrees with Kuk's closed form where both apply
    pi, variance = cf.kuk_mle([300, 200], 0.7, 0.3)  # 0 red (black) cards first
    closed, closed_variance = cf.kuk_one_card(200, 300, 0.7, 0.3)
    assert pi == pytest.approx(closed, abs=1e-9)
    assert variance == pytest.approx(closed_variance, rel=1e-9)


def test_the_oracles_are_not_vacuous():
    # A wrong design parameter must move the estimate far beyond the tolerance.
    good = estimate(design=Warner(p=0.7), counts={"yes": 420, "no": 580})
    assert abs(good.pi_mle - cf.warner(420, 580, 0.71)[0]) > 1e-3
    sld = estimate(design=StochasticLieDetector(p=[0.2, 0.8]), counts=_counts(300, 500, 200, 400))
    assert abs(sld.parameters["t"]["estimate"] - cf.sld(300, 500, 200, 400, 0.8, 0.2)["t"][0]) \
        > 1e-3


# -- boundary estimates are global maxima (scipy from several starts: slow) ----------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TWO_GROUP) + list(CATEGORICAL))
def test_boundary_estimates_are_the_global_maxima_scipy_finds(name):
    checked = 0
    if name in TWO_GROUP:
        design = TWO_GROUP[name][0](0.0)
        for table, _ in _two_group_tables(design, zlib.crc32(name.encode()), False, 2 * TABLES):
            reference = TWO_GROUP[name][1](*table)
            if all(0 < value < 1 for value, _ in reference.values()):
                continue
            result = estimate(design=design, counts=_counts(*table))
            _check_constrained_two_group(design, table, result, global_check=True)
            checked += 1
    else:
        design = CATEGORICAL[name][0](0.0)
        labels = design.answer_labels
        for counts in _categorical_tables(zlib.crc32(name.encode()), len(labels)):
            shares, _ = CATEGORICAL[name][1](counts)
            if np.all((shares > 0) & (shares < 1)):
                continue
            result = estimate(design=design,
                              counts=dict(zip(labels, map(int, counts), strict=True)))
            _check_constrained_categorical(design, counts, result, global_check=True)
            checked += 1
    assert checked >= 5
