"""Evidential mechanisms combined: composition (Lemmas 3.3, 3.15) and post-processing (3.4, 3.16).

A mechanism and its losses are a design's privacy map and live with the designs
(:mod:`surveykit.designs.evidential`); they are re-exported here, so that
``surveykit.privacy.evidential.EvidentialMechanism`` keeps working. Notation
follows Li, Zhou, Qin and Xu, *Local Differential Privacy for Belief Functions*
(``../shared/paper/paper.md``).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable

import numpy as np

from surveykit.designs.evidential import EvidentialMechanism, Semantics
from surveykit.errors import ParameterError

__all__ = ["EvidentialMechanism", "Semantics", "compose", "post_process"]


def compose(first: EvidentialMechanism, second: EvidentialMechanism) -> EvidentialMechanism:
    """The product mechanism Q_{1,2}(x) = (Q_1(x), Q_2(x)) (Lemmas 3.3 and 3.15).

    Both mechanisms see the same input (one respondent answering two
    questions). Outputs are pairs (y1, y2); focal sets are products E1 x E2
    with mass m1_x(E1) m2_x(E2). Privacy losses are at most the sum of the two.

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> gw = GeneralizedWarner(p=0.6, q=0.2).to_evidential()
    >>> round(compose(gw, gw).epsilon_shafer(), 4)  # 2 ln 3
    2.1972
    """
    if first.inputs != second.inputs:
        raise ParameterError(
            f"compose needs the same inputs: {list(first.inputs)!r} != {list(second.inputs)!r}"
        )
    outputs = tuple(itertools.product(first.outputs, second.outputs))
    focal_sets = tuple(
        frozenset(itertools.product(a, b))
        for a in first.focal_sets
        for b in second.focal_sets
    )
    masses = np.einsum("xi,xj->xij", first.masses, second.masses).reshape(len(first.inputs), -1)
    return EvidentialMechanism(
        inputs=first.inputs, outputs=outputs, focal_sets=focal_sets, masses=masses
    )


def post_process(
    mechanism: EvidentialMechanism, mapping: Callable[[Hashable], Hashable]
) -> EvidentialMechanism:
    """f o Q for a deterministic, data-independent map f: Y -> Z (Lemmas 3.4 and 3.16).

    A focal set E becomes its image f(E); masses of sets with the same image
    add up. Privacy losses never increase.

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> gw = GeneralizedWarner(p=0.6, q=0.2).to_evidential()
    >>> post_process(gw, lambda y: "answered").epsilon_shafer()
    0.0
    """
    images: dict[frozenset, int] = {}
    for s in mechanism.focal_sets:
        images.setdefault(frozenset(mapping(y) for y in s), len(images))
    masses = np.zeros((len(mechanism.inputs), len(images)))
    for j, s in enumerate(mechanism.focal_sets):
        masses[:, images[frozenset(mapping(y) for y in s)]] += mechanism.masses[:, j]
    outputs = tuple(dict.fromkeys(mapping(y) for y in mechanism.outputs))
    return EvidentialMechanism(
        inputs=mechanism.inputs, outputs=outputs, focal_sets=tuple(images), masses=masses
    )
