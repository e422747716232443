"""Correlations of randomized answers with each other and with ordinary variables (RRreg's
``RRcor``).

Fox and Tracy (1984, Social Science Research 13) read a yes/no design as
measurement error that is independent of everything else: a respondent in
group g answers their true state x with probability pt_g and otherwise draws
from a masking distribution y with mean y_g, so that

    P(yes | yes, g) - P(yes | no, g) = pt_g,   P(yes | no, g) = (1 - pt_g) y_g,

which holds for every yes/no design (Warner, forced response, unrelated
question, crosswise, triangular, Kuk, Mangat, the SLD at its honesty t, ...):
pt_g and y_g follow from the design's matrix at the estimated nuisance
values, and reproduce RRreg's per-model table (R/RRcor.models.R: p.truth,
y.mean). Then, per group, x_hat = (z - (1 - pt) y) / pt is an unbiased
stand-in for x, its correlation with any other variable is attenuated by the
masking noise, and RRcor corrects it:

    r = r_obs sqrt((1 + q_i)(1 + q_k)),
    q = ((1 - pt) / pt) (v_x + v_y / pt + (m_x - m_y)^2) / v_x,

with m_x = pi and v_x = pi (1 - pi) from the design's estimate (RRreg's
``get.quotient``). Two-group designs correlate within each combination of
groups and average with weights n_gg / ((1 + q_i)(1 + q_k)) (RRreg weights by
the last variable's q, a slip in R/RRcor.R that matters only when two
two-group variables meet; here each pair's own). The standard error is
RRcor's non-parametric bootstrap (rows drawn with replacement, everything
re-estimated), from a seeded generator.

Differences from RRcor: the prevalence and nuisance estimates are maximum
likelihood on the parameter space (RRcor's default, ``MLest = FALSE``, takes
the unconstrained moment estimate; the two agree whenever it lies inside),
and "don't know" answers (designs with the branch) leave the respondent out.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from surveykit.designs.base import DONT_KNOW, YES, Design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.answers import code_answers, value_text
from surveykit.estimation.estimate import fit_counts
from surveykit.vocabulary import BUILTIN_SPELLINGS, canonical_spelling

__all__ = ["Correlation", "CorrelationResult", "correlate"]


@dataclass(frozen=True)
class Correlation:
    """The corrected correlation of ``x`` and ``y`` and its bootstrap standard error (None
    without a bootstrap)."""

    x: str
    y: str
    r: float
    se: float | None

    def to_dict(self) -> dict[str, object]:
        return {"x": self.x, "y": self.y, "r": self.r, "se": self.se}


@dataclass(frozen=True, kw_only=True)
class CorrelationResult:
    """Every pair with a randomized variable in it, the respondents used, and the designs'
    estimates (prevalence and nuisance values) the correction used."""

    pairs: tuple[Correlation, ...]
    n: int
    bootstrap: int
    failed_replicates: int
    estimates: Mapping[str, Mapping[str, float]]
    left_out: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"pairs": [p.to_dict() for p in self.pairs], "n": self.n,
                "bootstrap": self.bootstrap, "failed_replicates": self.failed_replicates,
                "estimates": {k: dict(v) for k, v in self.estimates.items()},
                "left_out": dict(self.left_out)}


@dataclass(frozen=True, eq=False)
class _Randomized:
    """A randomized yes/no variable: answers (1 yes, 0 no) and 0-based groups."""

    name: str
    design: Design
    z: np.ndarray
    groups: np.ndarray


def _numeric(frame: pd.DataFrame, column: str) -> np.ndarray:
    """An ordinary variable: numbers, or yes/no answers as 1/0."""
    values = frame[column]
    try:
        return values.to_numpy(dtype=float)
    except (TypeError, ValueError):
        pass
    out = np.empty(len(values))
    for i, value in enumerate(values):
        answer = BUILTIN_SPELLINGS.get(canonical_spelling(value_text(value)))
        if answer in ("yes", "no"):
            out[i] = 1.0 if answer == "yes" else 0.0
        else:
            raise ParameterError(f"column {column!r} holds {value_text(value)!r}: an ordinary "
                                 "variable must hold numbers or yes/no answers")
    return out


def _correction(variable: _Randomized, rows: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """x_hat of ``rows`` and each group's q, from the design fitted on those rows."""
    design = variable.design
    groups = len(design.group_names)
    z, g = variable.z[rows], variable.groups[rows]
    counts = np.zeros((groups, len(design.response_labels)), dtype=np.int64)
    np.add.at(counts, (g, np.where(z == 1, 0, 1)), 1)
    fit = fit_counts(design, counts)
    pi = fit.share(YES)
    matrix = design.matrix(list(fit.nuisance) if design.nuisance else None)
    yes, no = design.state_labels.index(YES), design.state_labels.index("no")
    answered = 1.0 - matrix[:, -1, yes]              # the don't-know branch scales both
    a, b = matrix[:, 0, yes] / answered, matrix[:, 0, no] / answered
    truth = a - b
    if np.any(truth == 0):
        raise EstimationError(f"the answers to {variable.name!r} say nothing about the truth "
                              "in some group (pt = 0)")
    # the masking distribution's mean (irrelevant, 0, where every answer is the truth)
    mask = np.divide(b, 1 - truth, out=np.zeros_like(b), where=truth < 1)
    x_var = pi * (1 - pi)
    if x_var <= 0:
        raise EstimationError(f"the estimated share of {variable.name!r} is {pi:g}: a variable "
                              "without variance has no correlation")
    mask_var = mask * (1 - mask)
    noise = (1 - truth) / truth * (x_var + mask_var / truth + (pi - mask) ** 2)
    x_hat = (z - (1 - truth[g]) * mask[g]) / truth[g]
    estimates = {"pi": float(pi), **{p.name: float(v) for p, v in
                                     zip(design.nuisance, fit.nuisance, strict=True)}}
    return x_hat, noise / x_var, estimates


