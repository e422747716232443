"""Sizes every layer agrees on: what a survey, a response file or a web form may hold, and
what the database's columns are made to hold. The store builds its columns from these; the
readers refuse longer values with the line and column before anything is written."""

from __future__ import annotations

__all__ = ["ANSWER_LENGTH", "CODE_LENGTH", "RESPONDENT_ID_LENGTH"]

RESPONDENT_ID_LENGTH = 200
# Response labels of every design (yes, no, "3", category names, dont_know) fit in this.
ANSWER_LENGTH = 64
# Instruction codes: truthful, opposite, dont_know, say:LABEL, innocuous, table:...
CODE_LENGTH = 200
