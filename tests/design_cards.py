"""The numbers docs/designs.md shows for each design, rendered from the design itself.

``card(design)`` is a plain-text block: the matrix P(response | true state)
of every group (entries that depend on a nuisance parameter are written with
its name), what compliant respondents are told (exact probabilities), and the
privacy losses in Shafer's and Walley's semantics. tests/test_docs_designs.py
renders each card again and compares it with the page, so the page cannot
drift from the code. ``python tests/design_cards.py 'sld p=0.1667,0.8333'``
prints one.
"""

from __future__ import annotations

import math
import sys

from surveykit.designs import Design, make_design, parse_parameters


def build(spec: str) -> Design:
    """``'sld p=0.1667,0.8333 dont_know=0.2'`` -> the design (the CLI's KEY=VALUE forms)."""
    name, *pairs = spec.split()
    texts = dict(pair.split("=", 1) for pair in pairs)
    return make_design(name, **parse_parameters(name, texts))


def _number(value: float) -> str:
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _entry(base: float, slopes: list[tuple[float, str]]) -> str:
    """base + sum slope * name, e.g. '1 - t', '0.1667 + 0.8333 u'."""
    parts = [] if base == 0 and slopes else [_number(base)]
    for slope, name in slopes:
        size = abs(slope)
        term = name if math.isclose(size, 1) else f"{_number(size)} {name}"
        if not parts:
            parts.append(term if slope > 0 else f"-{term}")
        else:
            parts.append(f"{'+' if slope > 0 else '-'} {term}")
    return " ".join(parts)


def _probability(value) -> str:
    """An exact probability as a fraction where that is short, else a decimal."""
    return str(value) if value.denominator <= 10_000 else _number(float(value))


def _loss(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.4f}"


def card(design: Design, nuisance: list[float] | None = None) -> str:
    """The text block for ``design`` (module docstring); losses also at ``nuisance``."""
    s = design.structure
    names = [p.name for p in s.nuisance]
    lines = [design.describe()]
    for g, group in enumerate(s.groups):
        title = "P(response | true state)"
        if len(s.groups) > 1:
            title += f", group {group}"
        cells = [[_entry(float(s.base[g, r, c]),
                         [(float(s.slopes[j, g, r, c]), names[j]) for j in range(len(names))
                          if s.slopes[j, g, r, c] != 0])
                  for c in range(len(s.states))] for r in range(len(s.responses))]
        width = max(len(x) for row in cells for x in row + [*s.states])
        label_width = max(len(r) for r in s.responses)
        lines.append(f"{title}:")
        lines.append(" " * (label_width + 2) + "".join(f"  {c:>{width}}" for c in s.states))
        for response, row in zip(s.responses, cells, strict=True):
            lines.append(f"  {response:<{label_width}}" + "".join(f"  {x:>{width}}" for x in row))
    for g, group in enumerate(s.groups):
        where = f" (group {group})" if len(s.groups) > 1 else ""
        instructions = s.protocol.for_group(g)
        if s.protocol.kind == "per_state":
            told = (f"each respondent draws the answer for their own true state from its "
                    f"column ({len(instructions)} answer tables on slips)")
        else:
            told = ", ".join(f"{i.code} {_probability(i.probability)}" for i in instructions)
        lines.append(f"Told{where}, {s.protocol.kind}: {told}")
    shafer, walley = design.epsilon_shafer, design.epsilon_walley
    line = f"Privacy loss: Shafer {_loss(shafer)}, Walley {_loss(walley)}"
    if names:
        line += f" (worst case over {', '.join(names)} in [0, 1])"
    lines.append(line)
    if names and nuisance is not None:
        at = ", ".join(f"{n} = {_number(v)}" for n, v in zip(names, nuisance, strict=True))
        lines.append(f"  at {at}: Shafer {_loss(design.privacy_loss('shafer', nuisance))}, "
                     f"Walley {_loss(design.privacy_loss('walley', nuisance))}")
    return "\n".join(lines)


if __name__ == "__main__":
    for spec in sys.argv[1:]:
        design = build(spec)
        print(card(design, [0.8] * len(design.nuisance) if design.nuisance else None))
        print()
