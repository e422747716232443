"""The survey file's arrays of tables (``[[models]]``, ``[[joint]]``): a list of tables, each
with known keys, named in errors by its place (``models[0].formula``).

This module is pure: it reads parsed TOML and imports nothing from storage or the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator

from surveykit.errors import allowed_keys

__all__ = ["table_entries"]


def table_entries(value: object, key: str, keys: Collection[str], example: str,
                  fail: Callable[[str, str], Exception]) -> Iterator[tuple[str, dict]]:
    """The entries of the array of tables ``key``, each with its place ``key[i]``, read one
    by one: a ``value`` that is not a list of tables is refused at once (``example`` shows
    an entry's first line), an entry's first unknown key when the entry is reached.

    >>> def fail(where, message):
    ...     return ValueError(f"{where}: {message}")
    >>> [where for where, _ in table_entries([{"title": "x"}], "joint", {"title"}, "", fail)]
    ['joint[0]']
    >>> next(table_entries([{"titel": "x"}], "joint", {"title"}, "", fail))
    Traceback (most recent call last):
    ...
    ValueError: joint[0].titel: unknown key, did you mean 'title'? Allowed keys are title
    """
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise fail(key, f"must be tables: [[{key}]] with {example}")
    return _entries(value, key, keys, fail)


def _entries(value: list[dict], key: str, keys: Collection[str],
             fail: Callable[[str, str], Exception]) -> Iterator[tuple[str, dict]]:
    for index, entry in enumerate(value):
        where = f"{key}[{index}]"
        unknown = sorted(set(entry) - set(keys))
        if unknown:
            raise fail(f"{where}.{unknown[0]}", f"unknown key{allowed_keys(unknown[0], keys)}")
        yield where, entry
