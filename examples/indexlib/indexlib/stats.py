"""Counts over the words of a text."""

from wordcase import split_words


def word_count(text: str) -> int:
    """How many words the text has."""
    return len(split_words(text))


def word_lengths(text: str) -> dict:
    """Each word's length, by the word in lower case."""
    return {w.lower(): len(w) for w in split_words(text)}


def longest(text: str) -> str:
    """The longest word (the first of equals), or "" for no word."""
    best = ""
    for w in split_words(text):
        if len(w) > len(best):
            best = w
    return best
