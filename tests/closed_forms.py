"""Closed-form estimators of randomized-response designs: independent oracles for tests.

Each function is written here from its design's model, the probability
lambda of each answer given the true shares, solved for the shares (the
moment estimator; for a saturated design it is also the maximum-likelihood
estimate wherever it lies inside the parameter space). R's RRreg has the same
estimators (Heck and Moshagen 2018, J. Stat. Softw. 85(2), file
``R/RRuni_models.R`` of github.com/danheck/RRreg); each docstring names the
model's source and RRreg's function.

Variances are the delta-method variances with the binomial variance
lambda (1 - lambda) / n of each group's answer share: the inverse Fisher
information at the estimate, which is what surveykit reports. RRreg divides
by n - 1 instead (an unbiased estimate of the variance of the share), so
its standard errors are sqrt(n / (n - 1)) times these.

Nothing here imports surveykit: the tests compare the two.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats


def _binary(yes: int, no: int) -> tuple[float, int]:
    n = yes + no
    return yes / n, n


def warner(yes: int, no: int, p: float) -> tuple[float, float]:
    """Warner (1965): lambda = p pi + (1 - p)(1 - pi), so pi = (lambda + p - 1) / (2p - 1),
    Var = lambda (1 - lambda) / (n (2p - 1)^2) (RRreg's RRuni.Warner)."""
    lam, n = _binary(yes, no)
    return (lam + p - 1) / (2 * p - 1), lam * (1 - lam) / (n * (2 * p - 1) ** 2)


def crosswise(yes: int, no: int, p: float) -> tuple[float, float]:
    """Crosswise (Yu, Tian and Tang 2008): "same" has lambda = p pi + (1 - p)(1 - pi), p the
    innocuous yes share: Warner's formula (RRreg's RRuni.Crosswise)."""
    lam, n = _binary(yes, no)
    return (lam - (1 - p)) / (2 * p - 1), lam * (1 - lam) / (n * (1 - 2 * p) ** 2)


def triangular(yes: int, no: int, p: float) -> tuple[float, float]:
    """Triangular (Yu, Tian and Tang 2008): the triangle ("yes") has lambda = pi + (1 - pi) p,
    so pi = (lambda - p) / (1 - p), Var = lambda (1 - lambda) / (n (1 - p)^2)
    (RRreg's RRuni.Triangular writes pi = 1 - (1 - lambda) / (1 - p))."""
    lam, n = _binary(yes, no)
    return (lam - p) / (1 - p), lam * (1 - lam) / (n * (1 - p) ** 2)


def uqt_known(yes: int, no: int, sensitive: float, innocuous: float) -> tuple[float, float]:
    """Unrelated question, known innocuous share (Greenberg et al. 1969):
    lambda = s pi + (1 - s) u, pi = (lambda - (1 - s) u) / s, Var = lambda (1 - lambda) / (n s^2)
    (RRreg's RRuni.UQTknown, p = [s, u])."""
    lam, n = _binary(yes, no)
    return (lam - (1 - sensitive) * innocuous) / sensitive, lam * (1 - lam) / (n * sensitive**2)


def mangat(yes: int, no: int, p: float) -> tuple[float, float]:
    """Mangat (1994): carriers say yes, others truthfully with p, else yes:
    lambda = pi + (1 - pi)(1 - p), pi = (lambda - 1 + p) / p, Var = lambda (1 - lambda) / (n p^2)
    (RRreg's RRuni.Mangat)."""
    lam, n = _binary(yes, no)
    return (lam - 1 + p) / p, lam * (1 - lam) / (n * p**2)


def kuk_one_card(red: int, black: int, p1: float, p2: float) -> tuple[float, float]:
    """Kuk (1990), one card: lambda = p1 pi + p2 (1 - pi), pi = (lambda - p2) / (p1 - p2),
    Var = lambda (1 - lambda) / (n (p1 - p2)^2) (RRreg's RRuni.Kuk with Kukrep = 1)."""
    lam, n = _binary(red, black)
    return (lam - p2) / (p1 - p2), lam * (1 - lam) / (n * (p1 - p2) ** 2)


def forced_response(counts: list[int], p: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Forced response (Boruch 1971) over m categories in RRreg's order: lambda_i = p_i + c pi_i,
    c = 1 - sum(p), so pi_i = (lambda_i - p_i) / c, Var_i = lambda_i (1 - lambda_i) / (n c^2)
    (RRreg's RRuni.FR, formulas from Himmelfarb 2008)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    lam = counts / n
    c = 1 - sum(p)
    return (lam - np.asarray(p)) / c, lam * (1 - lam) / (n * c**2)


def direct(yes: int, no: int) -> tuple[float, float]:
    """The direct question: pi = lambda, Var = lambda (1 - lambda) / n."""
    lam, n = _binary(yes, no)
    return lam, lam * (1 - lam) / n


def _two_groups(y1: int, n1: int, y2: int, n2: int) -> tuple[float, float, float, float]:
    l1, l2 = y1 / n1, y2 / n2
    return l1, l2, l1 * (1 - l1) / n1, l2 * (1 - l2) / n2


def uqt_unknown(y1: int, n1: int, y2: int, n2: int, p1: float, p2: float) -> dict:
    """Unrelated question, unknown innocuous share u, two groups (Greenberg et al. 1969):
    lambda_g = p_g pi + (1 - p_g) u. Solving the two equations,
    pi = ((1 - p2) l1 - (1 - p1) l2) / (p1 - p2), u = (p2 l1 - p1 l2) / (p2 - p1)
    (RRreg's RRuni.UQTunknown: pi and piUQ). ``y`` counts yes, ``n`` the group's answers."""
    l1, l2, v1, v2 = _two_groups(y1, n1, y2, n2)
    d = p1 - p2
    pi = ((1 - p2) * l1 - (1 - p1) * l2) / d
    innocuous = (p2 * l1 - p1 * l2) / -d
    return {"pi": (pi, ((1 - p2) ** 2 * v1 + (1 - p1) ** 2 * v2) / d**2),
            "pi_innocuous": (innocuous, (p2**2 * v1 + p1**2 * v2) / d**2)}


def sld(y1: int, n1: int, y2: int, n2: int, p1: float, p2: float) -> dict:
    """Stochastic lie detector (Moshagen, Musch and Erdfelder 2012): non-carriers say no with
    p_g, carriers say yes with t: lambda_g = pi t + (1 - pi)(1 - p_g). Then
    l1 - l2 = (1 - pi)(p2 - p1), so pi = 1 - (l1 - l2) / (p2 - p1) and
    t = (l2 (1 - p1) - l1 (1 - p2)) / ((l2 - l1) + (p2 - p1)) (RRreg's RRuni.SLD);
    Var(t) by the delta method with the derivatives of that ratio."""
    l1, l2, v1, v2 = _two_groups(y1, n1, y2, n2)
    pi = 1 - (l1 - l2) / (p2 - p1)
    var_pi = (v1 + v2) / (p2 - p1) ** 2
    denominator = (l2 - l1) + (p2 - p1)
    numerator = l2 * (1 - p1) - l1 * (1 - p2)
    d_l1 = (-(1 - p2) * denominator + numerator) / denominator**2
    d_l2 = ((1 - p1) * denominator - numerator) / denominator**2
    return {"pi": (pi, var_pi),
            "t": (numerator / denominator, d_l1**2 * v1 + d_l2**2 * v2)}


def cdm(y1: int, n1: int, y2: int, n2: int, p1: float, p2: float) -> dict:
    """Cheating detection (Clark and Desharnais 1998): compliant carriers (pi) say yes, honest
    non-carriers (beta) say yes with p_g, cheaters (gamma) say no: lambda_g = pi + beta p_g.
    beta = (l2 - l1) / (p2 - p1), pi = (p2 l1 - p1 l2) / (p2 - p1), gamma = 1 - pi - beta
    (RRreg's RRuni.CDM)."""
    l1, l2, v1, v2 = _two_groups(y1, n1, y2, n2)
    d = p2 - p1
    beta = (l2 - l1) / d
    pi = (p2 * l1 - p1 * l2) / d
    # gamma = 1 - pi - beta = 1 - ((p2 - 1) l1 + (1 - p1) l2) / d
    return {"pi": (pi, (p2**2 * v1 + p1**2 * v2) / d**2),
            "beta": (beta, (v1 + v2) / d**2),
            "gamma": (1 - pi - beta, ((1 - p2) ** 2 * v1 + (1 - p1) ** 2 * v2) / d**2)}


def cdm_symmetric(y1: int, n1: int, y2: int, n2: int, p: list[float]) -> dict:
    """Symmetric cheating detection (Ostapczuk et al. 2009), p = [forced yes, forced no] per
    group: lambda_g = pi (1 - no_g) + beta yes_g (cheaters say no). Cramer's rule on the two
    equations gives pi and beta, gamma = 1 - pi - beta (RRreg's RRuni.CDMsym)."""
    l1, l2, v1, v2 = _two_groups(y1, n1, y2, n2)
    yes1, no1, yes2, no2 = p
    det = (1 - no1) * yes2 - (1 - no2) * yes1
    a1, a2 = yes2 / det, -yes1 / det                     # pi = a1 l1 + a2 l2
    b1, b2 = -(1 - no2) / det, (1 - no1) / det           # beta = b1 l1 + b2 l2
    pi, beta = a1 * l1 + a2 * l2, b1 * l1 + b2 * l2
    c1, c2 = -(a1 + b1), -(a2 + b2)                      # gamma = 1 + c1 l1 + c2 l2
    return {"pi": (pi, a1**2 * v1 + a2**2 * v2), "beta": (beta, b1**2 * v1 + b2**2 * v2),
            "gamma": (1 - pi - beta, c1**2 * v1 + c2**2 * v2)}


def custom(counts: list[int], matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Any square misclassification matrix P (rows responses, columns states): pi = P^-1 lambda,
    Cov = P^-1 (diag(lambda) - lambda lambda') P^-T / n (van den Hout and van der Heijden
    2002; RRreg's RRuni.custom)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    lam = counts / n
    inverse = np.linalg.inv(np.asarray(matrix, dtype=float))
    cov = inverse @ (np.diag(lam) - np.outer(lam, lam)) @ inverse.T / n
    return inverse @ lam, cov


def grr_matrix(p: float, k: int) -> np.ndarray:
    """k-RR: the true category with p, each other with (1 - p)/(k - 1)."""
    other = (1 - p) / (k - 1)
    return np.full((k, k), other) + (p - other) * np.eye(k)


def inverse_moment(n: int, answered: float) -> float:
    """E[1/M | M > 0] for M ~ Binomial(n, answered), summed term by term with scipy."""
    m = np.arange(1, n + 1)
    return float(np.sum(stats.binom.pmf(m, n, answered) / m) / (1 - (1 - answered) ** n))


# -- Kuk with several cards: no closed form for the MLE -------------------------------------


def kuk_loglik(pi: float, counts: list[int], p1: float, p2: float) -> float:
    """Kuk (1990) with r cards: the number of red cards is Binomial(r, p1) for carriers and
    Binomial(r, p2) for others; counts[i] respondents reported i red cards."""
    reps = len(counts) - 1
    red = np.arange(reps + 1)
    mu = pi * stats.binom.pmf(red, reps, p1) + (1 - pi) * stats.binom.pmf(red, reps, p2)
    counts = np.asarray(counts, dtype=float)
    used = counts > 0
    return float(np.sum(counts[used] * np.log(mu[used])))


def kuk_mle(counts: list[int], p1: float, p2: float) -> tuple[float, float]:
    """The MLE of pi on [0, 1] and the inverse observed information there.

    The log-likelihood is concave in pi, so the MLE is the root of the score
    sum_i n_i (f1_i - f2_i) / mu_i (scipy's brentq to 1e-15), or the end of
    [0, 1] the score points to; -l''(pi) = sum_i n_i (f1_i - f2_i)^2 / mu_i^2.
    """
    reps = len(counts) - 1
    red = np.arange(reps + 1)
    f1, f2 = stats.binom.pmf(red, reps, p1), stats.binom.pmf(red, reps, p2)
    counts = np.asarray(counts, dtype=float)

    def score(pi: float) -> float:
        return float(np.sum(counts * (f1 - f2) / (pi * f1 + (1 - pi) * f2)))

    if score(0.0) <= 0:
        pi = 0.0
    elif score(1.0) >= 0:
        pi = 1.0
    else:
        pi = optimize.brentq(score, 0.0, 1.0, xtol=1e-15, rtol=1e-15)
    mu = pi * f1 + (1 - pi) * f2
    return pi, 1 / float(np.sum(counts * (f1 - f2) ** 2 / mu**2))


def kuk_moment(counts: list[int], p1: float, p2: float) -> float:
    """Kuk's moment estimator with r cards (RRreg's RRuni.Kuk): lambda = mean red / r,
    pi = (lambda - p2) / (p1 - p2). Not the MLE for r > 1."""
    reps = len(counts) - 1
    counts = np.asarray(counts, dtype=float)
    lam = float(np.sum(np.arange(reps + 1) * counts) / (counts.sum() * reps))
    return (lam - p2) / (p1 - p2)


def maximize_on_box(loglik, dimension: int, starts: int = 4, seed: int = 0
                    ) -> tuple[np.ndarray, float]:
    """An independent constrained maximum: scipy's L-BFGS-B on [0, 1]^dimension (which keeps
    every iterate inside the box) from seeded random starts; the best one is returned."""
    best = None
    for start in np.random.default_rng(seed).uniform(0.02, 0.98, size=(starts, dimension)):
        result = optimize.minimize(lambda x: -loglik(x), start, method="L-BFGS-B",
                                   bounds=[(0.0, 1.0)] * dimension,
                                   options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 2000})
        if best is None or result.fun < best.fun:
            best = result
    return best.x, -float(best.fun)


def stick_breaking(b: np.ndarray) -> np.ndarray:
    """Shares on the simplex from a point of the unit box: x1 = b1, x2 = (1 - b1) b2, ..., the
    last takes what is left. Every point of the box gives a point of the simplex, and back."""
    shares, left = [], 1.0
    for value in b:
        shares.append(left * value)
        left -= left * value
    return np.array([*shares, left])


def log_or_floor(x: np.ndarray) -> np.ndarray:
    """log, with a floor so that an optimizer at an edge sees a very low, finite value."""
    return np.log(np.maximum(np.asarray(x, dtype=float), 1e-300))
