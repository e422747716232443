"""Where the shipped folders (migrations/, templates/, sample_data/) are found.

In a built wheel they sit inside the package (mapped there by the build
backend); in a source checkout or an editable install they sit at the top of
the repository, next to the package.
"""

from importlib import resources
from pathlib import Path


def locate_resource(name: str) -> Path:
    """Return the directory of the shipped folder ``name``.

    >>> locate_resource("templates").is_dir()
    True
    """
    inside = Path(str(resources.files("surveykit"))) / name
    if inside.is_dir():
        return inside
    beside = Path(__file__).resolve().parent.parent / name
    if beside.is_dir():
        return beside
    raise FileNotFoundError(
        f"surveykit's {name}/ folder is missing from {inside} and {beside}: reinstall surveykit"
    )
