"""The page's files (``templates/web/``) and the SHA-256 hashes an auditor checks.

The script that draws respondents' rules, ``survey.js``, is the same for
every survey (survey data reach it as JSON), so its hash identifies the code
respondents run for a given surveykit release. The page loads it with
Subresource Integrity (``integrity="sha256-..."``): a browser refuses a
script whose bytes do not match. ``surveykit serve --print-hash`` prints the
hash; the page footer shows it; ``sha256sum`` of the served file gives it in
hexadecimal.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from functools import cache, cached_property

from surveykit.resources import locate_resource

__all__ = ["SCRIPT", "STYLE", "Asset", "load_asset"]

SCRIPT = "survey.js"
STYLE = "survey.css"
_MEDIA_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


@dataclass(frozen=True)
class Asset:
    """A static file of the page, with its hashes (computed once: the page and every
    response's Content-Security-Policy carry the script's)."""

    name: str
    content: bytes
    media_type: str

    @cached_property
    def sha256(self) -> str:
        """Hexadecimal SHA-256, as ``sha256sum`` prints it."""
        return hashlib.sha256(self.content).hexdigest()

    @cached_property
    def integrity(self) -> str:
        """The Subresource Integrity value: ``sha256-`` and the base64 digest."""
        digest = hashlib.sha256(self.content).digest()
        return "sha256-" + base64.b64encode(digest).decode("ascii")


@cache
def load_asset(name: str) -> Asset:
    """The shipped file ``templates/web/NAME`` (``survey.js`` or ``survey.css``).

    >>> script = load_asset(SCRIPT)
    >>> script.integrity.startswith("sha256-"), len(script.sha256)
    (True, 64)
    """
    if name not in (SCRIPT, STYLE):
        raise ValueError(f"asset {name!r} must be {SCRIPT} or {STYLE}")
    path = locate_resource("templates") / "web" / name
    return Asset(name=name, content=path.read_bytes(),
                 media_type=_MEDIA_TYPES[path.suffix])
