"""Greedy word wrapping."""

from __future__ import annotations


def _words(text: str) -> list[str]:
    """Split *text* on any run of whitespace."""
    return text.split()


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
    for word in _words(text):
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
    words = _words(text)
    joined = " ".join(words)
    if len(joined) <= width:
        return joined
    kept: list[str] = []
    for word in words:
        if len(" ".join(kept + [word])) + len(placeholder) > width:
            break
        kept.append(word)
    return (" ".join(kept) + placeholder)[:width]
