"""java.util.Random as JavaRosa uses it, and its state recovered from one instanceID.

What JavaRosa 5.1.0 does (read with ``javap -c`` from the ODK_Validate.jar that
pyxform 4.5.0 ships, which is the JavaRosa of ODK Collect):

* ``MathUtils.getRand()`` returns one static ``java.util.Random``, created once
  (``new Random()``) and shared by the whole process;
* the XPath function ``random()`` is ``MathUtils.getRand().nextDouble()``;
* the ``uid`` preload that fills ``meta/instanceID`` is ``"uuid:" +
  PropertyUtils.genUUID()``, and ``genUUID`` builds the uuid from the same
  generator: 8 + 4 hex digits, "-4", 3 hex digits, "-", one of 8..b
  (``8 + nextInt(4)``), 3 + 12 hex digits, each hex digit ``nextInt(16)``.

java.util.Random is a linear congruential generator on 48 bits (its Javadoc):
``seed <- (seed * 0x5DEECE66D + 0xB) mod 2^48`` and ``next(bits)`` returns the
top ``bits`` of the new seed; ``nextInt(16)`` is the top 4 bits of a new seed
and ``nextDouble()`` takes 26 + 27 bits of two. So a uuid shows the top 4 bits
of 30 consecutive seeds (and the top 2 of one more): 120 bits about 48
unknown ones. The seeds are ``S_i = a^i S_0 + c_i mod 2^48``; the unknown low
44 bits form a short vector close to a known point of a lattice, which
lattice reduction (LLL, Lenstra, Lenstra and Lovász 1982) finds; this is the
classic attack on truncated linear congruential generators (Frieze, Håstad,
Kannan, Lagarias and Shamir, SIAM J. Comput. 17(2), 1988). The answer is
checked by regenerating the whole uuid, so a wrong one is never returned.

With the state after the uuid, every later ``random()`` is known: JavaRosa
fills the uid preload when the form first loads, right before the
``odk-instance-first-load`` actions (our dynamic defaults), so the draws of a
form are the next ``nextDouble()`` values, in form order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["JavaRandom", "recover_state"]

_MULTIPLIER = 0x5DEECE66D
_INCREMENT = 0xB
_BITS = 48
_MASK = (1 << _BITS) - 1
_INVERSE = pow(_MULTIPLIER, -1, 1 << _BITS)


class JavaRandom:
    """java.util.Random from a raw 48-bit state (not a seed: no scrambling).

    >>> r = JavaRandom(state=(42 ^ 0x5DEECE66D) & (2**48 - 1))  # new Random(42)
    >>> r.next_int(16), r.next_int(16), r.next_double()  # as Java 17 prints them
    (11, 0, 0.6832234717598454)
    """

    def __init__(self, *, state: int) -> None:
        self.state = state & _MASK

    def next(self, bits: int) -> int:
        self.state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK
        return self.state >> (_BITS - bits)

    def next_int(self, bound: int) -> int:
        # only powers of two: the form genUUID uses (Random.nextInt's first branch)
        assert bound & (bound - 1) == 0
        return (bound * self.next(31)) >> 31

    def next_double(self) -> float:
        return ((self.next(26) << 27) + self.next(27)) * 2.0 ** -53

    def back(self, calls: int) -> None:
        """Undo ``calls`` steps of the generator (the multiplier is odd, so invertible)."""
        for _ in range(calls):
            self.state = ((self.state - _INCREMENT) * _INVERSE) & _MASK

    def uuid(self) -> str:
        """JavaRosa's PropertyUtils.genUUID()."""
        def hexes(count: int) -> str:
            return "".join(f"{self.next_int(16):x}" for _ in range(count))
        return (f"{hexes(8)}-{hexes(4)}-4{hexes(3)}-{8 + self.next_int(4):x}{hexes(3)}-"
                f"{hexes(12)}")


#: Generator calls genUUID makes: 30 hex digits and the variant digit.
UUID_CALLS = 31
#: The 4-bit outputs of genUUID the state is recovered from (of its 30).
OBSERVED = 20


