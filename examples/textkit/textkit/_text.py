"""Shared text helpers used across textkit's modules.

These are internal: they may change between releases without notice.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and strip both ends."""
    return " ".join(text.split())


def split_words(text: str) -> list[str]:
    """Split *text* on any run of whitespace; punctuation stays attached."""
    return text.split()


def word_tokens(text: str) -> list[str]:
    """Return the words of *text*: runs of letters and digits.

    Apostrophes inside a word are kept ("don't", "O'Neil"); underscores and
    all other punctuation separate words.
    """
    return _WORD.findall(text)


def split_sentences(text: str) -> list[str]:
    """Split *text* into sentences after ".", "!" or "?" followed by space.

    Whitespace inside each sentence is normalised; empty pieces are dropped.
    """
    pieces = _SENTENCE_END.split(text.strip())
    return [normalize_whitespace(p) for p in pieces if p.strip()]


def split_paragraphs(text: str) -> list[str]:
    """Split *text* at blank lines; each paragraph keeps its own line breaks."""
    return [p.strip("\n") for p in _BLANK_LINE.split(text) if p.strip()]


def to_ascii(text: str) -> str:
    """Decompose accented letters and drop every non-ASCII character."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def strip_accents(text: str) -> str:
    """Remove combining marks but keep other non-ASCII letters ("ß", "ø")."""
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


def char_width(ch: str) -> int:
    """Columns one character takes in a terminal: 0, 1 or 2.

    Combining marks and format characters (such as zero-width spaces) take
    none; control characters count as one, like every ASCII character.
    """
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Cf", "Mn"):
        return 0
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 2
    return 1


def display_width(text: str) -> int:
    """Columns *text* takes in a terminal: wide East Asian characters count 2."""
    if text.isascii():
        return len(text)
    return sum(char_width(ch) for ch in text)


def pad(text: str, width: int, how: str = "l") -> str:
    """Pad *text* to *width* display columns.

    "l" left-aligns, "r" right-aligns and "c" centres, exactly like
    str.ljust, str.rjust and str.center for ASCII text.
    """
    target = width - (display_width(text) - len(text))
    if how == "r":
        return text.rjust(target)
    if how == "c":
        return text.center(target)
    return text.ljust(target)