def _pair_r(x_i: np.ndarray, g_i: np.ndarray, q_i: np.ndarray, x_k: np.ndarray,
            g_k: np.ndarray, q_k: np.ndarray) -> float:
    """RRcor's weighted, corrected correlation over the group combinations that occur."""
    total, weights = 0.0, 0.0
    for gi, gk in sorted(set(zip(g_i.tolist(), g_k.tolist(), strict=True))):
        sel = (g_i == gi) & (g_k == gk)
        inflation = (1 + q_i[gi]) * (1 + q_k[gk])
        weight = sel.sum() / inflation
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = np.corrcoef(x_i[sel], x_k[sel])[0, 1]
        total += weight * observed * math.sqrt(inflation)
        weights += weight
    return float(np.clip(total / weights, -1.0, 1.0))


def _all_pairs(randomized: list[_Randomized], ordinary: dict[str, np.ndarray], rows: np.ndarray
               ) -> tuple[list[tuple[str, str, float]], dict[str, dict[str, float]]]:
    variables: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    estimates = {}
    for variable in randomized:
        x_hat, q, estimates[variable.name] = _correction(variable, rows)
        variables[variable.name] = (x_hat, variable.groups[rows], q)
    for name, values in ordinary.items():
        variables[name] = (values[rows], np.zeros(rows.size, dtype=np.intp), np.zeros(1))
    names = [v.name for v in randomized] + list(ordinary)
    out = []
    for x, y in itertools.combinations(names, 2):
        if x in ordinary and y in ordinary:
            continue
        out.append((x, y, _pair_r(*variables[x], *variables[y])))
    return out, estimates


