"""surveykit's guides (the Markdown files of docs/), shipped inside the package as docs/.

Messages and ``--help`` texts point to a guide as ``surveykit docs TOPIC``
(:func:`docs_hint`), which works in an installed copy as in a checkout, never
to a repository path such as ``docs/questionnaires.md``.
"""

from __future__ import annotations

from pathlib import Path

from surveykit.errors import ParameterError
from surveykit.resources import locate_resource

__all__ = ["TOPICS", "docs_hint", "guide_path", "guide_text"]

#: Topic -> what the guide explains (its file is docs/TOPIC.md).
TOPICS: dict[str, str] = {
    "designs": "every design (RRreg's names): matrices, parameters, privacy, estimates",
    "questionnaires": "generate: modes, instructions, groups, key files, wording, templates",
    "field-collection": "export xlsform: ODK, KoboToolbox, Enketo; what is private where",
    "field-imports": "import: field exports, the [import] profile, dry runs, survey update",
    "web-collection": "serve: web collection, TLS, deployment",
    "estimation": "estimate and report: the estimate, the variance, intervals, coverage",
    "scale": "counts --data and counts tables: files counted where they lie, DuckDB, Dask",
    "numeric-questions": "numeric questions (income, partners): scrambled and mixture "
                         "designs from the survey file to the report",
    "regression": "regress: randomized-response regression on covariates",
    "power": "power: the power of a test, the respondents it needs, simulated power",
    "joint": "joint analysis of several questions, and correlate (RRcor)",
    "complex-samples": "weights, strata, clusters, fpc, replicate weights: design-based "
                       "estimates, variances, domains and regression",
    "store": "the database: tables, versions, write paths",
    "security": "who is trusted with what; what every surface accepts and how it is tested",
    "from-r": "RRreg and rr calls beside surveykit's, and what differs by how much",
    "survey-file": "every key of the survey file (TOML), and its JSON Schema (surveykit schema)",
    "architecture": "the code's map: each package's job, the import layers, where to add",
    "errata": "where surveykit departs from the paper, and why",
    "reproduction": "reproduce: the paper's figures and the verification table",
}


def docs_hint(topic: str) -> str:
    """How a message points to a guide.

    >>> docs_hint("questionnaires")
    "'surveykit docs questionnaires'"
    """
    if topic not in TOPICS:
        raise ParameterError(f"no guide {topic!r}; guides are {', '.join(TOPICS)}")
    return f"'surveykit docs {topic}'"


def guide_path(topic: str) -> Path:
    """The Markdown file of ``topic`` (in the package, or docs/ of a checkout)."""
    if topic not in TOPICS:
        raise ParameterError(f"no guide {topic!r}: the guides are {', '.join(TOPICS)} "
                             "('surveykit docs' lists them)")
    return locate_resource("docs") / f"{topic}.md"


def guide_text(topic: str) -> str:
    """The text of the guide ``topic``.

    >>> guide_text("questionnaires").splitlines()[0]
    '# Questionnaires'
    """
    return guide_path(topic).read_text(encoding="utf-8")
