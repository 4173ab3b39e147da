"""Where the installed package keeps its page and its models.

The page (`web/`) and the models (`models/`) keep their own top-level folders in the
repository and ship inside the package as `companion.web` and `companion.models`
(pyproject.toml maps them), so an editable install and a wheel find them the same way.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def web_dir() -> Path:
    """The page: `templates/index.html` and `static/` (its CSS and JavaScript modules)."""
    return _package_dir("companion.web")


def models_dir() -> Path:
    """The shipped ONNX models, their calibration and the model card."""
    return _package_dir("companion.models")


def _package_dir(package: str) -> Path:
    try:
        root = resources.files(package)
    except ModuleNotFoundError:
        raise RuntimeError(
            f"{package} is missing: install the project (pip install -e . in a checkout, or pip install .)"
        ) from None
    # Flask serves files from a folder, so the package must be installed as files, not zipped.
    if not isinstance(root, Path):
        raise RuntimeError(f"{package} is not a folder on disk ({root}): install the package unzipped")
    return root
