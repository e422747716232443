"""Collection's Jinja2 environment: the shared one (:mod:`surveykit.templating`) with the
die tables' ``faces`` filter, and the default respondent-facing texts (``wording.json``).

The environment itself (strict, escaped, Markdown-safe, ``--templates`` first) is
:func:`surveykit.templating.make_environment`, which reports render with too; its names
are re-exported here for the questionnaires, the XLSForm and the web page.
"""

from __future__ import annotations

import json
from pathlib import Path

import jinja2

from surveykit import templating
from surveykit.collection.dice import format_faces as faces
from surveykit.definition.wording import check_wording_file
from surveykit.errors import ParameterError
from surveykit.templating import (
    FORMATS,
    TemplateRenderError,
    escape_markdown,
    get_template,
    percent,
    render_to,
)

__all__ = [
    "FORMATS",
    "TemplateRenderError",
    "escape_markdown",
    "faces",
    "get_template",
    "load_wording_defaults",
    "make_environment",
    "percent",
    "render_to",
]

_WORDING_FILE = "wording.json"


def make_environment(templates_dir: str | Path | None = None) -> jinja2.Environment:
    """The shared environment (:func:`surveykit.templating.make_environment`) with ``faces``.

    >>> make_environment().from_string("{{ (1, 4) | faces }}").render()
    '1–4'
    """
    return templating.make_environment(templates_dir, filters={"faces": faces})


def load_wording_defaults(environment: jinja2.Environment) -> dict[str, str]:
    """The default respondent-facing texts: ``wording.json`` next to the templates.

    A ``--templates`` folder may hold its own ``wording.json`` (e.g. a
    translation); it then replaces the shipped one as a whole. Its texts obey the
    rules of a survey file's ``[wording]``
    (:func:`surveykit.definition.wording.check_wording_file`).

    >>> load_wording_defaults(make_environment())["answer_yes"]
    'Yes'
    """
    source, filename, _ = environment.loader.get_source(environment, _WORDING_FILE)
    try:
        data = json.loads(source)
    except json.JSONDecodeError as exc:
        raise ParameterError(f"{filename}, line {exc.lineno}, column {exc.colno}: "
                             f"not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise ParameterError(f"{filename}: must be one JSON object of \"key\": \"text\" pairs")
    check_wording_file(data, source, filename)
    return data
