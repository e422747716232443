"""Replicate weights made from the PSUs, and the replicate variance, as ``survey`` makes them.

Each replicate multiplies the weights of whole first-stage PSUs by a factor
(Wolter 2007, *Introduction to Variance Estimation*, chapters 3-5; Lumley
2010, Sec. 2.3; survey's ``jk1weights``, ``jknweights``, ``brrweights``,
``bootweights``):

* **JK1** (unstratified): replicate j drops PSU j and multiplies the others by
  n/(n - 1); scale (1 - f)(n - 1)/n, f = n/N with the first stage's fpc.
* **JKn** (stratified): replicate (h, j) drops PSU j of stratum h and
  multiplies the other PSUs of h by n_h/(n_h - 1); rscales (1 - f_h)(n_h - 1)/n_h,
  scale 1. A census stratum (f_h = 1) gets no replicate; a stratum with one PSU
  follows ``lonely_psu`` as survey's ``jknweights`` does.
* **BRR / Fay** (two PSUs per stratum): replicate r keeps one PSU of each
  stratum, chosen by row h + 1 of a Hadamard matrix, with factor 2 - rho, the
  other with rho (rho = 0: BRR); scale 1/(R (1 - rho)^2). The Hadamard matrix
  is Sylvester's (2^k) or Paley's (p + 1, p a prime 3 mod 4), whichever is
  smallest; ``survey`` picks the same for 3 and for 100 strata, and for totals
  (linear in the weights) any Hadamard matrix gives the same variance.
* **bootstrap** (Rao and Wu 1988 as survey's ``bootweights``): in each stratum
  n_h PSUs are drawn with replacement (without an fpc) or n_h from the PSUs
  repeated to N_h (with one); the factor is how often a PSU was drawn; scale
  nbar/((nbar - 1)(R - 1)), nbar the harmonic mean of n_h. Draws come from a
  seeded numpy Generator, so a seed reproduces them.

The variance of an estimate theta from its replicates theta_r is survey's
``svrVar``: scale * sum_r rscales[r] (theta_r - center)(theta_r - center)',
center the mean of the replicates (or theta with ``mse``).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from surveykit.errors import EstimationError, ParameterError
from surveykit.sampling.counts import WeightedCounts

__all__ = ["Replicates", "bootstrap", "brr", "hadamard", "jackknife", "replicate_variance",
           "replicate_weights_for"]

# survey: a stratum sampled completely (fpc = n) gets no jackknife replicate.
_CENSUS = 1e-7


@dataclass(frozen=True, kw_only=True, eq=False)
class Replicates:
    """Replicate factors per first-stage PSU, (PSUs, R), PSUs in the order of their codes
    (``psus``), with the variance's ``scale``, ``rscales`` and ``mse``."""

    type: str
    psus: np.ndarray
    factors: np.ndarray
    scale: float
    rscales: np.ndarray
    mse: bool = False
    seed: int | None = None

    @property
    def count(self) -> int:
        return int(self.factors.shape[1])

    def cell_weights(self, counts: WeightedCounts) -> np.ndarray:
        """The cells' replicate weight sums (cells, R): each cell's weight times its PSU's
        factor."""
        index = np.searchsorted(self.psus, counts.units[:, 0])
        return counts.weight[:, None] * self.factors[index]

    @property
    def degrees_of_freedom(self) -> int:
        """The rank of the replicate weights minus 1 (survey's ``degf``)."""
        return int(np.linalg.matrix_rank(self.factors, tol=1e-5)) - 1


def _psu_table(counts: WeightedCounts):
    """(PSU codes, stratum of each, population of the first stage per PSU)."""
    if counts.units is None:
        raise ParameterError(
            "replicates made from the PSUs need the PSUs: without clusters every respondent is "
            "a PSU, so count the rows with keep_respondents=True")
    psus, index = np.unique(counts.units[:, 0], return_inverse=True)
    stratum = np.empty(psus.size, dtype=np.intp)
    stratum[index] = counts.stratum
    population = np.empty(psus.size)
    population[index] = counts.population[:, 0]
    return psus, stratum, population


