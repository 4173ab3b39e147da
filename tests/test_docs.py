"""The examples in the documents and in the docstrings run, and print what they say.

As python-chess does: every ```pycon block of README.md and docs/*.md, and every `>>>`
example of a module docstring in companion/, is a doctest.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import companion
from conftest import REPO

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
_PYCON = re.compile(r"^```pycon\n(.*?)^```$", re.S | re.M)


def documents() -> list[Path]:
    return [p for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))] if _PYCON.search(p.read_text("utf-8"))]


def modules_with_examples() -> list[str]:
    names = [companion.__name__] + [m.name for m in pkgutil.walk_packages(companion.__path__, "companion.")
                                    if not m.name.endswith("__main__")]
    finder = doctest.DocTestFinder()
    found = []
    for name in names:
        if any(t.examples for t in finder.find(importlib.import_module(name))):
            found.append(name)
    return found


def test_the_documents_and_the_core_have_examples():
    assert {"game.md", "rules.md", "advisor.md"} <= {p.name for p in documents()}
    assert {"companion.dice", "companion.rules", "companion.game", "companion.advisor", "companion.seating"} <= set(
        modules_with_examples()
    )


@pytest.mark.parametrize("path", documents(), ids=lambda p: p.name)
def test_document_examples(path: Path):
    text = path.read_text("utf-8")
    # One session per document: a block may use what an earlier block defined.
    session = "\n".join(block.group(1) for block in _PYCON.finditer(text))
    test = doctest.DocTestParser().get_doctest(session, {}, path.name, str(path), 0)
    assert_passes(test)


@pytest.mark.parametrize("name", modules_with_examples())
def test_docstring_examples(name: str):
    for test in doctest.DocTestFinder().find(importlib.import_module(name)):
        assert_passes(test)


def assert_passes(test: doctest.DocTest) -> None:
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
