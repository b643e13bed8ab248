"""Counting words."""

from collections import Counter as _Counter

from minilib._util import clean


def count_words(text: str) -> int:
    """The number of words in *text*."""
    return len(clean(text).split(" ")) if clean(text) else 0


def longest_word(text: str) -> str:
    """The longest word of *text* (the first of equals); "" for none."""
    best = ""
    for w in clean(text).split(" "):
        if len(w) > len(best):
            best = w
    return best


class WordCounter:
    """Counts words over several texts."""

    def __init__(self) -> None:
        self._counts: _Counter = _Counter()

    def add(self, text: str) -> None:
        """Count the words of *text*."""
        for w in clean(text).lower().split(" "):
            if w:
                self._counts[w] += 1

    def most_common(self, n: int = 1) -> list:
        """The *n* most common words with their counts."""
        return self._counts.most_common(n)
