"""A survey's declared joint analyses as the report shows them (``[[joint]]``): their
numbers as text, Markdown and HTML lines, and the HTML plot.
"""

from __future__ import annotations

__all__ = ["PAIR_LINES"]

#: The named quantities of a yes/no pair, in the order they are shown, with their labels.
PAIR_LINES = (
    ("both", "{a} and {b}"),
    ("a_not_b", "{a}, not {b}"),
    ("b_not_a", "{b}, not {a}"),
    ("neither", "neither"),
    ("b_given_a", "{b} among {a}"),
    ("a_given_b", "{a} among {b}"),
    ("b_given_not_a", "{b} among not {a}"),
    ("odds_ratio", "odds ratio"),
    ("phi", "correlation (phi)"),
)