def jackknife(counts: WeightedCounts) -> Replicates:
    """JK1 for an unstratified design, JKn for a stratified one (survey's ``type = "auto"``).

    >>> from surveykit.sampling.design import SamplingDesign
    >>> c = WeightedCounts.from_table({"psu": [1, 2, 3], "response": ["yes", "no", "yes"],
    ...     "weight": [1.0, 1.0, 1.0], "n": [1, 1, 1]}, SamplingDesign(clusters=("psu",)))
    >>> r = jackknife(c)
    >>> r.type, r.factors.tolist(), round(r.scale, 4)
    ('JK1', [[0.0, 1.5, 1.5], [1.5, 0.0, 1.5], [1.5, 1.5, 0.0]], 0.6667)
    """
    psus, stratum, population = _psu_table(counts)
    strata = np.unique(stratum)
    lonely_option = counts.sampling.lonely_psu
    if counts.sampling.strata is None:
        n = psus.size
        if n < 2:
            raise EstimationError("the jackknife needs at least 2 PSUs")
        f = _fraction(population[0], n)
        factors = np.full((n, n), n / (n - 1))
        np.fill_diagonal(factors, 0.0)
        return Replicates(type="JK1", psus=psus, factors=factors, scale=f * (n - 1) / n,
                          rscales=np.ones(n))
    columns, rscales = [], []
    for h in strata:
        members = np.flatnonzero(stratum == h)
        n = members.size
        f = _fraction(population[members[0]], n)
        if f < _CENSUS:
            continue
        if n == 1:
            if lonely_option == "fail":
                raise EstimationError(f"{counts._parent_name(0, h)} has only one PSU; set "
                                      "lonely_psu to certainty, adjust, average or remove")
            if lonely_option == "adjust":
                k = strata.size
                column = np.where(stratum == h, 0.0, k / (k - 1))
                columns.append(column)
                rscales.append((k - 1) / k)
            continue
        for j in members:
            column = np.ones(psus.size)
            column[members] = n / (n - 1)
            column[j] = 0.0
            columns.append(column)
            rscales.append(f * (n - 1) / n)
    if not columns:
        raise EstimationError("every stratum was sampled completely: there is no sampling "
                              "variance")
    scale = 1.0
    if len(columns) < psus.size and lonely_option == "average":
        scale = psus.size / len(columns)
    return Replicates(type="JKn", psus=psus, factors=np.stack(columns, axis=1), scale=scale,
                      rscales=np.asarray(rscales))


def _fraction(population: float, n: int) -> float:
    """1 - n/N, or 1 without an fpc."""
    return 1.0 if math.isinf(population) else (population - n) / population