def recover_state(uuid: str) -> int | None:
    """The generator's state right after JavaRosa generated ``uuid``, or None.

    None when no java.util.Random state produces ``uuid`` (e.g. a uuid from a
    secure generator, as ODK Web Forms makes).

    >>> r = JavaRandom(state=0x123456789ABC)
    >>> made = r.uuid()
    >>> recover_state(made) == r.state
    True
    """
    text = uuid.removeprefix("uuid:").replace("-", "")
    if len(text) != 32 or text[12] != "4":
        return None
    # (call number, top 4 bits of that call's seed) for the 30 nextInt(16) calls
    observed, call = [], 0
    for position, digit in enumerate(text):
        if position == 12:      # the literal "4"
            continue
        if position != 16:      # position 16 is the variant, nextInt(4): 2 bits only
            observed.append((call, int(digit, 16)))
        call += 1
    # the first 20 outputs (80 bits of a 48-bit state) pin the seed as surely as all 30
    # (recovered for 200 of 200 random states) in a lattice of 21 dimensions, not 31: the
    # reduction takes 0.26 s instead of 0.64; the whole uuid is checked below either way
    first = _seed_from_top_bits(observed[:OBSERVED])
    if first is None:
        return None
    generator = JavaRandom(state=first)
    generator.back(1)
    if generator.uuid().replace("-", "") != text:
        return None
    return generator.state


def _seed_from_top_bits(observed: list[tuple[int, int]]) -> int | None:
    """The seed S_0 of call 0 from the top 4 bits of the seeds of the given calls.

    Unknowns y_i = S_i - top_i 2^44 - 2^43 lie in [-2^43, 2^43); they satisfy
    y_i = a^i y_0 + e_i (mod 2^48) with known e_i. The vector (y_0, ..., y_n, W)
    is a short vector of the lattice spanned by (1, a^1, ..., a^n, 0), 2^48 e_i
    (i >= 1) and (0, e_1, ..., e_n, W) (Kannan's embedding, W = 2^43).
    """
    modulus, half, top = 1 << _BITS, 1 << 43, 1 << 44
    multipliers, offsets = [], []
    first_top = observed[0][1]
    for call, top_bits in observed:
        a, c = 1, 0
        for _ in range(call):
            a, c = (a * _MULTIPLIER) & _MASK, (c * _MULTIPLIER + _INCREMENT) & _MASK
        e = (a * (first_top * top + half) + c - top_bits * top - half) % modulus
        multipliers.append(a)
        offsets.append(e - modulus if e >= modulus // 2 else e)
    n = len(observed)
    basis = [multipliers + [0]]
    for i in range(1, n):
        row = [0] * (n + 1)
        row[i] = modulus
        basis.append(row)
    basis.append([0] + offsets[1:] + [half])
    for row in _lll(basis):
        if abs(row[-1]) == half:
            y0 = row[0] if row[-1] == half else -row[0]
            seed = first_top * top + half + y0
            if 0 <= seed < modulus:
                return seed
    return None


def _lll(basis: list[list[int]], delta: float = 0.99) -> list[list[int]]:
    """LLL reduction (Lenstra, Lenstra, Lovász 1982): exact integer rows; the
    Gram-Schmidt coefficients in floating point from a QR decomposition, redone
    after each swap (enough for the 21 dimensions used here)."""
    b = [list(row) for row in basis]

    def gram_schmidt() -> tuple[list[list[float]], list[float]]:
        r = np.linalg.qr(np.array(b, dtype=float).T, mode="r")
        diagonal = np.diag(r)
        return (r / diagonal[:, None]).T.tolist(), (diagonal * diagonal).tolist()

    mu, norms = gram_schmidt()
    k = 1
    while k < len(b):
        for j in range(k - 1, -1, -1):
            q = round(mu[k][j])
            if q:
                b[k] = [x - q * y for x, y in zip(b[k], b[j], strict=True)]
                for i in range(j):
                    mu[k][i] -= q * mu[j][i]
                mu[k][j] -= q
        if norms[k] >= (delta - mu[k][k - 1] ** 2) * norms[k - 1]:
            k += 1
        else:
            b[k], b[k - 1] = b[k - 1], b[k]
            mu, norms = gram_schmidt()
            k = max(k - 1, 1)
    return b
