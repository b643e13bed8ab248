"""Greedy word wrapping, indentation and paragraphs."""

from __future__ import annotations

from typing import Callable

from textkit._text import normalize_whitespace, split_paragraphs, split_words


def wrap(text: str, width: int = 70, break_long_words: bool = True) -> list[str]:
    """Wrap *text* into lines of at most *width* characters.

    Runs of whitespace collapse to one space and lines are filled greedily.
    A word longer than *width* is cut into *width*-sized pieces, unless
    *break_long_words* is false: then it stands alone on an over-long line.
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines: list[str] = []
    current = ""
    for word in split_words(text):
        pieces = [word]
        if break_long_words and len(word) > width:
            pieces = [word[i:i + width] for i in range(0, len(word), width)]
        for piece in pieces:
            if not current:
                current = piece
            elif len(current) + 1 + len(piece) <= width:
                current += " " + piece
            else:
                lines.append(current)
                current = piece
    if current:
        lines.append(current)
    return lines


def fill(text: str, width: int = 70, indent: str = "") -> str:
    """Wrap *text* and join the lines with newlines.

    Every line starts with *indent*, which counts towards *width*.
    """
    return "\n".join(indent + line for line in wrap(text, width - len(indent)))


def shorten(text: str, width: int, placeholder: str = "...") -> str:
    """Collapse whitespace and cut *text* at a word boundary to fit *width*.

    When the text does not fit, as many whole words as fit are kept and
    *placeholder* is appended; the result, placeholder included, is at most
    *width* characters long.
    """
    words = split_words(text)
    joined = " ".join(words)
    if len(joined) <= width:
        return joined
    kept: list[str] = []
    for word in words:
        if len(" ".join(kept + [word])) + len(placeholder) > width:
            break
        kept.append(word)
    return (" ".join(kept) + placeholder)[:width]


def indent(text: str, prefix: str, predicate: Callable[[str], bool] | None = None) -> str:
    """Add *prefix* to the lines of *text* for which *predicate* is true.

    By default every line that is not blank gets the prefix. Line endings
    are kept.
    """
    if predicate is None:
        def predicate(line: str) -> bool:
            return bool(line.strip())
    return "".join(prefix + line if predicate(line) else line for line in text.splitlines(keepends=True))


def dedent(text: str) -> str:
    """Remove the longest whitespace prefix shared by all non-blank lines.

    Blank lines are emptied. Tabs and spaces are compared literally.
    """
    lines = text.split("\n")
    margins = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    if not margins:
        return "\n".join("" for _ in lines)
    common = margins[0]
    for margin in margins[1:]:
        while not margin.startswith(common):
            common = common[:-1]
    return "\n".join(line[len(common):] if line.strip() else "" for line in lines)


def hanging_indent(text: str, width: int, first: str, rest: str | None = None) -> str:
    """Fill *text* with *first* before the first line and *rest* before the others.

    *rest* defaults to as many spaces as *first* is long, which lines the
    text up after a label such as ``"Note: "`` or ``"- "``.
    """
    if rest is None:
        rest = " " * len(first)
    inner = width - max(len(first), len(rest))
    lines = wrap(text, inner)
    return "\n".join((first if i == 0 else rest) + line for i, line in enumerate(lines))


def wrap_paragraphs(text: str, width: int = 70) -> str:
    """Fill every paragraph of *text* on its own, keeping one blank line between them."""
    return "\n\n".join(fill(normalize_whitespace(p), width) for p in split_paragraphs(text))
