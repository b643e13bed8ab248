"""Case conversions for identifiers and headlines.

>>> snake_case("parseHTTPResponse")
'parse_http_response'
>>> title_case("the lord of the rings")
'The Lord of the Rings'
"""

from __future__ import annotations

import re

from textkit._text import normalize_whitespace, strip_accents

__all__ = [
    "SMALL_WORDS",
    "split_identifier",
    "snake_case",
    "kebab_case",
    "constant_case",
    "camel_case",
    "pascal_case",
    "title_case",
]

#: Words that title_case keeps lowercase unless they start or end the title.
SMALL_WORDS = frozenset(
    "a an and as at but by en for if in nor of on or per the to v vs via".split()
)

_SEPARATORS = re.compile(r"[^0-9A-Za-z]+")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def split_identifier(text: str) -> list[str]:
    """Split an identifier or phrase into its words.

    Separators (spaces, "_", "-", ".", ...) split words, and so do case
    changes: ``"parseHTTPResponse2"`` gives ``["parse", "HTTP", "Response",
    "2"]``. Accents are stripped first; other non-ASCII letters are dropped.
    """
    words: list[str] = []
    for chunk in _SEPARATORS.split(strip_accents(text)):
        words.extend(_PARTS.findall(chunk))
    return words


def snake_case(text: str) -> str:
    """``"Parse HTTP response"`` -> ``"parse_http_response"``."""
    return "_".join(word.lower() for word in split_identifier(text))


def kebab_case(text: str) -> str:
    """``"parseHttpResponse"`` -> ``"parse-http-response"``."""
    return "-".join(word.lower() for word in split_identifier(text))


def constant_case(text: str) -> str:
    """``"max retries"`` -> ``"MAX_RETRIES"``."""
    return "_".join(word.upper() for word in split_identifier(text))


def camel_case(text: str) -> str:
    """``"parse_http_response"`` -> ``"parseHttpResponse"``.

    Acronyms are not preserved: every word but the first is capitalised.
    """
    words = split_identifier(text)
    if not words:
        return ""
    return words[0].lower() + "".join(word.capitalize() for word in words[1:])


def pascal_case(text: str) -> str:
    """``"parse_http_response"`` -> ``"ParseHttpResponse"``."""
    return "".join(word.capitalize() for word in split_identifier(text))


def _capitalize_word(word: str) -> str:
    """Capitalise the first letter of *word* unless it has capitals already."""
    if any(ch.isupper() for ch in word):
        return word  # "iPhone", "NASA", "McDonald" stay as written
    for i, ch in enumerate(word):
        if ch.isalpha():
            return word[:i] + ch.upper() + word[i + 1:]
    return word


def title_case(text: str, small_words: frozenset[str] = SMALL_WORDS) -> str:
    """Capitalise *text* as a headline.

    Every word is capitalised except *small_words*, which stay lowercase
    unless they are the first or the last word. Words already containing a
    capital letter are kept as written; each part of a hyphenated word is
    treated as a word. Whitespace is normalised.
    """
    words = normalize_whitespace(text).split(" ")
    if words == [""]:
        return ""
    out = []
    last = len(words) - 1
    for i, word in enumerate(words):
        parts = word.split("-")
        converted = []
        for k, part in enumerate(parts):
            bare = part.strip("\"'([{").lower()
            edge = (i == 0 and k == 0) or (i == last and k == len(parts) - 1)
            if not edge and bare in small_words and not any(ch.isupper() for ch in part):
                converted.append(part.lower())
            else:
                converted.append(_capitalize_word(part))
        out.append("-".join(converted))
    return " ".join(out)
