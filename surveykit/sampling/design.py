"""The sampling design of a survey: weights, strata, clusters, fpc and replicate weights.

A :class:`SamplingDesign` is what a survey file's ``[sampling]`` section
declares, in R ``survey``'s vocabulary (Lumley 2010, *Complex Surveys*,
chapters 1-3; ``survey::svydesign`` and ``survey::svrepdesign``): which column
holds each respondent's sampling weight (1 / inclusion probability), the
first-stage strata, the cluster identifiers of each stage (first-stage PSU
first), the finite population correction of each stage (a population size
above 1, or a sampling fraction at most 1), the population size N for totals,
what to do with a stratum that has a single PSU (``lonely_psu``, as
``options(survey.lonely.psu)``), and the replicate weights a data producer
ships (:class:`ReplicateWeights`, as ``svrepdesign``'s ``type``, ``scale``,
``rscales``, ``rho``, ``mse``).

The declaration is checked when it is made (names, options, numbers); the
values it points at are checked where the rows are read
(:meth:`surveykit.sampling.counts.WeightedCounts.from_rows`), with one-line
errors that name the column, the row and the value.

>>> design = SamplingDesign(weight="pw", strata="stype", fpc=("fpc",))
>>> design.describe()
'weights pw, strata stype, fpc fpc, lonely PSUs fail'
>>> SamplingDesign(weight="pw", lonely_psu="drop")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
surveykit.errors.ParameterError: lonely_psu ('drop') must be one of fail, certainty, ...

This module is pure: it imports nothing but numpy and surveykit's errors, so
the survey-file reader and the store can use it.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from surveykit.errors import ParameterError

__all__ = ["LONELY_PSU", "REPLICATE_TYPES", "VARIANCE_METHODS", "ReplicateWeights",
           "SamplingDesign", "natural_order"]

#: What to do with a stratum that has a single PSU (survey's options(survey.lonely.psu)).
LONELY_PSU: tuple[str, ...] = ("fail", "certainty", "adjust", "average", "remove")
#: Replicate-weight types a data producer may ship (svrepdesign's ``type``).
REPLICATE_TYPES: tuple[str, ...] = ("JK1", "JKn", "BRR", "Fay", "bootstrap")
#: Variance methods: Taylor linearization, replicates made from the PSUs (jackknife, BRR or
#: Fay, bootstrap), or the producer's replicate weights.
VARIANCE_METHODS: tuple[str, ...] = ("linearization", "jackknife", "brr", "bootstrap",
                                     "replicates")


def natural_order(names: Sequence[str]) -> list[str]:
    """``names`` sorted with their runs of digits compared as numbers, so that replicate
    columns come in the order a producer numbers them whatever order a file or the
    database gives them.

    >>> natural_order(["repw10", "repw2", "repw1"])
    ['repw1', 'repw2', 'repw10']
    """
    def key(name: str) -> tuple:
        return tuple((0, int(part), part) if part.isdigit() else (1, 0, part)
                     for part in re.split(r"(\d+)", name) if part)
    return sorted(names, key=key)


def _column(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ParameterError(f"{name} ({value!r}) must be a column name")
    return value.strip()


def _columns(name: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (_column(name, value),)
    if not isinstance(value, Sequence):
        raise ParameterError(f"{name} ({value!r}) must be a column name or a list of them")
    return tuple(_column(f"{name}[{i}]", v) for i, v in enumerate(value))


def _positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ParameterError(f"{name} ({value!r}) must be a positive number")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ParameterError(f"{name} ({value:g}) must be a positive number")
    return value


@dataclass(frozen=True, kw_only=True)
class ReplicateWeights:
    """Replicate weights supplied by the data producer, as ``survey::svrepdesign`` takes them.

    ``columns`` lists the replicate columns, or ``pattern`` matches them
    (``"repw*"``, shell style, case-sensitive, in natural numeric order: repw1,
    repw2, ..., repw10, see :func:`natural_order`); each holds a
    replicate's analysis weight for every respondent (``combined=True``, the
    default, as ``combined.weights = TRUE``) or a factor that multiplies the
    full-sample weight (``combined=False``). The variance is

        scale * sum_r rscales[r] * (theta_r - center)^2,

    center the mean of the replicate estimates, or the full-sample estimate
    with ``mse=True``. Defaults are svrepdesign's: ``scale`` = 1/R for BRR,
    1/(R (1 - rho)^2) for Fay, (R - 1)/R for JK1, 1/(R - 1) for bootstrap;
    JKn needs ``rscales`` (the (n_h - 1)/n_h of each replicate's stratum).

    >>> scale, rscales = ReplicateWeights(pattern="repw*", type="JK1").factors(80)
    >>> scale, set(rscales)
    (0.9875, {1.0})
    """

    type: str
    columns: tuple[str, ...] = ()
    pattern: str | None = None
    scale: float | None = None
    rscales: tuple[float, ...] | None = None
    rho: float | None = None
    mse: bool = False
    combined: bool = True

    def __post_init__(self) -> None:
        if self.type not in REPLICATE_TYPES:
            raise ParameterError(f"replicate_type ({self.type!r}) must be one of "
                                 f"{', '.join(REPLICATE_TYPES)}")
        object.__setattr__(self, "columns", _columns("replicate_weights", self.columns))
        if bool(self.columns) == (self.pattern is not None):
            raise ParameterError("replicate_weights: give the replicate columns (a list) or "
                                 "one pattern such as \"repw*\", not both and not neither")
        if self.pattern is not None:
            _column("replicate_weights", self.pattern)
        if self.scale is not None:
            object.__setattr__(self, "scale", _positive("replicate_scale", self.scale))
        if self.rscales is not None:
            if isinstance(self.rscales, str) or not isinstance(self.rscales, Sequence):
                raise ParameterError(f"replicate_rscales ({self.rscales!r}) must be a list of "
                                     "numbers, one per replicate")
            values = []
            for i, v in enumerate(self.rscales):
                if isinstance(v, bool) or not isinstance(v, int | float | np.number) or \
                        not math.isfinite(float(v)) or float(v) < 0:
                    raise ParameterError(f"replicate_rscales[{i}] ({v!r}) must be a number "
                                         ">= 0")
                values.append(float(v))
            object.__setattr__(self, "rscales", tuple(values))
        if self.type == "Fay":
            if self.rho is None:
                raise ParameterError("replicate_type Fay needs rho (Fay's coefficient, e.g. "
                                     "0.5): replicate weights are 2 - rho and rho times")
            rho = float(self.rho)
            if not 0 < rho < 1:
                raise ParameterError(f"rho ({rho:g}) must be between 0 and 1 (exclusive)")
            object.__setattr__(self, "rho", rho)
        elif self.rho is not None:
            raise ParameterError(f"rho ({self.rho!r}) is Fay's coefficient: give it with "
                                 "replicate_type Fay only")
        if self.type == "JKn" and self.rscales is None:
            raise ParameterError("replicate_type JKn needs replicate_rscales: (n_h - 1)/n_h "
                                 "for each replicate, n_h the PSUs of its stratum")

    def matches(self, name: str) -> bool:
        """Whether column ``name`` is one of the replicate columns (listed, or matched by
        the pattern).

        >>> ReplicateWeights(pattern="repw*", type="BRR").matches("repw12")
        True
        """
        if self.pattern is not None:
            return fnmatch.fnmatchcase(name, self.pattern)
        return name in self.columns

    def resolve(self, available: Sequence[str]) -> tuple[str, ...]:
        """The replicate columns among ``available`` (a file's header): the listed ones in
        their order, or those the pattern matches in natural order (:func:`natural_order`).

        >>> ReplicateWeights(pattern="repw*", type="BRR").resolve(["pw", "repw10", "repw2"])
        ('repw2', 'repw10')
        """
        if self.columns:
            missing = [c for c in self.columns if c not in available]
            if missing:
                raise ParameterError(f"replicate weight column {missing[0]!r} is not in the "
                                     f"data; the columns are {', '.join(available[:30])}")
            return self.columns
        matched = tuple(natural_order([c for c in available if self.matches(c)]))
        if not matched:
            raise ParameterError(f"replicate_weights ({self.pattern!r}) matches no column; "
                                 f"the columns are {', '.join(available[:30])}")
        return matched

    def factors(self, replicates: int) -> tuple[float, tuple[float, ...]]:
        """``(scale, rscales)`` for ``replicates`` replicates, svrepdesign's defaults filled in."""
        if replicates < 2:
            raise ParameterError(f"replicate weights: {replicates} replicate column(s); "
                                 "a replicate variance needs at least 2")
        if self.rscales is not None and len(self.rscales) not in (1, replicates):
            raise ParameterError(f"replicate_rscales has {len(self.rscales)} values for "
                                 f"{replicates} replicate columns")
        defaults = {"BRR": 1 / replicates, "JK1": (replicates - 1) / replicates,
                    "bootstrap": 1 / (replicates - 1), "JKn": 1.0,
                    "Fay": 1 / (replicates * (1 - (self.rho or 0)) ** 2)}
        scale = self.scale if self.scale is not None else defaults[self.type]
        rscales = self.rscales or (1.0,)
        if len(rscales) == 1:
            rscales = rscales * replicates
        return scale, tuple(rscales)


@dataclass(frozen=True, kw_only=True)
class SamplingDesign:
    """How the respondents were sampled (see the module docstring).

    ``weight`` names the sampling-weight column (None: every respondent
    weighs 1, or N/n with ``population``); ``strata`` the first-stage strata
    column; ``clusters`` one column per stage, first-stage PSU first (none:
    every respondent is a PSU); ``fpc`` one column per stage of ``clusters``
    (or one column without clusters), each a population size (> 1) or a
    sampling fraction (<= 1); ``population`` N for totals when no fpc gives
    it; ``lonely_psu`` one of :data:`LONELY_PSU`; ``replicate_weights`` the
    producer's replicates; ``nest`` (survey's ``nest = TRUE``) says that cluster
    identifiers repeat across strata (and a stage's identifiers across the
    clusters of the stage above), so that (stratum, PSU) names a PSU; without
    it a PSU found in two strata is an error.
    """

    weight: str | None = None
    strata: str | None = None
    clusters: tuple[str, ...] = ()
    fpc: tuple[str, ...] = ()
    population: float | None = None
    lonely_psu: str = "fail"
    replicate_weights: ReplicateWeights | None = None
    nest: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.nest, bool):
            raise ParameterError(f"nest ({self.nest!r}) must be true or false")
        if self.weight is not None:
            object.__setattr__(self, "weight", _column("weight", self.weight))
        if self.strata is not None:
            object.__setattr__(self, "strata", _column("strata", self.strata))
        clusters = _columns("clusters", self.clusters)
        fpc = _columns("fpc", self.fpc)
        object.__setattr__(self, "clusters", clusters)
        object.__setattr__(self, "fpc", fpc)
        if fpc and len(fpc) != max(1, len(clusters)):
            raise ParameterError(
                f"fpc ({list(fpc)!r}) must give one column per stage of clusters "
                f"({list(clusters)!r}): survey's multistage variance needs every stage's fpc")
        if self.population is not None:
            object.__setattr__(self, "population", _positive("population", self.population))
        if self.lonely_psu not in LONELY_PSU:
            raise ParameterError(f"lonely_psu ({self.lonely_psu!r}) must be one of "
                                 f"{', '.join(LONELY_PSU)}")
        if self.replicate_weights is not None and not isinstance(self.replicate_weights,
                                                                 ReplicateWeights):
            raise ParameterError("replicate_weights must be a ReplicateWeights")
        if len(set(clusters)) != len(clusters):
            raise ParameterError(f"clusters ({list(clusters)!r}) names a column twice")
        if self.strata is not None and self.strata in clusters:
            raise ParameterError(f"strata ({self.strata!r}) is also a cluster column")
        if self.weight is not None and self.weight in (*clusters, self.strata):
            raise ParameterError(f"weight ({self.weight!r}) is also a strata or cluster column")

    @classmethod
    def from_mapping(cls, section: Mapping[str, object]) -> SamplingDesign:
        """A design from a survey file's ``[sampling]`` table (keys as docs/complex-samples.md
        lists them).

        >>> SamplingDesign.from_mapping({"weight": "pw", "clusters": "dnum",
        ...                              "fpc": "fpc"}).clusters
        ('dnum',)
        """
        known = {"weight", "strata", "clusters", "fpc", "population", "lonely_psu", "nest",
                 "replicate_weights", "replicate_type", "replicate_scale", "replicate_rscales",
                 "replicate_rho", "replicate_mse", "replicate_combined"}
        unknown = sorted(set(section) - known)
        if unknown:
            raise ParameterError(f"[sampling] has no key {unknown[0]!r}; its keys are "
                                 f"{', '.join(sorted(known))}")
        replicates = None
        if "replicate_weights" in section or "replicate_type" in section:
            if "replicate_type" not in section or "replicate_weights" not in section:
                raise ParameterError("[sampling] replicate_weights and replicate_type go "
                                     "together (e.g. replicate_weights = \"repw*\", "
                                     "replicate_type = \"JK1\")")
            given = section["replicate_weights"]
            is_pattern = isinstance(given, str)
            replicates = ReplicateWeights(
                type=section["replicate_type"], pattern=given if is_pattern else None,
                columns=() if is_pattern else given, scale=section.get("replicate_scale"),
                rscales=section.get("replicate_rscales"), rho=section.get("replicate_rho"),
                mse=bool(section.get("replicate_mse", False)),
                combined=bool(section.get("replicate_combined", True)))
        else:
            for key in known - {"weight", "strata", "clusters", "fpc", "population",
                                "lonely_psu", "nest"}:
                if key in section:
                    raise ParameterError(f"[sampling] {key} needs replicate_weights and "
                                         "replicate_type")
        return cls(weight=section.get("weight"), strata=section.get("strata"),
                   clusters=section.get("clusters") or (), fpc=section.get("fpc") or (),
                   population=section.get("population"),
                   lonely_psu=section.get("lonely_psu", "fail"), replicate_weights=replicates,
                   nest=section.get("nest", False))

    @property
    def stages(self) -> int:
        """Sampling stages declared by ``clusters`` (at least 1: respondents as PSUs)."""
        return max(1, len(self.clusters))

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the design reads, replicate columns given by name included."""
        names = [c for c in (self.weight, self.strata, *self.clusters, *self.fpc) if c]
        if self.replicate_weights is not None:
            names += list(self.replicate_weights.columns)
        return tuple(dict.fromkeys(names))

    def describe(self) -> str:
        """One line for reports."""
        parts = [f"weights {self.weight}" if self.weight else "equal weights"]
        if self.strata:
            parts.append(f"strata {self.strata}")
        if self.clusters:
            parts.append("clusters " + " > ".join(self.clusters))
        if self.fpc:
            parts.append("fpc " + ", ".join(self.fpc))
        if self.population:
            parts.append(f"population {self.population:g}")
        if self.replicate_weights is not None:
            r = self.replicate_weights
            parts.append(f"{r.type} replicate weights "
                         f"{r.pattern if r.pattern else ', '.join(r.columns)}")
        parts.append(f"lonely PSUs {self.lonely_psu}")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, object]:
        """The ``[sampling]`` keys, for JSON (keys without a value left out)."""
        out: dict[str, object] = {}
        if self.weight:
            out["weight"] = self.weight
        if self.strata:
            out["strata"] = self.strata
        if self.clusters:
            out["clusters"] = list(self.clusters)
        if self.fpc:
            out["fpc"] = list(self.fpc)
        if self.population is not None:
            out["population"] = self.population
        out["lonely_psu"] = self.lonely_psu
        if self.nest:
            out["nest"] = True
        r = self.replicate_weights
        if r is not None:
            out["replicate_weights"] = r.pattern if r.pattern else list(r.columns)
            out["replicate_type"] = r.type
            for key, value in (("replicate_scale", r.scale), ("replicate_rscales", r.rscales),
                               ("replicate_rho", r.rho)):
                if value is not None:
                    out[key] = list(value) if isinstance(value, tuple) else value
            if r.mse:
                out["replicate_mse"] = True
            if not r.combined:
                out["replicate_combined"] = False
        return out
