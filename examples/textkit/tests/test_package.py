"""The package's public surface: re-exports, __all__, version and module docs."""

import importlib
import sys
from pathlib import Path

import pytest

import textkit

MODULES = ["case", "dates", "diffing", "fuzzy", "humanize", "markdown", "roman", "slug", "stats",
           "table", "template", "toc", "wrap"]


def test_all_names_exist():
    for name in textkit.__all__:
        assert hasattr(textkit, name), name


def test_star_import_matches_all():
    namespace: dict = {}
    exec("from textkit import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(textkit.__all__)


def test_reexports_are_the_module_objects():
    from textkit import slug, stats, template, toc

    assert textkit.slugify is slug.slugify
    assert textkit.unique_slug is slug.unique_slug
    assert textkit.render is template.render
    assert textkit.TemplateError is template.TemplateError
    assert textkit.TextStats is stats.TextStats
    assert textkit.build_toc is toc.build_toc


def test_top_level_use():
    assert textkit.render("{{ t|slug }}", {"t": textkit.slugify("Hello World")}) == "hello-world"
    assert textkit.TextStats.from_text("One. Two.").sentences == 2


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_version_matches_pyproject():
    import tomllib

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    with open(pyproject, "rb") as f:
        assert tomllib.load(f)["project"]["version"] == textkit.__version__


@pytest.mark.parametrize("name", MODULES)
def test_module_has_docstring(name):
    module = importlib.import_module(f"textkit.{name}")
    assert module.__doc__ and module.__doc__.strip()
