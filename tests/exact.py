"""An independent oracle for tests: exact moments of pi_hat by enumerating the multinomial.

Rational arithmetic (fractions.Fraction) over every (n1, n2, n3) with
n1 + n2 > 0, so nothing here shares code or rounding with surveykit.
"""

from fractions import Fraction
from math import comb


def enumerate_conditional_moments(n: int, p: str, q: str, pi: str) -> tuple[Fraction, Fraction]:
    """(E[pi_hat | N1+N2 > 0], Var(pi_hat | N1+N2 > 0)) exactly, for decimal-string inputs."""
    p, q, pi = Fraction(p), Fraction(q), Fraction(pi)
    q1 = pi * p + (1 - pi) * q
    q2 = pi * q + (1 - pi) * p
    q3 = 1 - p - q
    total = first = second = Fraction(0)
    for n1 in range(n + 1):
        for n2 in range(n + 1 - n1):
            if n1 + n2 == 0:
                continue
            n3 = n - n1 - n2
            weight = comb(n, n3) * comb(n1 + n2, n1) * q1**n1 * q2**n2 * q3**n3
            value = (n2 * q - n1 * p) / ((n1 + n2) * (q - p))
            total += weight
            first += weight * value
            second += weight * value * value
    mean = first / total
    return mean, second / total - mean * mean


def inverse_moment_by_integral(n: int, s: float, digits: int = 50):
    """E[1/M | M > 0], M ~ Binomial(n, s), as an mpmath number, from an integral.

    1/m = integral_0^1 t^(m-1) dt, so with the generating function
    G(t) = (1 - s + s t)^n,

        E[1/M; M > 0] = integral_0^1 (G(t) - G(0)) / t dt     (Chao and Strawderman 1972)

    Substituting u = 1 - t, the integrand (1 - s u)^n is concentrated on
    u < ~1/(n s); the quadrature is split at u = c / (n s) for c = 1/4 .. 4096
    so tanh-sinh resolves that peak at any n. s is taken as the exact binary
    value of the float, the number surveykit receives. No code shared with the
    pmf sums or series of surveykit.estimation.exact.
    """
    import mpmath

    with mpmath.workdps(digits):
        s_mp = mpmath.mpf(s)
        n_mp = mpmath.mpf(n)
        g0 = mpmath.exp(n_mp * mpmath.log1p(-s_mp))  # P(M = 0)

        def integrand(u):
            return (mpmath.exp(n_mp * mpmath.log1p(-s_mp * u)) - g0) / (1 - u)

        scale = 1 / (n_mp * s_mp)
        cuts = [c * scale for c in (0.25, 1, 4, 16, 64, 256, 1024, 4096) if c * scale < 1]
        total = mpmath.quad(integrand, [mpmath.mpf(0), *cuts, mpmath.mpf(1)])
        return +(total / (1 - g0))
