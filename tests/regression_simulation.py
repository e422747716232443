"""Simulated survey rows for the regression tests: covariates, true states from a known model,
randomized answers drawn from the design's matrix (the design is the only shared piece)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from surveykit.designs import Design


def category_probabilities(Z: np.ndarray, beta: np.ndarray, reference: int) -> np.ndarray:
    """Multinomial logit: beta (terms, categories - 1), reference category's log-odds 0."""
    logits = np.zeros((Z.shape[0], beta.shape[1] + 1))
    free = [c for c in range(beta.shape[1] + 1) if c != reference]
    logits[:, free] = Z @ beta
    q = np.exp(logits - logits.max(axis=1, keepdims=True))
    return q / q.sum(axis=1, keepdims=True)


def simulate_rows(design: Design, *, n: int, beta, rng: np.random.Generator,
                  nuisance=None, gamma: float = 0.0, direct_share: float = 0.0,
                  outcome: tuple[str, list[float], float] | None = None) -> pd.DataFrame:
    """Rows with covariates x1 ~ N(0, 1), x2 ~ Bernoulli(1/2), the randomized answer ``rrt``
    and the ``group``; the true category follows log-odds Z beta with Z = [1, x1, x2].

    ``outcome`` = (family, [b0, b_state, b_x1], sigma) adds ``y`` depending on the true answer
    (1 for yes) and x1. Behavioural states (the CDM's cheaters) have share ``gamma``.
    """
    s = design.structure
    beta = np.asarray(beta, dtype=float).reshape(3, -1)
    x1 = rng.normal(size=n)
    x2 = (rng.random(n) < 0.5).astype(float)
    Z = np.column_stack([np.ones(n), x1, x2])
    reference = s.categories.index("no") if design.is_binary else 0
    q = category_probabilities(Z, beta, reference)
    category = (rng.random(n)[:, None] > np.cumsum(q, axis=1)).sum(axis=1)
    category = np.minimum(category, len(s.categories) - 1)
    state = np.array([s.states.index(c) for c in s.categories])[category]
    behavioural = [j for j, name in enumerate(s.states) if name not in s.categories]
    if behavioural:
        state = np.where(rng.random(n) < gamma, behavioural[0], state)
    groups = len(s.groups)
    group = rng.integers(0, groups, size=n)
    direct = rng.random(n) < direct_share
    matrix = design.matrix(nuisance)
    cumulative = np.cumsum(matrix[group, :, state], axis=1)
    answer = (rng.random(n)[:, None] > cumulative).sum(axis=1)
    answer = np.minimum(answer, len(s.responses) - 1)
    labels = np.array(s.responses, dtype=object)[answer]
    labels[direct] = np.array(s.states, dtype=object)[state[direct]]
    frame = pd.DataFrame({"x1": x1, "x2": x2, "rrt": labels,
                          "group": np.where(direct, 0, group + 1)})
    if outcome is not None:
        family, b, sigma = outcome
        is_yes = (np.array(s.states)[state] == "yes").astype(float)
        linear = b[0] + b[1] * is_yes + b[2] * x1
        if family == "gaussian":
            frame["y"] = linear + sigma * rng.normal(size=n)
        else:
            frame["y"] = (rng.random(n) < 1 / (1 + np.exp(-linear))).astype(int)
    return frame
