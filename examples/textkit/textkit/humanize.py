"""Numbers for people: ordinals, plurals, thousands separators, file sizes, words."""

from __future__ import annotations

from typing import Literal, overload

__all__ = ["ordinal", "pluralize", "plural", "intcomma", "filesize", "number_to_words"]

_IRREGULAR = {
    "child": "children", "person": "people", "man": "men", "woman": "women",
    "mouse": "mice", "goose": "geese", "foot": "feet", "tooth": "teeth",
    "ox": "oxen", "leaf": "leaves", "knife": "knives", "life": "lives",
    "wife": "wives", "half": "halves", "wolf": "wolves", "shelf": "shelves",
    "hero": "heroes", "potato": "potatoes", "tomato": "tomatoes", "echo": "echoes",
    "index": "indices", "matrix": "matrices", "criterion": "criteria",
}
_UNCHANGED = frozenset({"sheep", "fish", "deer", "series", "species", "aircraft", "news"})

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = [(10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand")]


def ordinal(n: int) -> str:
    """Write *n* with its English ordinal suffix: 1st, 2nd, 3rd, 4th, 11th, 22nd."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"expected an int, got {type(n).__name__}")
    if abs(n) % 100 in (11, 12, 13):
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(abs(n) % 10, "th")
    return f"{n}{suffix}"


def _match_case(model: str, word: str) -> str:
    """Give *word* the capitalisation of *model*: "Child" -> "Children"."""
    if model.isupper() and len(model) > 1:
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def pluralize(word: str) -> str:
    """Return the plural of an English noun.

    Irregular nouns (child, person, mouse, leaf, ...) and nouns that do not
    change (sheep, series) are known; otherwise the usual -s, -es and -ies
    rules apply. The capitalisation of *word* is kept.
    """
    if not word:
        return word
    lower = word.lower()
    if lower in _UNCHANGED:
        return word
    if lower in _IRREGULAR:
        return _match_case(word, _IRREGULAR[lower])
    upper = word.isupper() and len(word) > 1
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        suffix = "es"
    elif lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        word, suffix = word[:-1], "ies"
    else:
        suffix = "s"
    return word + (suffix.upper() if upper else suffix)


def plural(count: int, word: str, plural_form: str | None = None) -> str:
    """Write *count* and *word*, pluralised unless count is 1.

    ``plural(1, "file")`` is "1 file", ``plural(1200, "box")`` "1,200 boxes".
    *plural_form* overrides the generated plural.
    """
    if abs(count) == 1:
        return f"{intcomma(count)} {word}"
    return f"{intcomma(count)} {plural_form or pluralize(word)}"


def intcomma(value, sep=","):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    text = f"{value:,}"
    return text.replace(",", sep) if sep != "," else text


@overload
def filesize(size: int, binary: bool = ..., *, parts: Literal[False] = ...) -> str: ...
@overload
def filesize(size: int, binary: bool = ..., *, parts: Literal[True]) -> tuple[float, str]: ...


def filesize(size: int, binary: bool = False, *, parts: bool = False) -> str | tuple[float, str]:
    """Write a number of bytes the way people read it.

    Decimal units (kB, MB, GB, ...; steps of 1000) by default, binary ones
    (KiB, MiB, ...; steps of 1024) with *binary*. Sizes under one step are
    written in bytes ("1 byte", "512 bytes"); larger ones with one decimal
    ("1.5 MB"). With *parts* the value and the unit come back as a tuple.
    """
    if size < 0:
        raise ValueError("size must not be negative")
    step = 1024 if binary else 1000
    units = ["KiB", "MiB", "GiB", "TiB", "PiB"] if binary else ["kB", "MB", "GB", "TB", "PB"]
    if size < step:
        value, unit = float(size), "byte" if size == 1 else "bytes"
        return (value, unit) if parts else f"{size} {unit}"
    value = float(size)
    for unit in units:
        value /= step
        if round(value, 1) < step or unit == units[-1]:
            break
    value = round(value, 1)
    return (value, unit) if parts else f"{value:.1f} {unit}"


def number_to_words(n: int) -> str:
    """Spell out an integer in English: 1234 -> "one thousand two hundred thirty-four".

    Works up to 999 trillion; negative numbers start with "minus".
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"expected an int, got {type(n).__name__}")
    if abs(n) >= 10**15:
        raise ValueError(f"{n} is too large")
    if n < 0:
        return "minus " + number_to_words(-n)
    if n == 0:
        return _ONES[0]

    def below_thousand(k: int) -> list[str]:
        words: list[str] = []
        hundreds, rest = divmod(k, 100)
        if hundreds:
            words += [_ONES[hundreds], "hundred"]
        if rest >= 20:
            tens, ones = divmod(rest, 10)
            words.append(_TENS[tens] + (f"-{_ONES[ones]}" if ones else ""))
        elif rest:
            words.append(_ONES[rest])
        return words

    words: list[str] = []
    for scale, name in _SCALES:
        count, n = divmod(n, scale)
        if count:
            words += below_thousand(count) + [name]
    words += below_thousand(n)
    return " ".join(words)
