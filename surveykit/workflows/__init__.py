"""Workflows: the one place that joins the store, the computation and files.

Each module is one thing a user does with a stored survey: ``report``
(a report from stored answers, files or a counts table), ``regress`` (a
regression on stored answers), ``generate`` (questionnaires written and issued),
``export`` (an XLSForm), ``counting`` (files counted against a stored survey),
``joint`` (several questions' answers together), ``demo`` (the end-to-end demo)
and ``readiness`` (is a survey ready for every command). The CLI calls these; the
packages below them (reporting, collection, counting, estimation, ...) never
import the store.
"""
