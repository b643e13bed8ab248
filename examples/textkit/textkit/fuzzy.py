"""Edit distance and fuzzy matching."""

from __future__ import annotations

from typing import Iterable


def levenshtein(a: str, b: str) -> int:
    """Count the insertions, deletions and substitutions that turn *a* into *b*.

    The comparison is case-sensitive.
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