def correlate(data: pd.DataFrame, sensitive: Mapping[str, Design],
              with_columns: Sequence[str] = (), *, groups: Mapping[str, str] | None = None,
              bootstrap: int = 0, rng: np.random.Generator | None = None,
              progress: Callable[[int], None] | None = None) -> CorrelationResult:
    """Corrected correlations of the randomized columns ``sensitive`` (column -> its yes/no
    design) with each other and with the ordinary columns ``with_columns`` (numbers, or
    yes/no as 1/0), as RRreg's ``RRcor``; ``bootstrap`` replicates (rows drawn with
    replacement by ``rng``) give the standard errors. ``groups`` maps a randomized column
    to its group column (two-group designs). Rows missing a value, or answering "don't
    know", are left out.

    >>> from surveykit.designs import make_design
    >>> rng = np.random.default_rng(1)
    >>> truth = rng.random(4000) < 0.4
    >>> age = rng.normal(size=4000) + truth
    >>> answer = np.where(rng.random(4000) < 0.8, truth, ~truth)
    >>> frame = pd.DataFrame({"rrt": np.where(answer, "yes", "no"), "age": age})
    >>> result = correlate(frame, {"rrt": make_design("warner", p=0.8)}, ["age"])
    >>> round(result.pairs[0].r, 2), round(float(np.corrcoef(truth, age)[0, 1]), 2)
    (0.4, 0.43)
    """
    if not isinstance(data, pd.DataFrame):
        raise ParameterError(f"data must be a pandas DataFrame, not {type(data).__name__}")
    if not isinstance(sensitive, Mapping) or not sensitive:
        raise ParameterError("sensitive must map at least one randomized column to its design")
    groups = dict(groups or {})
    columns = [str(c) for c in data.columns]
    with_columns = [str(c) for c in with_columns]
    names = list(sensitive) + with_columns
    if len(set(names)) != len(names):
        raise ParameterError(f"columns ({', '.join(names)}) must be distinct")
    if len(names) < 2:
        raise ParameterError("give at least two variables: a randomized column and another "
                             "(--with COLUMN)")
    for name in [*names, *groups.values()]:
        if name not in columns:
            raise ParameterError(f"column {name!r} is not in the data; the columns are "
                                 f"{', '.join(columns[:30])}")
    for name, design in sensitive.items():
        if not isinstance(design, Design):
            raise ParameterError(f"the design of {name!r} ({design!r}) must be a design")
        s = design.structure
        if not design.is_binary or s.states != s.categories:
            raise ParameterError(
                f"column {name!r}: design {design.model!r} is not a yes/no design whose states "
                "are its answers; correlations take yes/no designs (RRcor's)")
    bootstrap = _whole("bootstrap", bootstrap)
    if bootstrap and not isinstance(rng, np.random.Generator):
        raise ParameterError("a bootstrap needs rng, a numpy Generator, e.g. "
                             "numpy.random.default_rng(seed)")
    used = names + [groups[n] for n in sensitive if n in groups]
    complete = data[used].notna().all(axis=1).to_numpy()
    left_out: dict[str, int] = {}
    if (~complete).any():
        left_out["missing values"] = int((~complete).sum())
    frame = data.loc[complete]
    randomized, keep = [], np.ones(len(frame), dtype=bool)
    for name, design in sensitive.items():
        coded = code_answers(design, frame[name],
                             frame[groups[name]] if name in groups else None, column=name,
                             group_column=groups.get(name, "group"))
        if len(coded.group_labels) > len(design.group_names):
            raise ParameterError(f"column {name!r}: respondents asked directly (group 0) are "
                                 "not part of a correlation; leave those rows out")
        z = np.full(len(frame), -1)
        z[coded.kept] = np.where(coded.responses == 0, 1, 0)
        dk = coded.responses == design.response_labels.index(DONT_KNOW)
        z_kept = z[coded.kept]
        z_kept[dk] = -1
        z[coded.kept] = z_kept
        g = np.zeros(len(frame), dtype=np.intp)
        g[coded.kept] = coded.groups
        dropped = int((z < 0).sum())
        if dropped:
            left_out[f"{name}: don't know"] = dropped
        keep &= z >= 0
        randomized.append(_Randomized(name, design, z, g))
    ordinary = {name: _numeric(frame, name) for name in with_columns}
    rows = np.nonzero(keep)[0]
    if rows.size < 3:
        raise EstimationError(f"too few complete rows ({rows.size}) for a correlation")
    point, estimates = _all_pairs(randomized, ordinary, rows)
    failed = 0
    samples: list[list[float]] = []
    for _ in range(bootstrap):
        drawn = rows[rng.integers(0, rows.size, size=rows.size)]
        try:
            replicate, _ = _all_pairs(randomized, ordinary, drawn)
        except EstimationError:
            failed += 1
        else:
            samples.append([r for _, _, r in replicate])
        if progress is not None:
            progress(1)
    ses = [None] * len(point)
    if len(samples) >= 2:
        # sd with divisor B - 1, as RRcor's apply(..., sd)
        ses = [float(v) for v in np.std(np.array(samples), axis=0, ddof=1)]
    pairs = tuple(Correlation(x, y, r, se) for (x, y, r), se in zip(point, ses, strict=True))
    return CorrelationResult(pairs=pairs, n=int(rows.size), bootstrap=bootstrap,
                             failed_replicates=failed, estimates=estimates, left_out=left_out)


def _whole(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ParameterError(f"{name} ({value!r}) must be a whole number of replicates, 0 or "
                             "more")
    return int(value)
