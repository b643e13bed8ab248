"""Edit distance and fuzzy matching."""

from __future__ import annotations

import functools
from typing import Callable, Iterable

from textkit import diffing
from textkit._text import normalize_whitespace, word_tokens


@functools.lru_cache(maxsize=4096)
def levenshtein(a: str, b: str) -> int:
    """Count the insertions, deletions and substitutions that turn *a* into *b*.

    The comparison is case-sensitive. Results are cached: matching one query
    against the same choices again is cheap.
    """
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def similarity(a: str, b: str) -> float:
    """Return 1 - levenshtein(a, b) / max(len(a), len(b)), a score in [0, 1].

    Two empty strings are identical: 1.0.
    """
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    return 1.0 - levenshtein(a, b) / longest


def best_match(query: str, choices: Iterable[str], cutoff: float = 0.6, ignore_case: bool = True) -> str | None:
    """Return the choice most similar to *query*, or None.

    None is returned when no choice scores at least *cutoff*. Ties go to the
    earliest choice. With *ignore_case* both sides are compared lowercased.
    """
    def key(s: str) -> str:
        return s.lower() if ignore_case else s

    best, best_score = None, -1.0
    for choice in choices:
        score = similarity(key(query), key(choice))
        if score > best_score:
            best, best_score = choice, score
    return best if best_score >= cutoff else None


def token_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the lowercased word sets of *a* and *b*.

    Word order and repetition do not matter: "new york city" and "City of
    New York" share 3 of 4 words, 0.75.
    """
    return diffing.jaccard(
        [w.lower() for w in word_tokens(a)],
        [w.lower() for w in word_tokens(b)],
    )


def ngram_similarity(a: str, b: str, n: int = 2) -> float:
    """Jaccard similarity of the *n*-character pieces of the lowercased texts."""
    return diffing.jaccard(
        diffing.ngrams(normalize_whitespace(a).lower(), n),
        diffing.ngrams(normalize_whitespace(b).lower(), n),
    )


SCORERS: dict[str, Callable[[str, str], float]] = {
    "edit": lambda a, b: similarity(a.lower(), b.lower()),
    "ratio": lambda a, b: diffing.ratio(a.lower(), b.lower()),
    "token": token_similarity,
    "ngram": ngram_similarity,
}


def rank(query: str, choices: Iterable[str], limit: int | None = 3, scorer: str = "edit", cutoff: float = 0.0) -> list[tuple[str, float]]:
    """Score every choice against *query* and return the best, best first.

    *scorer* names one of SCORERS. Choices scoring below *cutoff* are left
    out; equal scores keep the order of *choices*. Scores are rounded to 4
    decimals.
    """
    try:
        score = SCORERS[scorer]
    except KeyError:
        raise ValueError(f"unknown scorer {scorer!r}; choose from {sorted(SCORERS)}") from None
    scored = [(choice, round(score(query, choice), 4)) for choice in choices]
    scored = [item for item in scored if item[1] >= cutoff]
    scored.sort(key=lambda item: -item[1])
    return scored if limit is None else scored[:limit]