def _primes_3_mod_4(limit: int) -> list[int]:
    sieve = np.ones(limit + 1, dtype=bool)
    sieve[:2] = False
    for i in range(2, int(limit ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = False
    return [int(p) for p in np.flatnonzero(sieve) if p % 4 == 3]


def _paley(p: int) -> np.ndarray:
    """Paley's Hadamard matrix of order p + 1 in 0/1 form, as survey's ``paley``: entry
    (i, j) of the core is 0 where i + j mod p is 0 or a quadratic residue."""
    residues = {0, 1} | {(i * i) % p for i in range(2, (p - 1) // 2 + 1)}
    core = (np.add.outer(np.arange(p), np.arange(p)) % p)
    core = np.where(np.isin(core, list(residues)), 0, 1)
    top = np.ones((1, p), dtype=int)
    return np.concatenate([np.ones((p + 1, 1), dtype=int),
                           np.concatenate([top, core], axis=0)], axis=1)


def hadamard(strata: int) -> np.ndarray:
    """A Hadamard matrix in 0/1 form with at least ``strata`` + 1 rows: Sylvester's or
    Paley's, the smaller.

    >>> hadamard(3).tolist()
    [[1, 1, 1, 1], [1, 0, 1, 0], [1, 1, 0, 0], [1, 0, 0, 1]]
    >>> hadamard(100).shape
    (104, 104)
    """
    need = strata + 1
    size = 4
    while size < need:
        size *= 2
    sylvester_size = size
    paley = next((p for p in _primes_3_mod_4(2 * need + 8) if p + 1 >= need), None)
    if paley is not None and paley + 1 < sylvester_size:
        return _paley(paley)
    matrix = np.array([[1, 1], [1, 0]])
    while matrix.shape[0] < sylvester_size:
        matrix = np.block([[matrix, matrix], [matrix, 1 - matrix]])
    return matrix


def brr(counts: WeightedCounts, rho: float = 0.0) -> Replicates:
    """Balanced repeated replication (Fay's with ``rho`` > 0) for two PSUs per stratum.

    Strata are taken in the order of their labels, and within a stratum the
    PSUs in the order they first appear (survey's ``brrweights``).
    """
    if not 0 <= rho < 1:
        raise ParameterError(f"rho ({rho:g}) must be at least 0 and below 1")
    psus, stratum, _ = _psu_table(counts)
    if counts.sampling.strata is None:
        raise EstimationError("BRR needs strata of two PSUs each; the design has no strata "
                              "(use the jackknife or the bootstrap)")
    order = sorted(np.unique(stratum), key=lambda h: counts.strata[h])
    first_cell = np.full(psus.size, counts.units.shape[0], dtype=np.intp)
    index = np.searchsorted(psus, counts.units[:, 0])
    np.minimum.at(first_cell, index, np.arange(index.size))
    H = hadamard(len(order))
    factors = np.zeros((psus.size, H.shape[1]))
    for s, h in enumerate(order):
        members = np.flatnonzero(stratum == h)
        if members.size != 2:
            raise EstimationError(
                f"BRR needs two PSUs per stratum; {counts._parent_name(0, h)} has "
                f"{members.size}: use the jackknife, or pair the PSUs into strata of two")
        first, second = members[np.argsort(first_cell[members], kind="stable")]
        keeps_first = H[1 + s] == 1
        factors[first] = np.where(keeps_first, 2 - rho, rho)
        factors[second] = np.where(keeps_first, rho, 2 - rho)
    replicates = H.shape[1]
    return Replicates(type="Fay" if rho else "BRR", psus=psus, factors=factors,
                      scale=1 / (replicates * (1 - rho) ** 2), rscales=np.ones(replicates))


def bootstrap(counts: WeightedCounts, replicates: int = 500,
              rng: np.random.Generator | int | None = None) -> Replicates:
    """Rescaled bootstrap replicates of the PSUs within strata (survey's ``bootweights``).

    ``rng`` is a numpy Generator or a seed; None draws a seed from the
    operating system's secure source, kept in ``seed`` so the run can be
    repeated.

    >>> from surveykit.sampling.design import SamplingDesign
    >>> c = WeightedCounts.from_table({"psu": [1, 2, 3, 4], "response": ["yes", "no"] * 2,
    ...     "weight": [1.0] * 4, "n": [1] * 4}, SamplingDesign(clusters=("psu",)))
    >>> r = bootstrap(c, replicates=3, rng=1)
    >>> r.factors.sum(axis=0).tolist(), round(r.scale, 4)
    ([4.0, 4.0, 4.0], 0.6667)
    """
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 2:
        raise ParameterError(f"replicates ({replicates!r}) must be a whole number of at least 2")
    seed = None
    if not isinstance(rng, np.random.Generator):
        if rng is None:
            import secrets

            seed = secrets.randbits(63)
        else:
            seed = int(rng)
        rng = np.random.default_rng(seed)
    psus, stratum, population = _psu_table(counts)
    factors = np.zeros((psus.size, replicates))
    sizes = []
    for h in np.unique(stratum):
        members = np.flatnonzero(stratum == h)
        n = members.size
        sizes.append(n)
        N = population[members[0]]
        for r in range(replicates):
            if math.isinf(N):
                drawn = rng.integers(0, n, size=n)
            else:
                # the PSUs in a random order, repeated to the population size (survey's
                # bootstratum), then n drawn without replacement
                pool = np.resize(rng.permutation(n), int(round(N)))
                drawn = pool[rng.choice(pool.size, size=n, replace=False)]
            factors[members, r] = np.bincount(drawn, minlength=n)
    harmonic = 1 / np.mean(1 / np.asarray(sizes, dtype=float))
    if harmonic <= 1:
        raise EstimationError("the bootstrap needs strata with at least 2 PSUs")
    return Replicates(type="bootstrap", psus=psus, factors=factors,
                      scale=float(harmonic / ((harmonic - 1) * (replicates - 1))),
                      rscales=np.ones(replicates), seed=seed)


def replicate_variance(thetas: np.ndarray, estimate: np.ndarray, scale: float,
                       rscales: np.ndarray, mse: bool = False) -> np.ndarray:
    """survey's ``svrVar``: scale * sum_r rscales[r] (theta_r - c)(theta_r - c)'.

    ``thetas`` is (R, p); ``c`` the mean of the replicates with a positive
    rscale, or ``estimate`` with ``mse``.

    >>> replicate_variance(np.array([[1.0], [3.0]]), np.array([2.0]), 0.5, np.ones(2)).tolist()
    [[1.0]]
    """
    thetas = np.asarray(thetas, dtype=float)
    rscales = np.asarray(rscales, dtype=float)
    centre = np.asarray(estimate, dtype=float) if mse else thetas[rscales > 0].mean(axis=0)
    deviations = (thetas - centre) * np.sqrt(rscales)[:, None]
    return scale * deviations.T @ deviations


def replicate_weights_for(counts: WeightedCounts, variance: str, replicates: int, rng, rho):
    """Per-row replicate weights (rows, R), scale, rscales, mse, the method's name and df:
    the producer's (``variance = "replicates"``) or made from the PSUs (``jackknife``,
    ``brr`` with Fay's ``rho``, ``bootstrap`` with ``replicates`` draws from ``rng``)."""
    if variance == "replicates":
        spec = counts.sampling.replicate_weights
        if spec is None or counts.replicates is None:
            raise ParameterError("variance 'replicates' needs the producer's replicate weights: "
                                 "declare replicate_weights and replicate_type")
        scale, rscales = spec.factors(counts.replicates.shape[1])
        return (counts.replicates, scale, np.asarray(rscales), spec.mse,
                f"replicates ({spec.type})", counts.replicate_degrees_of_freedom)
    made = {"jackknife": lambda: jackknife(counts), "brr": lambda: brr(counts, rho),
            "bootstrap": lambda: bootstrap(counts, replicates, rng)}[variance]()
    return (made.cell_weights(counts), made.scale, made.rscales, made.mse, made.type,
            made.degrees_of_freedom)
