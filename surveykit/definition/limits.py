"""Sizes every layer agrees on: what a survey, a response file or a web form may hold, and
what the database's columns are made to hold. The store builds its columns from these; the
readers refuse longer values with the line and column before anything is written."""

from __future__ import annotations

__all__ = ["ANSWER_LENGTH", "AUDIT_MINIMUM_PER_GROUP", "CODE_LENGTH", "MAX_DIGITS",
           "RESPONDENT_ID_LENGTH"]

RESPONDENT_ID_LENGTH = 200
# Response labels of every design (yes, no, "3", category names, dont_know) fit in this.
ANSWER_LENGTH = 64
#: The most significant digits a stored number has (a float holds 15 exactly); numbers are
#: below 10^MAX_DIGITS in size, so sums in a float stay exact to the unit.
MAX_DIGITS = 15
# Instruction codes: truthful, opposite, dont_know, say:LABEL, innocuous, table:...
CODE_LENGTH = 200

#: The fewest respondents per form version (group) a ``generate`` run must have for its
#: instruction totals to be kept for the randomizer audit. Whoever compares copies of the
#: database from before and after a run reads that run's totals; from a run of n
#: respondents they tell each respondent's instruction only as the run's share n_i / n
#: (standard deviation sqrt(p_i (1 - p_i) / n) <= 0.071 around the design's p_i at n = 50;
#: an instruction of probability 0.2 is missing from the run with probability
#: 0.8^50 = 1.4e-5). A run of one would tell its respondent's instructions outright, so
#: smaller runs keep no totals and the report's audit covers only the larger ones.
#: docs/questionnaires.md ("Threat model") has the numbers and what 50 does not protect.
AUDIT_MINIMUM_PER_GROUP = 50
