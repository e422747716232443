"""The compiled-template cache shared by every environment (surveykit.templating)."""

from __future__ import annotations

from pathlib import Path

from surveykit.templating import get_template, make_environment


def _render(folder: Path) -> str:
    return get_template(make_environment(folder), "slips", "html").render()


def test_an_edited_template_is_compiled_again(tmp_path: Path) -> None:
    """Why: environments share compiled templates; a user who edits a template between two
    runs in one process (a notebook) must get the edit, even within the same second."""
    (tmp_path / "slips.html.j2").write_text("first {{ 1 + 1 }}", encoding="utf-8")
    assert _render(tmp_path) == "first 2"
    (tmp_path / "slips.html.j2").write_text("second {{ 2 + 2 }}", encoding="utf-8")
    assert _render(tmp_path) == "second 4"


def test_templates_of_the_same_name_in_two_folders_stay_apart(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, text in ((one, "one"), (two, "two")):
        folder.mkdir()
        (folder / "slips.html.j2").write_text(text, encoding="utf-8")
    assert [_render(one), _render(two), _render(one)] == ["one", "two", "one"]


def test_cached_templates_escape_as_freshly_compiled_ones(tmp_path: Path) -> None:
    """Escaping is compiled into the template (autoescape for HTML, the finalize hook for
    Markdown): the copy a second environment takes from the cache must escape too."""
    (tmp_path / "slips.html.j2").write_text("{{ v }}", encoding="utf-8")
    (tmp_path / "slips.md.j2").write_text("{{ v }}", encoding="utf-8")
    hostile = "<b>*x*</b>"
    for _ in range(2):
        environment = make_environment(tmp_path)
        assert get_template(environment, "slips", "html").render(v=hostile) == (
            "&lt;b&gt;*x*&lt;/b&gt;")
        assert get_template(environment, "slips", "markdown").render(v=hostile) == (
            "\\<b\\>\\*x\\*\\</b\\>")
