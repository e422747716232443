"""WeightedCounts: the weighted sufficient statistics of one question under a sampling design.

Estimation under a complex sample needs, per question, only sums over the
respondents of each cell (stratum, sampled unit at each stage, domain, group,
response), never the respondents themselves:

* **the estimate**: the weighted pseudo-log-likelihood is
  sum_i w_i log P(r_i | g_i; theta) = sum_{g, r} W[g, r] log P(r | g; theta),
  so the sums of weights W per (group, response) give it (per domain for
  domains);
* **Taylor linearization**: the estimating equation's score of respondent i,
  u_i = d log P(r_i | g_i; theta) / d theta, depends only on the respondent's
  (group, response) cell, so each sampled unit's total of w_i u_i is
  sum_{g, r} W_unit[g, r] u[g, r]: linear in the unit's weighted counts.
  Per-PSU weighted counts per (group, response) are therefore sufficient for
  the sandwich variance (survey's ``svyrecvar`` works on exactly these PSU
  totals); multistage variances need them per unit of every stage;
* **replicates made from the PSUs** (jackknife, BRR/Fay, bootstrap): a
  replicate multiplies the weights of whole PSUs, so its weighted counts are
  sums of per-PSU weighted counts;
* **the producer's replicate weights**: per replicate the sums of its weights
  per cell (columns ``rep1`` ... ``repR``);
* **respondents as PSUs** (no clusters): the within-stratum variance of the
  w_i u_i needs sum_i w_i^2 per (stratum, domain, group, response), so cells
  need not name respondents: give ``weight2`` and no unit column.

A warehouse produces the table with one GROUP BY (the format is
:meth:`WeightedCounts.from_table`'s, and docs/complex-samples.md's)::

    SELECT stratum, psu, fpc1, domain, grp AS "group", response,
           SUM(w) AS weight, COUNT(*) AS n, SUM(w * w) AS weight2
    FROM answers GROUP BY stratum, psu, fpc1, domain, grp, response

Respondents sampled but without an answer to the question are a cell with an
empty ``response``: they keep their PSU in the design (as ``survey`` keeps the
rows of a subset, with weight 0 for the estimate), so that a PSU whose
respondents all skipped the question still counts among its stratum's PSUs.

This module is pure: it imports nothing but numpy and surveykit's sampling
declaration and errors, so the store can produce it without the estimation code.

>>> from surveykit.sampling.design import SamplingDesign
>>> counts = WeightedCounts.from_table(
...     {"stratum": ["a", "a", "a", "b", "b"], "psu": [1, 1, 2, 3, 4],
...      "response": ["yes", "no", "yes", "no", "yes"], "weight": [10.0, 5.0, 20.0, 8.0, 4.0],
...      "n": [1, 1, 2, 1, 1]},
...     SamplingDesign(weight="w", strata="stratum", clusters=("psu",)))
>>> counts.n, counts.psu_count, counts.degrees_of_freedom
(6, 4, 2)
>>> counts.table().tolist()
[[34.0, 13.0]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from surveykit.errors import ParameterError
from surveykit.sampling.design import SamplingDesign

__all__ = ["NUMBER", "UNANSWERED", "WeightedCounts", "design_keys", "first_moved", "first_parent",
           "gram_rank", "population_sizes", "units_within"]

#: The response code of respondents without an answer (they keep their PSU in the design).
UNANSWERED = -1
#: The response of a numeric question's cell of number answers (the cell holds their sums:
#: :mod:`surveykit.sampling.numeric_cells`).
NUMBER = "#"
# Stages whose sampling fraction is below this are with replacement (survey: f < 1e-7 is 0).
_CERTAIN = 1e-7


def _text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str) and not value.strip():
        return True
    return type(value).__name__ in ("NAType", "NaTType")


def population_sizes(values: np.ndarray, sampled: np.ndarray, column: str) -> np.ndarray:
    """Population sizes from an fpc column, as ``survey``'s ``as.fpc`` reads it.

    ``values`` are all population sizes (every value >= 1) or all sampling
    fractions (every value <= 1: N = n / f, ``sampled`` the units sampled
    where the value applies); anything else is an error naming ``column``.

    >>> population_sizes(np.array([0.5, 0.25]), np.array([2, 5]), "fpc").tolist()
    [4.0, 20.0]
    """
    values = np.asarray(values, dtype=float)
    bad = ~np.isfinite(values) | (values <= 0)
    if np.any(bad):
        raise ParameterError(f"fpc column {column!r} holds {values[bad][0]:g}: it must be a "
                             "population size (> 1) or a sampling fraction (between 0 and 1)")
    if np.all(values <= 1):
        return np.asarray(sampled, dtype=float) / values
    if np.all(values >= 1):
        return values
    raise ParameterError(f"fpc column {column!r} mixes sampling fractions ({values.min():g}) "
                         f"and population sizes ({values.max():g}): give all population sizes "
                         "or all fractions")


@dataclass(frozen=True, kw_only=True, eq=False)
class WeightedCounts:
    """Weighted answers to one question, one row (cell) per (stratum, unit at each stage,
    domain, group, response); see the module docstring.

    Arrays of length ``cells``: ``stratum`` (index into ``strata``),
    ``units`` (cells, stages) unit codes per stage, unique in the whole sample
    (None when respondents are the PSUs and cells are per stratum; then
    ``weight_squares`` is needed), ``population`` (cells, stages) the number
    of units in the population at each stage where the cell's unit was drawn
    (``inf``: no fpc), ``domain`` (index into ``domains``; None: no domains),
    ``group`` (index into ``groups``), ``response`` (index into ``responses``,
    :data:`UNANSWERED` for respondents without an answer), ``weight`` (sum of
    weights), ``count`` (respondents), ``weight_squares`` (sum of squared
    weights), ``replicates`` (cells, R) the sums of the producer's replicate
    weights (analysis weights). ``unit_labels`` names the units of each stage
    for messages. ``replicate_rank`` is the rank of the respondents' replicate
    weight matrix (survey's degrees of freedom are that rank - 1); summing
    respondents into cells can lower the rank, so whoever has the respondents
    gives it (without it the cells' rank is used).
    """

    sampling: SamplingDesign
    responses: tuple[str, ...]
    groups: tuple[str, ...]
    strata: tuple[str, ...]
    domains: tuple[str, ...] | None
    stratum: np.ndarray
    units: np.ndarray | None
    population: np.ndarray
    domain: np.ndarray | None
    group: np.ndarray
    response: np.ndarray
    weight: np.ndarray
    count: np.ndarray
    weight_squares: np.ndarray | None = None
    replicates: np.ndarray | None = None
    unit_labels: tuple[tuple[str, ...], ...] | None = None
    replicate_rank: int | None = None

    def __post_init__(self) -> None:
        cells = self.weight.shape[0] if np.ndim(self.weight) == 1 else -1
        arrays = {"stratum": self.stratum, "group": self.group, "response": self.response,
                  "weight": self.weight, "count": self.count}
        if self.domain is not None:
            arrays["domain"] = self.domain
        if self.weight_squares is not None:
            arrays["weight_squares"] = self.weight_squares
        for name, array in arrays.items():
            if np.ndim(array) != 1 or array.shape[0] != cells:
                raise ParameterError(f"weighted counts: {name} must have one value per cell "
                                     f"({cells})")
        stages = self.sampling.stages
        if self.population.shape != (cells, stages):
            raise ParameterError(f"weighted counts: population must be (cells, {stages})")
        if self.units is None:
            if self.sampling.clusters:
                raise ParameterError("weighted counts: the design has clusters "
                                     f"({', '.join(self.sampling.clusters)}), so every cell "
                                     "needs its PSU")
            if self.weight_squares is None:
                raise ParameterError("weighted counts without PSUs (respondents as PSUs) need "
                                     "weight2, the sum of squared weights per cell")
        elif self.units.shape != (cells, stages):
            raise ParameterError(f"weighted counts: units must be (cells, {stages})")
        if (self.domain is None) != (self.domains is None):
            raise ParameterError("weighted counts: give domain codes with domain labels")
        if not np.all(np.isfinite(self.weight)) or np.any(self.weight <= 0):
            bad = self.weight[~np.isfinite(self.weight) | (self.weight <= 0)][0]
            raise ParameterError(f"weighted counts: a cell's sum of weights is {bad:g}; "
                                 "weights must be positive numbers")
        if np.any(self.count < 1):
            raise ParameterError("weighted counts: every cell counts at least 1 respondent")
        if self.replicates is not None:
            if self.replicates.ndim != 2 or self.replicates.shape[0] != cells:
                raise ParameterError("weighted counts: replicates must be (cells, R)")
            if not np.all(np.isfinite(self.replicates)) or np.any(self.replicates < 0):
                raise ParameterError("weighted counts: replicate weights must be numbers >= 0")
        for name, codes, labels in (("response", self.response, self.responses),
                                    ("group", self.group, self.groups),
                                    ("stratum", self.stratum, self.strata),
                                    ("domain", self.domain, self.domains)):
            if codes is not None and codes.size and (codes.max() >= len(labels)
                                                     or codes.min() < (-1 if name == "response"
                                                                       else 0)):
                raise ParameterError(f"weighted counts: a {name} code is outside its labels")
        for array in arrays.values():
            array.setflags(write=False)
        self._check_structure()

    # -- structure ---------------------------------------------------------------------

    def _stage_parent(self, stage: int) -> np.ndarray:
        """The code of what a stage's units are drawn within: the stratum at stage 0, the
        unit of the stage above later."""
        return self.stratum if stage == 0 else self.units[:, stage - 1]

    def _check_structure(self) -> None:
        s = self.sampling
        for stage in range(s.stages):
            parent = self._stage_parent(stage)
            column = (s.clusters[stage] if s.clusters else "respondents")
            where = "stratum" if stage == 0 else f"cluster of {s.clusters[stage - 1]!r}"
            if self.units is not None:
                unit = self.units[:, stage]
                i, first = first_moved(unit, parent)
                if i is not None:
                    raise ParameterError(
                        f"cluster column {column!r}: {self._unit_name(stage, unit[i])} is in two "
                        f"{where.split(' ')[0]}s ({self._parent_name(stage, first[unit[i]])} and "
                        f"{self._parent_name(stage, parent[i])}); a cluster belongs to one "
                        + ("stratum" if stage == 0 else "cluster of the stage above")
                        + (" (set nest = true if identifiers repeat across strata)"
                           if not s.nest else ""))
            population = self.population[:, stage]
            first_population = first_parent(parent, population, missing=math.nan)
            differs = ~np.isclose(population, first_population[parent], rtol=1e-12,
                                  equal_nan=False) & ~(np.isinf(population)
                                                       & np.isinf(first_population[parent]))
            if np.any(differs):
                i = int(np.argmax(differs))
                raise ParameterError(
                    f"fpc column {s.fpc[stage] if s.fpc else 'fpc'!r}: "
                    f"{self._parent_name(stage, parent[i])} has two population sizes "
                    f"({first_population[parent[i]]:g} and {population[i]:g}); the fpc is one "
                    f"value per {where}")
            sampled = self.sampled_units(stage)
            present = np.flatnonzero(sampled > 0)
            too_small = first_population[present] < sampled[present] - 1e-9
            if np.any(too_small):
                p = present[int(np.argmax(too_small))]
                raise ParameterError(
                    f"fpc column {s.fpc[stage] if s.fpc else 'fpc'!r}: "
                    f"{self._parent_name(stage, p)} has a population of "
                    f"{first_population[p]:g} but {int(sampled[p])} sampled "
                    f"{'PSUs' if stage == 0 else 'units'}; the fpc must be at least the number "
                    "sampled")
            if s.lonely_psu == "fail":
                fraction = np.where(np.isinf(first_population), 1.0,
                                    (first_population - sampled) / np.where(
                                        np.isinf(first_population), 1.0, first_population))
                lonely = (sampled == 1) & (fraction >= _CERTAIN)
                if np.any(lonely):
                    p = int(np.argmax(lonely))
                    raise ParameterError(
                        f"{self._parent_name(stage, p)} has only one "
                        f"{'PSU' if stage == 0 else 'sampled unit'}"
                        + (f" at stage {stage + 1}" if stage else "")
                        + ", so its variance cannot be estimated; set lonely_psu to certainty, "
                        "adjust, average or remove, or merge it with a similar stratum")

    def _unit_name(self, stage: int, code: int) -> str:
        column = self.sampling.clusters[stage] if self.sampling.clusters else "respondent"
        label = self.unit_labels[stage][code] if self.unit_labels else str(code)
        return f"{column} {label!r}"

    def _parent_name(self, stage: int, code: int) -> str:
        if stage == 0:
            name = self.sampling.strata or "stratum"
            return f"stratum {name} = {self.strata[code]!r}" if self.sampling.strata \
                else "the sample"
        return self._unit_name(stage - 1, code)

    def sampled_units(self, stage: int) -> np.ndarray:
        """The number of units sampled at ``stage`` (0-based) within each of its parents
        (strata at stage 0; indexed by parent code)."""
        parent = self._stage_parent(stage)
        size = int(parent.max()) + 1 if parent.size else 0
        if self.units is None:
            return np.bincount(parent, weights=self.count, minlength=size)
        return units_within(self.units[:, stage], parent)

    # -- facts ---------------------------------------------------------------------------

    @property
    def stages(self) -> int:
        return self.sampling.stages

    @property
    def answered(self) -> np.ndarray:
        """Cells with an answer (not :data:`UNANSWERED`)."""
        return self.response >= 0

    @property
    def n(self) -> int:
        """Respondents with an answer."""
        return int(self.count[self.answered].sum())

    @property
    def sum_weights(self) -> float:
        """The sum of the weights of the respondents with an answer."""
        return float(self.weight[self.answered].sum())

    @property
    def psu_count(self) -> int:
        """Sampled PSUs (respondents when there are no clusters)."""
        if self.units is None:
            return int(self.count.sum())
        return int(np.unique(self.units[:, 0]).size)

    @property
    def stratum_count(self) -> int:
        return int(np.unique(self.stratum).size)

    @property
    def degrees_of_freedom(self) -> int:
        """PSUs minus strata, as ``survey``'s ``degf`` for a linearization design."""
        return self.psu_count - self.stratum_count

    @property
    def replicate_degrees_of_freedom(self) -> int:
        """The rank of the replicate weights - 1, as survey's ``degf`` for replicate designs."""
        if self.replicates is None:
            raise ParameterError("the counts carry no replicate weights")
        rank = self.replicate_rank if self.replicate_rank is not None else int(
            np.linalg.matrix_rank(self.replicates, tol=1e-5))
        return rank - 1

    @property
    def replicate_count(self) -> int:
        return 0 if self.replicates is None else int(self.replicates.shape[1])

    def domain_index(self, domain: str) -> int:
        if self.domains is None or domain not in self.domains:
            raise ParameterError(f"domain {domain!r} is not in the counts; the domains are "
                                 f"{', '.join(self.domains or ())}")
        return self.domains.index(domain)

    def in_domain(self, domain: int | None) -> np.ndarray:
        """Cells with an answer in ``domain`` (all domains for None)."""
        mask = self.answered.copy()
        if domain is not None:
            mask &= self.domain == domain
        return mask

    def table(self, domain: int | None = None, weights: np.ndarray | None = None) -> np.ndarray:
        """(groups, responses) sums of ``weights`` (default the weights) in ``domain``."""
        values = self.weight if weights is None else weights
        mask = self.in_domain(domain)
        size = len(self.groups) * len(self.responses)
        index = self.group[mask] * len(self.responses) + self.response[mask]
        return np.bincount(index, weights=values[mask], minlength=size).reshape(
            len(self.groups), len(self.responses))

    def count_table(self, domain: int | None = None) -> np.ndarray:
        """(groups, responses) respondents in ``domain``."""
        return np.rint(self.table(domain, self.count.astype(float))).astype(np.int64)

    # -- the warehouse format --------------------------------------------------------------

    @classmethod
    def from_table(cls, table: Mapping[str, Sequence] | object, sampling: SamplingDesign, *,
                   responses: Sequence[str] | None = None, groups: Sequence[str] | None = None
                   ) -> WeightedCounts:
        """Weighted counts from a table of sums, the format a warehouse's GROUP BY returns.

        Columns (a mapping of column name to values, or a pandas DataFrame):
        ``response`` (empty for respondents without an answer), ``weight`` (sum
        of weights), ``n`` (respondents); ``group`` (default "1"); ``stratum``
        when the design has strata; ``psu`` (one stage) or ``unit1`` ...
        ``unitS`` (S stages) when it has clusters; ``fpc`` or ``fpc1`` ...
        ``fpcS`` when it has an fpc (population sizes or fractions, as the
        survey file's columns); ``domain`` for domains; ``weight2`` (sum of
        squared weights) when it has no clusters; ``rep1`` ... ``repR`` for the
        producer's replicate weights. ``responses`` and ``groups`` fix the
        label order (default: order of appearance).
        """
        columns = {str(k): list(v) for k, v in _columns_of(table).items()}
        cells = len(columns.get("weight", []))
        for name in ("response", "weight", "n"):
            if name not in columns:
                raise ParameterError(f"counts table: column {name!r} is missing; the columns "
                                     f"are {', '.join(columns)}")
        for name, values in columns.items():
            if len(values) != cells:
                raise ParameterError(f"counts table: column {name!r} has {len(values)} values, "
                                     f"not {cells}")
        stages = sampling.stages
        unit_columns = ["psu"] if stages == 1 and "psu" in columns else \
            [f"unit{k}" for k in range(1, stages + 1)]
        has_units = all(c in columns for c in unit_columns)
        if sampling.clusters and not has_units:
            wanted = "psu" if stages == 1 else ", ".join(unit_columns)
            raise ParameterError(f"counts table: the design has {stages} stage(s) of clusters; "
                                 f"give the column(s) {wanted}")
        weight = _numbers(columns["weight"], "weight")
        count = _numbers(columns["n"], "n")
        if np.any(count != np.rint(count)):
            raise ParameterError("counts table: column 'n' must hold whole numbers")
        squares = _numbers(columns["weight2"], "weight2") if "weight2" in columns else None
        response_values = columns["response"]
        answered = [not _missing(v) for v in response_values]
        response_labels = list(responses) if responses is not None else list(
            dict.fromkeys(_text(v) for v, a in zip(response_values, answered, strict=True)
                          if a))
        response = np.array([response_labels.index(_text(v)) if a and _text(v) in
                             response_labels else (UNANSWERED if not a else -2)
                             for v, a in zip(response_values, answered, strict=True)],
                            dtype=np.intp)
        if np.any(response == -2):
            bad = response_values[int(np.argmax(response == -2))]
            raise ParameterError(f"counts table: response {bad!r} is not one of "
                                 f"{', '.join(response_labels)}")
        group_values = columns.get("group", ["1"] * cells)
        group_labels = list(groups) if groups is not None else list(
            dict.fromkeys(_text(v) for v in group_values))
        try:
            group = np.array([group_labels.index(_text(v)) for v in group_values], dtype=np.intp)
        except ValueError:
            bad = next(v for v in group_values if _text(v) not in group_labels)
            raise ParameterError(f"counts table: group {bad!r} is not one of "
                                 f"{', '.join(group_labels)}") from None
        strata_values = [_text(v) for v in columns.get("stratum", ["1"] * cells)]
        if sampling.strata is None and len(set(strata_values)) > 1:
            raise ParameterError("counts table has strata but the design declares none")
        strata_labels, stratum = _factorize(strata_values)
        units = None
        unit_labels = None
        if has_units:
            parent_codes = stratum
            codes, labels = [], []
            for k, name in enumerate(unit_columns):
                values = [_text(v) for v in columns[name]]
                if sampling.nest:
                    keys = [(p, v) for p, v in zip(parent_codes, values, strict=True)]
                    label_of = dict(zip(keys, values, strict=True))
                    uniq, code = _factorize(keys)
                    names = tuple(label_of[key] for key in uniq)
                else:
                    names, code = _factorize(values)
                codes.append(code)
                labels.append(tuple(names))
                parent_codes = code
                del k
            units = np.stack(codes, axis=1)
            unit_labels = tuple(labels)
        domain_labels = domain = None
        if "domain" in columns:
            domain_labels, domain = _factorize([_text(v) for v in columns["domain"]])
        population = np.full((cells, stages), math.inf)
        fpc_columns = (["fpc"] if stages == 1 and "fpc" in columns else
                       [f"fpc{k}" for k in range(1, stages + 1)])
        if sampling.fpc:
            if not all(c in columns for c in fpc_columns):
                raise ParameterError(f"counts table: the design has an fpc; give the column(s) "
                                     f"{', '.join(fpc_columns)}")
            for k, name in enumerate(fpc_columns):
                values = _numbers(columns[name], name)
                population[:, k] = _sizes(values, k, stratum, units, count, name)
        replicate_columns = sorted((c for c in columns if c.startswith("rep")
                                    and c[3:].isdigit()), key=lambda c: int(c[3:]))
        replicates = None
        if replicate_columns:
            replicates = np.stack([_numbers(columns[c], c) for c in replicate_columns], axis=1)
        return cls(sampling=sampling, responses=tuple(response_labels),
                   groups=tuple(group_labels), strata=tuple(strata_labels),
                   domains=None if domain_labels is None else tuple(domain_labels),
                   stratum=stratum, units=units, population=population, domain=domain,
                   group=group, response=response, weight=weight,
                   count=count.astype(np.int64), weight_squares=squares,
                   replicates=replicates, unit_labels=unit_labels)

    def to_table(self) -> dict[str, list]:
        """The cells in :meth:`from_table`'s format (population sizes as fpc)."""
        out: dict[str, list] = {}
        if self.sampling.strata:
            out["stratum"] = [self.strata[h] for h in self.stratum]
        if self.units is not None:
            for k in range(self.stages):
                name = "psu" if self.stages == 1 else f"unit{k + 1}"
                labels = self.unit_labels[k] if self.unit_labels else None
                out[name] = [labels[u] if labels else int(u) for u in self.units[:, k]]
        if self.sampling.fpc:
            for k in range(self.stages):
                out["fpc" if self.stages == 1 else f"fpc{k + 1}"] = \
                    self.population[:, k].tolist()
        if self.domains is not None:
            out["domain"] = [self.domains[d] for d in self.domain]
        out["group"] = [self.groups[g] for g in self.group]
        out["response"] = [self.responses[r] if r >= 0 else None for r in self.response]
        out["weight"] = self.weight.tolist()
        out["n"] = self.count.tolist()
        if self.weight_squares is not None:
            out["weight2"] = self.weight_squares.tolist()
        if self.replicates is not None:
            for r in range(self.replicates.shape[1]):
                out[f"rep{r + 1}"] = self.replicates[:, r].tolist()
        return out


def design_keys(sampling: SamplingDesign) -> list[str]:
    """The design's key columns of a weighted counts table (:meth:`WeightedCounts.from_table`):
    ``stratum`` with strata, ``psu`` (one stage) or ``unit1`` ... ``unitS`` with clusters,
    ``fpc`` or ``fpc1`` ... ``fpcS`` with an fpc.

    >>> design_keys(SamplingDesign(weight="w", strata="s", clusters=("a", "b"), fpc=("f", "g")))
    ['stratum', 'unit1', 'unit2', 'fpc1', 'fpc2']
    """
    stages = sampling.stages
    columns = ["stratum"] if sampling.strata else []
    if sampling.clusters:
        columns += ["psu"] if stages == 1 else [f"unit{k + 1}" for k in range(stages)]
    if sampling.fpc:
        columns += ["fpc"] if stages == 1 else [f"fpc{k + 1}" for k in range(stages)]
    return columns


def gram_rank(gram: np.ndarray, tol: float = 1e-5) -> int:
    """The rank of a matrix W from its Gram matrix G = W'W, as R's ``qr(W, tol)$rank`` counts
    it (LINPACK's dqrdc2, which ``survey::svrepdesign`` uses for ``degf``): the columns in
    order, each orthogonalized against the columns kept so far; a column whose remaining
    norm is below ``tol`` times its own norm is dependent. G is what a GROUP BY can sum
    (sum over the respondents of w_i w_j), so the rank needs no respondent's row: the
    remaining squared norms are the pivots of a Cholesky factorization of G over the
    columns kept.

    >>> w = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])  # col 3 = 1 + 2
    >>> gram_rank(w.T @ w), gram_rank(np.eye(4))
    (2, 4)
    """
    gram = np.asarray(gram, dtype=float)
    kept: list[int] = []
    factor = np.zeros_like(gram)  # rows of the Cholesky factor L, for the kept columns
    for k in range(gram.shape[0]):
        if gram[k, k] <= 0:
            continue
        row = np.zeros(gram.shape[0])
        for j in kept:  # L[k, j] = (G[k, j] - sum_i<j L[k, i] L[j, i]) / L[j, j]
            row[j] = (gram[k, j] - row[kept] @ factor[j, kept]) / factor[j, j]
        remaining = gram[k, k] - row[kept] @ row[kept]
        if remaining <= (tol * tol) * gram[k, k]:
            continue
        row[k] = math.sqrt(remaining)
        factor[k] = row
        kept.append(k)
    return len(kept)


def _columns_of(table: object) -> Mapping[str, Sequence]:
    if isinstance(table, Mapping):
        return table
    to_dict = getattr(table, "to_dict", None)
    if callable(to_dict) and hasattr(table, "columns"):
        return {str(c): table[c].tolist() for c in table.columns}
    raise ParameterError("counts table must be a mapping of column -> values or a DataFrame")


def _numbers(values: Sequence, name: str) -> np.ndarray:
    try:
        array = np.asarray([float(v) for v in values], dtype=float)
    except (TypeError, ValueError):
        bad = next(v for v in values if not _is_number(v))
        raise ParameterError(f"counts table: column {name!r} holds {bad!r}, not a number") \
            from None
    if not np.all(np.isfinite(array)):
        raise ParameterError(f"counts table: column {name!r} holds a missing or infinite value")
    return array


def _is_number(value: object) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _factorize(values: Sequence) -> tuple[list, np.ndarray]:
    index: dict[object, int] = {}
    codes = np.empty(len(values), dtype=np.intp)
    for i, value in enumerate(values):
        codes[i] = index.setdefault(value, len(index))
    return list(index), codes


def first_parent(unit: np.ndarray, parent: np.ndarray, *,
                 missing: float = -1) -> np.ndarray:
    """For each unit code, the value of ``parent`` at its first row (``missing`` for codes
    not present): the parent code, or any per-row value.

    >>> first_parent(np.array([0, 1, 1, 0]), np.array([5, 6, 7, 8])).tolist()
    [5, 6]
    >>> first_parent(np.array([0, 2]), np.array([0.5, 2.5]), missing=math.nan).tolist()
    [0.5, nan, 2.5]
    """
    size = int(unit.max()) + 1 if unit.size else 0
    first = np.full(size, missing, dtype=np.result_type(parent, missing))
    order = np.arange(unit.size)[::-1]          # later rows first, so the first one wins
    first[unit[order]] = parent[order]
    return first


def first_moved(unit: np.ndarray, parent: np.ndarray) -> tuple[int | None, np.ndarray]:
    """The first row whose parent is not the parent of its unit's first row (None when every
    unit keeps one parent), and :func:`first_parent`.

    >>> first_moved(np.array([0, 1, 0]), np.array([3, 4, 4]))[0]
    2
    """
    first = first_parent(unit, parent)
    moved = parent != first[unit]
    return (int(np.argmax(moved)) if np.any(moved) else None), first


def units_within(unit: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """The number of distinct units in each parent (indexed by parent code), each unit
    counted in the parent of its first row.

    >>> units_within(np.array([0, 1, 1, 2]), np.array([0, 0, 0, 1])).tolist()
    [2.0, 1.0]
    """
    first = first_parent(unit, parent)
    size = int(parent.max()) + 1 if parent.size else 0
    return np.bincount(first[first >= 0], minlength=size).astype(float)


def _sizes(values: np.ndarray, stage: int, stratum: np.ndarray, units: np.ndarray | None,
           count: np.ndarray, column: str) -> np.ndarray:
    """Population sizes per cell from an fpc column (sizes, or fractions of the units sampled
    within the cell's parent)."""
    parent = stratum if stage == 0 else units[:, stage - 1]
    size = int(parent.max()) + 1 if parent.size else 0
    sampled = np.bincount(parent, weights=count, minlength=size) if units is None else \
        units_within(units[:, stage], parent)
    return population_sizes(values, sampled[parent], column)
