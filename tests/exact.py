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
