"""Text statistics: counts, readability, word frequencies and short summaries."""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from textkit._text import split_paragraphs, split_sentences, word_tokens
from textkit.dates import format_duration

#: Common English words that top_words and summarize ignore.
STOPWORDS = frozenset(
    """a about after all also an and any are as at be been but by can could did do does
    for from had has have he her him his how i if in into is it its just me more most my
    no not of on one only or other our out she so some such than that the their them then
    there these they this those to up us was we were what when which who will with would
    you your""".split()
)

_VOWEL_GROUPS = re.compile(r"[aeiouy]+")


@functools.lru_cache(maxsize=2048)
def count_syllables(word: str) -> int:
    """Estimate the syllables of an English word from its vowel groups.

    A silent final "e" is not counted ("make" has 1), "-le" after a consonant
    is ("table" has 2). Every word has at least one syllable.
    """
    w = word.lower().strip("'")
    if not w:
        return 0
    count = len(_VOWEL_GROUPS.findall(w))
    if w.endswith("e") and not w.endswith(("le", "ee", "ye")) and count > 1:
        count -= 1
    return max(count, 1)


@dataclass(frozen=True)
class TextStats:
    """Counts describing a text; build one with TextStats.from_text."""

    characters: int
    letters: int
    words: int
    sentences: int
    paragraphs: int
    syllables: int

    @classmethod
    def from_text(cls, text: str) -> TextStats:
        """Count the characters, letters, words, sentences, paragraphs and syllables of *text*."""
        words = word_tokens(text)
        return cls(
            characters=len(text),
            letters=sum(ch.isalpha() for ch in text),
            words=len(words),
            sentences=len(split_sentences(text)),
            paragraphs=len(split_paragraphs(text)),
            syllables=sum(count_syllables(w) for w in words),
        )

    @property
    def average_word_length(self) -> float:
        """Letters per word, 0.0 for a text without words."""
        return round(self.letters / self.words, 2) if self.words else 0.0

    @property
    def words_per_sentence(self) -> float:
        """Words per sentence, 0.0 for an empty text."""
        return round(self.words / self.sentences, 2) if self.sentences else 0.0

    @property
    def reading_ease(self) -> float:
        """Flesch reading ease: about 90-100 is very easy, below 30 very hard."""
        if not self.words or not self.sentences:
            return 0.0
        score = 206.835 - 1.015 * self.words / self.sentences - 84.6 * self.syllables / self.words
        return round(score, 1)

    def reading_time(self, words_per_minute: int = 200) -> str:
        """How long reading the text takes, e.g. "2 minutes, 30 seconds"."""
        if words_per_minute < 1:
            raise ValueError("words_per_minute must be at least 1")
        return format_duration(self.words * 60 / words_per_minute)


def word_frequencies(text: str, ignore_case: bool = True, stopwords: Iterable[str] = ()) -> Counter[str]:
    """Count the words of *text*, leaving out *stopwords*.

    With *ignore_case* words are counted lowercased; stopwords are always
    compared lowercased.
    """
    skip = {w.lower() for w in stopwords}
    counts: Counter[str] = Counter()
    for word in word_tokens(text):
        if word.lower() in skip:
            continue
        counts[word.lower() if ignore_case else word] += 1
    return counts


def top_words(text: str, n: int = 5, stopwords: Iterable[str] = STOPWORDS) -> list[tuple[str, int]]:
    """The *n* most frequent words of *text* with their counts, stopwords left out.

    Equal counts are ordered alphabetically, so the result is deterministic.
    """
    counts = word_frequencies(text, stopwords=stopwords)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]


def summarize(text: str, max_sentences: int = 2) -> str:
    """Pick the *max_sentences* most representative sentences of *text*.

    A sentence scores the average frequency, in the whole text, of its
    words that are not stopwords. The chosen sentences keep their original
    order; ties go to the earlier sentence.
    """
    sentences = split_sentences(text)
    if len(sentences) <= max_sentences:
        return " ".join(sentences)
    freq = word_frequencies(text, stopwords=STOPWORDS)

    def score(sentence: str) -> float:
        words = [w.lower() for w in word_tokens(sentence) if w.lower() not in STOPWORDS]
        return sum(freq[w] for w in words) / len(words) if words else 0.0

    ranked = sorted(range(len(sentences)), key=lambda i: (-score(sentences[i]), i))
    return " ".join(sentences[i] for i in sorted(ranked[:max_sentences]))


def reading_time(text: str, words_per_minute: int = 200) -> str:
    """How long reading *text* takes at *words_per_minute*, e.g. "12 seconds"."""
    return TextStats.from_text(text).reading_time(words_per_minute)
