"""The one Jinja2 environment for questionnaires and reports: strict, escaped, with named filters.

* ``undefined=StrictUndefined``: a misspelled variable fails the render
  instead of printing nothing.
* Templates named ``*.html.j2`` are autoescaped for HTML.
* Templates named ``*.md.j2`` pass every ``{{ value }}`` through
  :func:`escape_markdown` (through the environment's ``finalize`` hook), so
  text a user typed (question text, titles, wording) cannot add emphasis,
  links, tables cells or raw HTML to the Markdown. Markup marked safe on
  purpose (``|safe``, a ``Markup`` value) is left alone.
* The loader looks in the user's ``--templates`` folder first and then in the
  templates shipped with surveykit, so a user may override one file only.

Templates do no arithmetic: they receive plain data and format it with the
filters registered here (``percent``; collection adds ``faces``,
:mod:`surveykit.collection.render`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

import jinja2
from markupsafe import Markup

from surveykit.errors import ParameterError, SurveykitError
from surveykit.resources import locate_resource

__all__ = [
    "FORMATS",
    "TemplateRenderError",
    "escape_markdown",
    "get_template",
    "make_environment",
    "percent",
    "render_to",
]

#: Output format -> file extension (and template suffix).
FORMATS: dict[str, str] = {"html": "html", "markdown": "md"}

# Characters with a meaning anywhere in a CommonMark line: escaped everywhere.
_MARKDOWN_INLINE = re.compile(r"([\\`*_{}\[\]<>|~&!])")
# Block markers that only matter at the start of a line: headings, quotes,
# list items ("-", "+", "1." or "1)"), thematic breaks and setext underlines.
_MARKDOWN_LINE_START = re.compile(r"^(\s*)([#>+\-=]|\d+(?=[.)]))")


class TemplateRenderError(SurveykitError):
    """A template failed while rendering (e.g. an undefined variable); names file and line."""


def escape_markdown(value: object) -> str:
    """Text that Markdown shows literally, on one line.

    Backslash-escapes the characters that start emphasis, code, links,
    tables, raw HTML and entities, and a block marker at the start; folds
    line breaks into spaces so text cannot end a table row or paragraph.

    >>> escape_markdown("*Did you* <b>cheat</b> | [x](y)?")
    '\\\\*Did you\\\\* \\\\<b\\\\>cheat\\\\</b\\\\> \\\\| \\\\[x\\\\](y)?'
    >>> escape_markdown("1. first")
    '1\\\\. first'
    """
    text = " ".join(str(value).split())
    text = _MARKDOWN_INLINE.sub(r"\\\1", text)
    match = _MARKDOWN_LINE_START.match(text)
    if match:
        marker = match.group(2)
        if marker[0].isdigit():
            # "1." -> "1\." : escape the punctuation after the number
            end = match.end()
            text = text[:end] + "\\" + text[end:]
        else:
            start = match.start(2)
            text = text[:start] + "\\" + text[start:]
    return text


_MARKDOWN_SUFFIXES = (".md.j2", ".md")


@jinja2.pass_context
def _finalize(context: jinja2.runtime.Context, value: object) -> object:
    # Runs for every {{ value }} of every page, hence the inline test.
    # HTML templates are autoescaped by Jinja itself after this hook.
    name = context.name
    if name is not None and name.endswith(_MARKDOWN_SUFFIXES) and not isinstance(value, Markup):
        return escape_markdown(value)
    return value


def _autoescape(name: str | None) -> bool:
    return name is not None and name.endswith((".html.j2", ".html"))


def percent(value: float, digits: int = 0) -> str:
    """A probability as a percentage: ``percent(0.6)`` -> ``'60%'``.

    >>> percent(0.125, 1)
    '12.5%'
    """
    return f"{100 * float(value):.{digits}f}%"


class _MemoryBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates kept for the life of the process, shared by every environment.

    Each ``make_environment`` call builds a fresh environment (a command may pass its own
    ``--templates``), and compiling the shipped templates took most of the CPU of
    ``survey add``'s readiness check. Jinja checks each entry against the template
    source's checksum before using it, so an edited template is compiled again. Every
    environment made here has the same options, which the compiled code depends on.
    """

    def __init__(self) -> None:
        self._compiled: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        compiled = self._compiled.get(bucket.key)
        if compiled is not None:
            bucket.bytecode_from_string(compiled)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._compiled[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _MemoryBytecodeCache()


def make_environment(templates_dir: str | Path | None = None, *,
                     filters: Mapping[str, Callable[..., object]] | None = None
                     ) -> jinja2.Environment:
    """The Jinja2 environment; ``templates_dir`` (``--templates``) is searched first.

    ``filters`` are added to ``percent`` (collection adds ``faces`` for the die tables).

    >>> env = make_environment()
    >>> env.from_string("{{ x }}").render(x="<b>")  # from_string: no name, no escaping
    '<b>'
    """
    search_path = [str(locate_resource("templates"))]
    if templates_dir is not None:
        user_dir = Path(templates_dir)
        if not user_dir.is_dir():
            raise ParameterError(
                f"--templates {str(templates_dir)!r} is not a folder; give a folder holding "
                "templates such as slips.html.j2 (copy them from surveykit's templates/)"
            )
        search_path.insert(0, str(user_dir))
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search_path),
        autoescape=_autoescape,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=_COMPILED,
    )
    environment.filters["percent"] = percent
    environment.filters.update(filters or {})
    return environment


def get_template(environment: jinja2.Environment, part: str, fmt: str) -> jinja2.Template:
    """The template ``{part}.{html|md}.j2`` for output format ``fmt`` (html, markdown)."""
    if fmt not in FORMATS:
        raise ParameterError(f"format ({fmt!r}) must be one of {', '.join(FORMATS)}")
    name = f"{part}.{FORMATS[fmt]}.j2"
    try:
        return environment.get_template(name)
    except jinja2.TemplateNotFound:
        raise ParameterError(f"template {name!r} not found in {environment.loader.searchpath}"
                             ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise ParameterError(
            f"{exc.filename or name}, line {exc.lineno}: template syntax error: {exc.message}"
        ) from None


def _template_location(exc: BaseException, fallback: str) -> str:
    # Jinja rewrites tracebacks so that template frames carry the template's file and line.
    where = fallback
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.endswith(".j2"):
            where = f"{filename}, line {tb.tb_lineno}"
        tb = tb.tb_next
    return where


def render_to(stream, template: jinja2.Template, context: dict) -> None:
    """Render ``template`` with ``context`` and write the text to ``stream``.

    One batch of pages is rendered as one string (a few MB for 500 pages):
    Jinja's streaming ``generate`` costs twice the time in tiny writes.

    Errors inside the template become :class:`TemplateRenderError` naming the
    template file and line, e.g. ``slips.html.j2, line 12: 'x' is undefined``.
    """
    try:
        text = template.render(context)
    except jinja2.TemplateError as exc:
        where = _template_location(exc, template.filename or str(template.name))
        raise TemplateRenderError(f"{where}: {exc.message or exc}") from None
    stream.write(text)
