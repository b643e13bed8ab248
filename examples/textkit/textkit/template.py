"""A tiny template renderer.

Tags look like ``{{ name }}``, ``{{ user.city }}`` or ``{{ name|strip|title }}``:
a dotted name looked up in the context, then filters applied left to right.
Filters take an optional argument after a colon: ``{{ n|plural:file }}``.
"""

from __future__ import annotations

import functools
import json
import os
import re
from typing import Any, Callable, Mapping

from textkit import case, humanize, roman
from textkit.slug import slugify
from textkit.wrap import fill

try:
    import tomllib  # Python 3.11+
except ImportError:  # pragma: no cover - older Pythons read JSON contexts only
    tomllib = None

_TAG = re.compile(r"\{\{\s*(.*?)\s*\}\}")

Filter = Callable[[Any, str], Any]
FILTERS: dict[str, Filter] = {}


class TemplateError(Exception):
    """Raised for an undefined variable or an unknown filter."""


def register_filter(name: str) -> Callable[[Filter], Filter]:
    """Decorator adding a filter ``func(value, arg)`` to FILTERS under *name*.

    *arg* is the text after the colon, "" when there is none. Registering a
    name twice raises ValueError.
    """
    def decorator(func: Filter) -> Filter:
        if name in FILTERS:
            raise ValueError(f"filter {name!r} is already registered")
        FILTERS[name] = func
        return func

    return decorator


def text_filter(func: Callable[[str], Any]) -> Filter:
    """Adapt a one-argument string function into a filter that ignores its argument."""
    @functools.wraps(func)
    def wrapper(value: Any, arg: str) -> Any:
        return func(str(value))

    return wrapper


def _int_arg(arg: str, default: int, name: str) -> int:
    """Parse a filter's numeric argument, with a TemplateError when it is not one."""
    if not arg:
        return default
    try:
        return int(arg)
    except ValueError:
        raise TemplateError(f"filter {name!r} needs a whole number, got {arg!r}") from None


register_filter("upper")(text_filter(str.upper))
register_filter("lower")(text_filter(str.lower))
register_filter("title")(text_filter(str.title))
register_filter("strip")(text_filter(str.strip))
register_filter("snake")(text_filter(case.snake_case))
register_filter("camel")(text_filter(case.camel_case))
register_filter("kebab")(text_filter(case.kebab_case))
register_filter("headline")(text_filter(case.title_case))
register_filter("slug")(text_filter(slugify))


@register_filter("length")
def _length(value: Any, arg: str) -> int:
    return len(value)


@register_filter("truncate")
def _truncate(value: Any, arg: str) -> str:
    limit = int(arg) if arg else 20
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


@register_filter("wrap")
def _wrap(value: Any, arg: str) -> str:
    return fill(str(value), _int_arg(arg, 70, "wrap"))


@register_filter("ordinal")
def _ordinal(value: Any, arg: str) -> str:
    return humanize.ordinal(int(value))


@register_filter("plural")
def _plural(value: Any, arg: str) -> str:
    """``{{ n|plural:file }}`` -> "3 files"; ``plural:person,folk`` overrides the plural."""
    word, _, form = arg.partition(",")
    if not word:
        raise TemplateError("filter 'plural' needs a word, e.g. plural:file")
    count = len(value) if isinstance(value, (list, tuple, dict, set)) else int(value)
    return humanize.plural(count, word, form or None)


@register_filter("filesize")
def _filesize(value: Any, arg: str) -> str:
    return humanize.filesize(int(value), binary=(arg == "binary"))


@register_filter("intcomma")
def _intcomma(value: Any, arg: str) -> str:
    return humanize.intcomma(value)


@register_filter("roman")
def _roman(value: Any, arg: str) -> str:
    text = roman.to_roman(int(value))
    return text.lower() if arg == "lower" else text


def lookup(context: Mapping[str, Any], dotted: str) -> Any:
    """Resolve a dotted name such as ``user.city`` against *context*.

    Each part is looked up as a mapping key first, then as an attribute.
    """
    value: Any = context
    for part in dotted.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif not isinstance(value, Mapping) and hasattr(value, part):
            value = getattr(value, part)
        else:
            raise TemplateError(f"undefined variable {dotted!r}")
    return value


def apply_filter(value: Any, spec: str) -> Any:
    """Apply one filter to *value*.

    *spec* is a filter name, optionally followed by a colon and an argument.
    Filters: upper, lower, title, strip, length, truncate:N, wrap:N, snake,
    camel, kebab, headline, slug, ordinal, plural:WORD[,PLURAL], filesize[:binary],
    intcomma, roman[:lower], and any added with register_filter.
    """
    name, _, arg = spec.partition(":")
    func = FILTERS.get(name.strip())
    if func is None:
        raise TemplateError(f"unknown filter {name!r}")
    return func(value, arg.strip())


def render(template: str, context: Mapping[str, Any]) -> str:
    """Replace every tag in *template* with its value from *context*."""

    def replace(match: re.Match[str]) -> str:
        name, *filters = [part.strip() for part in match.group(1).split("|")]
        value = lookup(context, name)
        for spec in filters:
            value = apply_filter(value, spec)
        return str(value)

    return _TAG.sub(replace, template)


def variables(template: str) -> list[str]:
    """The dotted names *template* uses, each once, in order of first use."""
    names: dict[str, None] = {}
    for match in _TAG.finditer(template):
        names.setdefault(match.group(1).split("|")[0].strip(), None)
    return list(names)


def load_context(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a rendering context from a ``.json`` or ``.toml`` file.

    TOML needs Python 3.11's tomllib; without it, or for any other suffix,
    TemplateError is raised. The file must hold a table / object.
    """
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix == ".json":
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    elif suffix == ".toml":
        if tomllib is None:
            raise TemplateError("reading TOML needs Python 3.11 or later")
        with open(path, "rb") as f:
            data = tomllib.load(f)
    else:
        raise TemplateError(f"unsupported context file {os.fspath(path)!r}: use .json or .toml")
    if not isinstance(data, dict):
        raise TemplateError(f"{os.fspath(path)!r} must hold an object, not {type(data).__name__}")
    return data
