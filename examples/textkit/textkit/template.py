"""A tiny template renderer.

Tags look like ``{{ name }}``, ``{{ user.city }}`` or ``{{ name|strip|title }}``:
a dotted name looked up in the context, then filters applied left to right.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

_TAG = re.compile(r"\{\{\s*(.*?)\s*\}\}")


class TemplateError(Exception):
    """Raised for an undefined variable or an unknown filter."""


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
    Filters: upper, lower, title, strip, length, truncate:N.
    """
    name, _, arg = spec.partition(":")
    if name == "upper":
        return str(value).upper()
    if name == "lower":
        return str(value).lower()
    if name == "title":
        return str(value).title()
    if name == "strip":
        return str(value).strip()
    if name == "length":
        return len(value)
    if name == "truncate":
        limit = int(arg) if arg else 20
        text = str(value)
        return text if len(text) <= limit else text[:limit] + "..."
    raise TemplateError(f"unknown filter {name!r}")


def render(template: str, context: Mapping[str, Any]) -> str:
    """Replace every tag in *template* with its value from *context*."""

    def replace(match: re.Match[str]) -> str:
        name, *filters = [part.strip() for part in match.group(1).split("|")]
        value = lookup(context, name)
        for spec in filters:
            value = apply_filter(value, spec)
        return str(value)

    return _TAG.sub(replace, template)
