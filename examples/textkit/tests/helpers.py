"""Small helpers shared by textkit's test files (not part of the library)."""

from __future__ import annotations

import textwrap
from typing import Hashable, Iterable


def block(text: str) -> str:
    """Dedent a triple-quoted expected value and drop its first and last newline.

    Lets tests write multi-line expectations indented with the test code.
    """
    text = textwrap.dedent(text)
    if text.startswith("\n"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-1]
    return text


def widths(text: str) -> list[int]:
    """Length of every line of *text*."""
    return [len(line) for line in text.splitlines()]


def all_distinct(items: Iterable[Hashable]) -> bool:
    """True when no item of *items* occurs twice."""
    seen = set()
    for item in items:
        if item in seen:
            return False
        seen.add(item)
    return True
